/* regress/sandbox/sbxwait.c: the sandbox's teardown, waited for. */
#ifndef SBXWAIT_H
#define SBXWAIT_H

struct sandbox;

int	sbx_destroy_wait(struct sandbox *, char *, size_t);

#endif
