/*
 * factoryctl attest and verify -a: the in-toto attestations of an
 * attempt, exported from the daemon and verified offline (attest.h).
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "attest.h"
#include "esc.h"
#include "factoryctl.h"
#include "vis.h"

#define PINS_MAX	8

static void
print_steal(json_t *o)
{
	ctl_print_json(o);
	json_decref(o);
}

int
cmd_attest(int argc, char **argv)
{
	json_t		*o, *e;

	if (argc != 2)
		ctl_usage("attest");
	if (ctl_simple(1, IMSG_CTL_ATTEST, argv[1], strlen(argv[1]) + 1,
	    &o) != 0)
		return (CTL_EXIT_REFUSED);
	e = json_object_get(o, "export");
	/* Exact bytes for a file or a pipe; a terminal gets them shown. */
	if (ctl_json)
		ctl_print_json(o);
	else if (isatty(STDOUT_FILENO))
		fputs(ctl_visn(json_string_value(e), json_string_length(e),
		    VIS_NL), stdout);
	else
		fwrite(json_string_value(e), 1, json_string_length(e), stdout);
	json_decref(o);
	return (CTL_EXIT_OK);
}

/*
 * -K [builder=|verifier=]fingerprint[,...], repeatable.  A pin without
 * a role may sign in either role: said once on stderr.
 */
static void
pins_add(char *arg, char **pins, size_t *npins, int *bare)
{
	const char	*fp;
	char		*p;
	int		 roles;

	while ((p = strsep(&arg, ",")) != NULL) {
		if (*p == '\0')
			continue;
		if (*npins == PINS_MAX)
			errx(CTL_EXIT_USAGE, "more than %d pinned keys",
			    PINS_MAX);
		if (attest_pin_parse(p, &roles, &fp) == -1)
			errx(CTL_EXIT_USAGE, "-K %s: not [builder=|verifier=]"
			    "SHA256:<fingerprint>", ctl_vis(p));
		if (roles == (ATTEST_ROLE_BUILDER | ATTEST_ROLE_VERIFIER))
			(*bare)++;
		pins[(*npins)++] = p;
	}
}

static char *
slurp(FILE *f, size_t *lenp)
{
	size_t	 max = (size_t)ATTEST_MAX * (ATTEST_LINE_MAX + 1), len = 0, n;
	char	*buf;

	if ((buf = malloc(max + 1)) == NULL)
		err(CTL_EXIT_REFUSED, NULL);
	while ((n = fread(buf + len, 1, max + 1 - len, f)) > 0)
		if ((len += n) > max)
			break;
	if (ferror(f) || len > max) {
		free(buf);
		return (NULL);
	}
	*lenp = len;
	return (buf);
}

/* verify -a: the envelopes of one file, offline, against pinned keys. */
int
attest_verify_file(const char *path, char *pinarg[], size_t npinarg)
{
	struct attest_summary	 sum;
	char			*pins[PINS_MAX], *buf, err[512], line[512];
	size_t			 npins = 0, i, len;
	FILE			*f;
	json_t			*e;
	int			 ret, bare = 0, failed;

	for (i = 0; i < npinarg; i++)
		pins_add(pinarg[i], pins, &npins, &bare);
	if (strcmp(path, "-") == 0)
		f = stdin;
	else if ((f = fopen(path, "r")) == NULL) {
		warn("%s", ctl_vis(path));
		return (CTL_EXIT_USAGE);
	}
	buf = slurp(f, &len);
	if (f != stdin)
		fclose(f);
	if (buf == NULL) {
		warnx("%s: unreadable or larger than %d envelopes",
		    ctl_vis(path), ATTEST_MAX);
		return (CTL_EXIT_REFUSED);
	}
	ret = attest_verify_buf(buf, len, pins, npins, &sum, err, sizeof(err));
	free(buf);
	if (ret == -1) {
		if (ctl_json)
			print_steal(json_pack("{s:b, s:o}", "ok", 0,
			    "error", (e = json_string(err)) != NULL ? e :
			    esc_json_str(err)));
		else
			printf("%s: %s\n", ctl_vis(path), ctl_vis(err));
		return (CTL_EXIT_REFUSED);
	}
	/* Signed, but by whom: only pins say (the receipts' verify -r -V). */
	if (npins == 0)
		warnx("no key pinned (-K): the signatures hold, but any key "
		    "would have passed");
	else if (bare > 0)
		warnx("%d key%s pinned without a role: may sign as builder "
		    "or verifier (-K builder=... -K verifier=...)", bare,
		    bare > 1 ? "s" : "");
	/* Signed as it should be, but the attempt failed: not 0. */
	failed = strcmp(sum.result, "PASSED") != 0;
	attest_summary_str(&sum, line, sizeof(line));
	if (ctl_json)
		print_steal(json_pack("{s:b, s:I, s:s, s:s, s:s, s:s, s:s, "
		    "s:s}", "ok", !failed, "envelopes", (json_int_t)sum.count,
		    "result", sum.result, "commit", sum.commit, "tree",
		    sum.tree, "bundle_sha256", sum.bundle, "provenance_key",
		    sum.builder_key, "verifier_key", sum.verifier_key));
	else
		printf("%s\n", ctl_vis(line));
	return (failed ? CTL_EXIT_FAILED : CTL_EXIT_OK);
}
