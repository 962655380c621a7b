/*
 * The reconciler's IMSG_INVENTORY (libcommon/invmsg.c): the one
 * message root reads from the process that looks at everything an
 * attempt left behind.  Promises checked: what decodes holds only
 * attempt ids of our own syntax, pids that are neither 0, 1 nor a
 * group, uids inside attempt-uids, printable NUL-terminated text of
 * bounded length, 40-hex commits and positive pull numbers; what does
 * not decode says why, naming the message; nothing leaks either way.
 */
#include <limits.h>

#include "invmsg.h"
#include "crypto.h"
#include "fuzz.h"

#define LO	100000
#define HI	165535

static void
printable(const char *s, size_t max, const char *what)
{
	size_t	 i, len;

	FUZZ_ASSERT((len = strnlen(s, max)) < max, "%s: no NUL", what);
	for (i = 0; i < len; i++)
		FUZZ_ASSERT(s[i] >= 0x20 && s[i] <= 0x7e,
		    "%s: byte %zu not printable", what, i);
}

static void
id(const char *s, const char *what)
{
	printable(s, ATTEMPT_ID_MAX, what);
	FUZZ_ASSERT(invmsg_id_valid(s, strlen(s)), "%s: not an id", what);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct invmsg	 m;
	char		 err[256];
	size_t		 i;

	if (invmsg_decode(data, size, LO, HI, &m, err, sizeof(err)) == -1) {
		FUZZ_ASSERT(strncmp(err, "INVENTORY: ", 11) == 0,
		    "refused without a reason naming the message");
		invmsg_free(&m);
		return (0);
	}
	for (i = 0; i < m.ndirs; i++)
		id(m.dirs[i].id, "attempt_dirs");
	for (i = 0; i < m.nvdirs; i++)
		id(m.vdirs[i].id, "verify_dirs");
	for (i = 0; i < m.ncgroups; i++) {
		id(m.cgroups[i].id, "cgroups");
		FUZZ_ASSERT(m.cgroups[i].kind >= 0 &&
		    m.cgroups[i].kind < CG_KINDS, "cgroups: not a kind");
	}
	for (i = 0; i < m.nprocs; i++) {
		FUZZ_ASSERT(m.procs[i].pid >= 2 &&
		    m.procs[i].pid <= INVMSG_PIDMAX, "processes: pid %d",
		    (int)m.procs[i].pid);
		FUZZ_ASSERT(m.procs[i].uid >= LO && m.procs[i].uid <= HI,
		    "processes: uid %u", (unsigned)m.procs[i].uid);
		printable(m.procs[i].comm, INVMSG_COMMMAX, "processes.comm");
	}
	for (i = 0; i < m.nmounts; i++)
		id(m.mounts[i].id, "mounts");
	for (i = 0; i < m.nbranches; i++) {
		id(m.branches[i].id, "branches");
		FUZZ_ASSERT(hex_valid(m.branches[i].commit, 40),
		    "branches: commit");
		printable(m.branches[i].repo, INVMSG_STRMAX, "branches.repo");
	}
	for (i = 0; i < m.npulls; i++) {
		id(m.pulls[i].id, "pulls");
		FUZZ_ASSERT(m.pulls[i].number >= 1, "pulls: number");
		printable(m.pulls[i].dir, INVMSG_STRMAX, "pulls.dir");
	}
	for (i = 0; i < m.nerrors; i++)
		printable(m.errors[i], INVMSG_STRMAX, "errors");
	FUZZ_ASSERT(m.skipped >= 0, "skipped: negative");
	FUZZ_ASSERT(m.truncated == 0 || m.truncated == 1, "truncated");
	invmsg_free(&m);
	return (0);
}
