# regress/github: the publisher's github forge, driven by prog_ghpub
# against loopback servers (fakegh.py).
GH_OBJS = $(OBJ)/publisher/github.o $(OBJ)/publisher/http.o \
	$(OBJ)/publisher/local.o $(OBJ)/publisher/net.o \
	$(OBJ)/publisher/request.o
prog_objs_prog_ghpub = $(GH_OBJS)
