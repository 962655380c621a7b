/*
 * factoryctl status, policy, reload, log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factoryctl.h"

int
cmd_status(int argc, char **argv)
{
	json_t		*o, *p;
	size_t		 i;
	char		 buf[32];

	if (argc != 1)
		ctl_usage("status");
	if (ctl_simple(1, IMSG_CTL_STATUS, NULL, 0, &o) != 0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json) {
		ctl_print_json(o);
		json_decref(o);
		return (CTL_EXIT_OK);
	}
	printf("%-12s %7s %7s %-9s %8s %8s\n", "PROCESS", "PID", "UID",
	    "STATE", "UPTIME", "RESTARTS");
	json_array_foreach(json_object_get(o, "processes"), i, p) {
		printf("%-12s %7lld %7lld %-9s %8s %8lld\n",
		    ctl_jvis(json_object_get(p, "name")),
		    json_integer_value(json_object_get(p, "pid")),
		    json_integer_value(json_object_get(p, "uid")),
		    ctl_jvis(json_object_get(p, "state")),
		    ctl_duration(json_integer_value(json_object_get(p,
		    "uptime")), buf, sizeof(buf)),
		    json_integer_value(json_object_get(p, "restarts")));
	}
	cohort_print_list(json_object_get(o, "cohorts"));
	json_decref(o);
	return (CTL_EXIT_OK);
}

int
cmd_policy(int argc, char **argv)
{
	json_t		*o, *p, *prom;
	size_t		 i;
	const char	*s, *nl;

	if (argc != 1)
		ctl_usage("policy");
	if (ctl_simple(1, IMSG_CTL_POLICY, NULL, 0, &o) != 0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json) {
		ctl_print_json(o);
		json_decref(o);
		return (CTL_EXIT_OK);
	}
	json_array_foreach(json_object_get(o, "processes"), i, p) {
		printf("%s (uid %lld): %s\n",
		    ctl_jvis(json_object_get(p, "name")),
		    json_integer_value(json_object_get(p, "uid")),
		    ctl_jvis(json_object_get(p, "why")));
		if ((prom = json_object_get(p, "promises")) != NULL)
			printf("\tdeclared: %s\n", ctl_jvis(prom));
		s = json_string_value(json_object_get(p, "applied"));
		while (s != NULL && *s != '\0') {
			nl = strchr(s, '\n');
			printf("\t%s\n", ctl_visn(s, nl ? (size_t)(nl - s) :
			    strlen(s), 0));
			s = nl ? nl + 1 : NULL;
		}
	}
	json_decref(o);
	return (CTL_EXIT_OK);
}

int
cmd_reload(int argc, char **argv)
{
	if (argc != 1)
		ctl_usage("reload");
	if (ctl_simple(0, IMSG_CTL_RELOAD, NULL, 0, NULL) != 0)
		return (CTL_EXIT_REFUSED);
	if (!ctl_json)
		printf("reload requested\n");
	else
		printf("{\"reloaded\": true}\n");
	return (CTL_EXIT_OK);
}

int
cmd_log(int argc, char **argv)
{
	int	 v;

	if (argc != 2)
		ctl_usage("log");
	if (strcmp(argv[1], "verbose") == 0)
		v = 1;
	else if (strcmp(argv[1], "brief") == 0)
		v = 0;
	else
		ctl_usage("log");
	if (ctl_simple(0, IMSG_CTL_LOG_VERBOSE, &v, sizeof(v), NULL) != 0)
		return (CTL_EXIT_REFUSED);
	if (!ctl_json)
		printf("logging %s\n", ctl_vis(argv[1]));
	return (CTL_EXIT_OK);
}
