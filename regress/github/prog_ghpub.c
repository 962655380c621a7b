/*
 * prog_ghpub: one github publication, through the publisher's own code,
 * as the daemon would make it.
 *
 *	prog_ghpub [-p] [-V name=value ...] verifier.pem message.json bundle
 *
 * With "_adopt": true in message.json the bundle is "-": the
 * publication is a fleet's adoption (no bundle; the branch must be on
 * the forge already), as IMSG_PUBLISH_ADOPT asks.
 * -p applies the publisher's policy from the process table, with the
 * -V variables, exactly as the daemon's child does, after the inputs
 * are open (the daemon's publisher gets them over imsg).
 *
 * message.json is the parent's IMSG_PUBLISH payload without "verdict"
 * and "verifier_pub": this program signs a verdict receipt for its id
 * and commit with the Ed25519 key (accepted unless "_accepted" is
 * false; of the message's manifest digest unless "_verdict_digest"
 * names another), fills both in, lays the members not starting with "_" out
 * on the wire (regress/daemon/msgjson.h) and decodes them with
 * msg_read() as the daemon's publisher does (a malformed message
 * exits 3, "malformed: REASON"), and runs pub_req_from_msg,
 * gh_conf_from_json
 * (scratch directory "_scratch", retry budget "_wait_max", seconds per
 * request "_timeout", seconds of the publication "_budget") and
 * publish_github.  On success it prints the IMSG_PUBLISHED payload on
 * stdout and exits 0; on a refusal it prints "error: REASON" and exits
 * 1.  The log goes to stderr.
 */
#include <sys/types.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>
#include <jansson.h>

#include "crypto.h"
#include "factory.h"
#include "imsgev.h"
#include "log.h"
#include "msg.h"
#include "../daemon/msgjson.h"
#include "receipt.h"
#include "../../publisher/publisher.h"

static __dead void	usage(void);
static int		sign_verdict(json_t *, const char *);

static __dead void
usage(void)
{
	fprintf(stderr, "usage: prog_ghpub [-p] [-V name=value ...] "
	    "verifier.pem message.json bundle\n");
	exit(2);
}

/* "verdict" and "verifier_pub", as the parent would send them. */
static int
sign_verdict(json_t *o, const char *keypath)
{
	EVP_PKEY	*key;
	json_t		*facts;
	uint8_t		 pub[ED25519_PUB_LEN];
	char		 b64[BASE64_SIZE(ED25519_PUB_LEN)], err[256], *line;
	int		 accepted;

	if ((key = ed25519_load_pem(keypath, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s: %s\n", keypath, err);
		return (-1);
	}
	accepted = !json_is_false(json_object_get(o, "_accepted"));
	/* Of the manifest the message names, or of "_verdict_digest". */
	facts = json_pack("{s:b, s:s, s:s}", "accepted", accepted, "commit",
	    json_str(o, "commit"), "manifest_digest",
	    json_object_get(o, "_verdict_digest") != NULL ?
	    json_str(o, "_verdict_digest") : json_str(o, "manifest_digest"));
	if (facts == NULL || receipt_make(json_str(o, "id"), 5, "verdict", 1,
	    RECEIPT_ZERO_PREV, RECEIPT_SIGNER_VERIFIER, key, facts,
	    &line) == -1 || ed25519_public_raw(key, pub) == -1) {
		fprintf(stderr, "cannot sign the verdict\n");
		EVP_PKEY_free(key);
		json_decref(facts);
		return (-1);
	}
	base64_encode(pub, sizeof(pub), 1, b64);
	json_object_set_new(o, "verdict", json_string(line));
	json_object_set_new(o, "verifier_pub", json_string(b64));
	free(line);
	json_decref(facts);
	EVP_PKEY_free(key);
	return (0);
}

int
main(int argc, char *argv[])
{
	struct publish_req	 req;
	struct publish_result	 res;
	struct msg_publish	 m;
	const char		*key;
	json_t			*v, *wire;
	void			*tmp;
	size_t			 len;
	struct gh_conf		 gc;
	json_t			*o, *out;
	json_error_t		 jerr;
	char			*verdict = NULL, err[512], *s;
	uint8_t			 sig[ED25519_SIG_LEN], pub[ED25519_PUB_LEN];
	char			*vars[16];
	size_t			 nvars = 0;
	int			 bfd, rc, ch, policy = 0, adopt;

	while ((ch = getopt(argc, argv, "pV:")) != -1) {
		switch (ch) {
		case 'p':
			policy = 1;
			break;
		case 'V':
			if (nvars >= sizeof(vars) / sizeof(vars[0]))
				usage();
			vars[nvars++] = optarg;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 3)
		usage();
	argv--;		/* argv[1..3] as before */
	gh_wipe_init();
	log_init(1, 0);
	log_procinit("publisher");
	log_setverbose(2);
	pub_git_init();
	if ((o = json_load_file(argv[2], JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL) {
		fprintf(stderr, "%s: %s\n", argv[2], jerr.text);
		return (2);
	}
	if (sign_verdict(o, argv[1]) == -1)
		return (2);
	adopt = json_is_true(json_object_get(o, "_adopt"));
	if (adopt && strcmp(argv[3], "-") != 0)
		usage();
	if (adopt)
		bfd = -1;
	else if ((bfd = open(argv[3], O_RDONLY | O_CLOEXEC)) == -1) {
		perror(argv[3]);
		return (2);
	}
	if (policy)
		proc_apply_policy(proc_byname("publisher"), vars, nvars);
	/* What the parent sends: the members without "_". */
	if ((wire = json_object()) == NULL)
		return (2);
	json_object_foreach_safe(o, tmp, key, v)
		if (key[0] != '_')
			json_object_set(wire, key, v);
	if ((s = msgjson_encode(MSG_PUBLISH, wire, &len)) == NULL)
		return (2);
	json_decref(wire);
	if (msg_read(MSG_PUBLISH, s, len, &m, err, sizeof(err)) == -1) {
		printf("malformed: %s\n", err);
		return (3);
	}
	free(s);
	rc = pub_req_from_msg(&m, bfd, &req, &verdict, sig, pub, err,
	    sizeof(err));
	req.adopt = adopt;
	if (rc == 0)
		rc = gh_conf_from_json(json_object_get(o, "github"),
		    json_str(o, "_scratch"), &gc, err, sizeof(err));
	if (rc == 0 && json_is_integer(json_object_get(o, "_wait_max")))
		gc.wait_max = json_integer_value(json_object_get(o,
		    "_wait_max"));
	if (rc == 0 && json_is_integer(json_object_get(o, "_timeout")))
		gc.timeout = json_integer_value(json_object_get(o,
		    "_timeout"));
	if (rc == 0 && json_is_integer(json_object_get(o, "_budget")))
		gc.budget = json_integer_value(json_object_get(o, "_budget"));
	if (rc == 0)
		rc = publish_github(&req, &gc, &res, err, sizeof(err));
	if (rc == -1)
		printf("error: %s\n", err);
	else {
		out = json_pack("{s:s, s:s, s:i, s:s, s:b}", "id",
		    req.attempt, "branch", res.branch, "number", res.number,
		    "record", res.record, "reused", res.reused);
		s = json_dumps(out, JSON_COMPACT);
		printf("%s\n", s);
		free(s);
		json_decref(out);
	}
	free(verdict);
	msg_free(MSG_PUBLISH, &m);
	json_decref(o);
	if (bfd != -1)
		close(bfd);
	git_libgit2_shutdown();
	return (rc == -1 ? 1 : 0);
}
