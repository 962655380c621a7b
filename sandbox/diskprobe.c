/*
 * The launcher's disk probe, part of "factory-sandbox probe MASK
 * STATEDIR" (probe.c): can this kernel make the overlays an attempt's
 * tree needs (supervisord-factory/disk.c makes them), and does
 * overlayfs take a detached layer?  It does from Linux 6.15; before,
 * the overlay mount fails with EINVAL and the parent attaches the
 * layers first, in a helper's private mount namespace.  A real
 * overlay, made by a helper in a mount namespace of its own, so that
 * nothing it mounts is seen or left behind: an idmapped read-only
 * clone of the state directory (where the pristine trees are), under a
 * scratch tmpfs's upper and work.  Run here rather than in root's
 * process; the parent takes the answer (PROBE_OVL_*) and the line that
 * stops it, and logs it as "disk: LINE".
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/mount.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ovl.h"
#include "probemsg.h"

/*
 * The helper, in a mount namespace of its own: the overlay with the
 * clone detached, and if overlayfs says EINVAL, attached.  Its answer
 * on fd: "d" (detached layers work), "a" (attached ones only), "i",
 * "n" or "x" and why (idmapped mounts, no overlay file system, the
 * overlay).
 */
static __attribute__((__noreturn__)) void
dprobe_child(int fd, const char *sd, int ns, int nodetached)
{
	char	 msg[512], why[256], lower[32];
	int	 tfd, sfd, ufd, wfd, ofd, afd, detached;

	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1) {
		snprintf(msg, sizeof(msg), "xprivate mount namespace: %s",
		    strerror(errno));
		goto done;
	}
	if ((tfd = ovl_idmapped(sd, ns, why, sizeof(why))) == -1) {
		snprintf(msg, sizeof(msg), "i%s", why);
		goto done;
	}
	if (mount("tmpfs", sd, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "size=64k,nr_inodes=64,mode=0700") == -1 ||
	    (sfd = open(sd, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    mkdirat(sfd, "u", 0700) == -1 || mkdirat(sfd, "w", 0700) == -1 ||
	    mkdirat(sfd, "w2", 0700) == -1 ||
	    mkdirat(sfd, "o", 0700) == -1 || mkdirat(sfd, "l", 0700) == -1 ||
	    (ufd = openat(sfd, "u", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (wfd = openat(sfd, "w", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (ofd = openat(sfd, "o", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(msg, sizeof(msg), "xscratch tmpfs: %s",
		    strerror(errno));
		goto done;
	}
	detached = !nodetached;
	snprintf(lower, sizeof(lower), "/proc/self/fd/%d", tfd);
	if (detached && ovl_mount(lower, ufd, wfd, ofd, why,
	    sizeof(why)) == 0) {
		strlcpy(msg, "d", sizeof(msg));
		goto done;
	}
	if (detached && errno != EINVAL) {
		snprintf(msg, sizeof(msg), "%cmount overlay: %s",
		    errno == ENODEV ? 'n' : 'x', why);
		goto done;
	}
	if (syscall(SYS_move_mount, tfd, "", sfd, "l",
	    MOVE_MOUNT_F_EMPTY_PATH) == -1 || (afd = openat(sfd, "l",
	    O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(msg, sizeof(msg), "xattach the lower layer: %s",
		    strerror(errno));
		goto done;
	}
	/*
	 * A work directory of its own: the detached try may have failed
	 * after overlayfs marked its work directory (volatile's
	 * work/incompat/volatile, seen on 6.1 and 6.12), and a second
	 * mount on that one is refused as a volatile overlay's leftover.
	 */
	if (detached) {
		close(wfd);
		if ((wfd = openat(sfd, "w2", O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) == -1) {
			snprintf(msg, sizeof(msg), "xscratch tmpfs: %s",
			    strerror(errno));
			goto done;
		}
	}
	snprintf(lower, sizeof(lower), "/proc/self/fd/%d", afd);
	if (ovl_mount(lower, ufd, wfd, ofd, why, sizeof(why)) == -1)
		snprintf(msg, sizeof(msg), "xmount overlay (layer attached): "
		    "%s", why);
	else if (syscall(SYS_open_tree, sfd, "o", OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC) == -1)
		snprintf(msg, sizeof(msg), "xopen_tree of the overlay: %s",
		    strerror(errno));
	else
		strlcpy(msg, "a", sizeof(msg));
 done:
	_exit(write(fd, msg, strlen(msg)) == -1);
}

int
sbx_disk_probe(const char *sd, int nodetached, char *err, size_t errlen)
{
	char	 msg[512];
	pid_t	 pid;
	ssize_t	 n;
	int	 p[2], ns, st;

	if ((ns = ovl_userns(65534, 65534, err, errlen)) == -1)
		return (PROBE_OVL_FAIL);
	if (pipe2(p, O_CLOEXEC) == -1 || (pid = fork()) == -1) {
		snprintf(err, errlen, "overlay probe: %s", strerror(errno));
		close(ns);
		return (PROBE_OVL_FAIL);
	}
	if (pid == 0) {
		close(p[0]);
		dprobe_child(p[1], sd, ns, nodetached);
	}
	close(p[1]);
	close(ns);
	n = read(p[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(p[0]);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	if (msg[0] == 'i') {
		snprintf(err, errlen, "idmapped mounts: %s (Linux 5.12 has "
		    "them for ext4, xfs and btrfs, 6.3 for tmpfs; no "
		    "downgrade)", msg + 1);
		return (PROBE_OVL_FAIL);
	}
	if (msg[0] == 'n') {
		snprintf(err, errlen, "overlay: %s (no overlay file system: "
		    "its module is not loaded and could not be; modprobe "
		    "overlay; no downgrade)", msg + 1);
		return (PROBE_OVL_FAIL);
	}
	if (msg[0] != 'd' && msg[0] != 'a') {
		snprintf(err, errlen, "overlay: %s (overlayfs takes idmapped "
		    "layers from Linux 5.19; no downgrade)", msg[0] == 'x' ?
		    msg + 1 : "the probe said nothing");
		return (PROBE_OVL_FAIL);
	}
	return (msg[0] == 'a' ? PROBE_OVL_ATTACHED : PROBE_OVL_DETACHED);
}
