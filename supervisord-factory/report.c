/*
 * How the parts below the attempts (run.c, setup.c, service.c,
 * gateway.c, shell.c, reconcile.c) and the attempts themselves tell the layer
 * above what happened: one table of callbacks, given once by
 * factoryd.c, which wires the parent together.  A report is a call
 * down into this file, never a call up into the file that acts on it.
 */
#include "factoryd.h"

static const struct reports	*up;

void
report_init(const struct reports *r)
{
	up = r;
}

/* A fact about a running attempt, signed into its chain. */
void
report_note(struct attempt *a, const char *kind, json_t *facts)
{
	up->note(a, kind, facts);
}

/* Something came free (a child, a setup store): work may start. */
void
report_schedule(void)
{
	up->schedule();
}

/* A run's pid 1 is reaped and its sandbox gone. */
void
report_run_done(struct run *r)
{
	up->run_done(r);
}

/* A setup store finished: rc 0, or -1 and why. */
void
report_setup_stored(struct attempt *a, int rc, const char *err)
{
	up->setup_stored(a, rc, err);
}

/* The selected member of a cohort has published. */
void
report_published(struct attempt *a)
{
	up->published(a);
}

/* A cohort's member is verified: selectable, or its cohort ends. */
void
report_verified(struct attempt *a)
{
	up->verified(a);
}

/* What a cohort's member adds to its publish request; -1 if it can't. */
int
report_publish_fill(const struct attempt *a, struct msg_publish *m)
{
	return (up->publish_fill(a, m));
}

/* Every service of a's run (validation: its validation run's) is ready. */
void
report_services_ready(struct attempt *a, int validation)
{
	up->services_ready(a, validation);
}

/* A service of a's failed (why names it); they are being stopped. */
void
report_services_failed(struct attempt *a, const char *why)
{
	up->services_failed(a, why);
}

/* The services a's teardown stopped are gone. */
void
report_services_gone(struct attempt *a)
{
	up->services_gone(a);
}
