/*
 * factoryctl cache: the caches factoryd keeps beside the attempts.
 * The pristine checkouts (one per repository and commit, the lower
 * layer of every attempt tree on that commit), named REPOSITORY/COMMIT,
 * and the setup entries (a manifest's setup outputs), named by KEY.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "factoryctl.h"

static void	cache_print(json_t *);
static void	cache_print_key(json_t *, time_t);
static void	cache_when(time_t, char *, size_t);

static void
cache_when(time_t t, char *when, size_t len)
{
	struct tm	*tm;

	if ((tm = gmtime(&t)) == NULL ||
	    strftime(when, len, "%Y-%m-%dT%H:%M:%SZ", tm) == 0)
		strlcpy(when, "-", len);
}

/* A row named by its key alone (a setup entry). */
static void
cache_print_key(json_t *v, time_t t)
{
	char	 when[32];

	cache_when(t, when, sizeof(when));
	printf("%-9s %-60s %12lld %-20s %s\n",
	    ctl_jvis(json_object_get(v, "kind")),
	    ctl_jvis(json_object_get(v, "key")),
	    (long long)json_integer_value(json_object_get(v, "bytes")),
	    when, json_is_true(json_object_get(v, "in_use")) ? "yes" : "no");
}

static void
cache_print(json_t *list)
{
	json_t		*v;
	char		 when[32];
	size_t		 i;
	time_t		 t;
	struct tm	*tm;

	printf("%-9s %-60s %12s %-20s %s\n", "KIND", "KEY", "BYTES", "USED",
	    "IN USE");
	json_array_foreach(list, i, v) {
		t = (time_t)json_integer_value(json_object_get(v, "used"));
		if (json_object_get(v, "key") != NULL) {
			cache_print_key(v, t);
			continue;
		}
		if ((tm = gmtime(&t)) == NULL ||
		    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ",
		    tm) == 0)
			strlcpy(when, "-", sizeof(when));
		printf("%-9s %s/%-*s %12lld %-20s %s\n",
		    ctl_jvis(json_object_get(v, "kind")),
		    ctl_jvis(json_object_get(v, "repo")),
		    (int)(59 - strlen(ctl_jvis(json_object_get(v, "repo")))),
		    ctl_jvis(json_object_get(v, "commit")),
		    (long long)json_integer_value(json_object_get(v, "bytes")),
		    when, json_is_true(json_object_get(v, "in_use")) ? "yes" :
		    "no");
	}
}

int
cmd_cache(int argc, char **argv)
{
	json_t	*o;

	if (argc == 2 && strcmp(argv[1], "list") == 0) {
		if (ctl_simple(1, IMSG_CTL_CACHE_LIST, NULL, 0, &o) != 0)
			return (CTL_EXIT_REFUSED);
		if (ctl_json)
			ctl_print_json(o);
		else
			cache_print(json_object_get(o, "caches"));
		json_decref(o);
		return (CTL_EXIT_OK);
	}
	if (argc == 3 && strcmp(argv[1], "rm") == 0) {
		if (ctl_simple(0, IMSG_CTL_CACHE_RM, argv[2],
		    strlen(argv[2]) + 1, &o) != 0)
			return (CTL_EXIT_REFUSED);
		if (ctl_json)
			ctl_print_json(o);
		else
			printf("%s: removed\n", ctl_vis(argv[2]));
		json_decref(o);
		return (CTL_EXIT_OK);
	}
	if (argc == 2 && strcmp(argv[1], "gc") == 0) {
		if (ctl_simple(0, IMSG_CTL_CACHE_GC, NULL, 0, &o) != 0)
			return (CTL_EXIT_REFUSED);
		if (ctl_json)
			ctl_print_json(o);
		else
			printf("setup: %lld evicted, %lld temporaries removed\n",
			    (long long)json_integer_value(json_object_get(
			    json_object_get(o, "setup"), "evicted")),
			    (long long)json_integer_value(json_object_get(
			    json_object_get(o, "setup"), "temporaries")));
		json_decref(o);
		return (CTL_EXIT_OK);
	}
	ctl_usage("cache");
}
