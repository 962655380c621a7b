# regress/kernel: the hostile probe answers the launcher's real cgroup
# probe but for the field its mode spoils.
prog_objs_prog_badprobe = $(OBJ)/sandbox/cgprobe.o
