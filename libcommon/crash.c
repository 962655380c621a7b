/*
 * Crash points, for the fault-injection regress only: a test build
 * (-DFACTORY_TESTBUILD, what make check builds) dies abruptly at the
 * point named by FACTORY_CRASH, as a power cut or a kill -9 would
 * leave it.  Release builds have none of this: crashpoint() is an
 * empty macro there (factory.h).
 */
#ifdef FACTORY_TESTBUILD
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"
#include "log.h"

int
faultpoint(const char *name)
{
	const char	*want = getenv(FACTORY_CRASH_ENV);

	return (want != NULL && strcmp(want, name) == 0);
}

void
crashpoint(const char *name)
{
	const char	*want = getenv(FACTORY_CRASH_ENV);

	if (want == NULL || strcmp(want, name) != 0)
		return;
	log_warnx("crash point %s: dying now", name);
	_exit(CRASH_EXIT);
}
#endif
