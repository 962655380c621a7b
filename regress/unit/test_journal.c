/*
 * journal.c: append and replay, torn tails cut at every byte, middle
 * corruption refused, a full disk and a file size limit leave the file
 * as it was, and the fsync cost is measured.
 */
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "crypto.h"
#include "log.h"
#include "../../supervisord-factory/journal.h"

#define NREC	100

static char	 tmpdir[64];
static char	 mnt[128];
static int	 mounted;

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return (remove(path));
}

/* On the real disk, not a tmpfs: the fsync cost is part of the test. */
static void
tmp_setup(void)
{
	strlcpy(tmpdir, "/var/tmp/test_journal.XXXXXX", sizeof(tmpdir));
	if (mkdtemp(tmpdir) == NULL)
		abort();
	log_init(1, LOG_DAEMON);
}

static void
tmp_teardown(void)
{
	if (mounted)
		umount2(mnt, MNT_DETACH);
	mounted = 0;
	nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static void
tmppath(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
	unlink(buf);
}

/* Payload i: JSON of varying length, as the parent would write. */
static size_t
payload(char *buf, size_t len, int i)
{
	int	 n;

	n = snprintf(buf, len, "{\"t\":\"submitted\","
	    "\"attempt\":\"a-20261129-%04d\",\"pad\":\"%.*s\"}", i, i % 37,
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	return ((size_t)n);
}

struct seen {
	uint64_t	 n;
	int		 stop_at;	/* 0: never */
};

/* Records must come in order, numbered from 1, with our payloads. */
static int
check_cb(void *arg, uint64_t seq, const char *p, size_t len)
{
	struct seen	*s = arg;
	char		 want[256];
	size_t		 wlen;

	s->n++;
	ck_assert_uint_eq(seq, s->n);
	wlen = payload(want, sizeof(want), (int)seq - 1);
	ck_assert_uint_eq(len, wlen);
	ck_assert_mem_eq(p, want, len);
	ck_assert_int_eq(p[len], '\0');
	if (s->stop_at != 0 && seq == (uint64_t)s->stop_at)
		return (-1);
	return (0);
}

/* A journal of n records at path; the offsets of each record in offs. */
static void
make_journal(const char *path, int n, off_t *offs)
{
	struct journal	*j;
	char		 err[256], buf[256];
	uint64_t	 seq;
	size_t		 len;
	int		 i;

	ck_assert_msg(journal_open(path, &j, NULL, NULL, err, sizeof(err)) == 0,
	    "%s", err);
	for (i = 0; i < n; i++) {
		if (offs != NULL)
			offs[i] = journal_size(j);
		len = payload(buf, sizeof(buf), i);
		ck_assert_int_eq(journal_append(j, buf, len, &seq), 0);
		ck_assert_uint_eq(seq, (uint64_t)i + 1);
	}
	if (offs != NULL)
		offs[n] = journal_size(j);
	journal_close(j);
}

static char *
slurp(const char *path, size_t *lenp)
{
	struct stat	 st;
	char		*buf;
	int		 fd;

	ck_assert_int_ne(fd = open(path, O_RDONLY), -1);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_ptr_nonnull(buf = malloc(st.st_size + 1));
	ck_assert_int_eq(read(fd, buf, st.st_size), st.st_size);
	buf[st.st_size] = '\0';
	close(fd);
	*lenp = st.st_size;
	return (buf);
}

static void
spit(const char *path, const char *buf, size_t len)
{
	int	 fd;

	ck_assert_int_ne(fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600),
	    -1);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* Send log lines (stderr) to a file, emptied. */
static void
log_to(const char *path)
{
	int	 fd;

	ck_assert_int_ne(fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600),
	    -1);
	ck_assert_int_ne(dup2(fd, STDERR_FILENO), -1);
	close(fd);
}

static off_t
file_size(const char *path)
{
	struct stat	 st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (st.st_size);
}

/* The file is byte for byte what it was. */
static void
assert_unchanged(const char *path, const char *before, size_t len)
{
	char	*now;
	size_t	 nowlen;

	now = slurp(path, &nowlen);
	ck_assert_uint_eq(nowlen, len);
	ck_assert_int_eq(memcmp(now, before, len), 0);
	free(now);
}

START_TEST(t_roundtrip)
{
	struct journal	*j;
	struct seen	 s = { 0, 0 };
	char		 path[128], err[256], head[65], head2[65], buf[256];
	struct stat	 st;
	uint64_t	 seq;

	tmppath(path, sizeof(path), "journal");
	umask(022);
	ck_assert_int_eq(journal_open(path, &j, check_cb, &s, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(s.n, 0);
	ck_assert_uint_eq(journal_seq(j), 0);
	journal_head_hash(j, head);
	ck_assert_str_eq(head, "0000000000000000000000000000000000000000000000"
	    "000000000000000000");
	journal_close(j);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(st.st_size, 0);

	make_journal(path, NREC, NULL);
	ck_assert_int_eq(journal_open(path, &j, check_cb, &s, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(s.n, NREC);
	ck_assert_uint_eq(journal_seq(j), NREC);
	ck_assert_int_eq(journal_size(j), file_size(path));
	journal_head_hash(j, head);
	ck_assert_str_ne(head, "0000000000000000000000000000000000000000000000"
	    "000000000000000000");

	/* The chain goes on where it stopped. */
	ck_assert_int_eq(journal_append(j, buf, payload(buf, sizeof(buf), NREC),
	    &seq), 0);
	ck_assert_uint_eq(seq, NREC + 1);
	journal_head_hash(j, head);
	journal_close(j);
	s.n = 0;
	ck_assert_int_eq(journal_open(path, &j, check_cb, &s, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(s.n, NREC + 1);
	journal_head_hash(j, head2);
	ck_assert_str_eq(head, head2);
	journal_close(j);
}
END_TEST

START_TEST(t_batch)
{
	struct journal	*j;
	struct seen	 s = { 0, 0 };
	struct iovec	 iov[40];
	char		 path[128], err[256], bufs[40][256];
	uint64_t	 first;
	int		 i;

	tmppath(path, sizeof(path), "journal.batch");
	ck_assert_int_eq(journal_open(path, &j, NULL, NULL, err,
	    sizeof(err)), 0);
	for (i = 0; i < 40; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = payload(bufs[i], sizeof(bufs[i]), i);
	}
	ck_assert_int_eq(journal_append_many(j, iov, 8, &first), 0);
	ck_assert_uint_eq(first, 1);
	ck_assert_int_eq(journal_append_many(j, iov + 8, 32, &first), 0);
	ck_assert_uint_eq(first, 9);
	ck_assert_uint_eq(journal_seq(j), 40);

	/* Refused whole: empty, too long, or holding a NUL. */
	ck_assert_int_eq(journal_append(j, "", 0, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(journal_append(j, "{\"a\":\0}", 7, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(journal_append_many(j, iov, 0, NULL), -1);
	iov[3].iov_len = JOURNAL_PAYLOAD_MAX + 1;
	ck_assert_int_eq(journal_append_many(j, iov, 5, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(journal_seq(j), 40);
	ck_assert_int_eq(journal_size(j), file_size(path));
	journal_close(j);

	ck_assert_int_eq(journal_open(path, &j, check_cb, &s, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(s.n, 40);
	journal_close(j);
}
END_TEST

START_TEST(t_torn_tail)
{
	struct journal	*j;
	struct seen	 s;
	off_t		 offs[NREC + 1], cut, start, end;
	char		 path[128], logp[128], err[256], want[128], buf[256];
	char		*orig, *log;
	size_t		 len, loglen;

	tmppath(path, sizeof(path), "journal.torn");
	tmppath(logp, sizeof(logp), "torn.log");
	make_journal(path, NREC, offs);
	orig = slurp(path, &len);
	start = offs[NREC - 1];
	end = offs[NREC];
	ck_assert_int_eq(end, (off_t)len);

	for (cut = start; cut <= end; cut++) {
		spit(path, orig, cut);
		log_to(logp);
		memset(&s, 0, sizeof(s));
		ck_assert_msg(journal_open(path, &j, check_cb, &s, err,
		    sizeof(err)) == 0, "cut %lld: %s", (long long)cut, err);
		ck_assert_uint_eq(s.n, cut == end ? NREC : NREC - 1);
		ck_assert_uint_eq(journal_seq(j), s.n);
		ck_assert_int_eq(file_size(path), cut == end ? end : start);
		log = slurp(logp, &loglen);
		if (cut == start || cut == end)
			ck_assert_uint_eq(loglen, 0);
		else {
			snprintf(want, sizeof(want), "journal: cut torn tail "
			    "at offset %lld (%lld bytes)", (long long)start,
			    (long long)(cut - start));
			ck_assert_msg(strstr(log, want) != NULL,
			    "cut %lld: log \"%s\"", (long long)cut, log);
		}
		free(log);

		/*
		 * The journal goes on from the last good record, and the
		 * record written again is byte for byte the lost one.
		 */
		if (cut != end) {
			ck_assert_int_eq(journal_append(j, buf, payload(buf,
			    sizeof(buf), NREC - 1), NULL), 0);
			assert_unchanged(path, orig, len);
		}
		journal_close(j);
	}
	free(orig);
}
END_TEST

START_TEST(t_garbage_tail)
{
	struct journal	*j;
	struct seen	 s = { 0, 0 };
	off_t		 offs[11];
	char		 path[128], logp[128], err[256], *orig, *buf, *log;
	size_t		 len, loglen, i;

	tmppath(path, sizeof(path), "journal.garbage");
	tmppath(logp, sizeof(logp), "garbage.log");
	make_journal(path, 10, offs);
	orig = slurp(path, &len);
	ck_assert_ptr_nonnull(buf = calloc(1, len + 4096));
	memcpy(buf, orig, len);

	/* Zeros, as a crash may leave on a filesystem without a journal. */
	spit(path, buf, len + 4096);
	log_to(logp);
	ck_assert_int_eq(journal_open(path, &j, check_cb, &s, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(s.n, 10);
	journal_close(j);
	log = slurp(logp, &loglen);
	ck_assert_ptr_nonnull(strstr(log, "(4096 bytes)"));
	free(log);

	/* A copy of the last record: self-consistent, but chained wrong. */
	memcpy(buf + len, orig + offs[9], offs[10] - offs[9]);
	spit(path, buf, len + offs[10] - offs[9]);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(journal_open(path, &j, check_cb, &s, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(s.n, 10);
	ck_assert_int_eq(file_size(path), (off_t)len);
	journal_close(j);

	/* Random bytes. */
	for (i = 0; i < 4096; i++)
		buf[len + i] = (char)(random() & 0xff);
	spit(path, buf, len + 4096);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(journal_open(path, &j, check_cb, &s, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(s.n, 10);
	journal_close(j);
	free(buf);
	free(orig);
}
END_TEST

START_TEST(t_middle_corrupt)
{
	static const struct {
		const char	*what;
		int		 where;	/* in the record; < 0: from its end */
	} flips[] = {
		{ "magic", 1 }, { "length", 4 }, { "length high", 6 },
		{ "seq", 8 }, { "payload", 20 }, { "trailer", -1 },
		{ "trailer start", -32 },
	};
	struct journal	*j;
	off_t		 offs[NREC + 1], rec, at;
	char		 path[128], logp[128], err[256], want[128], *orig, *now;
	size_t		 len, nowlen, i;
	int		 victims[] = { NREC / 2, 0, NREC - 2 }, v;

	tmppath(path, sizeof(path), "journal.middle");
	make_journal(path, NREC, offs);
	orig = slurp(path, &len);
	for (v = 0; v < 3; v++) {
		rec = offs[victims[v]];
		for (i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
			at = flips[i].where >= 0 ? rec + flips[i].where :
			    offs[victims[v] + 1] + flips[i].where;
			orig[at] ^= 0x10;
			spit(path, orig, len);
			orig[at] ^= 0x10;
			ck_assert_msg(journal_open(path, &j, NULL, NULL, err,
			    sizeof(err)) == -1, "record %d %s: opened",
			    victims[v], flips[i].what);
			snprintf(want, sizeof(want), "corrupt record at offset "
			    "%lld (", (long long)rec);
			ck_assert_msg(strstr(err, want) != NULL,
			    "record %d %s: %s", victims[v], flips[i].what, err);
			/* Refused, and left alone for a person to look at. */
			now = slurp(path, &nowlen);
			ck_assert_uint_eq(nowlen, len);
			ck_assert_int_eq(memcmp(now, orig, at), 0);
			free(now);
		}
	}

	/* The same flip in the last record is a torn tail. */
	tmppath(logp, sizeof(logp), "middle.log");
	log_to(logp);
	at = offs[NREC - 1] + 20;
	orig[at] ^= 0x10;
	spit(path, orig, len);
	ck_assert_int_eq(journal_open(path, &j, NULL, NULL, err, sizeof(err)),
	    0);
	ck_assert_uint_eq(journal_seq(j), NREC - 1);
	journal_close(j);
	now = slurp(logp, &nowlen);
	snprintf(want, sizeof(want), "journal: cut torn tail at offset %lld "
	    "(%lld bytes): bad checksum\n", (long long)offs[NREC - 1],
	    (long long)(offs[NREC] - offs[NREC - 1]));
	ck_assert_str_eq(now, want);
	free(now);
	free(orig);
}
END_TEST

START_TEST(t_replay_stops)
{
	struct journal	*j;
	struct seen	 s = { 0, 5 };
	char		 path[128], err[256];

	tmppath(path, sizeof(path), "journal.stop");
	make_journal(path, 10, NULL);
	ck_assert_int_eq(journal_open(path, &j, check_cb, &s, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "replay stopped at record 5"));
	ck_assert_uint_eq(s.n, 5);
}
END_TEST

START_TEST(t_locked)
{
	struct journal	*j, *j2;
	char		 path[128], err[256];

	tmppath(path, sizeof(path), "journal.lock");
	ck_assert_int_eq(journal_open(path, &j, NULL, NULL, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(journal_open(path, &j2, NULL, NULL, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "locked by another process"));
	journal_close(j);
	ck_assert_int_eq(journal_open(path, &j2, NULL, NULL, err,
	    sizeof(err)), 0);
	journal_close(j2);

	/* Not a regular file */
	ck_assert_int_eq(journal_open(tmpdir, &j, NULL, NULL, err,
	    sizeof(err)), -1);
}
END_TEST

/* Without check: its message file is under the same size limit. */
static int
same_file(const char *path, const char *before, size_t len)
{
	char	 buf[16384];
	ssize_t	 n;
	int	 fd, same;

	if ((fd = open(path, O_RDONLY)) == -1)
		return (0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	same = n == (ssize_t)len && memcmp(buf, before, len) == 0;
	return (same);
}

START_TEST(t_fsize_limit)
{
	struct journal	*j;
	struct rlimit	 rl;
	struct iovec	 iov[3];
	struct seen	 s = { 0, 0 };
	char		 path[128], logp[128], err[256], big[600], buf[256];
	char		*before, *log, head[65], head2[65];
	size_t		 len, loglen;
	int		 i, rv1, err1, same1, rv2, err2, same2;
	uint64_t	 seq1;

	tmppath(path, sizeof(path), "journal.fsize");
	tmppath(logp, sizeof(logp), "fsize.log");
	make_journal(path, 10, NULL);
	before = slurp(path, &len);
	ck_assert_uint_lt(len, 16384);
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(journal_open(path, &j, NULL, NULL, err,
	    sizeof(err)), 0);
	journal_head_hash(j, head);
	memset(big, 'x', sizeof(big));
	big[0] = '"';
	big[sizeof(big) - 1] = '"';
	for (i = 0; i < 3; i++) {
		iov[i].iov_base = big;
		iov[i].iov_len = 40;
	}
	/*
	 * Room for 100 more bytes: a 600-byte record is cut short, and so
	 * is a batch of three short ones.  No ck_assert until the limit
	 * is lifted: check's own message file would hit it too.
	 */
	rl.rlim_cur = len + 100;
	rl.rlim_max = RLIM_INFINITY;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	rv1 = journal_append(j, big, sizeof(big), NULL);
	err1 = errno;
	same1 = same_file(path, before, len);
	seq1 = journal_seq(j);
	rv2 = journal_append_many(j, iov, 3, NULL);
	err2 = errno;
	same2 = same_file(path, before, len);
	rl.rlim_cur = RLIM_INFINITY;
	setrlimit(RLIMIT_FSIZE, &rl);

	ck_assert_int_eq(rv1, -1);
	ck_assert_int_eq(err1, EFBIG);
	ck_assert(same1);
	ck_assert_uint_eq(seq1, 10);
	ck_assert_int_eq(rv2, -1);
	ck_assert_int_eq(err2, EFBIG);
	ck_assert(same2);
	journal_head_hash(j, head2);
	ck_assert_str_eq(head, head2);

	/* With room again, the journal goes on, and reopens cleanly. */
	ck_assert_int_eq(journal_append(j, buf, payload(buf, sizeof(buf), 10),
	    NULL), 0);
	journal_close(j);
	log_to(logp);
	ck_assert_int_eq(journal_open(path, &j, check_cb, &s, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(s.n, 11);
	journal_close(j);
	log = slurp(logp, &loglen);
	ck_assert_uint_eq(loglen, 0);
	free(log);
	free(before);
}
END_TEST

static void
tmpfs_mount(const char *opts)
{
	tmp_setup();
	snprintf(mnt, sizeof(mnt), "%s/mnt", tmpdir);
	if (mkdir(mnt, 0700) == -1)
		abort();
	if (mount("tmpfs", mnt, "tmpfs", MS_NOSUID | MS_NODEV, opts) == 0)
		mounted = 1;
}

static void
tmpfs_setup(void)
{
	tmpfs_mount("size=64k");
}

static void
tmpfs1m_setup(void)
{
	tmpfs_mount("size=1m");
}

START_TEST(t_enospc)
{
	struct journal	*j;
	struct seen	 s = { 0, 0 };
	char		 path[160], logp[128], err[256], buf[1100], *before;
	char		*log;
	uint64_t	 acked = 0, seq;
	size_t		 len, loglen;
	int		 n;

	if (!mounted) {
		/* Only root can mount the small filesystem. */
		ck_assert_int_ne(geteuid(), 0);
		fprintf(stdout, "t_enospc: skipped, cannot mount tmpfs\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/journal", mnt);
	tmppath(logp, sizeof(logp), "enospc.log");
	ck_assert_int_eq(journal_open(path, &j, NULL, NULL, err,
	    sizeof(err)), 0);
	/* Fill the 64k filesystem with ~1k records until it refuses. */
	for (n = 0; n < 1000; n++) {
		len = snprintf(buf, sizeof(buf), "{\"n\":%d,\"pad\":\"%0*d\"}",
		    n, 1000, 0);
		if (journal_append(j, buf, len, &seq) == -1)
			break;
		acked = seq;
	}
	ck_assert_int_lt(n, 1000);
	ck_assert_int_eq(errno, ENOSPC);
	ck_assert_uint_gt(acked, 10);
	ck_assert_uint_eq(journal_seq(j), acked);
	ck_assert_int_eq(file_size(path), journal_size(j));
	before = slurp(path, &len);
	/* Refused again, still nothing half-written. */
	ck_assert_int_eq(journal_append(j, buf, strlen(buf), NULL), -1);
	ck_assert_int_eq(errno, ENOSPC);
	assert_unchanged(path, before, len);
	journal_close(j);

	log_to(logp);
	ck_assert_int_eq(journal_open(path, &j, NULL, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(journal_seq(j), acked);
	/* Too small for a reserve: it opens, and says so, once. */
	ck_assert_int_eq(journal_reserve_held(j), 0);
	journal_close(j);
	log = slurp(logp, &loglen);
	ck_assert_ptr_nonnull(strstr(log, "cannot keep 256 KiB in reserve"));
	ck_assert_ptr_null(strstr(log, "cut"));
	ck_assert_ptr_null(strchr(strchr(log, '\n') + 1, '\n'));
	free(log);
	free(before);
}
END_TEST

static int
count_cb(void *arg, uint64_t seq, const char *p, size_t len)
{
	struct seen	*s = arg;

	s->n++;
	ck_assert_uint_eq(seq, s->n);
	return (0);
}

/* Fill the file system from outside, as a runaway writer would. */
static void
fill(const char *path)
{
	char	 blk[4096];
	int	 fd;

	memset(blk, 'f', sizeof(blk));
	ck_assert_int_ne(fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600),
	    -1);
	while (write(fd, blk, sizeof(blk)) > 0)
		;
	ck_assert_int_eq(errno, ENOSPC);
	close(fd);
}

/*
 * The reserve: with the file system full, the records that end the
 * attempts still land (about 200 of 1 KiB); new work is refused while
 * the reserve is short, until space returns; a restart keeps it.
 */
START_TEST(t_reserve)
{
	struct journal	*j;
	struct seen	 s = { 0, 0 };
	char		 path[160], filler[160], err[256], buf[1100];
	uint64_t	 seq = 0;
	size_t		 len;
	int		 n;

	if (!mounted) {
		ck_assert_int_ne(geteuid(), 0);
		fprintf(stdout, "t_reserve: skipped, cannot mount tmpfs\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/journal", mnt);
	snprintf(filler, sizeof(filler), "%s/fill", mnt);
	ck_assert_int_eq(journal_open(path, &j, NULL, NULL, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(journal_reserve_held(j), 1);
	fill(filler);
	for (n = 0; n < 200; n++) {
		len = snprintf(buf, sizeof(buf), "{\"n\":%d,\"pad\":\"%0*d\"}",
		    n, 1000, 0);
		ck_assert_msg(journal_append(j, buf, len, &seq) == 0,
		    "record %d on a full disk: %s", n, strerror(errno));
	}
	ck_assert_uint_eq(seq, 200);
	ck_assert_int_eq(journal_reserve_held(j), 0);
	ck_assert_int_eq(file_size(path), journal_size(j));
	/* A restart on the full disk: it opens, with what is left. */
	journal_close(j);
	ck_assert_int_eq(journal_open(path, &j, count_cb, &s, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(s.n, 200);
	ck_assert_int_eq(journal_reserve_held(j), 0);
	/* Space again: the reserve is whole again. */
	ck_assert_int_eq(unlink(filler), 0);
	ck_assert_int_eq(journal_reserve_held(j), 1);
	ck_assert_int_eq(journal_append(j, buf, len, &seq), 0);
	ck_assert_uint_eq(seq, 201);
	journal_close(j);
}
END_TEST

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec + ts.tv_nsec / 1e9);
}

/* Informational: never asserted, the machine decides. */
START_TEST(t_rate)
{
	struct journal	*j;
	struct iovec	 iov[32];
	char		 path[128], err[256], buf[256];
	double		 t0, one, batch;
	int		 i, k;

	tmppath(path, sizeof(path), "journal.rate");
	memset(buf, 'x', sizeof(buf));
	buf[0] = '"';
	buf[sizeof(buf) - 1] = '"';
	ck_assert_int_eq(journal_open(path, &j, NULL, NULL, err,
	    sizeof(err)), 0);
	t0 = now();
	for (i = 0; i < 2000; i++)
		ck_assert_int_eq(journal_append(j, buf, sizeof(buf), NULL), 0);
	one = 2000 / (now() - t0);
	for (k = 0; k < 32; k++) {
		iov[k].iov_base = buf;
		iov[k].iov_len = sizeof(buf);
	}
	t0 = now();
	for (i = 0; i < 200; i++)
		ck_assert_int_eq(journal_append_many(j, iov, 32, NULL), 0);
	batch = 200 * 32 / (now() - t0);
	journal_close(j);
	printf("journal: %.0f appends/s (256 bytes, one fdatasync each); "
	    "%.0f records/s in batches of 32\n", one, batch);
	fflush(stdout);
}
END_TEST

static Suite *
journal_suite(void)
{
	Suite	*s = suite_create("journal");
	TCase	*tc = tcase_create("core");
	TCase	*tf = tcase_create("full");
	TCase	*tr;

	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_add_test(tc, t_roundtrip);
	tcase_add_test(tc, t_batch);
	tcase_add_test(tc, t_torn_tail);
	tcase_add_test(tc, t_garbage_tail);
	tcase_add_test(tc, t_middle_corrupt);
	tcase_add_test(tc, t_replay_stops);
	tcase_add_test(tc, t_locked);
	tcase_add_test(tc, t_fsize_limit);
	tcase_add_test(tc, t_rate);
	suite_add_tcase(s, tc);

	tcase_add_unchecked_fixture(tf, tmpfs_setup, tmp_teardown);
	tcase_add_test(tf, t_enospc);
	suite_add_tcase(s, tf);

	tr = tcase_create("reserve");
	tcase_add_unchecked_fixture(tr, tmpfs1m_setup, tmp_teardown);
	tcase_add_test(tr, t_reserve);
	suite_add_tcase(s, tr);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(journal_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
