/*
 * factoryctl submit, list, show, logs, cancel, approve, receipts,
 * verify, preview, attach: the attempts.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factoryctl.h"
#include "esc.h"
#include "imsg.h"
#include "receipt.h"
#include "vis.h"

#define MANIFEST_MAX	(60 * 1024)
#define POLL_USEC	(200 * 1000)

/* The stages one after another; a part is shown after its stage. */
static const char *stage_order[] = { "queue", "allocation", "checkout",
    "sandbox", "image", "cache", "services", "run", "collect", "verify",
    "validation",
    "publish", "teardown", NULL };

/* A part measured inside a stage, not a stage of its own. */
static int
stage_part(const char *name)
{
	return (strcmp(name, "image") == 0 || strcmp(name, "cache") == 0 ||
	    strcmp(name, "services") == 0 || strcmp(name, "validation") == 0);
}

/* A member for display (vis.h): nothing in it acts on a terminal. */
static const char *
jstr(json_t *o, const char *key)
{
	return (ctl_jvis(json_object_get(o, key)));
}

static void
print_steal(json_t *o)
{
	ctl_print_json(o);
	json_decref(o);
}

static json_t *
show(const char *id)
{
	json_t	*o;

	if (ctl_simple(1, IMSG_CTL_SHOW, id, strlen(id) + 1, &o) != 0)
		exit(CTL_EXIT_REFUSED);
	return (o);
}

static void
print_stages(json_t *o)
{
	json_t	*st = json_object_get(o, "stages"), *v;
	int	 i;

	printf("stages:");
	for (i = 0; stage_order[i] != NULL; i++) {
		/* Not reached, or not used by this attempt: "-". */
		if (json_is_integer(v = json_object_get(st, stage_order[i])))
			printf(" %s %lldms", stage_order[i],
			    json_integer_value(v));
		else
			printf(" %s -", stage_order[i]);
	}
	printf("\n");
	if (json_is_integer(v = json_object_get(st, "overhead")))
		printf("overhead: %lldms of %lldms (all but the run and the "
		    "validation run)\n", json_integer_value(v),
		    json_integer_value(json_object_get(st, "total")));
}

/* The daemon's strings, escaped: a name is an operator's label. */
static void
print_environment(json_t *e)
{
	json_t	*v;

	if (json_is_string(e)) {
		printf("environment: %s\n", ctl_jvis(e));
		return;
	}
	if (!json_is_object(e))
		return;
	printf("image: %s", ctl_jvis(json_object_get(e, "image")));
	if ((v = json_object_get(e, "ref")) != NULL)
		printf(" (%s)", ctl_jvis(v));
	printf("\n");
	if (json_is_string(v = json_object_get(e, "toolchain")))
		printf("toolchain: %s\n", ctl_jvis(v));
}

/*
 * model: the gateway's totals, cost in US dollars; tenant: a label;
 * preview: its port, whose it is, live or not.
 */
static void
print_model(json_t *o)
{
	json_t		*m, *p;
	long long	 cost;

	if (json_object_get(o, "tenant") != NULL)
		printf("tenant: %s\n", ctl_jvis(json_object_get(o, "tenant")));
	if ((p = json_object_get(o, "preview")) != NULL)
		printf("preview: port %lld of %s, %s\n", (long long)
		    json_integer_value(json_object_get(p, "port")),
		    jstr(p, "service"), json_is_true(json_object_get(p,
		    "live")) ? "live" : "not live");
	if (!json_is_object(m = json_object_get(o, "model")))
		return;
	cost = json_integer_value(json_object_get(m, "cost_uusd"));
	printf("model: %lld requests (%lld refused, %lld estimated), tokens "
	    "%lld in, %lld out, cost %lld.%06lld USD\n",
	    json_integer_value(json_object_get(m, "requests")),
	    json_integer_value(json_object_get(m, "refused")),
	    json_integer_value(json_object_get(m, "estimated")),
	    json_integer_value(json_object_get(m, "tokens_in")),
	    json_integer_value(json_object_get(m, "tokens_out")),
	    cost / 1000000, cost % 1000000);
}

/* What operators attached (factoryctl attach), by digest. */
static void
print_evidence(json_t *a)
{
	json_t	*v;
	size_t	 i;

	if (json_array_size(a) == 0)
		return;
	printf("evidence:\n");
	json_array_foreach(a, i, v)
		printf("\t%s %lld bytes %s sha256 %s\n", jstr(v, "name"),
		    json_integer_value(json_object_get(v, "bytes")),
		    jstr(v, "type"), jstr(v, "sha256"));
}

static void
print_attempt(json_t *o)
{
	json_t		*u, *a;
	size_t		 i;
	json_t		*v;

	printf("id: %s\nstate: %s\n", jstr(o, "id"), jstr(o, "state"));
	if (json_object_get(o, "cohort") != NULL)
		printf("cohort: %s, variant %lld%s\n", jstr(o, "cohort"),
		    json_integer_value(json_object_get(o, "variant")),
		    json_is_true(json_object_get(o, "selected")) ?
		    ", selected" : "");
	if (json_object_get(o, "reason") != NULL)
		printf("reason: %s\n", jstr(o, "reason"));
	printf("repository: %s\nbaseline: %s\ntitle: %s\nmanifest: %s\n",
	    jstr(o, "repository"), jstr(o, "baseline"), jstr(o, "title"),
	    jstr(o, "manifest_digest"));
	print_environment(json_object_get(o, "environment"));
	print_stages(o);
	if (json_object_get(o, "exit") != NULL)
		printf("exit: wait status %lld\n",
		    json_integer_value(json_object_get(o, "exit")));
	u = json_object_get(o, "usage");
	printf("usage: cpu %.2fs, peak memory %lld bytes, pids %lld\n",
	    json_real_value(json_object_get(u, "cpu_seconds")),
	    json_integer_value(json_object_get(u, "peak_memory")),
	    json_integer_value(json_object_get(u, "pids")));
	print_model(o);
	if (json_object_get(o, "commit") != NULL)
		printf("commit: %s\n", jstr(o, "commit"));
	if ((a = json_object_get(o, "changes")) != NULL)
		json_array_foreach(a, i, v)
			printf("\t%s %s\n", jstr(v, "status"), jstr(v, "path"));
	if ((a = json_object_get(o, "findings")) != NULL &&
	    json_array_size(a) > 0) {
		printf("findings:\n");
		json_array_foreach(a, i, v)
			printf("\t%s\n", ctl_jvis(v));
	}
	if (json_object_get(o, "branch") != NULL)
		printf("branch: %s\n", jstr(o, "branch"));
	if (json_object_get(o, "pull") != NULL)
		printf("pull request: #%lld (%s)\n",
		    json_integer_value(json_object_get(o, "pull")),
		    jstr(o, "record"));
	print_evidence(json_object_get(o, "evidence"));
	printf("receipts: %lld\n",
	    json_integer_value(json_object_get(o, "receipts")));
}

/*
 * submit -w: follow the attempt, one line per state, until it ends.
 * Exits 0 only if it was published.
 */
/* The stage running now and how long it has taken, "run 1.2s". */
static void
current_stage(json_t *o, char *buf, size_t len)
{
	json_t		*st = json_object_get(o, "stages"), *v;
	int		 i;

	buf[0] = '\0';
	for (i = 0; stage_order[i] != NULL; i++)
		if (!stage_part(stage_order[i]) &&
		    json_is_integer(v = json_object_get(st, stage_order[i])))
			snprintf(buf, len, "%s %.1fs", stage_order[i],
			    json_integer_value(v) / 1000.0);
}

static int
wait_attempt(const char *id)
{
	json_t		*o;
	char		 last[64] = "", stage[64], st[64];
	int		 ret, ticks = 0;

	for (;;) {
		o = show(id);
		/* A copy: jstr's buffers are reused by the printing below. */
		strlcpy(st, jstr(o, "state"), sizeof(st));
		current_stage(o, stage, sizeof(stage));
		/* Each new state, and a progress line every 5 s. */
		if (strcmp(st, last) != 0 || ++ticks % 25 == 0) {
			if (!ctl_json) {
				printf("%s: %s (%s)", id, st, stage);
				if (strcmp(st, "verified") == 0 &&
				    !json_is_true(json_object_get(o,
				    "approved")))
					printf(", waiting for factoryctl "
					    "approve %s", id);
				printf("\n");
				fflush(stdout);
			}
			strlcpy(last, st, sizeof(last));
		}
		/* Torn down: whatever it ended as, it goes no further. */
		if (json_is_true(json_object_get(o, "terminated"))) {
			if (ctl_json)
				ctl_print_json(o);
			else
				print_attempt(o);
			ret = strcmp(st, "published") == 0 ? CTL_EXIT_OK :
			    CTL_EXIT_REFUSED;
			json_decref(o);
			return (ret);
		}
		json_decref(o);
		usleep(POLL_USEC);
	}
}

int
cmd_submit(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "tenant",		required_argument, NULL, 'T' },
		{ "priority",		required_argument, NULL, 'P' },
		{ "idempotency-key",	required_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 }
	};
	/* The fleet's options: tenant, class, key (IMSG_CTL_FLEET_SUBMIT). */
	const char	*fleet[3] = { "", "", "" };
	json_t		*o;
	char		*buf, id[ATTEMPT_ID_MAX];
	size_t		 nlen, len, off, i;
	ssize_t		 n;
	int		 ch, fd, wait = 0, size = 0, isfleet = 0;
	const char	*errstr;

	while ((ch = getopt_long(argc, argv, "n:w", longopts, NULL)) != -1) {
		switch (ch) {
		case 'T':
		case 'P':
		case 'K':
			fleet[ch == 'T' ? 0 : ch == 'P' ? 1 : 2] = optarg;
			if (strlen(optarg) == 0 || strlen(optarg) > 127)
				errx(CTL_EXIT_USAGE, "--%s: 1 to 127 bytes",
				    longopts[ch == 'T' ? 0 : ch == 'P' ? 1 :
				    2].name);
			isfleet = 1;
			break;
		case 'n':
			size = strtonum(optarg, 2, COHORT_SUBMIT_MAX, &errstr);
			if (errstr != NULL)
				errx(CTL_EXIT_USAGE, "-n %s: %s",
				    ctl_vis(optarg), errstr);
			break;
		case 'w':
			wait = 1;
			break;
		default:
			ctl_usage("submit");
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1)
		ctl_usage("submit");
	if ((fd = open(argv[0], O_RDONLY)) == -1) {
		warn("%s", ctl_vis(argv[0]));
		return (CTL_EXIT_USAGE);
	}
	if (isfleet && size > 0)
		errx(CTL_EXIT_USAGE, "submit: -n: no cohort in a fleet");
	/*
	 * -n: the size first (IMSG_CTL_SUBMIT_N); a fleet's options: each
	 * a string; then as without them.
	 */
	off = size > 0 ? sizeof(uint32_t) : 0;
	for (i = 0; isfleet && i < 3; i++)
		off += strlen(fleet[i]) + 1;
	nlen = off + strlen(argv[0]) + 1;
	if ((buf = malloc(nlen + MANIFEST_MAX + 1)) == NULL)
		err(CTL_EXIT_USAGE, NULL);
	if (size > 0)
		memcpy(buf, &(uint32_t){ htonl(size) }, sizeof(uint32_t));
	for (i = 0, len = 0; isfleet && i < 3; i++) {
		memcpy(buf + len, fleet[i], strlen(fleet[i]) + 1);
		len += strlen(fleet[i]) + 1;
	}
	memcpy(buf + off, argv[0], nlen - off);
	len = 0;
	while ((n = read(fd, buf + nlen + len, MANIFEST_MAX + 1 - len)) > 0)
		len += n;
	close(fd);
	if (n == -1 || len > MANIFEST_MAX) {
		warnx("%s: %s", ctl_vis(argv[0]), n == -1 ? strerror(errno) :
		    "larger than 60 KiB");
		return (CTL_EXIT_USAGE);
	}
	if (ctl_simple(0, isfleet ? IMSG_CTL_FLEET_SUBMIT : size > 0 ?
	    IMSG_CTL_SUBMIT_N : IMSG_CTL_SUBMIT, buf, nlen + len, &o) != 0)
		return (CTL_EXIT_REFUSED);
	free(buf);
	/* A cohort: -n, or the manifest's cohort:. */
	if (json_object_get(o, "cohort") != NULL)
		return (cohort_submitted(o, wait));
	strlcpy(id, jstr(o, "id"), sizeof(id));
	/* Queued in a fleet: it runs on whichever host claims it. */
	if (wait && json_object_get(o, "fleet") != NULL) {
		printf("%s\n", id);
		warnx("-w: %s is in the fleet's queue: it runs on the host "
		    "that claims it, not waited for here", id);
		json_decref(o);
		return (CTL_EXIT_REFUSED);
	}
	if (!wait && ctl_json)
		ctl_print_json(o);
	else if (!wait || !ctl_json)
		printf("%s\n", id);
	json_decref(o);
	if (!wait)
		return (CTL_EXIT_OK);
	fflush(stdout);
	return (wait_attempt(id));
}

int
cmd_list(int argc, char **argv)
{
	json_t	*o, *a;
	size_t	 i;

	if (argc != 1)
		ctl_usage("list");
	if (ctl_simple(1, IMSG_CTL_LIST, NULL, 0, &o) != 0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json) {
		ctl_print_json(o);
		json_decref(o);
		return (CTL_EXIT_OK);
	}
	printf("%-16s %-12s %-12s %s\n", "ATTEMPT", "STATE", "REPOSITORY",
	    "TITLE");
	json_array_foreach(json_object_get(o, "attempts"), i, a)
		printf("%-16s %-12s %-12s %s\n", jstr(a, "id"),
		    jstr(a, "state"), jstr(a, "repository"), jstr(a, "title"));
	cohort_print_list(json_object_get(o, "cohorts"));
	json_decref(o);
	return (CTL_EXIT_OK);
}

int
cmd_show(int argc, char **argv)
{
	json_t	*o;

	if (argc != 2)
		ctl_usage("show");
	o = show(argv[1]);
	if (ctl_json)
		ctl_print_json(o);
	else
		print_attempt(o);
	json_decref(o);
	return (CTL_EXIT_OK);
}

int
cmd_logs(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "service",	required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	json_t		*o;
	struct ibuf	*b;
	uint64_t	 off = 0;
	uint8_t		 which = 0;
	json_t		*d;
	const char	*service = NULL;
	char		*carry = NULL, *data;
	size_t		 ncarry = 0, len, keep;
	int		 ch, follow = 0, done, more, n;

	while ((ch = getopt_long(argc, argv, "fs:v", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			follow = 1;
			break;
		case 's':
			service = optarg;
			break;
		case 'v':
			which |= CTL_LOGS_VALIDATION;
			break;
		default:
			ctl_usage("logs");
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1)
		ctl_usage("logs");
	if (service != NULL) {
		if (strlen(service) >= SERVICE_NAMEMAX)
			errx(CTL_EXIT_USAGE, "%s: not a service name", service);
		which |= CTL_LOGS_SERVICE;
	}
	for (;;) {
		if ((b = ibuf_dynamic(64, 1024)) == NULL ||
		    ibuf_add_n64(b, off) == -1 || ibuf_add_n8(b, which) == -1 ||
		    ibuf_add(b, argv[0], strlen(argv[0]) + 1) == -1 ||
		    (service != NULL && ibuf_add(b, service,
		    strlen(service) + 1) == -1))
			err(CTL_EXIT_USAGE, "ibuf");
		if (ctl_simple(1, IMSG_CTL_LOGS, ibuf_data(b), ibuf_size(b),
		    &o) != 0)
			return (CTL_EXIT_REFUSED);
		ibuf_free(b);
		d = json_object_get(o, "data");
		more = json_string_length(d) > 0;
		if (ctl_json)
			ctl_print_json(o);
		else if (more) {
			/*
			 * The agent's own bytes, exact in the esc.h encoding:
			 * lines and tabs as they are, the rest in display
			 * form; a character cut between two answers waits for
			 * its end.  An answer that does not decode is the
			 * daemon's fault, and said so.
			 */
			len = ncarry + json_string_length(d);
			if ((data = realloc(carry, len)) == NULL)
				err(CTL_EXIT_USAGE, NULL);
			if ((n = esc_decode(json_string_value(d),
			    json_string_length(d), data + ncarry,
			    json_string_length(d))) == -1)
				errx(CTL_EXIT_REFUSED, "logs: an answer not in "
				    "the escaped form");
			len = ncarry + (size_t)n;
			keep = vis_tail(data, len);
			fputs(ctl_visn(data, len - keep, VIS_NL | VIS_TAB),
			    stdout);
			memmove(data, data + len - keep, keep);
			carry = data;
			ncarry = keep;
		}
		fflush(stdout);
		off = json_integer_value(json_object_get(o, "offset"));
		done = json_is_true(json_object_get(o, "done"));
		json_decref(o);
		if (more)
			continue;	/* more may be there already */
		if (!follow || done) {
			if (ncarry > 0)
				fputs(ctl_visn(carry, ncarry, 0), stdout);
			free(carry);
			return (CTL_EXIT_OK);
		}
		usleep(POLL_USEC);
	}
}

/*
 * cancel ID: an attempt under way ends cancelled; one kept for review
 * past its approval (approve -k) has its keep ended, nothing else.
 */
int
cmd_cancel(int argc, char **argv)
{
	json_t	*o;

	if (argc != 2)
		ctl_usage("cancel");
	if (ctl_simple(0, IMSG_CTL_CANCEL, argv[1], strlen(argv[1]) + 1,
	    &o) != 0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json)
		ctl_print_json(o);
	else if (json_is_true(json_object_get(o, "keep_ended")))
		printf("%s: its keep for review ended; %s\n", ctl_vis(argv[1]),
		    jstr(o, "state"));
	else
		printf("%s: cancelled\n", ctl_vis(argv[1]));
	json_decref(o);
	return (CTL_EXIT_OK);
}

/*
 * cmd [-OPT value] id: the id and the option's value (dflt if not
 * given, none if NULL) to factoryd as one request; its answer.
 */
static json_t *
id_opt_request(int argc, char **argv, const char *cmd, const char *opts,
    const char *dflt, uint32_t type)
{
	json_t		*o;
	struct ibuf	*b;
	const char	*val = dflt;
	int		 ch;

	while ((ch = getopt(argc, argv, opts)) != -1) {
		if (ch == '?' || ch == ':')
			ctl_usage(cmd);
		val = optarg;
	}
	argc -= optind;
	argv += optind;
	if (argc != 1)
		ctl_usage(cmd);
	if ((b = ibuf_dynamic(64, 1024)) == NULL ||
	    ibuf_add(b, argv[0], strlen(argv[0]) + 1) == -1 ||
	    (val != NULL && ibuf_add(b, val, strlen(val) + 1) == -1))
		err(CTL_EXIT_USAGE, "ibuf");
	if (ctl_simple(0, type, ibuf_data(b), ibuf_size(b), &o) != 0)
		o = NULL;
	ibuf_free(b);
	return (o);
}

/*
 * approve [-k duration] id: with -k, a preview of a service's lives on
 * past the approval and the publication for review, that long at most.
 */
int
cmd_approve(int argc, char **argv)
{
	json_t		*o;
	struct tm	*tm;
	time_t		 until;
	char		 when[32];

	if ((o = id_opt_request(argc, argv, "approve", "k:", NULL,
	    IMSG_CTL_APPROVE)) == NULL)
		return (CTL_EXIT_REFUSED);
	until = (time_t)json_integer_value(json_object_get(o, "kept_until"));
	if ((tm = gmtime(&until)) == NULL ||
	    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", tm) == 0)
		strlcpy(when, "-", sizeof(when));
	if (ctl_json)
		ctl_print_json(o);
	else if (until != 0)
		printf("%s: approved, its preview kept until %s\n",
		    jstr(o, "id"), when);
	else
		printf("%s: approved\n", jstr(o, "id"));
	json_decref(o);
	return (CTL_EXIT_OK);
}

int
cmd_receipts(int argc, char **argv)
{
	json_t	*o;

	if (argc != 2)
		ctl_usage("receipts");
	if (ctl_simple(1, IMSG_CTL_RECEIPTS, argv[1], strlen(argv[1]) + 1,
	    &o) != 0)
		return (CTL_EXIT_REFUSED);
	/*
	 * The export is data for verify, exact in a file or a pipe; on a
	 * terminal, a person reads it: in display form, lines kept.
	 */
	if (ctl_json)
		ctl_print_json(o);
	else if (isatty(STDOUT_FILENO))
		fputs(ctl_visn(json_string_value(json_object_get(o, "export")),
		    json_string_length(json_object_get(o, "export")), VIS_NL),
		    stdout);
	else
		fwrite(json_string_value(json_object_get(o, "export")), 1,
		    json_string_length(json_object_get(o, "export")), stdout);
	json_decref(o);
	return (CTL_EXIT_OK);
}

/*
 * Offline: needs no daemon.  -r and -V pin the receipt and verifier
 * key fingerprints the chain must be signed with; -a verifies an
 * attestation file instead (attest.c), -K pins its keys.
 */
int
cmd_verify(int argc, char **argv)
{
	struct receipt_summary	 sum;
	const char		*pin_r = NULL, *pin_v = NULL;
	char			 err[512], line[256], *pins[8];
	json_t			*e;
	FILE			*f;
	size_t			 npins = 0;
	int			 ch, ret, attest = 0;

	while ((ch = getopt(argc, argv, "aK:r:V:")) != -1) {
		switch (ch) {
		case 'a':
			attest = 1;
			break;
		case 'K':
			if (npins == sizeof(pins) / sizeof(pins[0]))
				ctl_usage("verify");
			pins[npins++] = optarg;
			break;
		case 'r':
			pin_r = optarg;
			break;
		case 'V':
			pin_v = optarg;
			break;
		default:
			ctl_usage("verify");
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1 || (attest && (pin_r != NULL || pin_v != NULL)) ||
	    (!attest && npins > 0))
		ctl_usage("verify");
	if (attest)
		return (attest_verify_file(argv[0], pins, npins));
	if (strcmp(argv[0], "-") == 0)
		f = stdin;
	else if ((f = fopen(argv[0], "r")) == NULL) {
		warn("%s", ctl_vis(argv[0]));
		return (CTL_EXIT_USAGE);
	}
	ret = receipt_verify_file(f, pin_r, pin_v, &sum, err, sizeof(err));
	if (f != stdin)
		fclose(f);
	if (ret == -1) {
		/* A message with bytes JSON cannot hold: in esc.h's form. */
		if (ctl_json)
			print_steal(json_pack("{s:b, s:o}", "ok", 0, "error",
			    (e = json_string(err)) != NULL ? e :
			    esc_json_str(err)));
		else
			printf("%s: %s\n", ctl_vis(argv[0]), ctl_vis(err));
		return (CTL_EXIT_REFUSED);
	}
	receipt_summary_str(&sum, line, sizeof(line));
	if (ctl_json)
		print_steal(json_pack("{s:b, s:s, s:I, s:s, s:s}", "ok", 1,
		    "attempt", sum.attempt, "receipts", (json_int_t)sum.count,
		    "last", sum.last_kind, "head", sum.head));
	else
		printf("%s\n", ctl_vis(line));
	return (CTL_EXIT_OK);
}

static void
print_orphans(json_t *list)
{
	json_t	*v;
	size_t	 i;

	if (json_array_size(list) == 0) {
		printf("no orphans\n");
		return;
	}
	printf("%-20s %-8s %-8s %s\n", "ID", "KIND", "REAP", "WHAT");
	json_array_foreach(list, i, v)
		printf("%-20s %-8s %-8s %s\n", jstr(v, "id"), jstr(v, "kind"),
		    json_is_true(json_object_get(v, "reapable")) ? "yes" :
		    "forge", jstr(v, "what"));
}

int
cmd_orphans(int argc, char **argv)
{
	json_t	*o;

	if (argc != 1)
		ctl_usage("orphans");
	if (ctl_simple(1, IMSG_CTL_ORPHANS, NULL, 0, &o) != 0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json)
		ctl_print_json(o);
	else
		print_orphans(json_object_get(o, "orphans"));
	json_decref(o);
	return (CTL_EXIT_OK);
}

int
cmd_reap(int argc, char **argv)
{
	json_t	*o, *v;
	size_t	 i;

	if (argc != 2)
		ctl_usage("reap");
	if (ctl_simple(0, IMSG_CTL_REAP, argv[1], strlen(argv[1]) + 1,
	    &o) != 0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json)
		ctl_print_json(o);
	else
		json_array_foreach(json_object_get(o, "reaped"), i, v)
			printf("%s: %s %s %s\n", ctl_vis(argv[1]),
			    jstr(v, "kind"),
			    jstr(v, "what"), json_is_true(json_object_get(v,
			    "removed")) ? "removed" : "NOT removed");
	json_decref(o);
	return (CTL_EXIT_OK);
}

int
cmd_reconcile(int argc, char **argv)
{
	json_t	*o, *v;
	size_t	 i;

	if (argc != 1)
		ctl_usage("reconcile");
	if (ctl_simple(0, IMSG_CTL_RECONCILE, NULL, 0, &o) != 0)
		return (CTL_EXIT_REFUSED);
	if (ctl_json) {
		ctl_print_json(o);
		json_decref(o);
		return (CTL_EXIT_OK);
	}
	json_array_foreach(json_object_get(o, "actions"), i, v)
		printf("%s: %s leftover %s %s\n", jstr(v, "attempt"),
		    jstr(v, "kind"), jstr(v, "what"), json_is_true(
		    json_object_get(v, "removed")) ? "removed" :
		    "NOT removed");
	if (json_array_size(json_object_get(o, "actions")) == 0)
		printf("nothing to tear down\n");
	print_orphans(json_object_get(o, "orphans"));
	json_array_foreach(json_object_get(o, "errors"), i, v)
		printf("warning: %s\n", ctl_jvis(v));
	json_decref(o);
	return (CTL_EXIT_OK);
}

/*
 * A token for the attempt's live preview: its URL, which a browser
 * opens once (factoryd.conf(5) preview).  It is printed, never kept:
 * whoever holds it may open the preview until it is taken.
 */
int
cmd_preview(int argc, char **argv)
{
	json_t	*o;

	if ((o = id_opt_request(argc, argv, "preview", "t:", "2h",
	    IMSG_CTL_PREVIEW)) == NULL)
		return (CTL_EXIT_REFUSED);
	if (ctl_json)
		ctl_print_json(o);
	else
		printf("%s\n", jstr(o, "url"));
	json_decref(o);
	return (CTL_EXIT_OK);
}

/*
 * A file kept in the attempt's evidence (a screenshot of its preview):
 * opened here, by the operator, and passed to factoryd, which reads
 * it, checks it and names it by digest in a receipt.  Opened without
 * waiting: a FIFO or a device is factoryd's to refuse, not to hang on.
 */
int
cmd_attach(int argc, char **argv)
{
	json_t		*o;
	struct ibuf	*b;
	struct stat	 st;
	const char	*name = NULL;
	char		 reason[1024];
	int		 ch, fd, s, ret;

	while ((ch = getopt(argc, argv, "n:")) != -1) {
		switch (ch) {
		case 'n':
			name = optarg;
			break;
		default:
			ctl_usage("attach");
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 2)
		ctl_usage("attach");
	if (name == NULL && (name = strrchr(argv[1], '/')) != NULL)
		name++;
	else if (name == NULL)
		name = argv[1];
	/* Its bytes go to factoryd, never the descriptor (evidence.c). */
	if ((fd = open(argv[1], O_RDONLY | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC)) == -1)
		err(CTL_EXIT_USAGE, "%s", ctl_vis(argv[1]));
	if (fstat(fd, &st) == -1)
		err(CTL_EXIT_USAGE, "%s", ctl_vis(argv[1]));
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "factoryctl: %s: %s: not a regular file\n",
		    ctl_vis(argv[0]), ctl_vis(name));
		return (CTL_EXIT_REFUSED);
	}
	if ((b = ibuf_dynamic(64, 1024)) == NULL ||
	    ibuf_add(b, argv[0], strlen(argv[0]) + 1) == -1 ||
	    ibuf_add(b, name, strlen(name) + 1) == -1)
		err(CTL_EXIT_USAGE, "ibuf");
	s = ctl_connect(0);
	ret = ctl_upload(s, IMSG_CTL_ATTACH, ibuf_data(b), ibuf_size(b), fd,
	    EVIDENCE_MAX_BYTES, IMSG_CTL_ATTACH_DATA, IMSG_CTL_ATTACH_END,
	    &o, reason, sizeof(reason));
	close(s);
	close(fd);
	ibuf_free(b);
	if (ret != 0) {
		fprintf(stderr, "factoryctl: %s\n", ctl_vis(reason));
		return (CTL_EXIT_REFUSED);
	}
	if (ctl_json)
		ctl_print_json(o);
	else
		printf("%s: %s attached: %lld bytes, %s, sha256 %s\n",
		    jstr(o, "id"), jstr(o, "name"), json_integer_value(
		    json_object_get(o, "bytes")), jstr(o, "type"),
		    jstr(o, "sha256"));
	json_decref(o);
	return (CTL_EXIT_OK);
}
