/*
 * The parent's journal: one append-only, hash-chained, fsynced file
 * (state-dir/journal).  A record is acknowledged once journal_append()
 * returned 0; the parent acts only after that.
 *
 * Record layout, integers little-endian:
 *
 *	offset 0	"FJR1"
 *	offset 4	uint32 payload length (1 .. JOURNAL_PAYLOAD_MAX)
 *	offset 8	uint64 sequence number (1, 2, 3, ...)
 *	offset 16	payload (a JSON text; its contents are the caller's)
 *	then		trailer, 32 bytes: sha256(previous trailer ||
 *			header || payload); record 1's previous trailer is
 *			32 zero bytes
 *
 * Each record is thus checksummed and chained to all before it.
 */
#ifndef FACTORYD_JOURNAL_H
#define FACTORYD_JOURNAL_H

#include <sys/types.h>
#include <sys/uio.h>
#include <stddef.h>
#include <stdint.h>

#define JOURNAL_MAGIC		"FJR1"
#define JOURNAL_HDR_LEN		16
#define JOURNAL_TRAILER_LEN	32
#define JOURNAL_PAYLOAD_MAX	(1024 * 1024)
#define JOURNAL_BATCH_MAX	256	/* records of one batch */
/* Kept allocated past the end, for the records that end attempts. */
#define JOURNAL_RESERVE		(256 * 1024)

struct journal;

/*
 * Called for each record in order while the journal opens.  payload is
 * NUL-terminated (the NUL is not counted in len) and valid only during
 * the call.  A non-zero return stops the replay and fails the open.
 */
typedef int (*journal_replay_cb)(void *, uint64_t, const char *, size_t);

/* journal.c */
/*
 * Open or create (mode 0600, directory fsynced) the journal at path,
 * lock it against a second opener, verify every record, then replay
 * them through cb (may be NULL), then allocate JOURNAL_RESERVE bytes
 * past its end (not an error if the disk is full: see
 * journal_reserve_held()).  A torn or corrupt tail (anything
 * after the last good record with no good record behind it) is cut
 * off and logged.  A bad record followed by a good one is corruption
 * of acknowledged records: the open fails, naming the offset.
 */
int	 journal_open(const char *, struct journal **, journal_replay_cb,
	    void *, char *, size_t);
/*
 * Append one record and fdatasync it.  On any failure (ENOSPC, EFBIG,
 * EIO, ...) the file is cut back to where it was and -1 is returned
 * with errno set; the record does not exist.  seq_out may be NULL.
 */
int	 journal_append(struct journal *, const char *, size_t, uint64_t *);
/*
 * Group commit: n records (1 .. JOURNAL_BATCH_MAX), one write, one
 * fdatasync, all or nothing as above.  *first_seq_out (may be NULL)
 * is the first record's number; the others follow it.
 */
int	 journal_append_many(struct journal *, const struct iovec *, size_t,
	    uint64_t *);
/*
 * Is the whole reserve allocated (trying to allocate what it lacks
 * first)?
 * While it is not, the caller accepts no new work.  1 also when the
 * file system cannot preallocate at all (logged once).
 */
int	 journal_reserve_held(struct journal *);
size_t	 journal_reserve_size(const struct journal *);
/* The last record's number, 0 for an empty journal. */
uint64_t journal_seq(const struct journal *);
/* The last record's trailer in hex (64 zeros for an empty journal). */
void	 journal_head_hash(const struct journal *, char [65]);
/* The size of the valid journal in bytes. */
off_t	 journal_size(const struct journal *);
void	 journal_close(struct journal *);
/* fn hears each append's fdatasync time in microseconds; NULL: none. */
void	 journal_fsync_observer(void (*)(uint64_t));

#endif /* FACTORYD_JOURNAL_H */
