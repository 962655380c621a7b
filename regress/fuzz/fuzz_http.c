/*
 * The publisher's HTTP client (publisher/http.c) reading a response:
 * libevent's parser (status line, headers, Content-Length and chunked
 * bodies, with the client's limits) and http.c's own reading of the
 * answer (http_done: status, rate-limit headers, body).  The server is
 * the other end of a socketpair that writes the input and closes; TLS
 * is left out, the parse is the same.  http.c is built here unchanged,
 * with its static functions in reach.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>

#include "../../publisher/http.c"
#include "fuzz.h"

static struct http_conn	 hc;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* A server that hangs up mid-request is not a reason to die. */
	signal(SIGPIPE, SIG_IGN);
	FUZZ_ASSERT((hc.base = event_base_new()) != NULL, "event base");
	strlcpy(hc.host, "api.github.test", sizeof(hc.host));
	hc.port = 443;
	hc.timeout = 5;
	return (0);
}

/* Writes as much as the socket takes now; the rest is dropped. */
static void
serve(int fd, const uint8_t *data, size_t size)
{
	ssize_t	 n;

	while (size > 0) {
		if ((n = write(fd, data, size)) <= 0)
			break;
		data += n;
		size -= n;
	}
	shutdown(fd, SHUT_WR);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_call	 call;
	struct http_resp	 resp;
	struct bufferevent	*bev;
	struct evhttp_connection *conn;
	struct evhttp_request	*req;
	struct evkeyvalq	*h;
	int			 sv[2];

	FUZZ_ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
	memset(&call, 0, sizeof(call));
	memset(&resp, 0, sizeof(resp));
	call.hc = &hc;
	call.resp = &resp;
	FUZZ_ASSERT((bev = bufferevent_socket_new(hc.base, sv[0],
	    BEV_OPT_CLOSE_ON_FREE)) != NULL, "bufferevent");
	FUZZ_ASSERT((conn = evhttp_connection_base_bufferevent_new(hc.base,
	    NULL, bev, hc.host, hc.port)) != NULL, "connection");
	/* The limits http_request() sets. */
	evhttp_connection_set_timeout(conn, hc.timeout);
	evhttp_connection_set_max_body_size(conn, HTTP_BODY_MAX);
	evhttp_connection_set_retries(conn, 0);
	FUZZ_ASSERT((req = evhttp_request_new(http_done, &call)) != NULL,
	    "request");
	evhttp_request_set_error_cb(req, http_error);
	h = evhttp_request_get_output_headers(req);
	FUZZ_ASSERT(evhttp_add_header(h, "Host", hc.host) == 0 &&
	    evhttp_add_header(h, "Connection", "close") == 0 &&
	    evhttp_add_header(h, "Authorization", "token ghs_fuzz") == 0,
	    "headers");
	FUZZ_ASSERT(evhttp_make_request(conn, req, EVHTTP_REQ_GET,
	    "/repos/octo/site") == 0, "make request");
	serve(sv[1], data, size);
	event_base_dispatch(hc.base);

	if (call.done && !call.failed) {
		FUZZ_ASSERT(resp.status >= 100 && resp.status <= 999,
		    "status %d", resp.status);
		FUZZ_ASSERT(resp.body != NULL && resp.body[resp.len] == '\0' &&
		    resp.len <= HTTP_BODY_MAX, "body");
		FUZZ_ASSERT(resp.retry_after >= -1 &&
		    resp.ratelimit_remaining >= -1 &&
		    resp.ratelimit_reset >= -1, "headers");
	} else
		FUZZ_ASSERT(resp.body == NULL || call.failed, "half an answer");
	http_resp_free(&resp);
	evhttp_connection_free(conn);
	close(sv[1]);
	return (0);
}
