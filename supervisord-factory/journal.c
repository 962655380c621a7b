/*
 * The parent's append-only, hash-chained, fsynced journal.  See
 * journal.h for the record layout.
 *
 * Opening verifies the whole file before replaying any of it, so the
 * parent never acts on a prefix of a journal it then refuses.
 */
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crypto.h"
#include "factory.h"
#include "log.h"
#include "journal.h"
#include "util.h"

#define JOURNAL_REC_OVERHEAD	(JOURNAL_HDR_LEN + JOURNAL_TRAILER_LEN)
#define JOURNAL_WRITE_MAX	(64 * 1024 * 1024)	/* one batch */

struct journal {
	int		 fd;
	off_t		 end;		/* of the last good record */
	uint64_t	 seq;		/* of the last record, 0: none */
	uint8_t		 head[JOURNAL_TRAILER_LEN];
	int		 broken;	/* a failed append was not undone */
	size_t		 reserve;	/* bytes kept allocated past end */
	off_t		 reserved_to;	/* allocated up to here */
	int		 short_reserve;	/* could not allocate it all */
};

/* A read-only view of the file while it is opened. */
struct jmap {
	const uint8_t	*p;
	size_t		 size;
};


static void
put_header(uint8_t *h, uint32_t len, uint64_t seq)
{
	uint32_t	 len_le = htole32(len);
	uint64_t	 seq_le = htole64(seq);

	memcpy(h, JOURNAL_MAGIC, 4);
	memcpy(h + 4, &len_le, sizeof(len_le));
	memcpy(h + 8, &seq_le, sizeof(seq_le));
}

static void
get_header(const uint8_t *h, uint32_t *len, uint64_t *seq)
{
	uint32_t	 len_le;
	uint64_t	 seq_le;

	memcpy(&len_le, h + 4, sizeof(len_le));
	memcpy(&seq_le, h + 8, sizeof(seq_le));
	*len = le32toh(len_le);
	*seq = le64toh(seq_le);
}

/* trailer = sha256(prev || header || payload), header and payload adjacent */
static int
trailer_of(const uint8_t prev[JOURNAL_TRAILER_LEN], const uint8_t *rec,
    size_t reclen, uint8_t out[JOURNAL_TRAILER_LEN])
{
	struct sha256_ctx	 ctx;

	if (sha256_init(&ctx) == -1)
		return (-1);
	if (sha256_update(&ctx, prev, JOURNAL_TRAILER_LEN) == -1 ||
	    sha256_update(&ctx, rec, reclen) == -1) {
		sha256_abort(&ctx);
		return (-1);
	}
	return (sha256_final(&ctx, out));
}

/*
 * Is there a whole record at off whose trailer matches prev?  On
 * success *reclen is its length; else *why says what is wrong.
 */
static int
record_ok(const struct jmap *m, size_t off, const uint8_t *prev,
    size_t *reclen, uint64_t *seq, const char **why)
{
	uint8_t		 md[JOURNAL_TRAILER_LEN];
	uint32_t	 len;

	if (m->size - off < JOURNAL_HDR_LEN) {
		*why = "short header";
		return (0);
	}
	if (memcmp(m->p + off, JOURNAL_MAGIC, 4) != 0) {
		*why = "bad magic";
		return (0);
	}
	get_header(m->p + off, &len, seq);
	if (len == 0 || len > JOURNAL_PAYLOAD_MAX) {
		*why = "bad length";
		return (0);
	}
	if (m->size - off < JOURNAL_REC_OVERHEAD + (size_t)len) {
		*why = "short record";
		return (0);
	}
	if (trailer_of(prev, m->p + off, JOURNAL_HDR_LEN + len, md) == -1 ||
	    memcmp(md, m->p + off + JOURNAL_HDR_LEN + len,
	    JOURNAL_TRAILER_LEN) != 0) {
		*why = "bad checksum";
		return (0);
	}
	*reclen = JOURNAL_REC_OVERHEAD + len;
	return (1);
}

/*
 * If the bad record at off is whole but fails its checksum, the
 * trailer it should have carried, and where the next record would
 * begin: a flipped trailer must not hide the good record behind it.
 */
static int
expected_trailer(const struct jmap *m, size_t off, const uint8_t *prev,
    uint8_t out[JOURNAL_TRAILER_LEN], size_t *next)
{
	uint32_t	 len;
	uint64_t	 seq;

	if (m->size - off < JOURNAL_HDR_LEN ||
	    memcmp(m->p + off, JOURNAL_MAGIC, 4) != 0)
		return (0);
	get_header(m->p + off, &len, &seq);
	if (len == 0 || len > JOURNAL_PAYLOAD_MAX ||
	    m->size - off < JOURNAL_REC_OVERHEAD + (size_t)len)
		return (0);
	if (trailer_of(prev, m->p + off, JOURNAL_HDR_LEN + len, out) == -1)
		return (0);
	*next = off + JOURNAL_REC_OVERHEAD + len;
	return (1);
}

/*
 * After a bad record at off: is any good record behind it?  A record
 * counts when its trailer matches the 32 bytes just before it, as it
 * would in an intact chain (or, right after the bad record, the
 * trailer the bad record should have had).  Payloads never hold a NUL
 * and every header does, so no payload can pass for a record.
 */
static int
find_good(const struct jmap *m, size_t off, const uint8_t *prev,
    size_t *found)
{
	const uint8_t	*p;
	uint8_t		 alt[JOURNAL_TRAILER_LEN];
	size_t		 c = off, reclen, next = 0;
	uint64_t	 seq;
	const char	*why;
	int		 have_alt;

	have_alt = expected_trailer(m, off, prev, alt, &next);
	while (c < m->size) {
		p = memmem(m->p + c, m->size - c, JOURNAL_MAGIC, 4);
		if (p == NULL)
			return (0);
		c = p - m->p;
		if ((c == off && record_ok(m, c, prev, &reclen, &seq, &why)) ||
		    (c > off && c >= JOURNAL_TRAILER_LEN && record_ok(m, c,
		    m->p + c - JOURNAL_TRAILER_LEN, &reclen, &seq, &why)) ||
		    (have_alt && c == next && record_ok(m, c, alt, &reclen,
		    &seq, &why))) {
			*found = c;
			return (1);
		}
		c++;
	}
	return (0);
}

/*
 * Walk the chain from the start.  Returns the end of the last good
 * record, its number and trailer; *why and a non-zero return mean the
 * walk stopped before the end of the file.
 */
static size_t
walk(const struct jmap *m, uint64_t *seqp, uint8_t head[JOURNAL_TRAILER_LEN],
    const char **why)
{
	size_t		 off = 0, reclen;
	uint64_t	 seq;

	memset(head, 0, JOURNAL_TRAILER_LEN);
	*seqp = 0;
	*why = NULL;
	while (off < m->size) {
		if (!record_ok(m, off, head, &reclen, &seq, why))
			break;
		if (seq != *seqp + 1) {
			*why = "bad sequence number";
			break;
		}
		memcpy(head, m->p + off + reclen - JOURNAL_TRAILER_LEN,
		    JOURNAL_TRAILER_LEN);
		*seqp = seq;
		off += reclen;
	}
	return (off);
}

static int
replay(const struct jmap *m, size_t end, journal_replay_cb cb, void *arg,
    char *err, size_t errlen)
{
	char		*buf;
	size_t		 off = 0;
	uint32_t	 len;
	uint64_t	 seq = 0;

	if (cb == NULL)
		return (0);
	if ((buf = malloc(JOURNAL_PAYLOAD_MAX + 1)) == NULL) {
		errfmt(err, errlen, "journal: replay: %s", strerror(errno));
		return (-1);
	}
	while (off < end) {
		get_header(m->p + off, &len, &seq);
		memcpy(buf, m->p + off + JOURNAL_HDR_LEN, len);
		buf[len] = '\0';
		if (cb(arg, seq, buf, len) != 0) {
			errfmt(err, errlen, "journal: replay stopped at record "
			    "%" PRIu64 " (offset %zu)", seq, off);
			free(buf);
			return (-1);
		}
		off += JOURNAL_REC_OVERHEAD + len;
	}
	free(buf);
	return (0);
}


/* Open the file, creating it durably if it does not exist, and lock it. */
static int
open_file(const char *path, char *err, size_t errlen)
{
	struct stat	 st;
	int		 fd;

	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1 && errno == ENOENT) {
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC |
		    O_NOFOLLOW, 0600);
		if (fd != -1 && (fsync(fd) == -1 || fsync_dir_of(path) == -1)) {
			errfmt(err, errlen, "journal: %s: fsync after create: %s",
			    path, strerror(errno));
			close(fd);
			return (-1);
		}
	}
	if (fd == -1) {
		errfmt(err, errlen, "journal: %s: %s", path, strerror(errno));
		return (-1);
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		errfmt(err, errlen, "journal: %s: %s", path,
		    errno == EWOULDBLOCK ? "locked by another process" :
		    strerror(errno));
		close(fd);
		return (-1);
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		errfmt(err, errlen, "journal: %s: not a regular file", path);
		close(fd);
		return (-1);
	}
	return (fd);
}

/* Decide what a stop before the end of the file means, and act. */
static int
handle_tail(struct journal *j, const struct jmap *m, const char *why,
    const char *path, char *err, size_t errlen)
{
	size_t	 found;

	if (find_good(m, j->end, j->head, &found)) {
		errfmt(err, errlen, "journal: %s: corrupt record at offset %lld "
		    "(%s), followed by a good record at offset %zu", path,
		    (long long)j->end, why, found);
		return (-1);
	}
	if (ftruncate(j->fd, j->end) == -1 || fsync(j->fd) == -1) {
		errfmt(err, errlen, "journal: %s: cutting the torn tail: %s",
		    path, strerror(errno));
		return (-1);
	}
	log_warnx("journal: cut torn tail at offset %lld (%zu bytes): %s",
	    (long long)j->end, m->size - (size_t)j->end, why);
	return (0);
}

/*
 * Keep j->reserve bytes allocated past the end of the file (its size
 * unchanged): the appends that end attempts land there when the file
 * system is full, since writing into allocated blocks needs no more.
 * After an append it is topped up once half of it is used; whole,
 * when the caller asks whether it is held.  A file system that cannot
 * preallocate has no reserve, said once.
 */
static void
reserve_fill(struct journal *j, int whole)
{
	static int	 unsupported;
	off_t		 want;

	want = j->end + (off_t)(whole ? j->reserve : j->reserve / 2);
	if (j->reserve == 0 || (!j->short_reserve && j->reserved_to >= want))
		return;
	if (fallocate(j->fd, FALLOC_FL_KEEP_SIZE, j->end, j->reserve) == 0) {
		if (j->short_reserve)
			log_info("journal: %zu KiB in reserve again",
			    j->reserve / 1024);
		j->short_reserve = 0;
		j->reserved_to = j->end + j->reserve;
		return;
	}
	if (errno == EOPNOTSUPP) {
		if (!unsupported)
			log_warnx("journal: this file system cannot "
			    "preallocate: no space in reserve");
		unsupported = 1;
		j->reserve = 0;
		return;
	}
	if (!j->short_reserve)
		log_warn("journal: cannot keep %zu KiB in reserve",
		    j->reserve / 1024);
	j->short_reserve = 1;
	/* What is left of the old reserve still counts. */
	if (j->reserved_to < j->end)
		j->reserved_to = j->end;
}

int
journal_reserve_held(struct journal *j)
{
	reserve_fill(j, 1);
	return (!j->short_reserve);
}

size_t
journal_reserve_size(const struct journal *j)
{
	return (j->reserve);
}

int
journal_open(const char *path, struct journal **jp, journal_replay_cb cb,
    void *arg, char *err, size_t errlen)
{
	struct journal	*j;
	struct jmap	 m = { NULL, 0 };
	struct stat	 st;
	const char	*why = NULL;
	void		*p = NULL;
	int		 rv = -1;

	*jp = NULL;
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		errfmt(err, errlen, "journal: %s", strerror(errno));
		return (-1);
	}
	if ((j->fd = open_file(path, err, errlen)) == -1) {
		free(j);
		return (-1);
	}
	if (fstat(j->fd, &st) == -1) {
		errfmt(err, errlen, "journal: %s: fstat: %s", path,
		    strerror(errno));
		goto out;
	}
	if (st.st_size > 0) {
		p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, j->fd, 0);
		if (p == MAP_FAILED) {
			p = NULL;
			errfmt(err, errlen, "journal: %s: mmap: %s", path,
			    strerror(errno));
			goto out;
		}
		m.p = p;
		m.size = st.st_size;
	}
	j->end = walk(&m, &j->seq, j->head, &why);
	if ((size_t)j->end < m.size &&
	    handle_tail(j, &m, why, path, err, errlen) == -1)
		goto out;
	if (replay(&m, j->end, cb, arg, err, errlen) == -1)
		goto out;
	/* A full disk is no reason not to start: status still works. */
	j->reserve = JOURNAL_RESERVE;
	if (faultpoint("journal:no-reserve")) {
		/* As if none had ever been kept: punch out what was. */
		(void)fallocate(j->fd, FALLOC_FL_PUNCH_HOLE |
		    FALLOC_FL_KEEP_SIZE, j->end, JOURNAL_RESERVE * 4);
		j->reserve = 0;
	}
	j->reserved_to = j->end;
	reserve_fill(j, 0);
	rv = 0;
 out:
	if (p != NULL)
		munmap(p, m.size);
	if (rv == -1) {
		close(j->fd);
		free(j);
	} else
		*jp = j;
	return (rv);
}

static int
pwrite_all(int fd, const uint8_t *buf, size_t len, off_t off)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = pwrite(fd, buf, len, off)) == -1) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		if (n == 0) {
			errno = EIO;
			return (-1);
		}
		buf += n;
		len -= n;
		off += n;
	}
	return (0);
}

/* Who hears how long each append's fdatasync took (metrics), or NULL. */
static void	(*fsync_observer)(uint64_t);

void
journal_fsync_observer(void (*fn)(uint64_t))
{
	fsync_observer = fn;
}

/* fdatasync(2), timed for the observer. */
static int
journal_sync(int fd)
{
	struct timespec	 a, b;
	int		 rc;

	clock_gettime(CLOCK_MONOTONIC, &a);
	rc = fdatasync(fd);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (fsync_observer != NULL && rc == 0)
		fsync_observer((uint64_t)(b.tv_sec - a.tv_sec) * 1000000 +
		    (b.tv_nsec - a.tv_nsec) / 1000);
	return (rc);
}

/* Undo a failed append; the caller's errno survives. */
static void
rollback(struct journal *j)
{
	int	 saved = errno;

	if (ftruncate(j->fd, j->end) == -1 || fdatasync(j->fd) == -1) {
		log_warn("journal: cannot cut back to offset %lld, "
		    "refusing further appends", (long long)j->end);
		j->broken = 1;
	}
	/* The cut took the preallocated blocks with it. */
	j->reserved_to = j->end;
	reserve_fill(j, 0);
	errno = saved;
}

/* The batch's size, or 0 if any payload is not acceptable. */
static size_t
batch_size(const struct iovec *iov, size_t n)
{
	size_t	 i, total = 0;

	if (n == 0 || n > JOURNAL_BATCH_MAX)
		return (0);
	for (i = 0; i < n; i++) {
		if (iov[i].iov_len == 0 ||
		    iov[i].iov_len > JOURNAL_PAYLOAD_MAX ||
		    memchr(iov[i].iov_base, '\0', iov[i].iov_len) != NULL)
			return (0);
		total += JOURNAL_REC_OVERHEAD + iov[i].iov_len;
	}
	return (total > JOURNAL_WRITE_MAX ? 0 : total);
}

/* Lay out the records of a batch in buf, chained from j's head. */
static int
build_batch(const struct journal *j, const struct iovec *iov, size_t n,
    uint8_t *buf, uint8_t head[JOURNAL_TRAILER_LEN])
{
	size_t	 i, off = 0, len;

	memcpy(head, j->head, JOURNAL_TRAILER_LEN);
	for (i = 0; i < n; i++) {
		len = iov[i].iov_len;
		put_header(buf + off, (uint32_t)len, j->seq + 1 + i);
		memcpy(buf + off + JOURNAL_HDR_LEN, iov[i].iov_base, len);
		if (trailer_of(head, buf + off, JOURNAL_HDR_LEN + len,
		    buf + off + JOURNAL_HDR_LEN + len) == -1)
			return (-1);
		memcpy(head, buf + off + JOURNAL_HDR_LEN + len,
		    JOURNAL_TRAILER_LEN);
		off += JOURNAL_REC_OVERHEAD + len;
	}
	return (0);
}

/*
 * A test build's full disk on demand: while the file the environment's
 * FACTORY_TEST_JOURNAL_FULL names exists, every append fails as a full
 * file system fails it, before a byte is written (a real full tmpfs
 * still takes a record in the journal's last, partly used page).
 */
static int
journal_test_full(void)
{
#ifdef FACTORY_TESTBUILD
	const char	*f = getenv("FACTORY_TEST_JOURNAL_FULL");

	return (f != NULL && *f != '\0' && access(f, F_OK) == 0);
#else
	return (0);
#endif
}

int
journal_append_many(struct journal *j, const struct iovec *iov, size_t n,
    uint64_t *first_seq_out)
{
	uint8_t	*buf, head[JOURNAL_TRAILER_LEN];
	size_t	 total;
	int	 saved;

	if (j->broken) {
		errno = EIO;
		return (-1);
	}
	if ((total = batch_size(iov, n)) == 0) {
		errno = EINVAL;
		return (-1);
	}
	if (journal_test_full()) {
		errno = ENOSPC;
		return (-1);
	}
	if ((buf = malloc(total)) == NULL)
		return (-1);
	if (build_batch(j, iov, n, buf, head) == -1) {
		free(buf);
		errno = EIO;
		return (-1);
	}
	if (pwrite_all(j->fd, buf, total, j->end) == -1 ||
	    journal_sync(j->fd) == -1) {
		saved = errno;
		free(buf);
		errno = saved;
		rollback(j);
		return (-1);
	}
	free(buf);
	if (first_seq_out != NULL)
		*first_seq_out = j->seq + 1;
	j->end += total;
	j->seq += n;
	memcpy(j->head, head, sizeof(j->head));
	reserve_fill(j, 0);
	return (0);
}

int
journal_append(struct journal *j, const char *payload, size_t len,
    uint64_t *seq_out)
{
	struct iovec	 iov;

	iov.iov_base = (void *)payload;
	iov.iov_len = len;
	return (journal_append_many(j, &iov, 1, seq_out));
}

uint64_t
journal_seq(const struct journal *j)
{
	return (j->seq);
}

void
journal_head_hash(const struct journal *j, char out[65])
{
	hex_encode(j->head, sizeof(j->head), out);
}

off_t
journal_size(const struct journal *j)
{
	return (j->end);
}

void
journal_close(struct journal *j)
{
	if (j == NULL)
		return;
	close(j->fd);
	free(j);
}
