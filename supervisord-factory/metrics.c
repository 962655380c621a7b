/*
 * What an operator watches: the overview `factoryctl status -j` and
 * `top` show, and the same numbers as OpenMetrics text for `factoryctl
 * metrics` and the textfile collector (metrics: file).  Everything
 * here is counted by the parent itself: no byte of an agent's, nor a
 * child's, reaches a metric name or a label (labels are states,
 * stages and process names, all ours).  Counters and histograms count
 * from this daemon's start, as Prometheus expects of a process.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "factoryd.h"
#include "journal.h"
#include "log.h"

/* Seconds; +Inf is implicit. */
static const double	 bounds[] = {
	0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
	30, 60, 300, 1800
};
#define NBOUNDS		(sizeof(bounds) / sizeof(bounds[0]))
#define NHIST		24	/* stage and part names, and more */
#define NERRORS		8	/* the last warnings kept for top */
#define ERRLEN		256

struct hist {
	char		 name[32];
	uint64_t	 bucket[NBOUNDS];	/* not cumulative */
	uint64_t	 count;
	double		 sum;
};

static struct hist	 stages[NHIST];	/* by stage name */
static struct hist	 spawn = { "spawn", { 0 }, 0, 0 };
static struct hist	 fsync_h = { "fsync", { 0 }, 0, 0 };
static struct hist	 preview_h = { "preview", { 0 }, 0, 0 };
static int		 previews_live;	/* preview.c says, as it changes */
static uint64_t		 teardown_failures;
static uint64_t		 attempts_ended;

static struct {
	time_t	 when;
	char	 line[ERRLEN];
}			 errors[NERRORS];
static size_t		 nerrors;	/* ever logged; the ring has the last */

static struct event	 file_ev;
static struct fleet_stats fleet_seen;	/* fleet.c's, at its last tick */

void
metrics_fleet(const struct fleet_stats *s)
{
	fleet_seen = *s;
}

static void
hist_add(struct hist *h, double v)
{
	size_t	 i;

	for (i = 0; i < NBOUNDS; i++)
		if (v <= bounds[i]) {
			h->bucket[i]++;
			break;
		}
	h->count++;
	h->sum += v;
}

static struct hist *
stage_hist(const char *name)
{
	size_t	 i;

	for (i = 0; i < NHIST; i++) {
		if (stages[i].name[0] == '\0') {
			strlcpy(stages[i].name, name, sizeof(stages[i].name));
			return (&stages[i]);
		}
		if (strcmp(stages[i].name, name) == 0)
			return (&stages[i]);
	}
	return (NULL);
}

/* An attempt was torn down: its stage times, from its receipt's facts. */
void
metrics_attempt_done(const json_t *stagetimes)
{
	const char	*k;
	json_t		*v;
	struct hist	*h;

	attempts_ended++;
	json_object_foreach((json_t *)stagetimes, k, v) {
		if (!json_is_integer(v) || (h = stage_hist(k)) == NULL)
			continue;
		hist_add(h, json_integer_value(v) / 1000.0);
		if (strcmp(k, "sandbox") == 0)
			hist_add(&spawn, json_integer_value(v) / 1000.0);
	}
}

/* A preview ended, after ms live. */
void
metrics_preview(uint64_t ms)
{
	hist_add(&preview_h, ms / 1000.0);
}

/* How many previews are live now. */
void
metrics_previews(int n)
{
	previews_live = n;
}

void
metrics_teardown_failed(void)
{
	teardown_failures++;
}

void
metrics_fsync(uint64_t usec)
{
	hist_add(&fsync_h, usec / 1e6);
}

static void
metrics_log_hook(int pri, const char *line)
{
	size_t	 i = nerrors++ % NERRORS;

	errors[i].when = time(NULL);
	strlcpy(errors[i].line, line, sizeof(errors[i].line));
}

/* The stage an attempt is in now: the last one that has started. */
static const char *
current_stage(const struct attempt *a)
{
	static const char *const names[ST_MAX] = {
		"queue", "allocation", "checkout", "sandbox", "run",
		"collect", "verify", "publish", "teardown"
	};
	int	 i;

	for (i = ST_MAX - 1; i >= 0; i--)
		if (a->t[i] != 0)
			return (names[i]);
	return ("queue");
}

static int
attempt_live(const struct attempt *a)
{
	return (!a->torn_down && a->state != AS_QUEUED &&
	    a->state != AS_ORPHANED);
}

/*
 * For status -j and top: attempts per state, the queue, what runs now
 * (with its live usage), who is busy, orphans, the last errors.
 */
json_t *
metrics_overview(void)
{
	struct attempt		*a;
	struct sandbox_usage	 u;
	json_t			*bystate, *running, *o, *errs;
	struct fleet_stats	 fs;
	uint64_t		 now = now_ms(), oldest = 0;
	size_t			 i, n, queued = 0, verifying = 0,
				 publishing = 0, count[AS_MAX];

	memset(count, 0, sizeof(count));
	running = json_array();
	TAILQ_FOREACH(a, &env->attempts, entry) {
		count[a->outcome != AS_MAX ? a->outcome : a->state]++;
		if (a->state == AS_QUEUED && !a->torn_down) {
			queued++;
			if (a->t[ST_QUEUE] != 0 && (oldest == 0 ||
			    a->t[ST_QUEUE] < oldest))
				oldest = a->t[ST_QUEUE];
		}
		if (a->state == AS_VERIFYING)
			verifying++;
		if (a->state == AS_PUBLISHING)
			publishing++;
		if (!attempt_live(a))
			continue;
		memset(&u, 0, sizeof(u));
		if (a->run != NULL && a->run->active)
			(void)sandbox_usage(&a->run->sb, &u);
		else {
			u.cpu_ms = a->usage.cpu_ms;
			u.mem_peak = a->usage.mem_peak;
		}
		json_array_append_new(running, json_pack(
		    "{s:s, s:s, s:s, s:s, s:I, s:f, s:I, s:I, s:f, s:I}", "id",
		    a->id, "state", attempt_state_name(a->state),
		    "stage", current_stage(a), "repository", a->repo,
		    "elapsed_ms", (json_int_t)(a->t[ST_QUEUE] != 0 &&
		    now > a->t[ST_QUEUE] ? now - a->t[ST_QUEUE] : 0),
		    "cpu_seconds", u.cpu_ms / 1000.0,
		    "memory", (json_int_t)u.mem_peak,
		    "tokens", (json_int_t)(a->spend.tokens_in +
		    a->spend.tokens_out),
		    "usd", a->spend.cost_uusd / 1e6,
		    "estimated", (json_int_t)a->spend.estimated));
	}
	bystate = json_object();
	for (i = 0; i < AS_MAX; i++)
		json_object_set_new(bystate, attempt_state_name(i),
		    json_integer((json_int_t)count[i]));
	errs = json_array();
	n = nerrors < NERRORS ? nerrors : NERRORS;
	for (i = nerrors - n; i < nerrors; i++)
		json_array_append_new(errs, json_pack("{s:I, s:s}", "time",
		    (json_int_t)errors[i % NERRORS].when, "line",
		    errors[i % NERRORS].line));
	o = json_pack("{s:o, s:{s:I, s:I}, s:o, s:{s:I, s:I}, s:I, s:o}",
	    "attempts", bystate,
	    "queue", "length", (json_int_t)queued, "oldest_ms",
	    (json_int_t)(oldest != 0 && now > oldest ? now - oldest : 0),
	    "running", running,
	    "busy", "verifying", (json_int_t)verifying,
	    "publishing", (json_int_t)publishing,
	    "orphans", (json_int_t)reconcile_orphan_count(),
	    "errors", errs);
	if (o == NULL)
		fatal(NULL);
	if (env->conf->fleet.enabled) {
		fs = fleet_seen;
		json_object_set_new(o, "fleet", json_pack("{s:s, s:I, s:b, "
		    "s:I, s:I, s:I, s:I}", "host", env->conf->fleet.host,
		    "epoch", (json_int_t)fs.epoch, "fenced", fs.fenced,
		    "lease_left_ms", (json_int_t)fs.lease_left_ms,
		    "claims", (json_int_t)fs.claims,
		    "superseded", (json_int_t)fs.superseded,
		    "swept", (json_int_t)(fs.swept[0] + fs.swept[1] +
		    fs.swept[2])));
	}
	return (o);
}

/* The text grows in one buffer; out of memory is fatal. */
struct mbuf {
	char	*p;
	size_t	 len, cap;
};

static void
mprintf(struct mbuf *b, const char *fmt, ...)
    __attribute__((__format__ (printf, 2, 3)));
static void	metrics_fleet_more(struct mbuf *, const struct fleet_stats *);

static void
mprintf(struct mbuf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			fatalx("metrics: vsnprintf");
		if ((size_t)n < b->cap - b->len) {
			b->len += n;
			return;
		}
		b->cap = b->cap * 2 + n + 1;
		if ((b->p = realloc(b->p, b->cap)) == NULL)
			fatal(NULL);
	}
}

static void
hist_print(struct mbuf *b, const char *metric, const char *label,
    const struct hist *h)
{
	uint64_t	 cum = 0;
	size_t		 i;
	char		 lab[64];

	snprintf(lab, sizeof(lab), label != NULL ? "%s=\"%s\"," : "",
	    label, h->name);
	for (i = 0; i < NBOUNDS; i++) {
		cum += h->bucket[i];
		mprintf(b, "%s_bucket{%sle=\"%g\"} %llu\n", metric, lab,
		    bounds[i], (unsigned long long)cum);
	}
	mprintf(b, "%s_bucket{%sle=\"+Inf\"} %llu\n", metric, lab,
	    (unsigned long long)h->count);
	lab[strlen(lab) > 0 ? strlen(lab) - 1 : 0] = '\0';	/* the comma */
	mprintf(b, "%s_sum%s%s%s %.6f\n", metric, *lab ? "{" : "", lab,
	    *lab ? "}" : "", h->sum);
	mprintf(b, "%s_count%s%s%s %llu\n", metric, *lab ? "{" : "", lab,
	    *lab ? "}" : "", (unsigned long long)h->count);
}

/* OpenMetrics text, NUL-terminated; the caller frees it. */
char *
metrics_text(void)
{
	struct mbuf	 b = { NULL, 0, 0 };
	struct attempt	*a;
	struct child	*c;
	struct attempt_spend sp;
	struct fleet_stats fs;
	size_t		 i, count[AS_MAX];

	b.cap = 8192;
	if ((b.p = malloc(b.cap)) == NULL)
		fatal(NULL);
	memset(count, 0, sizeof(count));
	memset(&sp, 0, sizeof(sp));
	TAILQ_FOREACH(a, &env->attempts, entry) {
		count[a->outcome != AS_MAX ? a->outcome : a->state]++;
		sp.requests += a->spend.requests;
		sp.refused += a->spend.refused;
		sp.estimated += a->spend.estimated;
		sp.tokens_in += a->spend.tokens_in;
		sp.tokens_out += a->spend.tokens_out;
		sp.cost_uusd += a->spend.cost_uusd;
	}

	mprintf(&b, "# TYPE factory_attempts gauge\n"
	    "# HELP factory_attempts Attempts factoryd knows, by state.\n");
	for (i = 0; i < AS_MAX; i++)
		mprintf(&b, "factory_attempts{state=\"%s\"} %zu\n",
		    attempt_state_name(i), count[i]);
	mprintf(&b, "# TYPE factory_attempts_ended counter\n"
	    "# HELP factory_attempts_ended Attempts torn down since start.\n"
	    "factory_attempts_ended_total %llu\n",
	    (unsigned long long)attempts_ended);

	mprintf(&b, "# TYPE factory_stage_duration_seconds histogram\n"
	    "# HELP factory_stage_duration_seconds Each stage of the "
	    "attempts torn down since start.\n");
	for (i = 0; i < NHIST && stages[i].name[0] != '\0'; i++)
		hist_print(&b, "factory_stage_duration_seconds", "stage",
		    &stages[i]);
	mprintf(&b, "# TYPE factory_spawn_seconds histogram\n"
	    "# HELP factory_spawn_seconds From the sandbox's start to the "
	    "agent's exec.\n");
	hist_print(&b, "factory_spawn_seconds", NULL, &spawn);
	mprintf(&b, "# TYPE factory_journal_fsync_seconds histogram\n"
	    "# HELP factory_journal_fsync_seconds Each fsync of the "
	    "journal.\n");
	hist_print(&b, "factory_journal_fsync_seconds", NULL, &fsync_h);

	mprintf(&b, "# TYPE factory_teardown_failures counter\n"
	    "# HELP factory_teardown_failures Teardowns that left something "
	    "and were retried.\n"
	    "factory_teardown_failures_total %llu\n",
	    (unsigned long long)teardown_failures);
	mprintf(&b, "# TYPE factory_orphans gauge\n"
	    "# HELP factory_orphans Leftovers the reconciler found, not yet "
	    "reaped.\n"
	    "factory_orphans %zu\n", reconcile_orphan_count());
	if (env->conf->preview.enabled) {
		mprintf(&b, "# TYPE factory_previews gauge\n"
		    "# HELP factory_previews Attempts whose preview is live.\n"
		    "factory_previews %d\n", previews_live);
		mprintf(&b, "# TYPE factory_preview_seconds histogram\n"
		    "# HELP factory_preview_seconds How long each preview "
		    "was live.\n");
		hist_print(&b, "factory_preview_seconds", NULL, &preview_h);
	}

	/* Spend of the attempts the daemon knows (their model receipts). */
	mprintf(&b, "# TYPE factory_model_requests counter\n"
	    "# HELP factory_model_requests Requests through the gateway, "
	    "refused ones too.\n"
	    "factory_model_requests_total %llu\n"
	    "# TYPE factory_model_refused counter\n"
	    "# HELP factory_model_refused Requests the gateway refused or "
	    "cut.\n"
	    "factory_model_refused_total %llu\n"
	    "# TYPE factory_model_estimated counter\n"
	    "# HELP factory_model_estimated Requests whose usage the "
	    "provider never reported, charged their reservation.\n"
	    "factory_model_estimated_total %llu\n"
	    "# TYPE factory_model_tokens counter\n"
	    "# HELP factory_model_tokens Tokens metered from the providers' "
	    "usage.\n"
	    "factory_model_tokens_total{direction=\"input\"} %llu\n"
	    "factory_model_tokens_total{direction=\"output\"} %llu\n"
	    "# TYPE factory_model_cost_usd counter\n"
	    "# HELP factory_model_cost_usd Their cost by the price tables.\n"
	    "factory_model_cost_usd_total %.6f\n",
	    (unsigned long long)sp.requests, (unsigned long long)sp.refused,
	    (unsigned long long)sp.estimated,
	    (unsigned long long)sp.tokens_in,
	    (unsigned long long)sp.tokens_out, sp.cost_uusd / 1e6);
	mprintf(&b, "# TYPE factory_child_restarts counter\n"
	    "# HELP factory_child_restarts Restarts of each child process.\n");
	for (i = 0; i < (size_t)env->nchildren; i++) {
		c = &env->children[i];
		mprintf(&b, "factory_child_restarts_total{process=\"%s\","
		    "slot=\"%d\"} %d\n", factory_procs[c->id].name, c->slot,
		    c->restarts);
	}
	mprintf(&b, "# TYPE factory_child_up gauge\n"
	    "# HELP factory_child_up 1 if the child has said hello.\n");
	for (i = 0; i < (size_t)env->nchildren; i++) {
		c = &env->children[i];
		mprintf(&b, "factory_child_up{process=\"%s\",slot=\"%d\"} %d\n",
		    factory_procs[c->id].name, c->slot,
		    c->state == CHILD_RUNNING);
	}
	if (env->conf->fleet.enabled) {
		fs = fleet_seen;
		mprintf(&b, "# TYPE factory_fleet_fenced gauge\n"
		    "# HELP factory_fleet_fenced 1 while this host's lease "
		    "is not surely live.\n"
		    "factory_fleet_fenced %d\n"
		    "# TYPE factory_fleet_lease_remaining_seconds gauge\n"
		    "# HELP factory_fleet_lease_remaining_seconds Until this "
		    "host fences itself unless renewed.\n"
		    "factory_fleet_lease_remaining_seconds %.3f\n"
		    "# TYPE factory_fleet_fences counter\n"
		    "# HELP factory_fleet_fences Times this host fenced "
		    "itself.\n"
		    "factory_fleet_fences_total %llu\n"
		    "# TYPE factory_fleet_claims counter\n"
		    "# HELP factory_fleet_claims Attempts this host claimed.\n"
		    "factory_fleet_claims_total %llu\n"
		    "# TYPE factory_fleet_superseded counter\n"
		    "# HELP factory_fleet_superseded Claims of this host "
		    "another host had by then.\n"
		    "factory_fleet_superseded_total %llu\n"
		    "# TYPE factory_fleet_swept counter\n"
		    "# HELP factory_fleet_swept Lapsed claims of lost hosts "
		    "this host's sweeps took back.\n"
		    "factory_fleet_swept_total{as=\"queued\"} %llu\n"
		    "factory_fleet_swept_total{as=\"dead\"} %llu\n"
		    "factory_fleet_swept_total{as=\"lost-publishing\"} %llu\n",
		    fs.fenced, fs.lease_left_ms / 1000.0,
		    (unsigned long long)fs.fences,
		    (unsigned long long)fs.claims,
		    (unsigned long long)fs.superseded,
		    (unsigned long long)fs.swept[0],
		    (unsigned long long)fs.swept[1],
		    (unsigned long long)fs.swept[2]);
		metrics_fleet_more(&b, &fs);
	}
	mprintf(&b, "# EOF\n");
	return (b.p);
}

/*
 * The fleet's adoptions, and the database's view a few seconds old:
 * hosts whose lease ran out, what waits per tenant and class and the
 * oldest one's wait.  Tenant names are the fleet's (letters, digits,
 * ".-_"): nothing to escape in a label.
 */
static void
metrics_fleet_more(struct mbuf *b, const struct fleet_stats *fs)
{
	static const char *const classes[] = { "urgent", "normal", "batch" };
	size_t	 i;

	mprintf(b, "# TYPE factory_fleet_adopted counter\n"
	    "# HELP factory_fleet_adopted Publications of lost hosts this "
	    "host finished from the forge's side.\n"
	    "factory_fleet_adopted_total{as=\"done\"} %llu\n"
	    "factory_fleet_adopted_total{as=\"failed\"} %llu\n",
	    (unsigned long long)fs->adopted[0],
	    (unsigned long long)fs->adopted[1]);
	if (fs->hosts_expired < 0)
		return;
	mprintf(b, "# TYPE factory_fleet_hosts_expired gauge\n"
	    "# HELP factory_fleet_hosts_expired Hosts whose lease ran out "
	    "in the database (not gone).\n"
	    "factory_fleet_hosts_expired %d\n"
	    "# TYPE factory_fleet_queued gauge\n"
	    "# HELP factory_fleet_queued Attempts waiting in the fleet's "
	    "queue.\n", fs->hosts_expired);
	for (i = 0; i < fs->nqueues; i++)
		mprintf(b, "factory_fleet_queued{tenant=\"%s\",class=\"%s\"} "
		    "%u\n", fs->queues[i].tenant,
		    classes[fs->queues[i].class % 3], fs->queues[i].queued);
	mprintf(b, "# TYPE factory_fleet_queue_age_seconds gauge\n"
	    "# HELP factory_fleet_queue_age_seconds How long the oldest "
	    "waiting attempt has waited.\n");
	for (i = 0; i < fs->nqueues; i++)
		mprintf(b, "factory_fleet_queue_age_seconds{tenant=\"%s\","
		    "class=\"%s\"} %.3f\n", fs->queues[i].tenant,
		    classes[fs->queues[i].class % 3],
		    fs->queues[i].oldest_ms / 1000.0);
}

/*
 * metrics: file: the text written whole to a temp name beside it,
 * then renamed over it, so the collector never reads half of it.
 */
static void
metrics_write_file(int fd, short event, void *arg)
{
	const char	*path = env->conf->metrics_file;
	struct timeval	 tv = { env->conf->metrics_interval, 0 };
	char		 tmp[PATH_MAX], *text;
	size_t		 len, off = 0;
	ssize_t		 n;
	int		 f, ok;

	if (path[0] == '\0')
		return;
	text = metrics_text();
	len = strlen(text);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >=
	    sizeof(tmp) || (f = mkstemp(tmp)) == -1) {
		log_warn("metrics: %s", path);
		goto again;
	}
	while (off < len && (n = write(f, text + off, len - off)) > 0)
		off += n;
	ok = off == len && fchmod(f, 0644) == 0;
	if (close(f) == -1)
		ok = 0;
	if (!ok || rename(tmp, path) == -1) {
		log_warn("metrics: %s", path);
		(void)unlink(tmp);
	}
 again:
	free(text);
	evtimer_add(&file_ev, &tv);
}

void
metrics_init(void)
{
	log_sethook(metrics_log_hook);
	journal_fsync_observer(metrics_fsync);
	evtimer_set(&file_ev, metrics_write_file, NULL);
	metrics_reconfigure();
}

/* At start and after a reload: the file's timer, now. */
void
metrics_reconfigure(void)
{
	struct timeval	 tv = { 0, 0 };

	evtimer_del(&file_ev);
	if (env->conf->metrics_file[0] != '\0')
		evtimer_add(&file_ev, &tv);
}
