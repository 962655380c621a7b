/*
 * factoryctl: the operator's client of factoryd's control sockets.
 */
#ifndef FACTORYCTL_H
#define FACTORYCTL_H

#include <jansson.h>

#include "factory.h"

#define CTL_EXIT_OK		0
#define CTL_EXIT_REFUSED	1
#define CTL_EXIT_USAGE		2
#define CTL_EXIT_FAILED		3	/* verify -a: a FAILED summary */

struct ctl_cmd {
	const char	*name;
	int		 readonly;	/* works on the .ro socket */
	int		(*fn)(int, char **);
	const char	*usage;
};

extern int			 ctl_json;	/* -j */
extern const char		*ctl_socket;	/* -s */
extern const struct ctl_cmd	*ctl_current;	/* the command running */

struct imsg;

/* ctl.c */
__attribute__((__noreturn__)) void ctl_usage(const char *);
int	 ctl_connect(int);
int	 ctl_request(int, uint32_t, const void *, size_t, json_t **,
	    char *, size_t);
int	 ctl_request_fd(int, uint32_t, int, const void *, size_t,
	    void (*)(struct imsg *, void *), void *, json_t **, char *, size_t);
int	 ctl_upload(int, uint32_t, const void *, size_t, int, size_t, uint32_t,
	    uint32_t, json_t **, char *, size_t);
int	 ctl_simple(int, uint32_t, const void *, size_t, json_t **);
void	 ctl_print_json(json_t *);
const char *ctl_visn(const char *, size_t, int);
const char *ctl_vis(const char *);
const char *ctl_jvis(json_t *);
const char *ctl_duration(long long, char *, size_t);

/* status.c */
int	 cmd_status(int, char **);
int	 cmd_policy(int, char **);
int	 cmd_reload(int, char **);
int	 cmd_log(int, char **);

/* fleet.c */
int	 cmd_hosts(int, char **);
int	 cmd_queue(int, char **);
int	 cmd_cordon(int, char **);
int	 cmd_pause(int, char **);
int	 cmd_tenants(int, char **);
int	 cmd_usage(int, char **);

/* attempt.c */
int	 cmd_submit(int, char **);
int	 cmd_list(int, char **);
int	 cmd_show(int, char **);
int	 cmd_logs(int, char **);
int	 cmd_cancel(int, char **);
int	 cmd_approve(int, char **);
int	 cmd_receipts(int, char **);
int	 cmd_preview(int, char **);
int	 cmd_attach(int, char **);
int	 cmd_verify(int, char **);
int	 cmd_orphans(int, char **);
int	 cmd_reap(int, char **);
int	 cmd_reconcile(int, char **);

/* cohort.c */
#define COHORT_SUBMIT_MAX	64	/* the daemon's max-cohort decides */
int	 cohort_submitted(json_t *, int);
void	 cohort_print_list(json_t *);
int	 cmd_cohort(int, char **);
int	 cmd_select(int, char **);
int	 cmd_diff(int, char **);

/* attest.c */
int	 cmd_attest(int, char **);
int	 attest_verify_file(const char *, char *[], size_t);

/* cache.c */
int	 cmd_cache(int, char **);

/* image.c */
int	 cmd_image(int, char **);

/* top.c */
int	 cmd_top(int, char **);
int	 cmd_metrics(int, char **);

/* shell.c */
int	 cmd_shell(int, char **);

#endif /* FACTORYCTL_H */
