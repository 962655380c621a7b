# regress/preview: factory-preview's parser of the browsers' requests
# (preview/http.c), alone.
unit_objs_test_previewhttp = $(OBJ)/preview/http.o
