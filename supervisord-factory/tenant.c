/*
 * Who may act on what under a fleet: block (factoryctl(8)).  A client
 * acts for a tenant by its uid or its groups (factoryd.conf(5)); it may
 * submit to its tenant's repositories (fleet.c) and approve, cancel,
 * select, diff and shell into its tenant's attempts only.  Root, the
 * machine's administrator, who reads the state directory anyway, keeps
 * its powers.  Without a fleet: block, whoever the socket lets in may.
 *
 * A leaf of the parent: it calls nothing of it but env, so every
 * handler may ask it first.
 */
#include <sys/types.h>

#include <sys/socket.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "factoryd.h"

/*
 * The tenant client c acts for (name: that one, if c acts for it), or
 * NULL and why.  Its groups are those it had when it connected: the
 * supplementary ones (SO_PEERGROUPS) and its primary one (SO_PEERCRED),
 * which a user whose tenant's group is only its login group has alone.
 */
const struct conf_tenant *
tenant_of(struct ctl_conn *c, const char *name, char *why, size_t len)
{
	gid_t		 gids[NGROUPS_MAX + 1];
	socklen_t	 glen = NGROUPS_MAX * sizeof(gids[0]);
	int		 n;

	if (getsockopt(c->iev.ibuf.fd, SOL_SOCKET, SO_PEERGROUPS, gids,
	    &glen) == -1)
		glen = 0;
	n = glen / sizeof(gids[0]);
	gids[n++] = c->gid;
	return (conf_tenant_of(env->conf, name, c->uid, gids, n, why, len));
}

/*
 * May client c act on attempt a (verb names how, for the refusal)?
 * Under a fleet: root, and whoever acts for a's tenant: the one the
 * fleet claimed it for, as journaled with the claim, never the
 * manifest's tenant: label, which its submitter wrote.  An attempt of
 * no tenant (it was submitted here before the fleet: block) is root's
 * alone.  0, or -1 and the one-line refusal in why.
 */
int
tenant_may_act(struct ctl_conn *c, const char *verb, const struct attempt *a,
    char *why, size_t len)
{
	char	 who[128];

	if (!env->conf->fleet.enabled || c->uid == 0)
		return (0);
	if (a->fleet_tenant[0] == '\0') {
		snprintf(why, len, "%s: refused: %s is of no tenant: only root "
		    "may act on it", verb, a->id);
		return (-1);
	}
	if (tenant_of(c, a->fleet_tenant, who, sizeof(who)) == NULL) {
		snprintf(why, len, "%s: refused: %s", verb, who);
		return (-1);
	}
	return (0);
}

/* The same for every member of cohort id. */
int
tenant_may_act_cohort(struct ctl_conn *c, const char *verb, const char *id,
    char *why, size_t len)
{
	const struct attempt	*a;

	TAILQ_FOREACH(a, &env->attempts, entry)
		if (strcmp(a->cohort, id) == 0 &&
		    tenant_may_act(c, verb, a, why, len) == -1)
			return (-1);
	return (0);
}
