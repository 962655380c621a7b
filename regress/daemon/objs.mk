# A JSON description of a child message, laid out on the wire by
# msg.c's tables (msgjson.h): the unit test, the hostile children.
MSGJSON_OBJS = $(OBJ)/regress/daemon/msgjson.o
unit_objs_test_msg = $(MSGJSON_OBJS)
prog_objs_prog_badchild = $(MSGJSON_OBJS)
prog_objs_prog_badparent = $(MSGJSON_OBJS)
