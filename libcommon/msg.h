/*
 * The payloads of the messages between the parent and the worker, the
 * verifier and the publisher: one C struct per message, one table per
 * struct in msg.c, and one encoder and one decoder driven by it, so
 * what is composed is exactly what is read.
 *
 * On the wire (wire.h) a payload is a kind byte, then every field of
 * the table in its order: a number in network byte order (n32 or n64),
 * a boolean as one byte 0 or 1, a string as an n32 length and that
 * many bytes, a list as an n32 count and its entries, an optional
 * string or object behind a presence byte (an optional fixed string
 * is empty when absent).  The decoder is strict: the kind byte is the
 * message's, every length and count is within its bound before
 * anything is read, no string holds a NUL, every number is within its
 * range, no byte is left over, and each string is of its class (an
 * attempt id, 40 or 64 lower-case hex digits, an absolute path, the
 * suite's encoding of untrusted bytes, esc.h, UTF-8 for the parent's
 * own text ...).  A refusal names the message and the field.  Every
 * string a child sends is in that encoding or a stricter class, so it
 * is printable ASCII wherever the parent puts it.  A parent that reads
 * a malformed message kills the child that sent it; a child that
 * reads one from the parent exits (fatalx).  No JSON parser reads a
 * payload.
 *
 * The decoders are pure functions of (bytes, length): no state, no
 * I/O, for fuzzing.  Fixed-size strings are NUL-terminated in their
 * struct; lists and long strings are malloc'd, released by msg_free().
 */
#ifndef FACTORY_MSG_H
#define FACTORY_MSG_H

#include <sys/types.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "factory.h"

#define MSG_HEX40	(40 + 1)
#define MSG_HEX64	(64 + 1)
#define MSG_DIGEST	(7 + 64 + 1)	/* "sha256:<hex>" */
#define MSG_REF_MAX	256		/* a baseline as the manifest has it */
#define MSG_TITLE_MAX	256
#define MSG_ESC_MAX	(16 * 1024)	/* an escaped reason, path, record */
#define MSG_LIST_MAX	1024		/* entries of a list */
#define MSG_HELLO_MAX	(32 * 1024)	/* HELLO text, NUL included */
#define MSG_ERRLEN	256		/* what a decoder says is wrong */

enum msg_kind {
	MSG_RESOLVE,		/* parent -> worker, IMSG_RESOLVE */
	MSG_RESOLVED,		/* worker -> parent, IMSG_RESOLVE */
	MSG_PROVISION,		/* parent -> worker */
	MSG_READY,		/* worker -> parent */
	MSG_COLLECT,		/* parent -> worker */
	MSG_RESULT,		/* worker -> parent */
	MSG_ERROR,		/* worker, verifier, publisher -> parent */
	MSG_VERIFY,		/* parent -> verifier, with the bundle fd */
	MSG_VALIDATE_REQ,	/* verifier -> parent */
	MSG_VALIDATE_DONE,	/* parent -> verifier */
	MSG_VERDICT,		/* verifier -> parent */
	MSG_PUBLISH,		/* parent -> publisher, with the bundle fd */
	MSG_PUBLISHED,		/* publisher -> parent */
	MSG_DIFF,		/* parent -> worker, IMSG_DIFF: a result's diff */
	MSG_DIFFED,		/* worker -> parent, IMSG_DIFF */
	MSG_PCHECK,		/* parent -> verifier, IMSG_PRISTINE_CHECK */
	MSG_PCHECKED,		/* verifier -> parent, IMSG_PRISTINE_CHECK */
	MSG_LATE,		/* publisher -> parent, IMSG_PUBLISH_LATE */
	MSG_KIND_MAX
};

/* Resolve a manifest's baseline; req pairs the answer with the ask. */
struct msg_resolve {
	uint32_t	 req;
	char		 repo[PATH_MAX];	/* absolute */
	char		 ref[MSG_REF_MAX];
};

/* Exactly one of oid and error is set (not empty). */
struct msg_resolved {
	uint32_t	 req;
	char		 oid[MSG_HEX40];
	char		 error[MSG_ESC_MAX];	/* escaped */
};

struct msg_provision {
	char		 id[ATTEMPT_ID_MAX];
	uint64_t	 epoch;
	char		 repo[PATH_MAX];
	char		 baseline[MSG_HEX40];
	char		 dir[PATH_MAX];
	char		 pristine[PATH_MAX];	/* "": already checked out */
	char		 lower[PATH_MAX];	/* the pristine checkout */
};

struct msg_ready {
	char		 id[ATTEMPT_ID_MAX];
	uint64_t	 epoch;
};

struct msg_collect {
	char		 id[ATTEMPT_ID_MAX];
	uint64_t	 epoch;
	char		 repo[PATH_MAX];
	char		 baseline[MSG_HEX40];
	char		 dir[PATH_MAX];
	char		**scope;		/* nscope globs */
	size_t		 nscope;
	char		 title[MSG_TITLE_MAX];
	char		 digest[MSG_DIGEST];
	uint64_t	 tree_limit;
	char		 bundle[PATH_MAX];
};

struct msg_change {
	char		 status[2];		/* "A", "M", "D" or "T" */
	char		*path;			/* escaped */
};

/*
 * What collect found.  The lists hold what fitted in one message, the
 * totals what there was: a result with rejects_total > 0 is rejected,
 * whatever is listed; one without has a commit, a tree and a bundle.
 */
struct msg_result {
	char		 id[ATTEMPT_ID_MAX];
	uint64_t	 epoch;
	char		 commit[MSG_HEX40];	/* "" when rejected */
	char		 tree[MSG_HEX40];
	char		 bundle_sha256[MSG_HEX64];
	uint64_t	 bundle_size;
	struct msg_change *changes;
	size_t		 nchanges;
	uint64_t	 changes_total;
	char		**rejects;		/* escaped "path: reason" */
	size_t		 nrejects;
	uint64_t	 rejects_total;
};

struct msg_error {
	char		 id[ATTEMPT_ID_MAX];
	char		 error[MSG_ESC_MAX];	/* escaped */
};

struct msg_verify {
	char		 id[ATTEMPT_ID_MAX];
	char		 repo[PATH_MAX];
	char		 baseline[MSG_HEX40];
	char		**scope;
	size_t		 nscope;
	char		 title[MSG_TITLE_MAX];
	char		 digest[MSG_DIGEST];
	char		 commit[MSG_HEX40];
	char		 bundle_sha256[MSG_HEX64];
	char		 dir[PATH_MAX];
	uint64_t	 seq;			/* of the next receipt */
	char		 prev[MSG_HEX64];
	uint64_t	 epoch;
	uint64_t	 wall_ms;
	/*
	 * The environment frozen at submission: "" (the host root) or the
	 * image's digest, its rootfs, the toolchain paths and digest.
	 */
	char		 image[MSG_DIGEST];
	char		 rootfs[PATH_MAX];
	char		**tools;
	size_t		 ntools;
	char		 toolchain[MSG_DIGEST];
	/*
	 * What the verification summary names: the payload digest of the
	 * parent's provenance, the isolation policy's digest.
	 */
	char		 provenance[MSG_DIGEST];
	char		 isolation[MSG_DIGEST];
};

struct msg_validate_req {
	char		 id[ATTEMPT_ID_MAX];
};

struct msg_validate_done {
	char		 id[ATTEMPT_ID_MAX];
	int64_t		 status;		/* wait status */
	int		 timedout;
	int		 passed;
	uint64_t	 seq;			/* of the verdict to come */
	char		 prev[MSG_HEX64];
	uint64_t	 epoch;
};

struct msg_verdict {
	char		 id[ATTEMPT_ID_MAX];
	char		*receipt;		/* a receipt line */
	/* DSSE envelope lines (attest.h), signed by the verifier. */
	char		*vsa;
	char		*test_result;		/* none without a run */
	/*
	 * The receipt's facts and signature, typed: the parent rebuilds
	 * the line from them (verdict_line(), receipt.h) and takes it
	 * only if it is the line the verifier signed, byte for byte.
	 */
	int		 accepted;
	char		 baseline[MSG_HEX40];
	char		 commit[MSG_HEX40];	/* empty: none resolved */
	char		 tree[MSG_HEX40];
	char		 bundle_sha256[MSG_HEX64];
	char		 manifest_digest[MSG_DIGEST];
	char		**findings;		/* escaped, the first listed */
	size_t		 nfindings;
	uint64_t	 findings_total;	/* all counted */
	int		 validated;		/* a validation ran */
	int64_t		 vstatus;
	int		 vpassed;
	int		 vtimedout;
	char		 env_image[MSG_DIGEST];	/* empty: host */
	char		 env_toolchain[MSG_DIGEST];
	char		 baseline_tree[MSG_HEX40];	/* empty: none */
	char		 pristine[16];		/* same, differs, unchecked */
	char		*reason;		/* rejected only */
	uint64_t	 epoch;			/* the receipt's */
	uint64_t	 time;			/* seconds since the epoch */
	char		 sig[89];		/* base64, BASE64_SIZE(64) */
};

struct msg_github {
	char		 api[256];
	char		 owner[128];
	char		 repo[128];
	uint64_t	 repository_id;
	char		 app_id[64];
	uint64_t	 installation_id;
	char		 key[PATH_MAX];
	char		 ca[PATH_MAX];
};

/*
 * A member of the cohort whose selection did not publish it: its branch
 * (at commit) and its pull request, if the forge holds them, go before
 * another member's pull request is opened (publisher.h).
 */
struct msg_superseded {
	char		 id[ATTEMPT_ID_MAX];
	char		 commit[MSG_HEX40];
};

struct msg_publish {
	char		 id[ATTEMPT_ID_MAX];
	char		 forge[8];		/* "local" or "github" */
	char		 repository[REPO_NAME_MAX];
	char		 remote[PATH_MAX];	/* forge local, else "" */
	char		 pulls[PATH_MAX];
	char		 title[MSG_TITLE_MAX];
	char		 base[MSG_REF_MAX];
	char		 commit[MSG_HEX40];
	char		*verdict;		/* the verdict receipt line */
	char		 verifier_pub[64];	/* base64 of the raw key */
	/*
	 * The digest of the frozen manifest the sender vouches for: the
	 * verdict's facts must name it (title and base come from it).
	 */
	char		 manifest_digest[MSG_DIGEST];
	char		**attest;		/* envelope lines, attest.h */
	size_t		 nattest;
	char		*summary;		/* the check run's text */
	/* A cohort's member: its cohort, and the others to supersede. */
	char		 cohort[COHORT_ID_MAX];	/* "": none */
	struct msg_superseded *supersede;	/* none, or a cohort's */
	size_t		 nsupersede;
	int		 has_github;		/* forge github: github set */
	struct msg_github github;
	/*
	 * boot_ms() past which the publisher must not begin it (a fleet
	 * claim's lease end, as the parent saw it when it sent): answered
	 * IMSG_PUBLISH_LATE, asked again while the lease holds.  0: none.
	 */
	uint64_t	 begin_by;
};

struct msg_published {
	char		 id[ATTEMPT_ID_MAX];
	char		 branch[512];		/* escaped */
	int64_t		 number;
	char		 record[MSG_ESC_MAX];	/* escaped path or URL */
	int		 reused;
};

/* msg.c */
/* "RESULT", for log lines. */
const char *msg_kind_name(enum msg_kind);
/* The size of the struct of a kind, for a caller that allocates. */
size_t	 msg_size(enum msg_kind);
/*
 * Decode len bytes into the kind's struct (zeroed first).  0, or -1
 * with a one-line reason naming the field in err; nothing to release
 * after -1, msg_free() after 0.
 */
int	 msg_read(enum msg_kind, const void *, size_t, void *, char *,
	    size_t);
void	 msg_free(enum msg_kind, void *);
/*
 * Encode a struct: a malloc'd payload of *len bytes, or NULL with the
 * reason in err if a field is not of its class or bounds (the same
 * checks as msg_read).
 */
char	*msg_encode(enum msg_kind, const void *, size_t *, char *, size_t);

/*
 * HELLO: the child's policy text, lines in the suite's encoding joined
 * by newlines.  msg_hello_make escapes a text line by line (malloc'd);
 * msg_hello_read checks one (at most MSG_HELLO_MAX bytes with its NUL)
 * and returns a malloc'd copy in *text.
 */
char	*msg_hello_make(const char *);
int	 msg_hello_read(const void *, size_t, char **, char *, size_t);

/*
 * On an imsg: msg_get decodes a message's payload (msg_read);
 * msg_compose encodes and queues one, with fd (-1: none; closed on
 * failure).  Both -1 with the reason in err.
 */
struct imsg;
struct imsgev;
int	 msg_get(struct imsg *, enum msg_kind, void *, char *, size_t);
int	 msg_compose(struct imsgev *, uint32_t, enum msg_kind, int,
	    const void *, char *, size_t);
/*
 * A child's sending: msg_send composes or fatalx()es (our own message
 * is valid, or we are broken); msg_send_error sends IMSG_ERROR for a
 * request id with the reason escaped, and logs it.
 */
void	 msg_send(struct imsgev *, uint32_t, enum msg_kind, const void *);
void	 msg_send_error(struct imsgev *, const char *, const char *);

/*
 * factoryctl diff: the patch from the baseline to a result's commit,
 * made by the worker from the objects the bundle was written from.
 * At most MSG_DIFF_MAX bytes of it are made and sent, escaped; bytes
 * is how many were made, truncated says the patch went on.
 */
#define MSG_DIFF_MAX	(10 * 1024)
struct msg_diff {
	uint32_t	 req;
	char		 id[ATTEMPT_ID_MAX];
	char		 dir[PATH_MAX];		/* the attempt dir, absolute */
	char		 baseline[MSG_HEX40];
	char		 commit[MSG_HEX40];
};

/* Exactly one of patch and error is set (not empty). */
struct msg_diffed {
	uint32_t	 req;
	char		*patch;			/* escaped */
	uint64_t	 bytes;
	int		 truncated;
	char		 error[MSG_ESC_MAX];	/* escaped */
};

/*
 * A pristine checkout (its fd comes with it) to be compared with the
 * baseline's tree before an attempt uses it; the verifier's answer.
 */
struct msg_pcheck {
	char		 id[ATTEMPT_ID_MAX];	/* the attempt waiting */
	char		 repo[PATH_MAX];	/* absolute */
	char		 baseline[MSG_HEX40];
};

/* same: the tree is the baseline's; error says where not, or why. */
struct msg_pchecked {
	char		 id[ATTEMPT_ID_MAX];
	char		 baseline[MSG_HEX40];
	char		 tree[MSG_HEX40];	/* "" if the tree was not found */
	int		 same;
	int		 differs;		/* 0 with error: could not tell */
	char		 error[MSG_ESC_MAX];	/* escaped */
};

#endif /* FACTORY_MSG_H */
