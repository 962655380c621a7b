# regress/git: objects of the worker and the verifier that
# regress/unit/test_git.c links (the libgit2 work of both).
unit_objs_test_git = $(OBJ)/worker/provision.o $(OBJ)/worker/collect.o \
	$(OBJ)/worker/bundle.o $(OBJ)/worker/diff.o $(OBJ)/verifier/bundle.o \
	$(OBJ)/verifier/recheck.o
