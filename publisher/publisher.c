/*
 * factory-publisher: the only process that holds forge credentials.
 * It checks a verdict against the pinned verifier key, then pushes one
 * branch and records one pull request.  It never reads attempt trees:
 * the bundle arrives as an fd.  Started only by factoryd, on fd 3.
 */
#include <sys/types.h>

#include <event.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "esc.h"
#include "factory.h"
#include "imsgev.h"
#include "log.h"
#include "pledge.h"
#include "publisher.h"
#include "receipt.h"

static int	publisher_imsg(struct imsg *);
static void	publisher_publish(json_t *, int);
static const char *publisher_scratch(void);

static struct imsgev	 iev_parent;

int
main(int argc, char *argv[])
{
	int	 fd;

	/* Before libevent or jansson allocate anything. */
	gh_wipe_init();
	/* Policy first: fd 3 check, closefrom, unveil, pledge. */
	fd = proc_child_init(PROC_PUBLISHER, argc, argv);
	pub_git_init();

	child_start(&iev_parent, fd, publisher_imsg);

	event_dispatch();
	return (0);
}

/*
 * A reason may quote a forge's answer or name a path: it goes out in
 * the suite's encoding (esc.h), like every string we send.
 */
static void
publisher_error(const char *id, const char *err)
{
	json_t	*e = esc_json_str(err);

	log_warnx("%s: %s", id, json_string_value(e));
	imsgev_compose_json(&iev_parent, IMSG_ERROR, -1, json_pack(
	    "{s:s, s:o}", "id", id, "error", e));
}

/* forge github: where its object caches go, under the state dir. */
static const char *
publisher_scratch(void)
{
	static char	 path[PATH_MAX];
	const char	*state = proc_getvar("state");

	if (state == NULL || (size_t)snprintf(path, sizeof(path), "%s/%s",
	    state, PUB_SCRATCH_DIR) >= sizeof(path))
		return (NULL);
	return (path);
}

static void
publisher_publish(json_t *o, int bfd)
{
	struct publish_req	 req;
	struct publish_result	 res;
	struct gh_conf		 gc;
	const char		*id = json_str(o, "id");
	const char		*forge = json_str(o, "forge");
	char			*verdict = NULL, err[512];
	uint8_t			 sig[ED25519_SIG_LEN], pub[ED25519_PUB_LEN];
	int			 rc;

	if (strcmp(forge, "local") != 0 && strcmp(forge, "github") != 0) {
		publisher_error(id, "forge not supported by this publisher");
		goto done;
	}
	if (pub_req_decode(o, bfd, &req, &verdict, sig, pub, err,
	    sizeof(err)) == -1) {
		publisher_error(id, err);
		goto done;
	}
	memset(&res, 0, sizeof(res));
	if (strcmp(forge, "github") == 0)
		rc = gh_conf_from_json(json_object_get(o, "github"),
		    publisher_scratch(), &gc, err, sizeof(err)) == -1 ? -1 :
		    publish_github(&req, &gc, &res, err, sizeof(err));
	else
		rc = publish_local(&req, &res, err, sizeof(err));
	if (rc == -1) {
		publisher_error(id, err);
		goto done;
	}
	log_info("%s: %s branch %s, pull request %d", id, res.reused ?
	    "already published:" : "published", res.branch, res.number);
	imsgev_compose_json(&iev_parent, IMSG_PUBLISHED, -1, json_pack(
	    "{s:s, s:o, s:i, s:o, s:b}", "id", id, "branch",
	    esc_json_str(res.branch), "number", res.number, "record",
	    esc_json_str(res.record), "reused", res.reused));
 done:
	free(verdict);
	if (bfd != -1)
		close(bfd);
}

/* Requests from the parent; -1 for anything else. */
static int
publisher_imsg(struct imsg *imsg)
{
	json_t	*o;

	if (imsg_get_type(imsg) != IMSG_PUBLISH ||
	    (o = imsg_get_json(imsg)) == NULL)
		return (-1);
	publisher_publish(o, imsg_get_fd(imsg));
	json_decref(o);
	return (0);
}
