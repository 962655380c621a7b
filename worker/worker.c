/*
 * factory-worker: libgit2 work on repositories and attempt trees:
 * resolving baselines, provisioning trees, collecting results into
 * bundles.  Started only by factoryd, with its channel on fd 3.
 */
#include <sys/types.h>

#include <event.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esc.h"
#include "factory.h"
#include "imsgev.h"
#include "log.h"
#include "msg.h"
#include "pledge.h"
#include "worker.h"

#define RESULT_MAXLIST	200	/* changes or rejects listed in a RESULT */
/*
 * Bytes of escaped paths and reasons listed in a RESULT: with the rest
 * it stays under FACTORY_MAXIMSG.  What does not fit is counted, never
 * dropped unsaid: changes_total and rejects_total are the full counts.
 */
#define RESULT_LISTBYTES	(16 * 1024)

static int	worker_imsg(struct imsg *);
static void	worker_resolve(const struct msg_resolve *);
static void	worker_provision(const struct msg_provision *);
static void	worker_collect(const struct msg_collect *);
static void	worker_diff(const struct msg_diff *);

static struct imsgev	 iev_parent;
static struct event	 ev_heartbeat;
static struct timeval	 tv_heartbeat;

/*
 * Our lease on the attempts we hold: the parent kills us if we stay
 * silent for its lease-ttl.  A libgit2 call that blocks longer than
 * that is treated as a hung worker, which it is.
 */
static void
worker_heartbeat(int fd, short event, void *arg)
{
	imsgev_compose(&iev_parent, IMSG_HEARTBEAT, 0, 0, -1, NULL, 0);
	evtimer_add(&ev_heartbeat, &tv_heartbeat);
}

int
main(int argc, char *argv[])
{
	char		 err[256];
	long long	 ms;
	int		 fd;

	/* Policy first: fd 3 check, closefrom, unveil, pledge. */
	fd = proc_child_init(PROC_WORKER, argc, argv);
	if (gitw_init(err, sizeof(err)) == -1)
		fatalx("libgit2: %s", err);

	child_start(&iev_parent, fd, worker_imsg);

	ms = proc_getvar("heartbeat_ms") ? strtonum(proc_getvar(
	    "heartbeat_ms"), 100, 3600 * 1000, NULL) : 10000;
	if (ms == 0)
		fatalx("bad heartbeat_ms");
	tv_heartbeat.tv_sec = ms / 1000;
	tv_heartbeat.tv_usec = (ms % 1000) * 1000;
	evtimer_set(&ev_heartbeat, worker_heartbeat, NULL);
	evtimer_add(&ev_heartbeat, &tv_heartbeat);

	event_dispatch();
	return (0);
}

static void
worker_resolve(const struct msg_resolve *q)
{
	struct msg_resolved	 m;
	char			 err[512];

	memset(&m, 0, sizeof(m));
	m.req = q->req;
	if (resolve(q->repo, q->ref, m.oid, err, sizeof(err)) == -1) {
		m.oid[0] = '\0';
		if (esc_encode(err, strlen(err), m.error,
		    sizeof(m.error)) == -1 || m.error[0] == '\0')
			strlcpy(m.error, "cannot be resolved",
			    sizeof(m.error));
	}
	msg_send(&iev_parent, IMSG_RESOLVE, MSG_RESOLVED, &m);
}

static void
worker_provision(const struct msg_provision *q)
{
	struct msg_ready	 m;
	char			 err[512];

	/* The shared pristine checkout first, if the parent asks for it. */
	if (q->pristine[0] != '\0' && pristine_checkout(q->repo,
	    q->baseline, q->pristine, err, sizeof(err)) == -1) {
		msg_send_error(&iev_parent, q->id, err);
		return;
	}
	if (provision_upper(q->repo, q->baseline, q->dir, err,
	    sizeof(err)) == -1) {
		msg_send_error(&iev_parent, q->id, err);
		return;
	}
	log_debug("%s: provisioned", q->id);
	crashpoint("worker:before-ready");
	memset(&m, 0, sizeof(m));
	strlcpy(m.id, q->id, sizeof(m.id));
	m.epoch = q->epoch;
	msg_send(&iev_parent, IMSG_READY, MSG_READY, &m);
}

/*
 * The lists of a RESULT, escaped, as many entries as fit; the totals
 * are always the full counts.  The first entry of each is always
 * listed (a path is at most PATH_MAX bytes: its encoding fits).
 */
static void
result_lists(const struct collect_result *res, struct msg_result *m)
{
	size_t	 i, used;
	char	*p;

	m->changes_total = res->nchanges;
	m->rejects_total = res->nrejects;
	if ((m->changes = calloc(res->nchanges + 1, sizeof(*m->changes))) ==
	    NULL || (m->rejects = calloc(res->nrejects + 1,
	    sizeof(*m->rejects))) == NULL)
		fatal(NULL);
	for (i = 0, used = 0; i < res->nchanges && i < RESULT_MAXLIST; i++) {
		if ((p = esc_strdup(res->changes[i].path,
		    strlen(res->changes[i].path))) == NULL)
			fatal(NULL);
		if ((used += strlen(p)) > RESULT_LISTBYTES && i > 0) {
			free(p);
			break;
		}
		m->changes[i].status[0] = res->changes[i].status;
		m->changes[i].path = p;
		m->nchanges++;
	}
	for (i = 0, used = 0; i < res->nrejects && i < RESULT_MAXLIST; i++) {
		if ((p = esc_strdup(res->rejects[i],
		    strlen(res->rejects[i]))) == NULL)
			fatal(NULL);
		if ((used += strlen(p)) > RESULT_LISTBYTES && i > 0) {
			free(p);
			break;
		}
		m->rejects[i] = p;
		m->nrejects++;
	}
}

static void
worker_collect(const struct msg_collect *q)
{
	struct collect_req	 req;
	struct collect_result	 res;
	struct msg_result	 m;
	char			 err[512], upper[PATH_MAX];

	memset(&req, 0, sizeof(req));
	req.repo_path = q->repo;
	req.baseline_hex = q->baseline;
	req.attempt_dir = q->dir;
	req.scope = q->scope;
	req.title = q->title;
	req.attempt_id = q->id;
	req.manifest_digest = q->digest;
	req.tree_limit = q->tree_limit;
	req.bundle_path = q->bundle;
	/* The tree is an overlay: what the agent did is in its upper. */
	if ((size_t)snprintf(upper, sizeof(upper), "%s/upper", q->dir) >=
	    sizeof(upper)) {
		msg_send_error(&iev_parent, q->id, "attempt dir path too long");
		return;
	}
	req.upper = upper;
	memset(&res, 0, sizeof(res));
	if (collect(&req, &res, err, sizeof(err)) == -1) {
		collect_result_free(&res);
		msg_send_error(&iev_parent, q->id, err);
		return;
	}
	memset(&m, 0, sizeof(m));
	strlcpy(m.id, q->id, sizeof(m.id));
	m.epoch = q->epoch;
	strlcpy(m.commit, res.commit_hex, sizeof(m.commit));
	strlcpy(m.tree, res.tree_hex, sizeof(m.tree));
	strlcpy(m.bundle_sha256, res.bundle_sha256, sizeof(m.bundle_sha256));
	m.bundle_size = res.bundle_size;
	result_lists(&res, &m);
	pristine_fault_late();
	crashpoint("worker:before-result");
	if (faultpoint("worker:stale-result")) {
		m.epoch--;
		msg_send(&iev_parent, IMSG_RESULT, MSG_RESULT, &m);
		m.epoch++;
	}
	msg_send(&iev_parent, IMSG_RESULT, MSG_RESULT, &m);
	log_debug("%s: collected, %zu changes, %zu rejects", q->id,
	    res.nchanges, res.nrejects);
	msg_free(MSG_RESULT, &m);
	collect_result_free(&res);
}

/*
 * A result's patch for factoryctl diff: its first MSG_DIFF_MAX bytes,
 * escaped (the bytes are the agent's), and whether there was more.
 * The rest is never made (diff.c).
 */
static void
worker_diff(const struct msg_diff *q)
{
	struct msg_diffed	 m;
	char			 err[512], *patch;
	size_t			 len;
	int			 truncated;

	memset(&m, 0, sizeof(m));
	m.req = q->req;
	if (diff_result(q->dir, q->baseline, q->commit, MSG_DIFF_MAX, &patch,
	    &len, &truncated, err, sizeof(err)) == -1) {
		if (esc_encode(err, strlen(err), m.error,
		    sizeof(m.error)) == -1 || m.error[0] == '\0')
			strlcpy(m.error, "no diff", sizeof(m.error));
		m.patch = "";
		msg_send(&iev_parent, IMSG_DIFF, MSG_DIFFED, &m);
		return;
	}
	m.bytes = len;
	m.truncated = truncated;
	if ((m.patch = esc_strdup(patch, len)) == NULL)
		fatal(NULL);
	free(patch);
	msg_send(&iev_parent, IMSG_DIFF, MSG_DIFFED, &m);
	free(m.patch);
	log_debug("%s: diff, %zu bytes", q->id, (size_t)m.bytes);
}

/*
 * Requests from the parent, decoded strictly; -1 for anything else.
 * A malformed one is a broken parent: we exit.
 */
static int
worker_imsg(struct imsg *imsg)
{
	union {
		struct msg_resolve	 resolve;
		struct msg_provision	 provision;
		struct msg_collect	 collect;
		struct msg_diff		 diff;
	}		 m;
	enum msg_kind	 k;
	char		 err[MSG_ERRLEN];

	switch (imsg_get_type(imsg)) {
	case IMSG_RESOLVE:
		k = MSG_RESOLVE;
		break;
	case IMSG_PROVISION:
		k = MSG_PROVISION;
		break;
	case IMSG_COLLECT:
		k = MSG_COLLECT;
		break;
	case IMSG_DIFF:
		k = MSG_DIFF;
		break;
	default:
		return (-1);
	}
	if (msg_get(imsg, k, &m, err, sizeof(err)) == -1)
		fatalx("from the parent: %s", err);
	if (k == MSG_RESOLVE)
		worker_resolve(&m.resolve);
	else if (k == MSG_PROVISION)
		worker_provision(&m.provision);
	else if (k == MSG_DIFF)
		worker_diff(&m.diff);
	else
		worker_collect(&m.collect);
	msg_free(k, &m);
	return (0);
}
