# regress/cgroup2: cgroup.c's path decision, which
# regress/unit/test_cgroup.c links, and prog_cgprobe, which runs
# cgroup_probe in a pure cgroup v2 view made by run.sh.
unit_objs_test_cgroup = $(OBJ)/supervisord-factory/cgroup.o
prog_objs_prog_cgprobe = $(OBJ)/supervisord-factory/cgroup.o
