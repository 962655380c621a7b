/*
 * Unit tests of publisher/local.c: a real repository, a bare remote
 * owned by another uid, bundles made by git(1), verdicts signed with a
 * key made here.  Every refusal is checked to have changed nothing.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "attest.h"
#include "crypto.h"
#include "factory.h"
#include "../../publisher/publisher.h"

#define REMOTE_UID	4242	/* owns the remote: not us */
#define PUBLISHER_UID	4343	/* the policy test runs as this */

static char		 tmp[PATH_MAX];
static char		 remote[PATH_MAX];
static char		 pulls[PATH_MAX];
static char		 c_main[41], c_a1[41], c_a2[41], c_a3[41];
static EVP_PKEY		*key;
static unsigned char	 pub[32];

static char		 base[PATH_MAX];	/* one per run; holds every tmp */

/* The manifest every verdict here is of, unless a case says otherwise. */
#define MDIGEST		"sha256:0123456789abcdef0123456789abcdef" \
			"0123456789abcdef0123456789abcdef"

static void
sh(const char *fmt, ...)
{
	char	 cmd[4096];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

/* First line of a command's output, "" if none or it failed. */
static void
sh_out(char *out, size_t outlen, const char *fmt, ...)
{
	char	 cmd[4096];
	FILE	*f;
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	out[0] = '\0';
	ck_assert_ptr_nonnull(f = popen(cmd, "r"));
	if (fgets(out, outlen, f) == NULL)
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	if (pclose(f) != 0)
		out[0] = '\0';
}

static void
rev(char out[41], const char *what)
{
	char	 buf[128];

	sh_out(buf, sizeof(buf), "git -C %s/work rev-parse %s", tmp, what);
	ck_assert_uint_eq(strlen(buf), 40);
	memcpy(out, buf, 41);
}

/*
 * work: main (base), factory/a-1 and factory/a-2 on top of it, and
 * factory/a-3 on an unpushed commit.  remote.git: a bare clone taken
 * before a-1, owned by REMOTE_UID.  Bundles a-1, a-2, a-3, two-refs.
 * $HOME/.gitconfig asks for reflogs everywhere: the publisher must
 * not read it (no logs/ appears in the remote).
 */
static void
setup_repos(void)
{
	EVP_PKEY_CTX	*kctx;
	size_t		 len = sizeof(pub);

	snprintf(tmp, sizeof(tmp), "%s/t.XXXXXX", base);
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	ck_assert_int_eq(chmod(tmp, 0755), 0);
	snprintf(remote, sizeof(remote), "%s/remote.git", tmp);
	snprintf(pulls, sizeof(pulls), "%s/pulls", tmp);
	setenv("HOME", tmp, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "t", 1);
	setenv("GIT_AUTHOR_EMAIL", "t@localhost", 1);
	setenv("GIT_COMMITTER_NAME", "t", 1);
	setenv("GIT_COMMITTER_EMAIL", "t@localhost", 1);
	sh("printf '[core]\\n\\tlogAllRefUpdates = always\\n"
	    "[safe]\\n\\tdirectory = *\\n' > %s/.gitconfig", tmp);
	sh("cd %s && git init -q -b main work && cd work && "
	    "echo one > f && git add f && git commit -qm base && "
	    "git clone -q --bare . ../remote.git && "
	    "git checkout -qb factory/a-1 && echo two >> f && "
	    "git commit -qam 'change one' && "
	    "git bundle create ../a-1.bundle factory/a-1 ^main 2>/dev/null && "
	    "git checkout -q main && git checkout -qb factory/a-2 && "
	    "echo three > g && git add g && git commit -qm 'change two' && "
	    "git bundle create ../a-2.bundle factory/a-2 ^main 2>/dev/null && "
	    "git bundle create ../two.bundle factory/a-1 factory/a-2 ^main "
	    "2>/dev/null && "
	    "git checkout -q main && git checkout -qb unpushed && "
	    "echo four > h && git add h && git commit -qm unpushed && "
	    "git checkout -qb factory/a-3 && echo five >> h && "
	    "git commit -qam 'change three' && "
	    "git bundle create ../a-3.bundle factory/a-3 ^unpushed "
	    "2>/dev/null && mkdir ../pulls && "
	    "chown -R %d:%d ../remote.git", tmp, REMOTE_UID, REMOTE_UID);
	rev(c_main, "main");
	rev(c_a1, "factory/a-1");
	rev(c_a2, "factory/a-2");
	rev(c_a3, "factory/a-3");

	ck_assert_ptr_nonnull(kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519,
	    NULL));
	ck_assert_int_eq(EVP_PKEY_keygen_init(kctx), 1);
	key = NULL;
	ck_assert_int_eq(EVP_PKEY_keygen(kctx, &key), 1);
	EVP_PKEY_CTX_free(kctx);
	ck_assert_int_eq(EVP_PKEY_get_raw_public_key(key, pub, &len), 1);
	ck_assert_uint_eq(len, sizeof(pub));
}

static void
teardown_repos(void)
{
	EVP_PKEY_free(key);
	key = NULL;
	if (tmp[0] != '\0')
		sh("rm -rf %s", tmp);
	tmp[0] = '\0';
}

static void
setup(void)
{
	setup_repos();
	pub_git_init();
}

static void
teardown(void)
{
	git_libgit2_shutdown();
	teardown_repos();
}

/* One publication and what it was built from. */
struct pubcase {
	const char		*attempt;
	const char		*bundle;	/* file name in tmp */
	const char		*commit;	/* the request's */
	int			 fd;		/* the bundle if open, or -1 */
	char			 verdict[512];
	unsigned char		 sig[64];
	size_t			 siglen;
	struct publish_result	 res;
	char			 err[512];
	char			*attest[3];	/* envelopes, or none */
	size_t			 nattest;
	const char		*cohort;	/* a cohort's member */
	struct msg_superseded	 supersede[2];
	size_t			 nsupersede;
	int			 adopt;		/* a fleet's: no bundle */
	const char		*mdigest;	/* the request's manifest */
};

static void
sign(struct pubcase *pc)
{
	EVP_MD_CTX	*ctx;

	pc->siglen = sizeof(pc->sig);
	ck_assert_ptr_nonnull(ctx = EVP_MD_CTX_new());
	ck_assert_int_eq(EVP_DigestSignInit(ctx, NULL, NULL, NULL, key), 1);
	ck_assert_int_eq(EVP_DigestSign(ctx, pc->sig, &pc->siglen,
	    (const unsigned char *)pc->verdict, strlen(pc->verdict)), 1);
	EVP_MD_CTX_free(ctx);
}

/* A signed verdict: accepted or not, for the given attempt and commit. */
static void
pubcase(struct pubcase *pc, const char *attempt, const char *bundle,
    const char *commit, int accepted, const char *vcommit)
{
	memset(pc, 0, sizeof(*pc));
	pc->attempt = attempt;
	pc->bundle = bundle;
	pc->commit = commit;
	pc->fd = -1;
	pc->mdigest = MDIGEST;
	snprintf(pc->verdict, sizeof(pc->verdict),
	    "{\"attempt\":\"%s\",\"facts\":{\"accepted\":%s,"
	    "\"commit\":\"%s\",\"manifest_digest\":\"" MDIGEST "\"},"
	    "\"key\":\"SHA256:x\",\"kind\":\"verdict\","
	    "\"signer\":\"verifier\"}", attempt, accepted ? "true" : "false",
	    vcommit);
	sign(pc);
}

static int
run(struct pubcase *pc)
{
	struct publish_req	 req;
	char			 path[PATH_MAX];
	int			 rv;

	snprintf(path, sizeof(path), "%s/%s", tmp, pc->bundle);
	memset(&req, 0, sizeof(req));
	req.attempt = pc->attempt;
	req.remote = remote;
	req.pulls = pulls;
	req.title = "Fix the frobnicator";
	req.base = "main";
	req.commit = pc->commit;
	req.verdict = pc->verdict;
	req.sig = pc->sig;
	req.siglen = pc->siglen;
	req.verifier_pub = pub;
	req.manifest_digest = pc->mdigest;
	req.attest = pc->attest;
	req.nattest = pc->nattest;
	req.cohort = pc->cohort;
	req.supersede = pc->supersede;
	req.nsupersede = pc->nsupersede;
	req.adopt = pc->adopt;
	/* Under a policy the bundle is an fd opened before, as received. */
	if ((req.bundle_fd = pc->fd) == -1 && !pc->adopt)
		ck_assert_int_ne(req.bundle_fd = open(path,
		    O_RDONLY | O_CLOEXEC), -1);
	rv = publish_local(&req, &pc->res, pc->err, sizeof(pc->err));
	if (pc->fd == -1 && !pc->adopt)
		close(req.bundle_fd);
	return (rv);
}

/* The remote's branch factory/<attempt>, "" if absent. */
static void
remote_branch(char out[64], const char *attempt)
{
	sh_out(out, 64, "git -C %s rev-parse -q --verify "
	    "refs/heads/factory/%s^{commit}", remote, attempt);
}

static int
count_dir(const char *dir, const char *suffix)
{
	DIR		*d;
	struct dirent	*de;
	size_t		 len;
	int		 n = 0;

	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] != '.' && len >= strlen(suffix) &&
		    strcmp(de->d_name + len - strlen(suffix), suffix) == 0)
			n++;
	}
	closedir(d);
	return (n);
}

static int
count_packs(void)
{
	char	 dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/objects/pack", remote);
	return (count_dir(dir, ".pack"));
}

/* A refusal: the reason mentions want, and nothing in the forge moved. */
static void
assert_refused(struct pubcase *pc, const char *want, int packs)
{
	char	 b[64];

	ck_assert_int_eq(run(pc), -1);
	if (getenv("TEST_PUBLISH_VERBOSE") != NULL)
		fprintf(stderr, "refused: %s\n", pc->err);
	ck_assert_msg(strstr(pc->err, want) != NULL, "err \"%s\" lacks "
	    "\"%s\"", pc->err, want);
	ck_assert_ptr_null(strchr(pc->err, '\n'));
	remote_branch(b, pc->attempt);
	ck_assert_str_eq(b, "");
	ck_assert_int_eq(count_dir(pulls, ".json"), 0);
	if (packs >= 0)
		ck_assert_int_eq(count_packs(), packs);
	/* No temporary file of the indexer is left behind either. */
	sh("test -z \"$(ls %s/objects/pack | grep -v '^pack-')\"", remote);
}

static void
assert_record(struct pubcase *pc, int number)
{
	json_t		*j;
	json_error_t	 jerr;
	char		 path[PATH_MAX], head[64], vhash[80];
	unsigned char	 md[SHA256_DIGEST_LENGTH];
	const char	*created;
	int		 i;

	snprintf(path, sizeof(path), "%s/%s.json", pulls, pc->attempt);
	ck_assert_str_eq(pc->res.record, path);
	ck_assert_int_eq(pc->res.number, number);
	snprintf(head, sizeof(head), "factory/%s", pc->attempt);
	ck_assert_str_eq(pc->res.branch, head);

	j = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	ck_assert_msg(j != NULL, "%s: %s", path, jerr.text);
	ck_assert_int_eq(json_object_size(j), 8);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "number")),
	    number);
	ck_assert_str_eq(json_string_value(json_object_get(j, "head")), head);
	ck_assert_str_eq(json_string_value(json_object_get(j, "base")), "main");
	ck_assert_str_eq(json_string_value(json_object_get(j, "title")),
	    "Fix the frobnicator");
	ck_assert_str_eq(json_string_value(json_object_get(j, "attempt")),
	    pc->attempt);
	ck_assert_str_eq(json_string_value(json_object_get(j, "commit")),
	    pc->commit);
	SHA256((const unsigned char *)pc->verdict, strlen(pc->verdict), md);
	strlcpy(vhash, "sha256:", sizeof(vhash));
	for (i = 0; i < SHA256_DIGEST_LENGTH; i++)
		snprintf(vhash + 7 + 2 * i, 3, "%02x", md[i]);
	ck_assert_str_eq(json_string_value(json_object_get(j, "verdict")),
	    vhash);
	created = json_string_value(json_object_get(j, "created"));
	ck_assert_ptr_nonnull(created);
	ck_assert_uint_eq(strlen(created), 20);	/* 2026-11-29T09:10:11Z */
	ck_assert_int_eq(created[10], 'T');
	ck_assert_int_eq(created[19], 'Z');
	json_decref(j);
}

static void
assert_published(struct pubcase *pc)
{
	char	 b[64], path[PATH_MAX];

	remote_branch(b, pc->attempt);
	ck_assert_str_eq(b, pc->commit);
	sh_out(b, sizeof(b), "git -C %s log --format=%%H -1 factory/%s",
	    remote, pc->attempt);
	ck_assert_str_eq(b, pc->commit);
	/* The whole history is there: git agrees the remote is intact. */
	sh("git -C %s fsck --no-dangling --no-progress", remote);
	/* $HOME/.gitconfig asked for reflogs; it must have been ignored. */
	snprintf(path, sizeof(path), "%s/logs/refs/heads/factory/%s", remote,
	    pc->attempt);
	ck_assert_int_eq(access(path, F_OK), -1);
}

START_TEST(test_happy)
{
	struct pubcase	 pc;
	char		 refs[256];

	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	ck_assert_msg(run(&pc) == 0, "publish: %s", pc.err);
	ck_assert_int_eq(pc.res.reused, 0);
	assert_published(&pc);
	assert_record(&pc, 1);
	ck_assert_int_eq(count_dir(pulls, ".json"), 1);
	/* Nothing but the one branch changed. */
	sh_out(refs, sizeof(refs), "git -C %s for-each-ref "
	    "--format='%%(refname)' | tr '\\n' ' '", remote);
	ck_assert_str_eq(refs, "refs/heads/factory/a-1 refs/heads/main ");
}
END_TEST

START_TEST(test_twice)
{
	struct pubcase	 pc;
	char		 first[8192], again[8192];

	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	ck_assert_msg(run(&pc) == 0, "publish: %s", pc.err);
	sh_out(first, sizeof(first), "tr -d '\\n' < %s", pc.res.record);
	ck_assert_msg(run(&pc) == 0, "again: %s", pc.err);
	ck_assert_int_eq(pc.res.reused, 1);
	assert_published(&pc);
	assert_record(&pc, 1);
	sh_out(again, sizeof(again), "tr -d '\\n' < %s", pc.res.record);
	ck_assert_str_eq(first, again);
	ck_assert_int_eq(count_dir(pulls, ".json"), 1);
	ck_assert_int_eq(count_dir(pulls, ".tmp"), 0);
	/* The second time nothing was indexed. */
	ck_assert_int_eq(count_packs(), 1);
}
END_TEST

/*
 * A fleet's adoption: the host that pushed was lost before its pull
 * record; another's publisher finishes it from the same request, no
 * bundle, nothing imported.
 */
START_TEST(test_adopt_pushed)
{
	struct pubcase	 pc;
	char		 path[PATH_MAX];

	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	ck_assert_msg(run(&pc) == 0, "publish: %s", pc.err);
	snprintf(path, sizeof(path), "%s/a-1.json", pulls);
	ck_assert_int_eq(unlink(path), 0);
	pc.adopt = 1;
	ck_assert_msg(run(&pc) == 0, "adopt: %s", pc.err);
	ck_assert_int_eq(pc.res.reused, 0);
	assert_published(&pc);
	assert_record(&pc, 2);
	ck_assert_int_eq(count_packs(), 1);
	/* Adopted again: the same record. */
	ck_assert_msg(run(&pc) == 0, "again: %s", pc.err);
	ck_assert_int_eq(pc.res.reused, 1);
	ck_assert_int_eq(count_dir(pulls, ".json"), 1);
}
END_TEST

/* Lost before the push: nothing to finish, and nothing made. */
START_TEST(test_adopt_never_pushed)
{
	struct pubcase	 pc;

	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	pc.adopt = 1;
	assert_refused(&pc, "branch factory/a-1 is not on the forge", 0);
}
END_TEST

START_TEST(test_second_attempt)
{
	struct pubcase	 p1, p2;

	pubcase(&p1, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	pubcase(&p2, "a-2", "a-2.bundle", c_a2, 1, c_a2);
	ck_assert_msg(run(&p1) == 0, "publish a-1: %s", p1.err);
	ck_assert_msg(run(&p2) == 0, "publish a-2: %s", p2.err);
	ck_assert_int_eq(p2.res.reused, 0);
	assert_published(&p1);
	assert_published(&p2);
	assert_record(&p1, 1);
	assert_record(&p2, 2);
	ck_assert_int_eq(count_dir(pulls, ".json"), 2);
	/* Replays keep their numbers. */
	ck_assert_int_eq(run(&p1), 0);
	ck_assert_int_eq(p1.res.number, 1);
	ck_assert_int_eq(run(&p2), 0);
	ck_assert_int_eq(p2.res.number, 2);
}
END_TEST

/*
 * The attestations of a publication: provenance by a key of the
 * parent's, summary and test result by the verifier key (key), about
 * commit with result res.
 */
static void
attest_case(struct pubcase *pc, EVP_PKEY *vkey, const char *commit,
    const char *res)
{
	EVP_PKEY	*rkey;
	json_t		*st;
	char		 d[SHA256_HEX_LEN + 1];
	const char	*tree = "89abcdef0123456789abcdef0123456789abcdef";
	const char	*bundle = "00112233445566778899aabbccddeeff"
	    "00112233445566778899aabbccddeeff";

	ck_assert_ptr_nonnull(rkey = ed25519_generate());
	st = attest_statement(attest_subject(commit, tree, bundle),
	    ATTEST_PROVENANCE, json_object());
	ck_assert_ptr_nonnull(pc->attest[0] = attest_sign(st, rkey, d));
	json_decref(st);
	st = attest_statement(attest_subject(commit, tree, bundle), ATTEST_VSA,
	    json_pack("{s:[{s:s, s:{s:s}}], s:s, s:{s:{s:s}}}",
	    "inputAttestations", "uri", "p", "digest", "sha256", d,
	    "verificationResult", res, "policy", "annotations",
	    "baselineTree", tree));
	ck_assert_ptr_nonnull(pc->attest[1] = attest_sign(st, vkey, NULL));
	json_decref(st);
	st = attest_statement(attest_subject(commit, tree, bundle),
	    ATTEST_TEST_RESULT, json_pack("{s:s}", "result", res));
	ck_assert_ptr_nonnull(pc->attest[2] = attest_sign(st, vkey, NULL));
	json_decref(st);
	pc->nattest = 3;
	EVP_PKEY_free(rkey);
}

static void
attest_free(struct pubcase *pc)
{
	size_t	 i;

	for (i = 0; i < pc->nattest; i++)
		free(pc->attest[i]);
	pc->nattest = 0;
}

/* Beside the record, exactly the envelopes; refused if any is wrong. */
START_TEST(test_attestations)
{
	struct pubcase	 pc;
	EVP_PKEY	*other;
	char		 path[PATH_MAX], want[16384], got[16384];
	FILE		*f;
	int		 packs = count_packs();

	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	attest_case(&pc, key, c_a1, "FAILED");
	assert_refused(&pc, "attestations: FAILED", packs);
	attest_free(&pc);
	attest_case(&pc, key, c_a2, "PASSED");
	assert_refused(&pc, "not PASSED for", packs);
	attest_free(&pc);
	ck_assert_ptr_nonnull(other = ed25519_generate());
	attest_case(&pc, other, c_a1, "PASSED");
	assert_refused(&pc, "not the pinned verifier key", packs);
	attest_free(&pc);
	EVP_PKEY_free(other);
	attest_case(&pc, key, c_a1, "PASSED");
	pc.attest[1][strlen(pc.attest[1]) - 10] ^= 0x01;
	assert_refused(&pc, "attestations: envelope 2: sig", packs);
	pc.attest[1][strlen(pc.attest[1]) - 10] ^= 0x01;
	ck_assert_msg(run(&pc) == 0, "publish: %s", pc.err);
	snprintf(path, sizeof(path), "%s/a-1.intoto.jsonl", pulls);
	snprintf(want, sizeof(want), "%s\n%s\n%s\n", pc.attest[0],
	    pc.attest[1], pc.attest[2]);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	got[fread(got, 1, sizeof(got) - 1, f)] = '\0';
	fclose(f);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(count_dir(pulls, ".new"), 0);
	attest_free(&pc);
}
END_TEST

START_TEST(test_bad_signature)
{
	struct pubcase	 pc;
	int		 packs = count_packs();

	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	pc.sig[10] ^= 0x01;
	assert_refused(&pc, "bad signature", packs);

	/* Signed bytes that differ from the verdict given. */
	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	strlcat(pc.verdict, " ", sizeof(pc.verdict));
	assert_refused(&pc, "bad signature", packs);

	/* A key other than the pinned one. */
	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	pub[0] ^= 0x01;
	assert_refused(&pc, "bad signature", packs);
	pub[0] ^= 0x01;

	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	pc.siglen = 63;
	assert_refused(&pc, "signature is 63 bytes", packs);
}
END_TEST

START_TEST(test_other_commit)
{
	struct pubcase	 pc;
	int		 packs = count_packs();

	/* The verdict accepted another commit than the one asked for. */
	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_main);
	assert_refused(&pc, "verdict: not for commit", packs);
	/* Verdict and request agree, the bundle holds something else. */
	pubcase(&pc, "a-1", "a-1.bundle", c_a2, 1, c_a2);
	assert_refused(&pc, "not the verdict's commit", packs);
	/* A verdict for another attempt. */
	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	snprintf(pc.verdict, sizeof(pc.verdict), "{\"attempt\":\"a-2\","
	    "\"facts\":{\"accepted\":true,\"commit\":\"%s\"},"
	    "\"kind\":\"verdict\",\"signer\":\"verifier\"}", c_a1);
	sign(&pc);
	assert_refused(&pc, "verdict: not for attempt a-1", packs);
	/* The right branch of another attempt's bundle. */
	pubcase(&pc, "a-1", "a-2.bundle", c_a2, 1, c_a2);
	assert_refused(&pc, "ref is not refs/heads/factory/a-1", packs);
}
END_TEST

/*
 * A request vouching for another manifest than the one the verdict
 * is of (its title and base are that other manifest's): refused, as a
 * publication and as an adoption, and one naming none as well.
 */
START_TEST(test_other_manifest)
{
	struct pubcase	 pc;
	int		 packs = count_packs();

	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	pc.mdigest = "sha256:1123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	assert_refused(&pc, "verdict: of manifest " MDIGEST ", not of the "
	    "request's sha256:1123456789abcdef", packs);
	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	pc.mdigest = NULL;
	assert_refused(&pc, "not of the request's none", packs);
	/* The verdict names none. */
	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	snprintf(pc.verdict, sizeof(pc.verdict), "{\"attempt\":\"a-1\","
	    "\"facts\":{\"accepted\":true,\"commit\":\"%s\"},"
	    "\"kind\":\"verdict\",\"signer\":\"verifier\"}", c_a1);
	sign(&pc);
	assert_refused(&pc, "verdict: of manifest none", packs);
	/* An adoption: refused before its branch is looked for. */
	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	pc.adopt = 1;
	pc.mdigest = "sha256:1123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	assert_refused(&pc, "not of the request's sha256:1123", packs);
	ck_assert_int_eq(count_dir(pulls, ".json"), 0);
}
END_TEST

START_TEST(test_not_accepted)
{
	struct pubcase	 pc;
	int		 packs = count_packs();

	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 0, c_a1);
	assert_refused(&pc, "verdict: not accepted", packs);
	/* "accepted" must be the boolean true, and said once. */
	snprintf(pc.verdict, sizeof(pc.verdict), "{\"attempt\":\"a-1\","
	    "\"facts\":{\"accepted\":1,\"commit\":\"%s\"},"
	    "\"kind\":\"verdict\",\"signer\":\"verifier\"}", c_a1);
	sign(&pc);
	assert_refused(&pc, "verdict: not accepted", packs);
	snprintf(pc.verdict, sizeof(pc.verdict), "{\"attempt\":\"a-1\","
	    "\"facts\":{\"accepted\":false,\"accepted\":true,"
	    "\"commit\":\"%s\"},\"kind\":\"verdict\","
	    "\"signer\":\"verifier\"}", c_a1);
	sign(&pc);
	assert_refused(&pc, "duplicate", packs);
	snprintf(pc.verdict, sizeof(pc.verdict), "{\"attempt\":\"a-1\","
	    "\"facts\":{\"accepted\":true,\"commit\":\"%s\"},"
	    "\"kind\":\"verdict\",\"signer\":\"verifier\"} {}", c_a1);
	sign(&pc);
	assert_refused(&pc, "verdict:", packs);
}
END_TEST

START_TEST(test_branch_taken)
{
	struct pubcase	 pc;
	char		 b[64], want[128];
	int		 packs = count_packs();

	sh("git -C %s update-ref refs/heads/factory/a-1 %s", remote, c_main);
	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	ck_assert_int_eq(run(&pc), -1);
	snprintf(want, sizeof(want), "branch factory/a-1 already holds %s",
	    c_main);
	ck_assert_str_eq(pc.err, want);
	remote_branch(b, "a-1");
	ck_assert_str_eq(b, c_main);
	ck_assert_int_eq(count_dir(pulls, ".json"), 0);
	ck_assert_int_eq(count_packs(), packs);
}
END_TEST

/* pc is a member of cohort c-1 that supersedes attempt at commit. */
static void
supersedes(struct pubcase *pc, const char *attempt, const char *commit)
{
	pc->cohort = "c-1";
	strlcpy(pc->supersede[pc->nsupersede].id, attempt,
	    sizeof(pc->supersede[0].id));
	strlcpy(pc->supersede[pc->nsupersede].commit, commit,
	    sizeof(pc->supersede[0].commit));
	pc->nsupersede++;
}

/* A record's "state", "" if it has none. */
static void
record_state(char out[16], const char *attempt)
{
	json_t	*j;
	char	 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s.json", pulls, attempt);
	ck_assert_ptr_nonnull(j = json_load_file(path, 0, NULL));
	strlcpy(out, json_is_string(json_object_get(j, "state")) ?
	    json_string_value(json_object_get(j, "state")) : "", 16);
	json_decref(j);
}

/*
 * A cohort: a-1's selection failed after its push (its branch left,
 * even its record), a-2 is selected: a-1's record is closed and its
 * branch deleted before a-2's are made (before the fix: two branches,
 * two open records).  a-1 selected again: a-2 superseded in turn, a-1's
 * branch made again, its own record reopened, never a second one.
 */
START_TEST(test_supersede)
{
	struct pubcase	 p1, p2, again;
	char		 b[64], st[16];

	pubcase(&p1, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	ck_assert_msg(run(&p1) == 0, "publish a-1: %s", p1.err);
	pubcase(&p2, "a-2", "a-2.bundle", c_a2, 1, c_a2);
	supersedes(&p2, "a-1", c_a1);
	ck_assert_msg(run(&p2) == 0, "publish a-2: %s", p2.err);
	remote_branch(b, "a-1");
	ck_assert_msg(b[0] == '\0', "branch factory/a-1 left at %s", b);
	record_state(st, "a-1");
	ck_assert_str_eq(st, "closed");
	record_state(st, "a-2");
	ck_assert_str_eq(st, "");
	assert_published(&p2);
	ck_assert_int_eq(p2.res.number, 2);

	pubcase(&again, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	supersedes(&again, "a-2", c_a2);
	ck_assert_msg(run(&again) == 0, "a-1 again: %s", again.err);
	ck_assert_int_eq(again.res.number, 1);
	ck_assert_int_eq(again.res.reused, 0);
	assert_published(&again);
	record_state(st, "a-1");
	ck_assert_str_eq(st, "open");
	record_state(st, "a-2");
	ck_assert_str_eq(st, "closed");
	remote_branch(b, "a-2");
	ck_assert_str_eq(b, "");
	ck_assert_int_eq(count_dir(pulls, ".json"), 2);
	/* Nothing left to supersede: the same again changes nothing. */
	ck_assert_msg(run(&again) == 0, "a-1 a third time: %s", again.err);
	ck_assert_int_eq(again.res.reused, 1);
}
END_TEST

/*
 * What is not the superseded member's is never touched: its branch
 * holding another commit, its record naming another.  Both refused
 * before anything changes.
 */
START_TEST(test_supersede_refused)
{
	struct pubcase	 p1, p2;
	char		 b[64], st[16];

	sh("git -C %s update-ref refs/heads/factory/a-1 %s", remote, c_main);
	pubcase(&p2, "a-2", "a-2.bundle", c_a2, 1, c_a2);
	supersedes(&p2, "a-1", c_a1);
	ck_assert_int_eq(run(&p2), -1);
	ck_assert_msg(strstr(p2.err, "branch factory/a-1 already holds") !=
	    NULL && strstr(p2.err, "superseded, not deleted") != NULL, "%s",
	    p2.err);
	remote_branch(b, "a-1");
	ck_assert_str_eq(b, c_main);
	remote_branch(b, "a-2");
	ck_assert_str_eq(b, "");
	ck_assert_int_eq(count_dir(pulls, ".json"), 0);

	sh("git -C %s update-ref -d refs/heads/factory/a-1", remote);
	pubcase(&p1, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	ck_assert_msg(run(&p1) == 0, "publish a-1: %s", p1.err);
	pubcase(&p2, "a-2", "a-2.bundle", c_a2, 1, c_a2);
	supersedes(&p2, "a-1", c_a2);	/* not a-1's commit */
	ck_assert_int_eq(run(&p2), -1);
	ck_assert_msg(strstr(p2.err, "names another commit") != NULL, "%s",
	    p2.err);
	record_state(st, "a-1");
	ck_assert_str_eq(st, "");
	remote_branch(b, "a-1");
	ck_assert_str_eq(b, c_a1);
	remote_branch(b, "a-2");
	ck_assert_str_eq(b, "");
	ck_assert_int_eq(count_dir(pulls, ".json"), 1);
}
END_TEST

START_TEST(test_two_refs)
{
	struct pubcase	 pc;
	int		 packs = count_packs();

	pubcase(&pc, "a-1", "two.bundle", c_a1, 1, c_a1);
	assert_refused(&pc, "more than one ref", packs);
}
END_TEST

START_TEST(test_missing_prerequisite)
{
	struct pubcase	 pc;
	char		 unpushed[41], want[128];
	int		 packs = count_packs();

	rev(unpushed, "unpushed");
	pubcase(&pc, "a-3", "a-3.bundle", c_a3, 1, c_a3);
	snprintf(want, sizeof(want), "bundle: prerequisite %s is not in the "
	    "remote", unpushed);
	assert_refused(&pc, want, packs);
}
END_TEST

/* Bundles cut by hand: each header rule refused on its own. */
START_TEST(test_bad_headers)
{
	struct pubcase	 pc;
	int		 packs = count_packs();

	/* No prerequisite: a full history is not what we publish. */
	sh("cd %s && git -C work bundle create ../full.bundle factory/a-1 "
	    "2>/dev/null", tmp);
	pubcase(&pc, "a-1", "full.bundle", c_a1, 1, c_a1);
	assert_refused(&pc, "bundle: no prerequisite", packs);
	/* Two prerequisites. */
	sh("cd %s && (head -n 2 a-1.bundle; sed -n 2p a-1.bundle; "
	    "tail -n +3 a-1.bundle) > twopre.bundle", tmp);
	pubcase(&pc, "a-1", "twopre.bundle", c_a1, 1, c_a1);
	assert_refused(&pc, "more than one prerequisite", packs);
	/* v3 is not accepted. */
	sh("cd %s && (echo '# v3 git bundle'; tail -n +2 a-1.bundle) > "
	    "v3.bundle", tmp);
	pubcase(&pc, "a-1", "v3.bundle", c_a1, 1, c_a1);
	assert_refused(&pc, "not a v2 git bundle", packs);
	/* A truncated pack indexes nothing and names no branch. */
	sh("cd %s && head -c -100 a-1.bundle > short.bundle", tmp);
	pubcase(&pc, "a-1", "short.bundle", c_a1, 1, c_a1);
	assert_refused(&pc, "bundle: pack", packs);
}
END_TEST

/*
 * A well-formed header over a pack that lacks the changed file: the
 * commit would point at a blob the remote does not have.
 */
START_TEST(test_incomplete_pack)
{
	struct pubcase	 pc;
	int		 packs = count_packs();

	sh("cd %s && printf '# v2 git bundle\\n-%s base\\n"
	    "%s refs/heads/factory/a-1\\n\\n' > holed.bundle && "
	    "git -C work rev-parse factory/a-1 'factory/a-1^{tree}' | "
	    "git -C work pack-objects -q --stdout >> holed.bundle", tmp,
	    c_main, c_a1);
	pubcase(&pc, "a-1", "holed.bundle", c_a1, 1, c_a1);
	assert_refused(&pc, "missing", packs);
	/* The same objects plus the blob are accepted. */
	sh("cd %s && printf '# v2 git bundle\\n-%s base\\n"
	    "%s refs/heads/factory/a-1\\n\\n' > whole.bundle && "
	    "git -C work rev-parse factory/a-1 'factory/a-1^{tree}' "
	    "'factory/a-1:f' | "
	    "git -C work pack-objects -q --stdout >> whole.bundle", tmp,
	    c_main, c_a1);
	pubcase(&pc, "a-1", "whole.bundle", c_a1, 1, c_a1);
	ck_assert_msg(run(&pc) == 0, "publish: %s", pc.err);
	assert_published(&pc);
}
END_TEST

/*
 * A submodule beside the change: the changed tree names a commit of
 * another repository, which no pack holds (issue 24: libgit2's indexer
 * with verify refused it as "missing 1 objects").
 */
START_TEST(test_gitlink_beside)
{
	struct pubcase	 pc;
	char		 c[41];

	sh("cd %s/work && git checkout -qb factory/a-4 main && "
	    "git update-index --add --cacheinfo "
	    "160000,4444444444444444444444444444444444444444,sub && "
	    "echo more >> f && git add f && "
	    "git commit -qm 'beside a submodule' && "
	    "git ls-tree factory/a-4 sub | grep -q '^160000 ' && "
	    "git bundle create ../a-4.bundle factory/a-4 ^main 2>/dev/null",
	    tmp);
	rev(c, "factory/a-4");
	pubcase(&pc, "a-4", "a-4.bundle", c, 1, c);
	ck_assert_msg(run(&pc) == 0, "publish: %s", pc.err);
	assert_published(&pc);
}
END_TEST

/*
 * A header whose prerequisite is in the remote but is not an ancestor
 * of the commit: the objects arrive (thin against main), no branch.
 */
START_TEST(test_unrelated_prerequisite)
{
	struct pubcase	 pc;
	char		 b[64];

	pubcase(&pc, "a-2", "a-2.bundle", c_a2, 1, c_a2);
	ck_assert_msg(run(&pc) == 0, "publish a-2: %s", pc.err);
	sh("cd %s && (echo '# v2 git bundle'; echo '-%s x'; "
	    "tail -n +3 a-1.bundle) > unrelated.bundle", tmp, c_a2);
	pubcase(&pc, "a-1", "unrelated.bundle", c_a1, 1, c_a1);
	ck_assert_int_eq(run(&pc), -1);
	ck_assert_msg(strstr(pc.err, "does not descend from the "
	    "prerequisite") != NULL, "err: %s", pc.err);
	remote_branch(b, "a-1");
	ck_assert_str_eq(b, "");
	ck_assert_int_eq(count_dir(pulls, ".json"), 1);
}
END_TEST

/*
 * Four publications at once, two per attempt: one record per attempt,
 * numbers 1 and 2, and every caller told the number on disk.
 */
START_TEST(test_concurrent)
{
	struct pubcase	 pc[4];
	pid_t		 pid[4];
	int		 i, status, n1, n2;

	pubcase(&pc[0], "a-1", "a-1.bundle", c_a1, 1, c_a1);
	pubcase(&pc[1], "a-2", "a-2.bundle", c_a2, 1, c_a2);
	pc[2] = pc[0];
	pc[3] = pc[1];
	for (i = 0; i < 4; i++) {
		ck_assert_int_ne(pid[i] = fork(), -1);
		if (pid[i] == 0) {
			if (run(&pc[i]) == -1) {
				fprintf(stderr, "child %d: %s\n", i, pc[i].err);
				_exit(100);
			}
			_exit(pc[i].res.number);
		}
	}
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) >= 1 &&
		    WEXITSTATUS(status) <= 2, "child %d: status %#x", i,
		    status);
		pc[i].res.number = WEXITSTATUS(status);
	}
	ck_assert_int_eq(count_dir(pulls, ".json"), 2);
	ck_assert_int_eq(pc[0].res.number, pc[2].res.number);
	ck_assert_int_eq(pc[1].res.number, pc[3].res.number);
	n1 = pc[0].res.number;
	n2 = pc[1].res.number;
	ck_assert_int_eq(n1 + n2, 3);
	/* A replay now reads what the racers wrote. */
	ck_assert_int_eq(run(&pc[0]), 0);
	ck_assert_int_eq(pc[0].res.reused, 1);
	assert_record(&pc[0], n1);
	ck_assert_int_eq(run(&pc[1]), 0);
	assert_record(&pc[1], n2);
	assert_published(&pc[0]);
	assert_published(&pc[1]);
}
END_TEST

/*
 * A bundle of factory/<attempt>: a commit of its own on top of main
 * (libgit2 1.5's indexer leaks on a pack the remote holds already).
 */
static void
extra_bundle(const char *attempt, char commit[41])
{
	char	 what[64];

	sh("cd %s/work && git checkout -q main && git checkout -qb "
	    "factory/%s && echo %s > %s.txt && git add %s.txt && "
	    "git commit -qm %s && git bundle create ../%s.bundle factory/%s "
	    "^main 2>/dev/null && git checkout -q main", tmp, attempt,
	    attempt, attempt, attempt, attempt, attempt, attempt);
	snprintf(what, sizeof(what), "factory/%s", attempt);
	rev(commit, what);
}

/* Publish in a fresh process: its number, or -1 (its reason on stderr). */
static int
run_fresh(struct pubcase *pc, const char *want_err)
{
	pid_t	 pid;
	int	 status;

	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		publish_local_forget();
		if (run(pc) == -1) {
			if (want_err != NULL && strstr(pc->err, want_err) !=
			    NULL && strchr(pc->err, '\n') == NULL)
				_exit(0);
			fprintf(stderr, "fresh %s: %s\n", pc->attempt, pc->err);
			_exit(101);
		}
		_exit(want_err != NULL ? 102 : pc->res.number);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) <= 100,
	    "fresh %s: status %#x", pc->attempt, status);
	return (WEXITSTATUS(status));
}

static void
write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char	 path[PATH_MAX];
	int	 fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_ne(fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600),
	    -1);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	ck_assert_int_eq(close(fd), 0);
}

/*
 * Numbering reads no other record once this process knows the
 * directory: a record it could not read now is not read at all.  A
 * fresh process still reads them all, once, and refuses the directory
 * while one cannot be read.
 */
START_TEST(test_number_without_scan)
{
	struct pubcase	 p1, p2, p4;
	char		 dir[PATH_MAX], c4[41];

	pubcase(&p1, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	ck_assert_msg(run(&p1) == 0, "publish a-1: %s", p1.err);
	assert_record(&p1, 1);
	snprintf(dir, sizeof(dir), "%s/zz.json", pulls);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	pubcase(&p2, "a-2", "a-2.bundle", c_a2, 1, c_a2);
	ck_assert_msg(run(&p2) == 0, "publish a-2: %s", p2.err);
	assert_record(&p2, 2);
	extra_bundle("a-4", c4);
	pubcase(&p4, "a-4", "a-4.bundle", c4, 1, c4);
	ck_assert_int_eq(run_fresh(&p4, "zz.json"), 0);
	ck_assert_int_eq(rmdir(dir), 0);
	ck_assert_int_eq(run_fresh(&p4, NULL), 3);
	assert_published(&p4);
}
END_TEST

/* Another process's numbers count, in either order. */
START_TEST(test_number_other_process)
{
	struct pubcase	 p1, p2, p4, p5;
	char		 c4[41], c5[41];

	extra_bundle("a-4", c4);
	extra_bundle("a-5", c5);
	pubcase(&p1, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	pubcase(&p2, "a-2", "a-2.bundle", c_a2, 1, c_a2);
	pubcase(&p4, "a-4", "a-4.bundle", c4, 1, c4);
	pubcase(&p5, "a-5", "a-5.bundle", c5, 1, c5);
	ck_assert_msg(run(&p1) == 0, "publish a-1: %s", p1.err);
	ck_assert_int_eq(run_fresh(&p2, NULL), 2);
	ck_assert_msg(run(&p4) == 0, "publish a-4: %s", p4.err);
	assert_record(&p4, 3);
	ck_assert_int_eq(run_fresh(&p5, NULL), 4);
	/* Replays in this process keep their numbers. */
	ck_assert_int_eq(run(&p2), 0);
	ck_assert_int_eq(p2.res.number, 2);
	ck_assert_int_eq(run(&p1), 0);
	assert_record(&p1, 1);
}
END_TEST

/*
 * What a crash of the system can leave in the lock file: a number
 * older than the records (the record was synced, the lock file not),
 * or none.  The records decide.
 */
START_TEST(test_number_counter_lost)
{
	struct pubcase	 p1, p2, p4, p5;
	char		 c4[41], c5[41];
	static const char rec[] = "{\"number\": 7, \"attempt\": \"a-9\"}\n";

	extra_bundle("a-4", c4);
	extra_bundle("a-5", c5);
	pubcase(&p1, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	pubcase(&p2, "a-2", "a-2.bundle", c_a2, 1, c_a2);
	pubcase(&p4, "a-4", "a-4.bundle", c4, 1, c4);
	pubcase(&p5, "a-5", "a-5.bundle", c5, 1, c5);
	ck_assert_int_eq(run_fresh(&p1, NULL), 1);
	ck_assert_int_eq(run_fresh(&p2, NULL), 2);
	write_file(pulls, ".lock", "1\n", 2);
	ck_assert_int_eq(run_fresh(&p4, NULL), 3);
	/* Known to this process, then the number is gone. */
	ck_assert_int_eq(run(&p1), 0);
	write_file(pulls, ".lock", "", 0);
	write_file(pulls, "a-9.json", rec, sizeof(rec) - 1);
	ck_assert_msg(run(&p5) == 0, "publish a-5: %s", p5.err);
	assert_record(&p5, 8);
}
END_TEST

/* A lock file that holds something else than a number is refused. */
START_TEST(test_number_counter_bad)
{
	static const struct {
		const char	*text;
		size_t		 len;
	} bad[] = {
		{ "x1\n", 3 }, { "-1\n", 3 }, { "0\n", 2 }, { "01\n", 3 },
		{ "2147483647\n", 11 }, { "99999999999999999999\n", 21 },
		{ "1", 1 }, { "1\n2\n", 4 }, { "1\0\n", 3 }, { " 1\n", 3 },
		{ "\n", 1 },
	};
	struct pubcase	 pc;
	size_t		 i;

	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(pulls, ".lock", bad[i].text, bad[i].len);
		ck_assert_msg(run_fresh(&pc, ".lock") == 0, "lock file %zu "
		    "accepted", i);
		ck_assert_int_eq(count_dir(pulls, ".json"), 0);
	}
	/* Nor in a process that knew the directory. */
	write_file(pulls, ".lock", "", 0);
	ck_assert_msg(run(&pc) == 0, "publish a-1: %s", pc.err);
	assert_record(&pc, 1);
	write_file(pulls, ".lock", "1x\n", 3);
	pubcase(&pc, "a-2", "a-2.bundle", c_a2, 1, c_a2);
	ck_assert_int_eq(run(&pc), -1);
	ck_assert_msg(strstr(pc.err, ".lock") != NULL, "err: %s", pc.err);
	ck_assert_int_eq(count_dir(pulls, ".json"), 1);
}
END_TEST

/*
 * A local publication is all or nothing: one that fails after the
 * attestations could have been written (the lock file refused, the
 * record not written) leaves no <attempt>.intoto.jsonl without its
 * record, no temporary file either, and the next try makes both.
 */
static void
assert_no_evidence(struct pubcase *pc, const char *want, const char *why,
    int news)
{
	char	 path[PATH_MAX];

	ck_assert_int_eq(run(pc), -1);
	ck_assert_msg(strstr(pc->err, want) != NULL, "%s: err \"%s\" lacks "
	    "\"%s\"", why, pc->err, want);
	ck_assert_ptr_null(strchr(pc->err, '\n'));
	ck_assert_int_eq(count_dir(pulls, ".json"), 0);
	snprintf(path, sizeof(path), "%s/%s.intoto.jsonl", pulls, pc->attempt);
	ck_assert_msg(access(path, F_OK) == -1 && errno == ENOENT,
	    "%s: %s left without its record", why, path);
	ck_assert_int_eq(count_dir(pulls, ".new"), news);
}

START_TEST(test_attestations_all_or_nothing)
{
	struct pubcase	 pc;
	char		 path[PATH_MAX];

	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	attest_case(&pc, key, c_a1, "PASSED");
	/* The lock file holds no pull number: no number, no record. */
	write_file(pulls, ".lock", "x1\n", 3);
	assert_no_evidence(&pc, ".lock: not a pull number", "counter", 0);
	/* One left by an earlier failure goes too. */
	write_file(pulls, "a-1.intoto.jsonl", "stale\n", 6);
	assert_no_evidence(&pc, ".lock: not a pull number", "stale", 0);
	/* The lock file cannot be opened. */
	sh("rm %s/.lock && mkdir %s/.lock", pulls, pulls);
	assert_no_evidence(&pc, ".lock: Is a directory", "lock", 0);
	sh("rmdir %s/.lock", pulls);
	/* The record cannot be written, after everything else was. */
	sh("mkdir -p %s/.a-1.json.tmp/x", pulls);
	assert_no_evidence(&pc, "pulls/.a-1.json.tmp: Is a directory",
	    "record", 0);
	sh("rm -r %s/.a-1.json.tmp", pulls);
	/* Nor the attestations: no record either. */
	sh("mkdir -p %s/a-1.intoto.jsonl.new/x", pulls);
	/* (The obstacle is the one .new.) */
	assert_no_evidence(&pc, "a-1.intoto.jsonl.new: Is a directory",
	    "attestations", 1);
	sh("rm -r %s/a-1.intoto.jsonl.new", pulls);
	/* Then both, and the number was not given twice. */
	ck_assert_msg(run(&pc) == 0, "publish: %s", pc.err);
	snprintf(path, sizeof(path), "%s/a-1.intoto.jsonl", pulls);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_int_eq(count_dir(pulls, ".json"), 1);
	ck_assert_int_eq(count_dir(pulls, ".tmp"), 0);
	ck_assert_int_eq(count_dir(pulls, ".new"), 0);
	/* A failure of a publication already made keeps what it made. */
	write_file(pulls, ".lock", "x1\n", 3);
	ck_assert_int_eq(run(&pc), 0);
	sh("mkdir -p %s/a-1.intoto.jsonl.new/x", pulls);
	ck_assert_int_eq(run(&pc), -1);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_int_eq(count_dir(pulls, ".json"), 1);
	attest_free(&pc);
}
END_TEST

#if !defined(__SANITIZE_ADDRESS__)
/*
 * The publisher's own policy from the process table, as another uid
 * than the remote's owner, with HOME outside what is unveiled: the
 * whole publication must work with nothing else.
 */
START_TEST(test_policy)
{
	struct pubcase	 pc;
	char		 vremotes[PATH_MAX + 16], vpulls[PATH_MAX + 16];
	char		 path[PATH_MAX];
	char		*vars[2];
	pid_t		 pid;
	gid_t		 gid = PUBLISHER_UID;
	int		 status;

	sh("chmod -R a+rwX %s %s", remote, pulls);
	pubcase(&pc, "a-1", "a-1.bundle", c_a1, 1, c_a1);
	snprintf(vremotes, sizeof(vremotes), "remotes=%s", remote);
	snprintf(vpulls, sizeof(vpulls), "pulls=%s", pulls);
	vars[0] = vremotes;
	vars[1] = vpulls;
	snprintf(vpulls, sizeof(vpulls), "%s/a-1.bundle", tmp);
	ck_assert_int_ne(pc.fd = open(vpulls, O_RDONLY | O_CLOEXEC), -1);
	snprintf(vpulls, sizeof(vpulls), "pulls=%s", pulls);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		if (setgroups(1, &gid) == -1 ||
		    setresgid(gid, gid, gid) == -1 ||
		    setresuid(PUBLISHER_UID, PUBLISHER_UID,
		    PUBLISHER_UID) == -1)
			_exit(2);
		proc_apply_policy(proc_byid(PROC_PUBLISHER), vars, 2);
		/* The control: the policy is in force, $HOME is hidden. */
		snprintf(path, sizeof(path), "%s/.gitconfig", tmp);
		if (open(path, O_RDONLY) != -1 || errno != EACCES)
			_exit(4);
		pub_git_init();
		if (run(&pc) == -1) {
			fprintf(stderr, "publish under policy: %s\n", pc.err);
			_exit(1);
		}
		snprintf(path, sizeof(path), "%s/a-1.json", pulls);
		_exit(pc.res.number == 1 && pc.res.reused == 0 &&
		    strcmp(pc.res.record, path) == 0 &&
		    strcmp(pc.res.branch, "factory/a-1") == 0 ? 0 : 3);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	close(pc.fd);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "child status %#x", status);
	/* What the child checked it was told. */
	snprintf(pc.res.record, sizeof(pc.res.record), "%s/a-1.json", pulls);
	strlcpy(pc.res.branch, "factory/a-1", sizeof(pc.res.branch));
	pc.res.number = 1;
	assert_published(&pc);
	assert_record(&pc, 1);
}
END_TEST
#endif

static Suite *
publish_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("publish");
	tc = tcase_create("local");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_happy);
	tcase_add_test(tc, test_attestations);
	tcase_add_test(tc, test_attestations_all_or_nothing);
	tcase_add_test(tc, test_twice);
	tcase_add_test(tc, test_adopt_pushed);
	tcase_add_test(tc, test_adopt_never_pushed);
	tcase_add_test(tc, test_supersede);
	tcase_add_test(tc, test_supersede_refused);
	tcase_add_test(tc, test_second_attempt);
	tcase_add_test(tc, test_bad_signature);
	tcase_add_test(tc, test_other_commit);
	tcase_add_test(tc, test_other_manifest);
	tcase_add_test(tc, test_not_accepted);
	tcase_add_test(tc, test_branch_taken);
	tcase_add_test(tc, test_two_refs);
	tcase_add_test(tc, test_missing_prerequisite);
	tcase_add_test(tc, test_bad_headers);
	tcase_add_test(tc, test_incomplete_pack);
	tcase_add_test(tc, test_gitlink_beside);
	tcase_add_test(tc, test_unrelated_prerequisite);
	tcase_add_loop_test(tc, test_concurrent, 0, 5);
	tcase_add_test(tc, test_number_without_scan);
	tcase_add_test(tc, test_number_other_process);
	tcase_add_test(tc, test_number_counter_lost);
	tcase_add_test(tc, test_number_counter_bad);
	suite_add_tcase(s, tc);
#if !defined(__SANITIZE_ADDRESS__)
	/* libgit2 is initialised after the policy, as in the daemon. */
	tc = tcase_create("policy");
	tcase_add_checked_fixture(tc, setup_repos, teardown_repos);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_policy);
	suite_add_tcase(s, tc);
#endif
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	char	 cmd[PATH_MAX + 16];
	int	 failed;

	/*
	 * A failed assertion ends a forked test without its teardown: the
	 * runner removes what every test made, whatever happened.
	 */
	strlcpy(base, "/tmp/test_publish.XXXXXX", sizeof(base));
	if (mkdtemp(base) == NULL || chmod(base, 0755) == -1) {
		perror(base);
		return (EXIT_FAILURE);
	}
	sr = srunner_create(publish_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	if (system(cmd) != 0)
		failed++;
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
