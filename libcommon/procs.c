/*
 * The process table of the suite and the start-up every child shares.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"
#include "log.h"
#include "pledge.h"

/*
 * Each child's policy.  Users come from factoryd.conf(5) (users:); the
 * parent sets uid, gid and an empty group list before execve(2).
 */
const struct factory_proc factory_procs[PROC_MAX] = {
	[PROC_PARENT] = {
		PROC_PARENT, "parent", "factoryd",
		NULL,
		"root; owns the journal, the sockets and the spawning of "
		"sandboxes; needs mount, namespaces and setuid, so a seccomp "
		"denylist (parent_policy.c) instead of a pledge",
		{ { NULL, NULL } }
	},
	[PROC_WORKER] = {
		PROC_WORKER, "worker", "factory-worker",
		/*
		 * stdio: imsg.  rpath wpath cpath fattr: libgit2 checkouts
		 * and commits under the attempts directory.  flock: libgit2
		 * lock files.  recvfd: none yet, kept for attempt dir fds.
		 * No exec, no network, no keys.
		 */
		"stdio rpath wpath cpath fattr flock recvfd",
		"libgit2 work on repositories and attempt trees",
		{
			{ "$state/attempts", "rwc" },	/* trees, bundles */
			{ "$state/pristine", "rwc" },	/* cold checkouts */
			{ "$repos", "r" },		/* baselines, alternates */
			{ NULL, NULL }
		}
	},
	[PROC_VERIFIER] = {
		PROC_VERIFIER, "verifier", "factory-verifier",
		/*
		 * stdio: imsg.  rpath: the repositories and its key.
		 * wpath cpath: its scratch directory only (unveil).
		 * fattr: libgit2 sets modes in the scratch repositories it
		 * makes.  recvfd: the bundle, the log and an image's
		 * rootfs arrive as fds.  No exec, no network; replaced
		 * after every verdict.
		 */
		"stdio rpath wpath cpath fattr flock recvfd",
		"re-derives a bundle's facts and signs the verdict",
		{
			{ "$state/verify", "rwc" },	/* scratch repositories */
			{ "$repos", "r" },		/* baselines */
			/* Below the pristine fd: checked against the tree. */
			{ "$state/pristine", "r" },
			{ "$verifier_key", "r" },	/* signing key */
			/* Below the rootfs fd: the toolchain, hashed again. */
			{ "$state/images", "?r" },
			{ NULL, NULL }
		}
	},
	[PROC_RECONCILER] = {
		PROC_RECONCILER, "reconciler", "factory-reconciler",
		/*
		 * stdio: imsg.  rpath: a read-only view of every resource.
		 * Nothing else: it reports, the parent acts.
		 */
		"stdio rpath",
		"lists what exists: attempt dirs, cgroups, processes, "
		"mounts, branches",
		{
			{ "$state", "r" },
			{ "/proc", "r" },
			{ "/sys/fs/cgroup", "r" },
			{ "$repos", "r" },
			{ "$remotes", "r" },
			{ "$pulls", "r" },
			{ NULL, NULL }
		}
	},
	[PROC_PUBLISHER] = {
		PROC_PUBLISHER, "publisher", "factory-publisher",
		/*
		 * stdio: imsg.  rpath wpath cpath fattr flock: pushes into
		 * local remotes (libgit2 sets modes on the objects it
		 * writes) and writes pull records.  recvfd: the bundle.
		 * inet dns: the forge API (forge github).  No exec, never
		 * reads attempt trees (not unveiled).
		 */
		"stdio rpath wpath cpath fattr flock recvfd inet dns",
		"the only holder of forge credentials; pushes one branch, "
		"opens one pull request",
		{
			{ "$remotes", "rwc" },		/* forge local */
			{ "$pulls", "rwc" },		/* forge local */
			{ "$state/publish", "rwc" },	/* forge github caches */
			{ "$forge_keys", "r" },		/* GitHub App keys */
			{ "$forge_ca", "r" },		/* their CA files */
			{ "/etc/ssl", "r" },		/* CA bundles */
			{ "/etc/resolv.conf", "?r" },	/* dns */
			{ "/etc/hosts", "?r" },
			{ "/etc/nsswitch.conf", "?r" },
			{ "/etc/host.conf", "?r" },
			{ "/etc/gai.conf", "?r" },
			{ NULL, NULL }
		}
	},
	[PROC_EGRESS] = {
		PROC_EGRESS, "egress", "factory-egress",
		/*
		 * stdio: imsg.  recvfd: each sandbox's listening sockets,
		 * made by the parent in the sandbox's network namespace.
		 * inet: accept there, connect to the one destination the
		 * parent fixed for each.  dns: names of network.allow,
		 * resolved once per endpoint.  Copies bytes, parses none;
		 * no files but the resolver's.
		 */
		"stdio inet dns recvfd",
		"forwards each sandbox endpoint of network.allow to its one "
		"destination; copies bytes, parses none",
		{
			{ "/etc/resolv.conf", "?r" },	/* dns */
			{ "/etc/hosts", "?r" },
			{ "/etc/nsswitch.conf", "?r" },
			{ "/etc/host.conf", "?r" },
			{ "/etc/gai.conf", "?r" },
			{ NULL, NULL }
		}
	},
	[PROC_IMAGE] = {
		PROC_IMAGE, "image", "factory-image",
		/*
		 * stdio: imsg.  recvfd: the archive, opened by factoryctl
		 * with the operator's rights.  rpath wpath cpath fattr:
		 * its staging directory only (unveil), where it writes the
		 * tree with the modes the archive says.  No exec, no
		 * network, no chown: owners are the parent's to set.
		 * One import per process: replaced after each.
		 */
		"stdio rpath wpath cpath fattr recvfd",
		"parses an untrusted image archive into its staging "
		"directory; one import, then replaced",
		{
			{ "$state/images/staging", "rwc" },
			{ NULL, NULL }
		}
	},
	[PROC_GATEWAY] = {
		PROC_GATEWAY, "gateway", "factory-gateway",
		/*
		 * stdio: imsg.  recvfd: each attempt's listening socket,
		 * made by the parent in the attempt's network namespace.
		 * inet dns: HTTPS to the configured providers and
		 * upstreams.  rpath: the key and CA files of the config,
		 * opened again after each reload.  No exec, no writing.
		 */
		"stdio inet dns rpath recvfd",
		"holds model-provider and upstream keys; serves each "
		"attempt's token on its endpoint, meters its spend",
		{
			{ "$gw_keys", "r" },		/* provider keys */
			{ "$gw_ca", "r" },		/* their CA files */
			{ "/etc/resolv.conf", "?r" },	/* dns */
			{ "/etc/hosts", "?r" },
			{ "/etc/nsswitch.conf", "?r" },
			{ "/etc/host.conf", "?r" },
			{ "/etc/gai.conf", "?r" },
			{ NULL, NULL }
		}
	},
	[PROC_CONTROL] = {
		PROC_CONTROL, "control", "factoryctl",
		NULL,
		"the operator's client; holds nothing",
		{ { NULL, NULL } }
	},
	[PROC_FLEET] = {
		PROC_FLEET, "fleet", "factory-fleet",
		/*
		 * stdio: imsg and libpq's socket.  unix: the database's local
		 * socket.  inet dns: a database over TCP.  getpw: libpq looks
		 * up the user it runs as for the default role.  No rpath: no
		 * file but those below, read-only; no exec, no writing.
		 * Started only when factoryd.conf has a fleet: block.
		 */
		"stdio unix inet dns getpw",
		"the only process with libpq: claims, leases and outcomes in the "
		"fleet's database, each write fenced by the epochs",
		{
			{ "/etc/passwd", "?r" },	/* getpw */
			{ "/etc/group", "?r" },
			{ "/etc/nsswitch.conf", "?r" },
			{ "/etc/resolv.conf", "?r" },	/* dns */
			{ "/etc/hosts", "?r" },
			{ "/etc/host.conf", "?r" },
			{ "/etc/gai.conf", "?r" },
			{ "/etc/ssl", "?r" },		/* sslmode */
			{ NULL, NULL }
		}
	},
	[PROC_PREVIEW] = {
		PROC_PREVIEW, "preview", "factory-preview",
		/*
		 * stdio: imsg and the HTTP connections.  accept: on the
		 * listening socket the parent bound, and no other network
		 * call: no socket(2), no connect(2), so neither a new
		 * connection nor a given one sent elsewhere.  recvfd: the
		 * parent's connections to each attempt's port, made inside
		 * its network namespace.  No file at all.  Started only
		 * when factoryd.conf has a preview: block.
		 */
		"stdio accept recvfd",
		"serves each attempt's preview port on its own host name, to "
		"holders of a token the parent minted",
		{
			{ NULL, NULL }
		}
	},
};

/* The -V variables a child was started with, for proc_getvar(). */
static char	**proc_vars;
static size_t	  proc_nvars;

const char *
proc_getvar(const char *name)
{
	size_t	 i, len = strlen(name);

	for (i = 0; i < proc_nvars; i++)
		if (strncmp(proc_vars[i], name, len) == 0 &&
		    proc_vars[i][len] == '=')
			return (proc_vars[i] + len + 1);
	return (NULL);
}

const struct factory_proc *
proc_byid(enum factory_procid id)
{
	if (id < 0 || id >= PROC_MAX)
		return (NULL);
	return (&factory_procs[id]);
}

const struct factory_proc *
proc_byname(const char *name)
{
	int	 i;

	for (i = 0; i < PROC_MAX; i++)
		if (strcmp(factory_procs[i].name, name) == 0)
			return (&factory_procs[i]);
	return (NULL);
}

/*
 * Expand the table's unveil rules with the variables given on the
 * command line and apply them, then pledge.  Any failure is fatal.
 */
void
proc_apply_policy(const struct factory_proc *p, char **vars, size_t nvars)
{
	const struct proc_unveil *u;
	size_t			 i, n;
	char			 path[PATH_MAX];
	const char		*rest;
	int			 optional;

	for (u = p->unveils; u->path != NULL; u++) {
		/* "?": a path that may not exist (yet). */
		optional = u->perm[0] == '?';
		if (u->path[0] != '$') {
			if (unveil(u->path, u->perm + optional) == -1 &&
			    !(optional && errno == ENOENT))
				fatal("unveil %s", u->path);
			continue;
		}
		n = strcspn(u->path + 1, "/");
		rest = u->path + 1 + n;
		for (i = 0; i < nvars; i++) {
			if (strncmp(vars[i], u->path + 1, n) != 0 ||
			    vars[i][n] != '=')
				continue;
			if ((size_t)snprintf(path, sizeof(path), "%s%s",
			    vars[i] + n + 1, rest) >= sizeof(path))
				fatalx("unveil: path too long");
			if (unveil(path, u->perm + optional) == -1 &&
			    !(optional && errno == ENOENT))
				fatal("unveil %s", path);
		}
	}
	if (unveil(NULL, NULL) == -1)
		fatal("unveil lock");
	if (pledge(p->promises, NULL) == -1)
		fatal("pledge");
}

/*
 * The parent's socket must be on fd 3, a unix stream socket whose peer
 * is our parent process running as root.  Anything else means we were
 * not started by factoryd.
 */
static void
proc_check_parent_fd(const char *name)
{
	struct stat	 sb;
	struct ucred	 cred;
	socklen_t	 len = sizeof(cred);
	int		 type;
	socklen_t	 tlen = sizeof(type);

	if (fstat(PROC_PARENT_FD, &sb) == -1 || !S_ISSOCK(sb.st_mode))
		fatalx("%s: no socket on fd %d: not started by factoryd",
		    name, PROC_PARENT_FD);
	if (getsockopt(PROC_PARENT_FD, SOL_SOCKET, SO_TYPE, &type,
	    &tlen) == -1 || type != SOCK_STREAM)
		fatalx("%s: fd %d is not a stream socket", name,
		    PROC_PARENT_FD);
	if (getsockopt(PROC_PARENT_FD, SOL_SOCKET, SO_PEERCRED, &cred,
	    &len) == -1)
		fatal("%s: SO_PEERCRED", name);
	if (cred.pid != getppid() || cred.uid != 0)
		fatalx("%s: fd %d peer is pid %d uid %u, not the root parent",
		    name, PROC_PARENT_FD, (int)cred.pid, (unsigned)cred.uid);
}

int
proc_child_init(enum factory_procid id, int argc, char **argv)
{
	const struct factory_proc *p = proc_byid(id);
	char		**vars = NULL;
	size_t		 nvars = 0;
	int		 ch, debug = 0, verbose = 0;

	log_init(1, LOG_DAEMON);	/* until -d is known: stderr */
	while ((ch = getopt(argc, argv, "dvV:")) != -1) {
		switch (ch) {
		case 'd':
			debug = 1;
			break;
		case 'v':
			verbose++;
			break;
		case 'V':
			if (strchr(optarg, '=') == NULL)
				fatalx("%s: -V %s: expected name=value",
				    p->name, optarg);
			vars = reallocarray(vars, nvars + 1, sizeof(*vars));
			if (vars == NULL)
				fatal(NULL);
			vars[nvars++] = optarg;
			break;
		default:
			fatalx("usage: %s [-dv] [-V name=value]", p->binary);
		}
	}
	if (optind != argc)
		fatalx("usage: %s [-dv] [-V name=value]", p->binary);

	/* Still on stderr: someone starting us by hand sees why not. */
	proc_check_parent_fd(p->name);
	log_init(debug, LOG_DAEMON);
	log_setverbose(verbose);
	log_procinit(p->name);
	closefrom(PROC_PARENT_FD + 1);
	setproctitle("%s", p->name);

	proc_apply_policy(p, vars, nvars);
	proc_vars = vars;
	proc_nvars = nvars;
	return (PROC_PARENT_FD);
}
