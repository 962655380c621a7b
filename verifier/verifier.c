/*
 * factory-verifier: re-derives every fact of one bundle from the bundle
 * and the frozen manifest alone, asks the parent for an independent
 * validation run, and signs the verdict.  It serves one verification
 * and exits; the parent starts a fresh one, so nothing a hostile bundle
 * did survives into the next.  Started only by factoryd, on fd 3.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <event.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attest.h"
#include "crypto.h"
#include "esc.h"
#include "factory.h"
#include "imsgev.h"
#include "log.h"
#include "msg.h"
#include "pledge.h"
#include "receipt.h"
#include "toolchain.h"
#include "util.h"
#include "verifier.h"

#define LOG_SCAN_MAX	(1024 * 1024)	/* bytes of the log scanned */
/*
 * A verdict travels as one imsg: the findings it lists are cut to fit
 * (the count and the decision never are).
 */
#define VERDICT_MSG_MAX	(FACTORY_MAXIMSG - 1024)

static int	verifier_imsg(struct imsg *);
static void	verifier_verify(int);
static void	verifier_validated(const struct msg_validate_done *);
static void	verifier_verdict(const char *);
static int	verify_baseline(const struct msg_verify *);
static void	verifier_pcheck(const struct msg_pcheck *, int);

static struct imsgev	 iev_parent;
static EVP_PKEY		*signkey;

/* The one verification this process serves. */
static struct {
	struct msg_verify	 req;		/* have_req: decoded */
	int			 have_req;
	int			 logfd;
	int			 rootfd;	/* the image's rootfs, or -1 */
	int			 pristinefd;	/* the baseline's checkout */
	const char		*pristine;	/* same, differs or unchecked */
	char			 baseline_tree[GITV_HEXSZ + 1];
	int			 done;
	struct recheck_result	 res;
	char			**findings;	/* escaped, esc.h */
	size_t			 nfindings;	/* what the verdict counts */
	json_t			*validation;
	char			 bundle_sha256[SHA256_HEX_LEN + 1];
} cur = { .logfd = -1, .rootfd = -1, .pristinefd = -1,
    .pristine = "unchecked" };

int
main(int argc, char *argv[])
{
	const char	*keypath;
	char		 err[256];
	int		 fd;

	/* Policy first: fd 3 check, closefrom, unveil, pledge. */
	fd = proc_child_init(PROC_VERIFIER, argc, argv);
	if ((keypath = proc_getvar("verifier_key")) == NULL)
		fatalx("no verifier_key given");
	if ((signkey = ed25519_load_pem(keypath, err, sizeof(err))) == NULL)
		fatalx("verifier key: %s", err);
	if (gitv_init(err, sizeof(err)) == -1)
		fatalx("libgit2: %s", err);

	child_start(&iev_parent, fd, verifier_imsg);

	event_dispatch();
	return (0);
}

/*
 * One finding, kept in the suite's encoding (esc.h): the bytes of a
 * path are whatever the bundle says, so they are escaped here, once.
 * It is counted before anything else can go wrong: a finding that
 * cannot be formatted or encoded still rejects the bundle.
 */
static void
finding(const char *fmt, ...)
{
	va_list	 ap;
	char	*raw = NULL, *enc = NULL, **v;
	int	 n;

	cur.nfindings++;
	va_start(ap, fmt);
	n = vasprintf(&raw, fmt, ap);
	va_end(ap);
	if (n == -1 || (enc = esc_strdup(raw, n)) == NULL) {
		free(enc);
		enc = NULL;
		if (asprintf(&enc, "finding %zu: cannot be encoded",
		    cur.nfindings) == -1)
			fatal(NULL);
	}
	if (n != -1)
		free(raw);
	if ((v = reallocarray(cur.findings, cur.nfindings,
	    sizeof(*v))) == NULL)
		fatal(NULL);
	cur.findings = v;
	cur.findings[cur.nfindings - 1] = enc;
}

static char *
read_log(size_t *len)
{
	char	*buf;
	ssize_t	 n;
	size_t	 off = 0;

	*len = 0;
	if (cur.logfd == -1 || (buf = malloc(LOG_SCAN_MAX + 1)) == NULL)
		return (NULL);
	while (off < LOG_SCAN_MAX && (n = pread(cur.logfd, buf + off,
	    LOG_SCAN_MAX - off, off)) > 0)
		off += n;
	buf[off] = '\0';
	*len = off;
	return (buf);
}

/*
 * The environment, checked again from the image itself: the rootfs is
 * the digest's directory of the store, root's and written by no one
 * else, and its toolchain gives the digest frozen at submission.
 * Any difference is a finding: the run was not the one the manifest
 * was accepted for.
 */
static void
verify_environment(const struct msg_verify *o)
{
	struct stat	 st;
	char		 want[PATH_MAX], hex[SHA256_HEX_LEN + 1], err[512];
	size_t		 n, w;
	int		 fd;

	if (o->image[0] == '\0')
		return;
	snprintf(want, sizeof(want), "/images/sha256/%s/rootfs",
	    o->image + strlen("sha256:"));
	n = strlen(o->rootfs);
	w = strlen(want);
	if (n < w || strcmp(o->rootfs + n - w, want) != 0) {
		finding("environment: rootfs %s is not image %s's", o->rootfs,
		    o->image);
		return;
	}
	/* The store above the rootfs is root's alone: the parent opened it. */
	if ((fd = cur.rootfd) == -1) {
		finding("environment: image %s: no rootfs given", o->image);
		return;
	}
	cur.rootfd = -1;
	if (fstat(fd, &st) == -1 || st.st_uid != 0 ||
	    (st.st_mode & 022) != 0) {
		finding("environment: image %s: rootfs not root's alone",
		    o->image);
		close(fd);
		return;
	}
	if (o->ntools > 0) {
		if (toolchain_digest(fd, o->tools, hex, err,
		    sizeof(err)) == -1)
			finding("environment: image %s: %s", o->image, err);
		else if (strcmp(hex, o->toolchain + strlen("sha256:")) != 0)
			finding("environment: image %s: toolchain digest "
			    "sha256:%s, not the %s frozen at submission",
			    o->image, hex, o->toolchain);
	}
	close(fd);
}

/* cur.req is the parent's request; bfd the bundle. */
static void
verifier_verify(int bfd)
{
	struct msg_verify	*o = &cur.req;
	struct msg_validate_req	 m;
	struct vbundle		 vb;
	struct recheck_req	 rq;
	char			 err[512], gitdir[PATH_MAX];
	char			 checkout[PATH_MAX], *log;
	size_t			 i, loglen;
	const char		*dir = o->dir;

	log_info("%s: verifying", o->id);
	verify_environment(o);
	if (cur.nfindings > 0)
		goto verdict;

	/* The bundle's SHA-256, read by us, never taken from the worker. */
	if (bfd == -1 || sha256_fd(bfd, cur.bundle_sha256,
	    NULL) == -1) {
		finding("bundle: cannot be read");
		goto verdict;
	}
	if (strcmp(cur.bundle_sha256, o->bundle_sha256) != 0) {
		finding("bundle: sha256 %s, the worker reported %s",
		    cur.bundle_sha256, o->bundle_sha256);
		goto verdict;
	}
	if (vbundle_open(bfd, &vb, err, sizeof(err)) == -1) {
		finding("bundle: %s", err);
		goto verdict;
	}
	if (strcmp(vb.attempt_id, o->id) != 0 ||
	    strcmp(vb.commit, o->commit) != 0) {
		finding("bundle: holds factory/%s at %s, expected factory/%s "
		    "at %s", vb.attempt_id, vb.commit, o->id, o->commit);
		goto verdict;
	}
	snprintf(gitdir, sizeof(gitdir), "%s/scratch.git", dir);
	if (vbundle_index(&vb, o->repo, gitdir, o->baseline, err,
	    sizeof(err)) == -1) {
		finding("bundle: %s", err);
		goto verdict;
	}

	log = read_log(&loglen);
	memset(&rq, 0, sizeof(rq));
	rq.gitdir = vb.gitdir;
	rq.commit_hex = vb.commit;
	rq.attempt_id = o->id;
	rq.baseline_hex = o->baseline;
	rq.scope = o->scope;
	rq.title = o->title;
	rq.manifest_digest = o->digest;
	rq.log = log;
	rq.loglen = loglen;
	if (recheck(&rq, &cur.res, err, sizeof(err)) == -1)
		finding("recheck: %s", err);
	free(log);
	for (i = 0; i < cur.res.nfindings; i++)
		finding("%s", cur.res.findings[i]);
	if (cur.nfindings > 0)
		goto verdict;

	if (verify_baseline(o) == -1)
		goto verdict;
	snprintf(checkout, sizeof(checkout), "%s/checkout", dir);
	if (vcheckout(vb.gitdir, vb.commit, checkout, err, sizeof(err)) ==
	    -1) {
		finding("checkout: %s", err);
		goto verdict;
	}
	/* The parent runs validate in a fresh sandbox and witnesses it. */
	memset(&m, 0, sizeof(m));
	strlcpy(m.id, o->id, sizeof(m.id));
	if (msg_compose(&iev_parent, IMSG_VALIDATE_REQ, MSG_VALIDATE_REQ, -1,
	    &m, err, sizeof(err)) == -1)
		fatalx("%s", err);
	return;
 verdict:
	verifier_verdict(NULL);
}

/*
 * The lower layer of the validation tree is the baseline's pristine
 * checkout, which the worker made: before a byte of it is used, it
 * must be the baseline's tree, entry by entry (vtree.c).  -1 with a
 * finding when it is not, or cannot be told.
 */
static int
verify_baseline(const struct msg_verify *o)
{
	git_repository	*repo;
	char		 where[PATH_MAX + 256], err[512], *enc;
	uint64_t	 t0 = now_ms();
	int		 rc;

	if (cur.pristinefd == -1) {
		finding("baseline: no pristine tree to check");
		return (-1);
	}
	if ((rc = vtree_open(o->repo, &repo, err, sizeof(err))) == 0) {
		rc = vtree_check(repo, o->baseline, cur.pristinefd,
		    cur.baseline_tree, where, sizeof(where), err, sizeof(err));
		git_repository_free(repo);
	}
	close(cur.pristinefd);
	cur.pristinefd = -1;
	if (rc == -1) {
		finding("baseline: pristine tree of %s: %s", o->baseline, err);
		return (-1);
	}
	if (rc == 1) {
		/* Names from the worker's tree: hostile bytes, escaped. */
		cur.pristine = "differs";
		if ((enc = esc_strdup(where, strlen(where))) == NULL)
			fatal(NULL);
		log_warnx("%s: pristine tree of %s is not its tree %s: %s",
		    o->id, o->baseline, cur.baseline_tree, enc);
		free(enc);
		finding("baseline: pristine tree of %s is not its tree %s: %s",
		    o->baseline, cur.baseline_tree, where);
		return (-1);
	}
	cur.pristine = "same";
	log_info("%s: pristine tree of %s is its tree %s (%llu ms)", o->id,
	    o->baseline, cur.baseline_tree, (unsigned long long)(now_ms() -
	    t0));
	return (0);
}

/*
 * Before the first attempt takes a pristine tree as its baseline: is
 * it the baseline's tree?  One answer, then this process makes way.
 */
static void
verifier_pcheck(const struct msg_pcheck *q, int fd)
{
	struct msg_pchecked	 m;
	git_repository		*repo;
	char			 where[PATH_MAX + 256], err[512], *enc;
	const char		*why;
	uint64_t		 t0 = now_ms();
	int			 rc = -1;

	memset(&m, 0, sizeof(m));
	strlcpy(m.id, q->id, sizeof(m.id));
	strlcpy(m.baseline, q->baseline, sizeof(m.baseline));
	if (fd == -1)
		strlcpy(err, "no pristine tree to check", sizeof(err));
	else if (vtree_open(q->repo, &repo, err, sizeof(err)) == 0) {
		rc = vtree_check(repo, q->baseline, fd, m.tree, where,
		    sizeof(where), err, sizeof(err));
		git_repository_free(repo);
	}
	if (fd != -1)
		close(fd);
	m.same = rc == 0;
	m.differs = rc == 1;
	if (rc != 0) {
		/* Cut before it is escaped: an escape is never cut. */
		why = rc == 1 ? where : err;
		if ((enc = esc_strdup(why, strlen(why) < 1024 ?
		    strlen(why) : 1024)) == NULL)
			fatal(NULL);
		strlcpy(m.error, enc, sizeof(m.error));
		free(enc);
	}
	log_info("%s: pristine tree of %s: %s%s%s (%llu ms)", q->id,
	    q->baseline, rc == 0 ? "its tree " : rc == 1 ? "not its tree: " :
	    "not checked: ", rc == 0 ? m.tree : "", m.error,
	    (unsigned long long)(now_ms() - t0));
	if (msg_compose(&iev_parent, IMSG_PRISTINE_CHECK, MSG_PCHECKED, -1,
	    &m, err, sizeof(err)) == -1)
		fatalx("%s", err);
	cur.done = 1;
	if (imsgbuf_flush(&iev_parent.ibuf) == -1)
		fatal("flush");
	exit(0);
}

static void
verifier_validated(const struct msg_validate_done *o)
{
	if (!cur.have_req || cur.done || cur.validation != NULL ||
	    strcmp(o->id, cur.req.id) != 0)
		fatalx("validation result for nothing we asked");
	/* The parent recorded the run: our receipt comes after it. */
	cur.req.seq = o->seq;
	strlcpy(cur.req.prev, o->prev, sizeof(cur.req.prev));
	cur.req.epoch = o->epoch;
	if ((cur.validation = json_pack("{s:I, s:b, s:b}", "status",
	    (json_int_t)o->status, "passed", o->passed, "timedout",
	    o->timedout)) == NULL)
		fatal(NULL);
	if (!o->passed)
		finding("validation: %s failed (wait status %lld)",
		    "validate", (long long)o->status);
	verifier_verdict(NULL);
}

/*
 * The verdict's facts as the message's typed fields, listing the first
 * nlisted findings; the receipt signs what receipt_verdict_facts()
 * makes of them, the parent rebuilds it from them.  accepted comes
 * from our own count of findings, never from a JSON array.
 */
static void
verdict_fields(struct msg_verdict *m, int accepted, size_t nlisted)
{
	struct msg_verify *o = &cur.req;
	json_t		*v = cur.validation;

	m->accepted = accepted;
	strlcpy(m->baseline, o->baseline, sizeof(m->baseline));
	strlcpy(m->commit, cur.res.commit_hex, sizeof(m->commit));
	strlcpy(m->tree, cur.res.tree_hex, sizeof(m->tree));
	strlcpy(m->bundle_sha256, cur.bundle_sha256, sizeof(m->bundle_sha256));
	strlcpy(m->manifest_digest, o->digest, sizeof(m->manifest_digest));
	m->findings = cur.findings;
	m->nfindings = nlisted;
	m->findings_total = cur.nfindings;
	if ((m->validated = v != NULL)) {
		m->vstatus = json_integer_value(json_object_get(v, "status"));
		m->vpassed = json_is_true(json_object_get(v, "passed"));
		m->vtimedout = json_is_true(json_object_get(v, "timedout"));
	}
	/* The environment: the image it ran on, or the host's. */
	strlcpy(m->env_image, o->image, sizeof(m->env_image));
	if (o->image[0] != '\0')
		strlcpy(m->env_toolchain, o->toolchain,
		    sizeof(m->env_toolchain));
	/* The tree the validation's baseline was checked against. */
	strlcpy(m->baseline_tree, cur.baseline_tree, sizeof(m->baseline_tree));
	strlcpy(m->pristine, cur.pristine, sizeof(m->pristine));
	m->reason = NULL;
	if (!accepted)
		m->reason = cur.nfindings > 0 ? cur.findings[0] :
		    (char *)"not validated";
}

/* The SLSA verification summary of this verification (attest.h). */
static json_t *
vsa_predicate(const struct msg_verify *o, int accepted)
{
	char	 fp[CRYPTO_FP_SIZE], id[128], uri[128], t[21];
	json_t	*p, *ann;

	if (ed25519_fingerprint(signkey, fp) == -1)
		fatalx("cannot fingerprint the verifier key");
	snprintf(id, sizeof(id), "urn:factory:verifier:%s", fp);
	snprintf(uri, sizeof(uri), "urn:factory:attempt:%s", o->id);
	attest_time((uint64_t)time(NULL) * 1000, t);
	p = json_pack("{s:{s:s, s:{s:s}}, s:s, s:s, s:{s:s, s:{s:s}, s:{s:s}},"
	    " s:[{s:s, s:{s:s}}], s:s, s:[]}",
	    "verifier", "id", id, "version", "factory-verifier",
	    FACTORY_VERSION,
	    "timeVerified", t,
	    "resourceUri", uri,
	    "policy", "uri", "urn:factory:manifest", "digest", "sha256",
	    o->digest + 7, "annotations", "isolationPolicy", o->isolation,
	    "inputAttestations", "uri", "urn:factory:provenance", "digest",
	    "sha256", o->provenance + 7,
	    "verificationResult", accepted ? "PASSED" : "FAILED",
	    "verifiedLevels");
	if (p == NULL)
		fatal(NULL);
	/* The baseline tree the validation tree was checked against. */
	ann = json_object_get(json_object_get(p, "policy"), "annotations");
	if (cur.baseline_tree[0] != '\0' && (json_object_set_new(ann,
	    "baselineCommit", json_string(o->baseline)) == -1 ||
	    json_object_set_new(ann, "baselineTree", json_string(
	    cur.baseline_tree)) == -1))
		fatal(NULL);
	if (accepted)
		json_array_append_new(json_object_get(p, "verifiedLevels"),
		    json_string(ATTEST_LEVEL));
	return (p);
}

/* The in-toto test result of the validation run the parent witnessed. */
static json_t *
test_predicate(const struct msg_verify *o)
{
	int	 passed = json_is_true(json_object_get(cur.validation,
	    "passed"));
	json_t	*p;

	p = json_pack("{s:s, s:[{s:s, s:{s:s}, s:O}], s:[], s:[], s:[]}",
	    "result", passed ? "PASSED" : "FAILED",
	    "configuration", "uri", "urn:factory:manifest:validate", "digest",
	    "sha256", o->digest + 7, "annotations", cur.validation,
	    "passedTests", "warnedTests", "failedTests");
	if (p == NULL)
		fatal(NULL);
	json_array_append_new(json_object_get(p, passed ? "passedTests" :
	    "failedTests"), json_string("validate"));
	return (p);
}

/*
 * The envelopes the verdict carries, signed with our key: none when
 * the bundle never gave a commit and a tree to name.
 */
static void
verdict_attest(int accepted, char **vsa, char **tr)
{
	struct msg_verify *o = &cur.req;
	json_t		*st;

	*vsa = *tr = NULL;
	if (o->provenance[0] == '\0' || cur.res.commit_hex[0] == '\0' ||
	    cur.res.tree_hex[0] == '\0')
		return;
	st = attest_statement(attest_subject(cur.res.commit_hex,
	    cur.res.tree_hex, cur.bundle_sha256), ATTEST_VSA,
	    vsa_predicate(o, accepted));
	if (st == NULL || (*vsa = attest_sign(st, signkey, NULL)) == NULL)
		fatalx("cannot sign the verification summary");
	json_decref(st);
	if (cur.validation == NULL)
		return;
	st = attest_statement(attest_subject(cur.res.commit_hex,
	    cur.res.tree_hex, cur.bundle_sha256), ATTEST_TEST_RESULT,
	    test_predicate(o));
	if (st == NULL || (*tr = attest_sign(st, signkey, NULL)) == NULL)
		fatalx("cannot sign the test result");
	json_decref(st);
}

/*
 * The verdict, as a receipt of the attempt's chain signed with our key:
 * the parent gave us the sequence number and the previous hash, and
 * takes the line only if it is the one it makes of the message's typed
 * fields.  It lists as many findings as fit in one message, and always
 * counts them all.
 */
static void
verifier_verdict(const char *unused)
{
	struct msg_verify *o = &cur.req;
	struct msg_verdict m;
	char		*line, *s, err[MSG_ERRLEN], *vsa, *tr;
	size_t		 nlisted, len;
	time_t		 when;
	int		 accepted;

	accepted = cur.nfindings == 0 && cur.validation != NULL &&
	    json_is_true(json_object_get(cur.validation, "passed"));
	crashpoint("verifier:before-verdict");
	verdict_attest(accepted, &vsa, &tr);
	/* A message lists at most MSG_LIST_MAX; the count says all. */
	nlisted = cur.nfindings < MSG_LIST_MAX ? cur.nfindings : MSG_LIST_MAX;
	when = time(NULL);
	for (;;) {
		memset(&m, 0, sizeof(m));
		verdict_fields(&m, accepted, nlisted);
		strlcpy(m.id, o->id, sizeof(m.id));
		m.epoch = o->epoch;
		if (receipt_verdict_sign(&m, o->seq, o->prev, signkey,
		    when) == -1)
			fatalx("cannot sign the verdict");
		line = m.receipt;
		m.vsa = vsa;
		m.test_result = tr;
		if ((s = msg_encode(MSG_VERDICT, &m, &len, err,
		    sizeof(err))) == NULL)
			fatalx("%s", err);
		if (len < VERDICT_MSG_MAX || nlisted == 0)
			break;
		free(s);
		free(line);
		nlisted /= 2;
	}
	if (len >= VERDICT_MSG_MAX)
		fatalx("verdict too long for one message");
	if (imsgev_compose(&iev_parent, IMSG_VERDICT, 0, 0, -1, s, len) == -1)
		fatal("verdict");
	free(s);
	free(line);
	free(vsa);
	free(tr);
	log_info("%s: verdict %s, %zu findings", o->id,
	    accepted ? "accepted" : "rejected", cur.nfindings);
	cur.done = 1;
	/* One verdict per process: deliver it, then make way. */
	if (imsgbuf_flush(&iev_parent.ibuf) == -1)
		fatal("flush");
	exit(0);
}

/*
 * Requests from the parent, decoded strictly; -1 for anything else.
 * A malformed one is a broken parent: we exit.
 */
static int
verifier_imsg(struct imsg *imsg)
{
	struct msg_validate_done	 done;
	struct msg_pcheck		 pc;
	char				 err[MSG_ERRLEN];

	switch (imsg_get_type(imsg)) {
	case IMSG_VERIFY_LOG:
		if (cur.logfd != -1 || imsg_get_len(imsg) != 0)
			return (-1);	/* one log per verification */
		cur.logfd = imsg_get_fd(imsg);
		return (0);
	case IMSG_VERIFY_ROOTFS:
		if (cur.rootfd != -1 || cur.have_req ||
		    imsg_get_len(imsg) != 0)
			return (-1);	/* one, before the request */
		if ((cur.rootfd = imsg_get_fd(imsg)) == -1)
			return (-1);
		return (0);
	case IMSG_PRISTINE_CHECK:
		if (cur.have_req || cur.pristinefd != -1 || cur.logfd != -1)
			return (-1);	/* a verifier does one or the other */
		if (msg_get(imsg, MSG_PCHECK, &pc, err, sizeof(err)) == -1)
			fatalx("from the parent: %s", err);
		cur.have_req = 1;
		verifier_pcheck(&pc, imsg_get_fd(imsg));
		return (0);
	case IMSG_VERIFY_PRISTINE:
		if (cur.pristinefd != -1 || cur.have_req ||
		    imsg_get_len(imsg) != 0)
			return (-1);	/* one, before the request */
		if ((cur.pristinefd = imsg_get_fd(imsg)) == -1)
			return (-1);
		return (0);
	case IMSG_VERIFY:
		if (cur.have_req)
			fatalx("a second verification for one verifier");
		if (msg_get(imsg, MSG_VERIFY, &cur.req, err, sizeof(err)) == -1)
			fatalx("from the parent: %s", err);
		cur.have_req = 1;
		verifier_verify(imsg_get_fd(imsg));
		return (0);
	case IMSG_VALIDATE_DONE:
		if (msg_get(imsg, MSG_VALIDATE_DONE, &done, err,
		    sizeof(err)) == -1)
			fatalx("from the parent: %s", err);
		verifier_validated(&done);
		msg_free(MSG_VALIDATE_DONE, &done);
		return (0);
	}
	return (-1);
}
