/*
 * The local forge: a bare repository stands in for the forge's git
 * remote and a directory of JSON files for its pull requests.  The
 * checks are the ones a real forge publication makes before pushing:
 * the verdict is the verifier's, for this attempt and this commit, and
 * the bundle holds exactly that branch and nothing else.
 *
 * Files this touches (traced under the publisher's policy, which
 * unveils the remotes, the pulls directory and /etc/ssl): under the
 * remote, its config, HEAD, refs, packed-refs, objects/ (read; a new
 * pack and index written through temporary files; info/commit-graph)
 * and, only if the remote's core.logAllRefUpdates asks, logs/; under
 * the pulls directory, .lock (which holds the highest number), the
 * records and one temporary file.
 * Outside them: git_libgit2_init() reads the CA bundle in /etc/ssl
 * (mbedTLS); jansson tries /dev/urandom once for its hash seed and
 * libgit2 /etc/localtime for the reflog identity's offset; both are
 * refused by Landlock and fall back (time and pid; UTC).  $HOME and
 * /etc/gitconfig are never opened: pub_git_init() empties the search
 * paths.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/queue.h>
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>
#include <jansson.h>

#include "attest.h"
#include "bundlehdr.h"
#include "factory.h"
#include "crypto.h"
#include "gitcommon.h"
#include "gitpack.h"
#include "log.h"
#include "publisher.h"
#include "util.h"

#define PUB_HEXSZ		40
#define PUB_READ_CHUNK		(64 * 1024)
#define PUB_LOCK_TRIES		40	/* of 50 ms: a ref locked by another */
#define PUB_COUNTER_MAX		16	/* bytes of the lock file's number */

/*
 * The highest pull number this process has seen in one pulls
 * directory, known by device and inode: numbering must not read every
 * record each time (it cost 62 ms after 2,000 publications).
 */
struct pub_pulls {
	SLIST_ENTRY(pub_pulls)	 entry;
	dev_t			 dev;
	ino_t			 ino;
	int			 highest;
};
static SLIST_HEAD(, pub_pulls) pub_pulls_known =
    SLIST_HEAD_INITIALIZER(pub_pulls_known);

static int	 pub_attempt_valid(const char *);
static void	 pub_stall(void);
static int	 pub_check_req(const struct publish_req *, char *, size_t);
static int	 pub_branch_state(git_repository *, const char *,
		    const git_oid *, char *, size_t);
static int	 pub_index_pack(git_repository *, git_odb *, int, off_t,
		    char *, size_t);
static int	 pub_branch_create(git_repository *, const char *,
		    const git_oid *, char *, size_t);
static int	 pub_push(const struct publish_req *, const struct pub_bundle *,
		    int *, char *, size_t);
static json_t	*pub_record_read(int, const char *, int *, char *, size_t);
static int	 pub_record_number(json_t *);
static int	 pub_record_highest(int, int *, char *, size_t);
static int	 pub_counter_read(int, int *, char *, size_t);
static int	 pub_counter_write(int, int, char *, size_t);
static int	 pub_number_next(int, int, int *, char *, size_t);
static json_t	*pub_record_make(const struct publish_req *, int, char *,
		    size_t);
static int	 pub_record_write(int, const char *, json_t *, char *, size_t);
static int	 pub_record_closed(json_t *);
static int	 pub_supersede(const struct publish_req *, char *, size_t);
static int	 pub_record(const struct publish_req *, int *, int *, char *,
		    size_t);

void
pub_git_init(void)
{
	char	 err[256];

	/* A forge that drops the line must not kill us mid-publication. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		fatal("signal SIGPIPE");
	/*
	 * The remotes belong to the forge's uid, not to us.  A pull record
	 * is fsynced before it is reported; the branch and the objects it
	 * names must be on disk before it.
	 */
	if (gitc_init(GITC_FSYNC, err, sizeof(err)) == -1)
		fatalx("libgit2: %s", err);
}

/* Safe as one path component and inside a ref name. */
static int
pub_attempt_valid(const char *id)
{
	size_t	 i, len;

	len = strlen(id);
	if (len == 0 || len > ATTEMPT_ID_MAX || !isalnum((unsigned char)id[0]))
		return (0);
	if (strstr(id, "..") != NULL ||
	    (len >= 5 && strcmp(id + len - 5, ".lock") == 0))
		return (0);
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)id[i]) && id[i] != '-' &&
		    id[i] != '_' && id[i] != '.')
			return (0);
	return (1);
}

static int
pub_check_req(const struct publish_req *req, char *err, size_t errlen)
{
	if (pub_check_common(req, err, errlen) == -1)
		return (-1);
	if (req->remote == NULL || req->remote[0] != '/')
		return (errfmt(err, errlen, "remote must be an absolute path"));
	/* Room for the record's path in publish_result. */
	if (req->pulls == NULL || req->pulls[0] != '/' ||
	    strlen(req->pulls) + ATTEMPT_ID_MAX + 8 > PATH_MAX)
		return (errfmt(err, errlen,
		    "pulls must be an absolute path shorter than %d",
		    PATH_MAX - ATTEMPT_ID_MAX - 8));
	return (0);
}

/* What every forge needs of a request; remote and pulls are local's. */
int
pub_check_common(const struct publish_req *req, char *err, size_t errlen)
{
	char	 ref[256];
	size_t	 i;
	int	 valid = 0;

	if (req->attempt == NULL || !pub_attempt_valid(req->attempt))
		return (errfmt(err, errlen, "bad attempt id"));
	if (req->commit == NULL || strlen(req->commit) != PUB_HEXSZ ||
	    !hex_lower(req->commit, PUB_HEXSZ))
		return (errfmt(err, errlen, "commit must be 40 lowercase hex"));
	if (req->title == NULL || req->verdict == NULL ||
	    req->verifier_pub == NULL || req->sig == NULL)
		return (errfmt(err, errlen, "incomplete publish request"));
	if (req->base == NULL || (size_t)snprintf(ref, sizeof(ref),
	    "refs/heads/%s", req->base) >= sizeof(ref) ||
	    git_reference_name_is_valid(&valid, ref) < 0 || !valid)
		return (errfmt(err, errlen, "bad base branch name"));
	if (req->bundle_fd < 0 && !req->adopt)
		return (errfmt(err, errlen, "no bundle"));
	if (req->adopt && (req->bundle_fd >= 0 || req->nsupersede > 0))
		return (errfmt(err, errlen, "an adoption with a bundle or a "
		    "supersede list"));
	if (req->nsupersede > COHORT_SUPERSEDE_MAX ||
	    (req->nsupersede > 0 && (req->cohort == NULL ||
	    req->supersede == NULL)))
		return (errfmt(err, errlen, "bad supersede list"));
	for (i = 0; i < req->nsupersede; i++)
		if (!pub_attempt_valid(req->supersede[i].id) ||
		    strcmp(req->supersede[i].id, req->attempt) == 0 ||
		    strlen(req->supersede[i].commit) != PUB_HEXSZ ||
		    !hex_lower(req->supersede[i].commit, PUB_HEXSZ))
			return (errfmt(err, errlen, "supersede: bad entry "
			    "%zu", i));
	return (0);
}

/*
 * The verdict is the verifier's receipt of kind "verdict" (without its
 * "sig", in canonical form).  It must be signed by the pinned verifier
 * key over exactly these bytes, and say yes to this attempt and this
 * commit, and be of the manifest whose digest the request's sender
 * vouches for (it took the title and base from that manifest: a
 * database's word for them names no digest the verifier signed).
 * Duplicate keys are refused so no reader can see a different verdict
 * than the one checked here.
 */
int
pub_check_verdict(const struct publish_req *req, char *err, size_t errlen)
{
	json_t		*v, *o, *f;
	json_error_t	 jerr;
	size_t		 len = strlen(req->verdict);
	int		 rv = -1;

	if (req->siglen != ED25519_SIG_LEN)
		return (errfmt(err, errlen, "verdict: signature is %zu "
		    "bytes, not %d", req->siglen, ED25519_SIG_LEN));
	if (ed25519_verify(req->verifier_pub, req->verdict, len,
	    req->sig) != 0)
		return (errfmt(err, errlen, "verdict: bad signature for "
		    "the pinned verifier key"));
	if ((v = json_loadb(req->verdict, len, JSON_REJECT_DUPLICATES,
	    &jerr)) == NULL)
		return (errfmt(err, errlen, "verdict: line %d: %s",
		    jerr.line, jerr.text));
	f = json_object_get(v, "facts");
	if (!json_is_object(v) || !json_is_object(f))
		errfmt(err, errlen, "verdict: not a JSON object with facts");
	else if (!json_is_string(o = json_object_get(v, "kind")) ||
	    strcmp(json_string_value(o), "verdict") != 0 ||
	    !json_is_string(o = json_object_get(v, "signer")) ||
	    strcmp(json_string_value(o), "verifier") != 0)
		errfmt(err, errlen, "verdict: not a verifier's verdict");
	else if (!json_is_true(json_object_get(f, "accepted")))
		errfmt(err, errlen, "verdict: not accepted");
	else if (!json_is_string(o = json_object_get(v, "attempt")) ||
	    strcmp(json_string_value(o), req->attempt) != 0)
		errfmt(err, errlen, "verdict: not for attempt %s (%.*s)",
		    req->attempt, ATTEMPT_ID_MAX, json_is_string(o) ?
		    json_string_value(o) : "none");
	else if (!json_is_string(o = json_object_get(f, "commit")) ||
	    strcmp(json_string_value(o), req->commit) != 0)
		errfmt(err, errlen, "verdict: not for commit %s (%.40s)",
		    req->commit, json_is_string(o) ? json_string_value(o) :
		    "none");
	else if (!json_is_string(o = json_object_get(f, "manifest_digest")) ||
	    req->manifest_digest == NULL ||
	    strcmp(json_string_value(o), req->manifest_digest) != 0)
		errfmt(err, errlen, "verdict: of manifest %.71s, not of the "
		    "request's %.71s", json_is_string(o) ?
		    json_string_value(o) : "none", req->manifest_digest !=
		    NULL ? req->manifest_digest : "none");
	else
		rv = 0;
	json_decref(v);
	return (rv);
}

/*
 * Read and check the header of a v2 bundle from offset 0 with the
 * shared strict parser (libcommon/bundlehdr.c), then hold it to the
 * request: exactly our branch, at the verdict's commit.  pread(2)
 * leaves the fd's offset alone.
 */
int
pub_bundle_header(const struct publish_req *req, struct pub_bundle *b,
    char *err, size_t errlen)
{
	struct bundle_hdr	 h;

	if (bundle_hdr_read(req->bundle_fd, &h, err, errlen) == -1)
		return (-1);
	if (strcmp(h.attempt, req->attempt) != 0)
		return (errfmt(err, errlen, "bundle: ref is not %s%s",
		    PUB_REF_PREFIX, req->attempt));
	if (strcmp(h.commit, req->commit) != 0)
		return (errfmt(err, errlen, "bundle: %s%s is %s, not the "
		    "verdict's commit %s", PUB_REF_PREFIX, req->attempt,
		    h.commit, req->commit));
	if (git_oid_fromstrn(&b->prereq, h.prereq, PUB_HEXSZ) < 0)
		return (gitc_err(err, errlen, "bundle: prerequisite"));
	if (git_oid_fromstrn(&b->tip, h.commit, PUB_HEXSZ) < 0)
		return (gitc_err(err, errlen, "bundle: ref"));
	b->pack_off = h.pack_offset;
	return (0);
}

/*
 * 0: the branch is absent; 1: it is at want already; -1: it holds
 * something else, or could not be read.
 */
static int
pub_branch_state(git_repository *repo, const char *refname,
    const git_oid *want, char *err, size_t errlen)
{
	git_reference	*ref;
	char		 hex[GIT_OID_HEXSZ + 1];
	int		 rc;

	if ((rc = git_reference_lookup(&ref, repo, refname)) ==
	    GIT_ENOTFOUND)
		return (0);
	if (rc < 0)
		return (gitc_err(err, errlen, "%s", refname));
	if (git_reference_type(ref) != GIT_REFERENCE_DIRECT) {
		git_reference_free(ref);
		return (errfmt(err, errlen, "branch %s is a symbolic ref",
		    refname + strlen("refs/heads/")));
	}
	if (!git_oid_equal(git_reference_target(ref), want)) {
		git_oid_tostr(hex, sizeof(hex), git_reference_target(ref));
		git_reference_free(ref);
		return (errfmt(err, errlen, "branch %s already holds %s",
		    refname + strlen("refs/heads/"), hex));
	}
	git_reference_free(ref);
	return (1);
}

/*
 * Stream the pack after the header into the remote's objects/pack.
 * The indexer completes a thin pack from the remote's objects;
 * gitpack_links() then refuses a pack naming an object that is neither
 * in it nor in the remote (not the indexer's verify: gitpack.h).
 */
static int
pub_index_pack(git_repository *repo, git_odb *odb, int fd, off_t off,
    char *err, size_t errlen)
{
	git_indexer_options	 opts;
	git_indexer_progress	 st;
	git_indexer		*idx = NULL;
	char			 dir[PATH_MAX], idxpath[PATH_MAX];
	char			*buf;
	ssize_t			 n;
	int			 rv = -1;

	if ((size_t)snprintf(dir, sizeof(dir), "%sobjects/pack",
	    git_repository_path(repo)) >= sizeof(dir))
		return (errfmt(err, errlen, "remote: path too long"));
	if ((buf = malloc(PUB_READ_CHUNK)) == NULL)
		return (errfmt(err, errlen, "bundle: out of memory"));
	memset(&st, 0, sizeof(st));
	if (git_indexer_options_init(&opts, GIT_INDEXER_OPTIONS_VERSION) < 0) {
		gitc_err(err, errlen, "bundle: indexer options");
		goto done;
	}
	opts.verify = 0;
	if (git_indexer_new(&idx, dir, 0, odb, &opts) < 0) {
		gitc_err(err, errlen, "bundle: indexer for %s", dir);
		goto done;
	}
	for (;;) {
		n = pread(fd, buf, PUB_READ_CHUNK, off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			errfmt(err, errlen, "bundle: read: %s",
			    strerror(errno));
			goto done;
		}
		if (n == 0)
			break;
		if (git_indexer_append(idx, buf, n, &st) < 0) {
			gitc_err(err, errlen, "bundle: pack");
			goto done;
		}
		off += n;
	}
	if (git_indexer_commit(idx, &st) < 0) {
		gitc_err(err, errlen, "bundle: pack");
		goto done;
	}
	if (git_odb_refresh(odb) < 0) {
		gitc_err(err, errlen, "remote: refresh objects");
		goto done;
	}
	if ((size_t)snprintf(idxpath, sizeof(idxpath), "%s/pack-%s.idx", dir,
	    git_indexer_name(idx)) >= sizeof(idxpath)) {
		errfmt(err, errlen, "remote: path too long");
		goto done;
	}
	if (gitpack_links(idxpath, odb, err, errlen) == -1) {
		/*
		 * Refused: out again.  It is this bundle's alone (one with
		 * its commit is never indexed twice, pub_import).
		 */
		unlink(idxpath);
		idxpath[strlen(idxpath) - strlen("idx")] = '\0';
		strlcat(idxpath, "pack", sizeof(idxpath));
		unlink(idxpath);
		goto done;
	}
	rv = 0;
 done:
	git_indexer_free(idx);
	free(buf);
	return (rv);
}

/*
 * Bring the bundle's objects into the remote: its prerequisite must be
 * there already, and its commit must grow from it.
 */
int
pub_import(git_repository *repo, const struct publish_req *req,
    const struct pub_bundle *b, char *err, size_t errlen)
{
	git_odb		*odb = NULL;
	git_object	*obj = NULL;
	char		 hex[GIT_OID_HEXSZ + 1];
	int		 rv = -1;

	git_oid_tostr(hex, sizeof(hex), &b->prereq);
	if (git_repository_odb(&odb, repo) < 0)
		return (gitc_err(err, errlen, "%s: objects",
		    git_repository_path(repo)));
	if (!git_odb_exists(odb, &b->prereq)) {
		errfmt(err, errlen, "bundle: prerequisite %s is not in the "
		    "remote", hex);
		goto done;
	}
	/*
	 * A commit the remote has already (this attempt published before,
	 * as a cohort member selected again is) brought its objects with
	 * it, checked then: its pack is not indexed a second time (which
	 * also leaked in libgit2's indexer, every object already there).
	 */
	if (!git_odb_exists(odb, &b->tip) && pub_index_pack(repo, odb,
	    req->bundle_fd, b->pack_off, err, errlen) == -1)
		goto done;
	if (git_object_lookup(&obj, repo, &b->tip, GIT_OBJECT_COMMIT) < 0) {
		gitc_err(err, errlen, "bundle: commit %s", req->commit);
		goto done;
	}
	/* The header may name any object it likes as the prerequisite. */
	if (git_graph_descendant_of(repo, &b->tip, &b->prereq) != 1) {
		errfmt(err, errlen, "bundle: commit %s does not descend "
		    "from the prerequisite %s", req->commit, hex);
		goto done;
	}
	rv = 0;
 done:
	git_object_free(obj);
	git_odb_free(odb);
	return (rv);
}

/*
 * Create the branch, never moving it: 1 if made here, 0 if someone
 * made it at the same commit meanwhile, -1 otherwise.
 */
static int
pub_branch_create(git_repository *repo, const char *refname,
    const git_oid *tip, char *err, size_t errlen)
{
	git_reference	*ref = NULL;
	struct timespec	 pause = { 0, 50 * 1000 * 1000 };
	int		 rc, tries;

	/* Another writer holds the ref's lock file: wait for it, briefly. */
	for (tries = 0; ; tries++) {
		rc = git_reference_create(&ref, repo, refname, tip, 0,
		    "factory: publish");
		if (rc != GIT_ELOCKED || tries >= PUB_LOCK_TRIES)
			break;
		nanosleep(&pause, NULL);
	}
	if (rc == GIT_EEXISTS)
		return (pub_branch_state(repo, refname, tip, err, errlen) ==
		    1 ? 0 : -1);
	if (rc < 0)
		return (gitc_err(err, errlen, "remote: create %s",
		    refname));
	git_reference_free(ref);
	crashpoint("publisher:after-push");
	/*
	 * A host lost just after its push: the test kills factoryd while
	 * this waits, and it dies with it, having done nothing more.
	 */
	if (faultpoint("publisher:stall-after-push"))
		pub_stall();
	return (1);
}

/*
 * Import the bundle and point our branch at its commit, unless the
 * branch is there already.  *created is set when it was made here.
 */
static int
pub_push(const struct publish_req *req, const struct pub_bundle *b,
    int *created, char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_oid		 want;
	char		 refname[256];
	int		 rc, rv = -1;

	*created = 0;
	snprintf(refname, sizeof(refname), "%s%s", PUB_REF_PREFIX,
	    req->attempt);
	if (b == NULL && git_oid_fromstr(&want, req->commit) < 0)
		return (errfmt(err, errlen, "commit %s", req->commit));
	if (git_repository_open_ext(&repo, req->remote,
	    GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_NO_DOTGIT,
	    NULL) < 0)
		return (gitc_err(err, errlen, "remote %s", req->remote));
	if (!git_repository_is_bare(repo)) {
		errfmt(err, errlen, "remote %s: not a bare repository",
		    req->remote);
		goto done;
	}
	/* An adoption pushes nothing: the branch is there, or it fails. */
	if (b == NULL) {
		if ((rc = pub_branch_state(repo, refname, &want, err,
		    errlen)) == 0)
			errfmt(err, errlen, "branch %s%s is not on the forge: "
			    "its host was lost before the push, and the "
			    "bundle with it", PUB_BRANCH_PREFIX, req->attempt);
		rv = rc == 1 ? 0 : -1;
		goto done;
	}
	/* Look before writing anything: a refusal changes nothing. */
	if ((rc = pub_branch_state(repo, refname, &b->tip, err,
	    errlen)) != 0) {
		rv = rc == 1 ? 0 : -1;
		goto done;
	}
	if (pub_import(repo, req, b, err, errlen) == -1 ||
	    (rc = pub_branch_create(repo, refname, &b->tip, err,
	    errlen)) == -1)
		goto done;
	*created = rc;
	rv = 0;
 done:
	git_repository_free(repo);
	return (rv);
}

/*
 * A pull record, parsed.  NULL with *absent set if there is no such
 * file; NULL with a reason if it cannot be read or is not an object.
 */
static json_t *
pub_record_read(int dirfd, const char *name, int *absent, char *err,
    size_t errlen)
{
	struct stat	 sb;
	json_t		*j = NULL;
	json_error_t	 jerr;
	char		*buf = NULL;
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd;

	*absent = 0;
	if ((fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
	    O_NONBLOCK)) == -1) {
		if (errno == ENOENT)
			*absent = 1;
		else
			errfmt(err, errlen, "pull record %s: %s", name,
			    strerror(errno));
		return (NULL);
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    sb.st_size > PUB_RECORD_MAX) {
		errfmt(err, errlen, "pull record %s: not a regular file "
		    "of at most %d bytes", name, PUB_RECORD_MAX);
		goto done;
	}
	if ((buf = malloc(sb.st_size + 1)) == NULL) {
		errfmt(err, errlen, "pull record %s: out of memory", name);
		goto done;
	}
	while (len < (size_t)sb.st_size) {
		n = read(fd, buf + len, sb.st_size - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	if (len != (size_t)sb.st_size) {
		errfmt(err, errlen, "pull record %s: short read", name);
		goto done;
	}
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (j == NULL)
		errfmt(err, errlen, "pull record %s: %s", name, jerr.text);
	else if (!json_is_object(j) || pub_record_number(j) == -1) {
		errfmt(err, errlen, "pull record %s: no valid number", name);
		json_decref(j);
		j = NULL;
	}
 done:
	free(buf);
	close(fd);
	return (j);
}

static int
pub_record_number(json_t *j)
{
	json_t		*n = json_object_get(j, "number");
	json_int_t	 v;

	if (!json_is_integer(n))
		return (-1);
	v = json_integer_value(n);
	if (v < 1 || v >= INT_MAX)
		return (-1);
	return ((int)v);
}

/*
 * The highest number among the records, read once per process and
 * directory (pub_number_next).  A record that cannot be read is an
 * error: skipping it could hand out its number twice.
 */
static int
pub_record_highest(int dirfd, int *highest, char *err, size_t errlen)
{
	DIR		*d;
	struct dirent	*de;
	json_t		*j;
	size_t		 len;
	int		 fd, absent, n, rv = 0;

	*highest = 0;
	if ((fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return (errfmt(err, errlen, "pulls: %s", strerror(errno)));
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return (errfmt(err, errlen, "pulls: %s", strerror(errno)));
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len <= 5 ||
		    strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		if ((j = pub_record_read(dirfd, de->d_name, &absent, err,
		    errlen)) == NULL) {
			if (absent)
				continue;
			rv = -1;
			break;
		}
		if ((n = pub_record_number(j)) > *highest)
			*highest = n;
		json_decref(j);
	}
	closedir(d);
	return (rv);
}

/*
 * The number in the lock file: 0 if it holds none (empty, or made
 * before numbers were kept there), else the highest handed out.  One
 * line of decimal digits or nothing; anything else is refused.
 */
static int
pub_counter_read(int lockfd, int *number, char *err, size_t errlen)
{
	struct stat	 sb;
	char		 buf[PUB_COUNTER_MAX + 1];
	ssize_t		 n;
	long		 v = 0;
	int		 i;

	*number = 0;
	if (fstat(lockfd, &sb) == -1 || !S_ISREG(sb.st_mode))
		return (errfmt(err, errlen, "pulls/%s: not a regular file",
		    PUB_LOCKFILE));
	if (sb.st_size == 0)
		return (0);
	if (sb.st_size > PUB_COUNTER_MAX ||
	    (n = pread(lockfd, buf, sizeof(buf), 0)) != sb.st_size)
		return (errfmt(err, errlen, "pulls/%s: not a number of at "
		    "most %d bytes", PUB_LOCKFILE, PUB_COUNTER_MAX));
	/* 1..INT_MAX-1, no leading zero, one newline at the end. */
	for (i = 0; i < n - 1; i++) {
		if (!isdigit((unsigned char)buf[i]) || (i == 0 &&
		    buf[i] == '0') || (v = v * 10 + (buf[i] - '0')) >=
		    INT_MAX)
			break;
	}
	if (n < 2 || i != n - 1 || buf[n - 1] != '\n')
		return (errfmt(err, errlen, "pulls/%s: not a pull number",
		    PUB_LOCKFILE));
	*number = (int)v;
	return (0);
}

static int
pub_counter_write(int lockfd, int number, char *err, size_t errlen)
{
	char	 buf[PUB_COUNTER_MAX];
	int	 len;

	len = snprintf(buf, sizeof(buf), "%d\n", number);
	if (pwrite(lockfd, buf, len, 0) != len ||
	    ftruncate(lockfd, len) == -1)
		return (errfmt(err, errlen, "pulls/%s: %s", PUB_LOCKFILE,
		    strerror(errno)));
	return (0);
}

/*
 * The next pull number, under the lock, and the lock file saying so
 * before any record carries it (a failure after leaves a gap, never
 * a number given twice).  The lock file is not synced: a process that
 * dies leaves it in the page cache for the next, and every process
 * reads all the records once, at its first publication into a
 * directory, so what a crash of the system took from the lock file
 * the records (synced before any number is reported) give back.  A
 * lock file that holds no number is read about again, as before: a
 * directory copied without it may hold any number.
 */
static int
pub_number_next(int dirfd, int lockfd, int *next, char *err, size_t errlen)
{
	struct pub_pulls	*p;
	struct stat		 sb;
	int			 counter, highest;

	if (fstat(dirfd, &sb) == -1)
		return (errfmt(err, errlen, "pulls: %s", strerror(errno)));
	if (pub_counter_read(lockfd, &counter, err, errlen) == -1)
		return (-1);
	SLIST_FOREACH(p, &pub_pulls_known, entry)
		if (p->dev == sb.st_dev && p->ino == sb.st_ino)
			break;
	if (p == NULL || counter == 0) {
		if (pub_record_highest(dirfd, &highest, err, errlen) == -1)
			return (-1);
		if (p == NULL) {
			if ((p = calloc(1, sizeof(*p))) == NULL)
				return (errfmt(err, errlen,
				    "pulls: out of memory"));
			p->dev = sb.st_dev;
			p->ino = sb.st_ino;
			SLIST_INSERT_HEAD(&pub_pulls_known, p, entry);
		}
		if (highest > p->highest)
			p->highest = highest;
	}
	if (counter > p->highest)
		p->highest = counter;
	if (p->highest >= INT_MAX - 1)
		return (errfmt(err, errlen, "pulls: numbers exhausted"));
	if (pub_counter_write(lockfd, p->highest + 1, err, errlen) == -1)
		return (-1);
	*next = ++p->highest;
	return (0);
}

static json_t *
pub_record_make(const struct publish_req *req, int number, char *err,
    size_t errlen)
{
	char		 head[128], digest[SHA256_HEX_LEN + 1];
	char		 vhash[sizeof("sha256:") + SHA256_HEX_LEN];
	char		 created[32];
	struct tm	 tm;
	time_t		 now = time(NULL);
	json_t		*j;

	snprintf(head, sizeof(head), "%s%s", PUB_BRANCH_PREFIX, req->attempt);
	if (sha256_hex(req->verdict, strlen(req->verdict), digest) != 0) {
		errfmt(err, errlen, "pull record: sha256 failed");
		return (NULL);
	}
	snprintf(vhash, sizeof(vhash), "sha256:%s", digest);
	if (gmtime_r(&now, &tm) == NULL ||
	    strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		errfmt(err, errlen, "pull record: cannot format the time");
		return (NULL);
	}
	/* json_string fails on invalid UTF-8, e.g. in the title. */
	j = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
	    "number", number, "head", head, "base", req->base,
	    "title", req->title, "attempt", req->attempt,
	    "commit", req->commit, "verdict", vhash, "created", created);
	if (j == NULL)
		errfmt(err, errlen, "pull record: title or base is not "
		    "valid UTF-8");
	return (j);
}

/* Temporary file, fsync, rename, fsync of the directory. */
static int
pub_record_write(int dirfd, const char *attempt, json_t *j, char *err,
    size_t errlen)
{
	char	 name[ATTEMPT_ID_MAX + 8], tmp[ATTEMPT_ID_MAX + 16];
	char	*text;
	size_t	 len, off = 0;
	ssize_t	 n;
	int	 fd, rv = -1;

	snprintf(name, sizeof(name), "%s.json", attempt);
	snprintf(tmp, sizeof(tmp), ".%s.json.tmp", attempt);
	if ((text = json_dumps(j, JSON_PRESERVE_ORDER | JSON_INDENT(2))) ==
	    NULL)
		return (errfmt(err, errlen, "pull record: out of memory"));
	len = strlen(text);
	text[len++] = '\n';	/* replaces the NUL; len counts bytes */
	/* A leftover of a crash holds no number anyone was told. */
	if (unlinkat(dirfd, tmp, 0) == -1 && errno != ENOENT) {
		errfmt(err, errlen, "pulls/%s: %s", tmp, strerror(errno));
		goto done;
	}
	if ((fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0644)) == -1) {
		errfmt(err, errlen, "pulls/%s: %s", tmp, strerror(errno));
		goto done;
	}
	while (off < len) {
		if ((n = write(fd, text + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += n;
	}
	if (off != len || fsync(fd) == -1) {
		errfmt(err, errlen, "pulls/%s: %s", tmp, strerror(errno));
		close(fd);
		unlinkat(dirfd, tmp, 0);
		goto done;
	}
	if (close(fd) == -1 || renameat(dirfd, tmp, dirfd, name) == -1) {
		errfmt(err, errlen, "pulls/%s: %s", name, strerror(errno));
		unlinkat(dirfd, tmp, 0);
		goto done;
	}
	if (fsync(dirfd) == -1) {
		errfmt(err, errlen, "pulls: fsync: %s", strerror(errno));
		goto done;
	}
	rv = 0;
 done:
	free(text);
	return (rv);
}

/* A record a later publication closed: "state": "closed". */
static int
pub_record_closed(json_t *j)
{
	json_t	*st = json_object_get(j, "state");

	return (json_is_string(st) && strcmp(json_string_value(st),
	    "closed") == 0);
}

/*
 * The pulls directory and its lock file, held exclusively: every
 * record is read and written under it.  -1 and err if not; what was
 * opened is in *dirfd and *lockfd either way (-1 if not), for the
 * caller to close.
 */
static int
pub_pulls_lock(const struct publish_req *req, int *dirfd, int *lockfd,
    char *err, size_t errlen)
{
	*lockfd = -1;
	if ((*dirfd = open(req->pulls, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return (errfmt(err, errlen, "%s: %s", req->pulls,
		    strerror(errno)));
	if ((*lockfd = openat(*dirfd, PUB_LOCKFILE, O_RDWR | O_CREAT |
	    O_NOFOLLOW | O_CLOEXEC, 0600)) == -1 ||
	    flock(*lockfd, LOCK_EX) == -1)
		return (errfmt(err, errlen, "%s/%s: %s", req->pulls,
		    PUB_LOCKFILE, strerror(errno)));
	return (0);
}

/*
 * forge local, as the github forge's supersede: the members of the
 * cohort whose selection failed may have left a branch in the remote
 * (a failure after the push) and a record.  Under the pulls lock,
 * everything is checked before anything changes: a member's record
 * must name its commit, its branch must hold it (never deleted
 * otherwise); then each record open is closed ("state": "closed",
 * "closed_by": this attempt) and each branch deleted.
 */
static int
pub_supersede(const struct publish_req *req, char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_reference	*ref;
	git_oid		 oid;
	json_t		**recs = NULL, *c;
	char		 name[ATTEMPT_ID_MAX + 8], refname[256];
	size_t		 i;
	int		 dirfd = -1, lockfd = -1, absent, *present = NULL;
	int		 rc, rv = -1;

	if (req->nsupersede == 0)
		return (0);
	if ((recs = calloc(req->nsupersede, sizeof(*recs))) == NULL ||
	    (present = calloc(req->nsupersede, sizeof(*present))) == NULL) {
		free(recs);
		return (errfmt(err, errlen, "supersede: out of memory"));
	}
	if (pub_pulls_lock(req, &dirfd, &lockfd, err, errlen) == -1)
		goto done;
	if (git_repository_open_ext(&repo, req->remote,
	    GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_NO_DOTGIT,
	    NULL) < 0 || !git_repository_is_bare(repo)) {
		gitc_err(err, errlen, "remote %s", req->remote);
		goto done;
	}
	for (i = 0; i < req->nsupersede; i++) {
		snprintf(name, sizeof(name), "%s.json", req->supersede[i].id);
		if ((recs[i] = pub_record_read(dirfd, name, &absent, err,
		    errlen)) == NULL && !absent)
			goto done;
		c = json_object_get(recs[i], "commit");
		if (recs[i] != NULL && (!json_is_string(c) ||
		    strcmp(json_string_value(c), req->supersede[i].commit) !=
		    0)) {
			errfmt(err, errlen, "pull record %s names another "
			    "commit than %s's: not closed", name,
			    req->supersede[i].id);
			goto done;
		}
		snprintf(refname, sizeof(refname), "%s%s", PUB_REF_PREFIX,
		    req->supersede[i].id);
		if (git_oid_fromstr(&oid, req->supersede[i].commit) < 0 ||
		    (present[i] = pub_branch_state(repo, refname, &oid, err,
		    errlen)) == -1) {
			rc = strlen(err);
			snprintf(err + rc, errlen - rc, ": branch of %s, "
			    "superseded, not deleted", req->supersede[i].id);
			goto done;
		}
	}
	for (i = 0; i < req->nsupersede; i++) {
		if (recs[i] == NULL || pub_record_closed(recs[i]))
			continue;
		if (json_object_set_new(recs[i], "state",
		    json_string("closed")) == -1 || json_object_set_new(
		    recs[i], "closed_by", json_string(req->attempt)) == -1 ||
		    pub_record_write(dirfd, req->supersede[i].id, recs[i],
		    err, errlen) == -1)
			goto done;
		log_info("%s: closed pull record %d of %s, superseded in "
		    "cohort %s", req->attempt, pub_record_number(recs[i]),
		    req->supersede[i].id, req->cohort);
	}
	for (i = 0; i < req->nsupersede; i++) {
		if (!present[i])
			continue;
		snprintf(refname, sizeof(refname), "%s%s", PUB_REF_PREFIX,
		    req->supersede[i].id);
		/*
		 * Looked up again right before the delete, still under the
		 * lock: a push since (git-receive-pack takes no pulls lock)
		 * moved it, and a branch holding another commit than the
		 * member's is not deleted.
		 */
		if (git_oid_fromstr(&oid, req->supersede[i].commit) < 0) {
			errfmt(err, errlen, "supersede: bad commit of %s",
			    req->supersede[i].id);
			goto done;
		}
		rc = git_reference_lookup(&ref, repo, refname);
		if (rc == GIT_ENOTFOUND)
			continue;
		if (rc == 0 && (git_reference_type(ref) !=
		    GIT_REFERENCE_DIRECT ||
		    !git_oid_equal(git_reference_target(ref), &oid))) {
			git_reference_free(ref);
			errfmt(err, errlen, "remote: %s moved since it was "
			    "checked: branch of %s, superseded, not deleted",
			    refname, req->supersede[i].id);
			goto done;
		}
		if (rc == 0) {
			rc = git_reference_delete(ref);
			git_reference_free(ref);
		}
		if (rc < 0) {
			gitc_err(err, errlen, "remote: delete %s of %s, "
			    "superseded", refname, req->supersede[i].id);
			goto done;
		}
		log_info("%s: branch %s%s deleted, superseded in cohort %s",
		    req->attempt, PUB_BRANCH_PREFIX, req->supersede[i].id,
		    req->cohort);
	}
	rv = 0;
 done:
	for (i = 0; i < req->nsupersede; i++)
		json_decref(recs[i]);
	free(recs);
	free(present);
	git_repository_free(repo);
	if (lockfd != -1)
		close(lockfd);
	if (dirfd != -1)
		close(dirfd);
	return (rv);
}

/*
 * Find or make the attempt's record, all under the lock so that two
 * publications can neither share a number nor make two records.  The
 * attestations beside it (pubattest.c) are written every time, and
 * before a new record: the record, the pull request, is the last
 * thing made.  A publication that fails before its record was renamed
 * into place removes them, so that it has made neither.
 */
static int
pub_record(const struct publish_req *req, int *number, int *created,
    char *err, size_t errlen)
{
	json_t		*j = NULL, *c;
	char		 name[ATTEMPT_ID_MAX + 8], why[512];
	int		 dirfd, lockfd = -1, absent, next = 0, rv = -1;

	*created = 0;
	snprintf(name, sizeof(name), "%s.json", req->attempt);
	if (pub_pulls_lock(req, &dirfd, &lockfd, err, errlen) == -1) {
		if (dirfd == -1)
			return (-1);
		goto done;
	}
	if ((j = pub_record_read(dirfd, name, &absent, err, errlen)) != NULL) {
		c = json_object_get(j, "commit");
		if (!json_is_string(c) ||
		    strcmp(json_string_value(c), req->commit) != 0) {
			errfmt(err, errlen, "pull record %s names another "
			    "commit", name);
			goto done;
		}
		*number = pub_record_number(j);
		if (pub_attest_local(req, err, errlen) == -1)
			goto done;
		/*
		 * A cohort's member selected again after another's
		 * publication closed its record: the selection is the
		 * operator's word that this one is published.  Reopened
		 * last, as a new record is made last.
		 */
		if (pub_record_closed(j) && req->cohort != NULL) {
			json_object_del(j, "closed_by");
			if (json_object_set_new(j, "state",
			    json_string("open")) == -1 ||
			    pub_record_write(dirfd, req->attempt, j, err,
			    errlen) == -1)
				goto done;
			*created = 1;
		}
		rv = 0;
		goto done;
	}
	if (!absent)
		goto done;
	if (pub_number_next(dirfd, lockfd, &next, err, errlen) == -1 ||
	    (j = pub_record_make(req, next, err, errlen)) == NULL ||
	    pub_attest_local(req, err, errlen) == -1 ||
	    pub_record_write(dirfd, req->attempt, j, err, errlen) == -1) {
		/* Renamed, but the directory not synced: it stays. */
		if (faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
		    pub_attest_unlink(req, why, sizeof(why)) == 0)
			goto done;
		strlcat(err, "; not removed: ", errlen);
		strlcat(err, why, errlen);
		goto done;
	}
	*number = next;
	*created = 1;
	rv = 0;
 done:
	json_decref(j);
	if (lockfd != -1)
		close(lockfd);	/* releases the lock */
	close(dirfd);
	return (rv);
}

void
publish_local_forget(void)
{
	struct pub_pulls	*p;

	while ((p = SLIST_FIRST(&pub_pulls_known)) != NULL) {
		SLIST_REMOVE_HEAD(&pub_pulls_known, entry);
		free(p);
	}
}

/* The fault point's wait, until the parent is gone; then _exit. */
static void
pub_stall(void)
{
	pid_t	 parent = getppid();

	log_warnx("fault point publisher:stall-after-push: waiting for the "
	    "parent to die");
	while (getppid() == parent)
		sleep(1);
	_exit(CRASH_EXIT);
}

int
publish_local(const struct publish_req *req, struct publish_result *res,
    char *err, size_t errlen)
{
	struct pub_bundle	 b;
	struct attest_summary	 as;
	int			 branch_made, record_made, number = 0;
	size_t			 plen;

	memset(res, 0, sizeof(*res));
	if (errlen > 0)
		err[0] = '\0';
	if (pub_check_req(req, err, errlen) == -1 ||
	    pub_check_verdict(req, err, errlen) == -1 ||
	    pub_attest_check(req, &as, err, errlen) == -1)
		return (-1);
	memset(&b, 0, sizeof(b));
	if (!req->adopt && pub_bundle_header(req, &b, err, errlen) == -1)
		return (-1);
	/* The cohort's failed selections first: nothing of ours yet. */
	if (pub_supersede(req, err, errlen) == -1)
		return (-1);
	if (pub_push(req, req->adopt ? NULL : &b, &branch_made, err,
	    errlen) == -1)
		return (-1);
	/* With the evidence beside it, all or nothing. */
	if (pub_record(req, &number, &record_made, err, errlen) == -1)
		return (-1);

	snprintf(res->branch, sizeof(res->branch), "%s%s", PUB_BRANCH_PREFIX,
	    req->attempt);
	plen = strlen(req->pulls);
	if ((size_t)snprintf(res->record, sizeof(res->record), "%s%s%s.json",
	    req->pulls, plen > 0 && req->pulls[plen - 1] == '/' ? "" : "/",
	    req->attempt) >= sizeof(res->record))
		return (errfmt(err, errlen, "pulls: path too long"));
	res->number = number;
	res->reused = !branch_made && !record_made;
	log_debug("published %s at %s: %s, pull %d%s", req->attempt,
	    req->commit, res->branch, number, res->reused ? " (reused)" : "");
	return (0);
}
