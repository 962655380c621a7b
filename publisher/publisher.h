/*
 * factory-publisher: the only holder of forge credentials.  It pushes
 * one branch per attempt and opens (or reuses) one pull request.
 *
 * Functions that take (err, errlen) return 0 on success and -1 on a
 * refusal or failure, with a one-line reason in err.
 */
#ifndef PUBLISHER_H
#define PUBLISHER_H

#include <sys/types.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <git2.h>
#include <jansson.h>

#include "msg.h"

#define PUB_BRANCH_PREFIX	"factory/"
#define PUB_REF_PREFIX		"refs/heads/" PUB_BRANCH_PREFIX
#define PUB_LOCKFILE		".lock"		/* in the pulls directory */
#define PUB_RECORD_MAX		(64 * 1024)	/* bytes of one pull record */
#define PUB_SCRATCH_DIR		"publish"	/* under $state: caches */

/*
 * One publication.  Every string is borrowed and NUL-terminated; the
 * verdict's signed bytes are strlen(verdict) bytes.
 */
struct publish_req {
	const char		*attempt;	/* "a-20261129-0007" */
	const char		*remote;	/* absolute path, bare repository */
	const char		*pulls;		/* absolute path, pull records */
	const char		*title;
	const char		*base;		/* base branch name, "main" */
	const char		*commit;	/* 40 hex: the accepted commit */
	const char		*verdict;	/* canonical JSON, as signed */
	const unsigned char	*sig;		/* Ed25519 over verdict */
	size_t			 siglen;
	const unsigned char	*verifier_pub;	/* 32 raw bytes, pinned */
	const char		*manifest_digest; /* the verdict's, "sha256:" */
	int			 bundle_fd;	/* v2 bundle, read from 0 */
	/*
	 * A fleet's adoption: no bundle (-1); the branch must be on the
	 * forge at commit already, pushed by the host that lost it, and
	 * only the rest (check run, pull request) is done.
	 */
	int			 adopt;
	/* The attempt's envelopes (attest.h), one line each, or none. */
	char * const		*attest;
	size_t			 nattest;
	const char		*summary;	/* the check run's text */
	/*
	 * A cohort's member: its cohort (NULL: none), and the other
	 * members whose selection failed, whose branch (at their
	 * commit) and pull request go before this one's is opened.
	 */
	const char			*cohort;
	const struct msg_superseded	*supersede;
	size_t				 nsupersede;
};

struct publish_result {
	char		 branch[128];		/* "factory/<attempt>" */
	int		 number;		/* the pull record's number */
	char		 record[PATH_MAX];	/* pulls/<attempt>.json, or
						   the pull request's URL */
	int		 reused;		/* 1: this call changed nothing */
};

/* What a bundle's header said; the pack starts at pack_off. */
struct pub_bundle {
	git_oid		 prereq;
	git_oid		 tip;
	off_t		 pack_off;
};

/*
 * Where a forge github repository publishes (the "github" object of
 * IMSG_PUBLISH, from factoryd.conf), plus the publisher's own scratch
 * directory and retry budget.
 */
struct gh_conf {
	char		 api[256];	/* https://host[:port][/prefix] */
	char		 owner[128];
	char		 repo[128];
	uint64_t	 repository_id;
	char		 app_id[64];	/* App id or client id: the JWT's iss */
	uint64_t	 installation_id;
	char		 key[PATH_MAX];	/* the App's RSA private key, PEM */
	char		 ca[PATH_MAX];	/* CA bundle for the API and git */
	char		 scratch[PATH_MAX]; /* writable: object caches */
	int		 wait_max;	/* seconds of retry-after, in all */
	int		 timeout;	/* seconds per HTTP request, and per
					   wait of a git read or write */
	int		 budget;	/* seconds of a whole publication */
};

/* An HTTP response; body is NUL-terminated (len excludes the NUL). */
struct http_resp {
	int		 status;
	char		*body;
	size_t		 len;
	long		 retry_after;		/* seconds, -1: none */
	long		 ratelimit_remaining;	/* -1: none */
	long long	 ratelimit_reset;	/* epoch seconds, -1: none */
	char		 location[1024];	/* Location, "": none or
						   unusable */
	int		 link;			/* a Link header came */
	int		 next_bad;		/* ... with a next page
						   malformed or too long */
	char		 next[1024];		/* its rel="next", "": none */
	char		 accepted[128];		/* X-Accepted-GitHub-
						   Permissions, printable */
};

/* local.c */
/*
 * Once per process, before publish_local: ignores SIGPIPE (a forge
 * that drops a connection is an error, never a death: OpenSSL and
 * libgit2 write to sockets without MSG_NOSIGNAL), initialises libgit2,
 * empties its configuration search paths
 * (system, xdg, global, programdata) so no host or $HOME config steers
 * it, turns owner validation off (the remotes belong to another uid)
 * and turns on fsync of what it writes into a git directory.  Fatal on
 * failure.
 */
void	pub_git_init(void);
/*
 * Publish one attempt into a local "forge": a bare repository and a
 * directory of pull records, in this order, failing closed:
 *  1. the verdict's signature by the pinned key, and its content:
 *     "accepted": true, the request's attempt and commit; then, for a
 *     cohort's member, each member to supersede (under the pulls lock,
 *     all checked before any changes): its record must name its
 *     commit and its branch hold it, then the record is closed
 *     ("state": "closed") and the branch deleted;
 *  2. the bundle: a strict v2 header with one prerequisite and one
 *     ref, refs/heads/factory/<attempt> at the commit; the
 *     prerequisite must be in the remote; the pack is indexed into
 *     the remote with connectivity checks;
 *  3. the branch factory/<attempt>: created at the commit, kept if it
 *     is there already, refused if it holds another commit;
 *  4. the record pulls/<attempt>.json: reused if it names the same
 *     commit (a cohort's member's closed record reopened), else
 *     numbered 1 + the highest number, under an exclusive flock(2)
 *     of pulls/.lock, written atomically and fsynced.
 * A refusal before step 2's indexing changes nothing; after it, at
 * most an unreferenced pack is left in the remote.  Publishing the
 * same attempt again gives the same branch and record, reused = 1.
 */
int	publish_local(const struct publish_req *, struct publish_result *,
	    char *, size_t);
/*
 * Forget the highest pull numbers learnt per pulls directory, as a new
 * process starts without them: the next publication reads every
 * record again.  For a child forked after publications (tests).
 */
void	publish_local_forget(void);
/* Attempt, commit, title, verdict, base and bundle fd are well formed. */
int	pub_check_common(const struct publish_req *, char *, size_t);
/* Step 1 of publish_local. */
int	pub_check_verdict(const struct publish_req *, char *, size_t);
/* The strict v2 header of step 2, read with pread(2). */
int	pub_bundle_header(const struct publish_req *, struct pub_bundle *,
	    char *, size_t);
/*
 * The rest of step 2 into any repository: the prerequisite must be in
 * it; the pack is indexed with connectivity checks; the tip must
 * descend from the prerequisite.
 */
int	pub_import(git_repository *, const struct publish_req *,
	    const struct pub_bundle *, char *, size_t);

/* request.c */
/*
 * Decode the common part of an IMSG_PUBLISH payload, as msg_read()
 * decoded it, into req: the verifier's key (base64) and receipt line,
 * split into the signed canonical bytes (*verdict, malloc'd: the
 * caller frees it) and the signature (sig, ED25519_SIG_LEN bytes of
 * the caller's).  Strings and lists of req are borrowed from o.
 * Checks nothing beyond the decoding.  The daemon's publisher and
 * regress/github's prog_ghpub both run it.
 */
int	pub_req_from_msg(const struct msg_publish *, int, struct publish_req *,
	    char **, uint8_t *, uint8_t *, char *, size_t);

/* pubattest.c */
struct attest_summary;
/*
 * The request's envelopes, checked again here: they verify, the
 * summary is signed by the pinned verifier key, PASSED, for the
 * request's commit.  sum->count is 0 when the request carries none.
 */
int	pub_attest_check(const struct publish_req *, struct attest_summary *,
	    char *, size_t);
/* pulls/<attempt>.intoto.jsonl, written atomically (forge local). */
int	pub_attest_local(const struct publish_req *, char *, size_t);
/* ... and removed, for a publication that made no record. */
int	pub_attest_unlink(const struct publish_req *, char *, size_t);

/* github.c */
/*
 * Once per process, before anything allocates: jansson and libevent
 * wipe every block they free, so that a token that passed through a
 * JSON string or an HTTP buffer does not outlive its use in the heap.
 */
void	gh_wipe_init(void);
/*
 * The "github" object of IMSG_PUBLISH into c, checked: an https api
 * URL, owner and repo names, non-zero ids, absolute key and ca paths.
 * scratch is the directory the publisher may write (its object
 * caches).
 */
int	gh_conf_from_json(json_t *, const char *, struct gh_conf *, char *,
	    size_t);
/*
 * Publish one attempt to GitHub, failing closed:
 *  1. the request and the verdict, as publish_local's step 1, and the
 *     bundle header;
 *  2. a JWT (RS256, the App key) buys an installation token for
 *     exactly repository_ids [repository_id] with contents and
 *     pull_requests write; a wider grant is revoked and refused;
 *  3. GET /repos/OWNER/REPO must name repository_id (a renamed or
 *     transferred repository's redirect followed: its full_name is
 *     used from then on); its clone_url is where git goes; then each
 *     member to supersede (a cohort's whose
 *     selection failed): its pull requests listed strictly (garbage
 *     refuses the publication), a merged one refused, its branch
 *     checked to hold its commit, its open pull requests closed
 *     (PATCH, the answer checked), its branch deleted;
 *  4. in the scratch cache scratch/gh-<repository_id>.git (flocked):
 *     the base branch is fetched unless the bundle's prerequisite is
 *     there already, the bundle is indexed, factory/<attempt> is
 *     pushed unless the forge holds it at our commit already, and
 *     refused if it holds another;
 *  5. the pull request with head OWNER:factory/<attempt> (any state,
 *     an open one first) is reused (a cohort's member's closed,
 *     unmerged one reopened), else created; a 422 is answered by
 *     looking again, and fails with GitHub's words if none is open;
 *  6. DELETE /installation/token, whatever happened after step 2: the
 *     publication has one exit path once a token is held.
 * An API call or a git fetch or push that fails for want of an answer
 * (refused, closed, reset, timed out, a malformed answer) or is
 * answered 500, 502, 503 or 504 is tried again, up to GH_TRIES times,
 * after 1, 2, 4 s (or the Retry-After asked for); 403/429 with
 * retry-after, an exhausted rate limit (until x-ratelimit-reset) or a
 * secondary limit (a minute) are retried too, the log saying how long
 * and why.  Waits count against wait_max, and everything against
 * budget: past it the publication fails with the last reason.  A
 * redirect (301, 302, 307, 308) is repeated at its location, and a
 * list read page by page as its Link header says (GH_PAGES_MAX pages),
 * only on the api URL's own host, port and path.  A failure carries
 * GitHub's message and errors; a refused push, the lines the forge's
 * hooks printed.  The revocation gets its own
 * tries and time, so that a spent budget still revokes.  A token whose
 * answer never arrived cannot be revoked (GitHub expires it within the
 * hour).  The token is kept in one malloc'd buffer, given to libgit2
 * only through the credential callback, and wiped after the
 * revocation.  res->record is the pull request's html_url,
 * res->number its number; reused is 1 when neither a push nor a new
 * pull request was needed.
 */
int	publish_github(const struct publish_req *, const struct gh_conf *,
	    struct publish_result *, char *, size_t);

/* http.c */
#define HTTP_FINAL	(-1)	/* trying again cannot mend it */
#define HTTP_TRANSIENT	(-2)	/* no answer: connect, timeout, closed */
struct http_conn;
/*
 * An HTTPS client for one base URL, https://host[:port][/prefix]: the
 * server certificate is verified against the CA file and the host
 * name (or IP address).  Each request runs to completion over a fresh
 * connection, waiting at most timeout seconds.
 */
struct http_conn *http_open(const char *, const char *, int, char *,
	    size_t);
/* No request waits past deadline (net_now() ms; 0: none). */
void	http_deadline(struct http_conn *, int64_t);
/*
 * method (GET, POST, PATCH, DELETE) on prefix + path, with an optional
 * Authorization value and JSON body (the request's bytes are wiped
 * once sent).  0 with resp filled for any HTTP status; HTTP_FINAL or
 * HTTP_TRANSIENT with err set when no usable answer came.
 */
int	http_request(struct http_conn *, const char *, const char *,
	    const char *, const char *, struct http_resp *, char *, size_t);
/*
 * An answer in buf[0..len), eof if the connection ended there: 1
 * complete (resp filled, body malloc'd), 0 more is needed, -1
 * malformed.  Strict: an HTTP/1.x status line, header syntax, one
 * framing (Content-Length, chunked, or the connection's end), chunk
 * sizes in hex of at most 8 digits, bounded sizes.  A body framed by
 * the connection's end is taken only if the peer ended TLS with a
 * close_notify (HTTP_EOF_CLEAN): a bare close may be an attacker's
 * cut (HTTP_EOF_UNCLEAN).
 */
#define HTTP_EOF_CLEAN		1	/* close_notify, then the end */
#define HTTP_EOF_UNCLEAN	2	/* the end without close_notify */
int	http_parse(const char *, size_t, int, struct http_resp *, char *,
	    size_t);
void	http_resp_free(struct http_resp *);
/*
 * The path (and query) of url on this connection's origin and API base,
 * https://host[:port]/prefix/..., into path: 0, or -1 for any other
 * scheme, host, port or base, or a character that has no place in a
 * request line.  A redirect or a next page is followed only so: the
 * token never goes to another host.
 */
int	http_path_of(struct http_conn *, const char *, char *, size_t);
void	http_close(struct http_conn *);
/* *buf grows to want bytes; the old block is wiped before it is freed. */
int	pub_grow(char **, size_t *, size_t);

/* net.c */
/* Milliseconds of CLOCK_MONOTONIC. */
int64_t	net_now(void);
/* poll(2) one fd until a net_now() time: 1 ready, 0 timed out, -1. */
int	net_wait(int, short, int64_t);
/*
 * A connected non-blocking TCP socket to host:port: every address
 * getaddrinfo gives, in its order, each with a share of timeout_ms; -1
 * with each address's reason in err.
 */
int	net_connect(const char *, const char *, int, char *, size_t);
/* libgit2 gets net.c's sockets under its HTTPS; once is enough. */
void	net_git_init(void);
/* Each git read or write waits at most timeout s, never past deadline. */
void	net_git_limits(int, int64_t);

#endif /* PUBLISHER_H */
