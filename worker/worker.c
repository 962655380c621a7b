/*
 * factory-worker: libgit2 work on repositories and attempt trees:
 * resolving baselines, provisioning trees, collecting results into
 * bundles.  Started only by factoryd, with its channel on fd 3.
 */
#include <sys/types.h>

#include <event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esc.h"
#include "factory.h"
#include "imsgev.h"
#include "log.h"
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
static void	worker_resolve(json_t *);
static void	worker_provision(json_t *);
static void	worker_collect(json_t *);

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

/* A reason may name a path of the tree: it goes out escaped. */
static void
worker_error(const char *id, const char *err)
{
	json_t	*e = esc_json_str(err);

	log_warnx("%s: %s", id, json_string_value(e));
	imsgev_compose_json(&iev_parent, IMSG_ERROR, -1, json_pack(
	    "{s:s, s:o}", "id", id, "error", e));
}

static void
worker_resolve(json_t *o)
{
	char	 oid[GITW_HEXSZ + 1], err[512];
	json_t	*req = json_object_get(o, "req");

	if (resolve(json_str(o, "repo"), json_str(o, "ref"), oid, err,
	    sizeof(err)) == -1)
		imsgev_compose_json(&iev_parent, IMSG_RESOLVE, -1, json_pack(
		    "{s:O, s:o}", "req", req, "error", esc_json_str(err)));
	else
		imsgev_compose_json(&iev_parent, IMSG_RESOLVE, -1, json_pack(
		    "{s:O, s:s}", "req", req, "oid", oid));
}

static void
worker_provision(json_t *o)
{
	const char	*id = json_str(o, "id");
	char		 err[512];

	if (provision(json_str(o, "repo"), json_str(o, "baseline"),
	    json_str(o, "dir"), err, sizeof(err)) == -1) {
		worker_error(id, err);
		return;
	}
	log_debug("%s: provisioned", id);
	crashpoint("worker:before-ready");
	imsgev_compose_json(&iev_parent, IMSG_READY, -1, json_pack("{s:s, s:O}",
	    "id", id, "epoch", json_object_get(o, "epoch")));
}

static void
worker_collect(json_t *o)
{
	struct collect_req	 req;
	struct collect_result	 res;
	const char		*id = json_str(o, "id");
	json_t			*scope = json_object_get(o, "scope"), *v;
	json_t			*changes, *rejects;
	json_t			*p;
	char			**globs, err[512], st[2];
	size_t			 i, used, n = json_array_size(scope);

	if ((globs = calloc(n + 1, sizeof(*globs))) == NULL)
		fatal(NULL);
	json_array_foreach(scope, i, v)
		globs[i] = (char *)json_string_value(v);
	memset(&req, 0, sizeof(req));
	req.repo_path = json_str(o, "repo");
	req.baseline_hex = json_str(o, "baseline");
	req.attempt_dir = json_str(o, "dir");
	req.scope = globs;
	req.title = json_str(o, "title");
	req.attempt_id = id;
	req.manifest_digest = json_str(o, "digest");
	req.tree_limit = json_integer_value(json_object_get(o, "tree_limit"));
	req.bundle_path = json_str(o, "bundle");
	memset(&res, 0, sizeof(res));
	if (collect(&req, &res, err, sizeof(err)) == -1) {
		free(globs);
		collect_result_free(&res);
		worker_error(id, err);
		return;
	}
	free(globs);

	changes = json_array();
	for (i = 0, used = 0; i < res.nchanges && i < RESULT_MAXLIST; i++) {
		st[0] = res.changes[i].status;
		st[1] = '\0';
		p = esc_json_str(res.changes[i].path);
		if ((used += strlen(json_string_value(p))) > RESULT_LISTBYTES &&
		    i > 0) {
			json_decref(p);
			break;
		}
		json_array_append_new(changes, json_pack("{s:s, s:o}",
		    "status", st, "path", p));
	}
	rejects = json_array();
	for (i = 0, used = 0; i < res.nrejects && i < RESULT_MAXLIST; i++) {
		p = esc_json_str(res.rejects[i]);
		if ((used += strlen(json_string_value(p))) > RESULT_LISTBYTES &&
		    i > 0) {
			json_decref(p);
			break;
		}
		json_array_append_new(rejects, p);
	}
	crashpoint("worker:before-result");
	if (faultpoint("worker:stale-result"))
		imsgev_compose_json(&iev_parent, IMSG_RESULT, -1, json_pack(
		    "{s:s, s:I, s:s, s:s, s:s, s:I, s:[], s:I, s:[], s:I}",
		    "id", id, "epoch", json_integer_value(json_object_get(o,
		    "epoch")) - 1, "commit", res.commit_hex, "tree",
		    res.tree_hex, "bundle_sha256", res.bundle_sha256,
		    "bundle_size", (json_int_t)res.bundle_size, "changes",
		    "changes_total", (json_int_t)0, "rejects",
		    "rejects_total", (json_int_t)0));
	imsgev_compose_json(&iev_parent, IMSG_RESULT, -1, json_pack(
	    "{s:s, s:O, s:s, s:s, s:s, s:I, s:o, s:I, s:o, s:I}",
	    "id", id, "epoch", json_object_get(o, "epoch"),
	    "commit", res.commit_hex, "tree", res.tree_hex,
	    "bundle_sha256", res.bundle_sha256,
	    "bundle_size", (json_int_t)res.bundle_size,
	    "changes", changes, "changes_total", (json_int_t)res.nchanges,
	    "rejects", rejects, "rejects_total", (json_int_t)res.nrejects));
	log_debug("%s: collected, %zu changes, %zu rejects", id,
	    res.nchanges, res.nrejects);
	collect_result_free(&res);
}

/* Requests from the parent; -1 for anything else. */
static int
worker_imsg(struct imsg *imsg)
{
	json_t	*o;

	switch (imsg_get_type(imsg)) {
	case IMSG_RESOLVE:
	case IMSG_PROVISION:
	case IMSG_COLLECT:
		break;
	default:
		return (-1);
	}
	if ((o = imsg_get_json(imsg)) == NULL)
		return (-1);
	if (imsg_get_type(imsg) == IMSG_RESOLVE)
		worker_resolve(o);
	else if (imsg_get_type(imsg) == IMSG_PROVISION)
		worker_provision(o);
	else
		worker_collect(o);
	json_decref(o);
	return (0);
}
