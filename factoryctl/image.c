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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
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

#define TAR_MAXDEPTH	1024	/* factory-image refuses far less */

struct tarwalk {
	struct archive	*w;
	char		 path[PATH_MAX];	/* relative, as the tar names it */
	char		 buf[TAR_BLOCK];
	dev_t		 dev;		/* the root's file system */
	int		 depth;
};

static int	tar_dir(struct tarwalk *, int);

/*
 * One entry, by what fstat of the descriptor we opened says, not by a
 * name looked up again: the directory may belong to someone who swaps
 * a file for a symbolic link while we read it (we are root), and a
 * link is never followed: O_NOFOLLOW on every open, and what lstat saw
 * must be what was opened.
 */
static int
tar_entry(struct tarwalk *t, int dirfd, const char *name)
{
	struct archive_entry	*e;
	struct stat		 lsb, sb;
	char			 target[PATH_MAX];
	ssize_t			 n;
	off_t			 left;
	int			 fd = -1, rc = 1;

	if (fstatat(dirfd, name, &lsb, AT_SYMLINK_NOFOLLOW) == -1) {
		warn("%s", t->path);
		return (1);
	}
	if (t->depth == 0)
		t->dev = lsb.st_dev;
	else if (lsb.st_dev != t->dev) {
		/* What is mounted below the root is not the image's. */
		warnx("%s: another file system (a mount point below the "
		    "directory imported)", t->path);
		return (1);
	}
	if ((e = archive_entry_new()) == NULL)
		errx(1, "libarchive");
	if (S_ISLNK(lsb.st_mode)) {
		if ((n = readlinkat(dirfd, name, target, sizeof(target) - 1)) ==
		    -1) {
			warn("%s", t->path);
			goto done;
		}
		target[n] = '\0';
		archive_entry_copy_stat(e, &lsb);
		archive_entry_copy_symlink(e, target);
		sb = lsb;
	} else if (S_ISREG(lsb.st_mode) || S_ISDIR(lsb.st_mode)) {
		if ((fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC | O_NONBLOCK | (S_ISDIR(lsb.st_mode) ?
		    O_DIRECTORY : 0))) == -1 || fstat(fd, &sb) == -1) {
			warn("%s", t->path);
			goto done;
		}
		if (sb.st_dev != lsb.st_dev || sb.st_ino != lsb.st_ino ||
		    (sb.st_mode & S_IFMT) != (lsb.st_mode & S_IFMT)) {
			warnx("%s: changed while it was read", t->path);
			goto done;
		}
		archive_entry_copy_stat(e, &sb);
	} else {
		/* Devices, fifos, sockets: factory-image says what it does. */
		archive_entry_copy_stat(e, &lsb);
		sb = lsb;
	}
	archive_entry_copy_pathname(e, t->path[0] != '\0' ? t->path : ".");
	if (archive_write_header(t->w, e) != ARCHIVE_OK) {
		warnx("%s: %s", t->path, archive_error_string(t->w));
		goto done;
	}
	if (S_ISREG(sb.st_mode)) {
		/* Exactly the size the header says, whatever happens. */
		for (left = sb.st_size; left > 0; left -= n) {
			n = read(fd, t->buf, left < (off_t)sizeof(t->buf) ?
			    (size_t)left : sizeof(t->buf));
			if (n <= 0) {
				warnx("%s: %s", t->path, n == 0 ?
				    "shrank while it was read" :
				    strerror(errno));
				goto done;
			}
			if (archive_write_data(t->w, t->buf, n) < 0) {
				warnx("%s", archive_error_string(t->w));
				goto done;
			}
		}
	}
	rc = S_ISDIR(sb.st_mode) ? tar_dir(t, fd) : 0;
	fd = -1;	/* tar_dir closed it */
 done:
	if (fd != -1)
		close(fd);
	archive_entry_free(e);
	return (rc);
}

/* The entries of the directory open at fd (closed here), depth first. */
static int
tar_dir(struct tarwalk *t, int fd)
{
	DIR		*d;
	struct dirent	*de;
	size_t		 len = strlen(t->path);
	int		 rc = 0;

	if (fd == -1)
		return (0);
	if (++t->depth > TAR_MAXDEPTH) {
		warnx("%s: more than %d directories deep", t->path,
		    TAR_MAXDEPTH);
		close(fd);
		return (1);
	}
	if ((d = fdopendir(fd)) == NULL) {
		warn("%s", t->path);
		close(fd);
		return (1);
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(t->path + len, sizeof(t->path) - len,
		    "%s%s", len > 0 ? "/" : "", de->d_name) >=
		    sizeof(t->path) - len) {
			t->path[len] = '\0';
			warnx("%s: a name too long below it", t->path[0] != '\0' ?
			    t->path : ".");
			rc = 1;
			break;
		}
		rc = tar_entry(t, dirfd(d), de->d_name);
		t->path[len] = '\0';
	}
	if (rc == 0 && errno != 0) {
		warn("%s", t->path[0] != '\0' ? t->path : ".");
		rc = 1;
	}
	closedir(d);
	t->depth--;
	return (rc);
}

/*
 * Root reads a directory someone else owns with that owner's rights
 * only: a hard link in it to a file the owner cannot read is not read
 * for them.  The owner's groups are theirs from the group database, or
 * none but the directory's group if the uid has no name.
 */
static void
image_drop_to_owner(int dfd)
{
	struct passwd	*pw;
	struct stat	 sb;
	gid_t		 gid;

	if (fstat(dfd, &sb) == -1)
		err(1, "fstat");
	if (sb.st_uid == 0 || geteuid() != 0)
		return;
	/* Not a process the owner may trace or make dump its memory. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		err(1, "prctl");
	if ((pw = getpwuid(sb.st_uid)) != NULL) {
		gid = pw->pw_gid;
		if (initgroups(pw->pw_name, gid) == -1)
			err(1, "initgroups %s", pw->pw_name);
	} else {
		gid = sb.st_gid;
		if (setgroups(1, &gid) == -1)
			err(1, "setgroups");
	}
	if (setresgid(gid, gid, gid) == -1 ||
	    setresuid(sb.st_uid, sb.st_uid, sb.st_uid) == -1)
		err(1, "the directory's owner, uid %u", (unsigned)sb.st_uid);
	if (geteuid() != sb.st_uid || getuid() != sb.st_uid ||
	    setresuid(0, 0, 0) != -1)
		errx(1, "uid %u: could not drop root", (unsigned)sb.st_uid);
}

/*
 * The directory open at dfd (the one the caller checked, not its name
 * again) as a pax stream on fd; 0, or 1 and a warning.  A walk that
 * fails part-way never gets its end-of-archive blocks: the stream ends
 * in a partial block, which factory-image refuses, and so would any
 * tar reader; an archive of the entries read so far is never made.
 */
static int
image_tar_dir(int dfd, int fd)
{
	static const char	 cut[] = "factoryctl: the walk failed\n";
	struct tarwalk		*t;
	int			 rc;

	image_drop_to_owner(dfd);
	if ((t = calloc(1, sizeof(*t))) == NULL || (t->w =
	    archive_write_new()) == NULL)
		errx(1, "out of memory");
	archive_write_set_format_pax_restricted(t->w);
	archive_write_set_bytes_in_last_block(t->w, 1);
	if (archive_write_open_fd(t->w, fd) != ARCHIVE_OK) {
		warnx("%s", archive_error_string(t->w));
		return (1);
	}
	/* "." first, as tar writes a directory's own entry. */
	rc = tar_entry(t, dfd, ".");
	close(dfd);
	if (rc != 0) {
		/*
		 * Not archive_write_free: it would close the archive.  If
		 * even this write fails the stream still lacks its end.
		 */
		if (write(fd, cut, sizeof(cut) - 1) == -1)
			return (1);
		return (1);
	}
	if (archive_write_close(t->w) != ARCHIVE_OK) {
		warnx("%s", archive_error_string(t->w));
		rc = 1;
	}
	archive_write_free(t->w);
	free(t);
	return (rc);
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
	if (pipe2(p, O_CLOEXEC) == -1)
		err(CTL_EXIT_USAGE, "pipe");
	switch (*pid = fork()) {
	case -1:
		err(CTL_EXIT_USAGE, "fork");
	case 0:
		close(p[0]);
		signal(SIGPIPE, SIG_DFL);
		_exit(image_tar_dir(fd, p[1]));
	}
	close(fd);
	close(p[1]);
	return (p[0]);
}

/* The import's progress, the one answer but the document and END. */
static void
image_progress(struct imsg *imsg, void *arg)
{
	struct image_progress	 pr;
	const char		*name = arg;

	if (imsg_get_type(imsg) != IMSG_CTL_IMAGE_PROGRESS)
		errx(CTL_EXIT_USAGE, "unexpected answer %u",
		    imsg_get_type(imsg));
	if (imsg_get_data(imsg, &pr, sizeof(pr)) == -1)
		errx(CTL_EXIT_USAGE, "malformed progress");
	if (name != NULL)
		fprintf(stderr, "import %s: %llu entries, %llu MiB\n", name,
		    (unsigned long long)pr.entries,
		    (unsigned long long)(pr.bytes >> 20));
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
	/* The tar writer first: it never holds the control socket. */
	fd = image_source(argv[1], &pid);
	s = ctl_connect(0);
	ret = ctl_request_fd(s, IMSG_CTL_IMAGE_IMPORT, fd, argv[0],
	    strlen(argv[0]) + 1, image_progress, verbose || isatty(2) ?
	    argv[0] : NULL, &o, reason, sizeof(reason));
	close(fd);
	close(s);
	if (ret != 0) {
		fprintf(stderr, "factoryctl: %s\n", ctl_vis(reason));
		if (pid != -1)
			waitpid(pid, &status, 0);
		return (CTL_EXIT_REFUSED);
	}
	if (pid != -1 && (waitpid(pid, &status, 0) == -1 ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		/* factoryd refuses a stream cut short; if it ever did not: */
		warnx("%s: the directory was not read whole", ctl_vis(argv[1]));
		json_decref(o);
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
		    IMSG_CTL_IMAGE_VERIFY, 0));
	ctl_usage("image");
}
