# bench/tree.c: the worker's tree work and the parent's disk.c (the
# overlay), as factoryd and factory-worker run them.
prog_objs_tree = $(OBJ)/worker/provision.o $(OBJ)/worker/collect.o \
	$(OBJ)/worker/bundle.o $(OBJ)/supervisord-factory/disk.o
