/*
 * The reconciler's side of its channel, and the variables it needs
 * from its command line.  Kept apart from main() so that a unit test
 * can drive it over a socketpair.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include "factory.h"
#include "imsgev.h"
#include "log.h"
#include "reconciler.h"

static void	recon_var(struct inv_config *, const char *);
static void	recon_addpath(const char ***, size_t *, const char *);

static void
recon_addpath(const char ***list, size_t *n, const char *path)
{
	const char	**v;

	if ((v = reallocarray(*list, *n + 1, sizeof(*v))) == NULL)
		fatal("recon_vars");
	v[(*n)++] = path;
	*list = v;
}

/*
 * proc_getvar() returns the first value only; repos, remotes and pulls
 * have one value per repository.
 */
static void
recon_var(struct inv_config *c, const char *v)
{
	if (strncmp(v, "state=", 6) == 0) {
		if (c->state == NULL)	/* the first, as proc_getvar() */
			c->state = v + 6;
	} else if (strncmp(v, "repos=", 6) == 0)
		recon_addpath(&c->repos, &c->nrepos, v + 6);
	else if (strncmp(v, "remotes=", 8) == 0)
		recon_addpath(&c->remotes, &c->nremotes, v + 8);
	else if (strncmp(v, "pulls=", 6) == 0)
		recon_addpath(&c->pulls, &c->npulls, v + 6);
}

/*
 * The same reading as proc_child_init()'s getopt(3) with "dvV:":
 * clustered flags, "-Vx" and "-V x".  Anything it would refuse is left
 * for it to refuse.
 */
void
recon_vars(int argc, char **argv, struct inv_config *c)
{
	const char	*a;
	int		 i;

	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (a[0] != '-' || a[1] == '\0' || strcmp(a, "--") == 0)
			break;
		a += 1 + strspn(a + 1, "dv");
		if (*a != 'V')
			continue;
		if (a[1] != '\0')
			recon_var(c, a + 1);
		else if (i + 1 < argc)
			recon_var(c, argv[++i]);
	}
}

static int
recon_inventory(struct imsgev *iev, struct imsg *imsg,
    const struct inv_config *c)
{
	json_t	*req, *inv;

	/* No options yet: an object, maybe empty, or nothing at all. */
	if (imsg_get_len(imsg) > 0) {
		if ((req = imsg_get_json(imsg)) == NULL) {
			log_warnx("IMSG_INVENTORY_REQ: not a JSON object");
			return (-1);
		}
		json_decref(req);
	}
	inv = inventory_build(c);
	if (inv_fit(inv, INV_MAXJSON) == -1) {
		json_decref(inv);
		log_warnx("inventory does not fit in one message");
		return (imsgev_compose_json(iev, IMSG_ERROR, -1, json_pack(
		    "{s:s}", "error", "inventory does not fit in one "
		    "message")) == -1 ? -1 : 0);
	}
	if (imsgev_compose_json(iev, IMSG_INVENTORY, -1, inv) == -1) {
		log_warn("IMSG_INVENTORY");
		return (-1);
	}
	return (0);
}

int
recon_imsg(struct imsgev *iev, struct imsg *imsg, const struct inv_config *c)
{
	int	 v;

	switch (imsg_get_type(imsg)) {
	case IMSG_CTL_LOG_VERBOSE:
		if (imsg_get_data(imsg, &v, sizeof(v)) == -1)
			return (-1);
		log_setverbose(v);
		return (0);
	case IMSG_INVENTORY_REQ:
		crashpoint("reconciler:before-inventory");
		return (recon_inventory(iev, imsg, c));
	default:
		log_warnx("unexpected imsg %u", imsg_get_type(imsg));
		return (-1);
	}
}
