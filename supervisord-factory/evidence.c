/*
 * factoryctl attach: what an operator gathered about an attempt (a
 * screenshot of its preview, an answer of its health path), kept in
 * its evidence.  A preview is an interface for gathering evidence,
 * never evidence itself: what was gathered through it is, once it is
 * kept here and named by digest in an "evidence" receipt.
 *
 * The file comes as a descriptor the client opened; its bytes are
 * copied below the state directory, STATEDIR/evidence/ID/NAME, beside
 * the journal that holds the receipts and, like it, kept after the
 * attempt ends.  The descriptor is the client's: whatever it is, it is
 * read at most once and bounded, only if it is a regular file of a
 * file system the kernel serves, and closed on every path.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/magic.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "esc.h"
#include "factoryd.h"
#include "log.h"
#include "vis.h"

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC	0x65735546
#endif

#define EVIDENCE_CHUNK		(64 * 1024)
#define EVIDENCE_DIR		"evidence"

/*
 * File systems whose reads are not a file's: a FUSE server (any user
 * may run one) can make a read wait forever, and the kernel's own
 * report on root, not on the client that opened them.
 */
static const struct {
	long		 magic;
	const char	*name;
} ev_refused_fs[] = {
	{ FUSE_SUPER_MAGIC, "FUSE" }, { PROC_SUPER_MAGIC, "proc" },
	{ SYSFS_MAGIC, "sysfs" }, { DEBUGFS_MAGIC, "debugfs" },
	{ TRACEFS_MAGIC, "tracefs" }, { SECURITYFS_MAGIC, "securityfs" },
	{ CGROUP2_SUPER_MAGIC, "cgroup2" }, { EFIVARFS_MAGIC, "efivarfs" },
};

struct ev_copy {
	uint64_t	 bytes;
	char		 sha256[SHA256_HEX_LEN + 1];
	const char	*type;
};

/* The attachment of that name, already in a's receipts: 1, else 0. */
static int
ev_attached(const struct attempt *a, const char *name)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(a->evidence, i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")),
		    name) == 0)
			return (1);
	return (0);
}

/*
 * fd, the client's: a regular file of at most EVIDENCE_MAX_BYTES on a
 * file system that serves its own reads.  0, or -1 and why.
 */
static int
ev_check_fd(int fd, char *why, size_t len)
{
	struct stat	 st;
	struct statfs	 sfs;
	size_t		 i;

	if (fstat(fd, &st) == -1 || fstatfs(fd, &sfs) == -1) {
		snprintf(why, len, "cannot look at it: %s", strerror(errno));
		return (-1);
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, len, "not a regular file");
		return (-1);
	}
	for (i = 0; i < sizeof(ev_refused_fs) / sizeof(ev_refused_fs[0]); i++)
		if ((long)sfs.f_type == ev_refused_fs[i].magic) {
			snprintf(why, len, "a file of %s, not of a disk",
			    ev_refused_fs[i].name);
			return (-1);
		}
	if (st.st_size > EVIDENCE_MAX_BYTES) {
		snprintf(why, len, "%lld bytes, more than %d (8 MiB)",
		    (long long)st.st_size, EVIDENCE_MAX_BYTES);
		return (-1);
	}
	return (0);
}

/*
 * The type, from the first bytes: a PNG or JPEG signature, else text
 * if every byte read was printable UTF-8 (tabs and newlines too).
 */
static const char *
ev_type(const unsigned char *head, size_t n, int text)
{
	if (n >= 8 && memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0)
		return ("png");
	if (n >= 3 && memcmp(head, "\xff\xd8\xff", 3) == 0)
		return ("jpeg");
	return (text && n > 0 ? "text" : "data");
}

static int
ev_write(int out, const unsigned char *p, size_t n)
{
	ssize_t	 w;

	while (n > 0) {
		if ((w = write(out, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		p += w;
		n -= w;
	}
	return (0);
}

/*
 * Copy fd to out, at most EVIDENCE_MAX_BYTES + 1 bytes read: one more
 * than the bound says the file grew past it since it was looked at.
 * Its digest and type as it goes.  0, or -1 and why.
 */
static int
ev_copy(int fd, int out, struct ev_copy *ec, char *why, size_t len)
{
	static unsigned char	 buf[4 + EVIDENCE_CHUNK];
	unsigned char		 head[8], one;
	struct sha256_ctx	 ctx;
	uint8_t			 md[SHA256_LEN];
	size_t			 keep = 0, nhead = 0, cut, want, got;
	ssize_t			 n;
	int			 text = 1;

	ec->bytes = 0;
	if (sha256_init(&ctx) == -1) {
		snprintf(why, len, "cannot digest it");
		return (-1);
	}
	for (;;) {
		want = EVIDENCE_MAX_BYTES + 1 - ec->bytes;
		if (want > EVIDENCE_CHUNK)
			want = EVIDENCE_CHUNK;
		if ((n = read(fd, buf + keep, want)) == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(why, len, "cannot read it: %s",
			    strerror(errno));
			goto fail;
		}
		if ((got = (size_t)n) == 0)
			break;
		if ((ec->bytes += got) > EVIDENCE_MAX_BYTES) {
			snprintf(why, len, "it grew past %d bytes (8 MiB)",
			    EVIDENCE_MAX_BYTES);
			goto fail;
		}
		if (nhead < sizeof(head)) {
			want = got < sizeof(head) - nhead ? got :
			    sizeof(head) - nhead;
			memcpy(head + nhead, buf + keep, want);
			nhead += want;
		}
		if (sha256_update(&ctx, buf + keep, got) == -1 ||
		    ev_write(out, buf + keep, got) == -1) {
			snprintf(why, len, "cannot store it: %s",
			    strerror(errno));
			goto fail;
		}
		if (!text)
			continue;
		/* A character cut by this read is judged with the next. */
		got += keep;
		cut = vis_tail(buf, got);
		if (vis_buf((char *)&one, 1, buf, got - cut, VIS_NL | VIS_TAB |
		    VIS_NOSLASH) != got - cut)
			text = 0;
		memmove(buf, buf + got - cut, cut);
		keep = text ? cut : 0;
	}
	if (sha256_final(&ctx, md) == -1) {
		snprintf(why, len, "cannot digest it");
		return (-1);
	}
	hex_encode(md, sizeof(md), ec->sha256);
	ec->type = ev_type(head, nhead, text && keep == 0);
	return (0);
 fail:
	sha256_abort(&ctx);
	return (-1);
}

/*
 * The directory of a's evidence, made if need be, every component
 * opened with no link followed: a descriptor, or -1 and why.
 */
static int
ev_dir(const struct attempt *a, char *why, size_t len)
{
	int	 sfd, efd, dfd = -1;

	if ((sfd = open(env->conf->statedir, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		snprintf(why, len, "%s: %s", env->conf->statedir,
		    strerror(errno));
		return (-1);
	}
	if ((mkdirat(sfd, EVIDENCE_DIR, 0700) == -1 && errno != EEXIST) ||
	    (efd = openat(sfd, EVIDENCE_DIR, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(why, len, "%s/%s: %s", env->conf->statedir,
		    EVIDENCE_DIR, strerror(errno));
		close(sfd);
		return (-1);
	}
	close(sfd);
	if ((mkdirat(efd, a->id, 0700) == -1 && errno != EEXIST) ||
	    (dfd = openat(efd, a->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fsync(efd) == -1) {
		snprintf(why, len, "%s/%s/%s: %s", env->conf->statedir,
		    EVIDENCE_DIR, a->id, strerror(errno));
		if (dfd != -1)
			close(dfd);
		dfd = -1;
	}
	close(efd);
	return (dfd);
}

/*
 * fd's bytes as name in a's evidence directory, fsynced, with its
 * digest and type.  A file of that name is one a receipt never named
 * (the daemon stopped between the two): it goes.  0, or -1 and why.
 */
static int
ev_store(const struct attempt *a, const char *name, int fd,
    struct ev_copy *ec, char *why, size_t len)
{
	int	 dfd, out, rv = -1;

	if ((dfd = ev_dir(a, why, len)) == -1)
		return (-1);
	if (unlinkat(dfd, name, 0) == 0)
		log_warnx("%s: evidence %s: a file no receipt named, removed",
		    a->id, name);
	if ((out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0640)) == -1) {
		snprintf(why, len, "cannot store it: %s", strerror(errno));
		close(dfd);
		return (-1);
	}
	if (ev_copy(fd, out, ec, why, len) == 0) {
		if (fsync(out) == -1 || fsync(dfd) == -1)
			snprintf(why, len, "cannot store it: %s",
			    strerror(errno));
		else
			rv = 0;
	}
	close(out);
	if (rv == -1)
		(void)unlinkat(dfd, name, 0);
	close(dfd);
	return (rv);
}

/* The journal refused the receipt: no file is kept without one. */
static void
ev_unstore(const struct attempt *a, const char *name)
{
	char	 why[256];
	int	 dfd;

	if ((dfd = ev_dir(a, why, sizeof(why))) == -1) {
		log_warnx("%s: evidence %s: %s", a->id, name, why);
		return;
	}
	if (unlinkat(dfd, name, 0) == -1)
		log_warn("%s: evidence %s", a->id, name);
	close(dfd);
}

/*
 * Whether name may be attached to a now: 0, or -1 and why (the
 * attempt's id first, as every refusal of attach says).
 */
static int
ev_may_attach(const struct attempt *a, const char *name, char *why,
    size_t len)
{
	const struct transition	*t = transition_find("evidence");
	char			 shown[96];

	if (!name_valid(name, EVIDENCE_NAME_MAX)) {
		/* The client's bytes, shown escaped (esc.h), and cut. */
		esc_show(name, strlen(name), shown, sizeof(shown));
		snprintf(why, len, "%s: \"%s\": not a valid name of evidence: "
		    "1 to %d of [A-Za-z0-9._-], not starting with . or -",
		    a->id, shown, EVIDENCE_NAME_MAX);
		return (-1);
	}
	if (t == NULL || !lifecycle_legal(a, t)) {
		snprintf(why, len, "%s: no evidence is attached while it is "
		    "%s", a->id, attempt_state_name(a->state));
		return (-1);
	}
	if (json_array_size(a->evidence) >= EVIDENCE_FILES) {
		snprintf(why, len, "%s: %d files attached already, at most %d",
		    a->id, EVIDENCE_FILES, EVIDENCE_FILES);
		return (-1);
	}
	if (ev_attached(a, name)) {
		snprintf(why, len, "%s: %s is attached already", a->id, name);
		return (-1);
	}
	return (0);
}

/*
 * factoryctl attach [-n name] ID FILE: the attempt id and the name,
 * each NUL-terminated, and the file as a descriptor.
 */
void
evidence_ctl(struct ctl_conn *c, struct imsg *imsg)
{
	struct ibuf	 ib;
	struct attempt	*a;
	struct ev_copy	 ec;
	char		 id[ATTEMPT_ID_MAX], name[NAME_MAX + 1], err[512];
	size_t		 n;
	int		 fd = imsg_get_fd(imsg);

	if (imsg_get_ibuf(imsg, &ib) == -1 ||
	    ibuf_get_string(&ib, id, sizeof(id)) == -1 ||
	    ibuf_get_string(&ib, name, sizeof(name)) == -1 ||
	    ibuf_size(&ib) != 0) {
		reply_fail(c, "bad attach request");
		goto done;
	}
	if (fd == -1) {
		reply_fail(c, "attach: no file came with the request");
		goto done;
	}
	if ((a = attempt_find(id)) == NULL) {
		reply_fail(c, "%s: no such attempt", id);
		goto done;
	}
	if (tenant_may_act(c, "attach", a, err, sizeof(err)) == -1 ||
	    ev_may_attach(a, name, err, sizeof(err)) == -1) {
		reply_fail(c, "%s", err);
		goto done;
	}
	if (ev_check_fd(fd, err, sizeof(err)) == -1 ||
	    ev_store(a, name, fd, &ec, err, sizeof(err)) == -1) {
		reply_fail(c, "%s: %s: %s", a->id, name, err);
		goto done;
	}
	/* Kept only once its receipt is: the journal may refuse it. */
	n = a->nreceipts;
	report_note(a, "evidence", json_pack("{s:i, s:s, s:I, s:s, s:s}",
	    "uid", (int)c->uid, "name", name, "bytes", (json_int_t)ec.bytes,
	    "sha256", ec.sha256, "type", ec.type));
	if (a->nreceipts == n) {
		ev_unstore(a, name);
		reply_fail(c, "%s: %s: its receipt could not be journaled (see "
		    "factoryd's log)", a->id, name);
		goto done;
	}
	log_info("%s: evidence %s attached by uid %u: %llu bytes, %s, "
	    "sha256 %s", a->id, name, (unsigned)c->uid,
	    (unsigned long long)ec.bytes, ec.type, ec.sha256);
	reply_obj(c, json_pack("{s:s, s:s, s:I, s:s, s:s}", "id", a->id,
	    "name", name, "bytes", (json_int_t)ec.bytes, "sha256", ec.sha256,
	    "type", ec.type));
 done:
	if (fd != -1)
		close(fd);
}
