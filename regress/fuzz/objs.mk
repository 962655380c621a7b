# regress/fuzz: what each harness links beyond libcommon.  The
# GitHub harness includes github.c itself (its static functions are
# the target), so github.c is a dependency of its object, not linked.
FUZZ_OBJS = $(FUZZ_SRCS:%.c=$(OBJ)/%.o)
$(FUZZ_OBJS): regress/fuzz/fuzz.h regress/fuzz/fuzzimsg.h
$(OBJ)/regress/fuzz/fuzz_github.o: publisher/github.c
fuzz_objs_http = $(OBJ)/publisher/http.o $(OBJ)/publisher/net.o \
	$(OBJ)/publisher/local.o $(OBJ)/publisher/pubattest.o
# The forge's answers come from the input: http_request is replaced.
fuzz_objs_github = $(OBJ)/publisher/local.o $(OBJ)/publisher/pubattest.o \
	$(OBJ)/publisher/http.o \
	$(OBJ)/publisher/net.o
fuzz_ldflags_github = -Wl,--wrap=http_request -Wl,--wrap=http_deadline
fuzz_objs_gwreq = $(OBJ)/gateway/proto.o
fuzz_objs_previewhttp = $(OBJ)/preview/http.o
