/*
 * The publisher's HTTP client (publisher/http.c) reading a response:
 * libevent's parser (status line, headers, Content-Length and chunked
 * bodies, with the client's limits) and http.c's own reading of the
 * answer (http_done: status, rate-limit headers, body).  The server
 * listens on a loopback port, answers with the input and closes; TLS
 * is left out, the parse is the same.  http.c is built here unchanged,
 * with its static functions in reach.
 */
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>

#include "../../publisher/http.c"
#include "fuzz.h"

static struct http_conn	 hc;
static int		 lfd = -1;

/* The server's side of one exchange. */
struct server {
	const uint8_t	*data;
	size_t		 size;
	int		 fd;
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);

	/* A server that hangs up mid-request is not a reason to die. */
	signal(SIGPIPE, SIG_IGN);
	FUZZ_ASSERT((hc.base = event_base_new()) != NULL, "event base");
	/*
	 * evhttp connects by itself (a connection it did not make is
	 * reset): a listener on a loopback port the kernel picks.
	 */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	FUZZ_ASSERT((lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) != -1 && bind(lfd, (struct sockaddr *)&sin,
	    sizeof(sin)) == 0 && listen(lfd, 8) == 0 &&
	    getsockname(lfd, (struct sockaddr *)&sin, &len) == 0,
	    "listener: %s", strerror(errno));
	strlcpy(hc.host, "127.0.0.1", sizeof(hc.host));
	hc.port = ntohs(sin.sin_port);
	hc.timeout = 5;
	return (0);
}

/* Accept, answer with the input, and stop writing. */
static void
serve(evutil_socket_t l, short what, void *arg)
{
	struct server	*s = arg;
	const uint8_t	*p = s->data;
	size_t		 left = s->size;
	ssize_t		 n;

	if ((s->fd = accept4(l, NULL, NULL, SOCK_CLOEXEC)) == -1)
		return;
	while (left > 0) {
		if ((n = write(s->fd, p, left)) <= 0)
			break;
		p += n;
		left -= n;
	}
	shutdown(s->fd, SHUT_WR);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct server		 srv;
	struct http_call	 call;
	struct http_resp	 resp;
	struct event		*ev;
	struct evhttp_connection *conn;
	struct evhttp_request	*req;
	struct evkeyvalq	*h;

	memset(&call, 0, sizeof(call));
	memset(&resp, 0, sizeof(resp));
	call.hc = &hc;
	call.resp = &resp;
	srv.data = data;
	srv.size = size;
	srv.fd = -1;
	FUZZ_ASSERT((conn = evhttp_connection_base_new(hc.base, NULL,
	    hc.host, hc.port)) != NULL, "connection");
	/* The limits http_request() sets. */
	evhttp_connection_set_timeout(conn, hc.timeout);
	evhttp_connection_set_max_body_size(conn, HTTP_BODY_MAX);
	evhttp_connection_set_retries(conn, 0);
	FUZZ_ASSERT((req = evhttp_request_new(http_done, &call)) != NULL,
	    "request");
	evhttp_request_set_error_cb(req, http_error);
	h = evhttp_request_get_output_headers(req);
	FUZZ_ASSERT(evhttp_add_header(h, "Host", "api.github.test") == 0 &&
	    evhttp_add_header(h, "Connection", "close") == 0 &&
	    evhttp_add_header(h, "Authorization", "token ghs_fuzz") == 0,
	    "headers");
	FUZZ_ASSERT((ev = event_new(hc.base, lfd, EV_READ, serve, &srv)) !=
	    NULL && event_add(ev, NULL) == 0, "accept event");
	FUZZ_ASSERT(evhttp_make_request(conn, req, EVHTTP_REQ_GET,
	    "/repos/octo/site") == 0, "make request");
	event_base_dispatch(hc.base);
	event_free(ev);
	FUZZ_ASSERT(srv.fd != -1, "the client never connected");

	if (call.done && !call.failed) {
		/*
		 * libevent takes any number but 0 for a status ("HTTP/1.1
		 * -7"); the callers compare it with exact values.
		 */
		FUZZ_ASSERT(resp.status != 0, "status 0");
		FUZZ_ASSERT(resp.body != NULL && resp.body[resp.len] == '\0' &&
		    resp.len <= HTTP_BODY_MAX, "body");
		FUZZ_ASSERT(resp.retry_after >= -1 &&
		    resp.ratelimit_remaining >= -1 &&
		    resp.ratelimit_reset >= -1, "headers");
	} else
		FUZZ_ASSERT(resp.body == NULL || call.failed, "half an answer");
	http_resp_free(&resp);
	evhttp_connection_free(conn);
	close(srv.fd);
	return (0);
}
