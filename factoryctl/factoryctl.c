/*
 * factoryctl: talks to factoryd over its control socket.  This file is
 * the top: its options, the command table and the dispatch.  Each
 * command lives in a file of its own, and what they share (requests,
 * printing) in ctl.c below them, which calls none of them back.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factoryctl.h"


static const struct ctl_cmd ctl_cmds[] = {
	{ "approve",	0, cmd_approve,	"approve [-k duration] id" },
	{ "attach",	0, cmd_attach,	"attach [-n name] id file" },
	{ "attest",	1, cmd_attest,	"attest id" },
	{ "cache",	1, cmd_cache,	"cache list | rm repository/commit | rm KEY | gc" },
	{ "cancel",	0, cmd_cancel,	"cancel id | cohort" },
	{ "cohort",	1, cmd_cohort,	"cohort id" },
	{ "cordon",	0, cmd_cordon,	"cordon host" },
	{ "diff",	0, cmd_diff,	"diff id" },
	{ "drain",	0, cmd_cordon,	"drain [-t deadline] host" },
	{ "hosts",	0, cmd_hosts,	"hosts" },
	{ "image",	1, cmd_image,	"image import [-v] name path | list | "
	    "rm name | verify name" },
	{ "list",	1, cmd_list,	"list" },
	{ "log",	0, cmd_log,	"log verbose | brief" },
	{ "logs",	1, cmd_logs,	"logs [-fv] [-s | --service name] id" },
	{ "metrics",	1, cmd_metrics,	"metrics" },
	{ "orphans",	1, cmd_orphans,	"orphans" },
	{ "pause",	0, cmd_pause,	"pause --tenant name | --fleet [-m note]" },
	{ "policy",	1, cmd_policy,	"policy" },
	{ "preview",	0, cmd_preview,	"preview [-t ttl] id" },
	{ "queue",	0, cmd_queue,	"queue" },
	{ "reap",	0, cmd_reap,	"reap id" },
	{ "receipts",	1, cmd_receipts, "receipts id" },
	{ "reconcile",	0, cmd_reconcile, "reconcile" },
	{ "reload",	0, cmd_reload,	"reload" },
	{ "resume",	0, cmd_pause,	"resume --tenant name | --fleet" },
	{ "select",	0, cmd_select,	"select member" },
	{ "shell",	0, cmd_shell,	"shell id [-- command [argument ...]]" },
	{ "show",	1, cmd_show,	"show id" },
	{ "status",	1, cmd_status,	"status" },
	{ "submit",	0, cmd_submit,	"submit [-w] [-n size] [--tenant name] "
	    "[--priority urgent|normal|batch] [--idempotency-key key] "
	    "manifest" },
	{ "tenants",	0, cmd_tenants,	"tenants" },
	{ "top",	1, cmd_top,	"top [-1] [-d seconds] [-n count]" },
	{ "uncordon",	0, cmd_cordon,	"uncordon host" },
	{ "usage",	0, cmd_usage,	"usage [--since duration]" },
	{ "verify",	1, cmd_verify,	"verify [-r fingerprint] [-V fingerprint] file | "
	    "verify -a [-K [builder=|verifier=]fingerprint[,...]] file" },
};
#define NCMDS	(sizeof(ctl_cmds) / sizeof(ctl_cmds[0]))

/* The whole list: factoryctl's own options wrong, or no command. */
static __attribute__((__noreturn__)) void
usage(void)
{
	size_t	 i;

	fprintf(stderr, "usage: factoryctl [-j] [-s socket] command "
	    "[argument ...]\ncommands:\n");
	for (i = 0; i < NCMDS; i++)
		fprintf(stderr, "\t%s\n", ctl_cmds[i].usage);
	exit(CTL_EXIT_USAGE);
}

static const struct ctl_cmd *
ctl_lookup(const char *name)
{
	const struct ctl_cmd	*match = NULL;
	size_t			 i, len = strlen(name);

	for (i = 0; i < NCMDS; i++) {
		if (strcmp(ctl_cmds[i].name, name) == 0)
			return (&ctl_cmds[i]);
		if (strncmp(ctl_cmds[i].name, name, len) == 0) {
			if (match != NULL) {
				fprintf(stderr, "factoryctl: ambiguous command "
				    "\"%s\"\n", ctl_vis(name));
				exit(CTL_EXIT_USAGE);
			}
			match = &ctl_cmds[i];
		}
	}
	if (match == NULL) {
		fprintf(stderr, "factoryctl: unknown command \"%s\"\n",
		    ctl_vis(name));
		usage();
	}
	return (match);
}

int
main(int argc, char *argv[])
{
	const struct ctl_cmd	*cmd;
	int			 ch;

	while ((ch = getopt(argc, argv, "+js:")) != -1) {
		switch (ch) {
		case 'j':
			ctl_json = 1;
			break;
		case 's':
			ctl_socket = optarg;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage();
	cmd = ctl_lookup(argv[0]);
	ctl_current = cmd;
	/* A prefix names its command: a command sees its whole name. */
	argv[0] = (char *)cmd->name;
	optind = 0;	/* glibc: start the command's own options afresh */
	return (cmd->fn(argc, argv));
}
