/*
 * factoryctl shell: an operator enters a running attempt's sandbox to
 * debug it.  The command runs as a second agent would (sandbox_enter):
 * the attempt's namespaces, cgroups, uid and gid, no capabilities,
 * no_new_privs, the same Landlock, seccomp and rlimits, cwd the tree.
 * Its stdin, stdout and stderr are factoryctl's own, passed over the
 * read-write control socket; nothing else of the operator's goes in.
 *
 * The exchange, on one connection:
 *	ctl -> parent	SHELL (attempt id, argv)	checked, answered OK
 *	ctl -> parent	SHELL_FD x3 (stdin, stdout, stderr)
 *	parent		starts the command, closes its copies of the fds
 *	parent -> ctl	{"id", "status"} when the command ends
 * The connection closing first kills the command.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esc.h"
#include "factoryd.h"
#include "log.h"

#define SHELL_MAX	8	/* running at once, all attempts */
#define SHELL_MAXARGS	64
#define SHELL_NOFILE	1024

struct shell {
	TAILQ_ENTRY(shell)	 entry;
	uint32_t		 connid;	/* 0 once the client left */
	uid_t			 uid;		/* the operator */
	char			 id[ATTEMPT_ID_MAX];
	char			*args;		/* argv strings, NUL-separated */
	char			*argv[SHELL_MAXARGS + 1];
	int			 fds[3];
	int			 nfds;
	pid_t			 pid;		/* the waiter, once started */
};

static TAILQ_HEAD(, shell)	 shells = TAILQ_HEAD_INITIALIZER(shells);
static int			 nshells;

static void
shell_free(struct shell *sh)
{
	int	 i;

	for (i = 0; i < sh->nfds; i++)
		close(sh->fds[i]);
	TAILQ_REMOVE(&shells, sh, entry);
	nshells--;
	free(sh->args);
	free(sh);
}

/* Only the agent of a running attempt, never its validation run. */
static struct attempt *
shell_attempt(struct ctl_conn *c, const char *id)
{
	struct attempt	*a;

	if ((a = attempt_find(id)) == NULL) {
		control_fail(c, "%s: no such attempt", id);
		return (NULL);
	}
	if (a->state != AS_RUNNING || a->run == NULL || !a->run->active ||
	    a->run->validation) {
		control_fail(c, "%s is %s: only a running attempt's sandbox "
		    "can be entered", a->id, attempt_state_name(
		    a->outcome != AS_MAX ? a->outcome : a->state));
		return (NULL);
	}
	return (a);
}

/* "id\0arg0\0arg1\0...": every string NUL-terminated, argv optional. */
static int
shell_parse(struct shell *sh, struct imsg *imsg)
{
	size_t	 len = imsg_get_len(imsg), off, n;
	int	 argc = 0;

	if (len < 2 || len > FACTORY_MAXIMSG ||
	    (sh->args = malloc(len)) == NULL ||
	    imsg_get_data(imsg, sh->args, len) == -1 ||
	    sh->args[len - 1] != '\0')
		return (-1);
	if ((n = strlen(sh->args)) == 0 || n >= sizeof(sh->id))
		return (-1);
	strlcpy(sh->id, sh->args, sizeof(sh->id));
	for (off = n + 1; off < len; off += strlen(sh->args + off) + 1) {
		if (argc == SHELL_MAXARGS)
			return (-1);
		sh->argv[argc++] = sh->args + off;
	}
	if (argc == 0)
		sh->argv[argc++] = "/bin/sh";
	sh->argv[argc] = NULL;
	return (sh->argv[0][0] == '/' ? 0 : -1);
}

void
shell_request(struct ctl_conn *c, struct imsg *imsg)
{
	struct shell	*sh;

	if (c->shell != NULL) {
		control_fail(c, "a shell is already open on this connection");
		return;
	}
	if (nshells >= SHELL_MAX) {
		control_fail(c, "too many shells open (%d)", SHELL_MAX);
		return;
	}
	if ((sh = calloc(1, sizeof(*sh))) == NULL)
		fatal(NULL);
	TAILQ_INSERT_TAIL(&shells, sh, entry);
	nshells++;
	if (shell_parse(sh, imsg) == -1) {
		control_fail(c, "bad shell request: an attempt id, then an "
		    "absolute argv");
		shell_free(sh);
		return;
	}
	if (shell_attempt(c, sh->id) == NULL) {
		shell_free(sh);
		return;
	}
	sh->connid = c->id;
	sh->uid = c->uid;
	c->shell = sh;
	imsgev_compose(&c->iev, IMSG_CTL_OK, 0, 0, -1, NULL, 0);
}

static void
shell_start(struct ctl_conn *c, struct shell *sh)
{
	struct sandbox_spec	 spec;
	struct attempt		*a;
	char			 err[512], ps1[ATTEMPT_ID_MAX + 16];
	json_t			*argv0;
	char			*envp[5];
	int			 i;

	if ((a = shell_attempt(c, sh->id)) == NULL)
		goto fail;
	snprintf(ps1, sizeof(ps1), "PS1=%s$ ", a->id);
	envp[0] = "HOME=/tmp";
	envp[1] = "PATH=/usr/local/bin:/usr/bin:/bin";
	envp[2] = "TERM=dumb";
	envp[3] = ps1;
	envp[4] = NULL;
	memset(&spec, 0, sizeof(spec));
	spec.id = a->id;
	spec.argv = sh->argv;
	spec.env = envp;
	spec.exec_allow = a->m->exec;
	spec.cpu_ms = a->m->limits.cpu_ms;
	spec.fsize = a->m->limits.tree;
	spec.nofile = SHELL_NOFILE;
	sh->pid = sandbox_enter(&a->run->sb, &spec, sh->fds, err, sizeof(err));
	/* The command has its copies; the parent keeps none. */
	for (i = 0; i < sh->nfds; i++)
		close(sh->fds[i]);
	sh->nfds = 0;
	if (sh->pid == -1) {
		log_warnx("%s: shell for uid %u refused: %s", a->id,
		    (unsigned)sh->uid, err);
		control_fail(c, "%s: shell: %s", a->id, err);
		goto fail;
	}
	/* Into the evidence: who entered the sandbox, with what, escaped. */
	argv0 = esc_json_str(sh->argv[0]);
	log_info("%s: shell entered by uid %u, pid %d: %s", a->id,
	    (unsigned)sh->uid, (int)sh->pid, json_string_value(argv0));
	attempt_note(a, "shell", json_pack("{s:s, s:i, s:o, s:i}", "event",
	    "enter", "uid", (int)sh->uid, "argv0", argv0, "pid",
	    (int)sh->pid));
	return;
 fail:
	c->shell = NULL;
	shell_free(sh);
}

void
shell_fd(struct ctl_conn *c, struct imsg *imsg)
{
	struct shell	*sh = c->shell;
	int		 fd = imsg_get_fd(imsg);

	if (sh == NULL || sh->pid != 0 || sh->nfds == 3 || fd == -1 ||
	    imsg_get_len(imsg) != 0) {
		if (fd != -1)
			close(fd);
		control_fail(c, "unexpected shell descriptor");
		return;
	}
	sh->fds[sh->nfds++] = fd;
	if (sh->nfds == 3)
		shell_start(c, sh);
}

/* The client left: its command goes too (the waiter takes it along). */
void
shell_conn_closed(struct ctl_conn *c)
{
	struct shell	*sh = c->shell;

	if (sh == NULL)
		return;
	c->shell = NULL;
	sh->connid = 0;
	if (sh->pid > 0) {
		/* Still our unreaped child: the pid cannot be reused. */
		kill(sh->pid, SIGKILL);
		return;
	}
	shell_free(sh);
}

int
shell_reap(pid_t pid, int status)
{
	struct shell	*sh;
	struct ctl_conn	*c;
	struct attempt	*a;
	int		 code;

	TAILQ_FOREACH(sh, &shells, entry)
		if (sh->pid == pid)
			break;
	if (sh == NULL)
		return (0);
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	log_info("%s: shell of uid %u ended, status %d", sh->id,
	    (unsigned)sh->uid, code);
	if ((a = attempt_find(sh->id)) != NULL)
		attempt_note(a, "shell", json_pack("{s:s, s:i, s:i}", "event",
		    "exit", "uid", (int)sh->uid, "status", code));
	if (sh->connid != 0 && (c = control_byid(sh->connid)) != NULL) {
		c->shell = NULL;
		control_send_obj(c, json_pack("{s:s, s:i}", "id", sh->id,
		    "status", code));
	}
	shell_free(sh);
	return (1);
}
