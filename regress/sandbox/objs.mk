# The sandbox's objects, for its regress helper and the bench.
SANDBOX_OBJS = $(OBJ)/supervisord-factory/sandbox.o \
	$(OBJ)/supervisord-factory/probe.o \
	$(OBJ)/supervisord-factory/spawnplan.o \
	$(OBJ)/supervisord-factory/spawnfds.o \
	$(OBJ)/supervisord-factory/cgroup.o \
	$(OBJ)/supervisord-factory/bindrule.o $(OBJ)/sandbox/child.o \
	$(OBJ)/sandbox/probe.o $(OBJ)/sandbox/diskprobe.o \
	$(OBJ)/sandbox/cgprobe.o
prog_objs_prog_sbx = $(SANDBOX_OBJS) $(OBJ)/regress/sandbox/sbxwait.o
prog_objs_spawn = $(SANDBOX_OBJS) $(OBJ)/regress/sandbox/sbxwait.o
prog_objs_prog_launch = $(SANDBOX_OBJS)
unit_objs_test_sbxfilter = $(SANDBOX_OBJS)
