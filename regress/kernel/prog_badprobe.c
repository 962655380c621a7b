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
 *
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

int
main(int argc, char *argv[])
{
	struct probe_answer	 pa;
	const char		*mode = getenv("FACTORY_TEST_NOFEATURE");
	unsigned char		*b;
	size_t			 len;

	if (argc != 3 || strcmp(argv[1], "probe") != 0)
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
