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
#include "wire.h"

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

/* The reconciler's ERROR (invmsg.h): one string. */
static int
recon_error(struct imsgev *iev, const char *why)
{
	struct ibuf	*b;
	int		 rc;

	log_warnx("%s", why);
	if ((b = ibuf_dynamic(64, INV_MAXWIRE)) == NULL ||
	    m_add_str(b, why) == -1)
		fatal("IMSG_ERROR");
	rc = imsgev_compose(iev, IMSG_ERROR, 0, 0, -1, ibuf_data(b),
	    ibuf_size(b));
	ibuf_free(b);
	return (rc == -1 ? -1 : 0);
}

static int
recon_inventory(struct imsgev *iev, struct imsg *imsg,
    const struct inv_config *c)
{
	struct ibuf	*b;
	json_t		*req, *inv;
	int		 rc;

	/* No options yet: an object, maybe empty, or nothing at all. */
	if (imsg_get_len(imsg) > 0) {
		if ((req = imsg_get_json(imsg)) == NULL) {
			log_warnx("IMSG_INVENTORY_REQ: not a JSON object");
			return (-1);
		}
		json_decref(req);
	}
	inv = inventory_build(c);
	if (inv_fit(inv, INV_MAXWIRE) == -1) {
		json_decref(inv);
		return (recon_error(iev, "inventory does not fit in one "
		    "message"));
	}
	if ((b = ibuf_dynamic(1024, INV_MAXWIRE)) == NULL ||
	    inv_encode(inv, b) == -1)
		fatalx("IMSG_INVENTORY: does not encode");
	json_decref(inv);
	rc = imsgev_compose(iev, IMSG_INVENTORY, 0, 0, -1, ibuf_data(b),
	    ibuf_size(b));
	ibuf_free(b);
	if (rc == -1) {
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
