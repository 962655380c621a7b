/*
 * factory-publisher: the only process that holds forge credentials.
 * It checks a verdict against the pinned verifier key, then pushes one
 * branch and records one pull request.  It never reads attempt trees:
 * the bundle arrives as an fd.  Started only by factoryd, on fd 3.
 */
#include <sys/types.h>

#include <event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "factory.h"
#include "imsgev.h"
#include "log.h"
#include "pledge.h"
#include "publisher.h"
#include "receipt.h"

static void	publisher_dispatch_parent(int, short, void *);
static void	publisher_publish(json_t *, int);

static struct imsgev	 iev_parent;

int
main(int argc, char *argv[])
{
	int	 fd;

	/* Policy first: fd 3 check, closefrom, unveil, pledge. */
	fd = proc_child_init(PROC_PUBLISHER, argc, argv);
	pub_git_init();

	event_init();
	if (imsgev_init(&iev_parent, fd, publisher_dispatch_parent, NULL,
	    FACTORY_MAXIMSG) == -1)
		fatal("imsgev_init");
	imsgbuf_allow_fdpass(&iev_parent.ibuf);
	imsgev_compose_str(&iev_parent, IMSG_HELLO, 0, pledge_describe());

	event_dispatch();
	return (0);
}

static void
publisher_error(const char *id, const char *err)
{
	log_warnx("%s: %s", id, err);
	imsgev_compose_json(&iev_parent, IMSG_ERROR, -1, json_pack(
	    "{s:s, s:s}", "id", id, "error", err));
}

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

static void
publisher_publish(json_t *o, int bfd)
{
	struct publish_req	 req;
	struct publish_result	 res;
	const char		*id = json_str(o, "id");
	char			*verdict = NULL, err[512];
	uint8_t			 sig[ED25519_SIG_LEN], pub[ED25519_PUB_LEN];
	size_t			 siglen, publen;

	if (strcmp(json_str(o, "forge"), "local") != 0) {
		publisher_error(id, "forge not supported by this publisher");
		goto done;
	}
	if (base64_decode(json_str(o, "verifier_pub"), pub, sizeof(pub),
	    &publen) == -1 || publen != sizeof(pub)) {
		publisher_error(id, "no pinned verifier key");
		goto done;
	}
	if (verdict_split(json_str(o, "verdict"), &verdict, sig, &siglen) ==
	    -1) {
		publisher_error(id, "verdict: not a signed receipt");
		goto done;
	}
	memset(&req, 0, sizeof(req));
	req.attempt = id;
	req.remote = json_str(o, "remote");
	req.pulls = json_str(o, "pulls");
	req.title = json_str(o, "title");
	req.base = json_str(o, "base");
	req.commit = json_str(o, "commit");
	req.verdict = verdict;
	req.sig = sig;
	req.siglen = siglen;
	req.verifier_pub = pub;
	req.bundle_fd = bfd;
	memset(&res, 0, sizeof(res));
	if (publish_local(&req, &res, err, sizeof(err)) == -1) {
		publisher_error(id, err);
		goto done;
	}
	log_info("%s: %s branch %s, pull request %d", id, res.reused ?
	    "already published:" : "published", res.branch, res.number);
	imsgev_compose_json(&iev_parent, IMSG_PUBLISHED, -1, json_pack(
	    "{s:s, s:s, s:i, s:s, s:b}", "id", id, "branch", res.branch,
	    "number", res.number, "record", res.record, "reused",
	    res.reused));
 done:
	free(verdict);
	if (bfd != -1)
		close(bfd);
}

/*
 * The parent is the only peer.  Anything malformed from it is a
 * broken invariant: exit and let it restart us.
 */
static void
publisher_dispatch_parent(int fd, short event, void *arg)
{
	struct imsg	 imsg;
	json_t		*o;
	int		 n, v;

	if (!imsgev_io(&iev_parent, event)) {
		log_debug("parent closed the channel, exiting");
		exit(0);
	}
	for (;;) {
		if ((n = imsgbuf_get(&iev_parent.ibuf, &imsg)) == -1)
			fatalx("malformed imsg from the parent");
		if (n == 0)
			return;
		switch (imsg_get_type(&imsg)) {
		case IMSG_CTL_LOG_VERBOSE:
			if (imsg_get_data(&imsg, &v, sizeof(v)) == -1)
				fatalx("bad IMSG_CTL_LOG_VERBOSE");
			log_setverbose(v);
			break;
		case IMSG_PUBLISH:
			if ((o = imsg_get_json(&imsg)) == NULL)
				fatalx("bad IMSG_PUBLISH payload");
			publisher_publish(o, imsg_get_fd(&imsg));
			json_decref(o);
			break;
		default:
			fatalx("unexpected imsg %u", imsg_get_type(&imsg));
		}
		imsg_free(&imsg);
	}
}
