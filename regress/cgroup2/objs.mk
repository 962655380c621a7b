# regress/cgroup2: the cgroup probe's path decision (the launcher's
# sandbox/cgprobe.c, among the sandbox objects), which
# regress/unit/test_cgroup.c links, and prog_cgprobe, which runs the
# probe and the parent's check of it (cgroup_probe) in a pure cgroup
# v2 view made by run.sh.
unit_objs_test_cgroup = $(SANDBOX_OBJS)
prog_objs_prog_cgprobe = $(SANDBOX_OBJS)
