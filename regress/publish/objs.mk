# The publisher's local forge, linked into its unit test.
unit_objs_test_publish = $(OBJ)/publisher/local.o $(OBJ)/publisher/pubattest.o
# The parent's adoption of a fleet's publication, linked alone.
unit_objs_test_adopt = $(OBJ)/supervisord-factory/adopt.o
