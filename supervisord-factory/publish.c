/*
 * The publication request of an attempt (MSG_PUBLISH, but the bundle):
 * what attempt.c sends the publisher, what a fleet pins before the
 * publication begins (fleet.c), and the forge part an adopter fills
 * in from its own config (adopt.c).
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "factoryd.h"
#include "log.h"

#include "attempt.h"

/*
 * What the publisher is asked for a's publication, but the bundle: the
 * forge of repo (this host's config), the verdict, the attestations, a
 * cohort's supersede list.  Also what a fleet pins before it publishes,
 * so that another host can finish it from the forge's side.
 */
void
attempt_publish_request(struct attempt *a, const struct conf_repo *repo,
    struct msg_publish *m)
{
	memset(m, 0, sizeof(*m));
	strlcpy(m->id, a->id, sizeof(m->id));
	strlcpy(m->title, a->m->title, sizeof(m->title));
	strlcpy(m->base, a->m->baseline, sizeof(m->base));
	strlcpy(m->commit, a->commit, sizeof(m->commit));
	m->verdict = a->verdict != NULL ? a->verdict : "";
	strlcpy(m->verifier_pub, env->verifier_pub_b64,
	    sizeof(m->verifier_pub));
	strlcpy(m->manifest_digest, a->digest, sizeof(m->manifest_digest));
	publish_forge(repo, m);
	attest_publish_fill(a, m, now_ms());
	if (a->cohort[0] != '\0' && report_publish_fill(a, m) == -1)
		fatal("%s: supersede list", a->id);
}

void
attempt_publish_request_free(struct msg_publish *m)
{
	attest_publish_free(m);
	free(m->supersede);
	m->supersede = NULL;
}

/* Where repo publishes, from this host's config, into m. */
void
publish_forge(const struct conf_repo *repo, struct msg_publish *m)
{
	struct msg_github	*g;

	strlcpy(m->forge, repo->forge == FORGE_LOCAL ? "local" : "github",
	    sizeof(m->forge));
	strlcpy(m->repository, repo->name, sizeof(m->repository));
	strlcpy(m->remote, repo->remote, sizeof(m->remote));
	strlcpy(m->pulls, repo->pulls, sizeof(m->pulls));
	memset(&m->github, 0, sizeof(m->github));
	m->has_github = repo->forge == FORGE_GITHUB;
	if (!m->has_github)
		return;
	g = &m->github;
	strlcpy(g->api, repo->github.api, sizeof(g->api));
	strlcpy(g->owner, repo->github.owner, sizeof(g->owner));
	strlcpy(g->repo, repo->github.repo, sizeof(g->repo));
	g->repository_id = repo->github.repository_id;
	strlcpy(g->app_id, repo->github.app_id, sizeof(g->app_id));
	g->installation_id = repo->github.installation_id;
	strlcpy(g->key, repo->github.key, sizeof(g->key));
	strlcpy(g->ca, repo->github.ca, sizeof(g->ca));
}
