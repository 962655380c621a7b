# regress/github: the publisher's github forge, driven by prog_ghpub
# against loopback servers (fakegh.py).
GH_OBJS = $(OBJ)/publisher/github.o $(OBJ)/publisher/http.o \
	$(OBJ)/publisher/local.o $(OBJ)/publisher/net.o \
	$(OBJ)/publisher/request.o $(OBJ)/publisher/pubattest.o
prog_objs_prog_ghpub = $(GH_OBJS) $(OBJ)/regress/daemon/msgjson.o
# The strict parser of the forge's answers (http_parse), alone.
unit_objs_test_http = $(OBJ)/publisher/http.o $(OBJ)/publisher/net.o \
	$(OBJ)/publisher/local.o $(OBJ)/publisher/pubattest.o
