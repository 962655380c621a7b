/*
 * Adoption: an attempt of the fleet whose host was lost while it
 * published is finished here, from the forge's side, never run again.
 * The database hands over one whose repository this host serves, with
 * the pin its host wrote before the publication began (the commit and
 * the publish request, without the bundle); this host's publisher is
 * asked to finish it (IMSG_PUBLISH_ADOPT): the branch must already be
 * on the forge at the pinned commit, and the pull request is made or
 * found.  Nothing of it runs here: no journal record, no sandbox.  A
 * factoryd that dies meanwhile lets the claim lapse, and the sweep
 * makes it adoptable again; the publisher's work is idempotent.
 *
 * fleet.c drives this file (adopt_init, adopt_poll, adopt_beat,
 * adopt_tick) and hands it the requests' answers; dispatch.c hands it
 * the publisher's (adopt_answer).  It calls nothing of fleet.c's but
 * through the two functions adopt_init was given.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "factoryd.h"
#include "fleetmsg.h"
#include "log.h"

#include "attempt.h"

#define ADOPT_MAX	4		/* in flight at once */
#define ADOPT_MS	(10 * 60 * 1000) /* one that takes longer is let go */

struct adoption {
	char		 id[ATTEMPT_ID_MAX];
	uint64_t	 epoch;		/* the claim's, ours */
	char		 lost[FLEET_NAME_MAX];	/* the host that lost it */
	uint64_t	 started;	/* now_ms() */
	uint64_t	 lease_end;	/* the leases' clock: surely ours till */
	int		 used;
	int		 renewing;
	int		 superseded;	/* another host has it now */
	struct msg_publish req;		/* the publisher's, once made */
	int		 has_req;
	int		 sent;		/* req is with the publisher */
	int		 waiting;	/* for the publisher: said so */
};

/* An outcome sent, for its answer. */
struct ending {
	char		 id[ATTEMPT_ID_MAX];
	int		 to;		/* FLEET_DONE or FLEET_FAILED */
};

static struct adoption	 adoptions[ADOPT_MAX];
static uint64_t		 ended_ok, ended_failed;	/* for the metrics */
static int		 asking;	/* an ADOPT is out */
static adopt_request_fn	 request;
static adopt_outcome_fn	 outcome;
static adopt_clock_fn	 answer_lease;	/* of the answer being taken */
static adopt_clock_fn	 lease_clock;

void
adopt_init(adopt_request_fn req, adopt_outcome_fn out, adopt_clock_fn lease,
    adopt_clock_fn clock)
{
	request = req;
	outcome = out;
	answer_lease = lease;
	lease_clock = clock;
}

static struct adoption *
adoption_of(const char *id)
{
	size_t	 i;

	for (i = 0; i < ADOPT_MAX; i++)
		if (adoptions[i].used && strcmp(adoptions[i].id, id) == 0)
			return (&adoptions[i]);
	return (NULL);
}

static int
adoptions_free(void)
{
	size_t	 i;
	int	 n = 0;

	for (i = 0; i < ADOPT_MAX; i++)
		n += !adoptions[i].used;
	return (n);
}

static void
adoption_end(struct adoption *ad)
{
	if (ad->has_req)
		msg_free(MSG_PUBLISH, &ad->req);
	memset(ad, 0, sizeof(*ad));
}

static void
ended_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_result *r = ans;
	struct ending	*e = arg;

	/* Counted once the database took it, as the metrics say. */
	if (r != NULL && r->code == FLEET_OK && e->to == FLEET_DONE)
		ended_ok++;
	else if (r != NULL && r->code == FLEET_OK)
		ended_failed++;
	else
		log_warnx("%s: fleet: adoption's outcome: %s%s%s", e->id,
		    r != NULL ? fleet_code_name(r->code) : "not sent",
		    r != NULL && r->text[0] != '\0' ? ": " : "",
		    r != NULL ? r->text : "");
	free(e);
}

/* The adoption ends here: done or failed, fenced by its epoch. */
static void
adoption_outcome(struct adoption *ad, int to, const char *fmt, ...)
{
	va_list		 ap;
	char		 reason[FLEET_TEXT_MAX];
	struct ending	*e;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (to == FLEET_DONE)
		log_info("%s: fleet: %s", ad->id, reason);
	else
		log_warnx("%s: fleet: %s", ad->id, reason);
	if ((e = calloc(1, sizeof(*e))) == NULL)
		fatal(NULL);
	strlcpy(e->id, ad->id, sizeof(e->id));
	e->to = to;
	outcome(ad->id, ad->epoch, to, reason, NULL, ended_done, e);
	adoption_end(ad);
}

/*
 * The request to the publisher, to begin by the lease's end as it is
 * now: past it, it is not begun (adopt_late), for the claim may be
 * another host's by then.  A publisher away: sent when it is back.
 */
static void
adoption_send(struct adoption *ad)
{
	char	 err[MSG_ERRLEN];

	ad->req.begin_by = ad->lease_end;
	if (proc_compose_msg(PROC_PUBLISHER, IMSG_PUBLISH_ADOPT, MSG_PUBLISH,
	    -1, &ad->req, err, sizeof(err)) == 0) {
		ad->sent = 1;
		ad->waiting = 0;
		return;
	}
	if (errno != EAGAIN) {
		/* The database's bytes: never a fatal path. */
		adoption_outcome(ad, FLEET_FAILED, "adoption: its request "
		    "does not compose: %s", err);
		return;
	}
	if (!ad->waiting)
		log_warnx("%s: fleet: adoption waits for the publisher",
		    ad->id);
	ad->waiting = 1;
}

/*
 * The attempt's frozen manifest, parsed as a claim's is, and its digest
 * as submission made it: -1 and why if it does not parse.
 */
static int
adopt_manifest(const struct fleet_adopt *fa, struct manifest **mf,
    char digest[MSG_DIGEST], char *why, size_t len)
{
	char	 hex[SHA256_HEX_LEN + 1], err[CONF_ERRLEN];
	size_t	 n = strlen(fa->manifest);

	if (manifest_parse(fa->id, fa->manifest, n, mf, err,
	    sizeof(err)) == -1) {
		snprintf(why, len, "its manifest does not parse: %s", err);
		return (-1);
	}
	sha256_hex(fa->manifest, n, hex);
	snprintf(digest, MSG_DIGEST, "sha256:%s", hex);
	return (0);
}

/*
 * The pinned request, decoded as any child's message (the database's
 * bytes are no one's word), checked against the claim, and pointed at
 * this host's own forge of the repository: -1 and why if it cannot be,
 * -2 and why if only here it cannot (its repository publishes nowhere
 * in this host's config: another host may finish it).
 * Its title and base are those of the manifest handed over with it,
 * never the pin's, and it vouches for that manifest's digest, which
 * the publisher holds to the signed verdict's: a database that wrote
 * another base or title here has the publication refused.
 */
static int
adopt_request(const struct fleet_adopt *fa, struct msg_publish *m,
    char *why, size_t len)
{
	const struct conf_repo	*repo;
	struct manifest		*mf;
	uint8_t			*raw;
	size_t			 rawlen, n = strlen(fa->pin);
	char			 err[MSG_ERRLEN], digest[MSG_DIGEST];
	int			 rc;

	if (adopt_manifest(fa, &mf, digest, why, len) == -1)
		return (-1);
	if ((raw = malloc(n / 4 * 3 + 3)) == NULL)
		fatal(NULL);
	if (base64_decode(fa->pin, raw, n / 4 * 3 + 3, &rawlen) == -1) {
		free(raw);
		manifest_free(mf);
		snprintf(why, len, "its pinned request is not base64");
		return (-1);
	}
	rc = msg_read(MSG_PUBLISH, raw, rawlen, m, err, sizeof(err));
	free(raw);
	if (rc == -1) {
		manifest_free(mf);
		snprintf(why, len, "its pinned request does not decode: %s",
		    err);
		return (-1);
	}
	rc = -1;
	/*
	 * The verdict must be signed by this host's verifier key, which
	 * the fleet's hosts share: a pin's key is the database's word.
	 */
	if (strcmp(m->verifier_pub, env->verifier_pub_b64) != 0)
		snprintf(why, len, "its verdict is signed by another "
		    "verifier key than this host's (a fleet's hosts share "
		    "one)");
	else if (strcmp(m->id, fa->id) != 0 ||
	    strcmp(m->commit, fa->commit) != 0)
		snprintf(why, len, "its pinned request is of %s at %.12s, not "
		    "of this attempt at its pinned commit", m->id, m->commit);
	else if (strcmp(m->manifest_digest, digest) != 0)
		snprintf(why, len, "its pinned request names manifest %s, "
		    "its manifest is %s", m->manifest_digest, digest);
	else if (strcmp(mf->repository, m->repository) != 0)
		snprintf(why, len, "its pinned request is of repository %s, "
		    "its manifest of %s", m->repository, mf->repository);
	else if ((repo = conf_repo(env->conf, m->repository)) == NULL ||
	    repo->forge == FORGE_NONE) {
		/* This host's config since what it serves was recorded. */
		snprintf(why, len, "repository %s publishes nowhere here",
		    m->repository);
		rc = -2;
	} else
		rc = 0;
	if (rc != 0) {
		manifest_free(mf);
		msg_free(MSG_PUBLISH, m);
		return (rc);
	}
	/* What it is, the manifest's word; where it goes, this host's. */
	strlcpy(m->title, mf->title, sizeof(m->title));
	strlcpy(m->base, mf->baseline, sizeof(m->base));
	strlcpy(m->manifest_digest, digest, sizeof(m->manifest_digest));
	manifest_free(mf);
	/*
	 * Nor the check run's text: the pin's is the database's word, and
	 * this host witnessed nothing of it.  The forge shows the title.
	 */
	free(m->summary);
	m->summary = NULL;
	publish_forge(repo, m);
	/*
	 * A cohort's others are not superseded on the pin's word either,
	 * nor a closed pull request reopened as a cohort's selection.
	 */
	m->nsupersede = 0;
	m->cohort[0] = '\0';
	return (0);
}

static void
adopt_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_adopt	*fa = ans;
	const struct fleet_result	*r = ans;
	struct adoption			*ad = NULL;
	struct attempt			*a;
	char				 why[512];
	size_t				 i;

	asking = 0;
	if (type != IMSG_FLEET_ADOPTED) {
		if (r != NULL && r->code != FLEET_NONE)
			log_warnx("fleet: adopt: %s: %s",
			    fleet_code_name(r->code), r->text);
		return;
	}
	/*
	 * One of an earlier claim of it here is stale: this claim is its
	 * now.  A request of it with the publisher goes on under this
	 * claim (its answer, by id, is this one's: the same work), never
	 * a second one beside it.
	 */
	if ((ad = adoption_of(fa->id)) != NULL && ad->epoch < fa->epoch) {
		log_warnx("%s: fleet: adopted again at epoch %llu, over the "
		    "adoption at %llu here", fa->id,
		    (unsigned long long)fa->epoch,
		    (unsigned long long)ad->epoch);
		if (ad->sent && lease_clock() < answer_lease()) {
			ad->epoch = fa->epoch;
			strlcpy(ad->lost, fa->host, sizeof(ad->lost));
			ad->started = now_ms();
			ad->lease_end = answer_lease();
			ad->superseded = ad->renewing = 0;
			return;
		}
		adoption_end(ad);
	} else if (ad != NULL) {
		/* Not newer than the one held: not the database's doing. */
		log_warnx("%s: fleet: adopted at epoch %llu, not past %llu "
		    "held here: dropped", fa->id,
		    (unsigned long long)fa->epoch,
		    (unsigned long long)ad->epoch);
		return;
	}
	ad = NULL;
	for (i = 0; i < ADOPT_MAX && ad == NULL; i++)
		if (!adoptions[i].used)
			ad = &adoptions[i];
	if (ad == NULL || adoption_of(fa->id) != NULL) {
		/* Not ours to finish now: it lapses and is swept back. */
		log_warnx("%s: fleet: adopted with no room for it: let go",
		    fa->id);
		return;
	}
	ad->used = 1;
	strlcpy(ad->id, fa->id, sizeof(ad->id));
	ad->epoch = fa->epoch;
	strlcpy(ad->lost, fa->host, sizeof(ad->lost));
	ad->started = now_ms();
	ad->lease_end = answer_lease();
	/* An answer so late that its lease is spent: another's by now. */
	if (lease_clock() >= ad->lease_end) {
		log_warnx("%s: fleet: adopted too late to be surely ours: let "
		    "go", ad->id);
		adoption_end(ad);
		return;
	}
	log_info("fleet: adopted %s at epoch %llu, lost while publishing on "
	    "%s", ad->id, (unsigned long long)ad->epoch, ad->lost);
	/* A copy here that has not ended: this host lost it, and finds so. */
	if ((a = attempt_find(fa->id)) != NULL && !attempt_terminal(a)) {
		log_warnx("%s: fleet: adopted while its copy here runs: let "
		    "go until it ends", ad->id);
		adoption_end(ad);
		return;
	}
	switch (adopt_request(fa, &ad->req, why, sizeof(why))) {
	case -2:
		/* Another host may finish it: it lapses and is swept back. */
		log_warnx("%s: fleet: adoption let go: %s", ad->id, why);
		adoption_end(ad);
		return;
	case -1:
		adoption_outcome(ad, FLEET_FAILED, "adoption: %s", why);
		return;
	}
	ad->has_req = 1;
	adoption_send(ad);
}

/* An adoption's request is with the publisher: not to be cut short. */
int
adopt_busy(void)
{
	size_t	 i;

	for (i = 0; i < ADOPT_MAX; i++)
		if (adoptions[i].used && adoptions[i].sent)
			return (1);
	return (0);
}

/* How many adoptions ended here, done and failed. */
void
adopt_counts(uint64_t *done, uint64_t *failed)
{
	*done = ended_ok;
	*failed = ended_failed;
}

/* One more, if the host is live and there is room. */
void
adopt_poll(int live)
{
	if (!live || asking || adoptions_free() == 0 ||
	    env->shutting_down || proc_find(PROC_PUBLISHER, 0) == NULL)
		return;
	asking = 1;
	if (request(IMSG_FLEET_ADOPT, ibuf_open(0), adopt_done, NULL) == -1)
		asking = 0;
}

/* An adoption's renewal came back: by its claim epoch, never its id. */
static void
renewed(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_result *r = ans;
	struct fleet_claimref	*ref = arg;
	struct adoption		*ad;

	ad = adoption_of(ref->id);
	if (ad == NULL || ad->epoch != ref->epoch) {
		free(ref);
		return;
	}
	free(ref);
	ad->renewing = 0;
	if (r != NULL && r->code == FLEET_OK && answer_lease() > ad->lease_end)
		ad->lease_end = answer_lease();
	if (r != NULL && r->code == FLEET_SUPERSEDED && !ad->superseded) {
		ad->superseded = 1;
		log_warnx("%s: fleet: its adoption is another host's now",
		    ad->id);
	}
}

/* Each adoption's claim renewed, as fleet_beat renews the journal's. */
void
adopt_beat(void)
{
	struct fleet_write	 w;
	struct fleet_claimref	*ref;
	size_t			 i;

	for (i = 0; i < ADOPT_MAX; i++) {
		if (!adoptions[i].used || adoptions[i].renewing ||
		    adoptions[i].superseded)
			continue;
		memset(&w, 0, sizeof(w));
		strlcpy(w.id, adoptions[i].id, sizeof(w.id));
		w.epoch = adoptions[i].epoch;
		if ((ref = fleet_claimref(w.id, w.epoch)) == NULL)
			fatal(NULL);
		if (request(IMSG_FLEET_RENEW, fleet_write_compose(&w),
		    renewed, ref) == -1) {
			free(ref);
			break;
		}
		adoptions[i].renewing = 1;
	}
}

/*
 * One the publisher has not answered in ADOPT_MS is let go: if it is
 * still waiting there, its lease's end passes before the database lets
 * another host have it, and it is not begun.  One not sent (the
 * publisher was away, or it came back late) is sent while the lease
 * holds.
 */
void
adopt_tick(void)
{
	struct adoption	*ad;
	uint64_t	 now = now_ms();
	size_t		 i;

	for (i = 0; i < ADOPT_MAX; i++) {
		ad = &adoptions[i];
		if (!ad->used)
			continue;
		if (!ad->renewing && now - ad->started > ADOPT_MS) {
			log_warnx("%s: fleet: adoption unanswered for %d s: "
			    "let go", ad->id, ADOPT_MS / 1000);
			adoption_end(ad);
		} else if (ad->superseded && !ad->sent)
			adoption_end(ad);
		else if (ad->has_req && !ad->sent &&
		    lease_clock() < ad->lease_end)
			adoption_send(ad);
	}
}

/* The publisher is gone: what it held is sent again, as attempts' are. */
void
adopt_publisher_lost(void)
{
	size_t	 i;

	for (i = 0; i < ADOPT_MAX; i++)
		adoptions[i].sent = 0;
}

/*
 * The publisher did not begin an adoption's request: its lease's end
 * passed while it waited.  1 if it was an adoption's (sent again by
 * adopt_tick while the lease holds), 0 if no adoption's, -1 if it
 * cannot be true (none is with the publisher, or its time to begin by
 * has not come on the clock both share): a lie.
 */
int
adopt_late(const char *id, const char *error)
{
	struct adoption	*ad;

	if ((ad = adoption_of(id)) == NULL)
		return (0);
	if (!ad->sent || boot_ms() < ad->req.begin_by)
		return (-1);
	log_warnx("%s: fleet: adoption: %s: asked again", id, error);
	ad->sent = 0;
	return (1);
}

/*
 * The publisher's answer, if it is an adoption's (p, or error): 1 and
 * taken, else 0 for the attempts' own path.
 */
int
adopt_answer(const char *id, const struct msg_published *p,
    const char *error)
{
	struct adoption	*ad;

	if ((ad = adoption_of(id)) == NULL)
		return (0);
	/*
	 * Sent even if another host has it, or may (its lease here is
	 * spent): the write is fenced by this claim's epoch, and the
	 * database says superseded if the sweep or another host took it.
	 * A publication done is then not adopted again for nothing.
	 */
	if (ad->superseded || lease_clock() >= ad->lease_end)
		log_warnx("%s: fleet: adoption answered after its lease %s",
		    id, ad->superseded ? "went to another host" : "lapsed");
	if (p != NULL)
		adoption_outcome(ad, FLEET_DONE, "published, adopted after %s "
		    "was lost: %s, pull request %lld: %s", ad->lost, p->branch,
		    (long long)p->number, p->record);
	else
		adoption_outcome(ad, FLEET_FAILED, "adoption after %s was "
		    "lost: %s", ad->lost, error);
	return (1);
}
