/*
 * The agent's side: one evhttp per endpoint, on the listening socket
 * the parent made in the attempt's network namespace.
 */
#include <sys/types.h>

#include <event.h>
#include <evhttp.h>
#include <event2/http.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "gateway.h"
#include "log.h"

#define GW_MAXHEADERS	(16 * 1024)	/* request line and headers */
#define GW_MAXBODY	(4 * 1024 * 1024)

static void	serve_request(struct evhttp_request *, void *);

void
serve_start(struct gw_ep *ep)
{
	if ((ep->http = evhttp_new(gw_base)) == NULL)
		fatalx("evhttp_new");
	evhttp_set_max_headers_size(ep->http, GW_MAXHEADERS);
	evhttp_set_max_body_size(ep->http, GW_MAXBODY);
	evhttp_set_timeout(ep->http, gw_timeout);
	evhttp_set_allowed_methods(ep->http, EVHTTP_REQ_GET |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
	    EVHTTP_REQ_PATCH | EVHTTP_REQ_DELETE);
	evhttp_set_gencb(ep->http, serve_request, ep);
	if (evhttp_accept_socket_with_handle(ep->http, ep->fd) == NULL)
		fatalx("%s: evhttp_accept_socket", ep->g.id);
}

void
serve_stop(struct gw_ep *ep)
{
	/* Closes the listener and every connection of the endpoint. */
	evhttp_free(ep->http);
	ep->http = NULL;
}

static void
serve_request(struct evhttp_request *req, void *arg)
{
	struct gw_ep	*ep = arg;

	log_debug("%s: request", ep->g.id);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Connection", "close");
	evhttp_send_error(req, 503, "gateway: endpoint not serving yet");
}
