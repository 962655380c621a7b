/*
 * factory-publisher: the only process that holds forge credentials.
 * It checks a verdict against the pinned verifier key, then pushes one
 * branch and records one pull request.  It never reads attempt trees:
 * the bundle arrives as an fd.  Started only by factoryd, on fd 3.
 */
#include <sys/types.h>

#include <event.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "esc.h"
#include "factory.h"
#include "imsgev.h"
#include "log.h"
#include "msg.h"
#include "pledge.h"
#include "publisher.h"
#include "receipt.h"
#include "util.h"

static int	publisher_imsg(struct imsg *);
static void	publisher_publish(const struct msg_publish *, int, int);
static const char *publisher_scratch(void);

static struct imsgev	 iev_parent;
static int		 slowed;	/* the fault point's, once */

#define PUB_SLOW_S	20	/* publisher:slow-after-publish */

int
main(int argc, char *argv[])
{
	int	 fd;

	/*
	 * A forge that closes the connection mid-push must be an error
	 * of that publication, not the publisher's death (and a token
	 * left unrevoked): libgit2 and OpenSSL write without
	 * MSG_NOSIGNAL.  Before anything else can write to a socket.
	 */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return (1);
	/* Before libevent or jansson allocate anything. */
	gh_wipe_init();
	/* Policy first: fd 3 check, closefrom, unveil, pledge. */
	fd = proc_child_init(PROC_PUBLISHER, argc, argv);
	pub_git_init();

	child_start(&iev_parent, fd, publisher_imsg);

	event_dispatch();
	return (0);
}

/* The github settings as gh_conf_from_json() checks them. */
static json_t *
publisher_github_json(const struct msg_github *g)
{
	json_t	*o;

	if ((o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:I, s:s, s:s}",
	    "api", g->api, "owner", g->owner, "repo", g->repo,
	    "repository_id", (json_int_t)g->repository_id, "app_id",
	    g->app_id, "installation_id", (json_int_t)g->installation_id,
	    "key", g->key, "ca", g->ca)) == NULL)
		fatalx("github settings");
	return (o);
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
publisher_publish(const struct msg_publish *o, int bfd, int adopt)
{
	struct publish_req	 req;
	struct publish_result	 res;
	struct msg_published	 m;
	struct msg_error	 late;
	struct gh_conf		 gc;
	const char		*id = o->id;
	char			*verdict = NULL, err[512];
	uint8_t			 sig[ED25519_SIG_LEN], pub[ED25519_PUB_LEN];
	json_t			*gj;
	int			 rc;

	/*
	 * A fleet claim's lease may have lapsed while this waited behind
	 * other publications: begun now, it could race the host that
	 * adopts it.  The parent asks again while its lease holds.
	 */
	if (o->begin_by != 0 && boot_ms() >= o->begin_by) {
		memset(&late, 0, sizeof(late));
		strlcpy(late.id, id, sizeof(late.id));
		snprintf(late.error, sizeof(late.error), "not begun: its "
		    "lease's end passed %llu ms before the publisher was free",
		    (unsigned long long)(boot_ms() - o->begin_by));
		log_warnx("%s: %s", id, late.error);
		msg_send(&iev_parent, IMSG_PUBLISH_LATE, MSG_LATE, &late);
		goto done;
	}
	if (pub_req_from_msg(o, bfd, &req, &verdict, sig, pub, err,
	    sizeof(err)) == -1) {
		msg_send_error(&iev_parent, id, err);
		goto done;
	}
	req.adopt = adopt;
	memset(&res, 0, sizeof(res));
	if (o->has_github) {
		gj = publisher_github_json(&o->github);
		rc = gh_conf_from_json(gj, publisher_scratch(), &gc, err,
		    sizeof(err)) == -1 ? -1 : publish_github(&req, &gc, &res,
		    err, sizeof(err));
		json_decref(gj);
	} else
		rc = publish_local(&req, &res, err, sizeof(err));
	if (rc == -1) {
		msg_send_error(&iev_parent, id, err);
		goto done;
	}
	log_info("%s: %s branch %s, pull request %d", id, res.reused ?
	    "already published:" : "published", res.branch, res.number);
	memset(&m, 0, sizeof(m));
	strlcpy(m.id, id, sizeof(m.id));
	if (esc_encode(res.branch, strlen(res.branch), m.branch,
	    sizeof(m.branch)) == -1 || esc_encode(res.record,
	    strlen(res.record), m.record, sizeof(m.record)) == -1)
		fatalx("%s: branch or record too long", id);
	m.number = res.number;
	m.reused = res.reused;
	/*
	 * A publisher busy at length after its first publication, as one
	 * behind a slow forge is: what waits meanwhile is begun late or
	 * not at all (regress/fleetfault L).
	 */
	if (faultpoint("publisher:slow-after-publish") && !slowed) {
		slowed = 1;
		log_warnx("fault point publisher:slow-after-publish: %d s",
		    PUB_SLOW_S);
		sleep(PUB_SLOW_S);
		log_warnx("fault point publisher:slow-after-publish: done");
	}
	msg_send(&iev_parent, IMSG_PUBLISHED, MSG_PUBLISHED, &m);
 done:
	free(verdict);
	if (bfd != -1)
		close(bfd);
}

/*
 * Requests from the parent, decoded strictly; -1 for anything else.
 * A malformed one is a broken parent: we exit.
 */
static int
publisher_imsg(struct imsg *imsg)
{
	struct msg_publish	 m;
	char			 err[MSG_ERRLEN];
	uint32_t		 type = imsg_get_type(imsg);
	int			 fd;

	if (type != IMSG_PUBLISH && type != IMSG_PUBLISH_ADOPT)
		return (-1);
	fd = imsg_get_fd(imsg);
	if (type == IMSG_PUBLISH_ADOPT && fd != -1)
		fatalx("from the parent: an adoption with a descriptor");
	if (msg_get(imsg, MSG_PUBLISH, &m, err, sizeof(err)) == -1)
		fatalx("from the parent: %s", err);
	publisher_publish(&m, fd, type == IMSG_PUBLISH_ADOPT);
	msg_free(MSG_PUBLISH, &m);
	return (0);
}
