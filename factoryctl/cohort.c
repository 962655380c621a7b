/*
 * factoryctl cohort, select, submit -n: best-of-N cohorts.  Everything
 * a member's agent produced (paths, reasons) reaches the terminal in
 * display form only (ctl_jvis).
 */
#include <sys/types.h>
#include <sys/ioctl.h>

#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esc.h"
#include "factoryctl.h"
#include "imsg.h"
#include "vis.h"

#define POLL_USEC	(200 * 1000)
#define LABEL_W		12	/* the row names' column */
#define CELL_MIN	18	/* a member's column, at least */
#define CELL_MAX	40

static json_t *
cohort_get(const char *id)
{
	json_t	*o;

	if (ctl_simple(1, IMSG_CTL_COHORT, id, strlen(id) + 1, &o) != 0)
		exit(CTL_EXIT_REFUSED);
	return (o);
}

/* Ended, or waiting for the selection: nothing more comes by itself. */
static int
member_settled(json_t *m)
{
	const char	*st = json_string_value(json_object_get(m, "state"));

	if (st == NULL)
		return (1);
	return (strcmp(st, "selectable") == 0 ||
	    strcmp(st, "published") == 0 || strcmp(st, "failed") == 0 ||
	    strcmp(st, "rejected") == 0 || strcmp(st, "cancelled") == 0 ||
	    strcmp(st, "orphaned") == 0 || strcmp(st, "verified") == 0 ||
	    strcmp(st, "selected") == 0);
}

static int
cohort_settled(json_t *o)
{
	json_t	*m;
	size_t	 i;

	json_array_foreach(json_object_get(o, "members"), i, m)
		if (!member_settled(m))
			return (0);
	return (1);
}

static int
cohort_selectable(json_t *o)
{
	json_t	*m;
	size_t	 i;
	int	 n = 0;

	json_array_foreach(json_object_get(o, "members"), i, m)
		if (strcmp(ctl_jvis(json_object_get(m, "state")),
		    "selectable") == 0)
			n++;
	return (n);
}

static int
terminal_width(void)
{
	struct winsize	 ws;
	const char	*cols, *errstr;
	int		 w;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return (ws.ws_col);
	if ((cols = getenv("COLUMNS")) != NULL) {
		w = strtonum(cols, 20, 1000, &errstr);
		if (errstr == NULL)
			return (w);
	}
	return (80);
}

/* One cell: cut to its width, never past it (a name can be long). */
static void
cell(const char *s, int w)
{
	int	 n = (int)strlen(s);

	if (n >= w)
		printf("%.*s~ ", w - 2, s);
	else
		printf("%-*s", w, s);
}

typedef void (*row_fn)(json_t *, char *, size_t);

static void
r_id(json_t *m, char *b, size_t l)
{
	snprintf(b, l, "%s%s", ctl_jvis(json_object_get(m, "id")),
	    json_is_true(json_object_get(m, "selected")) ? " *" : "");
}

static void
r_state(json_t *m, char *b, size_t l)
{
	strlcpy(b, ctl_jvis(json_object_get(m, "state")), l);
}

static void
r_variant(json_t *m, char *b, size_t l)
{
	snprintf(b, l, "%lld", json_integer_value(json_object_get(m,
	    "variant")));
}

static void
r_verdict(json_t *m, char *b, size_t l)
{
	strlcpy(b, ctl_jvis(json_object_get(m, "verdict")), l);
}

static void
r_validation(json_t *m, char *b, size_t l)
{
	json_t	*v = json_object_get(m, "validation");

	if (!json_is_object(v))
		strlcpy(b, "-", l);
	else if (json_is_true(json_object_get(v, "passed")))
		strlcpy(b, "passed", l);
	else
		snprintf(b, l, "failed (%s%lld)", json_is_true(
		    json_object_get(v, "timedout")) ? "timeout, " : "status ",
		    json_integer_value(json_object_get(v, "status")));
}

static void
r_files(json_t *m, char *b, size_t l)
{
	snprintf(b, l, "%lld", json_integer_value(json_object_get(m,
	    "files_changed")));
}

/* The listed changes by kind: "2M 1A". */
static void
r_diffstat(json_t *m, char *b, size_t l)
{
	json_t		*c;
	size_t		 i;
	int		 na = 0, nm = 0, nd = 0, no = 0;
	const char	*st;

	json_array_foreach(json_object_get(m, "changes"), i, c) {
		st = ctl_jvis(json_object_get(c, "status"));
		if (st[0] == 'A')
			na++;
		else if (st[0] == 'M')
			nm++;
		else if (st[0] == 'D')
			nd++;
		else
			no++;
	}
	snprintf(b, l, "%dA %dM %dD%s", na, nm, nd, no > 0 ? " +" : "");
}

static void
r_cpu(json_t *m, char *b, size_t l)
{
	snprintf(b, l, "%.2fs", json_real_value(json_object_get(
	    json_object_get(m, "usage"), "cpu_seconds")));
}

static void
r_memory(json_t *m, char *b, size_t l)
{
	snprintf(b, l, "%lld KiB", json_integer_value(json_object_get(
	    json_object_get(m, "usage"), "peak_memory")) / 1024);
}

static void
stage(json_t *m, const char *name, char *b, size_t l)
{
	json_t	*v = json_object_get(json_object_get(m, "stages"), name);

	if (json_is_integer(v))
		snprintf(b, l, "%lldms", json_integer_value(v));
	else
		strlcpy(b, "-", l);
}

static void
r_run(json_t *m, char *b, size_t l)
{
	stage(m, "run", b, l);
}

static void
r_verify(json_t *m, char *b, size_t l)
{
	stage(m, "verify", b, l);
}

static void
r_total(json_t *m, char *b, size_t l)
{
	stage(m, "total", b, l);
}

/* Tokens and cost as the gateway metered them, for a model grant. */
static void
r_spend(json_t *m, char *b, size_t l)
{
	json_t		*s = json_object_get(m, "spend");
	long long	 uusd;

	if (!json_is_object(s)) {
		strlcpy(b, "-", l);
		return;
	}
	uusd = json_integer_value(json_object_get(s, "cost_uusd"));
	/* '~': some of it charged without the provider's usage */
	snprintf(b, l, "%lld tok %s$%lld.%06lld", json_integer_value(
	    json_object_get(s, "tokens_in")) + json_integer_value(
	    json_object_get(s, "tokens_out")), json_integer_value(
	    json_object_get(s, "estimated")) > 0 ? "~" : "", uusd / 1000000,
	    uusd % 1000000);
}

static void
r_reason(json_t *m, char *b, size_t l)
{
	json_t	*v = json_object_get(m, "reason");

	strlcpy(b, v != NULL ? ctl_jvis(v) : "-", l);
}

static const struct {
	const char	*label;
	row_fn		 fn;
} rows[] = {
	{ "member", r_id }, { "state", r_state }, { "variant", r_variant },
	{ "verdict", r_verdict }, { "validation", r_validation },
	{ "files", r_files }, { "diffstat", r_diffstat }, { "cpu", r_cpu },
	{ "memory", r_memory }, { "run", r_run }, { "verify", r_verify },
	{ "total", r_total }, { "spend", r_spend }, { "reason", r_reason },
};

/*
 * The selections whose publication failed, one a line, oldest first:
 * the member, who selected it, why (the publisher's words, shown).
 */
static void
print_failures(json_t *arr)
{
	json_t	*f;
	size_t	 i;

	json_array_foreach(arr, i, f) {
		printf("selection failed: %s", ctl_jvis(json_object_get(f,
		    "member")));
		printf(" (uid %lld): %s\n", json_integer_value(
		    json_object_get(f, "uid")), ctl_jvis(json_object_get(f,
		    "reason")));
	}
}

/*
 * The members side by side, as many to a band as the terminal takes;
 * bands one under another.
 */
static void
print_cohort(json_t *o)
{
	json_t	*members = json_object_get(o, "members");
	size_t	 n = json_array_size(members), first, i, r, per;
	int	 w, cw;
	char	 buf[256];

	printf("cohort: %s\nrepository: %s\nsize: %lld\nmanifest: %s\n"
	    "selected: %s\n", ctl_jvis(json_object_get(o, "id")),
	    ctl_jvis(json_object_get(o, "repository")),
	    json_integer_value(json_object_get(o, "size")),
	    ctl_jvis(json_object_get(o, "manifest_digest")),
	    json_is_string(json_object_get(o, "selected")) ?
	    ctl_jvis(json_object_get(o, "selected")) : "none");
	print_failures(json_object_get(o, "failed_selections"));
	if (n == 0)
		return;
	w = terminal_width() - LABEL_W;
	per = w / CELL_MIN > 0 ? (size_t)(w / CELL_MIN) : 1;
	for (first = 0; first < n; first += per) {
		cw = w / (int)(n - first < per ? n - first : per);
		if (cw > CELL_MAX)
			cw = CELL_MAX;
		if (cw < CELL_MIN)
			cw = CELL_MIN;
		printf("\n");
		for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
			printf("%-*s", LABEL_W, rows[r].label);
			for (i = first; i < n && i < first + per; i++) {
				rows[r].fn(json_array_get(members, i), buf,
				    sizeof(buf));
				cell(buf, cw);
			}
			printf("\n");
		}
	}
}

int
cmd_cohort(int argc, char **argv)
{
	json_t	*o;
	int	 ch;

	while ((ch = getopt(argc, argv, "j")) != -1) {
		switch (ch) {
		case 'j':
			ctl_json = 1;
			break;
		default:
			ctl_usage("cohort");
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1)
		ctl_usage("cohort");
	o = cohort_get(argv[0]);
	if (ctl_json)
		ctl_print_json(o);
	else
		print_cohort(o);
	json_decref(o);
	return (CTL_EXIT_OK);
}

int
cmd_select(int argc, char **argv)
{
	json_t	*o;

	if (argc != 2)
		ctl_usage("select");
	if (ctl_simple(0, IMSG_CTL_SELECT, argv[1], strlen(argv[1]) + 1,
	    &o) != 0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json)
		ctl_print_json(o);
	else
		printf("%s: selected, publishing\n", ctl_vis(argv[1]));
	json_decref(o);
	return (CTL_EXIT_OK);
}

/*
 * submit of a cohort: its id, then its members, one a line.  -w waits
 * until every member is ended or selectable, shows the cohort, and
 * exits 0 if one can be selected.
 */
int
cohort_submitted(json_t *o, int wait)
{
	json_t	*m;
	char	 id[COHORT_ID_MAX];
	size_t	 i;
	int	 ret;

	strlcpy(id, ctl_jvis(json_object_get(o, "cohort")), sizeof(id));
	if (ctl_json && !wait)
		ctl_print_json(o);
	else if (!ctl_json) {
		printf("%s\n", id);
		json_array_foreach(json_object_get(o, "members"), i, m)
			printf("\t%s\n", ctl_jvis(m));
	}
	json_decref(o);
	if (!wait)
		return (CTL_EXIT_OK);
	fflush(stdout);
	for (;;) {
		o = cohort_get(id);
		if (cohort_settled(o))
			break;
		json_decref(o);
		usleep(POLL_USEC);
	}
	if (ctl_json)
		ctl_print_json(o);
	else
		print_cohort(o);
	ret = cohort_selectable(o) > 0 ? CTL_EXIT_OK : CTL_EXIT_REFUSED;
	json_decref(o);
	return (ret);
}

/* list and status: the cohorts, after the rest, when there are any. */
void
cohort_print_list(json_t *arr)
{
	json_t	*c, *sel;
	size_t	 i;

	if (json_array_size(arr) == 0)
		return;
	printf("\n%-16s %4s %s\n", "COHORT", "SIZE", "SELECTED");
	json_array_foreach(arr, i, c) {
		sel = json_object_get(c, "selected");
		printf("%-16s %4lld %s\n", ctl_jvis(json_object_get(c, "id")),
		    json_integer_value(json_object_get(c, "size")),
		    json_is_string(sel) ? ctl_jvis(sel) : "-");
	}
}

/*
 * diff ID: the result's patch, made by the worker, sent in the esc.h
 * encoding; shown with its lines and tabs, everything else of it in
 * display form, since every byte of it is the agent's.
 */
int
cmd_diff(int argc, char **argv)
{
	json_t	*o, *p;
	char	*data;
	size_t	 len;
	int	 n;

	if (argc != 2)
		ctl_usage("diff");
	if (ctl_simple(1, IMSG_CTL_DIFF, argv[1], strlen(argv[1]) + 1,
	    &o) != 0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json) {
		ctl_print_json(o);
		json_decref(o);
		return (CTL_EXIT_OK);
	}
	p = json_object_get(o, "patch");
	len = json_string_length(p);
	if ((data = malloc(len + 1)) == NULL)
		err(CTL_EXIT_USAGE, NULL);
	if (!json_is_string(p) || (n = esc_decode(json_string_value(p), len,
	    data, len)) == -1)
		errx(CTL_EXIT_REFUSED, "diff: an answer not in the escaped "
		    "form");
	fputs(ctl_visn(data, (size_t)n, VIS_NL | VIS_TAB), stdout);
	if (json_is_true(json_object_get(o, "truncated")))
		printf("[diff cut at %d of %lld bytes]\n", n,
		    json_integer_value(json_object_get(o, "bytes")));
	free(data);
	json_decref(o);
	return (CTL_EXIT_OK);
}
