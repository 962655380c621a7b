/*
 * The launcher's own files share this: the side that runs as pid 1 and
 * the agent (child.c), the launcher (launcher.c) and its enter mode,
 * the waiter of an operator's shell (enter.c).  What the parent shares
 * with them is in libcommon/plan.h; nothing here is the parent's.
 */
#ifndef FACTORY_SBX_H
#define FACTORY_SBX_H

#include <sys/types.h>
#include <linux/filter.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"

#define SBX_TMPSIZE	"size=64m,nr_inodes=16384"
#define SBX_HOSTS	"/run/factory-hosts"	/* then bound on /etc/hosts */
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1U << 2)
#endif

/* child.c */
struct landlock;
extern const char *const sbx_exec_default[];
extern const char	*sbx_exec_dirs[];
extern struct sock_fprog sbx_prog;	/* the agent's filter, compiled */
void		sbx_exec_resolve(void);
int		sbx_mkdirs(const char *, const char *);
struct landlock	*sbx_confine_prepare(const struct sandbox_spec *,
		    const char *, const uint16_t *, int, int);
void		sbx_confine_ahead(int);
void		sbx_confine(const struct sandbox_spec *, const char *,
		    struct landlock *, int);
__dead void	sbx_pid1(struct plan *);
__dead void	sbx_pid1_forked(struct plan *, const struct sock_fprog *);
void		sbx_view_prepare(int);
void		sbx_take_plan(struct plan *, int *, int *);

/* enter.c */
__dead void	sbx_enter(struct plan_enter *);

/* probe.c: "factory-sandbox probe MASK [STATEDIR TAG]" (probemsg.h). */
__dead void	sbx_probe_main(const char *, const char *, const char *);

#endif /* FACTORY_SBX_H */
