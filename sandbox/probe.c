/*
 * The launcher's probe mode ("factory-sandbox probe MASK"): what the
 * sandbox needs of the kernel, found once at factoryd's start, in this
 * process rather than root's.  Namespaces, clone3, Landlock and its
 * rights, memfd_noexec, PIDFD_GET_INFO, openat2, seccomp: each used,
 * replaced by an equivalent, or downgraded where MASK (factoryd.conf
 * sandbox.downgrade, CONF_DG_*) allows it; else the first one missing,
 * the kernel that has it and the key that would accept running
 * without it.  Given the state directory, also whether the attempts'
 * overlays can be made there, and how (diskprobe.c); given the
 * instance, the cgroup layout, with the start-up writes in it
 * (cgprobe.c).  One answer (libcommon/probemsg.h) on descriptor 3,
 * then exit.  The agent's seccomp program is compiled by the parent,
 * with libseccomp, from what this says of memfd_noexec: this binary links
 * libbsd alone, and the program is the parent's policy, carried in
 * every plan.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>
#include <linux/sched.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "landlock.h"
#include "probemsg.h"
#include "sbx.h"

static struct probe_answer	 pr;
static uint32_t			 pr_allowed;	/* CONF_DG_* */

/*
 * One kernel feature as the probe found it: how NULL, used; else what
 * this kernel gives instead, or that it was downgraded.
 */
static void
feature(const char *name, const char *how)
{
	if (pr.feats[0] != '\0')
		strlcat(pr.feats, ", ", sizeof(pr.feats));
	strlcat(pr.feats, name, sizeof(pr.feats));
	if (how != NULL) {
		strlcat(pr.feats, " (", sizeof(pr.feats));
		strlcat(pr.feats, how, sizeof(pr.feats));
		strlcat(pr.feats, ")", sizeof(pr.feats));
	}
}

/* A feature this kernel lacks, replaced by the equivalent by. */
static void
replaced(const char *name, const char *by)
{
	char	 how[256];

	snprintf(how, sizeof(how), "replaced by %s", by);
	feature(name, how);
	if (pr.repl[0] != '\0')
		strlcat(pr.repl, " ", sizeof(pr.repl));
	strlcat(pr.repl, name, sizeof(pr.repl));
}

/*
 * Feature bit (named as factoryd.conf names it) is missing: allowed if
 * the configuration downgrades it, else the reason.
 */
static int
lacks(uint32_t bit, const char *name, const char *why)
{
	if (pr_allowed & bit) {
		pr.downgraded |= bit;
		return (0);
	}
	probe_refuse(pr.err, sizeof(pr.err), name, why);
	return (-1);
}

static int
fail(const char *why)
{
	strlcpy(pr.err, why, sizeof(pr.err));
	return (-1);
}

static int
probe_ns(void)
{
	const char *const ns[] = { "mnt", "pid", "net", "ipc", "uts",
	    "cgroup", NULL };
	char	 path[64];
	int	 i;

	for (i = 0; ns[i] != NULL; i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns[i]);
		if (access(path, F_OK) == -1) {
			snprintf(pr.err, sizeof(pr.err), "namespaces: no %s "
			    "namespace", ns[i]);
			return (-1);
		}
	}
	/* The new mount API: EBADF means the call exists. */
	if (syscall(SYS_mount_setattr, -1, "", 0, NULL, 0) == -1 &&
	    errno == ENOSYS)
		return (fail("mount_setattr: ENOSYS (Linux 5.12 has it; no "
		    "downgrade)"));
	feature("mount_setattr", NULL);
	if (syscall(SYS_close_range, ~0U, ~0U, 0) == -1 && errno == ENOSYS)
		return (fail("close_range: ENOSYS (Linux 5.9 has it; no "
		    "downgrade)"));
	return (0);
}

/*
 * clone3(2) and CLONE_INTO_CGROUP: pid 1 and the launchers are cloned
 * with it.  A size of 0 is EINVAL where the call exists; a service
 * manager's filter that cannot read its flags (systemd's
 * RestrictNamespaces=) makes it ENOSYS.  CLONE_INTO_CGROUP with a
 * descriptor nobody has: EBADF where the flag is known, EINVAL where
 * it is not; either way nothing is cloned.
 */
static int
probe_clone(void)
{
	struct clone_args	 ca;

	if (syscall(SYS_clone3, NULL, 0) != -1 || errno == ENOSYS ||
	    probe_faked("clone3"))
		return (fail("clone3: ENOSYS (Linux 5.3 has it; masked by a "
		    "service manager's seccomp filter?  no downgrade)"));
	feature("clone3", NULL);
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = INT_MAX;
	if (syscall(SYS_clone3, &ca, sizeof(ca)) != -1 || errno != EBADF)
		/* Not reached by a kernel that has clone3 and can run us. */
		return (fail("CLONE_INTO_CGROUP: not known (Linux 5.7 has "
		    "it; no downgrade)"));
	feature("clone-into-cgroup", NULL);
	return (0);
}

/*
 * The rights older ABIs lack whose protection the view gives anyway.
 * refer (ABI 2): without it Landlock refuses every rename or link
 * across directories (EXDEV), stricter.  truncate (ABI 3): it is
 * granted where writing is (the tree, /tmp, /dev/shm), and everything
 * else is mounted read-only, where truncate(2) is EROFS.  ioctl-dev
 * (ABI 5): it is granted on every device of the view's /dev, and all
 * else is nodev.
 */
static void
probe_rights(int abi)
{
	feature("landlock-refer", abi >= 2 ? NULL :
	    "none: renames across directories refused (ABI 2 has it)");
	if (abi >= 3 && !probe_faked("landlock-truncate"))
		feature("landlock-truncate", NULL);
	else
		replaced("landlock-truncate", "read-only mounts (Landlock "
		    "ABI 3, Linux 6.2 has it)");
	if (abi >= 5 && !probe_faked("landlock-ioctl-dev"))
		feature("landlock-ioctl-dev", NULL);
	else
		replaced("landlock-ioctl-dev", "a /dev of its own, nodev "
		    "elsewhere (Landlock ABI 5, Linux 6.10 has it)");
}

/* Landlock and its network and scope rights, each downgradable. */
static int
probe_landlock(void)
{
	int	 abi = landlock_abi();

	if (probe_faked("landlock"))
		abi = 0;
	pr.abi = abi > 0 ? (uint32_t)abi : 0;
	if (abi <= 0) {
		/* Without Landlock its rights are gone too: one downgrade. */
		feature("landlock", "downgraded");
		return (lacks(CONF_DG_LANDLOCK, "landlock", "Landlock is not "
		    "supported by this kernel (Linux 5.13 has it; or not "
		    "enabled in lsm=)"));
	}
	feature("landlock", NULL);
	probe_rights(abi);
	if (abi < 4 || probe_faked("landlock-net")) {
		feature("landlock-net", "downgraded");
		if (lacks(CONF_DG_LANDLOCK_NET, "landlock-net", "Landlock has "
		    "no TCP bind/connect rules (ABI 4, Linux 6.7): TCP relies "
		    "on the network namespace alone") == -1)
			return (-1);
	} else
		feature("landlock-net", NULL);
	if (abi < 6 || probe_faked("landlock-scopes")) {
		feature("landlock-scopes", "downgraded");
		if (lacks(CONF_DG_LANDLOCK_SCOPES, "landlock-scopes",
		    "Landlock has no abstract unix socket or signal scopes "
		    "(ABI 6, Linux 6.12)") == -1)
			return (-1);
	} else
		feature("landlock-scopes", NULL);
	return (0);
}

/*
 * vm.memfd_noexec (6.3), or what stands in for it: the agent's filter
 * refuses memfd_create(2) with ENOSYS, as a kernel without the call
 * would, so programs fall back to a file (in the noexec /tmp or
 * /dev/shm).  Landlock's execute right is no stand-in: a memfd run
 * through /proc/self/fd is executed all the same (seen on 6.18: its
 * file lies on the kernel's internal shm mount).  The parent builds
 * the filter from this.
 */
static void
probe_memfd(void)
{
	pr.memfd_noexec = !probe_faked("memfd-noexec") &&
	    access(SBX_MEMFD_NOEXEC, F_OK) == 0;
	if (pr.memfd_noexec)
		feature("memfd-noexec", NULL);
	else
		replaced("memfd-noexec", "memfd_create refused with ENOSYS "
		    "(Linux 6.3 has it)");
}

/*
 * The probes that only say what this kernel has: PIDFD_GET_INFO
 * (else a pidfd's pid and parent come from fdinfo and waitid(2), the
 * same checks), openat2(2) (open_beneath() falls back where a service
 * manager's filter masks it with ENOSYS).
 */
static void
probe_info(void)
{
	struct spawn_pidfd_info	 info;
	struct open_how		 how;
	int			 fd, ok;

	ok = 0;
	if ((fd = (int)syscall(SYS_pidfd_open, getpid(), 0)) != -1) {
		memset(&info, 0, sizeof(info));
		info.mask = SBX_PIDFD_INFO_PID;
		ok = ioctl(fd, SBX_PIDFD_GET_INFO, &info) == 0 &&
		    !probe_faked("pidfd-info");
		close(fd);
	}
	pr.pidinfo = ok;
	feature("pidfd-info", ok ? NULL :
	    "fdinfo and waitid (Linux 6.13 has it)");
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH;
	if ((fd = (int)syscall(SYS_openat2, AT_FDCWD, ".", &how,
	    sizeof(how))) != -1)
		close(fd);
	feature("openat2", fd != -1 ? NULL : errno == ENOSYS ?
	    "masked (ENOSYS): open_beneath falls back" : strerror(errno));
}

/* Seccomp filters with the kill-process action. */
static int
probe_seccomp(void)
{
	char	 avail[256];
	int	 fd;
	ssize_t	 n;

	if (prctl(PR_GET_SECCOMP) == -1 && errno == EINVAL)
		return (fail("seccomp: not supported by this kernel"));
	if ((fd = open("/proc/sys/kernel/seccomp/actions_avail",
	    O_RDONLY | O_CLOEXEC)) == -1 || (n = read(fd, avail,
	    sizeof(avail) - 1)) <= 0) {
		if (fd != -1)
			close(fd);
		return (fail("seccomp: no filter mode"));
	}
	close(fd);
	avail[n] = '\0';
	if (strstr(avail, "kill_process") == NULL)
		return (fail("seccomp: no kill_process action"));
	return (0);
}

void
sbx_probe_write(int fd, uint32_t allowed, const char *statedir,
    const char *tag)
{
	const char	*p;
	size_t		 len;
	ssize_t		 n;
	void		*buf;

	memset(&pr, 0, sizeof(pr));
	pr_allowed = allowed;
	/* In the order of old: the first missing feature is named. */
	pr.ok = probe_ns() == 0 && probe_clone() == 0 &&
	    probe_landlock() == 0;
	if (pr.ok) {
		probe_memfd();
		probe_info();
		pr.ok = probe_seccomp() == 0;
	}
	/* The parent reports these after its own checks, in this order. */
	if (pr.ok && tag != NULL)
		sbx_cgroup_probe(tag, &pr.cg);
	if (pr.ok && statedir != NULL)
		pr.overlay = sbx_disk_probe(statedir,
		    probe_faked("overlay-detached"), pr.diskerr,
		    sizeof(pr.diskerr));
	if ((buf = probe_answer_encode(&pr, &len)) == NULL)
		_exit(2);
	for (p = buf; len > 0; p += n, len -= n)
		if ((n = write(fd, p, len)) == -1 && errno != EINTR)
			_exit(2);
		else if (n == -1)
			n = 0;
	_exit(0);
}

/*
 * factory-sandbox probe MASK [STATEDIR TAG]: descriptor 3 must be a
 * pipe, the answer's way back; it dies with the parent.  STATEDIR,
 * absolute, is factoryd's, where the overlays of the attempts' trees
 * are made; TAG its instance ("": none); "-": not asked.
 */
__dead void
sbx_probe_main(const char *mask, const char *statedir, const char *tag)
{
	struct stat	 st;
	const char	*errstr, *p;
	long long	 allowed;

	allowed = strtonum(mask, 0, UINT32_MAX, &errstr);
	if (errstr != NULL)
		errx(1, "probe: mask %s is %s", mask, errstr);
	if (statedir != NULL && strcmp(statedir, "-") == 0)
		statedir = NULL;
	if (statedir != NULL && (statedir[0] != '/' ||
	    strlen(statedir) >= PATH_MAX))
		errx(1, "probe: state directory %s: not an absolute path",
		    statedir);
	if (tag != NULL && strcmp(tag, "-") == 0)
		tag = NULL;
	for (p = tag; p != NULL && *p != '\0'; p++)
		if ((*p < 'a' || *p > 'z') && (*p < '0' || *p > '9'))
			errx(1, "probe: instance: not a plain name");
	if (tag != NULL && strlen(tag) >= PROBE_CGTAGLEN)
		errx(1, "probe: instance: too long");
	if (fstat(PROBE_FD, &st) == -1 || !S_ISFIFO(st.st_mode))
		errx(1, "fd %d is not a pipe: not started by factoryd",
		    PROBE_FD);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		err(1, "pdeathsig");
	syscall(SYS_close_range, PROBE_FD + 1, ~0U, 0);
	sbx_probe_write(PROBE_FD, (uint32_t)allowed, statedir, tag);
}
