/*
 * The cgroup probe as factoryd runs it at start, with instance "test":
 * the launcher's (sandbox/cgprobe.c, here in a fork, as the regress
 * helpers run it), then the parent's check of its answer (cgroup.c).
 * Prints the answer (or its error) on the first line, then this
 * process's /proc/self/cgroup after it, and what the reconciler would
 * be told.  Exit 0 if the probe passed, 1 if it refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../supervisord-factory/sandbox.h"

int
main(void)
{
	char	 err[1024], buf[4096];
	FILE	*f;
	size_t	 n;
	int	 nokill, rc;

	sandbox_set_instance("test");
	rc = probe_run(-1, ~0U, sandbox_cgroup_tag(), err, sizeof(err));
	if (rc == 0)
		rc = cgroup_probe(probe_cgroup(), err, sizeof(err), &nokill);
	printf("%s: %s\n", rc == 0 ? "ok" : "refused", err);
	if ((f = fopen("/proc/self/cgroup", "re")) != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
		printf("self %s", buf);
	}
	printf("parent %s\n", sandbox_cgroup_parent());
	return (rc == 0 ? 0 : 1);
}
