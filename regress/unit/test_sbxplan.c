/*
 * Unit tests of libcommon/plan.c: the plan factoryd hands the
 * factory-sandbox launcher.  What is encoded decodes to the same; a
 * plan cut anywhere, with a byte too many, or with any field out of
 * its bounds is refused, naming the field.  The same for the enter
 * plan of factoryctl shell's waiter.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

static char *argv_[] = { "/bin/sh", "-c", "echo hi", NULL };
static char *env_[] = { "HOME=/tmp", "PATH=/usr/bin:/bin", NULL };
static char *exec_[] = { "/usr/bin", "/opt/tool/bin", NULL };
static struct sock_filter insns[3] = {
	{ 0x20, 0, 0, 4 }, { 0x15, 0, 1, 0xc000003e }, { 0x06, 0, 0, 0 }
};

static struct sandbox_spec	 spec;
static struct sandbox_listen	 lst[2];
static struct plan		 plan;
static char			 hide_[2][PATH_MAX] = { "/etc/factory", "/home" };
static char			 binds_[2][PATH_MAX] = { "/opt/tool/bin",
				    "/srv/git/r.git/objects" };
static int			 bexec_[2] = { 1, 0 };
static struct sock_fprog	 prog = { 3, insns };
#define IMAGE	"/var/lib/factory/images/sha256/" \
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" \
		"/rootfs"

static char *home_[] = { ".codex/config.toml", "model_provider = 1\n",
    ".pi/agent/models.json", "{}\n", NULL };
static char *ready_[] = { "/usr/bin/pg_isready", "-h", "127.0.0.1", NULL };
static uint16_t connect_[] = { 5432, 6379 }, bind_[] = { 5432 };
static uint16_t reserve_[] = { 3000 };
static char *data_[] = { "db/schema.sql", "build/fixtures", NULL };

static void
setup(void)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)&lst[0].addr;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&lst[1].addr;

	memset(&spec, 0, sizeof(spec));
	memset(lst, 0, sizeof(lst));
	memset(&plan, 0, sizeof(plan));
	spec.id = "a-20261201-0001";
	spec.uid = 64001;
	spec.gid = 64001;
	spec.argv = argv_;
	spec.env = env_;
	spec.exec_allow = exec_;
	spec.cpu_ms = 5000;
	spec.fsize = 1 << 20;
	spec.nofile = 1024;
	spec.watchdog_ms = 0x0102030405060708ULL;
	sin->sin_family = AF_INET;
	sin->sin_port = htons(443);
	inet_pton(AF_INET, "127.0.0.2", &sin->sin_addr);
	lst[0].addrlen = sizeof(*sin);
	lst[0].addlo = 1;
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(80);
	lst[1].addrlen = sizeof(*sin6);
	spec.listen = lst;
	spec.nlisten = 2;
	spec.hosts = "127.0.0.2 example.org\n";
	spec.home = home_;
	spec.lo = 1;
	spec.passwd = 1;
	spec.connect = connect_;
	spec.nconnect = 2;
	spec.bind = bind_;
	spec.nbind = 1;
	spec.reserve = reserve_;
	spec.nreserve = 1;
	spec.ready = ready_;
	spec.tree_dev = 0x803;
	spec.tree_ino = 0x1122334455667788ULL;
	spec.data_root = "/var/lib/factory/attempts/a/tree";
	spec.data_dev = 0x2a;
	spec.data_ino = 0x8877665544332211ULL;
	spec.data = data_;
	plan.spec = &spec;
	strlcpy(plan.tree, "/var/lib/factory/attempts/a/tree",
	    sizeof(plan.tree));
	strlcpy(plan.image, IMAGE, sizeof(plan.image));
	plan.hide = hide_;
	plan.nhide = 2;
	plan.binds = binds_;
	plan.bexec = bexec_;
	plan.nbinds = 2;
	plan.ncgroups = 4;
	plan.netfd = 9;
	plan.ipcfd = 10;
}

static unsigned char *
encode(size_t *len)
{
	unsigned char	*w = plan_encode(&plan, &prog, len);

	ck_assert_ptr_nonnull(w);
	return w;
}

/* Decoding must fail, and the error must name what. */
static void
refused(const void *w, size_t len, const char *want)
{
	struct sock_fprog	 p;
	struct plan		*d;
	char			 err[256] = "";

	d = plan_decode(w, len, &p, err, sizeof(err));
	if (d != NULL)
		plan_free(d);
	ck_assert_msg(d == NULL, "accepted, wanted '%s'", want);
	ck_assert_msg(strstr(err, want) != NULL, "error '%s', wanted '%s'",
	    err, want);
	ck_assert_ptr_null(p.filter);
}

START_TEST(test_roundtrip)
{
	struct sock_fprog	 p;
	struct plan		*d;
	unsigned char		*w;
	size_t			 len;
	char			 err[256];
	int			 i;

	w = encode(&len);
	d = plan_decode(w, len, &p, err, sizeof(err));
	ck_assert_msg(d != NULL, "%s", err);
	ck_assert_str_eq(d->spec->id, spec.id);
	ck_assert_uint_eq(d->spec->uid, 64001);
	ck_assert_uint_eq(d->spec->gid, 64001);
	ck_assert_str_eq(d->tree, plan.tree);
	ck_assert_str_eq(d->spec->tree, plan.tree);
	for (i = 0; argv_[i] != NULL; i++)
		ck_assert_str_eq(d->spec->argv[i], argv_[i]);
	ck_assert_ptr_null(d->spec->argv[i]);
	for (i = 0; env_[i] != NULL; i++)
		ck_assert_str_eq(d->spec->env[i], env_[i]);
	ck_assert_ptr_null(d->spec->env[i]);
	ck_assert_str_eq(d->spec->exec_allow[1], "/opt/tool/bin");
	ck_assert_ptr_null(d->spec->exec_allow[2]);
	ck_assert_int_eq(d->nhide, 2);
	ck_assert_str_eq(d->hide[1], "/home");
	ck_assert_int_eq(d->nbinds, 2);
	ck_assert_str_eq(d->binds[1], binds_[1]);
	ck_assert_int_eq(d->bexec[0], 1);
	ck_assert_int_eq(d->bexec[1], 0);
	ck_assert_int_eq(d->ncgroups, 4);
	ck_assert_int_ne(d->netfd, -1);
	ck_assert_uint_eq(d->spec->cpu_ms, 5000);
	ck_assert_uint_eq(d->spec->fsize, 1 << 20);
	ck_assert_uint_eq(d->spec->nofile, 1024);
	ck_assert_uint_eq(d->spec->watchdog_ms, 0x0102030405060708ULL);
	ck_assert_int_eq(d->spec->nlisten, 2);
	ck_assert_int_eq(memcmp(&d->spec->listen[0], &lst[0],
	    sizeof(lst[0])), 0);
	ck_assert_int_eq(memcmp(&d->spec->listen[1], &lst[1],
	    sizeof(lst[1])), 0);
	ck_assert_str_eq(d->spec->hosts, spec.hosts);
	for (i = 0; home_[i] != NULL; i++)
		ck_assert_str_eq(d->spec->home[i], home_[i]);
	ck_assert_ptr_null(d->spec->home[i]);
	ck_assert_int_eq(d->spec->lo, 1);
	ck_assert_int_eq(d->spec->passwd, 1);
	ck_assert_int_eq(d->spec->nconnect, 2);
	ck_assert_uint_eq(d->spec->connect[1], 6379);
	ck_assert_int_eq(d->spec->nbind, 1);
	ck_assert_uint_eq(d->spec->bind[0], 5432);
	ck_assert_int_eq(d->spec->nreserve, 1);
	ck_assert_uint_eq(d->spec->reserve[0], 3000);
	for (i = 0; ready_[i] != NULL; i++)
		ck_assert_str_eq(d->spec->ready[i], ready_[i]);
	ck_assert_ptr_null(d->spec->ready[i]);
	ck_assert_uint_eq(d->spec->tree_dev, 0x803);
	ck_assert_uint_eq(d->spec->tree_ino, 0x1122334455667788ULL);
	ck_assert_str_eq(d->spec->data_root, spec.data_root);
	ck_assert_uint_eq(d->spec->data_dev, 0x2a);
	ck_assert_uint_eq(d->spec->data_ino, 0x8877665544332211ULL);
	for (i = 0; data_[i] != NULL; i++)
		ck_assert_str_eq(d->spec->data[i], data_[i]);
	ck_assert_ptr_null(d->spec->data[i]);
	ck_assert_uint_eq(p.len, 3);
	ck_assert_int_eq(memcmp(p.filter, insns, sizeof(insns)), 0);
	plan_free(d);
	free(w);
}
END_TEST

/* No exec list is not an empty one; no pool, no hosts. */
START_TEST(test_optional)
{
	struct sock_fprog	 p;
	struct plan		*d;
	unsigned char		*w;
	size_t			 len;
	char			 err[256];

	spec.exec_allow = NULL;
	spec.hosts = NULL;
	spec.ready = NULL;
	spec.nconnect = spec.nbind = spec.nreserve = 0;
	spec.data_root = NULL;
	plan.netfd = plan.ipcfd = -1;
	plan.image[0] = '\0';
	w = encode(&len);
	d = plan_decode(w, len, &p, err, sizeof(err));
	ck_assert_msg(d != NULL, "%s", err);
	ck_assert_ptr_null(d->spec->exec_allow);
	ck_assert_ptr_null(d->spec->hosts);
	ck_assert_ptr_null(d->spec->ready);
	ck_assert_int_eq(d->spec->nconnect, 0);
	ck_assert_int_eq(d->spec->nreserve, 0);
	ck_assert_int_eq(d->netfd, -1);
	ck_assert_str_eq(d->image, "");
	ck_assert_ptr_null(d->spec->image);
	ck_assert_ptr_null(d->spec->data_root);
	ck_assert_ptr_null(d->spec->data);
	plan_free(d);
	free(w);
}
END_TEST

/*
 * A service's data: the tree pinned, not /, and 1 to SANDBOX_MAXDATA
 * paths inside it as a manifest names them, none leaving it.
 */
START_TEST(test_data)
{
	static char	*dotdot[] = { "db/../../etc", NULL };
	static char	*abs[] = { "db", "/etc", NULL };
	static char	*git[] = { ".git/hooks", NULL };
	static char	*dot[] = { "./db", NULL };
	static char	*trail[] = { "db/", NULL };
	static char	*none[] = { NULL };
	static char	*many[] = { "a", "b", "c", "d", "e", "f", "g", "h",
			    "i", NULL };
	static char	 longp[PATH_MAX];
	static char	*toolong[] = { longp, NULL };
	unsigned char	*w;
	size_t		 len;

	spec.data_root = "/";
	w = encode(&len);
	refused(w, len, "data_root: may not be /");
	free(w);
	setup();
	spec.data_root = "attempts/a/tree";
	w = encode(&len);
	refused(w, len, "data_root: not an absolute path");
	free(w);
	setup();
	spec.data_ino = 0;
	w = encode(&len);
	refused(w, len, "data_ino: the tree is not pinned");
	free(w);
	setup();
	spec.data = dotdot;
	w = encode(&len);
	refused(w, len, "data[0]: an empty, \".\" or \"..\" component");
	free(w);
	setup();
	spec.data = abs;
	w = encode(&len);
	refused(w, len, "data[1]: not a relative path inside the tree");
	free(w);
	setup();
	spec.data = git;
	w = encode(&len);
	refused(w, len, "data[0]: inside .git");
	free(w);
	setup();
	spec.data = dot;
	w = encode(&len);
	refused(w, len, "data[0]: an empty");
	free(w);
	setup();
	spec.data = trail;
	w = encode(&len);
	refused(w, len, "data[0]: ends with '/'");
	free(w);
	setup();
	spec.data = none;
	w = encode(&len);
	refused(w, len, "data: none given");
	free(w);
	setup();
	spec.data = many;
	w = encode(&len);
	refused(w, len, "data: 9 entries, more than 8");
	free(w);
	setup();
	/* Fits a path alone, not below the tree. */
	memset(longp, 'x', PATH_MAX - 10);
	longp[PATH_MAX - 10] = '\0';
	spec.data = toolong;
	w = encode(&len);
	refused(w, len, "data[0]: too long below data_root");
	free(w);
}
END_TEST

/* Cut at every byte: always refused, never read past the end. */
START_TEST(test_truncated)
{
	unsigned char	*w, *c;
	size_t		 len, n;

	w = encode(&len);
	for (n = 0; n < len; n++) {
		/* A copy of exactly n bytes: ASan sees any overread. */
		c = malloc(n + 1);
		memcpy(c, w, n);
		refused(c, n, "");
		free(c);
	}
	free(w);
}
END_TEST

START_TEST(test_trailing)
{
	unsigned char	*w, *c;
	size_t		 len;

	w = encode(&len);
	c = malloc(len + 1);
	memcpy(c, w, len);
	c[len] = 0;
	refused(c, len + 1, "1 bytes after the end");
	free(c);
	free(w);
}
END_TEST

START_TEST(test_too_big)
{
	unsigned char	*w = calloc(1, SBX_PLAN_MAX + 1);

	refused(w, SBX_PLAN_MAX + 1, "more than");
	free(w);
}
END_TEST

/* Field by field: the value that must be refused, and the word said. */
START_TEST(test_fields)
{
	static char	*noabs[] = { "sh", NULL }, *noargv[] = { NULL };
	static char	 rel[2][PATH_MAX] = { "etc/factory", "/home" };
	static char	 nul[] = "/bin/sh";
	unsigned char	*w;
	size_t		 len;

	spec.id = "../escape";
	w = encode(&len);
	refused(w, len, "id: not a plain name");
	free(w);
	setup();
	spec.id = "";
	w = encode(&len);
	refused(w, len, "id:");
	free(w);
	setup();
	spec.uid = 0;
	w = encode(&len);
	refused(w, len, "may not run as root");
	free(w);
	setup();
	strlcpy(plan.tree, "/", sizeof(plan.tree));
	w = encode(&len);
	refused(w, len, "tree: may not be /");
	free(w);
	setup();
	spec.argv = noabs;
	w = encode(&len);
	refused(w, len, "argv[0]: not an absolute path");
	free(w);
	setup();
	spec.argv = noargv;
	w = encode(&len);
	refused(w, len, "argv[0]: not an absolute path");
	free(w);
	setup();
	strlcpy(plan.image, "/", sizeof(plan.image));
	w = encode(&len);
	refused(w, len, "image: may not be /");
	free(w);
	setup();
	strlcpy(plan.image, "images/x/rootfs", sizeof(plan.image));
	w = encode(&len);
	refused(w, len, "image: not an absolute path");
	free(w);
	setup();
	/* The overlay's options are comma- and colon-separated. */
	strlcpy(plan.image, "/x,upperdir=/etc", sizeof(plan.image));
	w = encode(&len);
	refused(w, len, "image: contains");
	free(w);
	setup();
	strlcpy(plan.image, "/a:/b", sizeof(plan.image));
	w = encode(&len);
	refused(w, len, "image: contains");
	free(w);
	setup();
	plan.hide = rel;
	w = encode(&len);
	refused(w, len, "hide[0]: not an absolute path");
	free(w);
	setup();
	plan.ncgroups = SANDBOX_MAXCG + 1;
	w = encode(&len);
	refused(w, len, "ncgroups");
	free(w);
	setup();
	lst[1].addrlen = sizeof(struct sockaddr_in);	/* v6 family, v4 size */
	w = encode(&len);
	refused(w, len, "listen[1]: family");
	free(w);
	setup();
	lst[0].addrlen = 3;
	w = encode(&len);
	refused(w, len, "listen[0]: address length 3");
	free(w);
	setup();
	/* A service's ports and ready command. */
	connect_[1] = 0;
	w = encode(&len);
	refused(w, len, "connect[1]: port 0");
	free(w);
	connect_[1] = 6379;
	setup();
	spec.nbind = SANDBOX_SVCPORTS + 1;
	spec.bind = calloc(SANDBOX_SVCPORTS + 1, sizeof(uint16_t));
	w = encode(&len);
	refused(w, len, "bind: 17, more than 16");
	free(w);
	free((void *)spec.bind);
	setup();
	/* The ports other members of its namespace bind: the same bounds. */
	reserve_[0] = 0;
	w = encode(&len);
	refused(w, len, "reserve[0]: port 0");
	free(w);
	reserve_[0] = 3000;
	setup();
	spec.nreserve = SANDBOX_SVCPORTS + 1;
	spec.reserve = calloc(SANDBOX_SVCPORTS + 1, sizeof(uint16_t));
	w = encode(&len);
	refused(w, len, "reserve: 17, more than 16");
	free(w);
	free((void *)spec.reserve);
	setup();
	spec.ready = noabs;
	w = encode(&len);
	refused(w, len, "ready: not an absolute program");
	free(w);
	setup();
	spec.ready = noargv;
	w = encode(&len);
	refused(w, len, "ready: not an absolute program");
	free(w);
	setup();
	spec.tree_ino = 0;
	w = encode(&len);
	refused(w, len, "tree_ino: a device without an inode");
	free(w);
	setup();
	/* A NUL inside argv[0] on the wire: overwrite after encoding. */
	argv_[0] = nul;
	w = encode(&len);
	{
		unsigned char	*p = memmem(w, len, "/bin/sh", 7);

		ck_assert_ptr_nonnull(p);
		p[4] = '\0';
		refused(w, len, "argv[0]: contains a NUL");
	}
	free(w);
	setup();
	prog.len = 0;
	w = encode(&len);
	refused(w, len, "seccomp: 0 instructions");
	free(w);
	prog.len = 3;
}
END_TEST

/* Bytes flipped in the header and the booleans. */
START_TEST(test_header)
{
	unsigned char	*w;
	size_t		 len;

	w = encode(&len);
	w[0] ^= 1;
	refused(w, len, "magic");
	w[0] ^= 1;
	/* A plan of the format before images: refused, not misread. */
	w[4] = 1;
	refused(w, len, "version");
	/* Nor one of version 8, before the ports to reserve. */
	w[4] = 0;
	w[7] = 8;
	refused(w, len, "version: not 9");
	free(w);
}
END_TEST

/* A count beyond its bound is refused before anything is allocated. */
START_TEST(test_counts)
{
	unsigned char	*w;
	uint32_t	 big = htonl(0x7fffffff);	/* the wire's order */
	size_t		 len, off;

	w = encode(&len);
	/* The argv count follows magic, version, id, uid, gid, tree. */
	off = 8 + 4 + strlen(spec.id) + 8 + 4 + strlen(plan.tree);
	memcpy(w + off, &big, sizeof(big));
	refused(w, len, "argv: 2147483647 entries");
	free(w);
}
END_TEST

/* --- the enter plan: factoryctl shell's waiter ------------------------- */

static struct plan_enter		 ent;

static void
enter_setup(void)
{
	setup();
	memset(&ent, 0, sizeof(ent));
	ent.spec = &spec;
	strlcpy(ent.tree, plan.tree, sizeof(ent.tree));
	ent.ports[0] = 443;
	ent.ports[1] = 80;
	ent.nports = 2;
	ent.nprocs = 4;
	strlcpy(ent.home, "/tmp/.factory-home-XXXXXX", sizeof(ent.home));
	strlcpy(ent.cgname, "shell-3", sizeof(ent.cgname));
}

static unsigned char *
enter_encode(size_t *len)
{
	unsigned char	*w = plan_enter_encode(&ent, &prog, len);

	ck_assert_ptr_nonnull(w);
	return w;
}

static void
enter_refused(const void *w, size_t len, const char *want)
{
	struct sock_fprog	 p;
	struct plan_enter	*d;
	char			 err[256] = "";

	d = plan_enter_decode(w, len, &p, err, sizeof(err));
	if (d != NULL)
		plan_enter_free(d);
	ck_assert_msg(d == NULL, "accepted, wanted '%s'", want);
	ck_assert_msg(strstr(err, want) != NULL, "error '%s', wanted '%s'",
	    err, want);
	ck_assert_ptr_null(p.filter);
}

START_TEST(test_enter_roundtrip)
{
	struct sock_fprog	 p;
	struct plan_enter	*d;
	unsigned char		*w;
	size_t			 len;
	char			 err[256];
	int			 i;

	w = enter_encode(&len);
	d = plan_enter_decode(w, len, &p, err, sizeof(err));
	ck_assert_msg(d != NULL, "%s", err);
	ck_assert_str_eq(d->spec->id, spec.id);
	ck_assert_uint_eq(d->spec->uid, 64001);
	ck_assert_uint_eq(d->spec->gid, 64001);
	ck_assert_str_eq(d->tree, plan.tree);
	ck_assert_str_eq(d->spec->tree, plan.tree);
	for (i = 0; argv_[i] != NULL; i++)
		ck_assert_str_eq(d->spec->argv[i], argv_[i]);
	ck_assert_ptr_null(d->spec->argv[i]);
	for (i = 0; env_[i] != NULL; i++)
		ck_assert_str_eq(d->spec->env[i], env_[i]);
	ck_assert_ptr_null(d->spec->env[i]);
	ck_assert_str_eq(d->spec->exec_allow[1], "/opt/tool/bin");
	ck_assert_uint_eq(d->spec->cpu_ms, 5000);
	ck_assert_uint_eq(d->spec->fsize, 1 << 20);
	ck_assert_uint_eq(d->spec->nofile, 1024);
	ck_assert_int_eq(d->nports, 2);
	ck_assert_uint_eq(d->ports[0], 443);
	ck_assert_uint_eq(d->ports[1], 80);
	ck_assert_int_eq(d->nprocs, 4);
	ck_assert_str_eq(d->home, "/tmp/.factory-home-XXXXXX");
	ck_assert_str_eq(d->cgname, "shell-3");
	ck_assert_uint_eq(p.len, 3);
	ck_assert_mem_eq(p.filter, insns, sizeof(insns));
	plan_enter_free(d);
	free(w);
}
END_TEST

/* Cut anywhere, or one byte too many: refused. */
START_TEST(test_enter_truncated)
{
	unsigned char	*w, *x;
	size_t		 len, cut;

	w = enter_encode(&len);
	for (cut = 0; cut < len; cut++)
		enter_refused(w, cut, cut == 0 ? "magic" : "plan: ");
	x = calloc(1, len + 1);
	memcpy(x, w, len);
	enter_refused(x, len + 1, "1 bytes after the end");
	free(x);
	free(w);
}
END_TEST

/* The other kind of plan, each way round. */
START_TEST(test_enter_magic)
{
	struct sock_fprog	 p;
	struct plan		*d;
	unsigned char		*w;
	size_t			 len;
	char			 err[256] = "";

	w = encode(&len);
	enter_refused(w, len, "magic: not an enter plan");
	free(w);
	w = enter_encode(&len);
	d = plan_decode(w, len, &p, err, sizeof(err));
	ck_assert_ptr_null(d);
	ck_assert_msg(strstr(err, "magic") != NULL, "%s", err);
	w[4] = 1;
	enter_refused(w, len, "version");
	free(w);
}
END_TEST

static void
enter_bad(const char *want)
{
	unsigned char	*w;
	size_t		 len;

	w = enter_encode(&len);
	enter_refused(w, len, want);
	free(w);
}

START_TEST(test_enter_fields)
{
	static char	*noargv[] = { NULL }, *relargv[] = { "sh", NULL };
	static const char *homes[] = {
		"/tmp/XXXXXX",			/* no name before the X's */
		"/tmp/.factory-home-XXXXX",	/* not a template */
		"/tmp/a/b-XXXXXX",		/* below /tmp */
		"/var/tmp/h-XXXXXX",		/* elsewhere */
		"tmp/h-XXXXXX",			/* relative */
		"/tmp/../etc/h-XXXXXX",
	};
	static const char *cgs[] = {
		"shell-", "shell-1/../..", "other-1", "shell-1x", "..",
	};
	size_t		 i;

	spec.uid = 0;
	enter_bad("may not run as root");
	enter_setup();
	spec.argv = noargv;
	enter_bad("argv[0]: not an absolute path");
	spec.argv = relargv;
	enter_bad("argv[0]: not an absolute path");
	enter_setup();
	strlcpy(ent.tree, "/", sizeof(ent.tree));
	enter_bad("tree: may not be /");
	enter_setup();
	ent.nports = SANDBOX_MAXPORTS + 1;
	enter_bad("ports: 49, more than 48");
	enter_setup();
	ent.ports[1] = 0;
	enter_bad("ports[1]: port 0");
	enter_setup();
	ent.nprocs = 0;
	enter_bad("nprocs: 0 out of bounds");
	ent.nprocs = SANDBOX_MAXCG + 1;
	enter_bad("nprocs: 7 out of bounds");
	ent.nprocs = -1;
	enter_bad("nprocs: -1 out of bounds");
	enter_setup();
	for (i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		strlcpy(ent.home, homes[i], sizeof(ent.home));
		enter_bad("home: ");
	}
	enter_setup();
	for (i = 0; i < sizeof(cgs) / sizeof(cgs[0]); i++) {
		strlcpy(ent.cgname, cgs[i], sizeof(ent.cgname));
		enter_bad("cgname: not shell-N");
	}
	enter_setup();
	prog.len = 0;
	enter_bad("seccomp: 0 instructions");
	prog.len = 3;
}
END_TEST

/* A NUL inside a string, a count far beyond its bound. */
START_TEST(test_enter_bytes)
{
	unsigned char	*w;
	uint32_t	 big = htonl(0x7fffffff);	/* the wire's order */
	size_t		 len, off;

	w = enter_encode(&len);
	off = 8 + 4;		/* magic, version, the id's length */
	w[off + 2] = '\0';
	enter_refused(w, len, "id: contains a NUL");
	free(w);
	w = enter_encode(&len);
	off = 8 + 4 + strlen(spec.id) + 8 + 4 + strlen(ent.tree);
	memcpy(w + off, &big, sizeof(big));
	enter_refused(w, len, "argv: 2147483647 entries");
	free(w);
}
END_TEST

/*
 * Files below HOME: pid 1 writes them as root before the agent runs,
 * so a name that is not a plain relative path, a name without its
 * content, too many or too large are refused, naming the field.
 */
START_TEST(test_homefiles)
{
	static char	*bad[][3] = {
		{ "../etc/passwd", "x", NULL },
		{ "/etc/passwd", "x", NULL },
		{ ".codex/../../x", "x", NULL },
		{ "a//b", "x", NULL },
		{ "a/./b", "x", NULL },
		{ "a/", "x", NULL },
		{ "", "x", NULL },
		{ "a b", "x", NULL },
		{ "a/b/c/d/e", "x", NULL },
	};
	static char	*odd[] = { ".codex/config.toml", NULL };
	char		*many[2 * SBX_HOMEFILES + 3], *big, err[256];
	struct sock_fprog p;
	struct plan	*d;
	unsigned char	*w;
	size_t		 len, i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		spec.home = bad[i];
		w = encode(&len);
		refused(w, len, "home[0]: not a plain relative path");
		free(w);
	}
	spec.home = odd;
	w = encode(&len);
	refused(w, len, "home: a name without its content");
	free(w);
	for (i = 0; i < 2 * SBX_HOMEFILES + 2; i++)
		many[i] = i % 2 ? "x" : "f";
	many[i] = NULL;
	spec.home = many;
	w = encode(&len);
	refused(w, len, "home: 18 entries, more than 16");
	free(w);
	big = malloc(SBX_HOMEFILE + 2);
	memset(big, 'x', SBX_HOMEFILE + 1);
	big[SBX_HOMEFILE + 1] = '\0';
	many[0] = "f";
	many[1] = big;
	many[2] = NULL;
	w = encode(&len);
	refused(w, len, "home[1]: more than 16384 bytes");
	free(w);
	big[SBX_HOMEFILE] = '\0';
	w = encode(&len);
	d = plan_decode(w, len, &p, err, sizeof(err));
	ck_assert_msg(d != NULL, "%s", err);
	ck_assert_uint_eq(strlen(d->spec->home[1]), SBX_HOMEFILE);
	plan_free(d);
	free(w);
	free(big);
	ck_assert_int_eq(plan_home_name(".pi/agent/models.json"), 0);
	ck_assert_int_eq(plan_home_name("a/b/c/d"), 0);
}
END_TEST

static Suite *
plan_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("sbxplan");
	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_optional);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_trailing);
	tcase_add_test(tc, test_too_big);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_data);
	tcase_add_test(tc, test_header);
	tcase_add_test(tc, test_counts);
	tcase_add_test(tc, test_homefiles);
	suite_add_tcase(s, tc);
	tc = tcase_create("enter");
	tcase_add_checked_fixture(tc, enter_setup, NULL);
	tcase_add_test(tc, test_enter_roundtrip);
	tcase_add_test(tc, test_enter_truncated);
	tcase_add_test(tc, test_enter_magic);
	tcase_add_test(tc, test_enter_fields);
	tcase_add_test(tc, test_enter_bytes);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(plan_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
