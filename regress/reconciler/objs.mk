# regress/reconciler: the inventory and the dispatch of the reconciler,
# which regress/unit/test_inventory.c links.
unit_objs_test_inventory = $(OBJ)/reconciler/inventory.o \
	$(OBJ)/reconciler/dispatch.o
