/*
 * The attempts' core (attempt.c), for the files above it that drive
 * it: dispatch.c (the children's messages) and submit.c (what enters
 * the table).  Nothing below them includes this.
 */
#ifndef ATTEMPT_H
#define ATTEMPT_H

/* attempt_cleanup_sandboxes(): how */
#define CLEANUP_TRY	0
#define CLEANUP_LAST	1
#define CLEANUP_LATER	2

int	 attempt_transition(struct attempt *a, const char *kind,
	    json_t *facts, json_t *extra);
void	 attempt_teardown(struct attempt *a);
void	 attempt_verify(struct attempt *a);
void	 attempt_start_agent(struct attempt *a);
void	 attempt_fail(struct attempt *a, const char *kind,
	    const char *fmt, ...) __attribute__((__format__ (printf, 3, 4)));
int	 child_index(struct child *c);
int	 attempt_commit(struct attempt *a, const char *line, json_t *extra);
void	 attempt_verdict_next(struct attempt *a);
int	 attempt_mount_checkout(struct attempt *a, uid_t uid, char *err,
	    size_t errlen);
int	 attempt_env_check(struct attempt *a, char *err, size_t errlen);
int	 attempt_pchecked(struct child *c, struct attempt *a,
	    const struct msg_pchecked *m, char *why, size_t whylen);
void	 attempt_after_published(struct attempt *a);
int	 attempt_held_by_worker(struct attempt *a);
void	 attempt_new_lease(struct attempt *a, const char *why, int planned);
void	 attempt_send_provision(struct attempt *a);
void	 attempt_collect(struct attempt *a);
void	 attempt_publish(struct attempt *a);
int	 attempt_cleanup_sandboxes(struct attempt *a, int how);
json_t	*env_facts(const char *image, const char *toolchain, const char *ref);

/* submit.c, for dispatch.c */
void	 attempt_resolved(const struct msg_resolved *o);
void	 pending_lost(struct child *w);
void	 pending_resend(struct child *c);

#endif /* ATTEMPT_H */
