/*
 * cgroup_probe as factoryd runs it at start, with instance "test":
 * prints its answer (or its error) on the first line, then this
 * process's /proc/self/cgroup after it, and what the reconciler would
 * be told.  Exit 0 if the probe passed, 1 if it refused.
 */
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
	rc = cgroup_probe(err, sizeof(err), &nokill);
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
