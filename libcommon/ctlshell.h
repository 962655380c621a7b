/*
 * factoryctl shell: what factoryctl and factoryd exchange besides the
 * control messages.  factoryctl sends IMSG_CTL_SHELL_FD with a struct
 * ctl_shell_tty and no descriptor; once the command runs, factoryd
 * answers IMSG_CTL_SHELL_FD with no payload and one descriptor: the
 * master of the pty it allocated, whose slave alone entered the
 * sandbox.  From then on factoryctl reads and writes that master
 * itself and sets its window size (TIOCSWINSZ); factoryd neither
 * holds nor reads it.  The command's exit status follows as a JSON
 * answer, {"id", "status"}, once every process of the session is gone.
 */
#ifndef FACTORY_CTLSHELL_H
#define FACTORY_CTLSHELL_H

#include <stdint.h>

#define CTL_SHELL_CHUNK		4096	/* bytes read or written at once */
#define CTL_SHELL_DRAIN		(64 * 1024)	/* read after the status, at most */
#define CTL_SHELL_TERMMAX	64	/* TERM, with its NUL */
#define CTL_SHELL_DIMMAX	4096	/* rows and columns, at most */

struct ctl_shell_tty {
	uint16_t	 rows;
	uint16_t	 cols;
	uint8_t		 interactive;	/* the operator's stdin is a terminal */
	char		 term[CTL_SHELL_TERMMAX];	/* [A-Za-z0-9._+-]+ */
};

#endif /* FACTORY_CTLSHELL_H */
