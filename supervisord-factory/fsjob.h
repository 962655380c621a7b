/*
 * Root's side of factory-fswalk (fsjob.c): one job, one exec'd
 * process, one bounded answer, waited for with an event and a timer.
 */
#ifndef FSJOB_H
#define FSJOB_H

#include <event.h>

#include "fswalkmsg.h"

#define FSJOBS_MAX	32	/* helpers at once */

struct fsjob {
	const char		*what;		/* in the log: "image walk" */
	pid_t			 pid;
	int			 fd;		/* the answer's pipe */
	struct event		 ev;
	char			 ans[FSWALK_ANSWER_MAX];
	size_t			 got;
	int			 bad;		/* more than an answer */
	int			 eof;
	int			 reaped;
	int			 status;
	struct event		 timer;		/* the deadline */
	int			 late;		/* killed at it */
	long long		 secs;		/* it, in seconds */
	void			(*done)(struct fsjob *);
	void			*arg;
};

/* fsjob.c */
void	 fsjob_set_binary(int);
/*
 * Exec factory-fswalk with job and the nfds descriptors of fds (-1:
 * none in that place); done() runs once it ended and was reaped, or it
 * is killed after secs (0: no deadline).  0, or -1 and errno with
 * nothing started.
 */
int	 fsjob_start(struct fsjob *, struct ibuf *, const int *, int,
	    long long);
int	 fsjob_busy(void);
/* secs, or in a test build the whole seconds the variable named says. */
long long fsjob_deadline(const char *, long long);
void	 fsjob_cancel(struct fsjob *);
void	 fsjob_kill(struct fsjob *);
/* SIGCHLD for a pid: 1 if it was a job's. */
int	 fsjob_reap(pid_t, int);
/*
 * The answer to a job of kind, checked (fswalk_answer_parse) and from
 * a process that exited 0 before its deadline; else -1 and err naming
 * the process and what it did.
 */
int	 fsjob_answer(struct fsjob *, uint32_t, struct fswalk_answer *,
	    char *, size_t);

#endif /* FSJOB_H */
