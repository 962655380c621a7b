# The sandbox launcher's objects, for its regress helper and the bench.
SANDBOX_OBJS = $(OBJ)/supervisord-factory/sandbox.o $(OBJ)/supervisord-factory/sbxchild.o \
	$(OBJ)/supervisord-factory/cgroup.o
prog_objs_prog_sbx = $(SANDBOX_OBJS)
prog_objs_spawn = $(SANDBOX_OBJS)
