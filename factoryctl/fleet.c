/*
 * factoryctl hosts and queue: the fleet's hosts, and its waiting
 * attempts with why each waits (factory-fleet(8)).
 */
#include <sys/types.h>

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "factoryctl.h"

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
