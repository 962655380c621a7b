/*
 * A verifier that lies with its envelopes (regress/attest): installed
 * as factory-verifier in a test libexec, it signs, with the real
 * verifier key, a verdict the parent accepts on its own (accepted, no
 * finding, a passed validation, the host environment) and, per the
 * mode in "factory-verifier.mode" beside it, attestations that must
 * make the parent refuse it:
 *	no-attest	no summary, no test result
 *	failed		a summary and a test result that say FAILED
 *	failed-passed	a summary that says FAILED, a test result PASSED
 *	other-prov	a summary of some other provenance
 *	other-key	a summary signed by a key of its own
 *	other-subject	a summary about another tree
 * The result's tree comes from "factory-verifier.tree" (the test knows
 * what the agent's change gives).
 */
#include <sys/types.h>

#include <err.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attest.h"
#include "crypto.h"
#include "factory.h"
#include "imsg.h"
#include "msg.h"
#include "receipt.h"

static char	 self[PATH_MAX];

static void
send_msg(int fd, uint32_t type, const void *data, size_t dlen)
{
	struct imsg_hdr	 hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.type = type;
	hdr.len = sizeof(hdr) + dlen;
	hdr.pid = getpid();
	if (write(fd, &hdr, sizeof(hdr)) != sizeof(hdr) ||
	    (dlen > 0 && write(fd, data, dlen) != (ssize_t)dlen))
		err(1, "write");
}

static void
beside(const char *ext, char *buf, size_t len)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof(path), "%s.%s", self, ext);
	if ((f = fopen(path, "r")) == NULL || fgets(buf, len, f) == NULL)
		err(1, "%s", path);
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

static void
read_verify(struct msg_verify *v)
{
	struct imsgbuf	 ib;
	struct imsg	 imsg;
	char		 e[512];
	ssize_t		 n;

	if (imsgbuf_init(&ib, PROC_PARENT_FD) == -1)
		err(1, "imsgbuf_init");
	imsgbuf_allow_fdpass(&ib);
	for (;;) {
		if ((n = imsgbuf_get(&ib, &imsg)) == -1)
			errx(1, "bad imsg");
		if (n == 0) {
			if (imsgbuf_read(&ib) != 1)
				exit(0);
			continue;
		}
		if (imsg_get_type(&imsg) == IMSG_VERIFY)
			break;
		imsg_free(&imsg);
	}
	if (msg_get(&imsg, MSG_VERIFY, v, e, sizeof(e)) == -1)
		errx(1, "%s", e);
}

static char *
vsa(const struct msg_verify *v, const char *mode, const char *tree,
    EVP_PKEY *key)
{
	const char	*prov = v->provenance + 7;
	json_t		*st;
	EVP_PKEY	*other;
	char		*line;

	if (strcmp(mode, "other-prov") == 0)
		prov = v->bundle_sha256;
	if (strcmp(mode, "other-subject") == 0)
		tree = "0123456789abcdef0123456789abcdef01234567";
	st = attest_statement(attest_subject(v->commit, tree,
	    v->bundle_sha256), ATTEST_VSA, json_pack("{s:[{s:s, s:{s:s}}], "
	    "s:s}", "inputAttestations", "uri", "urn:factory:provenance",
	    "digest", "sha256", prov, "verificationResult",
	    strncmp(mode, "failed", 6) == 0 ? "FAILED" : "PASSED"));
	if (st == NULL)
		errx(1, "statement");
	/* Names the baseline tree it says it checked, but when it lies so. */
	if (strcmp(mode, "no-vsa-baseline") != 0 &&
	    json_object_set_new(json_object_get(st, "predicate"), "policy",
	    json_pack("{s:{s:s}}", "annotations", "baselineTree", tree)) == -1)
		errx(1, "statement");
	if (strcmp(mode, "other-key") == 0) {
		if ((other = ed25519_generate()) == NULL)
			errx(1, "keygen");
		line = attest_sign(st, other, NULL);
		EVP_PKEY_free(other);
	} else
		line = attest_sign(st, key, NULL);
	json_decref(st);
	return (line);
}

int
main(int argc, char *argv[])
{
	struct msg_verify	 v;
	struct msg_verdict	 out;
	EVP_PKEY		*key = NULL;
	json_t			*st;
	char			 mode[64], tree[64], e[512], *s;
	size_t			 len;
	ssize_t			 n;
	int			 i;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) == -1)
		err(1, "readlink");
	self[n] = '\0';
	beside("mode", mode, sizeof(mode));
	beside("tree", tree, sizeof(tree));
	for (i = 1; i < argc; i++)
		if (strncmp(argv[i], "verifier_key=", 13) == 0 &&
		    (key = ed25519_load_pem(argv[i] + 13, e,
		    sizeof(e))) == NULL)
			errx(1, "%s", e);
	if (key == NULL)
		errx(1, "no verifier_key");
	send_msg(PROC_PARENT_FD, IMSG_HELLO, "promises: (lying verifier)",
	    strlen("promises: (lying verifier)") + 1);
	read_verify(&v);
	memset(&out, 0, sizeof(out));
	strlcpy(out.id, v.id, sizeof(out.id));
	out.epoch = v.epoch;
	out.accepted = out.validated = out.vpassed = 1;
	strlcpy(out.baseline, v.baseline, sizeof(out.baseline));
	strlcpy(out.commit, v.commit, sizeof(out.commit));
	strlcpy(out.tree, tree, sizeof(out.tree));
	strlcpy(out.bundle_sha256, v.bundle_sha256, sizeof(out.bundle_sha256));
	strlcpy(out.manifest_digest, v.digest, sizeof(out.manifest_digest));
	/* The baseline it checked, but when it lies that it did not. */
	if (strcmp(mode, "no-baseline") != 0)
		strlcpy(out.baseline_tree, tree, sizeof(out.baseline_tree));
	strlcpy(out.pristine, strcmp(mode, "unchecked") == 0 ? "unchecked" :
	    "same", sizeof(out.pristine));
	if (receipt_verdict_sign(&out, v.seq, v.prev, key, time(NULL)) == -1)
		errx(1, "receipt_verdict_sign");
	if (strcmp(mode, "no-attest") != 0) {
		out.vsa = vsa(&v, mode, tree, key);
		st = attest_statement(attest_subject(v.commit, tree,
		    v.bundle_sha256), ATTEST_TEST_RESULT, json_pack("{s:s}",
		    "result", strcmp(mode, "failed") == 0 ? "FAILED" :
		    "PASSED"));
		out.test_result = attest_sign(st, key, NULL);
		json_decref(st);
	}
	if ((s = msg_encode(MSG_VERDICT, &out, &len, e, sizeof(e))) == NULL)
		errx(1, "%s", e);
	send_msg(PROC_PARENT_FD, IMSG_VERDICT, s, len);
	/* Stay until the parent kills us: the refusal is what is tested. */
	pause();
	return (0);
}
