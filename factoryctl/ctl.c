/*
 * What every factoryctl command shares, below them all: the control
 * socket, requests and answers, and the printing rules.  Everything
 * printed for a person goes through ctl_vis() (vis.h): names, reasons
 * and logs come from agents and children, and none of their bytes may
 * act on the operator's terminal.  -j prints exact values, in JSON
 * escapes only (ctl_print_json).  Nothing here calls a command.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factoryctl.h"
#include "imsg.h"
#include "log.h"
#include "vis.h"

#define CTL_VISRING	16	/* ctl_vis() results alive at once */

int			 ctl_json;
const char		*ctl_socket = FACTORYD_SOCKET;
const struct ctl_cmd	*ctl_current;

/* The running command's usage line (main set ctl_current). */
__dead void
ctl_usage(const char *cmd)
{
	if (ctl_current != NULL && strcmp(ctl_current->name, cmd) == 0)
		fprintf(stderr, "usage: factoryctl [-j] [-s socket] %s\n",
		    ctl_current->usage);
	else
		fprintf(stderr, "usage: factoryctl [-j] [-s socket] %s ...\n",
		    cmd);
	exit(CTL_EXIT_USAGE);
}

static int
ctl_connect_path(const char *path)
{
	struct sockaddr_un	 sun;
	int			 s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, path, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		close(s);
		return (-1);
	}
	return (s);
}

/*
 * Read-only commands fall back to the .ro socket when the read-write
 * one is not ours to open.
 */
int
ctl_connect(int readonly)
{
	char	 ro[PATH_MAX];
	int	 s, saved;

	if ((s = ctl_connect_path(ctl_socket)) != -1)
		return (s);
	saved = errno;
	if (readonly && (saved == EACCES || saved == EPERM)) {
		snprintf(ro, sizeof(ro), "%s%s", ctl_socket,
		    FACTORYD_ROSUFFIX);
		if ((s = ctl_connect_path(ro)) != -1)
			return (s);
	}
	fprintf(stderr, "factoryctl: connect %s: %s\n", ctl_vis(ctl_socket),
	    strerror(saved));
	exit(CTL_EXIT_USAGE);
}

/*
 * One request, one answer: DATA pieces then END (a JSON document), or
 * FAIL with a reason.  Returns 0, or 1 if refused (reason in err).
 */
int
ctl_request(int s, uint32_t type, const void *data, size_t len,
    json_t **out, char *reason, size_t reasonlen)
{
	return (ctl_request_fd(s, type, -1, data, len, NULL, NULL, out,
	    reason, reasonlen));
}

/*
 * ctl_request with a descriptor sent along with the request (-1: none)
 * and other(imsg, arg) for any answer but DATA, END and FAIL; without
 * other, such an answer ends factoryctl.
 */
static int	ctl_await(struct imsgbuf *, void (*)(struct imsg *, void *),
		    void *, json_t **, char *, size_t);

int
ctl_request_fd(int s, uint32_t type, int fd, const void *data, size_t len,
    void (*other)(struct imsg *, void *), void *arg, json_t **out,
    char *reason, size_t reasonlen)
{
	struct imsgbuf	 ibuf;

	if (imsgbuf_init(&ibuf, s) == -1 ||
	    imsgbuf_set_maxsize(&ibuf, FACTORY_MAXIMSG) == -1)
		err(CTL_EXIT_USAGE, "imsgbuf_init");
	if (fd != -1)
		imsgbuf_allow_fdpass(&ibuf);
	if (imsg_compose(&ibuf, type, 0, 0, fd, data, len) == -1 ||
	    imsgbuf_flush(&ibuf) == -1)
		err(CTL_EXIT_USAGE, "send request");
	return (ctl_await(&ibuf, other, arg, out, reason, reasonlen));
}

/*
 * An upload: the request (begin, hdr), then the bytes of fd, at most
 * max + 1 of them (the one more is the daemon's to refuse), in pieces
 * of type piece, then end, whose one answer is awaited.
 */
int
ctl_upload(int s, uint32_t begin, const void *hdr, size_t hlen, int fd,
    size_t max, uint32_t piece, uint32_t end, json_t **out, char *reason,
    size_t reasonlen)
{
	static char	 buf[32 * 1024];
	struct imsgbuf	 ibuf;
	size_t		 sent = 0;
	ssize_t		 n;

	if (imsgbuf_init(&ibuf, s) == -1 ||
	    imsgbuf_set_maxsize(&ibuf, FACTORY_MAXIMSG) == -1)
		err(CTL_EXIT_USAGE, "imsgbuf_init");
	if (imsg_compose(&ibuf, begin, 0, 0, -1, hdr, hlen) == -1)
		err(CTL_EXIT_USAGE, "send request");
	while (sent <= max) {
		if ((n = read(fd, buf, sizeof(buf))) == -1 && errno == EINTR)
			continue;
		if (n == -1)
			err(CTL_EXIT_USAGE, "read");
		if (n == 0)
			break;
		sent += (size_t)n;
		if (imsg_compose(&ibuf, piece, 0, 0, -1, buf, (size_t)n) ==
		    -1 || imsgbuf_flush(&ibuf) == -1)
			err(CTL_EXIT_USAGE, "send");
	}
	if (imsg_compose(&ibuf, end, 0, 0, -1, NULL, 0) == -1 ||
	    imsgbuf_flush(&ibuf) == -1)
		err(CTL_EXIT_USAGE, "send request");
	return (ctl_await(&ibuf, NULL, NULL, out, reason, reasonlen));
}

/* The one answer to what was sent on ibuf, as ctl_request_fd says. */
static int
ctl_await(struct imsgbuf *ibufp, void (*other)(struct imsg *, void *),
    void *arg, json_t **out, char *reason, size_t reasonlen)
{
	struct imsg	 imsg;
	json_error_t	 jerr;
	struct pollfd	 pfd;
	char		*doc = NULL;
	size_t		 doclen = 0, n;
	int		 done = 0, ret = 0, r, s = ibufp->fd;

	while (!done) {
		pfd.fd = s;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			err(CTL_EXIT_USAGE, "poll");
		}
		if ((r = imsgbuf_read(ibufp)) == -1)
			err(CTL_EXIT_USAGE, "read");
		if (r == 0)
			errx(CTL_EXIT_USAGE, "factoryd closed the connection");
		for (;;) {
			if ((r = imsgbuf_get(ibufp, &imsg)) == -1)
				errx(CTL_EXIT_USAGE, "malformed answer");
			if (r == 0)
				break;
			n = imsg_get_len(&imsg);
			switch (imsg_get_type(&imsg)) {
			case IMSG_CTL_DATA:
				if ((doc = realloc(doc, doclen + n + 1)) ==
				    NULL)
					err(CTL_EXIT_USAGE, NULL);
				memcpy(doc + doclen, imsg.data, n);
				doclen += n;
				doc[doclen] = '\0';
				break;
			case IMSG_CTL_END:
				done = 1;
				break;
			case IMSG_CTL_FAIL:
				if (n == 0 || n > reasonlen ||
				    imsg_get_strbuf(&imsg, reason,
				    reasonlen) == -1)
					strlcpy(reason, "refused", reasonlen);
				ret = 1;
				done = 1;
				break;
			default:
				if (other == NULL)
					errx(CTL_EXIT_USAGE, "unexpected "
					    "answer %u", imsg_get_type(&imsg));
				other(&imsg, arg);
			}
			imsg_free(&imsg);
			if (done)
				break;
		}
	}
	imsgbuf_clear(ibufp);
	if (ret == 0 && out != NULL) {
		if ((*out = json_loads(doc != NULL ? doc : "{}", 0, &jerr)) ==
		    NULL)
			errx(CTL_EXIT_USAGE, "bad JSON from factoryd: %s",
			    ctl_vis(jerr.text));
	}
	free(doc);
	return (ret);
}

/* Connect, request, print a refusal. */
int
ctl_simple(int readonly, uint32_t type, const void *data, size_t len,
    json_t **out)
{
	char	 err[1024];
	int	 s, ret;

	s = ctl_connect(readonly);
	ret = ctl_request(s, type, data, len, out, err, sizeof(err));
	close(s);
	if (ret != 0)
		fprintf(stderr, "factoryctl: %s\n", ctl_vis(err));
	return (ret);
}

/*
 * The display form of len bytes at s, valid until CTL_VISRING more
 * calls.  Values from factoryd are in the suite's encoding already
 * (esc.h), whose backslashes show once.
 */
const char *
ctl_visn(const char *s, size_t len, int flags)
{
	static char	*ring[CTL_VISRING];
	static size_t	 next;
	char		**slot = &ring[next++ % CTL_VISRING];

	free(*slot);
	if ((*slot = vis_alloc(s != NULL ? s : "", s != NULL ? len : 0,
	    flags | VIS_NOSLASH)) == NULL)
		err(CTL_EXIT_USAGE, NULL);
	return (*slot);
}

const char *
ctl_vis(const char *s)
{
	return (ctl_visn(s, s != NULL ? strlen(s) : 0, 0));
}

/* A JSON string for display, NULs included; "" if it is not one. */
const char *
ctl_jvis(json_t *v)
{
	if (!json_is_string(v))
		return ("");
	return (ctl_visn(json_string_value(v), json_string_length(v), 0));
}

/*
 * Exact values: jansson escapes the C0 controls; ASCII-only output
 * escapes C1 and bidirectional controls too (\u009b, \u202e), and DEL,
 * which jansson leaves raw, can only be inside a string.
 */
void
ctl_print_json(json_t *o)
{
	char	*s, *p;

	if ((s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	    JSON_ENSURE_ASCII)) == NULL)
		errx(CTL_EXIT_USAGE, "cannot print JSON");
	for (p = s; *p != '\0'; p++) {
		if (*p == 0x7f)
			fputs("\\u007f", stdout);
		else
			putchar(*p);
	}
	putchar('\n');
	free(s);
}

const char *
ctl_duration(long long s, char *buf, size_t len)
{
	if (s < 60)
		snprintf(buf, len, "%llds", s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%lldh%02lldm", s / 3600, (s / 60) % 60);
	else
		snprintf(buf, len, "%lldd%02lldh", s / 86400, (s / 3600) % 24);
	return (buf);
}

