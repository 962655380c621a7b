/*
 * The attempts' core (attempt.c), for the files above it that drive
 * it: dispatch.c (the children's messages) and submit.c (what enters
 * the table).  Nothing below them includes this.
 */
#ifndef ATTEMPT_H
#define ATTEMPT_H

int	 attempt_transition(struct attempt *, const char *, json_t *,
	    json_t *);
void	 attempt_teardown(struct attempt *);
void	 attempt_verify(struct attempt *);
void	 attempt_start_agent(struct attempt *);
void	 attempt_fail(struct attempt *, const char *, const char *, ...)
	    __attribute__((__format__ (printf, 3, 4)));
int	 attempt_commit(struct attempt *, const char *, json_t *);
void	 attempt_verdict_next(struct attempt *);
int	 attempt_pchecked(struct child *, struct attempt *,
	    const struct msg_pchecked *, char *, size_t);
void	 attempt_after_published(struct attempt *);
void	 attempt_new_lease(struct attempt *, const char *, int);
void	 attempt_send_provision(struct attempt *);
void	 attempt_collect(struct attempt *);
void	 attempt_publish(struct attempt *);
void	 attempt_publish_request(struct attempt *, const struct conf_repo *,
	    struct msg_publish *);
void	 attempt_publish_request_free(struct msg_publish *);
void	 publish_forge(const struct conf_repo *, struct msg_publish *);

/* submit.c, for dispatch.c */
void	 attempt_resolved(const struct msg_resolved *);
void	 pending_lost(struct child *);
void	 pending_resend(struct child *);

#endif /* ATTEMPT_H */
