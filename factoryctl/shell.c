/*
 * factoryctl shell: run a command (by default /bin/sh) inside a running
 * attempt's sandbox, with this process's stdin, stdout and stderr.
 * Exits with the command's exit status (128 + signal if it was killed).
 */
#include <sys/types.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factoryctl.h"
#include "imsg.h"

/* One answer: OK (0), a JSON document in *out (0), or FAIL (1). */
static int
shell_answer(struct imsgbuf *ibuf, json_t **out, char *reason,
    size_t reasonlen)
{
	struct imsg	 imsg;
	struct pollfd	 pfd;
	json_error_t	 jerr;
	char		*doc = NULL;
	size_t		 doclen = 0, n;
	int		 r, ret = -1;

	while (ret == -1) {
		if ((r = imsgbuf_get(ibuf, &imsg)) == -1)
			errx(CTL_EXIT_USAGE, "malformed answer");
		if (r == 0) {
			pfd.fd = ibuf->fd;
			pfd.events = POLLIN;
			if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
				err(CTL_EXIT_USAGE, "poll");
			if ((r = imsgbuf_read(ibuf)) == -1)
				err(CTL_EXIT_USAGE, "read");
			if (r == 0)
				errx(CTL_EXIT_USAGE, "factoryd closed the "
				    "connection");
			continue;
		}
		n = imsg_get_len(&imsg);
		switch (imsg_get_type(&imsg)) {
		case IMSG_CTL_OK:
			ret = 0;
			break;
		case IMSG_CTL_DATA:
			if ((doc = realloc(doc, doclen + n + 1)) == NULL)
				err(CTL_EXIT_USAGE, NULL);
			memcpy(doc + doclen, imsg.data, n);
			doclen += n;
			doc[doclen] = '\0';
			break;
		case IMSG_CTL_END:
			if (out != NULL && (*out = json_loads(doc != NULL ?
			    doc : "{}", 0, &jerr)) == NULL)
				errx(CTL_EXIT_USAGE, "bad JSON from factoryd: "
				    "%s", jerr.text);
			ret = 0;
			break;
		case IMSG_CTL_FAIL:
			if (n == 0 || n > reasonlen || imsg_get_strbuf(&imsg,
			    reason, reasonlen) == -1)
				strlcpy(reason, "refused", reasonlen);
			ret = 1;
			break;
		default:
			errx(CTL_EXIT_USAGE, "unexpected answer %u",
			    imsg_get_type(&imsg));
		}
		imsg_free(&imsg);
	}
	free(doc);
	return (ret);
}

int
cmd_shell(int argc, char *argv[])
{
	struct imsgbuf	 ibuf;
	json_t		*o = NULL;
	char		*req, reason[1024];
	size_t		 len, off;
	int		 i, s, fd, first, status;

	if (argc < 2 || (argc > 2 && strcmp(argv[2], "--") != 0) ||
	    argc == 3)
		ctl_usage("shell");
	first = argc > 3 ? 3 : argc;
	len = strlen(argv[1]) + 1;
	for (i = first; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if (len > FACTORY_MAXIMSG - 64)
		errx(CTL_EXIT_USAGE, "command too long");
	if ((req = malloc(len)) == NULL)
		err(CTL_EXIT_USAGE, NULL);
	off = strlcpy(req, argv[1], len) + 1;
	for (i = first; i < argc; i++)
		off += strlcpy(req + off, argv[i], len - off) + 1;

	s = ctl_connect(0);
	if (imsgbuf_init(&ibuf, s) == -1 ||
	    imsgbuf_set_maxsize(&ibuf, FACTORY_MAXIMSG) == -1)
		err(CTL_EXIT_USAGE, "imsgbuf_init");
	if (imsg_compose(&ibuf, IMSG_CTL_SHELL, 0, 0, -1, req, len) == -1 ||
	    imsgbuf_flush(&ibuf) == -1)
		err(CTL_EXIT_USAGE, "send request");
	free(req);
	if (shell_answer(&ibuf, NULL, reason, sizeof(reason)) != 0)
		goto refused;
	/* Copies: the imsg layer closes what it sent. */
	for (i = 0; i < 3; i++) {
		if ((fd = fcntl(i, F_DUPFD_CLOEXEC, 3)) == -1)
			err(CTL_EXIT_USAGE, "descriptor %d", i);
		if (imsg_compose(&ibuf, IMSG_CTL_SHELL_FD, 0, 0, fd, NULL,
		    0) == -1)
			err(CTL_EXIT_USAGE, "send descriptor %d", i);
	}
	if (imsgbuf_flush(&ibuf) == -1)
		err(CTL_EXIT_USAGE, "send descriptors");
	if (shell_answer(&ibuf, &o, reason, sizeof(reason)) != 0)
		goto refused;
	status = (int)json_integer_value(json_object_get(o, "status"));
	json_decref(o);
	imsgbuf_clear(&ibuf);
	close(s);
	return (status);
 refused:
	fprintf(stderr, "factoryctl: %s\n", reason);
	imsgbuf_clear(&ibuf);
	close(s);
	return (CTL_EXIT_REFUSED);
}
