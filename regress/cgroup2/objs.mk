# regress/cgroup2: cgroup.c's path decision (linked with the
# sandbox objects, which cgroup.c calls into), which
# regress/unit/test_cgroup.c links, and prog_cgprobe, which runs
# cgroup_probe in a pure cgroup v2 view made by run.sh.
unit_objs_test_cgroup = $(SANDBOX_OBJS)
prog_objs_prog_cgprobe = $(SANDBOX_OBJS)
