/*
 * A hostile stand-in for a child process, or a hostile control
 * client.  As a child (installed in a test libexec under a child's
 * name), it reads its misbehaviour from "NAME.mode" beside its
 * binary: "type" sends a valid HELLO then an unknown imsg type,
 * "huge" a header whose length is beyond any maximum, "hello2" two
 * HELLOs; the modes of the table below send one malformed message of
 * a kind that child may send (msg.h), and the "verdict-*" modes play
 * a verifier that signs, with the real verifier key, a verdict whose
 * accepted flag contradicts its findings; "validate-twice" asks for
 * the validation run twice in a row; "preview-opened" plays a preview
 * child that says a token was taken which the parent never minted,
 * "preview-health" one whose health answer has an HTTP status of 1000.
 * As "prog_badchild ctl
 * SOCKET" it connects to a control socket and sends a
 * truncated-then-invalid request.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "factory.h"
#include "imsg.h"
#include "msg.h"
#include "msgjson.h"
#include "previewmsg.h"
#include "receipt.h"
#include "wire.h"

static void
send_msg(int fd, uint32_t type, uint32_t len, const void *data, size_t dlen)
{
	struct imsg_hdr	 hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.type = type;
	hdr.len = len;
	hdr.pid = getpid();
	if (write(fd, &hdr, sizeof(hdr)) != sizeof(hdr))
		err(1, "write");
	if (dlen > 0 && write(fd, data, dlen) != (ssize_t)dlen)
		err(1, "write");
}

static void
hello(int fd)
{
	const char	*t = "promises: (hostile test child)";

	send_msg(fd, IMSG_HELLO, sizeof(struct imsg_hdr) + strlen(t) + 1, t,
	    strlen(t) + 1);
}

/* A payload as the children send it: the bytes and a NUL. */
static void
send_str(int fd, uint32_t type, const char *s)
{
	send_msg(fd, type, sizeof(struct imsg_hdr) + strlen(s) + 1, s,
	    strlen(s) + 1);
}

#define HEX40	"0123456789abcdef0123456789abcdef01234567"
#define HEX64	HEX40 "0123456789abcdef01234567"

/*
 * One malformed message of each kind a child may send: after a valid
 * HELLO, the parent must kill the child and name what was wrong.  The
 * payload is spelled as JSON and laid out on the wire by msgjson.c
 * (a missing field cuts the payload there, an unknown one is left
 * over, a string's length is its JSON length).
 */
static const struct badmsg {
	const char	*mode;
	uint32_t	 type;
	enum msg_kind	 kind;
	const char	*payload;	/* NULL: see badmsg_raw() */
} badmsgs[] = {
	{ "resolve-both", IMSG_RESOLVE, MSG_RESOLVED,
	    "{\"req\":1,\"oid\":\"" HEX40 "\",\"error\":\"x\"}" },
	{ "resolve-missing", IMSG_RESOLVE, MSG_RESOLVED,
	    "{\"oid\":\"" HEX40 "\"}" },
	{ "ready-missing", IMSG_READY, MSG_READY, "{\"id\":\"a-1\"}" },
	{ "ready-extra", IMSG_READY, MSG_READY,
	    "{\"id\":\"a-1\",\"epoch\":1,\"x\":1}" },
	{ "ready-kind", IMSG_READY, MSG_READY, NULL },
	{ "ready-trailing", IMSG_READY, MSG_READY, NULL },
	{ "ready-nul", IMSG_READY, MSG_READY,
	    "{\"id\":\"a-1\\u0000\",\"epoch\":1}" },
	{ "ready-overlong", IMSG_READY, MSG_READY, NULL },
	{ "result-raw-path", IMSG_RESULT, MSG_RESULT, "{\"id\":\"a-1\","
	    "\"epoch\":1,\"commit\":\"\",\"tree\":\"\",\"bundle_sha256\":\"\","
	    "\"bundle_size\":0,\"changes\":[],\"changes_total\":0,"
	    "\"rejects\":[\"\\u001b[2K\"],\"rejects_total\":1}" },
	{ "result-hidden-reject", IMSG_RESULT, MSG_RESULT, "{\"id\":\"a-1\","
	    "\"epoch\":1,\"commit\":\"" HEX40 "\",\"tree\":\"" HEX40 "\","
	    "\"bundle_sha256\":\"" HEX64 "\",\"bundle_size\":0,"
	    "\"changes\":[],\"changes_total\":0,\"rejects\":[],"
	    "\"rejects_total\":1}" },
	{ "result-utf8", IMSG_RESULT, MSG_RESULT, NULL },
	{ "error-missing", IMSG_ERROR, MSG_ERROR, "{\"error\":\"x\"}" },
	{ "error-unescaped", IMSG_ERROR, MSG_ERROR,
	    "{\"id\":\"a-1\",\"error\":\"\\n\"}" },
	{ "heartbeat-payload", IMSG_HEARTBEAT, MSG_KIND_MAX, NULL },
	{ "hello-raw", IMSG_HELLO, MSG_KIND_MAX, NULL },
	{ "validate-missing", IMSG_VALIDATE_REQ, MSG_VALIDATE_REQ, "{}" },
	{ "verdict-type", IMSG_VERDICT, MSG_VERDICT,
	    "{\"id\":\"a-1\",\"receipt\":1}" },
	{ "published-missing", IMSG_PUBLISHED, MSG_PUBLISHED,
	    "{\"id\":\"a-1\",\"branch\":\"b\",\"number\":1,\"reused\":false}" },
	{ "published-escape", IMSG_PUBLISHED, MSG_PUBLISHED, "{\"id\":\"a-1\","
	    "\"branch\":\"\\u001b]0;x\\u0007\",\"number\":1,\"record\":\"r\","
	    "\"reused\":false}" },
	{ "published-bool", IMSG_PUBLISHED, MSG_PUBLISHED, "{\"id\":\"a-1\","
	    "\"branch\":\"b\",\"number\":1,\"record\":\"r\",\"reused\":7}" },
};

/* A payload laid out from its JSON, junk after it. */
static void
send_wire(uint32_t type, enum msg_kind k, json_t *o, const char *junk,
    size_t njunk)
{
	char	*p;
	size_t	 len;

	if ((p = msgjson_encode(k, o, &len)) == NULL ||
	    (p = realloc(p, len + njunk)) == NULL)
		errx(1, "cannot lay out a payload");
	memcpy(p + len, junk, njunk);
	send_msg(PROC_PARENT_FD, type, sizeof(struct imsg_hdr) + len + njunk,
	    p, len + njunk);
	free(p);
}

/* The ones JSON text cannot say. */
static void
badmsg_raw(const struct badmsg *b)
{
	static const char	 hello[] = "promises: \377\033[2K";
	/* The kind, an id "of" 200 bytes with three there, no epoch. */
	static const char	 overlong[] = "\x03\0\0\0\xc8" "a-1";
	json_t			*o;

	o = json_pack("{s:s, s:i}", "id", "a-1", "epoch", 1);
	if (strcmp(b->mode, "ready-trailing") == 0)
		send_wire(b->type, MSG_READY, o, "\0junk", 5);
	else if (strcmp(b->mode, "ready-kind") == 0)
		/* A READY laid out as a RESULT says it is one. */
		send_wire(b->type, MSG_RESULT, o, NULL, 0);
	else if (strcmp(b->mode, "ready-overlong") == 0)
		send_msg(PROC_PARENT_FD, b->type, sizeof(struct imsg_hdr) +
		    sizeof(overlong) - 1, overlong, sizeof(overlong) - 1);
	else if (strcmp(b->mode, "result-utf8") == 0) {
		json_decref(o);
		o = json_pack("{s:s, s:i, s:s, s:s, s:s, s:i, s:[], s:i, "
		    "s:[o], s:i}", "id", "a-1", "epoch", 1, "commit", "",
		    "tree", "", "bundle_sha256", "", "bundle_size", 0,
		    "changes", "changes_total", 0, "rejects",
		    json_stringn_nocheck("src/\377.txt: outside the scope",
		    28), "rejects_total", 1);
		send_wire(b->type, MSG_RESULT, o, NULL, 0);
	} else if (strcmp(b->mode, "heartbeat-payload") == 0)
		send_str(PROC_PARENT_FD, b->type, "{}");
	else
		send_str(PROC_PARENT_FD, b->type, hello);
	json_decref(o);
}

static int
badmsg(const char *mode)
{
	const struct badmsg	*b;
	json_t			*o;
	size_t			 i;

	for (i = 0; i < sizeof(badmsgs) / sizeof(badmsgs[0]); i++) {
		b = &badmsgs[i];
		if (strcmp(b->mode, mode) != 0)
			continue;
		if (b->type != IMSG_HELLO)
			hello(PROC_PARENT_FD);
		if (b->payload == NULL) {
			badmsg_raw(b);
			return (0);
		}
		if ((o = json_loads(b->payload, JSON_ALLOW_NUL, NULL)) == NULL)
			errx(1, "%s: not JSON", mode);
		send_wire(b->type, b->kind, o, NULL, 0);
		json_decref(o);
		return (0);
	}
	return (-1);
}

/*
 * A verifier with the real key that signs a lie: the verdict facts of
 * each mode contradict themselves.  The parent must refuse the verdict
 * and kill the verifier, whatever the signature.
 */
static void
lying_fields(const char *mode, const struct msg_verify *v,
    struct msg_verdict *m)
{
	static char	*listed[] = { "src/\\xff.txt: GitHub token on line 1" };

	m->accepted = 1;
	strlcpy(m->baseline, v->baseline, sizeof(m->baseline));
	strlcpy(m->commit, v->commit, sizeof(m->commit));
	strlcpy(m->tree, v->commit, sizeof(m->tree));
	strlcpy(m->bundle_sha256, v->bundle_sha256, sizeof(m->bundle_sha256));
	strlcpy(m->manifest_digest, v->digest, sizeof(m->manifest_digest));
	m->validated = m->vpassed = 1;
	/* The baseline's tree checked and the attempt's environment, as
	 * an honest verifier says: each mode's lie is the only one. */
	strlcpy(m->baseline_tree, v->baseline, sizeof(m->baseline_tree));
	strlcpy(m->pristine, "same", sizeof(m->pristine));
	strlcpy(m->env_image, v->image, sizeof(m->env_image));
	if (v->image[0] != '\0')
		strlcpy(m->env_toolchain, v->toolchain,
		    sizeof(m->env_toolchain));
	if (strcmp(mode, "verdict-hidden-finding") == 0)
		/* The headline: a finding counted, dropped from the list. */
		m->findings_total = 1;
	else if (strcmp(mode, "verdict-listed-finding") == 0) {
		m->findings_total = m->nfindings = 1;
		m->findings = listed;
	} else if (strcmp(mode, "verdict-unvalidated") == 0)
		m->validated = m->vpassed = 0;
	else if (strcmp(mode, "verdict-no-count") == 0) {
		/* A finding listed, none counted. */
		m->nfindings = 1;
		m->findings = listed;
	} else if (strcmp(mode, "verdict-typed-differ") == 0)
		;	/* the lie is in what it signs: lying_verifier() */
	else if (strcmp(mode, "verdict-no-environment") == 0)
		/* The image, silent on the toolchain frozen with it. */
		m->env_toolchain[0] = '\0';
	else if (strcmp(mode, "verdict-other-environment") == 0) {
		/* Passed on the host's root, not the attempt's image. */
		m->env_image[0] = '\0';
		m->env_toolchain[0] = '\0';
	} else
		errx(1, "unknown mode %s", mode);
}

static int
lying_verifier(const char *mode, int argc, char *argv[])
{
	struct imsgbuf		 ib;
	struct imsg		 imsg;
	struct msg_verify	 v;
	struct msg_verdict	 out;
	EVP_PKEY		*key = NULL;
	char			 e[512], *s;
	size_t			 len;
	ssize_t			 n;
	int			 i;

	for (i = 1; i < argc; i++)
		if (strncmp(argv[i], "verifier_key=", 13) == 0 &&
		    (key = ed25519_load_pem(argv[i] + 13, e,
		    sizeof(e))) == NULL)
			errx(1, "%s", e);
	if (key == NULL)
		errx(1, "no verifier_key");
	hello(PROC_PARENT_FD);
	if (imsgbuf_init(&ib, PROC_PARENT_FD) == -1)
		err(1, "imsgbuf_init");
	imsgbuf_allow_fdpass(&ib);
	for (;;) {
		if ((n = imsgbuf_get(&ib, &imsg)) == -1)
			errx(1, "bad imsg");
		if (n == 0) {
			if (imsgbuf_read(&ib) != 1)
				return (0);
			continue;
		}
		if (imsg_get_type(&imsg) == IMSG_VERIFY)
			break;
		imsg_free(&imsg);
	}
	if (msg_get(&imsg, MSG_VERIFY, &v, e, sizeof(e)) == -1)
		errx(1, "%s", e);
	if (strcmp(mode, "validate-twice") == 0) {
		struct msg_validate_req	 rq;

		memset(&rq, 0, sizeof(rq));
		strlcpy(rq.id, v.id, sizeof(rq.id));
		if ((s = msg_encode(MSG_VALIDATE_REQ, &rq, &len, e,
		    sizeof(e))) == NULL)
			errx(1, "%s", e);
		for (i = 0; i < 2; i++)
			send_msg(PROC_PARENT_FD, IMSG_VALIDATE_REQ,
			    sizeof(struct imsg_hdr) + len, s, len);
		return (0);
	}
	memset(&out, 0, sizeof(out));
	strlcpy(out.id, v.id, sizeof(out.id));
	out.epoch = v.epoch;
	lying_fields(mode, &v, &out);
	/* It signs a finding counted, and types a clean verdict. */
	if (strcmp(mode, "verdict-typed-differ") == 0)
		out.findings_total = 1;
	if (receipt_verdict_sign(&out, v.seq, v.prev, key, time(NULL)) == -1)
		errx(1, "receipt_verdict_sign");
	if (strcmp(mode, "verdict-typed-differ") == 0)
		out.findings_total = 0;
	if ((s = msg_encode(MSG_VERDICT, &out, &len, e, sizeof(e))) == NULL)
		errx(1, "%s", e);
	send_msg(PROC_PARENT_FD, IMSG_VERDICT, sizeof(struct imsg_hdr) + len,
	    s, len);
	return (0);
}

static int
ctl(const char *path)
{
	struct sockaddr_un	 sun;
	int			 s;
	char			 junk[64];

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, path, sizeof(sun.sun_path));
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(2, "%s", path);
	send_msg(s, IMSG_CTL_STATUS, 0x7ffffff0, NULL, 0);
	/* The daemon must close us: read returns 0. */
	if (read(s, junk, sizeof(junk)) != 0)
		errx(1, "control socket still open after garbage");
	printf("closed\n");
	return (0);
}

/* A preview child's lies (previewmsg.h), after its HELLO. */
static int
lying_preview(const char *mode)
{
	struct ibuf	*b;

	hello(PROC_PARENT_FD);
	if (strcmp(mode, "preview-opened") == 0)
		b = preview_opened_compose("a-20261207-0001",
		    "0123456789abcdef0123456789abcdef");
	else if (strcmp(mode, "preview-health") == 0) {
		/* Composed by hand: the codec refuses a status of 1000. */
		if ((b = ibuf_dynamic(64, 1024)) == NULL ||
		    m_add_str(b, "a-20261207-0001") == -1 ||
		    ibuf_add_n32(b, 1000) == -1 || m_add_str(b, "x") == -1)
			errx(1, "cannot lay out a payload");
	} else
		return (-1);
	if (b == NULL)
		errx(1, "cannot lay out a payload");
	send_msg(PROC_PARENT_FD, strcmp(mode, "preview-opened") == 0 ?
	    IMSG_PREVIEW_OPENED : IMSG_PREVIEW_HEALTH,
	    sizeof(struct imsg_hdr) + ibuf_size(b), ibuf_data(b),
	    ibuf_size(b));
	ibuf_free(b);
	return (0);
}

int
main(int argc, char *argv[])
{
	char	 self[PATH_MAX], mode[64] = "";
	FILE	*f;
	ssize_t	 n;
	char	 buf[256];

	if (argc == 3 && strcmp(argv[1], "ctl") == 0)
		return (ctl(argv[2]));

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) == -1)
		err(1, "readlink");
	self[n] = '\0';
	strlcat(self, ".mode", sizeof(self));
	if ((f = fopen(self, "r")) == NULL)
		err(1, "%s", self);
	if (fgets(mode, sizeof(mode), f) == NULL)
		errx(1, "%s: empty", self);
	fclose(f);
	mode[strcspn(mode, "\n")] = '\0';

	if (strcmp(mode, "type") == 0) {
		hello(PROC_PARENT_FD);
		send_msg(PROC_PARENT_FD, 9999, sizeof(struct imsg_hdr), NULL, 0);
	} else if (strcmp(mode, "huge") == 0) {
		send_msg(PROC_PARENT_FD, IMSG_HELLO, 0x7ffffff0, NULL, 0);
	} else if (strcmp(mode, "hello2") == 0) {
		hello(PROC_PARENT_FD);
		hello(PROC_PARENT_FD);
	} else if ((strncmp(mode, "verdict-", 8) == 0 &&
	    strcmp(mode, "verdict-type") != 0) ||
	    strcmp(mode, "validate-twice") == 0) {
		if (lying_verifier(mode, argc, argv) == -1)
			return (1);
	} else if (strncmp(mode, "preview-", 8) == 0) {
		if (lying_preview(mode) == -1)
			errx(1, "unknown mode %s", mode);
	} else if (badmsg(mode) == -1)
		errx(1, "unknown mode %s", mode);
	/* Wait to be killed. */
	while (read(PROC_PARENT_FD, buf, sizeof(buf)) > 0)
		;
	return (0);
}
