/*
 * A stand-in for factoryd's side of factory-fleet's channels: the real
 * child, under its real policy, against a real PostgreSQL, driven line
 * by line.  FLEET_DEADLINE_MS, if set, is each query's deadline, and
 * FLEET_ADOPT_AFTER_MS each host's adopt-after (else 0).
 *
 *	prog_fleetdrv uid binary
 *
 * Children are numbered 0 to MAXKIDS - 1, each started as uid with its
 * end of a socketpair on fd 3 (FLEET_DB in the environment is the
 * database).  Commands on stdin, one a line; one line printed for each
 * (queue and gauges: one for each row, and one for the end):
 *
 *	start N HOST [EPOCH [REPOS]]	"ready N EPOCH SCHEMA STATE"
 *				(REPOS: REPO[=FORGE],... or "-" for
 *				none; without one, "demo")
 *	serves N REPOS		what the host serves now, as start's
 *	tenant N NAME WEIGHT MAXRUN MAXQ [paused]
 *	submit N TENANT CLASS REPO [KEY [other]]	"submitted ID new|existing"
 *				(with a key, its manifest is the key's own,
 *				or another one with "other")
 *	claim N			"claimed ID TENANT CLASS EPOCH CLAIMS"
 *	outcome N ID EPOCH FROM TO [REASON]
 *	publish N ID EPOCH COMMIT FORGE PIN
 *				claimed -> publishing, pinned
 *	adopt N			"adopted ID EPOCH HOST COMMIT"
 *	renew N ID EPOCH
 *	cancel N ID [TENANT]	as one who acts for TENANT, else root
 *	heartbeat N
 *	rescue N		"rescued QUEUED DEAD PUBLISHING"
 *	sethost N HOST STATE SECONDS
 *	pause N TENANT|- 1|0 [NOTE]
 *	queue N [TENANT]	a line "queued ID TENANT CLASS REPO: WHY"
 *				for each row, then the result
 *	gauges N		a line "gauge TENANT CLASS WAITING" for
 *				each row, then the result
 *	race K M		M claims from children 0..K-1, each with one
 *				in flight: "race claimed= none= errors=
 *				dupes= ms= rate= p50= p99=" (ms)
 *	bad N			a CLAIM with a byte too many: the child
 *				must die of it ("exit N" or "signal N")
 *	stop N			close the channel: "exit N" or "signal N"
 *	await N			heartbeats every 100 ms until one is
 *				answered ok, at most a minute: that
 *				answer, "awaited ok STATE", or the last
 *	sh COMMAND		run by sh(1), done before the next: "sh N"
 *	pid N			"pid PID" of the child
 *
 * In a command, @id and @epoch are the last claim's (or adoption's),
 * @sub the last submission's id, @id1 and @epoch1 the claim before the
 * last, @epoch+1 and @epoch-1 the last claim's epoch moved by one.
 *
 * Any other answer: "result CODE TEXT".  Everything from a child is
 * decoded by libcommon/fleetmsg.c as the parent decodes it; what does
 * not decode is "baddecode REASON".
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <err.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crypto.h"
#include "factory.h"
#include "fleetmsg.h"
#include "imsg.h"

#define MAXKIDS		16
#define MAXRACE		100000

struct kid {
	pid_t		 pid;
	struct imsgbuf	 ib;
	int		 up;
	uint32_t	 reqid;
	double		 sent;		/* race: the claim in flight */
	int		 busy;
};

static struct kid	 kids[MAXKIDS];
static uid_t		 uid;
static const char	*binary;
static unsigned		 nonce;
static char		 last_id[2][ATTEMPT_ID_MAX], last_sub[ATTEMPT_ID_MAX];
static char		 last_epoch[2][24];

static void
out(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static double
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6);
}

static struct kid *
kid(const char *s)
{
	int	 n = s != NULL ? atoi(s) : -1;

	if (n < 0 || n >= MAXKIDS)
		errx(1, "no child %s", s != NULL ? s : "(none)");
	return (&kids[n]);
}

/* The next message, or 0 at EOF. */
static int
next(struct imsgbuf *ib, struct imsg *imsg)
{
	int	 n;

	while ((n = imsgbuf_get(ib, imsg)) == 0)
		if (imsgbuf_read(ib) != 1)
			return (0);
	if (n == -1)
		errx(1, "malformed imsg from the child");
	return (1);
}

static void
send_ibuf(struct kid *k, uint32_t type, struct ibuf *b)
{
	k->reqid++;
	if (b == NULL)
		errx(1, "a request that does not compose");
	if (imsg_compose_ibuf(&k->ib, type, k->reqid, 0, b) == -1 ||
	    imsgbuf_flush(&k->ib) == -1)
		err(1, "send");
}

static void
send_empty(struct kid *k, uint32_t type)
{
	k->reqid++;
	if (imsg_compose(&k->ib, type, k->reqid, 0, -1, NULL, 0) == -1 ||
	    imsgbuf_flush(&k->ib) == -1)
		err(1, "send");
}

static void
reap(struct kid *k)
{
	int	 status;

	imsgbuf_clear(&k->ib);
	close(k->ib.fd);
	if (waitpid(k->pid, &status, 0) == -1)
		err(1, "waitpid");
	if (WIFSIGNALED(status))
		out("signal %d", WTERMSIG(status));
	else
		out("exit %d", WEXITSTATUS(status));
	k->up = 0;
}

/* The last claim's, or adoption's: @id and @epoch. */
static void
remember(const char *id, uint64_t epoch)
{
	memcpy(last_id[1], last_id[0], sizeof(last_id[1]));
	memcpy(last_epoch[1], last_epoch[0], sizeof(last_epoch[1]));
	strlcpy(last_id[0], id, sizeof(last_id[0]));
	snprintf(last_epoch[0], sizeof(last_epoch[0]), "%llu",
	    (unsigned long long)epoch);
}

/*
 * Prints the answer; 1 if it was a claim, its id in id; 2 if it was a
 * row of a listing, more to come.
 */
static int
answer(struct kid *k, struct imsg *imsg, char *id, size_t idlen, int quiet)
{
	struct fleet_claimed	 c;
	struct fleet_submitted	 s;
	struct fleet_result	 r;
	struct fleet_rescued	 rs;
	struct fleet_adopt	 a;
	struct fleet_queuerow	 qr;
	struct fleet_gaugerow	 g;
	char			 e[256];

	if (imsg_get_id(imsg) != k->reqid) {
		out("baddecode answer %u to request %u", imsg_get_id(imsg),
		    k->reqid);
		return (-1);
	}
	switch (imsg_get_type(imsg)) {
	case IMSG_FLEET_CLAIMED:
		if (fleet_claimed_decode(imsg, &c, e, sizeof(e)) == -1)
			break;
		if (id != NULL)
			strlcpy(id, c.id, idlen);
		if (!quiet)
			out("claimed %s %s %u %llu %u", c.id, c.tenant,
			    c.class, (unsigned long long)c.epoch, c.claims);
		remember(c.id, c.epoch);
		free(c.manifest);
		return (1);
	case IMSG_FLEET_ADOPTED:
		if (fleet_adopt_decode(imsg, &a, e, sizeof(e)) == -1)
			break;
		out("adopted %s %llu %s %s", a.id, (unsigned long long)a.epoch,
		    a.host, a.commit);
		remember(a.id, a.epoch);
		fleet_adopt_free(&a);
		return (0);
	case IMSG_FLEET_QUEUEROW:
		if (fleet_queuerow_decode(imsg, &qr, e, sizeof(e)) == -1)
			break;
		out("queued %s %s %u %s: %s", qr.id, qr.tenant, qr.class,
		    qr.repo, qr.why);
		return (2);
	case IMSG_FLEET_GAUGEROW:
		if (fleet_gaugerow_decode(imsg, &g, e, sizeof(e)) == -1)
			break;
		out("gauge %s %u %u", g.tenant, g.class, g.queued);
		return (2);
	case IMSG_FLEET_SUBMITTED:
		if (fleet_submitted_decode(imsg, &s, e, sizeof(e)) == -1)
			break;
		out("submitted %s %s", s.id, s.created ? "new" : "existing");
		strlcpy(last_sub, s.id, sizeof(last_sub));
		return (0);
	case IMSG_FLEET_RESCUED:
		if (fleet_rescued_decode(imsg, &rs, e, sizeof(e)) == -1)
			break;
		out("rescued %u %u %u", rs.requeued, rs.dead, rs.adoptable);
		return (0);
	case IMSG_FLEET_RESULT:
		if (fleet_result_decode(imsg, &r, e, sizeof(e)) == -1)
			break;
		if (!quiet)
			out("result %s%s%s", fleet_code_name(r.code),
			    r.text[0] != '\0' ? " " : "", r.text);
		return (r.code == FLEET_NONE ? 0 : -1);
	default:
		snprintf(e, sizeof(e), "type %u", imsg_get_type(imsg));
	}
	out("baddecode %s", e);
	return (-1);
}

/* The answer, after the rows of a listing. */
static void
wait_answer(struct kid *k)
{
	struct imsg	 imsg;
	int		 rc;

	do {
		if (!next(&k->ib, &imsg)) {
			out("eof");
			reap(k);
			return;
		}
		rc = answer(k, &imsg, NULL, 0, 0);
		imsg_free(&imsg);
	} while (rc == 2);
}

/* REPO[=FORGE],... or "-": what a host serves, by position. */
static void
served(const char *list, uint32_t *n, char repos[][REPO_NAME_MAX],
    char forges[][FLEET_FORGE_MAX])
{
	char	*s, *p, *f, *fr;

	*n = 0;
	if (strcmp(list, "-") == 0)
		return;
	if ((s = fr = strdup(list)) == NULL)
		err(1, NULL);
	while ((p = strsep(&s, ",")) != NULL && *n < FLEET_REPOS_MAX) {
		if ((f = strchr(p, '=')) != NULL)
			*f++ = '\0';
		strlcpy(repos[*n], p, REPO_NAME_MAX);
		strlcpy(forges[*n], f != NULL ? f : "", FLEET_FORGE_MAX);
		(*n)++;
	}
	free(fr);
}

static void
start(char **w, int nw)
{
	struct kid		*k = kid(w[1]);
	struct fleet_hello	 h;
	struct fleet_ready	 r;
	struct imsg		 imsg;
	const char		*db = getenv("FLEET_DB");
	char			 e[256];
	extern char		**environ;
	char			*argv[] = { "factory-fleet", "-d", NULL };
	int			 sv[2], bin;

	if (db == NULL || nw < 3)
		errx(1, "start: FLEET_DB and start N HOST");
	memset(&h, 0, sizeof(h));
	strlcpy(h.conninfo, db, sizeof(h.conninfo));
	strlcpy(h.host, w[2], sizeof(h.host));
	h.epoch = nw > 3 ? strtoull(w[3], NULL, 10) : 0;
	h.slots = 8;
	h.lease_ms = 30000;
	h.deadline_ms = getenv("FLEET_DEADLINE_MS") != NULL ?
	    strtoul(getenv("FLEET_DEADLINE_MS"), NULL, 10) : 10000;
	h.adopt_after_ms = getenv("FLEET_ADOPT_AFTER_MS") != NULL ?
	    strtoul(getenv("FLEET_ADOPT_AFTER_MS"), NULL, 10) : 0;
	served(nw > 4 ? w[4] : "demo", &h.nrepos, h.repos, h.forges);
	/* Not inherited by what "sh" runs: only the child holds its end. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		err(1, "socketpair");
	switch (k->pid = fork()) {
	case -1:
		err(1, "fork");
	case 0:
		if (dup2(sv[1], PROC_PARENT_FD) == -1)
			err(1, "dup2");
		if ((bin = open(binary, O_PATH | O_CLOEXEC)) == -1)
			err(1, "%s", binary);
		if (setgroups(0, NULL) == -1 ||
		    setresgid(uid, uid, uid) == -1 ||
		    setresuid(uid, uid, uid) == -1)
			err(1, "drop to uid %u", (unsigned)uid);
		fexecve(bin, argv, environ);
		err(1, "%s", binary);
	}
	close(sv[1]);
	if (imsgbuf_init(&k->ib, sv[0]) == -1 ||
	    imsgbuf_set_maxsize(&k->ib, FACTORY_MAXIMSG) == -1)
		err(1, "imsgbuf_init");
	k->up = 1;
	k->reqid = 0;
	if (!next(&k->ib, &imsg) || imsg_get_type(&imsg) != IMSG_HELLO)
		errx(1, "no HELLO from the child");
	imsg_free(&imsg);
	if (imsg_compose_ibuf(&k->ib, IMSG_FLEET_HELLO, 0, 0,
	    fleet_hello_compose(&h)) == -1 || imsgbuf_flush(&k->ib) == -1)
		err(1, "hello");
	if (!next(&k->ib, &imsg)) {
		out("eof");
		reap(k);
		return;
	}
	if (imsg_get_type(&imsg) != IMSG_FLEET_READY ||
	    fleet_ready_decode(&imsg, &r, e, sizeof(e)) == -1)
		out("baddecode ready");
	else
		out("ready %s %llu %u %s", w[1], (unsigned long long)r.epoch,
		    r.schema, fleet_hstate_name(r.state));
	imsg_free(&imsg);
}

static void
submit(struct kid *k, char **w, int nw)
{
	struct fleet_submit	 s;
	uint8_t			 md[SHA256_LEN];
	char			 m[128];
	int			 i;

	memset(&s, 0, sizeof(s));
	if (nw < 5)
		errx(1, "submit N TENANT CLASS REPO [KEY]");
	strlcpy(s.tenant, w[2], sizeof(s.tenant));
	s.class = atoi(w[3]);
	strlcpy(s.repo, w[4], sizeof(s.repo));
	strlcpy(s.key, nw > 5 ? w[5] : "", sizeof(s.key));
	s.max_claims = 3;
	if (nw > 5)
		snprintf(m, sizeof(m), "argv: [true]\nkey: %s%s\n", w[5],
		    nw > 6 ? " other" : "");
	else
		snprintf(m, sizeof(m), "argv: [true]\nnonce: %u-%u\n",
		    (unsigned)getpid(), nonce++);
	s.manifest = m;
	sha256(m, strlen(m), md);
	strlcpy(s.digest, "sha256:", sizeof(s.digest));
	for (i = 0; i < SHA256_LEN; i++)
		snprintf(s.digest + 7 + 2 * i, 3, "%02x", md[i]);
	send_ibuf(k, IMSG_FLEET_SUBMIT, fleet_submit_compose(&s));
	wait_answer(k);
}

static void
write_req(struct kid *k, uint32_t type, char **w, int nw)
{
	struct fleet_write	 fw;

	memset(&fw, 0, sizeof(fw));
	if (nw < 3)
		errx(1, "a write needs an attempt id");
	strlcpy(fw.id, w[2], sizeof(fw.id));
	if (nw > 3)
		fw.epoch = strtoull(w[3], NULL, 10);
	if (type == IMSG_FLEET_OUTCOME) {
		if (nw < 6)
			errx(1, "outcome N ID EPOCH FROM TO [REASON]");
		fw.from = fleet_state_byname(w[4]);
		fw.to = fleet_state_byname(w[5]);
		strlcpy(fw.reason, nw > 6 ? w[6] : "", sizeof(fw.reason));
	}
	send_ibuf(k, type, fleet_write_compose(&fw));
	wait_answer(k);
}

/* The publishing mark with its pin, as factoryd's publication sends it. */
static void
publish(struct kid *k, char **w, int nw)
{
	struct fleet_write	 fw;

	memset(&fw, 0, sizeof(fw));
	if (nw < 7)
		errx(1, "publish N ID EPOCH COMMIT FORGE PIN");
	strlcpy(fw.id, w[2], sizeof(fw.id));
	fw.epoch = strtoull(w[3], NULL, 10);
	fw.from = FLEET_CLAIMED;
	fw.to = FLEET_PUBLISHING;
	strlcpy(fw.commit, w[4], sizeof(fw.commit));
	strlcpy(fw.forge, w[5], sizeof(fw.forge));
	fw.pin = w[6];
	send_ibuf(k, IMSG_FLEET_OUTCOME, fleet_write_compose(&fw));
	wait_answer(k);
}

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

static int
cmp_str(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* M claims, K children each with one in flight. */
static void
race(int nk, int m)
{
	struct pollfd	 pfd[MAXKIDS];
	struct imsg	 imsg;
	double		*lat, t0;
	char		**ids, id[ATTEMPT_ID_MAX];
	int		 i, n, sent = 0, got = 0, claimed = 0, none = 0;
	int		 errors = 0, dupes = 0, rc;

	if (nk < 1 || nk > MAXKIDS || m < 1 || m > MAXRACE)
		errx(1, "race K M");
	if ((lat = calloc(m, sizeof(*lat))) == NULL ||
	    (ids = calloc(m, sizeof(*ids))) == NULL)
		err(1, NULL);
	t0 = now_ms();
	for (i = 0; i < nk && sent < m; i++, sent++) {
		kids[i].sent = now_ms();
		send_empty(&kids[i], IMSG_FLEET_CLAIM);
	}
	while (got < sent) {
		for (i = 0; i < nk; i++) {
			pfd[i].fd = kids[i].ib.fd;
			pfd[i].events = POLLIN;
		}
		if (poll(pfd, nk, -1) == -1)
			err(1, "poll");
		for (i = 0; i < nk; i++) {
			if ((pfd[i].revents & (POLLIN | POLLHUP)) == 0)
				continue;
			if ((n = imsgbuf_read(&kids[i].ib)) != 1)
				errx(1, "race: child %d closed", i);
			while ((n = imsgbuf_get(&kids[i].ib, &imsg)) == 1) {
				lat[got] = now_ms() - kids[i].sent;
				rc = answer(&kids[i], &imsg, id, sizeof(id), 1);
				imsg_free(&imsg);
				got++;
				if (rc == 1) {
					if ((ids[claimed++] = strdup(id)) ==
					    NULL)
						err(1, NULL);
				} else if (rc == 0)
					none++;
				else
					errors++;
				if (sent < m) {
					sent++;
					kids[i].sent = now_ms();
					send_empty(&kids[i], IMSG_FLEET_CLAIM);
				}
			}
			if (n == -1)
				errx(1, "malformed imsg from child %d", i);
		}
	}
	t0 = now_ms() - t0;
	qsort(lat, got, sizeof(*lat), cmp_double);
	qsort(ids, claimed, sizeof(*ids), cmp_str);
	for (i = 1; i < claimed; i++)
		if (strcmp(ids[i - 1], ids[i]) == 0)
			dupes++;
	out("race claimed=%d none=%d errors=%d dupes=%d ms=%.0f rate=%.0f "
	    "p50=%.2f p99=%.2f", claimed, none, errors, dupes, t0,
	    got * 1000.0 / t0, lat[got / 2], lat[(got * 99) / 100]);
	for (i = 0; i < claimed; i++)
		free(ids[i]);
	free(ids);
	free(lat);
}

/* The link made again after a cut: a heartbeat answered ok. */
static void
await(struct kid *k)
{
	struct fleet_result	 r;
	struct imsg		 imsg;
	char			 e[256];
	int			 i;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < 600; i++) {
		send_empty(k, IMSG_FLEET_HEARTBEAT);
		if (!next(&k->ib, &imsg)) {
			out("eof");
			reap(k);
			return;
		}
		if (imsg_get_type(&imsg) != IMSG_FLEET_RESULT ||
		    fleet_result_decode(&imsg, &r, e, sizeof(e)) == -1) {
			imsg_free(&imsg);
			out("baddecode await");
			return;
		}
		imsg_free(&imsg);
		if (r.code == FLEET_OK) {
			out("awaited ok %s", r.text);
			return;
		}
		usleep(100 * 1000);
	}
	out("result %s %s", fleet_code_name(r.code), r.text);
}

static void
command(char **w, int nw)
{
	struct fleet_tenant	 t;
	struct fleet_setstate	 st;
	struct fleet_cancel	 kc;
	struct fleet_serves	 v;
	struct fleet_scope	 sc;
	struct kid		*k;
	const char		*c = w[0];
	static char		 shifted[24];
	int			 i;

	for (i = 1; i < nw; i++) {
		if (strcmp(w[i], "@id") == 0)
			w[i] = last_id[0];
		else if (strcmp(w[i], "@epoch") == 0)
			w[i] = last_epoch[0];
		else if (strcmp(w[i], "@id1") == 0)
			w[i] = last_id[1];
		else if (strcmp(w[i], "@epoch1") == 0)
			w[i] = last_epoch[1];
		else if (strcmp(w[i], "@sub") == 0)
			w[i] = last_sub;
		else if (strcmp(w[i], "@epoch+1") == 0 ||
		    strcmp(w[i], "@epoch-1") == 0) {
			snprintf(shifted, sizeof(shifted), "%llu",
			    strtoull(last_epoch[0], NULL, 10) +
			    (w[i][6] == '+' ? 1 : -1));
			w[i] = shifted;
		}
	}

	if (strcmp(c, "start") == 0) {
		start(w, nw);
		return;
	}
	if (strcmp(c, "race") == 0) {
		race(nw > 1 ? atoi(w[1]) : 0, nw > 2 ? atoi(w[2]) : 0);
		return;
	}
	k = kid(nw > 1 ? w[1] : NULL);
	if (!k->up)
		errx(1, "%s: child %s is not running", c, w[1]);
	if (strcmp(c, "tenant") == 0) {
		if (nw < 6)
			errx(1, "tenant N NAME WEIGHT MAXRUN MAXQ [paused]");
		memset(&t, 0, sizeof(t));
		strlcpy(t.name, w[2], sizeof(t.name));
		t.weight = atoi(w[3]);
		t.max_running = atoi(w[4]);
		t.max_queued = atoi(w[5]);
		t.paused = nw > 6 && strcmp(w[6], "paused") == 0;
		send_ibuf(k, IMSG_FLEET_TENANT, fleet_tenant_compose(&t));
		wait_answer(k);
	} else if (strcmp(c, "submit") == 0)
		submit(k, w, nw);
	else if (strcmp(c, "claim") == 0) {
		send_empty(k, IMSG_FLEET_CLAIM);
		wait_answer(k);
	} else if (strcmp(c, "heartbeat") == 0) {
		send_empty(k, IMSG_FLEET_HEARTBEAT);
		wait_answer(k);
	} else if (strcmp(c, "sethost") == 0 || strcmp(c, "pause") == 0) {
		if (nw < (c[0] == 's' ? 5 : 4))
			errx(1, "sethost N HOST STATE SECONDS, pause N T 1|0");
		memset(&st, 0, sizeof(st));
		st.what = c[0] == 's' ? FLEET_SET_HOST : FLEET_SET_PAUSE;
		if (strcmp(w[2], "-") != 0)
			strlcpy(st.name, w[2], sizeof(st.name));
		st.state = c[0] == 's' ? fleet_hstate_byname(w[3]) : atoi(w[3]);
		if (c[0] == 's')
			st.deadline_s = atoi(w[4]);
		else if (nw > 4)
			strlcpy(st.note, w[4], sizeof(st.note));
		send_ibuf(k, IMSG_FLEET_SETSTATE, fleet_setstate_compose(&st));
		wait_answer(k);
	} else if (strcmp(c, "rescue") == 0) {
		send_empty(k, IMSG_FLEET_RESCUE);
		wait_answer(k);
	} else if (strcmp(c, "outcome") == 0)
		write_req(k, IMSG_FLEET_OUTCOME, w, nw);
	else if (strcmp(c, "renew") == 0)
		write_req(k, IMSG_FLEET_RENEW, w, nw);
	else if (strcmp(c, "publish") == 0)
		publish(k, w, nw);
	else if (strcmp(c, "adopt") == 0) {
		send_empty(k, IMSG_FLEET_ADOPT);
		wait_answer(k);
	} else if (strcmp(c, "gauges") == 0) {
		send_empty(k, IMSG_FLEET_GAUGES);
		wait_answer(k);
	} else if (strcmp(c, "serves") == 0) {
		if (nw < 3)
			errx(1, "serves N REPO[=FORGE],...|-");
		memset(&v, 0, sizeof(v));
		served(w[2], &v.nrepos, v.repos, v.forges);
		send_ibuf(k, IMSG_FLEET_SERVES, fleet_serves_compose(&v));
		wait_answer(k);
	} else if (strcmp(c, "queue") == 0) {
		/* queue N [TENANT]: as one who acts for it, or root */
		memset(&sc, 0, sizeof(sc));
		sc.all = nw < 3;
		if (nw > 2) {
			sc.ntenants = 1;
			strlcpy(sc.tenants[0], w[2], sizeof(sc.tenants[0]));
		}
		send_ibuf(k, IMSG_FLEET_QUEUE, fleet_scope_compose(&sc));
		wait_answer(k);
	}
	else if (strcmp(c, "cancel") == 0) {
		/* cancel N ID [TENANT]: as one who acts for it, or root */
		if (nw < 3)
			errx(1, "cancel N ID [TENANT]");
		memset(&kc, 0, sizeof(kc));
		strlcpy(kc.id, w[2], sizeof(kc.id));
		kc.all = nw < 4;
		if (nw > 3) {
			kc.ntenants = 1;
			strlcpy(kc.tenants[0], w[3], sizeof(kc.tenants[0]));
		}
		send_ibuf(k, IMSG_FLEET_CANCEL, fleet_cancel_compose(&kc));
		wait_answer(k);
	}
	else if (strcmp(c, "bad") == 0) {
		k->reqid++;
		if (imsg_compose(&k->ib, IMSG_FLEET_CLAIM, k->reqid, 0, -1,
		    "x", 1) == -1 || imsgbuf_flush(&k->ib) == -1)
			err(1, "send");
		reap(k);
	} else if (strcmp(c, "stop") == 0)
		reap(k);
	else if (strcmp(c, "await") == 0)
		await(k);
	else if (strcmp(c, "pid") == 0)
		out("pid %d", (int)k->pid);
	else
		errx(1, "unknown command %s", c);
}

int
main(int argc, char *argv[])
{
	char	 line[1024], *w[16], *p, *s;
	int	 nw, i;

	if (argc != 3)
		errx(2, "usage: prog_fleetdrv uid binary");
	uid = strtoul(argv[1], NULL, 10);
	binary = argv[2];
	signal(SIGPIPE, SIG_IGN);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "sh ", 3) == 0) {
			out("sh %d", system(line + 3));
			continue;
		}
		nw = 0;
		s = line;
		while ((p = strsep(&s, " \t")) != NULL && nw < 16)
			if (*p != '\0')
				w[nw++] = p;
		if (nw == 0 || w[0][0] == '#')
			continue;
		command(w, nw);
	}
	for (i = 0; i < MAXKIDS; i++)
		if (kids[i].up) {
			imsgbuf_clear(&kids[i].ib);
			close(kids[i].ib.fd);
			waitpid(kids[i].pid, NULL, 0);
		}
	return (0);
}
