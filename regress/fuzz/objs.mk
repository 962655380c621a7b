# regress/fuzz: what each harness links beyond libcommon.  The
# publisher's harnesses include http.c or github.c itself (their
# static parsing functions are the target), so those are dependencies
# of the harness's object, not linked again.
FUZZ_OBJS = $(FUZZ_SRCS:%.c=$(OBJ)/%.o)
$(FUZZ_OBJS): regress/fuzz/fuzz.h
$(OBJ)/regress/fuzz/fuzz_http.o: publisher/http.c
$(OBJ)/regress/fuzz/fuzz_github.o: publisher/github.c
fuzz_objs_http = $(OBJ)/publisher/local.o $(OBJ)/publisher/net.o
# The forge's answers come from the input: http_request is replaced.
fuzz_objs_github = $(OBJ)/publisher/local.o $(OBJ)/publisher/http.o \
	$(OBJ)/publisher/net.o
fuzz_ldflags_github = -Wl,--wrap=http_request -Wl,--wrap=http_deadline
