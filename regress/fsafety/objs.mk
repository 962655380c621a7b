# regress/fsafety: the parent's file system helpers, which
# regress/unit/test_fsutil.c links.
unit_objs_test_fsutil = $(OBJ)/supervisord-factory/fsutil.o
