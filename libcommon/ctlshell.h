/*
 * factoryctl shell: what factoryctl and factoryd exchange besides the
 * control messages.  IMSG_CTL_SHELL_FD carries a struct ctl_shell_tty
 * and one end of an AF_UNIX SOCK_SEQPACKET socketpair, the relay: the
 * parent copies between it and the master of a pty it allocated; only
 * the pty's slave enters the sandbox.  Each relay packet is one tag
 * byte and its payload.
 */
#ifndef FACTORY_CTLSHELL_H
#define FACTORY_CTLSHELL_H

#include <stdint.h>

#define CTL_SHELL_CHUNK		4096	/* payload bytes of a packet, at most */
#define CTL_SHELL_TERMMAX	64	/* TERM, with its NUL */

/* factoryctl -> factoryd */
#define CTL_SHELL_IN		'i'	/* keystrokes, 1..CHUNK bytes */
#define CTL_SHELL_WINSZ		'w'	/* uint16_t rows, cols */
#define CTL_SHELL_EOF		'e'	/* no terminal: the input ended */
/* factoryd -> factoryctl */
#define CTL_SHELL_OUT		'o'	/* what the session wrote, 1..CHUNK */

struct ctl_shell_tty {
	uint16_t	 rows;
	uint16_t	 cols;
	uint8_t		 interactive;	/* the operator's stdin is a terminal */
	char		 term[CTL_SHELL_TERMMAX];	/* [A-Za-z0-9._+-]+ */
};

#endif /* FACTORY_CTLSHELL_H */
