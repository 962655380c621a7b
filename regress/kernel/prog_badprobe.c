/*
 * prog_badprobe: a hostile "factory-sandbox probe", for the kernel
 * regress.  Installed as factory-sandbox in a libexec of its own, it
 * is what factoryd execs at start to probe the kernel; instead of
 * probing it answers on descriptor 3 as FACTORY_TEST_NOFEATURE says
 * (a test build passes that variable on, and nothing else):
 *
 *	none		nothing, exit 0
 *	trailing	a good answer and one byte more
 *	control		a feature text with a newline in it
 *	downgrade	landlock-net downgraded, whatever the mask allowed
 *	exit		a good answer, then exit 3
 *	big		5000 bytes, more than an answer may have
 *	lowabi		Landlock ABI 3, its missing TCP rules not downgraded
 *	ovlunknown	an overlay answer no PROBE_OVL_* names
 *	ovlnone		no overlay probed, though a state directory was given
 *	ovlctl		an overlay failure whose line has a newline in it
 *	ovlfail		an overlay failure, well formed: "overlay: faked"
 *	cgrel		the cgroup2 mount as a relative path
 *	cgdotdot	the cgroup2 mount with a ".." in it
 *	cgbase		a delegated base with a ".." in it
 *	cgnotmount	the cgroup2 mount said to be /tmp, no cgroup mount
 *	cgmode		a cgroup layout no PROBE_CG_* names
 *	cgnounified	hybrid v1 controllers and no cgroup2 mount at all
 *
 * Asked for the cgroups (a fifth argument), the rest of the answer is
 * the launcher's real cgroup probe (sandbox/cgprobe.c), its writes
 * included, as factoryd would have had it.
 * Anything else is a good answer (all features used).  factoryd must
 * refuse to start, naming the launcher and the fault, and not crash.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "probemsg.h"

/* The real layout, or one with the fault mode names. */
static void
badcg(const char *mode, const char *tag, struct probe_cgroup *pc)
{
	sbx_cgroup_probe(tag, pc);
	if (pc->mode != PROBE_CG_HYBRID && pc->mode != PROBE_CG_V2)
		return;
	if (strcmp(mode, "cgrel") == 0)
		memmove(pc->unified, pc->unified + 1, strlen(pc->unified));
	if (strcmp(mode, "cgdotdot") == 0)
		strlcpy(pc->unified, "/sys/fs/cgroup/../cgroup/unified",
		    sizeof(pc->unified));
	if (strcmp(mode, "cgbase") == 0)
		strlcpy(pc->base, "x/../y", sizeof(pc->base));
	/* Pure v2: every controller's path is the unified one. */
	if (strcmp(mode, "cgnotmount") == 0) {
		if (pc->mode == PROBE_CG_V2) {
			strlcpy(pc->memory, "/tmp", sizeof(pc->memory));
			strlcpy(pc->pids, "/tmp", sizeof(pc->pids));
			if (pc->cpu[0] != '\0') {
				strlcpy(pc->cpu, "/tmp", sizeof(pc->cpu));
				strlcpy(pc->cpuacct, "/tmp",
				    sizeof(pc->cpuacct));
			}
		}
		strlcpy(pc->unified, "/tmp", sizeof(pc->unified));
	}
	if (strcmp(mode, "cgmode") == 0)
		pc->mode = 7;
	/* A host of v1 alone: no cgroup.kill, nothing to attach to. */
	if (strcmp(mode, "cgnounified") == 0 && pc->mode == PROBE_CG_HYBRID) {
		pc->unified[0] = '\0';
		pc->nokill = 1;
	}
}

int
main(int argc, char *argv[])
{
	struct probe_answer	 pa;
	const char		*mode = getenv("FACTORY_TEST_NOFEATURE");
	unsigned char		*b;
	size_t			 len;

	if ((argc != 3 && argc != 5) || strcmp(argv[1], "probe") != 0)
		return (1);
	if (mode == NULL)
		mode = "";
	if (strcmp(mode, "none") == 0)
		return (0);
	if (strcmp(mode, "big") == 0) {
		if ((b = calloc(1, 5000)) == NULL)
			return (2);
		return (write(3, b, 5000) == 5000 ? 0 : 2);
	}
	memset(&pa, 0, sizeof(pa));
	pa.ok = 1;
	pa.abi = 6;
	pa.memfd_noexec = pa.pidinfo = 1;
	strlcpy(pa.feats, strcmp(mode, "control") == 0 ? "clone3\nparent: "
	    "forged" : "clone3", sizeof(pa.feats));
	if (strcmp(mode, "downgrade") == 0)
		pa.downgraded = CONF_DG_LANDLOCK_NET;
	/* A kernel without TCP rules, said without their downgrade. */
	if (strcmp(mode, "lowabi") == 0)
		pa.abi = 3;
	pa.overlay = argc == 5 && strcmp(argv[3], "-") != 0 ?
	    PROBE_OVL_DETACHED : PROBE_OVL_NONE;
	if (argc == 5 && strcmp(argv[4], "-") != 0)
		badcg(mode, argv[4], &pa.cg);
	if (strcmp(mode, "ovlnone") == 0)
		pa.overlay = PROBE_OVL_NONE;
	if (strcmp(mode, "ovlunknown") == 0)
		pa.overlay = 7;
	if (strcmp(mode, "ovlfail") == 0) {
		pa.overlay = PROBE_OVL_FAIL;
		strlcpy(pa.diskerr, "overlay: faked", sizeof(pa.diskerr));
	}
	if (strcmp(mode, "ovlctl") == 0) {
		pa.overlay = PROBE_OVL_FAIL;
		strlcpy(pa.diskerr, "overlay: x\nparent: forged",
		    sizeof(pa.diskerr));
	}
	if ((b = probe_answer_encode(&pa, &len)) == NULL)
		return (2);
	if (strcmp(mode, "trailing") == 0) {
		if ((b = realloc(b, len + 1)) == NULL)
			return (2);
		b[len++] = 0;
	}
	if (write(3, b, len) != (ssize_t)len)
		return (2);
	return (strcmp(mode, "exit") == 0 ? 3 : 0);
}
