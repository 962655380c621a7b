/*
 * factoryctl image: import, list, rm, verify (factoryctl(8), IMAGES).
 *
 * import opens PATH with the operator's own rights and hands factoryd
 * the descriptor: a file as it is, a directory as a tar stream that a
 * child of ours writes into a pipe (libarchive reads the directory,
 * never following a link).  Neither we nor factoryd parse the archive:
 * factory-image does, unprivileged.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <archive.h>
#include <archive_entry.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "factoryctl.h"
#include "imagemsg.h"
#include "imsg.h"

#define TAR_BLOCK	(64 * 1024)

/* The directory at path as a pax stream on fd; 0, or 1 and a warning. */
static int
image_tar_dir(const char *path, int fd)
{
	struct archive		*disk, *w;
	struct archive_entry	*e;
	const char		*p;
	const void		*buf;
	size_t			 size, plen = strlen(path);
	la_int64_t		 off;
	int			 r;

	while (plen > 1 && path[plen - 1] == '/')
		plen--;
	if ((disk = archive_read_disk_new()) == NULL ||
	    (w = archive_write_new()) == NULL)
		errx(1, "libarchive");
	archive_read_disk_set_symlink_physical(disk);
	archive_read_disk_set_behavior(disk, ARCHIVE_READDISK_NO_XATTR |
	    ARCHIVE_READDISK_NO_ACL | ARCHIVE_READDISK_NO_FFLAGS);
	archive_write_set_format_pax_restricted(w);
	archive_write_set_bytes_in_last_block(w, 1);
	if (archive_read_disk_open(disk, path) != ARCHIVE_OK ||
	    archive_write_open_fd(w, fd) != ARCHIVE_OK) {
		warnx("%s: %s", path, archive_error_string(disk));
		return (1);
	}
	for (;;) {
		e = archive_entry_new();
		if ((r = archive_read_next_header2(disk, e)) == ARCHIVE_EOF) {
			archive_entry_free(e);
			break;
		}
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			warnx("%s: %s", path, archive_error_string(disk));
			archive_entry_free(e);
			return (1);
		}
		archive_read_disk_descend(disk);
		/* Below the directory, as a tar of its contents says. */
		p = archive_entry_pathname(e);
		if (p == NULL || strncmp(p, path, plen) != 0) {
			archive_entry_free(e);
			continue;
		}
		p += plen;
		while (*p == '/')
			p++;
		archive_entry_copy_pathname(e, *p == '\0' ? "." : p);
		if (archive_write_header(w, e) != ARCHIVE_OK) {
			warnx("%s", archive_error_string(w));
			archive_entry_free(e);
			return (1);
		}
		while (archive_entry_filetype(e) == AE_IFREG &&
		    (r = archive_read_data_block(disk, &buf, &size, &off)) ==
		    ARCHIVE_OK)
			if (archive_write_data(w, buf, size) < 0) {
				warnx("%s", archive_error_string(w));
				archive_entry_free(e);
				return (1);
			}
		archive_entry_free(e);
	}
	if (archive_write_close(w) != ARCHIVE_OK) {
		warnx("%s", archive_error_string(w));
		return (1);
	}
	archive_write_free(w);
	archive_read_free(disk);
	return (0);
}

/* PATH as a descriptor factory-image reads; *pid the tar writer or -1. */
static int
image_source(const char *path, pid_t *pid)
{
	struct stat	 sb;
	int		 fd, p[2];

	*pid = -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		err(CTL_EXIT_REFUSED, "%s", ctl_vis(path));
	if (fstat(fd, &sb) == -1)
		err(CTL_EXIT_REFUSED, "%s", ctl_vis(path));
	if (S_ISREG(sb.st_mode))
		return (fd);
	if (!S_ISDIR(sb.st_mode))
		errx(CTL_EXIT_REFUSED, "%s: neither a file nor a directory",
		    ctl_vis(path));
	close(fd);
	if (pipe2(p, O_CLOEXEC) == -1)
		err(CTL_EXIT_USAGE, "pipe");
	switch (*pid = fork()) {
	case -1:
		err(CTL_EXIT_USAGE, "fork");
	case 0:
		close(p[0]);
		signal(SIGPIPE, SIG_DFL);
		_exit(image_tar_dir(path, p[1]));
	}
	close(p[1]);
	return (p[0]);
}

static void
image_show_progress(struct imsg *imsg, const char *name)
{
	struct image_progress	 pr;

	if (imsg_get_data(imsg, &pr, sizeof(pr)) == -1)
		errx(CTL_EXIT_USAGE, "malformed progress");
	fprintf(stderr, "import %s: %llu entries, %llu MiB\n", name,
	    (unsigned long long)pr.entries,
	    (unsigned long long)(pr.bytes >> 20));
}

/* The import request, its progress, its answer. */
static int
image_request(int s, const char *name, int fd, int progress, json_t **out,
    char *reason, size_t reasonlen)
{
	struct imsgbuf	 ibuf;
	struct imsg	 imsg;
	json_error_t	 jerr;
	struct pollfd	 pfd;
	char		*doc = NULL;
	size_t		 doclen = 0, n;
	int		 done = 0, ret = 0, r;

	if (imsgbuf_init(&ibuf, s) == -1 ||
	    imsgbuf_set_maxsize(&ibuf, FACTORY_MAXIMSG) == -1)
		err(CTL_EXIT_USAGE, "imsgbuf_init");
	imsgbuf_allow_fdpass(&ibuf);
	if (imsg_compose(&ibuf, IMSG_CTL_IMAGE_IMPORT, 0, 0, fd, name,
	    strlen(name) + 1) == -1 || imsgbuf_flush(&ibuf) == -1)
		err(CTL_EXIT_USAGE, "send request");
	while (!done) {
		pfd.fd = s;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			err(CTL_EXIT_USAGE, "poll");
		}
		if ((r = imsgbuf_read(&ibuf)) == -1)
			err(CTL_EXIT_USAGE, "read");
		if (r == 0)
			errx(CTL_EXIT_USAGE, "factoryd closed the connection");
		while (!done && (r = imsgbuf_get(&ibuf, &imsg)) != 0) {
			if (r == -1)
				errx(CTL_EXIT_USAGE, "malformed answer");
			n = imsg_get_len(&imsg);
			switch (imsg_get_type(&imsg)) {
			case IMSG_CTL_IMAGE_PROGRESS:
				if (progress)
					image_show_progress(&imsg, name);
				break;
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
				errx(CTL_EXIT_USAGE, "unexpected answer %u",
				    imsg_get_type(&imsg));
			}
			imsg_free(&imsg);
		}
	}
	imsgbuf_clear(&ibuf);
	if (ret == 0 && (*out = json_loads(doc != NULL ? doc : "{}", 0,
	    &jerr)) == NULL)
		errx(CTL_EXIT_USAGE, "bad JSON from factoryd: %s",
		    ctl_vis(jerr.text));
	free(doc);
	return (ret);
}

static void
image_print_stripped(json_t *o)
{
	json_t	*a, *v;
	size_t	 i;

	a = json_object_get(o, "stripped");
	json_array_foreach(a, i, v)
		printf("stripped: %s: %s\n", ctl_jvis(json_object_get(v,
		    "path")), ctl_jvis(json_object_get(v, "what")));
	if (json_integer_value(json_object_get(o, "stripped_total")) >
	    (json_int_t)json_array_size(a))
		printf("stripped: %lld more\n", (long long)
		    (json_integer_value(json_object_get(o, "stripped_total")) -
		    (json_int_t)json_array_size(a)));
}

static int
image_import(int argc, char **argv)
{
	json_t	*o = NULL;
	char	 reason[2048];
	pid_t	 pid;
	int	 ch, s, fd, ret, status, verbose = 0;

	while ((ch = getopt(argc, argv, "v")) != -1) {
		switch (ch) {
		case 'v':
			verbose = 1;
			break;
		default:
			ctl_usage("image");
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 2)
		ctl_usage("image");
	s = ctl_connect(0);
	fd = image_source(argv[1], &pid);
	ret = image_request(s, argv[0], fd, verbose || isatty(2), &o, reason,
	    sizeof(reason));
	close(fd);
	close(s);
	if (pid != -1 && (waitpid(pid, &status, 0) == -1 ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0) && ret == 0)
		warnx("%s: the directory was not read whole", ctl_vis(argv[1]));
	if (ret != 0) {
		fprintf(stderr, "factoryctl: %s\n", ctl_vis(reason));
		return (CTL_EXIT_REFUSED);
	}
	if (ctl_json)
		ctl_print_json(o);
	else {
		printf("%s %s: %lld files, %lld bytes%s\n",
		    ctl_jvis(json_object_get(o, "digest")),
		    ctl_jvis(json_object_get(o, "name")),
		    (long long)json_integer_value(json_object_get(o, "files")),
		    (long long)json_integer_value(json_object_get(o, "bytes")),
		    json_is_true(json_object_get(o, "existed")) ?
		    " (already stored)" : "");
		image_print_stripped(o);
	}
	json_decref(o);
	return (CTL_EXIT_OK);
}

static int
image_list(int argc, char **argv)
{
	json_t		*o, *a, *v, *n;
	char		 when[32];
	time_t		 t;
	size_t		 i, j;

	if (argc != 1)
		ctl_usage("image");
	if (ctl_simple(1, IMSG_CTL_IMAGE_LIST, NULL, 0, &o) != 0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json) {
		ctl_print_json(o);
		json_decref(o);
		return (CTL_EXIT_OK);
	}
	a = json_object_get(o, "images");
	printf("%-20s %-19s %8s %12s %s\n", "NAME", "DIGEST", "FILES",
	    "BYTES", "IMPORTED");
	json_array_foreach(a, i, v) {
		t = (time_t)json_integer_value(json_object_get(v, "imported"));
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
		n = json_object_get(v, "names");
		for (j = 0; j == 0 || j < json_array_size(n); j++)
			printf("%-20s %.19s %8lld %12lld %s\n",
			    json_array_size(n) > 0 ?
			    ctl_jvis(json_array_get(n, j)) : "-",
			    ctl_jvis(json_object_get(v, "digest")),
			    (long long)json_integer_value(json_object_get(v,
			    "files")), (long long)json_integer_value(
			    json_object_get(v, "bytes")), when);
	}
	json_decref(o);
	return (CTL_EXIT_OK);
}

static int
image_ref_cmd(int argc, char **argv, uint32_t type, int readonly)
{
	json_t	*o;

	if (argc != 2)
		ctl_usage("image");
	if (ctl_simple(readonly, type, argv[1], strlen(argv[1]) + 1, &o) !=
	    0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json)
		ctl_print_json(o);
	else if (type == IMSG_CTL_IMAGE_VERIFY)
		printf("OK: %s %s, %lld files\n", ctl_vis(argv[1]),
		    ctl_jvis(json_object_get(o, "digest")),
		    (long long)json_integer_value(json_object_get(o,
		    "files")));
	else
		printf("%s %s: %s\n", ctl_vis(argv[1]),
		    ctl_jvis(json_object_get(o, "digest")),
		    json_is_true(json_object_get(o, "removed")) ?
		    "removed" : "name removed, the image has other names");
	json_decref(o);
	return (CTL_EXIT_OK);
}

int
cmd_image(int argc, char **argv)
{
	if (argc < 2)
		ctl_usage("image");
	if (strcmp(argv[1], "import") == 0)
		return (image_import(argc - 1, argv + 1));
	if (strcmp(argv[1], "list") == 0)
		return (image_list(argc - 1, argv + 1));
	if (strcmp(argv[1], "rm") == 0)
		return (image_ref_cmd(argc - 1, argv + 1, IMSG_CTL_IMAGE_RM,
		    0));
	if (strcmp(argv[1], "verify") == 0)
		return (image_ref_cmd(argc - 1, argv + 1,
		    IMSG_CTL_IMAGE_VERIFY, 1));
	ctl_usage("image");
}
