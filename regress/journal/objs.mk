# test_journal links the parent's journal module.
unit_objs_test_journal = $(OBJ)/supervisord-factory/journal.o
