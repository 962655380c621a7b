/*
 * Seccomp denials of the sandboxes, as the kernel reports them: the
 * agent's filter is loaded with SECCOMP_FILTER_FLAG_LOG, so every call
 * it refuses becomes an audit record (type 1326) in the kernel log,
 * with the uid that made it.  Attempt uids are fresh per attempt, so a
 * record names its attempt exactly.  The counts go into the "exited"
 * and "validated" receipts and factoryctl show.  The kernel rate-limits
 * these records: a count is a lower bound, never an invention.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factoryd.h"
#include "log.h"

#define AUDIT_MAXKINDS	32	/* distinct syscalls kept per attempt */

/*
 * Refusals made by design with a fallback the runtimes take at once:
 * such a record is kept, marked, and read as nothing to act on.  The
 * filter answers clone3 with ENOSYS (sandbox.c: its flags are in
 * memory a filter cannot read), and glibc, musl, Go and node retry
 * with clone(2), whose flags the filter checks.
 */
static const struct {
	const char	*syscall;
	const char	*action;
	const char	*fallback;
} audit_by_design[] = {
	{ "clone3", "errno", "clone" },
};

static const char *
audit_fallback(const char *name, const char *action)
{
	size_t	 i;

	for (i = 0; i < sizeof(audit_by_design) /
	    sizeof(audit_by_design[0]); i++)
		if (strcmp(audit_by_design[i].syscall, name) == 0 &&
		    strcmp(audit_by_design[i].action, action) == 0)
			return (audit_by_design[i].fallback);
	return (NULL);
}

static struct event	 ev_kmsg;
static int		 kmsg_fd = -1;

static void
audit_note(uid_t uid, int nr, unsigned long code)
{
	struct attempt	*a;
	json_t		*d, *v;
	const char	*name, *action, *fb;
	size_t		 i;
	char		*sname;

	TAILQ_FOREACH(a, &env->attempts, entry)
		if (!a->torn_down && a->state != AS_QUEUED &&
		    attempt_has_uid(a, uid))
			break;
	if (a == NULL)
		return;
	sname = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	name = sname != NULL ? sname : "?";
	action = (code & 0xffff0000UL) == 0x80000000UL ? "kill" :
	    (code & 0xffff0000UL) == 0x00050000UL ? "errno" : "other";
	if (a->denials == NULL)
		a->denials = json_array();
	d = a->denials;
	json_array_foreach(d, i, v)
		if (strcmp(json_string_value(json_object_get(v, "syscall")),
		    name) == 0 && strcmp(json_string_value(json_object_get(v,
		    "action")), action) == 0) {
			json_object_set_new(v, "count", json_integer(
			    json_integer_value(json_object_get(v, "count")) + 1));
			free(sname);
			return;
		}
	if (json_array_size(d) < AUDIT_MAXKINDS) {
		fb = audit_fallback(name, action);
		v = json_pack("{s:s, s:s, s:i, s:b, s:b}", "syscall", name,
		    "action", action, "count", 1, "validation", a->vuid == uid,
		    "by_design", fb != NULL);
		if (v != NULL && fb != NULL)
			json_object_set_new(v, "fallback", json_string(fb));
		if (v != NULL)
			json_array_append_new(d, v);
	}
	free(sname);
}

/* One kernel log record per read(2). */
static void
audit_read(int fd, short event, void *arg)
{
	char		 buf[8192], *p;
	ssize_t		 n;
	unsigned long	 uid, code;
	int		 nr;

	for (;;) {
		if ((n = read(fd, buf, sizeof(buf) - 1)) == -1) {
			if (errno == EPIPE)
				continue;	/* overwritten: lost some */
			return;			/* EAGAIN */
		}
		if (n == 0)
			return;
		buf[n] = '\0';
		if (strstr(buf, "type=1326") == NULL)
			continue;
		if ((p = strstr(buf, " uid=")) == NULL ||
		    sscanf(p, " uid=%lu", &uid) != 1 ||
		    (p = strstr(buf, " syscall=")) == NULL ||
		    sscanf(p, " syscall=%d", &nr) != 1 ||
		    (p = strstr(buf, " code=")) == NULL ||
		    sscanf(p, " code=%lx", &code) != 1)
			continue;
		if (uid >= env->conf->attempt_uid_lo &&
		    uid <= env->conf->attempt_uid_hi)
			audit_note((uid_t)uid, nr, code);
	}
}

/* From now on only: what the kernel logged before is not ours. */
void
audit_init(void)
{
	if ((kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK |
	    O_CLOEXEC)) == -1) {
		log_warn("audit: /dev/kmsg (seccomp denials not recorded)");
		return;
	}
	if (lseek(kmsg_fd, 0, SEEK_END) == -1) {
		log_warn("audit: /dev/kmsg");
		close(kmsg_fd);
		kmsg_fd = -1;
		return;
	}
	event_set(&ev_kmsg, kmsg_fd, EV_READ | EV_PERSIST, audit_read, NULL);
	event_add(&ev_kmsg, NULL);
}

/* Before a run's receipt: take in whatever the kernel has logged. */
void
audit_flush(void)
{
	if (kmsg_fd != -1)
		audit_read(kmsg_fd, EV_READ, NULL);
}
