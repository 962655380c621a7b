/*
 * factoryctl top and metrics: the operator's live view, from status's
 * overview, and the OpenMetrics text.  top redraws in place on a
 * terminal, sized to it; elsewhere (or with -1) it prints plain
 * snapshots.  Every name and line shown goes through ctl_jvis().
 */
#include <sys/ioctl.h>

#include <err.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "factoryctl.h"

#define TOP_LINEMAX	512

static volatile sig_atomic_t	 top_quit;

static void
top_sig(int sig)
{
	top_quit = 1;
}

struct screen {
	int	 rows, cols;	/* 0: unbounded */
	int	 used;
	int	 tty;
};

/* One line, cut to the terminal's width; nothing past its last row. */
static void
line(struct screen *s, const char *fmt, ...)
    __attribute__((__format__ (printf, 2, 3)));

static void
line(struct screen *s, const char *fmt, ...)
{
	char	 buf[TOP_LINEMAX];
	va_list	 ap;

	if (s->rows > 0 && s->used >= s->rows - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (s->cols > 0 && (int)strlen(buf) > s->cols)
		buf[s->cols] = '\0';
	fputs(buf, stdout);
	fputs(s->tty ? "\033[K\n" : "\n", stdout);
	s->used++;
}

static long long
jint(json_t *o, const char *k)
{
	return (json_integer_value(json_object_get(o, k)));
}

static const char *
human(long long v, char *buf, size_t len)
{
	const char	*units = "BKMGT";
	double		 d = v;

	while (d >= 1024 && units[1] != '\0') {
		d /= 1024;
		units++;
	}
	snprintf(buf, len, *units == 'B' ? "%.0f%c" : "%.1f%c", d, *units);
	return (buf);
}

/* Attempts per state, those that are not zero, in the table's order. */
static void
top_states(struct screen *s, json_t *ov)
{
	json_t		*st = json_object_get(ov, "attempts"), *q, *v;
	const char	*k;
	char		 buf[TOP_LINEMAX], d[32];
	size_t		 off = 0;

	q = json_object_get(ov, "queue");
	off = snprintf(buf, sizeof(buf), "queue %lld (oldest %s)",
	    jint(q, "length"), ctl_duration(jint(q, "oldest_ms") / 1000, d,
	    sizeof(d)));
	json_object_foreach(st, k, v) {
		if (json_integer_value(v) == 0 || off >= sizeof(buf))
			continue;
		off += snprintf(buf + off, sizeof(buf) - off, "  %s %lld",
		    ctl_vis(k), (long long)json_integer_value(v));
	}
	line(s, "attempts: %s", buf);
}

static void
top_draw(struct screen *s, json_t *o)
{
	json_t		*ov = json_object_get(o, "overview"), *p, *a, *busy;
	json_t		*fl;
	size_t		 i, n, shown;
	char		 d1[32], d2[32], m[32], usd[32], tbuf[32];
	time_t		 t;
	struct tm	*tm;

	p = json_array_get(json_object_get(o, "processes"), 0);
	t = time(NULL);
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", localtime(&t));
	line(s, "factoryd %s  up %s  %s", ctl_jvis(json_object_get(o,
	    "version")), ctl_duration(jint(p, "uptime"), d1, sizeof(d1)),
	    tbuf);
	top_states(s, ov);
	busy = json_object_get(ov, "busy");
	line(s, "verifier: %s  publisher: %s  orphans: %lld  "
	    "connections: %lld rw, %lld ro, %lld waiting",
	    jint(busy, "verifying") > 0 ? "busy" : "idle",
	    jint(busy, "publishing") > 0 ? "busy" : "idle",
	    jint(ov, "orphans"),
	    jint(json_object_get(o, "control"), "connections"),
	    jint(json_object_get(o, "control"), "readonly_connections"),
	    jint(json_object_get(o, "control"), "waits"));
	if ((fl = json_object_get(ov, "fleet")) != NULL)
		line(s, "fleet: host %s epoch %lld  %s  lease %.1fs  claimed "
		    "%lld  superseded %lld  swept %lld",
		    ctl_jvis(json_object_get(fl, "host")), jint(fl, "epoch"),
		    json_is_true(json_object_get(fl, "fenced")) ? "FENCED" :
		    "live", jint(fl, "lease_left_ms") / 1000.0,
		    jint(fl, "claims"), jint(fl, "superseded"),
		    jint(fl, "swept"));
	line(s, "%s", "");
	line(s, "%-12s %7s %-9s %8s %8s", "PROCESS", "PID", "STATE",
	    "UPTIME", "RESTARTS");
	json_array_foreach(json_object_get(o, "processes"), i, p)
		line(s, "%-12s %7lld %-9s %8s %8lld",
		    ctl_jvis(json_object_get(p, "name")), jint(p, "pid"),
		    ctl_jvis(json_object_get(p, "state")),
		    ctl_duration(jint(p, "uptime"), d1, sizeof(d1)),
		    jint(p, "restarts"));
	line(s, "%s", "");
	line(s, "%-18s %-12s %-10s %8s %7s %8s %8s %s", "ATTEMPT", "STATE",
	    "STAGE", "ELAPSED", "CPU", "MEMORY", "SPEND", "REPOSITORY");
	a = json_object_get(ov, "running");
	n = json_array_size(a);
	/* Room for the errors' heading and three of them below. */
	shown = n;
	if (s->rows > 0 && (int)n > s->rows - s->used - 6)
		shown = s->rows - s->used - 6 > 0 ? s->rows - s->used - 6 : 0;
	for (i = 0; i < shown; i++) {
		p = json_array_get(a, i);
		snprintf(d2, sizeof(d2), "%.1fs", json_number_value(
		    json_object_get(p, "cpu_seconds")));
		/* '~': some of it charged without the provider's usage */
		snprintf(usd, sizeof(usd), "%s$%.2f", jint(p, "estimated") > 0 ?
		    "~" : "", json_number_value(json_object_get(p, "usd")));
		line(s, "%-18s %-12s %-10s %8s %7s %8s %8s %s",
		    ctl_jvis(json_object_get(p, "id")),
		    ctl_jvis(json_object_get(p, "state")),
		    ctl_jvis(json_object_get(p, "stage")),
		    ctl_duration(jint(p, "elapsed_ms") / 1000, d1,
		    sizeof(d1)), d2, human(jint(p, "memory"), m, sizeof(m)),
		    usd, ctl_jvis(json_object_get(p, "repository")));
	}
	if (shown < n)
		line(s, "... %zu more", n - shown);
	if (n == 0)
		line(s, "(none running)");
	line(s, "%s", "");
	line(s, "LAST ERRORS");
	a = json_object_get(ov, "errors");
	n = json_array_size(a);
	for (i = n; i > 0; i--) {
		p = json_array_get(a, i - 1);
		t = (time_t)jint(p, "time");
		tm = localtime(&t);
		strftime(tbuf, sizeof(tbuf), "%H:%M:%S", tm);
		line(s, "%s %s", tbuf, ctl_jvis(json_object_get(p, "line")));
	}
	if (n == 0)
		line(s, "(none)");
}

int
cmd_top(int argc, char **argv)
{
	struct screen	 s;
	struct winsize	 ws;
	json_t		*o;
	long		 count = -1, delay = 2;
	int		 ch, once = 0;
	const char	*errstr;

	optind = 1;
	while ((ch = getopt(argc, argv, "1d:n:")) != -1) {
		switch (ch) {
		case '1':
			once = 1;
			break;
		case 'd':
			delay = strtonum(optarg, 1, 3600, &errstr);
			if (errstr != NULL)
				errx(CTL_EXIT_USAGE, "-d %s: %s", optarg,
				    errstr);
			break;
		case 'n':
			count = strtonum(optarg, 1, 1000000, &errstr);
			if (errstr != NULL)
				errx(CTL_EXIT_USAGE, "-n %s: %s", optarg,
				    errstr);
			break;
		default:
			ctl_usage("top");
		}
	}
	if (optind != argc)
		ctl_usage("top");
	if (once)
		count = 1;
	signal(SIGINT, top_sig);
	signal(SIGTERM, top_sig);
	while (!top_quit && count != 0) {
		if (ctl_simple(1, IMSG_CTL_STATUS, NULL, 0, &o) != 0)
			return (CTL_EXIT_REFUSED);
		memset(&s, 0, sizeof(s));
		s.tty = !once && isatty(STDOUT_FILENO);
		if (s.tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
			s.rows = ws.ws_row;
			s.cols = ws.ws_col;
		}
		if (s.tty)
			fputs("\033[H", stdout);
		top_draw(&s, o);
		if (s.tty)
			fputs("\033[J", stdout);
		else if (count != 1)
			fputs("\n", stdout);
		fflush(stdout);
		json_decref(o);
		if (count > 0)
			count--;
		if (count != 0 && !top_quit)
			sleep(delay);
	}
	return (CTL_EXIT_OK);
}

/*
 * The parent's own text, checked to be what OpenMetrics allows here
 * (printable ASCII and newlines) before it reaches a terminal.
 */
int
cmd_metrics(int argc, char **argv)
{
	json_t		*o;
	const char	*text, *p;

	if (argc != 1)
		ctl_usage("metrics");
	if (ctl_simple(1, IMSG_CTL_METRICS, NULL, 0, &o) != 0)
		return (CTL_EXIT_REFUSED);
	if ((text = json_string_value(json_object_get(o,
	    "openmetrics"))) == NULL) {
		warnx("metrics: no text in the answer");
		json_decref(o);
		return (CTL_EXIT_REFUSED);
	}
	for (p = text; *p != '\0'; p++)
		if ((*p < 0x20 || *p > 0x7e) && *p != '\n') {
			warnx("metrics: a byte 0x%02x in the text: refused",
			    (unsigned char)*p);
			json_decref(o);
			return (CTL_EXIT_REFUSED);
		}
	if (ctl_json)
		ctl_print_json(o);
	else
		fputs(text, stdout);
	json_decref(o);
	return (CTL_EXIT_OK);
}
