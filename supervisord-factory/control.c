/*
 * The control sockets: the read-write one (mode 0660, group
 * _factoryctl) and the read-only one (socket + ".ro", mode 0666).
 * Every request is stamped with the peer's SO_PEERCRED uid.  A client
 * that sends anything malformed is disconnected; nobody else notices.
 *
 * Any local user may talk to the .ro socket, so nothing a client does
 * may cost the daemon more than a bounded amount: each socket has its
 * own connection cap, each uid a share of it, the rw socket keeps
 * slots only root may take, a connection is not read while an answer
 * to it is still queued (a client that never reads gets one answer
 * buffered, not one per request), a connection that sends no request
 * for control-idle-timeout is closed, and so is one that has not taken
 * all of an answer control-idle-timeout after it was queued: a reader
 * that takes a byte now and then cannot keep its slot, or the answer's
 * memory, for longer.  The kernel holds at most CTL_SNDBUF of an
 * answer for it; the rest waits here, under that deadline.
 *
 * A share is a user's, not a uid's: a user with subordinate uids can
 * present many of them from a user namespace of its own, so a peer in
 * a namespace below ours counts against the owner of the outermost
 * one (control_owner).
 *
 * A request answered later (a submission waits for the worker, a
 * reconcile for the reconciler) is a row in one table here, keyed by
 * its connection; the module that answers keeps only the row's id.
 * A connection that closes, also while it waits, drops its rows at
 * once: no answer can reach another connection that took its
 * descriptor, and nothing of a client gone stays behind.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>

#include <linux/nsfs.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "esc.h"
#include "factoryd.h"
#include "fleetmsg.h"
#include "image.h"
#include "log.h"
#include "receipt.h"
#include "yaml.h"

/* Linux 6.5 and 6.11; older headers lack them. */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD	77
#endif
#ifndef PIDFD_GET_USER_NAMESPACE
#define PIDFD_GET_USER_NAMESPACE	_IO(0xff, 9)
#endif
#define CTL_USERNS_DEPTH	33	/* the kernel nests at most 32 */

#define CTL_GROUP	"_factoryctl"
#define CTL_MAXCONNS	64	/* per socket */
#define CTL_RO_PERUID	8	/* .ro: one uid's share */
#define CTL_RW_PERUID	16	/* rw: one uid's share, but root's */
#define CTL_RW_ROOT	16	/* rw: slots kept for root */
#define CTL_PAUSE_S	1	/* accept retried after, out of fds */
#define CTL_LOGPIECE	(FACTORY_MAXIMSG / 8)	/* log bytes an answer */
#define CTL_SNDBUF	4096		/* the kernel doubles it */
#define CTL_GUARD_MS	250	/* a read or close of a client's, at most */
#define CTL_PENALTY_S	60	/* then its user is refused that long */
#define CTL_PENALTIES	16	/* users refused at once, at most */

struct ctl_listener {
	struct event	 ev;
	struct event	 pause;		/* accept off until it fires */
	int		 paused;
	int		 fd;
	int		 readonly;
	int		 nconns;
	time_t		 refused;	/* last refusal logged */
	char		 path[PATH_MAX];
};

struct ctl_handler {
	uint32_t	 type;
	int		 readonly;	/* allowed on the .ro socket */
	int		 async;		/* answered later, from elsewhere */
	void		(*fn)(struct ctl_conn *, struct imsg *);
};

static struct ctl_listener	 listeners[2];
static uint32_t			 conn_next = 1;

/*
 * A client's descriptors can hold the daemon.  One it passed is let go
 * of when we read its connection (a channel that takes none gives them
 * no room, imsg.c) or close it (what it had queued goes), and where
 * ours was the last reference the release runs here: a TCP socket set
 * to linger with unsent data waits out its linger time, an hour if it
 * likes, and the whole daemon with it.  Before Linux 6.16 (no
 * SO_PASSRIGHTS) any user may send one to the .ro socket.  Each read,
 * request and close of a client's connection runs under a timer whose
 * signal ends such a wait (the kernel's waits in a close are
 * interruptible) every CTL_GUARD_MS; a client that sent descriptors
 * and held us that long is closed, and its user refused for
 * CTL_PENALTY_S (root, uid 0, never is); a listener whose refused
 * connection did so pauses (control_refuse).  Not bounded: a FUSE
 * file's flush, which waits uninterruptibly once interrupted; only the
 * rw socket installs a client's descriptors.  A control process of
 * its own, taking such waits instead of us, would be the whole fix.
 */
static volatile sig_atomic_t	 guard_fired;
static struct {
	uid_t	 owner;
	time_t	 until;
} penalties[CTL_PENALTIES];
/* factoryd.c's reload, given at control_init(). */
static int			(*reload)(char *, size_t);

static void	control_accept(int, short, void *);
static void	control_norights(int);
static void	control_guard_sig(int);
static void	control_penalize(const struct ctl_conn *);

#ifdef SO_PASSRIGHTS
#define CTL_SO_PASSRIGHTS	SO_PASSRIGHTS
#else
#define CTL_SO_PASSRIGHTS	83	/* Linux 6.16's */
#endif
static void	control_resume(int, short, void *);
static void	control_pause(struct ctl_listener *);
static void	control_dispatch(int, short, void *);
static void	control_close(struct ctl_conn *);
static void	control_idle(int, short, void *);
static void	ctl_status(struct ctl_conn *, struct imsg *);
static void	ctl_policy(struct ctl_conn *, struct imsg *);
static void	ctl_reload(struct ctl_conn *, struct imsg *);
static void	ctl_log_verbose(struct ctl_conn *, struct imsg *);
static void	ctl_list(struct ctl_conn *, struct imsg *);
static void	ctl_show(struct ctl_conn *, struct imsg *);
static void	ctl_logs(struct ctl_conn *, struct imsg *);
static void	ctl_cancel(struct ctl_conn *, struct imsg *);
static void	ctl_approve(struct ctl_conn *, struct imsg *);
static void	ctl_receipts(struct ctl_conn *, struct imsg *);
static void	ctl_orphans(struct ctl_conn *, struct imsg *);
static void	ctl_reap(struct ctl_conn *, struct imsg *);
static void	ctl_reconcile(struct ctl_conn *, struct imsg *);
static void	ctl_cache_list(struct ctl_conn *, struct imsg *);
static void	ctl_cache_rm(struct ctl_conn *, struct imsg *);
static void	ctl_metrics(struct ctl_conn *, struct imsg *);
static void	ctl_cache_rm_setup(struct ctl_conn *, const char *);
static void	ctl_cache_gc(struct ctl_conn *, struct imsg *);
static void	ctl_cohort(struct ctl_conn *, struct imsg *);
static void	ctl_select(struct ctl_conn *, struct imsg *);

static const struct ctl_handler ctl_handlers[] = {
	{ IMSG_CTL_STATUS,	1, 0, ctl_status },
	{ IMSG_CTL_POLICY,	1, 0, ctl_policy },
	{ IMSG_CTL_RELOAD,	0, 0, ctl_reload },
	{ IMSG_CTL_LOG_VERBOSE,	0, 0, ctl_log_verbose },
	{ IMSG_CTL_SUBMIT,	0, 1, attempt_submit },
	{ IMSG_CTL_LIST,	1, 0, ctl_list },
	{ IMSG_CTL_SHOW,	1, 0, ctl_show },
	{ IMSG_CTL_LOGS,	1, 0, ctl_logs },
	{ IMSG_CTL_CANCEL,	0, 1, ctl_cancel },
	{ IMSG_CTL_APPROVE,	0, 0, ctl_approve },
	{ IMSG_CTL_RECEIPTS,	1, 0, ctl_receipts },
	{ IMSG_CTL_ORPHANS,	1, 0, ctl_orphans },
	{ IMSG_CTL_REAP,	0, 0, ctl_reap },
	{ IMSG_CTL_RECONCILE,	0, 1, ctl_reconcile },
	{ IMSG_CTL_CACHE_LIST,	1, 0, ctl_cache_list },
	{ IMSG_CTL_CACHE_RM,	0, 0, ctl_cache_rm },
	{ IMSG_CTL_CACHE_GC,	0, 0, ctl_cache_gc },
	{ IMSG_CTL_SHELL,	0, 0, shell_request },
	{ IMSG_CTL_SHELL_FD,	0, 0, shell_fd },
	{ IMSG_CTL_IMAGE_IMPORT, 0, 1, image_ctl_import },
	{ IMSG_CTL_IMAGE_LIST,	1, 0, image_ctl_list },
	{ IMSG_CTL_IMAGE_RM,	0, 0, image_ctl_rm },
	{ IMSG_CTL_IMAGE_VERIFY, 0, 1, image_ctl_verify },
	{ IMSG_CTL_METRICS,	1, 0, ctl_metrics },
	{ IMSG_CTL_SUBMIT_N,	0, 1, attempt_submit_n },
	{ IMSG_CTL_COHORT,	1, 0, ctl_cohort },
	{ IMSG_CTL_SELECT,	0, 0, ctl_select },
	{ IMSG_CTL_DIFF,	0, 1, cohort_diff_request },
	{ IMSG_CTL_ATTEST,	1, 0, attest_ctl },
	{ IMSG_CTL_PREVIEW,	0, 0, preview_ctl },
	{ IMSG_CTL_ATTACH,	0, 0, evidence_begin },
	{ IMSG_CTL_ATTACH_DATA,	0, 0, evidence_data },
	{ IMSG_CTL_ATTACH_END,	0, 0, evidence_end },
	{ IMSG_CTL_FLEET_SUBMIT, 0, 1, attempt_submit_fleet },
	{ IMSG_CTL_HOSTS,	0, 1, fleet_ctl_list },
	{ IMSG_CTL_QUEUE,	0, 1, fleet_ctl_list },
	{ IMSG_CTL_FLEET_STATE,	0, 1, fleet_ctl_state },
	{ IMSG_CTL_TENANTS,	0, 1, fleet_ctl_list },
	{ IMSG_CTL_USAGE,	0, 1, fleet_ctl_list },
};

/*
 * Whether something listens at sun: 1 if so, 0 if what is there
 * refuses the connection (what a daemon left when it died, or another
 * file), -1 if that cannot be told.  Non-blocking: a listener whose
 * backlog is full (EAGAIN) is there all the same.  The connection is
 * closed at once, which that daemon sees as a client that went away.
 */
static int
control_answers(const struct sockaddr_un *sun)
{
	int	 s, rv, saved;

	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return (-1);
	if (connect(s, (const struct sockaddr *)sun, sizeof(*sun)) == 0 ||
	    errno == EAGAIN)
		rv = 1;
	else if (errno == ECONNREFUSED || errno == ENOENT)
		rv = 0;
	else
		rv = -1;
	saved = errno;
	close(s);
	errno = saved;
	return (rv);
}

static int
control_listen(struct ctl_listener *l, const char *path, int readonly)
{
	struct sockaddr_un	 sun;
	struct group		*gr;
	mode_t			 old;
	int			 rv;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, path, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path)) {
		log_warnx("control socket %s: path too long", path);
		return (-1);
	}
	strlcpy(l->path, path, sizeof(l->path));
	l->readonly = readonly;
	if ((l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		log_warn("control socket %s", path);
		return (-1);
	}
	old = umask(S_IXUSR | S_IXGRP | S_IRWXO);
	rv = bind(l->fd, (struct sockaddr *)&sun, sizeof(sun));
	if (rv == -1 && errno == EADDRINUSE) {
		/* A socket that answers is a running daemon's: not ours. */
		if ((rv = control_answers(&sun)) != 0) {
			if (rv == 1)
				log_warnx("control socket %s: in use by "
				    "another factoryd", path);
			else
				log_warn("control socket %s: connect", path);
			umask(old);
			goto fail;
		}
		if (unlink(path) == -1 && errno != ENOENT) {
			log_warn("control socket %s: unlink", path);
			umask(old);
			goto fail;
		}
		rv = bind(l->fd, (struct sockaddr *)&sun, sizeof(sun));
	}
	if (rv == -1) {
		log_warn("control socket %s: bind", path);
		umask(old);
		goto fail;
	}
	umask(old);
	if (readonly) {
		if (chmod(path, 0666) == -1)
			goto failunlink;
	} else {
		if ((gr = getgrnam(CTL_GROUP)) != NULL &&
		    chown(path, 0, gr->gr_gid) == -1)
			goto failunlink;
		if (chmod(path, 0660) == -1)
			goto failunlink;
	}
	if (readonly)
		control_norights(l->fd);
	if (listen(l->fd, CTL_MAXCONNS) == -1)
		goto failunlink;
	event_set(&l->ev, l->fd, EV_READ | EV_PERSIST, control_accept, l);
	event_add(&l->ev, NULL);
	evtimer_set(&l->pause, control_resume, l);
	l->paused = 0;
	return (0);
 failunlink:
	log_warn("control socket %s", path);
	unlink(path);
 fail:
	close(l->fd);
	l->fd = -1;
	return (-1);
}

int
control_init(const char *path, int (*reload_fn)(char *, size_t))
{
	struct sigaction	 sa;
	char			 ro[PATH_MAX];

	reload = reload_fn;
	reply_init(control_dispatch);
	/* No SA_RESTART: the signal is there to end a wait (control_guard). */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = control_guard_sig;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) == -1)
		return (-1);
	if ((size_t)snprintf(ro, sizeof(ro), "%s%s", path, FACTORYD_ROSUFFIX)
	    >= sizeof(ro))
		return (-1);
	if (control_listen(&listeners[0], path, 0) == -1)
		return (-1);
	if (control_listen(&listeners[1], ro, 1) == -1) {
		control_cleanup(path);
		return (-1);
	}
	return (0);
}

void
control_cleanup(const char *path)
{
	int	 i;

	for (i = 0; i < 2; i++) {
		if (listeners[i].fd <= 0)
			continue;
		event_del(&listeners[i].ev);
		evtimer_del(&listeners[i].pause);
		close(listeners[i].fd);
		listeners[i].fd = -1;
		unlink(listeners[i].path);
	}
}

/* 1 if the namespaces at fd a and b are one, 0 if not, -1 error. */
static int
control_samens(int a, int b)
{
	struct stat	 sa, sb;

	if (fstat(a, &sa) == -1 || fstat(b, &sb) == -1)
		return (-1);
	return (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

/*
 * The peer's user namespace, from a pidfd of the process that
 * connected: SO_PEERPIDFD names that very process, so no pid can have
 * been reused meanwhile.  A kernel without PIDFD_GET_USER_NAMESPACE:
 * /proc by pid, and the pidfd still alive after, so the process read
 * there was the peer.  Without SO_PEERPIDFD, a pidfd of SO_PEERCRED's
 * pid, the same way (a pid reused before it is the one race left).
 * -1 if the peer is gone or cannot be told.
 */
static int
control_peer_userns(int s, pid_t pid)
{
	socklen_t	 len = sizeof(int);
	char		 path[64];
	int		 pidfd, nsfd, saved;

	if (getsockopt(s, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == -1 &&
	    (pidfd = syscall(SYS_pidfd_open, pid, 0)) == -1)
		return (-1);
	if ((nsfd = ioctl(pidfd, PIDFD_GET_USER_NAMESPACE, 0)) != -1 ||
	    errno != ENOTTY) {
		saved = errno;
		close(pidfd);
		errno = saved;
		return (nsfd);
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if ((nsfd = open(path, O_RDONLY | O_CLOEXEC)) != -1 &&
	    syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == -1) {
		close(nsfd);
		nsfd = -1;
	}
	saved = errno;
	close(pidfd);
	errno = saved;
	return (nsfd);
}

/*
 * Whose share a connection takes: its uid if the peer is in our user
 * namespace, else the owner (the creator's uid, as we see it) of the
 * outermost namespace between the peer's and ours.  -1 if that cannot
 * be told (the peer left, /proc is not ours to read): refused.
 */
static int
control_owner(int s, const struct ucred *cred, uid_t *owner)
{
	static int	 ours = -1;
	uid_t		 u;
	int		 ns, parent, same, depth;

	if (ours == -1 && (ours = open("/proc/self/ns/user",
	    O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	if ((ns = control_peer_userns(s, cred->pid)) == -1)
		return (-1);
	for (depth = 0; depth < CTL_USERNS_DEPTH; depth++) {
		if ((same = control_samens(ns, ours)) != 0) {
			close(ns);
			if (same == -1)
				return (-1);
			*owner = cred->uid;	/* ours: the uid itself */
			return (0);
		}
		if ((parent = ioctl(ns, NS_GET_PARENT)) == -1) {
			/* Not below ours: the kernel mapped it for us. */
			close(ns);
			if (errno != EPERM)
				return (-1);
			*owner = cred->uid;
			return (0);
		}
		if ((same = control_samens(parent, ours)) == 1) {
			close(parent);
			if (ioctl(ns, NS_GET_OWNER_UID, &u) == -1) {
				close(ns);
				return (-1);
			}
			close(ns);
			*owner = u;
			return (0);
		}
		close(ns);
		ns = parent;
		if (same == -1)
			break;
	}
	close(ns);
	return (-1);
}

/*
 * May one more connection of uid be taken on l?  Each socket has its
 * own cap, so the .ro socket filling up costs the rw one nothing; a
 * uid gets a share of a socket; root's slots on the rw socket are
 * never taken by anyone else, so root is always served there.
 */
static int
control_admit(struct ctl_listener *l, uid_t uid, uid_t owner)
{
	struct ctl_conn	*c;
	int		 mine = 0;

	if (l->nconns >= CTL_MAXCONNS)
		return (0);
	if (!l->readonly && uid == 0)
		return (1);
	TAILQ_FOREACH(c, &env->ctl_conns, entry)
		if (c->readonly == l->readonly && c->owner == owner)
			mine++;
	if (l->readonly)
		return (mine < CTL_RO_PERUID);
	return (mine < CTL_RW_PERUID &&
	    l->nconns < CTL_MAXCONNS - CTL_RW_ROOT);
}

/*
 * No request of the read-only socket takes a descriptor, and one that
 * came would be root's to close: a file of the sender's FUSE server,
 * or a socket that lingers, can hold that close for ever.  Where the
 * kernel has SO_PASSRIGHTS (Linux 6.16), it refuses them to the sender.
 */
static void
control_norights(int s)
{
	int	 no = 0;

	(void)setsockopt(s, SOL_SOCKET, CTL_SO_PASSRIGHTS, &no, sizeof(no));
}

static void
control_guard_sig(int sig)
{
	guard_fired = 1;
}

/*
 * The timer on (1) before a read or close of a client's, off (0)
 * after; it repeats, so each of several releases in one region (the
 * descriptors a message had queued) is cut short, not the first alone.
 */
static void
control_guard(int on)
{
	struct itimerval	 it;

	memset(&it, 0, sizeof(it));
	if (on) {
		guard_fired = 0;
		it.it_value.tv_usec = CTL_GUARD_MS * 1000;
		it.it_interval = it.it_value;
	}
	(void)setitimer(ITIMER_REAL, &it, NULL);
}

/* A client's socket closed under the guard: 1 if it held us. */
static int
control_guarded_close(int s)
{
	control_guard(1);
	close(s);
	control_guard(0);
	return (guard_fired);
}

/*
 * A descriptor c sent, which no request takes: closed under the guard,
 * and c's user refused if it held us (control_penalize).
 */
static void
control_drop_fd(struct ctl_conn *c, int fd)
{
	if (control_guarded_close(fd))
		control_penalize(c);
}

/* Is owner refused for now, for holding us with a descriptor? */
static int
control_penalized(uid_t owner)
{
	time_t	 now = time(NULL);
	size_t	 i;

	for (i = 0; i < CTL_PENALTIES; i++)
		if (penalties[i].owner == owner && penalties[i].until > now)
			return (1);
	return (0);
}

/* c's user, whose descriptor held us: refused for CTL_PENALTY_S. */
static void
control_penalize(const struct ctl_conn *c)
{
	time_t	 now = time(NULL);
	size_t	 i, slot = 0;

	if (c->uid == 0) {
		log_warnx("control: uid 0 sent a descriptor whose release "
		    "held the daemon %dms", CTL_GUARD_MS);
		return;
	}
	log_warnx("control: uid %u (user %u) sent a descriptor whose release "
	    "held the daemon %dms: refused for %ds", (unsigned)c->uid,
	    (unsigned)c->owner, CTL_GUARD_MS, CTL_PENALTY_S);
	/* Its own row, else a spent one, else the one that ends first. */
	for (i = 0; i < CTL_PENALTIES; i++) {
		if (penalties[i].owner == c->owner) {
			slot = i;
			break;
		}
		if (penalties[i].until < penalties[slot].until)
			slot = i;
	}
	penalties[slot].owner = c->owner;
	penalties[slot].until = now + CTL_PENALTY_S;
}

/*
 * A connection not taken, closed under the guard.  What the client had
 * queued goes with it, before we could know whose it was; if that held
 * us, this listener stops accepting for CTL_PAUSE_S (not resumed by a
 * connection closing, as control_pause's is), rather than pay again for
 * the next one at once.
 */
static void
control_refuse(struct ctl_listener *l, int s)
{
	struct timeval	 tv = { CTL_PAUSE_S, 0 };

	if (!control_guarded_close(s))
		return;
	log_warnx("control: %s: a refused connection's queued descriptor "
	    "held the daemon %dms: not accepting for %ds", l->path,
	    CTL_GUARD_MS, CTL_PAUSE_S);
	event_del(&l->ev);
	evtimer_add(&l->pause, &tv);
}

static void
control_accept(int fd, short event, void *arg)
{
	struct ctl_listener	*l = arg;
	struct ctl_conn		*c;
	struct ucred		 cred;
	socklen_t		 len = sizeof(cred);
	time_t			 now;
	uid_t			 owner;
	int			 s;

	if ((s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) ==
	    -1) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM)
			control_pause(l);
		else if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED)
			log_warn("control: %s: accept", l->path);
		return;
	}
	if (l->readonly)
		control_norights(s);
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		log_warn("control: SO_PEERCRED");
		control_refuse(l, s);
		return;
	}
	/* It takes descriptors of its own: out of them, as accept is. */
	if (control_owner(s, &cred, &owner) == -1) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOMEM) {
			control_refuse(l, s);
			control_pause(l);
			return;
		}
		if ((now = time(NULL)) != l->refused) {
			l->refused = now;
			log_warn("control: %s: connection of uid %u refused: "
			    "its user namespace cannot be told", l->path,
			    (unsigned)cred.uid);
		}
		control_refuse(l, s);
		return;
	}
	if (l->paused) {
		log_info("control: %s: accepting again", l->path);
		l->paused = 0;
	}
	if (control_penalized(owner) && (cred.uid != 0 || l->readonly)) {
		if ((now = time(NULL)) != l->refused) {
			l->refused = now;
			log_warnx("control: %s: connection of uid %u (user "
			    "%u) refused: its descriptor held the daemon",
			    l->path, (unsigned)cred.uid, (unsigned)owner);
		}
		control_refuse(l, s);
		return;
	}
	if (!control_admit(l, cred.uid, owner)) {
		/* At most one line a second, whatever a flood does. */
		if ((now = time(NULL)) != l->refused) {
			l->refused = now;
			log_warnx("control: %s: connection of uid %u (user "
			    "%u) refused: %d open, at most %d, %d per user",
			    l->path, (unsigned)cred.uid, (unsigned)owner,
			    l->nconns, CTL_MAXCONNS, l->readonly ?
			    CTL_RO_PERUID : CTL_RW_PERUID);
		}
		control_refuse(l, s);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warn("control");
		control_refuse(l, s);
		return;
	}
	c->id = conn_next++;
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->owner = owner;
	c->pid = cred.pid;
	c->readonly = l->readonly;
	if (imsgev_init(&c->iev, s, control_dispatch, c, FACTORY_MAXIMSG) ==
	    -1) {
		control_refuse(l, s);
		free(c);
		return;
	}
	/*
	 * What the kernel holds of an answer for a client that does not
	 * read stays small, also once we closed our end; failing that,
	 * the default stands, and the deadline still bounds our part.
	 */
	if (setsockopt(s, SOL_SOCKET, SO_SNDBUF, &(int){ CTL_SNDBUF },
	    sizeof(int)) == -1)
		log_warn("control: SO_SNDBUF");
	/* factoryctl shell passes its stdio; never on the .ro socket. */
	if (!c->readonly)
		imsgbuf_allow_fdpass(&c->iev.ibuf);
	evtimer_set(&c->idle, control_idle, c);
	reply_touch(c);
	TAILQ_INSERT_TAIL(&env->ctl_conns, c, entry);
	l->nconns++;
}

/*
 * Out of descriptors (or memory): the pending connection stays in the
 * backlog and the listener stays readable, so accepting again at once
 * would spin.  Stop accepting for a second, or until one of ours
 * closes; say so once per episode, not once per try.
 */
static void
control_pause(struct ctl_listener *l)
{
	struct timeval	 tv = { CTL_PAUSE_S, 0 };

	if (!l->paused)
		log_warn("control: %s: accept: not accepting for %ds, or "
		    "until a connection closes", l->path, CTL_PAUSE_S);
	l->paused = 1;
	event_del(&l->ev);
	evtimer_add(&l->pause, &tv);
}

/* Accepting again; l->paused stays set until a connection is taken. */
static void
control_resume(int fd, short event, void *arg)
{
	struct ctl_listener	*l = arg;

	evtimer_del(&l->pause);
	event_add(&l->ev, NULL);
}

static void
control_close(struct ctl_conn *c)
{
	int		 i;

	TAILQ_REMOVE(&env->ctl_conns, c, entry);
	reply_wait_drop(c);
	shell_conn_closed(c);
	evidence_gone(c);
	evtimer_del(&c->idle);
	control_guard(1);
	imsgev_clear(&c->iev);
	control_guard(0);
	if (guard_fired && (c->iev.ibuf.flags & IMSGF_SAWFD))
		control_penalize(c);
	listeners[c->readonly].nconns--;
	free(c);
	/* A descriptor came free. */
	for (i = 0; i < 2; i++)
		if (listeners[i].paused && evtimer_pending(&listeners[i].pause,
		    NULL))
			control_resume(-1, 0, &listeners[i]);
}

/* The descriptors the control sockets may hold at once. */
int
control_nofile(void)
{
	/*
	 * Each socket's connections and listener; our user namespace; a
	 * pidfd and a namespace for a moment, in control_owner().
	 */
	return (2 * (CTL_MAXCONNS + 1) + 3);
}

/*
 * No request for the whole timeout, or an answer not taken whole
 * within it: the slot goes back.  A shell session is quiet on this
 * socket by nature.
 */
static void
control_idle(int fd, short event, void *arg)
{
	struct ctl_conn	*c = arg;

	if (c->nwaits > 0 && !c->sending) {
		if (reply_wait_bounded(c) || c->sending) {
			reply_touch(c);
			return;
		}
	}
	if (c->sending) {
		log_warnx("control: uid %u did not take all of an answer "
		    "within %ds (%u messages left): closing",
		    (unsigned)c->uid, env->conf->control_idle,
		    imsgbuf_queuelen(&c->iev.ibuf));
		control_close(c);
		return;
	}
	if (c->shell != NULL) {
		reply_touch(c);
		return;
	}
	log_debug("control: uid %u idle for %ds, closing", (unsigned)c->uid,
	    env->conf->control_idle);
	control_close(c);
}

/* The handler of a request type, or NULL. */
static const struct ctl_handler *
control_handler(uint32_t type)
{
	size_t	 i;

	for (i = 0; i < sizeof(ctl_handlers) / sizeof(ctl_handlers[0]); i++)
		if (ctl_handlers[i].type == type)
			return (&ctl_handlers[i]);
	return (NULL);
}

/*
 * The requests already read, one at a time while the connection is
 * not busy.  -1 if the client was closed.
 */
static int
control_requests(struct ctl_conn *c)
{
	const struct ctl_handler *h;
	struct imsg		 imsg;
	int			 n;

	while (!reply_busy(c)) {
		if ((n = imsgbuf_get(&c->iev.ibuf, &imsg)) == -1) {
			log_warnx("control: malformed request from uid %u, "
			    "closing", (unsigned)c->uid);
			control_close(c);
			return (-1);
		}
		if (n == 0)
			return (0);
		if ((h = control_handler(imsg_get_type(&imsg))) == NULL) {
			log_warnx("control: unknown request %u from uid %u, "
			    "closing", imsg_get_type(&imsg), (unsigned)c->uid);
			imsg_free(&imsg);
			control_close(c);
			return (-1);
		}
		/*
		 * Only IMAGE_IMPORT carries a descriptor, and only root's is
		 * taken; another's goes here, under the guard, and the
		 * handler refuses the import.
		 */
		if (h->type == IMSG_CTL_IMAGE_IMPORT && c->uid != 0 &&
		    (n = imsg_get_fd(&imsg)) != -1)
			control_drop_fd(c, n);
		if (h->type != IMSG_CTL_IMAGE_IMPORT &&
		    (n = imsg_get_fd(&imsg)) != -1) {
			control_drop_fd(c, n);
			log_warnx("control: descriptor with request %u from "
			    "uid %u, closing", h->type, (unsigned)c->uid);
			imsg_free(&imsg);
			control_close(c);
			return (-1);
		}
		reply_touch(c);
		if (c->readonly && !h->readonly)
			reply_fail(c, "read-only socket: request refused");
		else {
			h->fn(c, &imsg);
			if (h->async && imsgbuf_queuelen(&c->iev.ibuf) == 0)
				c->awaiting = 1;
		}
		imsg_free(&imsg);
	}
	return (0);
}

/*
 * The peer shut its side while we owe it an answer (EV_CLOSED).  Gone
 * altogether (POLLHUP: nobody will read the answer): closed now, its
 * waits dropped.  Only its sending side: it may still read, so the
 * answer goes out and the read after it sees the end.
 */
static int
control_hangup(struct ctl_conn *c)
{
	struct pollfd	 pfd;

	pfd.fd = c->iev.ibuf.fd;
	pfd.events = 0;
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR))) {
		control_close(c);
		return (-1);
	}
	c->halfclosed = 1;
	return (0);
}

static void
control_dispatch(int fd, short event, void *arg)
{
	struct ctl_conn		*c = arg;
	int			 rv;

	if ((event & EV_CLOSED) && control_hangup(c) == -1)
		return;
	if (event & EV_WRITE) {
		if (imsgbuf_write(&c->iev.ibuf) == -1) {
			if (errno != EPIPE && errno != ECONNRESET)
				log_warn("control: uid %u", (unsigned)c->uid);
			control_close(c);
			return;
		}
	}
	/* A stray read event while busy (another module's compose). */
	if ((event & EV_READ) && !reply_busy(c)) {
		control_guard(1);
		rv = imsgbuf_read(&c->iev.ibuf);
		control_guard(0);
		if (guard_fired && (c->iev.ibuf.flags & IMSGF_SAWFD)) {
			control_penalize(c);
			control_close(c);
			return;
		}
		switch (rv) {
		case -1:
			if (errno != ECONNRESET)
				log_warn("control: uid %u, closing",
				    (unsigned)c->uid);
			control_close(c);
			return;
		case 0:
			control_close(c);
			return;
		}
	}
	if (control_requests(c) == -1)
		return;
	reply_events(c);
}

static json_t *
proc_json(const char *name, pid_t pid, uid_t uid, const char *state,
    time_t started, int restarts)
{
	return (json_pack("{s:s, s:i, s:i, s:s, s:I, s:i}",
	    "name", name, "pid", (int)pid, "uid", (int)uid, "state", state,
	    "uptime", (json_int_t)(started ? time(NULL) - started : 0),
	    "restarts", restarts));
}

static void
ctl_status(struct ctl_conn *c, struct imsg *imsg)
{
	json_t		*procs, *o;
	struct child	*ch;
	const char	*cgroot;
	int		 i, deleg;

	cgroot = sandbox_cgroup_root(&deleg);
	procs = json_array();
	json_array_append_new(procs, proc_json("parent", getpid(), 0,
	    "running", env->started, 0));
	for (i = 0; i < env->nchildren; i++) {
		ch = &env->children[i];
		json_array_append_new(procs, proc_json(
		    factory_procs[ch->id].name, ch->pid > 0 ? ch->pid : 0,
		    env->conf->users[ch->id].uid, proc_state_name(ch->state),
		    ch->pid > 0 ? ch->started : 0, ch->restarts));
	}
	o = json_pack("{s:o, s:s, s:i, s:o, s:{s:i, s:i, s:I}, s:o, "
	    "s:{s:s, s:b}}", "processes",
	    procs, "version", FACTORY_VERSION, "client_uid", (int)c->uid,
	    "cohorts", cohorts_json(),
	    "control", "connections", listeners[0].nconns,
	    "readonly_connections", listeners[1].nconns,
	    "waits", (json_int_t)reply_wait_count(CTL_WAIT_MAX),
	    "overview", metrics_overview(),
	    "cgroup", "root", cgroot, "delegated", deleg);
	reply_obj(c, o);
}

static void
ctl_metrics(struct ctl_conn *c, struct imsg *imsg)
{
	char	*text = metrics_text();

	reply_obj(c, json_pack("{s:s}", "openmetrics", text));
	free(text);
}

static void
ctl_policy(struct ctl_conn *c, struct imsg *imsg)
{
	json_t			*procs;
	const struct factory_proc *p;
	struct child		*ch;
	int			 i;

	procs = json_array();
	p = &factory_procs[PROC_PARENT];
	json_array_append_new(procs, json_pack("{s:s, s:i, s:s, s:s, s:s, "
	    "s:s, s:s}", "name", p->name, "uid", 0, "why", p->why,
	    "applied", parent_policy_describe(),
	    "sandbox_downgrade", sandbox_downgrade_text(),
	    "sandbox_replaced", sandbox_replaced_text(),
	    "sandbox_kernel", sandbox_features_text()));
	for (i = 0; i < env->nchildren; i++) {
		ch = &env->children[i];
		p = &factory_procs[ch->id];
		json_array_append_new(procs, json_pack(
		    "{s:s, s:i, s:i, s:s, s:s, s:s}",
		    "name", p->name, "pid", ch->pid > 0 ? ch->pid : 0,
		    "uid", (int)env->conf->users[ch->id].uid,
		    "promises", p->promises, "why", p->why,
		    "applied", ch->policy != NULL ? ch->policy :
		    "(not running)"));
	}
	reply_obj(c, json_pack("{s:o}", "processes", procs));
}

static void
ctl_reload(struct ctl_conn *c, struct imsg *imsg)
{
	char	 errbuf[CONF_ERRLEN];

	log_info("reload requested by uid %u", (unsigned)c->uid);
	if (reload(errbuf, sizeof(errbuf)) == -1)
		reply_fail(c, "reload failed, old configuration kept: %s",
		    errbuf);
	else
		reply_json(c, "{\"reloaded\":true}");
}

static void
ctl_log_verbose(struct ctl_conn *c, struct imsg *imsg)
{
	int	 v;

	if (imsg_get_data(imsg, &v, sizeof(v)) == -1 || v < 0 || v > 3) {
		reply_fail(c, "bad verbosity");
		return;
	}
	log_setverbose(v);
	env->verbose = v;
	proc_broadcast(IMSG_CTL_LOG_VERBOSE, &v, sizeof(v));
	log_info("log verbosity %d, set by uid %u", v, (unsigned)c->uid);
	reply_json(c, "{}");
}

static void
ctl_list(struct ctl_conn *c, struct imsg *imsg)
{
	struct attempt	*a;
	json_t		*arr = json_array(), *o;

	TAILQ_FOREACH(a, &env->attempts, entry) {
		o = json_pack("{s:s, s:s, s:s, s:s, s:s?}", "id", a->id,
		    "state", attempt_state_name(a->outcome != AS_MAX ?
		    a->outcome : a->state), "repository", a->repo, "title",
		    a->m->title, "reason", a->reason);
		/* A member names its cohort. */
		if (a->cohort[0] != '\0')
			json_object_set_new(o, "cohort",
			    json_string(a->cohort));
		json_array_append_new(arr, o);
	}
	reply_obj(c, json_pack("{s:o, s:o}", "attempts", arr,
	    "cohorts", cohorts_json()));
}

static void
ctl_show(struct ctl_conn *c, struct imsg *imsg)
{
	struct attempt	*a;

	if ((a = reply_attempt(c, imsg)) != NULL)
		reply_obj(c, attempt_json(a));
}

/*
 * A piece of an attempt's log from an offset; the client asks again
 * for more (logs -f).  The log is the agent's, and untrusted: its bytes
 * go out exact in the suite's one encoding (esc.h), which factoryctl
 * decodes and shows in display form.  A piece is a quarter of a
 * message, since the encoding is at most four bytes a byte.
 */
static void
ctl_logs(struct ctl_conn *c, struct imsg *imsg)
{
	struct ibuf	 ib;
	struct attempt	*a;
	char		 id[ATTEMPT_ID_MAX], path[PATH_MAX], *buf;
	char		 svc[SERVICE_NAMEMAX];
	uint64_t	 off;
	uint8_t		 which;
	ssize_t		 n;
	int		 fd, i;

	svc[0] = '\0';
	if (imsg_get_ibuf(imsg, &ib) == -1 || ibuf_get_n64(&ib, &off) == -1 ||
	    ibuf_get_n8(&ib, &which) == -1 ||
	    ibuf_get_string(&ib, id, sizeof(id)) == -1 ||
	    (which & ~(CTL_LOGS_VALIDATION | CTL_LOGS_SERVICE)) != 0 ||
	    ((which & CTL_LOGS_SERVICE) && ibuf_get_string(&ib, svc,
	    sizeof(svc)) == -1) || ibuf_size(&ib) != 0) {
		reply_fail(c, "bad logs request");
		return;
	}
	if ((a = attempt_find(id)) == NULL) {
		reply_fail(c, "%s: no such attempt", id);
		return;
	}
	if (which & CTL_LOGS_SERVICE) {
		/* Only a name of its manifest's becomes a path. */
		for (i = 0; i < a->m->nservices; i++)
			if (strcmp(a->m->services[i].name, svc) == 0)
				break;
		if (i == a->m->nservices) {
			reply_fail(c, "%s: no service %s", id, svc);
			return;
		}
		service_logpath(a, which & CTL_LOGS_VALIDATION, svc, path,
		    sizeof(path));
	} else
		attempt_logpath(a, which & CTL_LOGS_VALIDATION, path,
		    sizeof(path));
	if ((buf = malloc(CTL_LOGPIECE)) == NULL)
		fatal(NULL);
	n = 0;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) != -1) {
		n = pread(fd, buf, CTL_LOGPIECE, (off_t)off);
		close(fd);
	}
	if (n < 0)
		n = 0;
	reply_obj(c, json_pack("{s:o, s:I, s:s, s:b}", "data",
	    esc_json(buf, (size_t)n),
	    "offset", (json_int_t)(off + n), "state", attempt_state_name(
	    a->outcome != AS_MAX ? a->outcome : a->state),
	    "done", attempt_terminal(a) && a->run == NULL));
	free(buf);
}

static void
ctl_cancel(struct ctl_conn *c, struct imsg *imsg)
{
	struct attempt	*a;
	char		 id[COHORT_ID_MAX], err[256];
	int		 n;

	/* A cohort's id: every member still under way. */
	if (imsg_get_strbuf(imsg, id, sizeof(id)) == 0 &&
	    lifecycle_cohort_id(id)) {
		if (tenant_may_act_cohort(c, "cancel", id, err,
		    sizeof(err)) == -1) {
			reply_fail(c, "%s", err);
			return;
		}
		if ((n = cohort_cancel(id, c->uid, err, sizeof(err))) == -1)
			reply_fail(c, "%s", err);
		else
			reply_obj(c, json_pack("{s:s, s:i}", "cohort",
			    id, "cancelled", n));
		return;
	}
	/* Not here: maybe in the fleet's queue, or another host's. */
	if (env->conf->fleet.enabled && imsg_get_strbuf(imsg, id,
	    sizeof(id)) == 0 && fleet_valid_id(id) && attempt_find(id) == NULL) {
		fleet_ctl_cancel(c, id);
		return;
	}
	if ((a = reply_attempt(c, imsg)) == NULL)
		return;
	if (tenant_may_act(c, "cancel", a, err, sizeof(err)) == -1) {
		reply_fail(c, "%s", err);
		return;
	}
	/* Kept for review (approve -k): the keep ends, nothing else. */
	if (preview_kept(a)) {
		preview_unkeep(a, c->uid);
		reply_obj(c, json_pack("{s:s, s:s, s:b}", "id", a->id, "state",
		    attempt_state_name(a->outcome != AS_MAX ? a->outcome :
		    a->state), "keep_ended", 1));
		return;
	}
	if (attempt_terminal(a)) {
		reply_fail(c, "%s is already %s", a->id,
		    attempt_state_name(a->outcome));
		return;
	}
	/*
	 * The publisher may have pushed already: a cancel now would record
	 * as cancelled what the forge has.  It ends published or failed.
	 */
	if (attempt_publishing(a)) {
		reply_fail(c, "%s is %s: a publication under way is not "
		    "cancelled", a->id, attempt_state_name(a->state));
		return;
	}
	log_info("%s: cancel requested by uid %u", a->id, (unsigned)c->uid);
	attempt_cancel(a, c->uid);
	reply_obj(c, json_pack("{s:s, s:s}", "id", a->id, "state",
	    attempt_state_name(a->outcome != AS_MAX ? a->outcome : a->state)));
}

static void
ctl_approve(struct ctl_conn *c, struct imsg *imsg)
{
	struct attempt	*a;
	struct ibuf	 ib;
	char		 id[ATTEMPT_ID_MAX], keep[16] = "", err[256];
	uint64_t	 keep_ms = 0, was;
	const char	*e;

	/* The id, and with -k how long its preview is kept for review. */
	if (imsg_get_ibuf(imsg, &ib) == -1 ||
	    ibuf_get_string(&ib, id, sizeof(id)) == -1 ||
	    (ibuf_size(&ib) != 0 && (ibuf_get_string(&ib, keep,
	    sizeof(keep)) == -1 || y_parse_duration(keep, &keep_ms,
	    &e) != 0 || keep_ms < 1000)) || ibuf_size(&ib) != 0) {
		reply_fail(c, "bad approve request");
		return;
	}
	if ((a = attempt_find(id)) == NULL) {
		reply_fail(c, "%s: no such attempt", id);
		return;
	}
	was = a->keep_until;
	if (tenant_may_act(c, "approve", a, err, sizeof(err)) == -1 ||
	    (keep_ms != 0 && preview_keep(a, keep_ms, err,
	    sizeof(err)) == -1)) {
		reply_fail(c, "%s", err);
		return;
	}
	if (attempt_approve(a, c->uid, err, sizeof(err)) == -1) {
		a->keep_until = was;	/* a refused approval keeps nothing */
		reply_fail(c, "%s", err);
		return;
	}
	if (keep_ms != 0)
		preview_kept_note(a, c->uid);
	reply_obj(c, json_pack("{s:s, s:i, s:I}", "id", a->id, "approver",
	    (int)c->uid, "kept_until", (json_int_t)a->keep_until));
}

/* factoryctl cohort ID: the members side by side. */
static void
ctl_cohort(struct ctl_conn *c, struct imsg *imsg)
{
	char	 id[COHORT_ID_MAX], err[256];
	json_t	*o;

	if (imsg_get_strbuf(imsg, id, sizeof(id)) == -1 ||
	    !lifecycle_cohort_id(id)) {
		reply_fail(c, "bad cohort id");
		return;
	}
	if ((o = cohort_json(id, err, sizeof(err))) == NULL)
		reply_fail(c, "%s", err);
	else
		reply_obj(c, o);
}

/* factoryctl select MEMBER: journaled with the peer's uid. */
static void
ctl_select(struct ctl_conn *c, struct imsg *imsg)
{
	struct attempt	*a;
	char		 id[ATTEMPT_ID_MAX], err[256];

	if (imsg_get_strbuf(imsg, id, sizeof(id)) == -1) {
		reply_fail(c, "bad attempt id");
		return;
	}
	if ((a = attempt_find(id)) != NULL &&
	    tenant_may_act(c, "select", a, err, sizeof(err)) == -1) {
		reply_fail(c, "%s", err);
		return;
	}
	if (cohort_select(id, c->uid, err, sizeof(err)) == -1) {
		reply_fail(c, "%s", err);
		return;
	}
	reply_obj(c, json_pack("{s:s, s:i}", "selected", id,
	    "uid", (int)c->uid));
}

/* The export: a header with both public keys, then the chain. */
static void
ctl_receipts(struct ctl_conn *c, struct imsg *imsg)
{
	struct attempt	*a;
	char		*hdr, *out;
	size_t		 len, i, off;

	if ((a = reply_attempt(c, imsg)) == NULL)
		return;
	if (receipt_header(a->id, env->receipt_pub, env->verifier_pub,
	    &hdr) == -1) {
		reply_fail(c, "cannot make the receipt header");
		return;
	}
	len = strlen(hdr) + 2;
	for (i = 0; i < a->nreceipts; i++)
		len += strlen(a->receipts[i]) + 1;
	if ((out = malloc(len)) == NULL)
		fatal(NULL);
	off = snprintf(out, len, "%s\n", hdr);
	for (i = 0; i < a->nreceipts; i++)
		off += snprintf(out + off, len - off, "%s\n", a->receipts[i]);
	free(hdr);
	reply_obj(c, json_pack("{s:s, s:s}", "id", a->id, "export",
	    out));
	free(out);
}

static void
ctl_orphans(struct ctl_conn *c, struct imsg *imsg)
{
	reply_obj(c, reconcile_orphans_json());
}

static void
ctl_reap(struct ctl_conn *c, struct imsg *imsg)
{
	json_t	*out;
	char	 id[64], err[512];

	if (imsg_get_strbuf(imsg, id, sizeof(id)) == -1) {
		reply_fail(c, "bad orphan id");
		return;
	}
	if (reconcile_reap(id, c->uid, &out, err, sizeof(err)) == -1) {
		reply_fail(c, "%s", err);
		return;
	}
	reply_obj(c, out);
}

static void
ctl_cache_list(struct ctl_conn *c, struct imsg *imsg)
{
	json_t	*list = pristine_list(), *setup = setup_list();

	json_array_extend(list, setup);
	json_decref(setup);
	reply_obj(c, json_pack("{s:o}", "caches", list));
}

static void
ctl_cache_rm_setup(struct ctl_conn *c, const char *key)
{
	if (setup_remove(key) == -1) {
		reply_fail(c, "%s: %s", key, errno == EBUSY ?
		    "in use by an attempt" : errno == ENOENT ?
		    "no such cache entry" : strerror(errno));
		return;
	}
	log_info("setup entry %s removed by uid %u", key, (unsigned)c->uid);
	reply_obj(c, json_pack("{s:s}", "removed", key));
}

/* Evict to the bounds now; stale temporaries go too. */
static void
ctl_cache_gc(struct ctl_conn *c, struct imsg *imsg)
{
	json_t	*o;

	log_info("cache gc requested by uid %u", (unsigned)c->uid);
	pristine_evict();
	o = setup_gc();
	reply_obj(c, json_pack("{s:o}", "setup", o));
}

/* "repository/commit": one pristine checkout, refused while in use. */
static void
ctl_cache_rm(struct ctl_conn *c, struct imsg *imsg)
{
	char	 key[REPO_NAME_MAX + 64], *slash;

	if (imsg_get_strbuf(imsg, key, sizeof(key)) == -1) {
		reply_fail(c, "bad cache key: repository/commit or KEY");
		return;
	}
	/* A setup entry: its 64-hex key. */
	if (hex_valid(key, SHA256_HEX_LEN)) {
		ctl_cache_rm_setup(c, key);
		return;
	}
	if ((slash = strchr(key, '/')) == NULL) {
		reply_fail(c, "bad cache key: repository/commit or KEY");
		return;
	}
	*slash = '\0';
	if (pristine_remove(key, slash + 1) == -1) {
		reply_fail(c, "%s/%.40s: %s", key, slash + 1, errno == EBUSY ?
		    "in use by an attempt" : errno == ENOENT ?
		    "no such cache entry" : strerror(errno));
		return;
	}
	log_info("pristine %s/%s removed by uid %u", key, slash + 1,
	    (unsigned)c->uid);
	reply_obj(c, json_pack("{s:s++}", "removed", key, "/",
	    slash + 1));
}

static void
ctl_reconcile(struct ctl_conn *c, struct imsg *imsg)
{
	log_info("reconcile requested by uid %u", (unsigned)c->uid);
	reconcile_start(c);	/* answered when the inventory is in */
}
