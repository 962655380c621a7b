# test_lifecycle links the parent's lifecycle (table, apply, replay)
# alone: nothing of the scheduling, the journal or the children.
unit_objs_test_lifecycle = $(OBJ)/supervisord-factory/lifecycle.o
