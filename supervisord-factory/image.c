/*
 * The image store, as the rest of the parent sees it: a reference
 * resolved to a digest, a digest to its rootfs.  The layout is in
 * image.h.  Everything here is under the state directory, which only
 * root writes, so what is read is ours; names are still checked before
 * they become paths.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crypto.h"
#include "esc.h"
#include "factoryd.h"
#include "image.h"
#include "imagewalk.h"
#include "imagemsg.h"
#include "imgtree.h"
#include "journal.h"
#include "log.h"
#include "pledge.h"

#define IMAGE_PREFIX	"sha256:"

/* The rootfs path of a digest of the store, checked or not. */
static int
image_rootfs_path(const char *hex, char *buf, size_t len)
{
	struct stat	 sb;
	int		 n;

	if (!hex_valid(hex, IMAGE_HEXLEN))
		return (-1);
	n = snprintf(buf, len, "%s/images/sha256/%s/rootfs",
	    env->conf->statedir, hex);
	if (n < 0 || (size_t)n >= len)
		return (-1);
	if (lstat(buf, &sb) == -1 || !S_ISDIR(sb.st_mode) || sb.st_uid != 0)
		return (-1);
	return (0);
}

/*
 * Before an attempt uses a stored image, its entry list (canon, the
 * stream its digest is over) must still hash to its name: once per
 * digest after start, which costs about a millisecond per 10,000
 * entries; the tree itself is compared with the list by image verify.
 * An image whose check or verify failed is marked unusable (the file
 * images/sha256/HEX/unusable, with the reason, so a restart keeps it)
 * until a verify passes.
 */
#define IMAGE_CHECKED_MAX	256	/* remembered; older ones again */

static char	image_checked[IMAGE_CHECKED_MAX][IMAGE_HEXLEN + 1];
static size_t	image_nchecked;

static int
image_meta_path(char *buf, size_t len, const char *hex, const char *file)
{
	int	 n;

	n = snprintf(buf, len, "%s/images/sha256/%s/%s",
	    env->conf->statedir, hex, file);
	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

static void
image_check_forget(const char *hex)
{
	size_t	 i;

	for (i = 0; i < IMAGE_CHECKED_MAX; i++)
		if (strcmp(image_checked[i], hex) == 0)
			image_checked[i][0] = '\0';
}

static void
image_check_remember(const char *hex)
{
	image_check_forget(hex);
	strlcpy(image_checked[image_nchecked++ % IMAGE_CHECKED_MAX], hex,
	    IMAGE_HEXLEN + 1);
}

/* The sha256 of the image's entry list, in hex. */
static int
image_canon_hash(const char *hex, char out[IMAGE_HEXLEN + 1], char *err,
    size_t errlen)
{
	struct sha256_ctx	 ctx;
	uint8_t			 md[SHA256_LEN];
	char			 path[PATH_MAX], buf[64 * 1024];
	ssize_t			 n;
	int			 fd, i;

	if (image_meta_path(path, sizeof(path), hex, "canon") == -1 ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "no entry list: %s", strerror(errno));
		return (-1);
	}
	if (sha256_init(&ctx) == -1)
		fatalx("sha256");
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (sha256_update(&ctx, buf, (size_t)n) == -1)
			fatalx("sha256");
	close(fd);
	if (n == -1) {
		sha256_abort(&ctx);
		snprintf(err, errlen, "entry list: %s", strerror(errno));
		return (-1);
	}
	if (sha256_final(&ctx, md) == -1)
		fatalx("sha256");
	for (i = 0; i < SHA256_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	return (0);
}

/* The mark and its reason; the store's own file, root's. */
static void
image_mark_unusable(const char *hex, const char *why)
{
	char	 path[PATH_MAX], line[600];
	int	 fd, n;

	image_check_forget(hex);
	log_warnx("image sha256:%s: unusable until image verify passes: %s",
	    hex, why);
	n = snprintf(line, sizeof(line), "%s\n", why);
	if (image_meta_path(path, sizeof(path), hex, "unusable") == -1 ||
	    (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		log_warn("image sha256:%s: the unusable mark", hex);
		return;
	}
	if (n < 0 || write(fd, line, strlen(line)) == -1 || fsync(fd) == -1)
		log_warn("image sha256:%s: the unusable mark", hex);
	close(fd);
}

/* 0 if hex may be used; -1 and the reason otherwise. */
static int
image_usable(const char *hex, char *err, size_t errlen)
{
	char	 path[PATH_MAX], got[IMAGE_HEXLEN + 1], why[512];
	ssize_t	 n;
	size_t	 i;
	int	 fd;

	if (image_meta_path(path, sizeof(path), hex, "unusable") == -1) {
		snprintf(err, errlen, "image sha256:%s: state-dir path too "
		    "long", hex);
		return (-1);
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) != -1 ||
	    errno != ENOENT) {
		n = fd == -1 ? -1 : read(fd, why, sizeof(why) - 1);
		if (fd != -1)
			close(fd);
		why[n > 0 ? n : 0] = '\0';
		why[strcspn(why, "\n")] = '\0';
		snprintf(err, errlen, "image sha256:%s: marked unusable (%s); "
		    "image verify clears it", hex, why[0] != '\0' ? why :
		    "no reason recorded");
		return (-1);
	}
	for (i = 0; i < IMAGE_CHECKED_MAX; i++)
		if (strcmp(image_checked[i], hex) == 0)
			return (0);
	if (image_canon_hash(hex, got, why, sizeof(why)) == -1 ||
	    (strcmp(got, hex) != 0 && snprintf(why, sizeof(why), "its entry "
	    "list hashes to sha256:%s, not to its name", got) > 0)) {
		image_mark_unusable(hex, why);
		snprintf(err, errlen, "image sha256:%s: %s", hex, why);
		return (-1);
	}
	image_check_remember(hex);
	return (0);
}

int
image_rootfs(const char *hex, char *buf, size_t len)
{
	char	 err[1024];

	if (image_rootfs_path(hex, buf, len) == -1)
		return (-1);
	if (image_usable(hex, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		return (-1);
	}
	return (0);
}

/* NAME's digest, from images/names/NAME. */
static int
name_digest(const char *name, char hex[IMAGE_HEXLEN + 1], char *err,
    size_t errlen)
{
	char	 path[PATH_MAX], line[sizeof(IMAGE_PREFIX) + IMAGE_HEXLEN + 2];
	ssize_t	 n;
	int	 fd;

	if (snprintf(path, sizeof(path), "%s/images/names/%s",
	    env->conf->statedir, name) >= (int)sizeof(path)) {
		snprintf(err, errlen, "image %s: name too long", name);
		return (-1);
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "image %s: %s", name, errno == ENOENT ?
		    "no such image" : strerror(errno));
		return (-1);
	}
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	if (strncmp(line, IMAGE_PREFIX, strlen(IMAGE_PREFIX)) != 0 ||
	    !hex_valid(line + strlen(IMAGE_PREFIX), IMAGE_HEXLEN)) {
		snprintf(err, errlen, "image %s: %s is not a digest", name,
		    path);
		return (-1);
	}
	memcpy(hex, line + strlen(IMAGE_PREFIX), IMAGE_HEXLEN + 1);
	return (0);
}

static int	image_resolve_ref(const char *, char [IMAGE_HEXLEN + 1],
		    int *, char *, size_t);

/* For an attempt: the image must also be usable (image_usable). */
int
image_resolve(const char *ref, char hex[IMAGE_HEXLEN + 1], int *pinned,
    char *err, size_t errlen)
{
	if (image_resolve_ref(ref, hex, pinned, err, errlen) == -1)
		return (-1);
	return (image_usable(hex, err, errlen));
}

/* For the store's own requests: whether usable or not. */
static int
image_resolve_ref(const char *ref, char hex[IMAGE_HEXLEN + 1], int *pinned,
    char *err, size_t errlen)
{
	char		 name[IMAGE_NAME_MAX + 1], path[PATH_MAX];
	const char	*at, *digest = NULL;
	size_t		 len;

	if (strncmp(ref, IMAGE_PREFIX, strlen(IMAGE_PREFIX)) == 0) {
		digest = ref + strlen(IMAGE_PREFIX);
		name[0] = '\0';
	} else {
		at = strchr(ref, '@');
		len = at != NULL ? (size_t)(at - ref) : strlen(ref);
		if (len > IMAGE_NAME_MAX) {
			snprintf(err, errlen, "image name too long");
			return (-1);
		}
		memcpy(name, ref, len);
		name[len] = '\0';
		if (!name_valid(name, IMAGE_NAME_MAX)) {
			snprintf(err, errlen, "image %.*s: not a valid name",
			    (int)len, ref);
			return (-1);
		}
		if (at != NULL) {
			if (strncmp(at + 1, IMAGE_PREFIX,
			    strlen(IMAGE_PREFIX)) != 0) {
				snprintf(err, errlen, "image %s: the digest "
				    "must be sha256:HEX", name);
				return (-1);
			}
			digest = at + 1 + strlen(IMAGE_PREFIX);
		}
	}
	if (digest != NULL) {
		if (!hex_valid(digest, IMAGE_HEXLEN)) {
			snprintf(err, errlen, "image %s: the digest is not 64 "
			    "lower-case hex digits", ref);
			return (-1);
		}
		memcpy(hex, digest, IMAGE_HEXLEN + 1);
	} else if (name_digest(name, hex, err, errlen) == -1)
		return (-1);
	*pinned = digest != NULL;
	if (image_rootfs_path(hex, path, sizeof(path)) == -1) {
		snprintf(err, errlen, "image sha256:%s: not in the store", hex);
		return (-1);
	}
	return (0);
}

/*
 * The store's writers: import (through factory-image), rm, verify and
 * list, for factoryctl image.  The archive is parsed by factory-image
 * in its staging directory; what it leaves there is then checked again
 * here, walked without following anything (imgtree.c), given to root
 * and hashed into the digest, which only the parent computes.
 */
#define IMAGE_RELAY_MS	200		/* progress to factoryctl, at most */

/* The one import running: its request, then what the child said. */
struct image_job {
	uint32_t	 conn;		/* the factoryctl connection */
	uid_t		 uid;
	char		 name[IMAGE_NAME_MAX + 1];
	char		 id[IMAGE_IDMAX];
	json_t		*stripped;	/* [{path, what}], escaped paths */
	int		 finished;	/* DONE or FAILED arrived */
	int		 failed;
	int		 fd;		/* the archive, until it is sent */
	int		 walking;	/* the parent's walk of its tree */
	struct timespec	 relayed;	/* the last progress to factoryctl */
	struct image_import lim;
	char		 reason[IMAGE_REASONMAX];
	struct image_done done;
};

static struct image_job	*job;
static uint32_t		 image_seq;

static const char *const strip_what[IMAGE_STRIP_MAX] = {
	[IMAGE_STRIP_SETID] = "setuid/setgid cleared",
	[IMAGE_STRIP_CHR] = "character device skipped",
	[IMAGE_STRIP_BLK] = "block device skipped",
	[IMAGE_STRIP_FIFO] = "FIFO skipped",
	[IMAGE_STRIP_SOCK] = "socket skipped",
};

/*
 * In use by an attempt that is not over.  The manifest's image is
 * h-env's (m->environment.digest); attempt.c provides the real one.
 * Test builds: the fault point image:in-use says yes.
 */
__attribute__((__weak__)) int
attempt_uses_image(const char *hex)
{
	return (faultpoint("image:in-use"));
}

static int
image_path(char *buf, size_t len, const char *fmt, ...)
    __attribute__((__format__ (printf, 3, 4)));

static int
image_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list	 ap;
	int	 n, m;

	n = snprintf(buf, len, "%s/images/", env->conf->statedir);
	if (n < 0 || (size_t)n >= len)
		return (-1);
	va_start(ap, fmt);
	m = vsnprintf(buf + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= len - (size_t)n)
		return (-1);
	return (0);
}

/*
 * The store's directories, before factory-image starts (its unveil
 * needs its staging directory).  What an import interrupted by a
 * restart left in tmp goes now.
 */
void
image_init(void)
{
	struct conf_user	*u = &env->conf->users[PROC_IMAGE];
	struct dirent		*de;
	DIR			*d;
	char			 path[PATH_MAX], sub[PATH_MAX];

	if (image_path(path, sizeof(path), "%s", "") == -1 ||
	    fs_mkdir_owned(path, 0711, 0, 0) == -1)
		fatal("%s", path);
	if (image_path(path, sizeof(path), "staging") == -1 ||
	    fs_mkdir_owned(path, 0700, u->uid, u->gid) == -1)
		fatal("%s", path);
	if (image_path(path, sizeof(path), "sha256") == -1 ||
	    fs_mkdir_owned(path, 0700, 0, 0) == -1 ||
	    image_path(path, sizeof(path), "names") == -1 ||
	    fs_mkdir_owned(path, 0700, 0, 0) == -1 ||
	    image_path(path, sizeof(path), "tmp") == -1 ||
	    fs_mkdir_owned(path, 0700, 0, 0) == -1)
		fatal("%s", path);
	if ((d = opendir(path)) == NULL)
		fatal("%s", path);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (fs_remove_tree(sub) == -1)
			log_warn("images: %s", sub);
	}
	closedir(d);
}

static void
image_job_free(void)
{
	if (job == NULL)
		return;
	if (job->fd != -1)
		close(job->fd);
	json_decref(job->stripped);
	free(job);
	job = NULL;
}

/* A record of the store's changes; the journal refusing it is said. */
static int
image_journal(const char *op, const char *name, const char *hex, uid_t uid)
{
	json_t	*rec;
	char	*s;
	int	 rc;

	rec = json_pack("{s:{s:s, s:s, s:s, s:i}}", "image", "op", op,
	    "name", name != NULL ? name : "", "digest", hex, "uid", (int)uid);
	if (rec == NULL || (s = json_dumps(rec, JSON_COMPACT)) == NULL)
		fatal("json");
	json_decref(rec);
	rc = journal_append(env->journal, s, strlen(s), NULL);
	free(s);
	return (rc);
}

/* The import to factory-image, once it runs. */
static void
image_send(struct child *ch)
{
	struct ctl_conn	*c;

	if (job == NULL || job->fd == -1)
		return;
	if (imsgev_compose(&ch->iev, IMSG_IMAGE_IMPORT, 0, 0, job->fd,
	    &job->lim, sizeof(job->lim)) == -1) {
		if ((c = reply_conn(job->conn)) != NULL)
			reply_fail(c, "image import: %s", strerror(errno));
		job->fd = -1;
		image_job_free();
		return;
	}
	job->fd = -1;	/* imsg closes it once sent */
}

void
image_ctl_import(struct ctl_conn *c, struct imsg *imsg)
{
	struct image_import	 lim;
	struct child		*ch = proc_find(PROC_IMAGE, 0);
	char			 name[IMAGE_NAME_MAX + 2];
	int			 fd = imsg_get_fd(imsg);

	if (c->uid != 0) {
		if (fd != -1)
			close(fd);
		reply_fail(c, "image import: only root may import");
		return;
	}
	if (imsg_get_len(imsg) > sizeof(name) || imsg_get_strbuf(imsg, name,
	    sizeof(name)) == -1 || !name_valid(name, IMAGE_NAME_MAX)) {
		if (fd != -1)
			close(fd);
		reply_fail(c, "image import: not a valid name "
		    "([A-Za-z0-9._-], at most %d, not starting with . or -)",
		    IMAGE_NAME_MAX);
		return;
	}
	if (fd == -1) {
		reply_fail(c, "image import: no archive descriptor");
		return;
	}
	if (job != NULL || ch == NULL) {
		close(fd);
		reply_fail(c, "image import: another import is running");
		return;
	}
	if ((job = calloc(1, sizeof(*job))) == NULL)
		fatal(NULL);
	job->conn = c->id;
	job->uid = c->uid;
	strlcpy(job->name, name, sizeof(job->name));
	snprintf(job->id, sizeof(job->id), "i-%u", ++image_seq);
	job->stripped = json_array();
	memset(&lim, 0, sizeof(lim));
	strlcpy(lim.id, job->id, sizeof(lim.id));
	lim.max_bytes = env->conf->image_max_size;
	lim.max_entries = env->conf->image_max_files;
	lim.max_depth = (uint32_t)env->conf->image_max_depth;
	lim.max_path = (uint32_t)env->conf->image_max_path;
	job->lim = lim;
	job->fd = fd;
	log_info("image import %s (%s) by uid %u", name, job->id,
	    (unsigned)c->uid);
	/* A factory-image still starting (the last import's) gets it. */
	if (ch->state == CHILD_RUNNING)
		image_send(ch);
}

/* A NUL-terminated, canonically escaped string of at most max bytes. */
static int
image_msg_str(struct ibuf *b, char *out, size_t max)
{
	char	 dec[IMAGE_REASONMAX];
	size_t	 n = ibuf_size(b);

	if (n == 0 || n > max || ((char *)ibuf_data(b))[n - 1] != '\0' ||
	    memchr(ibuf_data(b), '\0', n - 1) != NULL)
		return (-1);
	memcpy(out, ibuf_data(b), n);
	if (esc_decode(out, n - 1, dec, sizeof(dec)) == -1)
		return (-1);
	return (0);
}

int
dispatch_image(struct child *ch, struct imsg *imsg, char *why, size_t len)
{
	struct image_progress	 p;
	struct ctl_conn		*c;
	struct timespec		 now;
	struct ibuf		 b;
	uint32_t		 kind;
	char			 path[IMAGE_REASONMAX];

	if (job == NULL || job->finished || job->fd != -1) {
		snprintf(why, len, "a message with no import running");
		return (-1);
	}
	if (imsg_get_fd(imsg) != -1) {
		snprintf(why, len, "an unexpected descriptor");
		return (-1);
	}
	switch (imsg_get_type(imsg)) {
	case IMSG_IMAGE_PROGRESS:
		if (imsg_get_data(imsg, &p, sizeof(p)) == -1) {
			snprintf(why, len, "IMAGE_PROGRESS: bad size");
			return (-1);
		}
		/* A few a second, whatever the child sends. */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - job->relayed.tv_sec) * 1000 +
		    (now.tv_nsec - job->relayed.tv_nsec) / 1000000 <
		    IMAGE_RELAY_MS)
			return (0);
		job->relayed = now;
		if ((c = reply_conn(job->conn)) != NULL)
			imsgev_compose(&c->iev, IMSG_CTL_IMAGE_PROGRESS, 0, 0,
			    -1, &p, sizeof(p));
		return (0);
	case IMSG_IMAGE_STRIPPED:
		if (imsg_get_ibuf(imsg, &b) == -1 ||
		    ibuf_get(&b, &kind, sizeof(kind)) == -1 ||
		    kind == 0 || kind >= IMAGE_STRIP_MAX ||
		    image_msg_str(&b, path, sizeof(path)) == -1 ||
		    json_array_size(job->stripped) >= IMAGE_STRIPMAX) {
			snprintf(why, len, "IMAGE_STRIPPED: malformed");
			return (-1);
		}
		json_array_append_new(job->stripped, json_pack("{s:s, s:s}",
		    "path", path, "what", strip_what[kind]));
		return (0);
	case IMSG_IMAGE_DONE:
		if (imsg_get_data(imsg, &job->done, sizeof(job->done)) == -1) {
			snprintf(why, len, "IMAGE_DONE: bad size");
			return (-1);
		}
		break;
	case IMSG_IMAGE_FAILED:
		if (imsg_get_ibuf(imsg, &b) == -1 || image_msg_str(&b,
		    job->reason, sizeof(job->reason)) == -1) {
			snprintf(why, len, "IMAGE_FAILED: malformed reason");
			return (-1);
		}
		job->failed = 1;
		break;
	default:
		snprintf(why, len, "unexpected imsg type %u",
		    imsg_get_type(imsg));
		return (-1);
	}
	/* One import per process: the next is a fresh one. */
	job->finished = 1;
	ch->recycle = 1;
	return (0);
}

void
image_ready(struct child *ch)
{
	/* What the last import left in staging goes. */
	imsgev_compose(&ch->iev, IMSG_IMAGE_CLEAN, 0, 0, -1, NULL, 0);
	image_send(ch);
}

/*
 * Write path (mode 0600 root) whole, through a temporary and rename.
 * The temporary is ".BASE.new": no image name starts with a dot, so it
 * is never another name's file (NAME.new is a valid name).
 */
static int
image_write_file(const char *path, const char *data, size_t len)
{
	char		 tmp[PATH_MAX];
	const char	*base;
	int		 fd;

	base = (base = strrchr(path, '/')) != NULL ? base + 1 : path;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s.%s.new",
	    (int)(base - path), path, base) >= sizeof(tmp))
		return (-1);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return (-1);
	if (write(fd, data, len) != (ssize_t)len || fsync(fd) == -1) {
		close(fd);
		unlink(tmp);
		return (-1);
	}
	close(fd);
	if (rename(tmp, path) == -1) {
		unlink(tmp);
		return (-1);
	}
	return (0);
}

static int
image_set_name(const char *name, const char *hex)
{
	char	 path[PATH_MAX], line[IMAGE_HEXLEN + 16];

	if (image_path(path, sizeof(path), "names/%s", name) == -1)
		return (-1);
	snprintf(line, sizeof(line), "%s%s\n", IMAGE_PREFIX, hex);
	return (image_write_file(path, line, strlen(line)));
}

/*
 * The tree the child left, moved out of its reach, checked, given to
 * root and hashed by a walk process (image_store_done goes on from
 * there); -1 and err if it cannot even start.
 */
static struct image_walk	 store_walk;

static void	image_store_done(struct image_walk *);

static void
image_store_paths(char *tmp, char *canon)
{
	if (image_path(tmp, PATH_MAX, "tmp/%s", job->id) == -1 ||
	    image_path(canon, PATH_MAX, "tmp/%s.canon", job->id) == -1)
		fatalx("state-dir path too long");
}

static int
image_store(char *err, size_t errlen)
{
	struct image_walk	*w = &store_walk;
	struct stat		 sb;
	char			 tmp[PATH_MAX], canon[PATH_MAX];
	char			 staging[PATH_MAX];
	int			 sfd, wfd, rfd;
	uid_t			 owner = env->conf->users[PROC_IMAGE].uid;

	image_store_paths(tmp, canon);
	if (image_path(staging, sizeof(staging), "staging") == -1) {
		snprintf(err, errlen, "state-dir path too long");
		return (-1);
	}
	/* The child owns staging/: nothing in it is followed. */
	if ((sfd = open(staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || (wfd = openat(sfd, job->id, O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "staging %s: %s", job->id,
		    strerror(errno));
		if (sfd != -1)
			close(sfd);
		return (-1);
	}
	close(sfd);
	if (renameat(wfd, "rootfs", AT_FDCWD, tmp) == -1) {
		snprintf(err, errlen, "staging %s: %s", job->id,
		    strerror(errno));
		close(wfd);
		return (-1);
	}
	close(wfd);
	memset(w, 0, sizeof(*w));
	if ((rfd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(rfd, &sb) == -1 ||
	    sb.st_uid != owner || (w->out = fopen(canon, "we")) == NULL) {
		snprintf(err, errlen, "the staged tree: %s", rfd == -1 ||
		    sb.st_uid == owner ? strerror(errno) :
		    "not the importer's");
		if (rfd != -1)
			close(rfd);
		goto drop;
	}
	w->rootfd = rfd;
	w->owner = owner;
	w->chown = 1;
	/* factory-image was told these; what it left is checked here. */
	w->bounded = 1;
	w->lim.max_entries = job->lim.max_entries;
	w->lim.max_bytes = job->lim.max_bytes;
	w->lim.max_depth = job->lim.max_depth;
	w->lim.max_path = job->lim.max_path;
	w->done = image_store_done;
	if (image_walk_start(w) == -1) {
		snprintf(err, errlen, "walk: %s", strerror(errno));
		fclose(w->out);
		close(rfd);
		goto drop;
	}
	job->walking = 1;
	return (0);
 drop:
	(void)fs_remove_tree(tmp);
	unlink(canon);
	return (-1);
}

/* The walk is done: store it under its digest, or drop a copy. */
static int
image_store_finish(struct image_walk *w, json_t **out, char *err,
    size_t errlen)
{
	struct imgwalk_result	*r = &w->res;
	struct stat		 sb;
	char			 tmp[PATH_MAX], canon[PATH_MAX], dst[PATH_MAX];
	char			 staging[PATH_MAX], *s;
	json_t			*meta;
	int			 existed = 0;

	image_store_paths(tmp, canon);
	if (w->rc == -1 || fchown(w->rootfd, 0, 0) == -1 ||
	    fchmod(w->rootfd, 0755) == -1) {
		snprintf(err, errlen, "the staged tree: %s", w->rc == -1 ?
		    w->err : strerror(errno));
		goto drop;
	}
	if (fflush(w->out) == EOF || fsync(fileno(w->out)) == -1) {
		snprintf(err, errlen, "entry list: %s", strerror(errno));
		goto drop;
	}
	if (image_path(dst, sizeof(dst), "sha256/%s", r->hex) == -1) {
		snprintf(err, errlen, "state-dir path too long");
		goto drop;
	}
	if (lstat(dst, &sb) == 0)
		existed = 1;	/* stored once: this copy goes */
	else {
		meta = json_pack("{s:s, s:I, s:I, s:I, s:I, s:O, s:I, s:b, "
		    "s:i}", "digest", "", "files", (json_int_t)r->files,
		    "bytes", (json_int_t)r->bytes, "entries",
		    (json_int_t)r->entries, "imported", (json_int_t)time(NULL),
		    "stripped", job->stripped, "stripped_total",
		    (json_int_t)job->done.stripped, "oci", job->done.oci != 0,
		    "layers", (int)job->done.layers);
		json_object_set_new(meta, "digest", json_sprintf("%s%s",
		    IMAGE_PREFIX, r->hex));
		s = json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(meta);
		if (image_path(staging, sizeof(staging), "tmp/%s.new",
		    job->id) == -1 || mkdir(staging, 0700) == -1 ||
		    image_path(dst, sizeof(dst), "tmp/%s.new/meta.json",
		    job->id) == -1 || image_write_file(dst, s, strlen(s)) ==
		    -1 ||
		    image_path(dst, sizeof(dst), "tmp/%s.new/canon",
		    job->id) == -1 || rename(canon, dst) == -1 ||
		    image_path(dst, sizeof(dst), "tmp/%s.new/rootfs",
		    job->id) == -1 || rename(tmp, dst) == -1 ||
		    image_path(dst, sizeof(dst), "sha256/%s", r->hex) == -1 ||
		    rename(staging, dst) == -1) {
			snprintf(err, errlen, "store: %s", strerror(errno));
			free(s);
			(void)fs_remove_tree(staging);
			goto drop;
		}
		free(s);
	}
	(void)fs_remove_tree(tmp);
	unlink(canon);
	if (image_set_name(job->name, r->hex) == -1) {
		snprintf(err, errlen, "name %s: %s", job->name,
		    strerror(errno));
		return (-1);
	}
	if (image_journal("import", job->name, r->hex, job->uid) == -1)
		log_warn("image %s: journal", job->name);
	log_info("image %s: sha256:%s, %llu files, %llu bytes%s", job->name,
	    r->hex, (unsigned long long)r->files,
	    (unsigned long long)r->bytes, existed ? ", already stored" : "");
	*out = json_pack("{s:s, s:s+, s:I, s:I, s:I, s:O, s:I, s:b, s:b, "
	    "s:i}", "name", job->name, "digest", IMAGE_PREFIX, r->hex,
	    "files", (json_int_t)r->files, "bytes", (json_int_t)r->bytes,
	    "entries", (json_int_t)r->entries, "stripped", job->stripped,
	    "stripped_total", (json_int_t)job->done.stripped, "existed",
	    existed, "oci", job->done.oci != 0, "layers",
	    (int)job->done.layers);
	return (0);
 drop:
	(void)fs_remove_tree(tmp);
	unlink(canon);
	return (-1);
}

/* The import's answer to factoryctl, and the end of the job. */
static void
image_answer(json_t *out, const char *err)
{
	struct ctl_conn	*c;

	if (err != NULL)
		log_warnx("image import %s: %s", job->name, err);
	if ((c = reply_conn(job->conn)) != NULL) {
		if (err == NULL)
			reply_obj(c, out);
		else {
			json_decref(out);
			reply_fail(c, "image import %s: %s", job->name, err);
		}
	} else
		json_decref(out);
	image_job_free();
}

static void
image_store_done(struct image_walk *w)
{
	json_t	*out = NULL;
	char	 err[IMAGE_REASONMAX + 64];
	int	 rc;

	rc = image_store_finish(w, &out, err, sizeof(err));
	fclose(w->out);
	close(w->rootfd);
	image_answer(out, rc == 0 ? NULL : err);
}

void
image_lost(struct child *ch)
{
	char	 err[IMAGE_REASONMAX + 64];

	if (job == NULL || job->fd != -1 || job->walking)
		return;		/* not sent yet: the next one gets it */
	if (!job->finished)
		snprintf(err, sizeof(err), "factory-image died during the "
		    "import");
	else if (job->failed)
		snprintf(err, sizeof(err), "%s", job->reason);
	else if (image_store(err, sizeof(err)) == 0)
		return;		/* answered once the walk is done */
	image_answer(NULL, err);
}

/* NAME or sha256:HEX of the request, to a digest in the store. */
static int
image_ref(struct imsg *imsg, char *ref, size_t reflen, char hex[IMAGE_HEXLEN + 1],
    int *byname, char *err, size_t errlen)
{
	int	 pinned;

	if (imsg_get_len(imsg) > reflen || imsg_get_strbuf(imsg, ref,
	    reflen) == -1) {
		snprintf(err, errlen, "not an image reference");
		return (-1);
	}
	if (strchr(ref, '@') != NULL) {
		snprintf(err, errlen, "NAME or sha256:HEX, not NAME@...");
		return (-1);
	}
	if (image_resolve_ref(ref, hex, &pinned, err, errlen) == -1)
		return (-1);
	*byname = !pinned;
	return (0);
}

/* Every name of the store that points at hex is removed. */
static void
image_unname(const char *hex, const char *only)
{
	struct dirent	*de;
	DIR		*d;
	char		 path[PATH_MAX], h[IMAGE_HEXLEN + 1], err[256];

	if (image_path(path, sizeof(path), "names") == -1 ||
	    (d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!name_valid(de->d_name, IMAGE_NAME_MAX) || (only != NULL &&
		    strcmp(only, de->d_name) != 0))
			continue;
		if (name_digest(de->d_name, h, err, sizeof(err)) == 0 &&
		    strcmp(h, hex) == 0 && image_path(path, sizeof(path),
		    "names/%s", de->d_name) == 0)
			unlink(path);
	}
	closedir(d);
}

static int
image_named(const char *hex)
{
	struct dirent	*de;
	DIR		*d;
	char		 path[PATH_MAX], h[IMAGE_HEXLEN + 1], err[256];
	int		 n = 0;

	if (image_path(path, sizeof(path), "names") == -1 ||
	    (d = opendir(path)) == NULL)
		return (0);
	while ((de = readdir(d)) != NULL)
		if (name_valid(de->d_name, IMAGE_NAME_MAX) &&
		    name_digest(de->d_name, h, err, sizeof(err)) == 0 &&
		    strcmp(h, hex) == 0)
			n++;
	closedir(d);
	return (n);
}

void
image_ctl_rm(struct ctl_conn *c, struct imsg *imsg)
{
	char	 ref[IMAGE_REF_MAX + 2], hex[IMAGE_HEXLEN + 1], err[256];
	char	 path[PATH_MAX], tmp[PATH_MAX];
	int	 byname, removed = 0;

	if (c->uid != 0) {
		reply_fail(c, "image rm: only root may remove images");
		return;
	}
	if (image_ref(imsg, ref, sizeof(ref), hex, &byname, err,
	    sizeof(err)) == -1) {
		reply_fail(c, "image rm: %s", err);
		return;
	}
	if (attempt_uses_image(hex)) {
		reply_fail(c, "image rm %s: sha256:%s is used by an attempt "
		    "that is not over", ref, hex);
		return;
	}
	if (image_journal("rm", byname ? ref : NULL, hex, c->uid) == -1) {
		reply_fail(c, "image rm: journal: %s", strerror(errno));
		return;
	}
	image_unname(hex, byname ? ref : NULL);
	/* The content goes with its last name, or when named by digest. */
	if (image_named(hex) == 0) {
		if (image_path(path, sizeof(path), "sha256/%s", hex) == -1 ||
		    image_path(tmp, sizeof(tmp), "tmp/rm-%s", hex) == -1 ||
		    rename(path, tmp) == -1 || fs_remove_tree(tmp) == -1) {
			reply_fail(c, "image rm: %s", strerror(errno));
			return;
		}
		removed = 1;
		image_check_forget(hex);
	}
	log_info("image rm %s (sha256:%s) by uid %u%s", ref, hex,
	    (unsigned)c->uid, removed ? ": removed" : ": name removed");
	reply_obj(c, json_pack("{s:s, s:s+, s:b}", "ref", ref,
	    "digest", IMAGE_PREFIX, hex, "removed", removed));
}

/* What a verify found decides whether attempts may use the image. */
static void
image_verified(struct image_walk *w)
{
	char	 why[600], path[PATH_MAX];

	if (w->rc == -1 || strcmp(w->res.hex, w->hex) != 0) {
		if (w->rc == -1)
			snprintf(why, sizeof(why), "image verify: first "
			    "difference: %s", w->err);
		else
			snprintf(why, sizeof(why), "image verify: the tree "
			    "and its entry list hash to sha256:%s", w->res.hex);
		image_mark_unusable(w->hex, why);
		return;
	}
	if (image_meta_path(path, sizeof(path), w->hex, "unusable") == 0 &&
	    unlink(path) == 0)
		log_info("image sha256:%s: verified, usable again", w->hex);
	image_check_remember(w->hex);
}

static void
image_verify_done(struct image_walk *w)
{
	struct ctl_conn	*c = reply_conn(w->conn);

	close(w->rootfd);
	fclose(w->canon);
	image_verified(w);
	if (c == NULL)
		free(w);	/* the client went away */
	else if (w->rc == -1)
		reply_fail(c, "image verify sha256:%s: first difference: %s",
		    w->hex, w->err);
	else if (strcmp(w->res.hex, w->hex) != 0)
		reply_fail(c, "image verify sha256:%s: the tree and its "
		    "entry list hash to sha256:%s", w->hex, w->res.hex);
	else
		reply_obj(c, json_pack("{s:s, s:s+, s:b, s:I, s:I}",
		    "ref", w->ref, "digest", IMAGE_PREFIX, w->hex, "ok", 1,
		    "files", (json_int_t)w->res.files, "bytes",
		    (json_int_t)w->res.bytes));
	if (c != NULL)
		free(w);
}

void
image_ctl_verify(struct ctl_conn *c, struct imsg *imsg)
{
	struct image_walk	*w;
	char			 err[512], path[PATH_MAX];
	int			 byname;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		fatal(NULL);
	w->rootfd = -1;
	if (image_ref(imsg, w->ref, sizeof(w->ref), w->hex, &byname, err,
	    sizeof(err)) == -1) {
		reply_fail(c, "image verify: %s", err);
		goto fail;
	}
	if (image_path(path, sizeof(path), "sha256/%s/canon", w->hex) == -1 ||
	    (w->canon = fopen(path, "re")) == NULL) {
		reply_fail(c, "image verify sha256:%s: no entry list: %s",
		    w->hex, strerror(errno));
		goto fail;
	}
	if (image_rootfs_path(w->hex, path, sizeof(path)) == -1 ||
	    (w->rootfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		reply_fail(c, "image verify sha256:%s: no rootfs", w->hex);
		goto fail;
	}
	w->conn = c->id;
	w->done = image_verify_done;
	if (image_walk_start(w) == -1) {
		reply_fail(c, "image verify: %s", errno == EBUSY ?
		    "too many walks running; try again" : strerror(errno));
		goto fail;
	}
	return;
 fail:
	if (w->canon != NULL)
		fclose(w->canon);
	if (w->rootfd != -1)
		close(w->rootfd);
	free(w);
}

/* meta.json of hex, or NULL. */
static json_t *
image_meta(const char *hex)
{
	json_error_t	 jerr;
	char		 path[PATH_MAX];

	if (image_path(path, sizeof(path), "sha256/%s/meta.json", hex) == -1)
		return (NULL);
	return (json_load_file(path, JSON_REJECT_DUPLICATES, &jerr));
}

void
image_ctl_list(struct ctl_conn *c, struct imsg *imsg)
{
	struct dirent	*de;
	DIR		*d;
	json_t		*list = json_array(), *meta, *names, *o;
	char		 path[PATH_MAX], h[IMAGE_HEXLEN + 1], err[256];
	const char	*k;

	names = json_object();
	if (image_path(path, sizeof(path), "names") == 0 &&
	    (d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (name_valid(de->d_name, IMAGE_NAME_MAX) &&
			    name_digest(de->d_name, h, err, sizeof(err)) == 0) {
				if ((o = json_object_get(names, h)) == NULL) {
					o = json_array();
					json_object_set_new(names, h, o);
				}
				json_array_append_new(o,
				    json_string(de->d_name));
			}
		closedir(d);
	}
	if (image_path(path, sizeof(path), "sha256") == 0 &&
	    (d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (!hex_valid(de->d_name, IMAGE_HEXLEN) ||
			    (meta = image_meta(de->d_name)) == NULL)
				continue;
			o = json_pack("{s:s+, s:O, s:O, s:O, s:O}", "digest",
			    IMAGE_PREFIX, de->d_name, "files",
			    json_object_get(meta, "files"), "bytes",
			    json_object_get(meta, "bytes"), "imported",
			    json_object_get(meta, "imported"), "stripped",
			    json_object_get(meta, "stripped"));
			if (o == NULL) {
				json_decref(meta);
				continue;
			}
			json_object_set(o, "names", (k = de->d_name,
			    json_object_get(names, k)) != NULL ?
			    json_object_get(names, k) : json_array());
			json_array_append_new(list, o);
			json_decref(meta);
		}
		closedir(d);
	}
	json_decref(names);
	reply_obj(c, json_pack("{s:o}", "images", list));
}
