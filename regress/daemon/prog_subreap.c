/*
 * prog_subreap OUT CMD [ARG ...]: CMD (factoryd -d) as the child of a
 * child subreaper, which stands for init (or for systemd, which kills
 * what a unit's main process leaves): whatever CMD leaves behind when
 * it exits, running or a zombie no one reaped, becomes our child, so
 * it is found by its parent pid, never by name.  Writes "pid N" (CMD's)
 * to OUT once CMD runs; once CMD is reaped, "exit N" (its wait status)
 * and one line "left PID STATE" per process it left, then kills those
 * by pid and reaps them.  Exits 0 if CMD exited 0 and left nothing.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The state and parent of pid, from /proc/PID/stat: 0, or -1. */
static int
proc_stat(pid_t pid, char *state, pid_t *ppid)
{
	char	 path[64], buf[1024], *p;
	FILE	*f;
	size_t	 n;
	long	 pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return (-1);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The name may hold anything: the fields follow its last ')'. */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 1, " %c %ld", state, &pp) != 2)
		return (-1);
	*ppid = (pid_t)pp;
	return (0);
}

/* Our children now: what CMD left.  Listed, killed, reaped. */
static int
leftovers(FILE *out)
{
	DIR		*d;
	struct dirent	*e;
	pid_t		 pid, ppid, left[4096];
	char		 state, *end;
	int		 n = 0, i;

	if ((d = opendir("/proc")) == NULL)
		return (-1);
	while ((e = readdir(d)) != NULL && n < 4096) {
		pid = (pid_t)strtol(e->d_name, &end, 10);
		if (*end != '\0' || pid <= 0)
			continue;
		if (proc_stat(pid, &state, &ppid) == 0 && ppid == getpid()) {
			fprintf(out, "left %d %c\n", (int)pid, state);
			left[n++] = pid;
		}
	}
	closedir(d);
	fflush(out);
	for (i = 0; i < n; i++) {
		kill(left[i], SIGKILL);
		while (waitpid(left[i], NULL, 0) == -1 && errno == EINTR)
			;
	}
	return (n);
}

int
main(int argc, char *argv[])
{
	FILE	*out;
	pid_t	 pid;
	int	 st, n;

	if (argc < 3) {
		fprintf(stderr, "usage: prog_subreap out cmd [arg ...]\n");
		return (2);
	}
	if ((out = fopen(argv[1], "we")) == NULL ||
	    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1) {
		perror(argv[1]);
		return (2);
	}
	if ((pid = fork()) == -1) {
		perror("fork");
		return (2);
	}
	if (pid == 0) {
		execv(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	fprintf(out, "pid %d\n", (int)pid);
	fflush(out);
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR) {
			perror("waitpid");
			return (2);
		}
	fprintf(out, "exit %d\n", st);
	/*
	 * The kernel hands CMD's children to us as CMD exits, before it
	 * reports the exit: what is left is already ours here.
	 */
	n = leftovers(out);
	fclose(out);
	return (st == 0 && n == 0 ? 0 : 1);
}
