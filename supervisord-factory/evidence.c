/*
 * factoryctl attach: what an operator gathered about an attempt (a
 * screenshot of its preview, an answer of its health path), kept in
 * its evidence.  A preview is an interface for gathering evidence,
 * never evidence itself: what was gathered through it is, once it is
 * kept here and named by digest in an "evidence" receipt.
 *
 * The bytes come in the requests themselves, never as a descriptor:
 * a descriptor a client made may be a file of its own FUSE server or
 * a socket that lingers, on which root's read, fstat or even close
 * could wait for ever.  ATTACH names the attempt and the file; DATA
 * pieces follow, at most EVIDENCE_MAX_BYTES of them in all; ATTACH_END
 * is answered, once, with the receipt's facts or the first refusal.
 * Meanwhile the bytes go to an unnamed file (O_TMPFILE) in the
 * attempt's evidence directory, STATEDIR/evidence/ID, which a
 * connection that goes away takes along; at the end it gets its name,
 * beside the journal that holds the receipts and, like it, kept after
 * the attempt ends.  An upload that would leave the state directory's
 * file system with less than EVIDENCE_RESERVE free is refused first:
 * the journal writes there.  What the uploads in progress may still
 * write counts as spent already, so that many at once, each of which
 * would pass alone, cannot together eat into that reserve.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "esc.h"
#include "factoryd.h"
#include "log.h"
#include "vis.h"

#define EVIDENCE_DIR		"evidence"
/* Free space the state directory keeps: the greater of these. */
#define EVIDENCE_RESERVE	(256ULL << 20)
#define EVIDENCE_RESERVE_PCT	5
/*
 * Uploads in progress at once, at most.  The rw socket's 64 connections
 * would bound them too, but each upload holds a descriptor and, until
 * it ends, EVIDENCE_MAX_BYTES of the state directory's free space (see
 * ev_held): 64 would hold 512 MiB back from every other attach.  An
 * operator attaches a screenshot or two at a time; 8 hold 64 MiB.
 */
#define EVIDENCE_UPLOADS	8
/* Of them, one user's (root's: any), so one cannot take them all. */
#define EVIDENCE_UPLOADS_USER	2

/* An upload on its way: its connection's (ctl_conn upload). */
struct ev_upload {
	char			 id[ATTEMPT_ID_MAX];
	char			 name[NAME_MAX + 1];
	char			 why[512];	/* the first refusal, or "" */
	int			 fd;		/* O_TMPFILE in its directory */
	struct sha256_ctx	 ctx;
	int			 ctxlive;	/* ctx to be ended */
	uint64_t		 bytes;
	uint64_t		 held;		/* its part of ev_held */
	unsigned char		 head[8];	/* the first bytes: its type */
	size_t			 nhead;
	unsigned char		 tail[4];	/* a character cut by a piece */
	size_t			 ntail;
	int			 text;		/* printable UTF-8 so far */
};

/*
 * What the uploads in progress may still write, and how many they are.
 * ATTACH announces no size (it names the attempt and the file, no
 * more), so each upload holds EVIDENCE_MAX_BYTES less what it wrote,
 * from its file's opening until the file is named or dropped: what it
 * wrote is gone from the file system's free space already.
 */
static uint64_t	ev_held;
static int	ev_uploads;

/* The uploads in progress of user owner's connections, but root's. */
static int
ev_uploads_of(uid_t owner)
{
	struct ctl_conn	*c;
	int		 n = 0;

	TAILQ_FOREACH(c, &env->ctl_conns, entry)
		if (c->owner == owner && c->uid != 0 && c->upload != NULL &&
		    c->upload->fd != -1)
			n++;
	return (n);
}

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
 * The upload's file (unnamed: it goes) and digest, if any, and the
 * free space it held for what it had still to write.
 */
static void
ev_drop(struct ev_upload *up)
{
	if (up->fd != -1) {
		close(up->fd);
		ev_held -= up->held;
		ev_uploads--;
	}
	up->fd = -1;
	up->held = 0;
	if (up->ctxlive)
		sha256_abort(&up->ctx);
	up->ctxlive = 0;
}

/* The upload refused: said at its end, its bytes dropped meanwhile. */
static void
ev_refuse(struct ev_upload *up, const char *fmt, ...)
    __attribute__((__format__ (printf, 2, 3)));

static void
ev_refuse(struct ev_upload *up, const char *fmt, ...)
{
	va_list	 ap;

	if (up->why[0] != '\0')
		return;		/* the first says it */
	va_start(ap, fmt);
	vsnprintf(up->why, sizeof(up->why), fmt, ap);
	va_end(ap);
	ev_drop(up);
}

/*
 * The size and free bytes of dfd's file system: 0, or -1 with errno.
 * A test build's file system of any size on demand: while the file the
 * environment's FACTORY_TEST_EVIDENCE_DF names exists, its two numbers
 * (bytes) are the size and the free bytes instead.
 */
static int
ev_df(int dfd, uint64_t *total, uint64_t *avail)
{
	struct statvfs	 sv;
#ifdef FACTORY_TESTBUILD
	const char	*f = getenv("FACTORY_TEST_EVIDENCE_DF");
	unsigned long long t, a;
	FILE		*fp;
	int		 n;

	if (f != NULL && *f != '\0' && (fp = fopen(f, "re")) != NULL) {
		n = fscanf(fp, "%llu %llu", &t, &a);
		fclose(fp);
		if (n != 2) {
			errno = EINVAL;
			return (-1);
		}
		*total = t;
		*avail = a;
		return (0);
	}
#endif
	if (fstatvfs(dfd, &sv) == -1)
		return (-1);
	*total = (uint64_t)sv.f_blocks * sv.f_frsize;
	*avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	return (0);
}

/*
 * Would one more upload leave the state directory less than its
 * reserve, with all those in progress written to their bound?
 */
static int
ev_room(int dfd, char *why, size_t len)
{
	uint64_t	 total, avail, reserve;

	if (ev_df(dfd, &total, &avail) == -1) {
		snprintf(why, len, "cannot look at the state directory: %s",
		    strerror(errno));
		return (-1);
	}
	reserve = total / 100 * EVIDENCE_RESERVE_PCT;
	if (reserve < EVIDENCE_RESERVE)
		reserve = EVIDENCE_RESERVE;
	if (avail < ev_held ||
	    avail - ev_held < reserve + EVIDENCE_MAX_BYTES) {
		snprintf(why, len, "the state directory has %lluM free, %lluM "
		    "of it held by %d uploads in progress, and keeps %lluM for "
		    "the journal", (unsigned long long)(avail >> 20),
		    (unsigned long long)(ev_held >> 20), ev_uploads,
		    (unsigned long long)(reserve >> 20));
		return (-1);
	}
	return (0);
}

/*
 * factoryctl attach [-n name] ID FILE, first: the attempt id and the
 * name, each NUL-terminated.  Checked now; a refusal is said at the
 * end (evidence_end), and the bytes until then are dropped.
 */
void
evidence_begin(struct ctl_conn *c, struct imsg *imsg)
{
	struct ibuf		 ib;
	struct ev_upload	*up;
	struct attempt		*a;
	char			 why[256];
	int			 dfd, n;

	evidence_gone(c);	/* an upload not ended is dropped */
	if ((up = calloc(1, sizeof(*up))) == NULL) {
		log_warn("control: attach");
		return;		/* ATTACH_END finds none: refused */
	}
	up->fd = -1;
	up->text = 1;
	c->upload = up;
	if (imsg_get_ibuf(imsg, &ib) == -1 ||
	    ibuf_get_string(&ib, up->id, sizeof(up->id)) == -1 ||
	    ibuf_get_string(&ib, up->name, sizeof(up->name)) == -1 ||
	    ibuf_size(&ib) != 0) {
		ev_refuse(up, "bad attach request");
		return;
	}
	if ((a = attempt_find(up->id)) == NULL) {
		ev_refuse(up, "%s: no such attempt", up->id);
		return;
	}
	if (tenant_may_act(c, "attach", a, up->why, sizeof(up->why)) == -1 ||
	    ev_may_attach(a, up->name, up->why, sizeof(up->why)) == -1)
		return;
	if (ev_uploads >= EVIDENCE_UPLOADS) {
		ev_refuse(up, "%s: %s: %d uploads in progress, at most %d at "
		    "once", up->id, up->name, ev_uploads, EVIDENCE_UPLOADS);
		return;
	}
	if (c->uid != 0 && (n = ev_uploads_of(c->owner)) >=
	    EVIDENCE_UPLOADS_USER) {
		ev_refuse(up, "%s: %s: user %u has %d uploads in progress, at "
		    "most %d at once", up->id, up->name, (unsigned)c->owner, n,
		    EVIDENCE_UPLOADS_USER);
		return;
	}
	if ((dfd = ev_dir(a, why, sizeof(why))) == -1 ||
	    ev_room(dfd, why, sizeof(why)) == -1)
		ev_refuse(up, "%s: %s: %s", up->id, up->name, why);
	else if ((up->fd = openat(dfd, ".", O_TMPFILE | O_WRONLY |
	    O_CLOEXEC, 0640)) == -1)
		ev_refuse(up, "%s: %s: cannot store it: %s", up->id, up->name,
		    strerror(errno));
	else {
		/* Held until its file is named or dropped (ev_drop). */
		up->held = EVIDENCE_MAX_BYTES;
		ev_held += up->held;
		ev_uploads++;
		if (sha256_init(&up->ctx) == -1)
			ev_refuse(up, "%s: %s: cannot digest it", up->id,
			    up->name);
		else
			up->ctxlive = 1;
	}
	if (dfd != -1)
		close(dfd);
}

/*
 * A piece of the file: stored, digested, its type looked at, as long
 * as the whole stays within EVIDENCE_MAX_BYTES.
 */
void
evidence_data(struct ctl_conn *c, struct imsg *imsg)
{
	static unsigned char	 buf[sizeof(((struct ev_upload *)0)->tail) +
				     FACTORY_MAXIMSG];
	struct ev_upload	*up = c->upload;
	unsigned char		 one;
	size_t			 n = imsg_get_len(imsg), got, cut, k;

	if (up == NULL || up->fd == -1)
		return;		/* refused, or none begun: said at the end */
	if (n > EVIDENCE_MAX_BYTES - up->bytes) {
		ev_refuse(up, "%s: %s: more than %d bytes (8 MiB)", up->id,
		    up->name, EVIDENCE_MAX_BYTES);
		return;
	}
	up->bytes += n;
	up->held -= n;		/* now on the file system's books */
	ev_held -= n;
	memcpy(buf, up->tail, up->ntail);
	if (imsg_get_data(imsg, buf + up->ntail, n) == -1) {
		ev_refuse(up, "bad attach request");
		return;
	}
	if (up->nhead < sizeof(up->head)) {
		k = n < sizeof(up->head) - up->nhead ? n :
		    sizeof(up->head) - up->nhead;
		memcpy(up->head + up->nhead, buf + up->ntail, k);
		up->nhead += k;
	}
	if (sha256_update(&up->ctx, buf + up->ntail, n) == -1 ||
	    write_all(up->fd, buf + up->ntail, n) == -1) {
		ev_refuse(up, "%s: %s: cannot store it: %s", up->id, up->name,
		    strerror(errno));
		return;
	}
	if (!up->text)
		return;
	/* A character cut by this piece is judged with the next. */
	got = up->ntail + n;
	cut = vis_tail(buf, got);
	if (vis_buf((char *)&one, 1, buf, got - cut, VIS_NL | VIS_TAB |
	    VIS_NOSLASH) != got - cut)
		up->text = 0;
	memcpy(up->tail, buf + got - cut, cut);
	up->ntail = up->text ? cut : 0;
}

/*
 * The end of the upload: the file named in its directory, fsynced, its
 * receipt journaled, its facts answered; or the first refusal.  A file
 * of that name is one a receipt never named (the daemon stopped
 * between the two): it goes.
 */
void
evidence_end(struct ctl_conn *c, struct imsg *imsg)
{
	struct ev_upload	*up = c->upload;
	struct attempt		*a;
	uint8_t			 md[SHA256_LEN];
	char			 sha[SHA256_HEX_LEN + 1], path[64];
	const char		*type;
	size_t			 n;
	int			 dfd = -1;

	(void)imsg;
	if (up == NULL) {
		reply_fail(c, "attach: no upload begun");
		return;
	}
	if (up->why[0] != '\0') {
		reply_fail(c, "%s", up->why);
		goto done;
	}
	/* It may have changed meanwhile: another upload, the journal. */
	if ((a = attempt_find(up->id)) == NULL) {
		reply_fail(c, "%s: no such attempt", up->id);
		goto done;
	}
	if (ev_may_attach(a, up->name, up->why, sizeof(up->why)) == -1) {
		reply_fail(c, "%s", up->why);
		goto done;
	}
	up->ctxlive = 0;
	if (sha256_final(&up->ctx, md) == -1) {
		reply_fail(c, "%s: %s: cannot digest it", up->id, up->name);
		goto done;
	}
	hex_encode(md, sizeof(md), sha);
	type = ev_type(up->head, up->nhead, up->text && up->ntail == 0);
	if ((dfd = ev_dir(a, up->why, sizeof(up->why))) == -1) {
		reply_fail(c, "%s: %s: %s", up->id, up->name, up->why);
		goto done;
	}
	if (unlinkat(dfd, up->name, 0) == 0)
		log_warnx("%s: evidence %s: a file no receipt named, removed",
		    a->id, up->name);
	/* The unnamed file gets its name, once its bytes are down. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", up->fd);
	if (fsync(up->fd) == -1 || linkat(AT_FDCWD, path, dfd, up->name,
	    AT_SYMLINK_FOLLOW) == -1 || fsync(dfd) == -1) {
		reply_fail(c, "%s: %s: cannot store it: %s", up->id, up->name,
		    strerror(errno));
		goto done;
	}
	/* Kept only once its receipt is: the journal may refuse it. */
	n = a->nreceipts;
	report_note(a, "evidence", json_pack("{s:i, s:s, s:I, s:s, s:s}",
	    "uid", (int)c->uid, "name", up->name, "bytes",
	    (json_int_t)up->bytes, "sha256", sha, "type", type));
	if (a->nreceipts == n) {
		ev_unstore(a, up->name);
		reply_fail(c, "%s: %s: its receipt could not be journaled (see "
		    "factoryd's log)", a->id, up->name);
		goto done;
	}
	log_info("%s: evidence %s attached by uid %u: %llu bytes, %s, "
	    "sha256 %s", a->id, up->name, (unsigned)c->uid,
	    (unsigned long long)up->bytes, type, sha);
	reply_obj(c, json_pack("{s:s, s:s, s:I, s:s, s:s}", "id", a->id,
	    "name", up->name, "bytes", (json_int_t)up->bytes, "sha256", sha,
	    "type", type));
 done:
	if (dfd != -1)
		close(dfd);
	evidence_gone(c);
}

/* The connection's upload, if any, is dropped (its file was unnamed). */
void
evidence_gone(struct ctl_conn *c)
{
	struct ev_upload	*up = c->upload;

	if (up == NULL)
		return;
	ev_drop(up);
	free(up);
	c->upload = NULL;
}
