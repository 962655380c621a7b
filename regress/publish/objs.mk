# The publisher's local forge, linked into its unit test.
unit_objs_test_publish = $(OBJ)/publisher/local.o $(OBJ)/publisher/pubattest.o
