/*
 * What a publication carries of the attestations (attest.h): checked
 * again by the publisher, which trusts only the pinned verifier key,
 * and written beside a local forge's pull record.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>
#include <jansson.h>

#include "attest.h"
#include "crypto.h"
#include "factory.h"
#include "publisher.h"
#include "util.h"

/* The lines as one file, each with its newline; malloc'd. */
static char *
pub_attest_join(const struct publish_req *req, size_t *lenp)
{
	size_t	 i, len = 0, off = 0, n;
	char	*buf;

	for (i = 0; i < req->nattest; i++)
		len += strlen(req->attest[i]) + 1;
	if ((buf = malloc(len + 1)) == NULL)
		return (NULL);
	for (i = 0; i < req->nattest; i++) {
		n = strlen(req->attest[i]);
		memcpy(buf + off, req->attest[i], n);
		off += n;
		buf[off++] = '\n';
	}
	buf[off] = '\0';
	*lenp = off;
	return (buf);
}

int
pub_attest_check(const struct publish_req *req, struct attest_summary *sum,
    char *err, size_t errlen)
{
	char	*buf, fp[CRYPTO_FP_SIZE], why[512];
	size_t	 len;
	int	 rv;

	memset(sum, 0, sizeof(*sum));
	if (req->nattest == 0)
		return (0);
	if (ed25519_fingerprint_raw(req->verifier_pub, fp) == -1 ||
	    (buf = pub_attest_join(req, &len)) == NULL)
		return (errfmt(err, errlen, "attestations: out of memory"));
	rv = attest_verify_buf(buf, len, NULL, 0, sum, why, sizeof(why));
	free(buf);
	if (rv == -1)
		return (errfmt(err, errlen, "attestations: %s", why));
	if (strcmp(sum->verifier_key, fp) != 0)
		return (errfmt(err, errlen, "attestations: the summary is "
		    "signed by %s, not the pinned verifier key %s",
		    sum->verifier_key, fp));
	if (strcmp(sum->result, "PASSED") != 0 ||
	    strcmp(sum->commit, req->commit) != 0)
		return (errfmt(err, errlen, "attestations: %s for commit "
		    "%s, not PASSED for %s", sum->result, sum->commit,
		    req->commit));
	return (0);
}

/* pulls/<attempt>.intoto.jsonl */
static int
pub_attest_path(const struct publish_req *req, char *path, size_t len,
    char *err, size_t errlen)
{
	size_t	 plen = strlen(req->pulls);

	if ((size_t)snprintf(path, len, "%s%s%s.intoto.jsonl", req->pulls,
	    plen > 0 && req->pulls[plen - 1] == '/' ? "" : "/",
	    req->attempt) >= len)
		return (errfmt(err, errlen, "pulls: path too long"));
	return (0);
}

int
pub_attest_local(const struct publish_req *req, char *err, size_t errlen)
{
	struct attest_summary	 sum;
	char			 path[PATH_MAX], *buf;
	size_t			 len;
	int			 rv;

	if (pub_attest_check(req, &sum, err, errlen) == -1)
		return (-1);
	if (req->nattest == 0)
		return (0);
	if (pub_attest_path(req, path, sizeof(path), err, errlen) == -1)
		return (-1);
	if ((buf = pub_attest_join(req, &len)) == NULL)
		return (errfmt(err, errlen, "attestations: out of memory"));
	rv = attest_write_file(path, buf, len, err, errlen);
	free(buf);
	return (rv);
}

/*
 * The attestations of a publication that made no record go: evidence
 * beside no pull request would say one was opened.  Also those a
 * crash between the two renames left.
 */
int
pub_attest_unlink(const struct publish_req *req, char *err, size_t errlen)
{
	char	 path[PATH_MAX];

	if (pub_attest_path(req, path, sizeof(path), err, errlen) == -1)
		return (-1);
	if (unlink(path) == -1 && errno != ENOENT)
		return (errfmt(err, errlen, "%s: %s", path,
		    strerror(errno)));
	return (0);
}
