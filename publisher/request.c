/*
 * The common part of an IMSG_PUBLISH payload, decoded for any forge.
 * Kept out of publisher.c so that the regress programs decode what the
 * parent sends with the very code the daemon runs.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crypto.h"
#include "factory.h"
#include "imsgev.h"
#include "msg.h"
#include "publisher.h"
#include "util.h"
#include "receipt.h"

static int	verdict_split(const char *, char **, uint8_t *, size_t *);

/*
 * The verdict is the verifier's receipt line: what it signed is the
 * canonical form of the line without "sig".
 */
static int
verdict_split(const char *line, char **signed_out, uint8_t *sig,
    size_t *siglen)
{
	json_t		*v;
	json_error_t	 jerr;
	const char	*b64;

	*signed_out = NULL;
	if ((v = json_loads(line, JSON_REJECT_DUPLICATES, &jerr)) == NULL ||
	    (b64 = json_string_value(json_object_get(v, "sig"))) == NULL ||
	    base64_decode(b64, sig, ED25519_SIG_LEN, siglen) == -1) {
		json_decref(v);
		return (-1);
	}
	json_object_del(v, "sig");
	*signed_out = receipt_canonical(v);
	json_decref(v);
	return (*signed_out == NULL ? -1 : 0);
}

/*
 * IMSG_PUBLISH as the daemon's publisher reads it: msg_read() has
 * checked every field; what is left is the verdict's signature form
 * and the pinned key.
 */
int
pub_req_from_msg(const struct msg_publish *o, int bfd,
    struct publish_req *req, char **verdict, uint8_t *sig, uint8_t *pub,
    char *err, size_t errlen)
{
	size_t	 siglen, publen;

	*verdict = NULL;
	memset(req, 0, sizeof(*req));
	if (base64_decode(o->verifier_pub, pub, ED25519_PUB_LEN, &publen) ==
	    -1 || publen != ED25519_PUB_LEN)
		return (errfmt(err, errlen, "no pinned verifier key"));
	if (verdict_split(o->verdict, verdict, sig, &siglen) == -1)
		return (errfmt(err, errlen, "verdict: not a signed receipt"));
	req->attempt = o->id;
	req->remote = o->remote;
	req->pulls = o->pulls;
	req->title = o->title;
	req->base = o->base;
	req->commit = o->commit;
	req->verdict = *verdict;
	req->sig = sig;
	req->siglen = siglen;
	req->verifier_pub = pub;
	req->manifest_digest = o->manifest_digest;
	req->bundle_fd = bfd;
	req->attest = o->attest;
	req->nattest = o->nattest;
	req->summary = o->summary;
	req->cohort = o->cohort[0] != '\0' ? o->cohort : NULL;
	req->supersede = o->supersede;
	req->nsupersede = o->nsupersede;
	return (0);
}
