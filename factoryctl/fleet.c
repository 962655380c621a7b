/*
 * factoryctl hosts and queue: the fleet's hosts, and its waiting
 * attempts with why each waits; cordon, uncordon, drain, pause and
 * resume: an operator's word on them (factory-fleet(8)).
 */
#include <sys/types.h>

#include <err.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factoryctl.h"

#define FLEET_TEXT_SHOW	320	/* a state and an escaped note */

static json_int_t
fleet_int(json_t *o, const char *k)
{
	return (json_integer_value(json_object_get(o, k)));
}

static const char *
fleet_str(json_t *o, const char *k)
{
	const char	*s = json_string_value(json_object_get(o, k));

	return (s != NULL ? s : "-");
}

static int
fleet_list(int argc, const char *cmd, uint32_t type, json_t **o)
{
	if (argc != 1)
		ctl_usage(cmd);
	if (ctl_simple(0, type, NULL, 0, o) != 0)
		return (-1);
	if (ctl_json) {
		ctl_print_json(*o);
		json_decref(*o);
		*o = NULL;
	}
	return (0);
}

int
cmd_hosts(int argc, char **argv)
{
	json_t	*o, *h;
	size_t	 i;

	if (fleet_list(argc, "hosts", IMSG_CTL_HOSTS, &o) == -1)
		return (CTL_EXIT_REFUSED);
	if (o == NULL)
		return (CTL_EXIT_OK);
	printf("%-20s %-6s %-9s %-5s %-7s %s\n", "HOST", "EPOCH", "STATE",
	    "SLOTS", "RUNNING", "HEARTBEAT");
	json_array_foreach(json_object_get(o, "hosts"), i, h)
		printf("%-20s %-6lld %-9s %-5lld %-7lld %.1fs ago%s\n",
		    ctl_vis(fleet_str(h, "host")),
		    (long long)fleet_int(h, "epoch"),
		    ctl_vis(fleet_str(h, "state")),
		    (long long)fleet_int(h, "slots"),
		    (long long)fleet_int(h, "running"),
		    fleet_int(h, "heartbeat_ms") / 1000.0,
		    json_is_true(json_object_get(h, "expired")) ?
		    ", lease expired" : "");
	json_decref(o);
	return (CTL_EXIT_OK);
}

int
cmd_queue(int argc, char **argv)
{
	json_t	*o, *q;
	size_t	 i;

	if (fleet_list(argc, "queue", IMSG_CTL_QUEUE, &o) == -1)
		return (CTL_EXIT_REFUSED);
	if (o == NULL)
		return (CTL_EXIT_OK);
	printf("%-20s %-12s %-7s %-12s %-8s %s\n", "ATTEMPT", "TENANT",
	    "CLASS", "REPOSITORY", "AGE", "WHY");
	json_array_foreach(json_object_get(o, "queue"), i, q)
		printf("%-20s %-12s %-7s %-12s %-8.0f %s\n",
		    ctl_vis(fleet_str(q, "id")), ctl_vis(fleet_str(q, "tenant")),
		    ctl_vis(fleet_str(q, "priority")),
		    ctl_vis(fleet_str(q, "repository")),
		    fleet_int(q, "age_ms") / 1000.0,
		    ctl_vis(fleet_str(q, "why")));
	json_decref(o);
	return (CTL_EXIT_OK);
}

/* The request: verb, name, note, seconds, each NUL-terminated. */
static int
fleet_state(const char *verb, const char *name, const char *note,
    long long secs)
{
	json_t	*o;
	char	 buf[512], num[24];
	size_t	 len = 0;
	int	 n, i;
	const char *part[4];

	snprintf(num, sizeof(num), "%lld", secs);
	part[0] = verb;
	part[1] = name;
	part[2] = note;
	part[3] = num;
	for (i = 0; i < 4; i++) {
		n = strlen(part[i]) + 1;
		if (len + n > sizeof(buf))
			errx(CTL_EXIT_USAGE, "%s: too long", verb);
		memcpy(buf + len, part[i], n);
		len += n;
	}
	if (ctl_simple(0, IMSG_CTL_FLEET_STATE, buf, len, &o) != 0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json)
		ctl_print_json(o);
	else
		printf("%s %s: %s\n", verb, ctl_vis(fleet_str(o, "name")),
		    ctl_vis(fleet_str(o, "answer")));
	json_decref(o);
	return (CTL_EXIT_OK);
}

/*
 * A duration for option opt: "90", "90s", "15m", "2h" or "7d", in
 * seconds, 1 (0 when zero may be) to max.
 */
static long long
fleet_duration(const char *opt, const char *s, int zero, long long max)
{
	char		*ep;
	long long	 v;

	v = strtoll(s, &ep, 10);
	if (ep == s || v < (zero ? 0 : 1) || v > max)
		v = -1;
	else if (*ep == 'm' && ep[1] == '\0')
		v *= 60;
	else if (*ep == 'h' && ep[1] == '\0')
		v *= 3600;
	else if (*ep == 'd' && ep[1] == '\0')
		v *= 86400;
	else if (!(*ep == '\0' || (*ep == 's' && ep[1] == '\0')))
		v = -1;
	if (v < 0 || v > max)
		errx(CTL_EXIT_USAGE, "%s %s: a duration of %d to %lld "
		    "seconds", opt, ctl_vis(s), zero ? 0 : 1, max);
	return (v);
}

/* cordon HOST, uncordon HOST, drain [-t deadline] HOST. */
int
cmd_cordon(int argc, char **argv)
{
	const char	*verb = argv[0];
	long long	 secs = 0;
	int		 ch;

	if (strcmp(verb, "drain") == 0) {
		secs = 600;
		while ((ch = getopt(argc, argv, "t:")) != -1) {
			if (ch != 't')
				ctl_usage(verb);
			secs = fleet_duration("-t", optarg, 1, 86400);
		}
		argc -= optind - 1;
		argv += optind - 1;
	}
	if (argc != 2)
		ctl_usage(verb);
	return (fleet_state(verb, argv[1], "", secs));
}

/* pause (--tenant name | --fleet) [-m note]; resume the same, no note. */
int
cmd_pause(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "tenant",	required_argument, NULL, 'T' },
		{ "fleet",	no_argument,	   NULL, 'F' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*verb = argv[0], *tenant = NULL, *note = "";
	int		 ch, all = 0;

	while ((ch = getopt_long(argc, argv, "m:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'T':
			tenant = optarg;
			break;
		case 'F':
			all = 1;
			break;
		case 'm':
			if (strcmp(verb, "pause") != 0)
				ctl_usage(verb);
			note = optarg;
			break;
		default:
			ctl_usage(verb);
		}
	}
	if (optind != argc || (tenant == NULL) == !all ||
	    (tenant != NULL && *tenant == '\0'))
		ctl_usage(verb);
	return (fleet_state(verb, all ? "*" : tenant, note, 0));
}

int
cmd_tenants(int argc, char **argv)
{
	json_t		*o, *t;
	size_t		 i;
	char		 state[FLEET_TEXT_SHOW];
	const char	*note;

	if (fleet_list(argc, "tenants", IMSG_CTL_TENANTS, &o) == -1)
		return (CTL_EXIT_REFUSED);
	if (o == NULL)
		return (CTL_EXIT_OK);
	printf("%-16s %-6s %-7s %-7s %-6s %s\n", "TENANT", "WEIGHT",
	    "RUNNING", "QUEUED", "CAP", "STATE");
	json_array_foreach(json_object_get(o, "tenants"), i, t) {
		note = json_string_value(json_object_get(t, "note"));
		if (json_is_true(json_object_get(t, "held")))
			snprintf(state, sizeof(state), "paused by an operator%s%s",
			    note != NULL && *note != '\0' ? ": " : "",
			    note != NULL ? ctl_vis(note) : "");
		else
			snprintf(state, sizeof(state), "%s",
			    json_is_true(json_object_get(t, "paused")) ?
			    "paused (config)" : "active");
		printf("%-16s %-6lld %-7lld %-7lld %-6lld %s\n",
		    ctl_vis(fleet_str(t, "tenant")),
		    (long long)fleet_int(t, "weight"),
		    (long long)fleet_int(t, "running"),
		    (long long)fleet_int(t, "queued"),
		    (long long)fleet_int(t, "max_running"), state);
	}
	json_decref(o);
	return (CTL_EXIT_OK);
}

/* usage [--since duration]: the last day unless told. */
int
cmd_usage(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "since",	required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 }
	};
	json_t		*o, *u;
	long long	 secs = 86400;
	size_t		 i;
	int		 ch;
	char		 num[24];

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (ch != 'S')
			ctl_usage("usage");
		secs = fleet_duration("--since", optarg, 0,
		    366LL * 86400);
	}
	if (optind != argc)
		ctl_usage("usage");
	snprintf(num, sizeof(num), "%lld", secs);
	if (ctl_simple(0, IMSG_CTL_USAGE, num, strlen(num) + 1, &o) != 0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json) {
		ctl_print_json(o);
		json_decref(o);
		return (CTL_EXIT_OK);
	}
	printf("%-16s %-16s %8s %10s %10s %8s %10s %9s\n", "TENANT", "HOST",
	    "ATTEMPTS", "CPU", "WALL", "PEAKMEM", "TOKENS", "USD");
	json_array_foreach(json_object_get(o, "usage"), i, u)
		printf("%-16s %-16s %8lld %9.1fs %9.1fs %7lldM %10lld %9.4f\n",
		    ctl_vis(fleet_str(u, "tenant")),
		    ctl_vis(fleet_str(u, "host")),
		    (long long)fleet_int(u, "attempts"),
		    json_number_value(json_object_get(u, "cpu_seconds")),
		    json_number_value(json_object_get(u, "wall_seconds")),
		    (long long)(fleet_int(u, "memory_peak") >> 20),
		    (long long)fleet_int(u, "tokens"),
		    json_number_value(json_object_get(u, "usd")));
	json_decref(o);
	return (CTL_EXIT_OK);
}
