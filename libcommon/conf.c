/*
 * factoryd.conf(5): parsed once, by the parent, into struct
 * factoryd_conf.  Every key has a default except the repositories;
 * every error is one line naming FILE:LINE:COLUMN and the key.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "gwmsg.h"
#include "previewmsg.h"
#include "util.h"
#include "yaml.h"

/* A configuration is not a data set. */
#define CONF_MAXSIZE		(1024 * 1024)
/*
 * Outside every range systemd reserves (UIDS-GIDS: system, regular,
 * homed, nspawn, greeter, DynamicUser, nobody, container, foreign):
 * between the 16-bit boundary and the container ranges, and below
 * Debian's SUB_UID_MIN (100000), where useradd starts /etc/subuid.
 */
#define ATTEMPT_UID_LO		70000
#define ATTEMPT_UID_HI		70999
/* (uid_t)-1 means "no uid" to the set*id calls. */
#define UID_LAST		((uint64_t)UINT32_MAX - 1)
#define CA_DEFAULT		"/etc/ssl/certs/ca-certificates.crt"

/* The unprivileged roles and their default users. */
static const struct {
	enum factory_procid	 id;
	const char		*key;
	const char		*user;
} conf_roles[] = {
	{ PROC_WORKER,		"worker",	"_factoryw" },
	{ PROC_VERIFIER,	"verifier",	"_factoryv" },
	{ PROC_RECONCILER,	"reconciler",	"_factoryr" },
	{ PROC_PUBLISHER,	"publisher",	"_factoryp" },
	{ PROC_EGRESS,		"egress",	"_factorye" },
	{ PROC_IMAGE,		"image",	"_factoryi" },
	{ PROC_GATEWAY,		"gateway",	"_factoryg" },
	/* Last: only with their blocks (conf_users). */
	{ PROC_FLEET,		"fleet",	"_factoryf" },
	{ PROC_PREVIEW,		"preview",	"_factoryx" },
};
#define NROLES	(sizeof(conf_roles) / sizeof(conf_roles[0]))

/* Where a user came from, to point an error at it. */
struct conf_where {
	int	 line;
	int	 col;
	char	 path[32];
};

static const char * const conf_topkeys[] = {
	"socket", "state-dir", "libexec", "users", "attempt-uids",
	"max-attempts", "verifiers", "lease-ttl", "reconcile-interval",
	"control-idle-timeout", "attempt-disk", "pristine-cache", "setup-cache",
	"images", "keys", "repositories", "sandbox", "environment", "metrics",
	"providers", "upstreams", "max-cohort", "fleet", "preview", NULL
};

const char *const conf_method_names[] = {
	"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", NULL
};

const char *const conf_downgrade_names[] = {
	"landlock", "landlock-net", "landlock-scopes", "cgroup-kill",
	"bind-rule", NULL
};

static void
conf_defaults(struct factoryd_conf *c)
{
	size_t	 i;

	strlcpy(c->socket, FACTORYD_SOCKET, sizeof(c->socket));
	strlcpy(c->statedir, FACTORYD_STATEDIR, sizeof(c->statedir));
	strlcpy(c->libexec, FACTORY_LIBEXECDIR, sizeof(c->libexec));
	for (i = 0; i < NROLES; i++)
		strlcpy(c->users[conf_roles[i].id].name, conf_roles[i].user,
		    sizeof(c->users[0].name));
	c->attempt_uid_lo = ATTEMPT_UID_LO;
	c->attempt_uid_hi = ATTEMPT_UID_HI;
	c->max_attempts = 4;
	c->max_cohort = 8;
	c->verifiers = 2;
	c->lease_ttl = 30;
	c->reconcile_interval = 60;
	c->control_idle = 60;
	c->metrics_interval = 15;
	c->disk_default = 1024ULL * 1024 * 1024;
	c->disk_max = 4ULL * 1024 * 1024 * 1024;
	c->pristine_max = 16ULL * 1024 * 1024 * 1024;
	c->setup_max = 8ULL * 1024 * 1024 * 1024;
	c->image_max_size = 8ULL * 1024 * 1024 * 1024;
	c->image_max_files = 1000000;
	c->image_max_depth = 256;
	c->image_max_path = 4095;
	strlcpy(c->receipt_key, "/etc/factory/keys/receipt.key",
	    sizeof(c->receipt_key));
	strlcpy(c->verifier_key, "/etc/factory/keys/verifier.key",
	    sizeof(c->verifier_key));
	/* Today's behaviour unless the operator says otherwise. */
	c->envpolicy.require_digest = 0;
	c->envpolicy.host_root = 1;
	TAILQ_INIT(&c->repos);
}

/*
 * A user: a name (its uid and primary gid), a uid (the gid is the
 * same number) or "uid:gid".  Root's uid and gid are refused: a role
 * running as root would hold everything the separation takes away.
 */
static int
conf_resolve(const char *s, struct conf_user *u, char *why, size_t len)
{
	struct passwd	*pw;
	const char	*colon;
	char		 num[32];
	uint64_t	 uid, gid;

	if (strlcpy(u->name, s, sizeof(u->name)) >= sizeof(u->name)) {
		snprintf(why, len, "longer than %zu bytes",
		    sizeof(u->name) - 1);
		return (-1);
	}
	if ((colon = strchr(s, ':')) != NULL &&
	    (size_t)(colon - s) < sizeof(num)) {
		memcpy(num, s, (size_t)(colon - s));
		num[colon - s] = '\0';
		if (y_parse_uint(num, &uid) != 0 ||
		    y_parse_uint(colon + 1, &gid) != 0) {
			snprintf(why, len, "expected uid:gid, not \"%s\"", s);
			return (-1);
		}
	} else if (s[0] >= '0' && s[0] <= '9') {
		if (y_parse_uint(s, &uid) != 0) {
			snprintf(why, len, "expected a user name or a uid, "
			    "not \"%s\"", s);
			return (-1);
		}
		gid = uid;
	} else {
		if (!name_valid(s, 32)) {
			snprintf(why, len, "not a user name: \"%s\"", s);
			return (-1);
		}
		errno = 0;
		if ((pw = getpwnam(s)) == NULL) {
			snprintf(why, len, "unknown user %s", s);
			return (-1);
		}
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}
	if (uid > UID_LAST || gid > UID_LAST) {
		snprintf(why, len, "%s is out of range", s);
		return (-1);
	}
	if (uid == 0) {
		snprintf(why, len, "root (uid 0) is refused");
		return (-1);
	}
	if (gid == 0) {
		snprintf(why, len, "gid 0 (root's group) is refused");
		return (-1);
	}
	u->uid = (uid_t)uid;
	u->gid = (gid_t)gid;
	return (0);
}

static int
conf_users(struct yerr *e, const struct ynode *users, struct factoryd_conf *c,
    struct conf_where *where, int fleet, int preview)
{
	static const char * const keys[] = {
		"worker", "verifier", "reconciler", "publisher", "egress",
		"image", "gateway", "fleet", "preview", NULL
	};
	const struct ynode	*n;
	struct conf_user	*u;
	char			 why[128];
	size_t			 i, j;

	if (users != NULL && (y_map(e, users, "a mapping of roles to users")
	    == -1 || y_keys(e, users, keys) == -1))
		return (-1);
	for (i = 0; i < NROLES; i++) {
		u = &c->users[conf_roles[i].id];
		/* Without a fleet, no fleet user: nothing need exist. */
		if ((conf_roles[i].id == PROC_FLEET && !fleet) ||
		    (conf_roles[i].id == PROC_PREVIEW && !preview)) {
			if ((n = y_get(users, conf_roles[i].key)) != NULL)
				return (y_fail(e, n, "no %s: block",
				    conf_roles[i].key));
			memset(u, 0, sizeof(*u));
			where[i].path[0] = '\0';
			continue;
		}
		snprintf(where[i].path, sizeof(where[i].path), "users.%s",
		    conf_roles[i].key);
		where[i].line = where[i].col = 1;
		if ((n = y_get(users, conf_roles[i].key)) != NULL) {
			where[i].line = n->line;
			where[i].col = n->col;
			if (y_str(e, n, "a user name or a uid", 0, NULL, 0)
			    == -1)
				return (-1);
			if (conf_resolve(n->str, u, why, sizeof(why)) == -1)
				return (y_fail(e, n, "%s", why));
		} else {
			if (users != NULL) {
				where[i].line = users->line;
				where[i].col = users->col;
			}
			if (conf_resolve(u->name, u, why, sizeof(why)) == -1)
				return (y_failat(e, where[i].line,
				    where[i].col, where[i].path,
				    "%s (the default)", why));
		}
		/* One uid per role: a shared uid could signal and ptrace. */
		for (j = 0; j < i; j++)
			if (c->users[conf_roles[j].id].uid == u->uid)
				return (y_failat(e, where[i].line,
				    where[i].col, where[i].path,
				    "uid %u is also users.%s",
				    (unsigned)u->uid, conf_roles[j].key));
	}
	return (0);
}

/*
 * Ids an attempt must not share with anyone.  Refused: the system
 * users and groups, nobody and the 16-bit (uid_t)-1; an agent running
 * as one of them owns what they own.  Warned: the ranges systemd (and
 * adduser) hand out later, where nothing exists yet to be owned but a
 * DynamicUser service or a new user may meet an attempt; the
 * allocators ask NSS first, and attempt uids are not in it.
 */
static const struct {
	uint64_t	 lo, hi;
	int		 refuse;
	const char	*what;
} conf_uid_ranges[] = {
	{ 0, 999,		1, "the system users and groups 0-999" },
	{ 1000, 60000,		0, "the regular users 1000-60000 (adduser)" },
	{ 60001, 60513,		0, "systemd-homed's users 60001-60513" },
	{ 60514, 60577,		0, "systemd-nspawn's host users "
	    "60514-60577" },
	{ 60578, 60705,		0, "systemd's greeter users 60578-60705" },
	{ 61184, 65519,		0, "systemd's DynamicUser range "
	    "61184-65519" },
	{ 65534, 65535,		1, "nobody 65534 and the 16-bit (uid_t)-1 "
	    "65535" },
	{ 524288, 1879048191,	0, "systemd-nspawn's container ranges "
	    "524288-1879048191" },
	{ 2147352576, 2147418111, 0, "systemd's foreign range "
	    "2147352576-2147418111" },
	{ 2147483648U, UID_LAST, 0, "2147483648 and above, which some "
	    "kernel interfaces take as signed" },
};

/* The user database files; a test build may point at its own. */
static const char *
conf_dbfile(const char *dflt, const char *env)
{
#ifdef FACTORY_TESTBUILD
	const char	*s = getenv(env);

	if (s != NULL && *s != '\0')
		return (s);
#endif
	return (dflt);
}

/*
 * An entry of /etc/passwd (a uid) or /etc/group (a gid) inside
 * lo..hi: 1 and what in why, 0 none, -1 and why on a read error.
 * The files, not NSS: a directory service is not looked up.
 */
static int
conf_uid_taken(uid_t lo, uid_t hi, char *why, size_t len)
{
	const char	*pwf, *grf;
	struct passwd	*pw;
	struct group	*gr;
	FILE		*f;
	int		 found = 0;

	pwf = conf_dbfile("/etc/passwd", "FACTORY_TEST_PASSWD");
	grf = conf_dbfile("/etc/group", "FACTORY_TEST_GROUP");
	if ((f = fopen(pwf, "re")) == NULL) {
		if (errno == ENOENT)
			goto group;
		snprintf(why, len, "%s: %s", pwf, strerror(errno));
		return (-1);
	}
	while (!found && (pw = fgetpwent(f)) != NULL)
		if (pw->pw_uid >= lo && pw->pw_uid <= hi) {
			snprintf(why, len, "uid %u of user %.64s in %s",
			    (unsigned)pw->pw_uid, pw->pw_name, pwf);
			found = 1;
		}
	fclose(f);
	if (found)
		return (1);
 group:
	if ((f = fopen(grf, "re")) == NULL) {
		if (errno == ENOENT)
			return (0);
		snprintf(why, len, "%s: %s", grf, strerror(errno));
		return (-1);
	}
	while (!found && (gr = fgetgrent(f)) != NULL)
		if (gr->gr_gid >= lo && gr->gr_gid <= hi) {
			snprintf(why, len, "gid %u of group %.64s in %s",
			    (unsigned)gr->gr_gid, gr->gr_name, grf);
			found = 1;
		}
	fclose(f);
	return (found);
}

/*
 * A line of /etc/subuid or /etc/subgid ("user:first:count") whose ids
 * meet lo..hi: 1 and what in why, 0 none, -1 and why on a read error
 * or a NUL byte.  Whoever holds such a range may become those ids with
 * newuidmap(1) or newgidmap(1), and so signal, trace or own an
 * attempt.  Lines of any length are read; fields past the third are
 * ignored; lines not of that shape are skipped, as shadow's tools do.
 */
static int
conf_subid_taken(const char *file, const char *what, uid_t lo, uid_t hi,
    char *why, size_t len)
{
	FILE		*f;
	char		*line = NULL, *name, *first, *count, *end;
	const int	 bases[] = { 10, 0 };
	unsigned long long a, n, last;
	size_t		 cap = 0;
	ssize_t		 got;
	int		 found = 0, i, lineno = 0;

	if ((f = fopen(file, "re")) == NULL) {
		if (errno == ENOENT)
			return (0);
		snprintf(why, len, "%s: %s", file, strerror(errno));
		return (-1);
	}
	while (!found && (got = getline(&line, &cap, f)) != -1) {
		lineno++;
		/*
		 * What a reader that stops at a NUL and one that does not
		 * take from such a line differs: it cannot be checked.
		 */
		if (memchr(line, '\0', (size_t)got) != NULL) {
			snprintf(why, len, "%s: line %d: a NUL byte", file,
			    lineno);
			found = -1;
			break;
		}
		line[strcspn(line, "\n")] = '\0';
		name = line;
		if ((first = strchr(name, ':')) == NULL)
			continue;
		*first++ = '\0';
		if ((count = strchr(first, ':')) == NULL)
			continue;
		*count++ = '\0';
		/* Fields past the third are not the count's. */
		count[strcspn(count, ":")] = '\0';
		/*
		 * shadow's newuidmap reads the numbers as strtoul(3) with
		 * base 0 (0x10FE0 and 0207740 are 69600); other tools
		 * read them in base 10: a range in either reading counts.
		 */
		for (i = 0; !found && i < 2; i++) {
			errno = 0;
			a = strtoull(first, &end, bases[i]);
			if (errno != 0 || end == first || *end != '\0')
				continue;
			n = strtoull(count, &end, bases[i]);
			if (errno != 0 || end == count || *end != '\0' ||
			    n == 0)
				continue;
			last = n - 1 > ULLONG_MAX - a ? ULLONG_MAX :
			    a + (n - 1);
			if (a > hi || last < lo)
				continue;
			snprintf(why, len, "subordinate %ss %llu-%llu of "
			    "%.64s in %s", what, a, last, name, file);
			found = 1;
		}
	}
	free(line);
	fclose(f);
	return (found);
}

/*
 * The range against conf_uid_ranges and the user database: a refusal
 * is the error; the warnings go to c->warning, one line, for
 * factoryd -n and the log.
 */
static int
conf_uid_reserved(struct yerr *e, const struct ynode *n,
    struct factoryd_conf *c)
{
	char	 why[256], list[512];
	int	 line = n != NULL ? n->line : 1, col = n != NULL ? n->col : 1;
	size_t	 i;
	int	 rc;

	list[0] = '\0';
	for (i = 0; i < sizeof(conf_uid_ranges) / sizeof(conf_uid_ranges[0]);
	    i++) {
		if (c->attempt_uid_hi < conf_uid_ranges[i].lo ||
		    c->attempt_uid_lo > conf_uid_ranges[i].hi)
			continue;
		if (conf_uid_ranges[i].refuse)
			return (y_failat(e, line, col, "attempt-uids",
			    "%s%u-%u overlaps %s", n != NULL ? "" :
			    "the default ", (unsigned)c->attempt_uid_lo,
			    (unsigned)c->attempt_uid_hi,
			    conf_uid_ranges[i].what));
		if (list[0] != '\0')
			strlcat(list, ", ", sizeof(list));
		strlcat(list, conf_uid_ranges[i].what, sizeof(list));
	}
	if ((rc = conf_subid_taken(conf_dbfile("/etc/subuid",
	    "FACTORY_TEST_SUBUID"), "uid", c->attempt_uid_lo,
	    c->attempt_uid_hi, why, sizeof(why))) == 0)
		rc = conf_subid_taken(conf_dbfile("/etc/subgid",
		    "FACTORY_TEST_SUBGID"), "gid", c->attempt_uid_lo,
		    c->attempt_uid_hi, why, sizeof(why));
	if (rc == 0)
		rc = conf_uid_taken(c->attempt_uid_lo, c->attempt_uid_hi, why,
		    sizeof(why));
	if (rc != 0)
		return (y_failat(e, line, col, "attempt-uids", "%s%u-%u %s %s",
		    n != NULL ? "" : "the default ",
		    (unsigned)c->attempt_uid_lo, (unsigned)c->attempt_uid_hi,
		    rc == 1 ? "holds" : "cannot be checked:", why));
	if (list[0] != '\0')
		snprintf(c->warning, sizeof(c->warning), "%s:%d:%d: "
		    "attempt-uids: warning: %u-%u overlaps %s: an attempt may "
		    "share its uid with a user or service given it later",
		    e->file, line, col,
		    (unsigned)c->attempt_uid_lo, (unsigned)c->attempt_uid_hi,
		    list);
	return (0);
}

/*
 * Attempt uids are handed to untrusted code, and each attempt gets the
 * group of the same number: neither may be a role's uid or gid.
 */
static int
conf_attempt_uids(struct yerr *e, const struct ynode *n,
    struct factoryd_conf *c, const struct conf_where *where)
{
	const struct conf_user	*u;
	const char		*dash;
	char			 lo[32];
	uint64_t		 vlo, vhi;
	size_t			 i;

	if (n != NULL) {
		if (y_str(e, n, "a uid range LO-HI", 64, NULL, 0) == -1)
			return (-1);
		if ((dash = strchr(n->str, '-')) == NULL ||
		    (size_t)(dash - n->str) >= sizeof(lo))
			return (y_fail(e, n, "expected a uid range LO-HI, "
			    "not \"%s\"", n->str));
		memcpy(lo, n->str, (size_t)(dash - n->str));
		lo[dash - n->str] = '\0';
		if (y_parse_uint(lo, &vlo) != 0 ||
		    y_parse_uint(dash + 1, &vhi) != 0)
			return (y_fail(e, n, "expected a uid range LO-HI, "
			    "not \"%s\"", n->str));
		if (vlo == 0 || vlo > vhi || vhi > UID_LAST)
			return (y_fail(e, n, "%s: need 0 < LO <= HI <= %llu",
			    n->str, (unsigned long long)UID_LAST));
		c->attempt_uid_lo = (uid_t)vlo;
		c->attempt_uid_hi = (uid_t)vhi;
	}
	for (i = 0; i < NROLES; i++) {
		u = &c->users[conf_roles[i].id];
		if (u->uid == 0)
			continue;	/* the fleet's, without a fleet */
		if ((u->uid < c->attempt_uid_lo ||
		    u->uid > c->attempt_uid_hi) &&
		    (u->gid < c->attempt_uid_lo ||
		    u->gid > c->attempt_uid_hi))
			continue;
		if (n != NULL)
			return (y_fail(e, n, "%u-%u overlaps %s (uid %u, "
			    "gid %u)", (unsigned)c->attempt_uid_lo,
			    (unsigned)c->attempt_uid_hi, where[i].path,
			    (unsigned)u->uid, (unsigned)u->gid));
		return (y_failat(e, where[i].line, where[i].col,
		    where[i].path, "uid %u, gid %u: inside the default "
		    "attempt-uids %u-%u", (unsigned)u->uid, (unsigned)u->gid,
		    (unsigned)c->attempt_uid_lo, (unsigned)c->attempt_uid_hi));
	}
	return (conf_uid_reserved(e, n, c));
}

/* A duration in whole seconds within lo..hi seconds. */
static int
conf_seconds(struct yerr *e, const struct ynode *n, int lo, int hi, int *out)
{
	uint64_t	 ms;

	if (n == NULL)
		return (0);
	if (y_duration(e, n, &ms) == -1)
		return (-1);
	if (ms % 1000 != 0)
		return (y_fail(e, n, "%s: not a whole number of seconds",
		    n->str));
	if (ms / 1000 < (uint64_t)lo || ms / 1000 > (uint64_t)hi)
		return (y_fail(e, n, "%s is out of range %ds-%ds", n->str, lo,
		    hi));
	*out = (int)(ms / 1000);
	return (0);
}

static int
conf_int(struct yerr *e, const struct ynode *n, int lo, int hi, int *out)
{
	uint64_t	 v;

	if (n == NULL)
		return (0);
	if (y_uint(e, n, (uint64_t)lo, (uint64_t)hi, &v) == -1)
		return (-1);
	*out = (int)v;
	return (0);
}

static int
conf_optpath(struct yerr *e, const struct ynode *n, char *dst, size_t len)
{
	if (n == NULL)
		return (0);
	return (y_path(e, n, dst, len));
}

static int
conf_keys(struct yerr *e, const struct ynode *n, struct factoryd_conf *c)
{
	static const char * const keys[] = { "receipts", "verifier", NULL };

	if (n == NULL)
		return (0);
	if (y_map(e, n, "a mapping of key files") == -1 ||
	    y_keys(e, n, keys) == -1)
		return (-1);
	if (conf_optpath(e, y_get(n, "receipts"), c->receipt_key,
	    sizeof(c->receipt_key)) == -1 ||
	    conf_optpath(e, y_get(n, "verifier"), c->verifier_key,
	    sizeof(c->verifier_key)) == -1)
		return (-1);
	return (0);
}

/* sandbox: {downgrade: [name, ...]}: features to run without. */
/* A size the way these files write it: 4M, 1G, 1536K, 100. */
const char *
conf_size(uint64_t bytes, char *buf, size_t len)
{
	static const char	 units[] = "KMGT";
	int			 u = -1;

	while (u < 3 && bytes != 0 && bytes % 1024 == 0) {
		bytes /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)bytes,
		    units[u]);
	return (buf);
}

/*
 * attempt-disk: {default: SIZE, max: SIZE}, the size of the file
 * system each attempt's tree lives on while it runs.
 */
static int
conf_disk(struct yerr *e, const struct ynode *n, struct factoryd_conf *c)
{
	static const char * const keys[] = { "default", "max", NULL };
	const struct ynode	*d, *m;
	char			 b1[32], b2[32];

	if (n == NULL)
		return (0);
	if (y_map(e, n, "a mapping with default and max") == -1 ||
	    y_keys(e, n, keys) == -1)
		return (-1);
	d = y_get(n, "default");
	m = y_get(n, "max");
	if ((d != NULL && y_size(e, d, &c->disk_default) == -1) ||
	    (m != NULL && y_size(e, m, &c->disk_max) == -1))
		return (-1);
	if (d != NULL && c->disk_default < DISK_MIN)
		return (y_fail(e, d, "%s is less than the 1M a checkout "
		    "needs at least", d->str));
	if (m != NULL && c->disk_max < DISK_MIN)
		return (y_fail(e, m, "%s is less than the 1M a checkout "
		    "needs at least", m->str));
	if (c->disk_default > c->disk_max)
		return (y_fail(e, d != NULL ? d : m, "default %s is more than "
		    "max %s", conf_size(c->disk_default, b1, sizeof(b1)),
		    conf_size(c->disk_max, b2, sizeof(b2))));
	return (0);
}

/*
 * images: {max-size, max-files, max-depth, max-path}, the bounds of
 * one import (factoryctl image import).
 */
/* metrics: {file: PATH, interval: 15s}: the textfile collector's file. */
static int
conf_metrics(struct yerr *e, const struct ynode *n, struct factoryd_conf *c)
{
	static const char * const keys[] = { "file", "interval", NULL };

	if (n == NULL)
		return (0);
	if (y_map(e, n, "a mapping: file and interval") == -1 ||
	    y_keys(e, n, keys) == -1 ||
	    conf_seconds(e, y_get(n, "interval"), 1, 3600,
	    &c->metrics_interval) == -1)
		return (-1);
	if (y_get(n, "file") == NULL)
		return (y_fail(e, n, "file: missing"));
	return (y_path(e, y_get(n, "file"), c->metrics_file,
	    sizeof(c->metrics_file)));
}

static int
conf_images(struct yerr *e, const struct ynode *n, struct factoryd_conf *c)
{
	static const char * const keys[] = { "max-size", "max-files",
	    "max-depth", "max-path", NULL };
	const struct ynode	*v;
	uint64_t		 u;

	if (n == NULL)
		return (0);
	if (y_map(e, n, "a mapping of image import bounds") == -1 ||
	    y_keys(e, n, keys) == -1)
		return (-1);
	if ((v = y_get(n, "max-size")) != NULL) {
		if (y_size(e, v, &c->image_max_size) == -1)
			return (-1);
		if (c->image_max_size < 1024 * 1024)
			return (y_fail(e, v, "%s is less than 1M", v->str));
	}
	if ((v = y_get(n, "max-files")) != NULL) {
		if (y_uint(e, v, 1, 100000000, &u) == -1)
			return (-1);
		c->image_max_files = u;
	}
	if ((v = y_get(n, "max-depth")) != NULL) {
		if (y_uint(e, v, 1, 1024, &u) == -1)
			return (-1);
		c->image_max_depth = (int)u;
	}
	if ((v = y_get(n, "max-path")) != NULL) {
		if (y_uint(e, v, 16, 4095, &u) == -1)
			return (-1);
		c->image_max_path = (int)u;
	}
	return (0);
}

static int
conf_sandbox(struct yerr *e, const struct ynode *n, struct factoryd_conf *c)
{
	static const char * const keys[] = { "downgrade", NULL };
	const struct ynode	*dg;
	size_t			 i, j;

	if (n == NULL)
		return (0);
	if (y_map(e, n, "a mapping with downgrade") == -1 ||
	    y_keys(e, n, keys) == -1)
		return (-1);
	if ((dg = y_get(n, "downgrade")) == NULL)
		return (0);
	if (dg->kind != YN_SEQ)
		return (y_fail(e, dg, "expected a sequence of feature names, "
		    "not %s", y_what(dg)));
	for (i = 0; i < dg->nkids; i++) {
		if (y_str(e, dg->kids[i], "a feature name", 64, NULL, 0) == -1)
			return (-1);
		for (j = 0; conf_downgrade_names[j] != NULL; j++)
			if (strcmp(dg->kids[i]->str,
			    conf_downgrade_names[j]) == 0)
				break;
		if (conf_downgrade_names[j] == NULL)
			return (y_fail(e, dg->kids[i], "unknown feature \"%s\" "
			    "(landlock, landlock-net, landlock-scopes, "
			    "cgroup-kill, bind-rule)", dg->kids[i]->str));
		c->sandbox_downgrade |= 1U << j;
	}
	return (0);
}

/* One of two words: *out 1 for yes, 0 for no. */
static int
conf_word(struct yerr *e, const struct ynode *n, const char *yes,
    const char *no, int *out)
{
	if (n == NULL)
		return (0);
	if (y_str(e, n, yes, 16, NULL, 0) == -1)
		return (-1);
	if (strcmp(n->str, yes) == 0)
		*out = 1;
	else if (strcmp(n->str, no) == 0)
		*out = 0;
	else
		return (y_fail(e, n, "expected %s or %s, not \"%s\"", yes, no,
		    n->str));
	return (0);
}

/*
 * environment: {require-digest: yes|no, host-root: allow|deny}, at the
 * top (the defaults) or in a repository (its own).
 */
static int
conf_environment(struct yerr *e, const struct ynode *n,
    struct conf_envpolicy *p)
{
	static const char * const keys[] = { "require-digest", "host-root",
	    NULL };

	if (n == NULL)
		return (0);
	if (y_map(e, n, "a mapping with require-digest and host-root") ==
	    -1 || y_keys(e, n, keys) == -1 ||
	    conf_word(e, y_get(n, "require-digest"), "yes", "no",
	    &p->require_digest) == -1 ||
	    conf_word(e, y_get(n, "host-root"), "allow", "deny",
	    &p->host_root) == -1)
		return (-1);
	return (0);
}

void
conf_envpolicy(const struct factoryd_conf *c, const struct conf_repo *r,
    struct conf_envpolicy *out)
{
	*out = c->envpolicy;
	if (r == NULL)
		return;
	if (r->envpolicy.require_digest != CONF_UNSET)
		out->require_digest = r->envpolicy.require_digest;
	if (r->envpolicy.host_root != CONF_UNSET)
		out->host_root = r->envpolicy.host_root;
}

/*
 * Dollars as written, "2", "2.5", "0.000125": at most six decimals,
 * into micro-dollars.  No sign, no exponent, nothing after.
 */
int
conf_parse_usd(const char *s, uint64_t *out)
{
	/* Any six decimals after it still fit 64 bits. */
	const uint64_t	 maxwhole = (UINT64_MAX - 999999) / 1000000;
	uint64_t	 whole = 0, frac = 0, d;
	size_t		 i = 0, nfrac = 0;

	if (s[0] < '0' || s[0] > '9')
		return (-1);
	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		d = (uint64_t)(s[i] - '0');
		if (whole > (maxwhole - d) / 10)
			return (-1);
		whole = whole * 10 + d;
	}
	if (s[i] == '.') {
		for (i++; s[i] >= '0' && s[i] <= '9'; i++) {
			if (++nfrac > 6)
				return (-1);
			frac = frac * 10 + (uint64_t)(s[i] - '0');
		}
		if (nfrac == 0)
			return (-1);
	}
	if (s[i] != '\0')
		return (-1);
	for (; nfrac < 6; nfrac++)
		frac *= 10;
	*out = whole * 1000000 + frac;
	return (0);
}

const char *
conf_usd(uint64_t uusd, char *buf, size_t len)
{
	char	 frac[8];
	int	 n;

	snprintf(frac, sizeof(frac), "%06llu",
	    (unsigned long long)(uusd % 1000000));
	for (n = 5; n >= 0 && frac[n] == '0'; n--)
		frac[n] = '\0';
	if (frac[0] == '\0')
		snprintf(buf, len, "%llu", (unsigned long long)(uusd / 1000000));
	else
		snprintf(buf, len, "%llu.%s",
		    (unsigned long long)(uusd / 1000000), frac);
	return (buf);
}

static int
conf_usdnode(struct yerr *e, const struct ynode *n, uint64_t *out)
{
	if (y_str(e, n, "an amount in US dollars", 32, NULL, 0) == -1)
		return (-1);
	if (conf_parse_usd(n->str, out) == -1)
		return (y_fail(e, n, "expected US dollars with at most six "
		    "decimals (2.5, 0.000125), not \"%s\"", n->str));
	return (0);
}

/* An https:// URL without spaces or control characters. */
static int
conf_https(struct yerr *e, const struct ynode *n, char *dst, size_t len)
{
	char		 host[256], path[PATH_MAX];
	uint16_t	 port;

	if (y_str(e, n, "an https:// URL", 0, dst, len) == -1)
		return (-1);
	/* Keys travel there: never in the clear. */
	if (strncmp(dst, "https://", 8) != 0 || dst[8] == '\0' ||
	    dst[8] == '/')
		return (y_fail(e, n, "expected an https:// URL, not \"%s\"",
		    n->str));
	if (y_hasctl(dst) || strchr(dst, ' ') != NULL ||
	    strchr(dst, '@') != NULL)
		return (y_fail(e, n, "a URL has no spaces, control characters "
		    "or user part"));
	/* What factory-gateway will take, or it would refuse it at start. */
	if (gw_url_split(dst, host, sizeof(host), &port, path,
	    sizeof(path)) == -1)
		return (y_fail(e, n, "expected https://HOST[:PORT][/PATH] "
		    "(a host name or IPv4 address, a port 1-65535, no query "
		    "or fragment), not \"%s\"", n->str));
	return (0);
}

/*
 * A key or secret file is the gateway's alone: a regular file, not
 * writable but by its owner, nothing for others, and owned by the
 * gateway's user (or by root with the gateway's group).  Checked at
 * load, so a key left readable is refused before any attempt runs.
 */
static int
conf_keyfile(struct yerr *e, const struct ynode *n, const char *path,
    const struct factoryd_conf *c)
{
	const struct conf_user	*gw = &c->users[PROC_GATEWAY];
	struct stat		 st;

	if (stat(path, &st) == -1)
		return (y_fail(e, n, "%s: %s", path, strerror(errno)));
	if (!S_ISREG(st.st_mode))
		return (y_fail(e, n, "%s: not a regular file", path));
	if (st.st_mode & (S_IRWXO | S_IWGRP))
		return (y_fail(e, n, "%s: mode %04o: a key must not be "
		    "accessible to others nor writable by its group", path,
		    (unsigned)(st.st_mode & 07777)));
	if (gw->uid == 0)
		return (0);
	if (st.st_uid == gw->uid && (st.st_mode & S_IRWXG) == 0)
		return (0);
	if (st.st_uid == 0 && st.st_gid == gw->gid)
		return (0);
	return (y_fail(e, n, "%s: owned by %u:%u mode %04o: must be "
	    "readable by users.gateway only (owner %u, mode 0400 or 0600; "
	    "or root:%u, mode 0440 or 0640)", path, (unsigned)st.st_uid,
	    (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777),
	    (unsigned)gw->uid, (unsigned)gw->gid));
}

/* The cache rates of a tier: each optional, unset if absent. */
static int
conf_cache_rates(struct yerr *e, const struct ynode *v, uint64_t *cr,
    uint64_t *cw, uint64_t *cw1h)
{
	static const char *keys[] = { "cache-read", "cache-write",
	    "cache-write-1h", NULL };
	uint64_t	*dst[] = { cr, cw, cw1h };
	const struct ynode *n;
	size_t		 i;

	for (i = 0; keys[i] != NULL; i++) {
		*dst[i] = UINT64_MAX;
		if ((n = y_get(v, keys[i])) != NULL &&
		    conf_usdnode(e, n, dst[i]) == -1)
			return (-1);
	}
	return (0);
}

/*
 * long-context: {above: N, input: USD, output: USD, cache-read: USD,
 * cache-write: USD, cache-write-1h: USD}: every token of a request
 * whose input is above N at these rates (Anthropic's 1M context beta).
 */
static int
conf_longctx(struct yerr *e, const struct ynode *v, struct conf_price *p)
{
	static const char * const keys[] = { "above", "input", "output",
	    "cache-read", "cache-write", "cache-write-1h", NULL };
	const struct ynode	*n;

	if (y_map(e, v, "a mapping with above, input and output") == -1 ||
	    y_keys(e, v, keys) == -1)
		return (-1);
	if ((n = y_need(e, v, "above")) == NULL ||
	    y_uint(e, n, 1, (uint64_t)1 << 40, &p->long_above) == -1)
		return (-1);
	if ((n = y_need(e, v, "input")) == NULL ||
	    conf_usdnode(e, n, &p->longctx.in_uusd) == -1 ||
	    (n = y_need(e, v, "output")) == NULL ||
	    conf_usdnode(e, n, &p->longctx.out_uusd) == -1)
		return (-1);
	return (conf_cache_rates(e, v, &p->longctx.cache_read,
	    &p->longctx.cache_write, &p->longctx.cache_write_1h));
}

/*
 * prices: {MODEL: {input: USD, output: USD, max-output: N, cache-read:
 * USD, cache-write: USD, cache-write-1h: USD, long-context: {...}}},
 * per million tokens; max-output the model's output ceiling, the cache
 * rates (unset: the provider's rule, factory-gateway) and the
 * long-context tier optional.
 */
static int
conf_prices(struct yerr *e, const struct ynode *n, struct conf_gw *g)
{
	static const char * const keys[] = { "input", "output",
	    "max-output", "cache-read", "cache-write", "cache-write-1h",
	    "long-context", NULL };
	const struct ynode	*k, *v, *in, *out, *mo, *lc;
	struct conf_price	*p;
	size_t			 i;

	if (y_map(e, n, "a mapping of models to prices") == -1)
		return (-1);
	if (n->nkids > CONF_GW_PRICES)
		return (y_fail(e, n, "%zu models, more than %d", n->nkids,
		    CONF_GW_PRICES));
	for (i = 0; i < n->nkids; i++) {
		k = n->keys[i];
		v = n->kids[i];
		p = &g->prices[i];
		if (y_str(e, k, "a model name", 0, p->model,
		    sizeof(p->model)) == -1)
			return (-1);
		if (y_hasctl(k->str) || strchr(k->str, ' ') != NULL ||
		    strchr(k->str, '"') != NULL || strchr(k->str, '\\') != NULL)
			return (y_fail(e, k, "a model name has no spaces, "
			    "quotes, backslashes or control characters"));
		if (y_map(e, v, "a mapping with input and output") == -1 ||
		    y_keys(e, v, keys) == -1 ||
		    (in = y_need(e, v, "input")) == NULL ||
		    (out = y_need(e, v, "output")) == NULL ||
		    conf_usdnode(e, in, &p->in_uusd) == -1 ||
		    conf_usdnode(e, out, &p->out_uusd) == -1)
			return (-1);
		if ((mo = y_get(v, "max-output")) != NULL &&
		    y_uint(e, mo, 1, GW_MAXOUT_MAX, &p->max_output) == -1)
			return (-1);
		if (conf_cache_rates(e, v, &p->cache_read, &p->cache_write,
		    &p->cache_write_1h) == -1)
			return (-1);
		p->longctx.cache_read = p->longctx.cache_write =
		    p->longctx.cache_write_1h = UINT64_MAX;
		if ((lc = y_get(v, "long-context")) != NULL &&
		    conf_longctx(e, lc, p) == -1)
			return (-1);
	}
	g->nprices = n->nkids;
	return (0);
}

static int
conf_methods(struct yerr *e, const struct ynode *n, uint32_t *out)
{
	size_t	 i, j;

	if (n->kind != YN_SEQ || n->nkids == 0)
		return (y_fail(e, n, "expected a sequence of HTTP methods, "
		    "not %s", y_what(n)));
	*out = 0;
	for (i = 0; i < n->nkids; i++) {
		if (y_str(e, n->kids[i], "an HTTP method", 16, NULL, 0) == -1)
			return (-1);
		for (j = 0; conf_method_names[j] != NULL; j++)
			if (strcmp(n->kids[i]->str, conf_method_names[j]) == 0)
				break;
		if (conf_method_names[j] == NULL)
			return (y_fail(e, n->kids[i], "unknown method \"%s\" "
			    "(GET, HEAD, POST, PUT, PATCH, DELETE)",
			    n->kids[i]->str));
		*out |= 1U << j;
	}
	return (0);
}

/*
 * The header the secret goes in: "Name" (the secret is its value) or
 * "Name: prefix" ("Authorization: Bearer"), as factory-gateway takes it.
 */
static int
conf_header(struct yerr *e, const struct ynode *n, char *dst, size_t len)
{
	const char	*p;
	size_t		 nl;

	if (y_str(e, n, "a header and prefix", 0, dst, len) == -1)
		return (-1);
	nl = strcspn(dst, ":");
	if (nl == 0 || strspn(dst, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-") != nl)
		return (y_fail(e, n, "not a header name: \"%.*s\"", (int)nl,
		    dst));
	if (dst[nl] == '\0')
		return (0);
	if (dst[nl + 1] != ' ' || dst[nl + 2] == '\0')
		return (y_fail(e, n, "expected \"Name\" or \"Name: prefix\", "
		    "not \"%s\"", n->str));
	for (p = dst + nl + 2; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
			return (y_fail(e, n, "a prefix is printable, without "
			    "spaces"));
	return (0);
}

static int
conf_gw1(struct yerr *e, const struct ynode *key, const struct ynode *val,
    struct factoryd_conf *c, int upstream)
{
	static const char * const kprov[] = { "kind", "url", "key", "ca",
	    "prices", "idle-timeout", NULL };
	static const char * const kup[] = { "url", "header", "secret", "ca",
	    "methods", "idle-timeout", NULL };
	uint64_t		 idle;
	const struct ynode	*n, *kn;
	struct conf_gw		*g;
	size_t			 i;

	if (!name_valid(key->str, CONF_GW_NAMEMAX - 1))
		return (y_fail(e, key, "not a name: letters, digits, '.', "
		    "'_' and '-', at most %d, not starting with '.' or '-'",
		    CONF_GW_NAMEMAX - 1));
	for (i = 0; i < c->ngw; i++)
		if (strcmp(c->gw[i].name, key->str) == 0)
			return (y_fail(e, key, "%s: also a %s", key->str,
			    c->gw[i].kind == CONF_GW_UPSTREAM ? "upstream" :
			    "provider"));
	if (c->ngw == CONF_GW_MAX)
		return (y_fail(e, key, "more than %d providers and upstreams",
		    CONF_GW_MAX));
	if (y_map(e, val, "a mapping") == -1 ||
	    y_keys(e, val, upstream ? kup : kprov) == -1)
		return (-1);
	g = &c->gw[c->ngw];
	memset(g, 0, sizeof(*g));
	strlcpy(g->name, key->str, sizeof(g->name));
	if (upstream)
		g->kind = CONF_GW_UPSTREAM;
	else {
		if ((n = y_need(e, val, "kind")) == NULL ||
		    y_str(e, n, "openai, anthropic or gemini", 16, NULL,
		    0) == -1)
			return (-1);
		if (strcmp(n->str, "openai") == 0)
			g->kind = CONF_GW_OPENAI;
		else if (strcmp(n->str, "anthropic") == 0)
			g->kind = CONF_GW_ANTHROPIC;
		else if (strcmp(n->str, "gemini") == 0)
			g->kind = CONF_GW_GEMINI;
		else
			return (y_fail(e, n, "expected openai, anthropic or "
			    "gemini, not \"%s\"", n->str));
	}
	if ((n = y_need(e, val, "url")) == NULL ||
	    conf_https(e, n, g->url, sizeof(g->url)) == -1)
		return (-1);
	if ((kn = y_need(e, val, upstream ? "secret" : "key")) == NULL ||
	    y_path(e, kn, g->key, sizeof(g->key)) == -1)
		return (-1);
	strlcpy(g->ca, CA_DEFAULT, sizeof(g->ca));
	if (conf_optpath(e, y_get(val, "ca"), g->ca, sizeof(g->ca)) == -1)
		return (-1);
	/* Seconds of the provider's silence before a request is cut. */
	if ((n = y_get(val, "idle-timeout")) != NULL) {
		if (y_uint(e, n, 1, GW_IDLE_MAX, &idle) == -1)
			return (-1);
		g->idle_timeout = (uint32_t)idle;
	}
	if (upstream) {
		if ((n = y_need(e, val, "header")) == NULL ||
		    conf_header(e, n, g->header, sizeof(g->header)) == -1)
			return (-1);
		g->methods = CONF_M_GET | CONF_M_HEAD;
		if ((n = y_get(val, "methods")) != NULL &&
		    conf_methods(e, n, &g->methods) == -1)
			return (-1);
	} else if ((n = y_get(val, "prices")) != NULL &&
	    conf_prices(e, n, g) == -1)
		return (-1);
	/* Last: the file system, once the text is known to be right. */
	if (conf_keyfile(e, kn, g->key, c) == -1)
		return (-1);
	c->ngw++;
	return (0);
}

/* providers: {NAME: {...}}, upstreams: {NAME: {...}}. */
static int
conf_gateway(struct yerr *e, const struct ynode *root,
    struct factoryd_conf *c)
{
	static const char * const top[] = { "providers", "upstreams" };
	const struct ynode	*n;
	size_t			 i, t;

	for (t = 0; t < 2; t++) {
		if ((n = y_get(root, top[t])) == NULL)
			continue;
		if (y_map(e, n, t == 0 ? "a mapping of provider names" :
		    "a mapping of upstream names") == -1)
			return (-1);
		for (i = 0; i < n->nkids; i++)
			if (conf_gw1(e, n->keys[i], n->kids[i], c, t) == -1)
				return (-1);
	}
	return (0);
}

const struct conf_gw *
conf_gw(const struct factoryd_conf *c, const char *name)
{
	size_t	 i;

	for (i = 0; i < c->ngw; i++)
		if (strcmp(c->gw[i].name, name) == 0)
			return (&c->gw[i]);
	return (NULL);
}

/* A list of names of factoryd.conf providers or upstreams. */
static int
conf_gwnames(struct yerr *e, const struct ynode *n,
    const struct factoryd_conf *c, int upstream,
    char (*dst)[CONF_GW_NAMEMAX], size_t *np)
{
	const struct conf_gw	*g;
	size_t			 i, j;

	if (n->kind != YN_SEQ)
		return (y_fail(e, n, "expected a sequence of %s names, not "
		    "%s", upstream ? "upstream" : "provider", y_what(n)));
	if (n->nkids > CONF_GW_GRANTS)
		return (y_fail(e, n, "%zu names, more than %d", n->nkids,
		    CONF_GW_GRANTS));
	for (i = 0; i < n->nkids; i++) {
		if (y_str(e, n->kids[i], "a name", 0, dst[i],
		    CONF_GW_NAMEMAX) == -1)
			return (-1);
		if ((g = conf_gw(c, dst[i])) == NULL ||
		    (g->kind == CONF_GW_UPSTREAM) != upstream)
			return (y_fail(e, n->kids[i], "%s: not one of the "
			    "%s of this file", dst[i], upstream ? "upstreams" :
			    "providers"));
		for (j = 0; j < i; j++)
			if (strcmp(dst[i], dst[j]) == 0)
				return (y_fail(e, n->kids[i], "%s: listed "
				    "twice", dst[i]));
	}
	*np = n->nkids;
	return (0);
}

/*
 * A repository's model: {providers: [NAME], max-tokens: N, max-usd: X}
 * and upstreams: [NAME]: what its manifests may be granted, at most.
 */
static int
conf_repo_grant(struct yerr *e, const struct ynode *val,
    const struct factoryd_conf *c, struct conf_modelgrant *g)
{
	static const char * const keys[] = { "providers", "max-tokens",
	    "max-usd", NULL };
	const struct ynode	*n, *v;

	if ((n = y_get(val, "upstreams")) != NULL &&
	    conf_gwnames(e, n, c, 1, g->upstreams, &g->nupstreams) == -1)
		return (-1);
	if ((n = y_get(val, "model")) == NULL)
		return (0);
	if (y_map(e, n, "a mapping with providers, max-tokens and max-usd")
	    == -1 || y_keys(e, n, keys) == -1 ||
	    (v = y_need(e, n, "providers")) == NULL ||
	    conf_gwnames(e, v, c, 0, g->providers, &g->nproviders) == -1)
		return (-1);
	if ((v = y_get(n, "max-tokens")) != NULL &&
	    y_uint(e, v, 1, UINT64_MAX, &g->max_tokens) == -1)
		return (-1);
	if ((v = y_get(n, "max-usd")) != NULL) {
		if (conf_usdnode(e, v, &g->max_uusd) == -1)
			return (-1);
		if (g->max_uusd == 0)
			return (y_fail(e, v, "zero is refused: leave max-usd "
			    "out for no ceiling"));
	}
	return (0);
}

/* An owner or repository name on the forge. */
static int
conf_forgename(struct yerr *e, const struct ynode *n, char *dst, size_t len)
{
	if (y_str(e, n, "a name", 0, dst, len) == -1)
		return (-1);
	if (!name_valid(n->str, len - 1))
		return (y_fail(e, n, "not a valid name: \"%s\"", n->str));
	return (0);
}

static int
conf_github_id(struct yerr *e, const struct ynode *pub, struct conf_github *g)
{
	const struct ynode	*app, *client;
	uint64_t		 v = 0;

	app = y_get(pub, "app-id");
	client = y_get(pub, "client-id");
	if (app != NULL && client != NULL)
		return (y_fail(e, client, "app-id and client-id are "
		    "exclusive: give one"));
	if (app != NULL) {
		/* App ids are numbers; conf_print relies on it. */
		if (y_uint(e, app, 1, UINT64_MAX, &v) == -1)
			return (-1);
		return (y_str(e, app, "an app id", 0, g->app_id,
		    sizeof(g->app_id)));
	}
	if (client == NULL)
		return (y_need(e, pub, "app-id") == NULL ? -1 : 0);
	if (y_str(e, client, "a client id", 0, g->app_id,
	    sizeof(g->app_id)) == -1)
		return (-1);
	if (!name_valid(client->str, sizeof(g->app_id) - 1) ||
	    strspn(client->str, "0123456789") == client->len)
		return (y_fail(e, client, "not a client id: \"%s\" (a number "
		    "is an app-id)", client->str));
	return (0);
}

static int
conf_github(struct yerr *e, const struct ynode *pub, struct conf_github *g)
{
	const struct ynode	*n;

	if ((n = y_need(e, pub, "api")) == NULL ||
	    y_str(e, n, "a URL", 0, g->api, sizeof(g->api)) == -1)
		return (-1);
	/* Tokens travel there: never in the clear. */
	if (strncmp(g->api, "https://", 8) != 0 || g->api[8] == '\0')
		return (y_fail(e, n, "expected an https:// URL, not \"%s\"",
		    n->str));
	if (y_hasctl(g->api) || strchr(g->api, ' ') != NULL)
		return (y_fail(e, n, "a URL has no spaces or control "
		    "characters"));
	if ((n = y_need(e, pub, "owner")) == NULL ||
	    conf_forgename(e, n, g->owner, sizeof(g->owner)) == -1)
		return (-1);
	if ((n = y_need(e, pub, "repo")) == NULL ||
	    conf_forgename(e, n, g->repo, sizeof(g->repo)) == -1)
		return (-1);
	if ((n = y_need(e, pub, "repository-id")) == NULL ||
	    y_uint(e, n, 1, UINT64_MAX, &g->repository_id) == -1)
		return (-1);
	if (conf_github_id(e, pub, g) == -1)
		return (-1);
	if ((n = y_need(e, pub, "installation-id")) == NULL ||
	    y_uint(e, n, 1, UINT64_MAX, &g->installation_id) == -1)
		return (-1);
	if ((n = y_need(e, pub, "key")) == NULL ||
	    y_path(e, n, g->key, sizeof(g->key)) == -1)
		return (-1);
	strlcpy(g->ca, CA_DEFAULT, sizeof(g->ca));
	return (conf_optpath(e, y_get(pub, "ca"), g->ca, sizeof(g->ca)));
}

static int
conf_publish(struct yerr *e, const struct ynode *pub, struct conf_repo *r)
{
	static const char * const knone[] = { "forge", NULL };
	static const char * const klocal[] = {
		"forge", "remote", "pulls", "shared", NULL
	};
	static const char * const kgithub[] = {
		"forge", "api", "owner", "repo", "repository-id", "app-id",
		"client-id", "installation-id", "key", "ca", NULL
	};
	const struct ynode	*n;

	if (y_map(e, pub, "a mapping") == -1)
		return (-1);
	if ((n = y_need(e, pub, "forge")) == NULL ||
	    y_str(e, n, "a forge", 0, NULL, 0) == -1)
		return (-1);
	if (strcmp(n->str, "none") == 0) {
		r->forge = FORGE_NONE;
		return (y_keys(e, pub, knone));
	}
	if (strcmp(n->str, "local") == 0) {
		r->forge = FORGE_LOCAL;
		if (y_keys(e, pub, klocal) == -1 ||
		    (n = y_need(e, pub, "remote")) == NULL ||
		    y_path(e, n, r->remote, sizeof(r->remote)) == -1 ||
		    (n = y_need(e, pub, "pulls")) == NULL ||
		    y_path(e, n, r->pulls, sizeof(r->pulls)) == -1)
			return (-1);
		return (conf_word(e, y_get(pub, "shared"), "yes", "no",
		    &r->shared));
	}
	if (strcmp(n->str, "github") == 0) {
		r->forge = FORGE_GITHUB;
		if (y_keys(e, pub, kgithub) == -1)
			return (-1);
		return (conf_github(e, pub, &r->github));
	}
	return (y_fail(e, n, "unknown forge \"%s\": expected none, local or "
	    "github", n->str));
}

static int
conf_repo1(struct yerr *e, const struct ynode *key, const struct ynode *val,
    struct factoryd_conf *c)
{
	static const char * const keys[] = { "path", "publish",
	    "environment", "model", "upstreams", NULL };
	const struct ynode	*n;
	struct conf_repo	*r, *at;

	if (!name_valid(key->str, REPO_NAME_MAX - 1) || key->str[0] == '-')
		return (y_fail(e, key, "not a repository name: letters, "
		    "digits, '.', '_' and '-', at most %d, not starting with "
		    "'.' or '-'", REPO_NAME_MAX - 1));
	if (y_map(e, val, "a mapping") == -1 || y_keys(e, val, keys) == -1)
		return (-1);
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return (y_fail(e, key, "out of memory"));
	strlcpy(r->name, key->str, sizeof(r->name));
	r->forge = FORGE_NONE;
	r->envpolicy.require_digest = r->envpolicy.host_root = CONF_UNSET;
	/* Sorted by name, so that conf_print's order does not depend on
	 * the file's. */
	TAILQ_FOREACH(at, &c->repos, entry)
		if (strcmp(at->name, r->name) > 0)
			break;
	if (at != NULL)
		TAILQ_INSERT_BEFORE(at, r, entry);
	else
		TAILQ_INSERT_TAIL(&c->repos, r, entry);
	if ((n = y_need(e, val, "path")) == NULL ||
	    y_path(e, n, r->path, sizeof(r->path)) == -1)
		return (-1);
	if (conf_environment(e, y_get(val, "environment"), &r->envpolicy) ==
	    -1)
		return (-1);
	if (conf_repo_grant(e, val, c, &r->grant) == -1)
		return (-1);
	if ((n = y_get(val, "publish")) != NULL)
		return (conf_publish(e, n, r));
	return (0);
}

static int
conf_repos(struct yerr *e, const struct ynode *n, struct factoryd_conf *c)
{
	size_t	 i;

	if (n == NULL)
		return (0);
	if (y_map(e, n, "a mapping of repository names") == -1)
		return (-1);
	for (i = 0; i < n->nkids; i++)
		if (conf_repo1(e, n->keys[i], n->kids[i], c) == -1)
			return (-1);
	return (0);
}

/*
 * A user or group of a tenant: a name known to NSS or a number.  Root's
 * are refused: root is no operator of a tenant's.
 */
static int
conf_fleet_id(struct yerr *e, const struct ynode *n, int group, uint32_t *out)
{
	struct passwd	*pw;
	struct group	*gr;
	uint64_t	 v;

	if (y_str(e, n, group ? "a group name or a gid" :
	    "a user name or a uid", 32, NULL, 0) == -1)
		return (-1);
	if (y_parse_uint(n->str, &v) == 0) {
		if (v > UID_LAST)
			return (y_fail(e, n, "%s is out of range", n->str));
	} else if (!name_valid(n->str, 32))
		return (y_fail(e, n, "not a %s name: \"%s\"",
		    group ? "group" : "user", n->str));
	else if (group) {
		if ((gr = getgrnam(n->str)) == NULL)
			return (y_fail(e, n, "unknown group %s", n->str));
		v = gr->gr_gid;
	} else {
		if ((pw = getpwnam(n->str)) == NULL)
			return (y_fail(e, n, "unknown user %s", n->str));
		v = pw->pw_uid;
	}
	if (v == 0)
		return (y_fail(e, n, "root (%s 0) is refused",
		    group ? "gid" : "uid"));
	*out = (uint32_t)v;
	return (0);
}

/* users: [...], groups: [...] or repositories: [...] of a tenant. */
static int
conf_fleet_list(struct yerr *e, const struct ynode *n, int kind,
    struct conf_tenant *t)
{
	const struct ynode	*k;
	size_t			 i, j;
	uint32_t		 id = 0;

	if (n == NULL)
		return (0);
	if (n->kind != YN_SEQ)
		return (y_fail(e, n, "expected a sequence, not %s",
		    y_what(n)));
	if (n->nkids > CONF_FLEET_IDS)
		return (y_fail(e, n, "more than %d", CONF_FLEET_IDS));
	for (i = 0; i < n->nkids; i++) {
		k = n->kids[i];
		if (kind == 2) {
			if (y_str(e, k, "a repository name", REPO_NAME_MAX - 1,
			    NULL, 0) == -1)
				return (-1);
			if (!name_valid(k->str, REPO_NAME_MAX - 1) ||
			    k->str[0] == '-')
				return (y_fail(e, k, "not a repository name: "
				    "\"%s\"", k->str));
			for (j = 0; j < t->nrepos; j++)
				if (strcmp(t->repos[j], k->str) == 0)
					return (y_fail(e, k, "%s twice",
					    k->str));
			strlcpy(t->repos[t->nrepos++], k->str,
			    sizeof(t->repos[0]));
			continue;
		}
		if (conf_fleet_id(e, k, kind, &id) == -1)
			return (-1);
		if (kind == 1)
			t->gids[t->ngids++] = (gid_t)id;
		else
			t->uids[t->nuids++] = (uid_t)id;
	}
	return (0);
}

static int
conf_fleet_tenant(struct yerr *e, const struct ynode *key,
    const struct ynode *val, struct conf_fleet *f)
{
	static const char * const keys[] = { "weight", "max-running",
	    "max-queued", "paused", "users", "groups", "repositories",
	    NULL };
	struct conf_tenant	*t;
	uint64_t		 v;

	if (f->ntenants == CONF_FLEET_TENANTS)
		return (y_fail(e, key, "more than %d tenants",
		    CONF_FLEET_TENANTS));
	if (!name_valid(key->str, CONF_FLEET_NAMEMAX - 1) ||
	    key->str[0] == '-')
		return (y_fail(e, key, "not a tenant name: letters, digits, "
		    "'.', '_' and '-', at most %d", CONF_FLEET_NAMEMAX - 1));
	if (y_map(e, val, "a mapping") == -1 || y_keys(e, val, keys) == -1)
		return (-1);
	t = &f->tenants[f->ntenants++];
	strlcpy(t->name, key->str, sizeof(t->name));
	t->weight = 1;
	t->max_running = 4;
	t->max_queued = 100;
	if (y_get(val, "weight") != NULL) {
		if (y_uint(e, y_get(val, "weight"), 1, CONF_FLEET_WEIGHTMAX,
		    &v) == -1)
			return (-1);
		t->weight = v;
	}
	if (y_get(val, "max-running") != NULL) {
		if (y_uint(e, y_get(val, "max-running"), 0, CONF_FLEET_CAPMAX,
		    &v) == -1)
			return (-1);
		t->max_running = v;
	}
	if (y_get(val, "max-queued") != NULL) {
		if (y_uint(e, y_get(val, "max-queued"), 0, CONF_FLEET_CAPMAX,
		    &v) == -1)
			return (-1);
		t->max_queued = v;
	}
	if (conf_word(e, y_get(val, "paused"), "yes", "no", &t->paused) == -1 ||
	    conf_fleet_list(e, y_get(val, "users"), 0, t) == -1 ||
	    conf_fleet_list(e, y_get(val, "groups"), 1, t) == -1 ||
	    conf_fleet_list(e, y_get(val, "repositories"), 2, t) == -1)
		return (-1);
	if (t->nrepos == 0)
		return (y_fail(e, key, "repositories: missing"));
	if (t->nuids == 0 && t->ngids == 0)
		return (y_fail(e, key, "no users or groups act for it"));
	return (0);
}

/* A duration in milliseconds within lo..hi. */
static int
conf_ms(struct yerr *e, const struct ynode *n, uint32_t lo, uint32_t hi,
    uint32_t *out)
{
	uint64_t	 ms;

	if (n == NULL)
		return (0);
	if (y_duration(e, n, &ms) == -1)
		return (-1);
	if (ms < lo || ms > hi)
		return (y_fail(e, n, "%s is out of range %ums-%ums", n->str,
		    lo, hi));
	*out = (uint32_t)ms;
	return (0);
}

/*
 * A lost host's publication began before its lease's end (its publisher
 * begins none later) and may take the publisher's whole budget: a host
 * that adopts it sooner (each waits its own adopt-after, f's, since the
 * sweep) would race it at the forge.  -1 and why if c's repositories
 * publish to GitHub and f waits less.
 */
int
conf_fleet_adopt_check(const struct factoryd_conf *c,
    const struct conf_fleet *f, char *why, size_t len)
{
	const struct conf_repo	*r;

	if (!f->enabled)
		return (0);
	TAILQ_FOREACH(r, &c->repos, entry)
		if (r->forge == FORGE_GITHUB &&
		    f->adopt_after_ms < PUB_GITHUB_BUDGET_S * 1000ULL) {
			snprintf(why, len, "is less than a GitHub publication "
			    "may take (%d s), and repository %s publishes to "
			    "GitHub", PUB_GITHUB_BUDGET_S, r->name);
			return (-1);
		}
	return (0);
}

/*
 * fleet: {conninfo, host, slots, lease, query-deadline, tenants}.  The
 * conninfo is libpq's, passed on as it is; it may hold a password, so
 * it is never printed.
 */
/*
 * preview: {listen: ADDR:PORT, domain: NAME, ttl: DURATION, secure: yes}.
 * The address is a literal (IPv6 in brackets): nothing is resolved.
 */
static int
conf_preview(struct yerr *e, const struct ynode *n, struct factoryd_conf *c)
{
	static const char * const keys[] = { "listen", "domain", "ttl",
	    "secure", NULL };
	struct conf_preview	*p = &c->preview;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&p->addr;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&p->addr;
	const struct ynode	*v;
	char			 host[64], *colon;
	uint64_t		 port;
	size_t			 i;

	if (n == NULL)
		return (0);
	if (y_map(e, n, "a mapping with listen, domain, ttl and secure") ==
	    -1 || y_keys(e, n, keys) == -1)
		return (-1);
	p->enabled = 1;
	p->ttl_ms = CONF_PREVIEW_TTL;
	if ((v = y_need(e, n, "listen")) == NULL ||
	    y_str(e, v, "an address and port", 0, p->listen,
	    sizeof(p->listen)) == -1)
		return (-1);
	strlcpy(host, p->listen, sizeof(host));
	if ((colon = strrchr(host, ':')) == NULL ||
	    y_parse_uint(colon + 1, &port) != 0 || port == 0 || port > 65535)
		return (y_fail(e, v, "not ADDR:PORT: \"%s\"", p->listen));
	*colon = '\0';
	memset(&p->addr, 0, sizeof(p->addr));
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		host[strlen(host) - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) != 1)
			return (y_fail(e, v, "not an IPv6 address: \"%s\"",
			    host + 1));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		p->addrlen = sizeof(*sin6);
	} else {
		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			return (y_fail(e, v, "not an IPv4 address (or [IPv6]): "
			    "\"%s\"", host));
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		p->addrlen = sizeof(*sin);
	}
	if ((v = y_need(e, n, "domain")) == NULL ||
	    y_str(e, v, "a domain", 0, p->domain, sizeof(p->domain)) == -1)
		return (-1);
	for (i = 0; p->domain[i] != '\0'; i++)
		if (p->domain[i] >= 'A' && p->domain[i] <= 'Z')
			p->domain[i] += 'a' - 'A';
	if (!preview_valid_domain(p->domain))
		return (y_fail(e, v, "not a domain: labels of letters, digits "
		    "and '-'"));
	if ((v = y_get(n, "ttl")) != NULL) {
		if (y_duration(e, v, &p->ttl_ms) == -1)
			return (-1);
		if (p->ttl_ms < 60000 || p->ttl_ms > CONF_PREVIEW_TTLMAX)
			return (y_fail(e, v, "not between 1m and 7d"));
	}
	return (conf_word(e, y_get(n, "secure"), "yes", "no", &p->secure));
}

static int
conf_fleet(struct yerr *e, const struct ynode *n, struct factoryd_conf *c)
{
	static const char * const keys[] = { "conninfo", "host", "slots",
	    "lease", "query-deadline", "adopt-after", "tenants", NULL };
	struct conf_fleet	*f = &c->fleet;
	const struct ynode	*v;
	uint64_t		 u;
	size_t			 i;
	char			 why[256];

	if (n == NULL)
		return (0);
	if (y_map(e, n, "a mapping") == -1 || y_keys(e, n, keys) == -1)
		return (-1);
	f->enabled = 1;
	f->slots = c->max_attempts;
	f->lease_ms = 30000;
	f->deadline_ms = 5000;
	/* GitHub's whole publication may take 300 s (the publisher's). */
	f->adopt_after_ms = 330000;
	if ((v = y_need(e, n, "conninfo")) == NULL ||
	    y_str(e, v, "a libpq conninfo", 0, f->conninfo,
	    sizeof(f->conninfo)) == -1)
		return (-1);
	if (y_hasctl(f->conninfo))
		return (y_fail(e, v, "contains a control character"));
	if ((v = y_need(e, n, "host")) == NULL ||
	    y_str(e, v, "a host name", 0, f->host, sizeof(f->host)) == -1)
		return (-1);
	if (!name_valid(f->host, CONF_FLEET_NAMEMAX - 1) || f->host[0] == '-')
		return (y_fail(e, v, "not a host name: letters, digits, '.', "
		    "'_' and '-'"));
	if ((v = y_get(n, "slots")) != NULL) {
		if (y_uint(e, v, 1, (uint64_t)c->max_attempts, &u) == -1)
			return (-1);
		f->slots = u;
	}
	if (conf_ms(e, y_get(n, "lease"), 3000, 3600000, &f->lease_ms) == -1)
		return (-1);
	/* A renewal must be able to fail and be tried again in a lease. */
	if (f->deadline_ms > f->lease_ms / 3)
		f->deadline_ms = f->lease_ms / 3;
	if ((v = y_get(n, "query-deadline")) != NULL) {
		if (conf_ms(e, v, 100, 600000, &f->deadline_ms) == -1)
			return (-1);
		if (f->deadline_ms > f->lease_ms / 3)
			return (y_fail(e, v, "%s is more than a third of the "
			    "lease", v->str));
	}
	if (conf_ms(e, (v = y_get(n, "adopt-after")), 0, 3600000,
	    &f->adopt_after_ms) == -1)
		return (-1);
	if (v != NULL && conf_fleet_adopt_check(c, f, why,
	    sizeof(why)) == -1)
		return (y_fail(e, v, "%s %s", v->str, why));
	if ((v = y_need(e, n, "tenants")) == NULL ||
	    y_map(e, v, "a mapping of tenant names") == -1)
		return (-1);
	if (v->nkids == 0)
		return (y_fail(e, v, "no tenant"));
	for (i = 0; i < v->nkids; i++)
		if (conf_fleet_tenant(e, v->keys[i], v->kids[i], f) == -1)
			return (-1);
	return (0);
}

/*
 * The tenant a caller acts for: the one named, if the caller's uid or
 * one of its groups is among its operators; with none named, the one
 * it acts for, if there is exactly one.
 */
const struct conf_tenant *
conf_tenant_of(const struct factoryd_conf *c, const char *name, uid_t uid,
    const gid_t *gids, int ngids, char *why, size_t len)
{
	const struct conf_tenant *t, *found = NULL;
	size_t			 i, j;
	int			 k, n = 0, acts;

	for (i = 0; i < c->fleet.ntenants; i++) {
		t = &c->fleet.tenants[i];
		acts = 0;
		for (j = 0; j < t->nuids; j++)
			acts |= t->uids[j] == uid;
		for (j = 0; j < t->ngids; j++)
			for (k = 0; k < ngids; k++)
				acts |= t->gids[j] == gids[k];
		if (name != NULL && name[0] != '\0' &&
		    strcmp(name, t->name) == 0) {
			if (acts)
				return (t);
			snprintf(why, len, "uid %u does not act for tenant %s",
			    (unsigned)uid, name);
			return (NULL);
		}
		if (acts) {
			found = t;
			n++;
		}
	}
	if (name != NULL && name[0] != '\0')
		snprintf(why, len, "no tenant %s", name);
	else if (n == 0)
		snprintf(why, len, "uid %u acts for no tenant", (unsigned)uid);
	else if (n > 1)
		snprintf(why, len, "uid %u acts for %d tenants: name one "
		    "(--tenant)", (unsigned)uid, n);
	else
		return (found);
	return (NULL);
}

static int
conf_paths(struct yerr *e, const struct ynode *root, struct factoryd_conf *c)
{
	const struct ynode	*n;
	struct sockaddr_un	 sun;

	if ((n = y_get(root, "socket")) != NULL) {
		if (y_path(e, n, c->socket, sizeof(c->socket)) == -1)
			return (-1);
		/* Both sockets must fit a sockaddr_un. */
		if (strlen(c->socket) + strlen(FACTORYD_ROSUFFIX) >=
		    sizeof(sun.sun_path))
			return (y_fail(e, n, "longer than %zu bytes, too long "
			    "for a unix socket with its \"%s\" twin",
			    sizeof(sun.sun_path) - 1 -
			    strlen(FACTORYD_ROSUFFIX), FACTORYD_ROSUFFIX));
	}
	if (conf_optpath(e, y_get(root, "state-dir"), c->statedir,
	    sizeof(c->statedir)) == -1 ||
	    conf_optpath(e, y_get(root, "libexec"), c->libexec,
	    sizeof(c->libexec)) == -1)
		return (-1);
	return (0);
}

static int
conf_build(struct yerr *e, const struct ynode *root, struct factoryd_conf *c)
{
	struct conf_where	 where[NROLES];

	if (y_keys(e, root, conf_topkeys) == -1 ||
	    conf_paths(e, root, c) == -1 ||
	    conf_users(e, y_get(root, "users"), c, where,
	    y_get(root, "fleet") != NULL, y_get(root, "preview") != NULL) ==
	    -1 ||
	    conf_attempt_uids(e, y_get(root, "attempt-uids"), c, where) == -1 ||
	    conf_int(e, y_get(root, "max-attempts"), 1, 1024,
	    &c->max_attempts) == -1 ||
	    conf_int(e, y_get(root, "max-cohort"), 2, COHORT_SIZE_MAX,
	    &c->max_cohort) == -1 ||
	    conf_int(e, y_get(root, "verifiers"), 1, 16, &c->verifiers) == -1 ||
	    conf_seconds(e, y_get(root, "lease-ttl"), 1, 3600,
	    &c->lease_ttl) == -1 ||
	    conf_seconds(e, y_get(root, "reconcile-interval"), 1, 86400,
	    &c->reconcile_interval) == -1 ||
	    conf_seconds(e, y_get(root, "control-idle-timeout"), 1, 3600,
	    &c->control_idle) == -1 ||
	    conf_disk(e, y_get(root, "attempt-disk"), c) == -1 ||
	    (y_get(root, "pristine-cache") != NULL && y_size(e, y_get(root,
	    "pristine-cache"), &c->pristine_max) == -1) ||
	    (y_get(root, "setup-cache") != NULL && y_size(e, y_get(root,
	    "setup-cache"), &c->setup_max) == -1) ||
	    conf_images(e, y_get(root, "images"), c) == -1 ||
	    conf_metrics(e, y_get(root, "metrics"), c) == -1 ||
	    conf_keys(e, y_get(root, "keys"), c) == -1 ||
	    conf_sandbox(e, y_get(root, "sandbox"), c) == -1 ||
	    conf_environment(e, y_get(root, "environment"),
	    &c->envpolicy) == -1 ||
	    conf_gateway(e, root, c) == -1 ||
	    conf_repos(e, y_get(root, "repositories"), c) == -1 ||
	    conf_fleet(e, y_get(root, "fleet"), c) == -1 ||
	    conf_preview(e, y_get(root, "preview"), c) == -1)
		return (-1);
	return (0);
}

/* The whole file, at most CONF_MAXSIZE bytes. */
static char *
conf_read(const char *file, size_t *lenp, char *err, size_t errlen)
{
	struct stat	 st;
	char		*buf = NULL;
	ssize_t		 r;
	size_t		 len = 0;
	int		 fd;

	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return (NULL);
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		goto bad;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", file);
		goto bad;
	}
	if (st.st_size > CONF_MAXSIZE) {
		snprintf(err, errlen, "%s: larger than %d bytes", file,
		    CONF_MAXSIZE);
		goto bad;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		goto bad;
	}
	while (len < (size_t)st.st_size) {
		r = read(fd, buf + len, (size_t)st.st_size - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, errlen, "%s: read: %s", file,
			    r == 0 ? "file shrank" : strerror(errno));
			goto bad;
		}
		len += (size_t)r;
	}
	close(fd);
	*lenp = len;
	return (buf);
 bad:
	free(buf);
	close(fd);
	return (NULL);
}

int
conf_parse(const char *file, struct factoryd_conf **confp, char *err,
    size_t errlen)
{
	struct factoryd_conf	*c;
	struct ynode		*root;
	struct yerr		 e;
	char			*buf;
	size_t			 len;

	*confp = NULL;
	if ((buf = conf_read(file, &len, err, errlen)) == NULL)
		return (-1);
	y_errinit(&e, file, err, errlen);
	root = y_load(&e, buf, len);
	free(buf);
	if (root == NULL)
		return (-1);
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		y_failat(&e, 1, 1, NULL, "out of memory");
		y_free(root);
		return (-1);
	}
	conf_defaults(c);
	strlcpy(c->file, file, sizeof(c->file));
	if (conf_build(&e, root, c) == -1) {
		y_free(root);
		conf_free(c);
		return (-1);
	}
	y_free(root);
	*confp = c;
	return (0);
}

void
conf_free(struct factoryd_conf *c)
{
	struct conf_repo	*r;

	if (c == NULL)
		return;
	while ((r = TAILQ_FIRST(&c->repos)) != NULL) {
		TAILQ_REMOVE(&c->repos, r, entry);
		free(r);
	}
	free(c);
}

struct conf_repo *
conf_repo(const struct factoryd_conf *c, const char *name)
{
	struct conf_repo	*r;

	TAILQ_FOREACH(r, &c->repos, entry)
		if (strcmp(r->name, name) == 0)
			return (r);
	return (NULL);
}

static void
conf_printkv(FILE *fp, const char *indent, const char *key, const char *val)
{
	fprintf(fp, "%s%s: ", indent, key);
	y_printstr(fp, val);
	fputc('\n', fp);
}

static void
conf_printpublish(FILE *fp, const struct conf_repo *r)
{
	const struct conf_github	*g = &r->github;
	const char			*in = "      ";

	fprintf(fp, "    publish:\n");
	switch (r->forge) {
	case FORGE_NONE:
		fprintf(fp, "%sforge: none\n", in);
		break;
	case FORGE_LOCAL:
		fprintf(fp, "%sforge: local\n", in);
		conf_printkv(fp, in, "remote", r->remote);
		conf_printkv(fp, in, "pulls", r->pulls);
		if (r->shared)
			fprintf(fp, "%sshared: yes\n", in);
		break;
	case FORGE_GITHUB:
		fprintf(fp, "%sforge: github\n", in);
		conf_printkv(fp, in, "api", g->api);
		conf_printkv(fp, in, "owner", g->owner);
		conf_printkv(fp, in, "repo", g->repo);
		fprintf(fp, "%srepository-id: %llu\n", in,
		    (unsigned long long)g->repository_id);
		/* App ids are numbers, client ids never are. */
		conf_printkv(fp, in, strspn(g->app_id, "0123456789") ==
		    strlen(g->app_id) ? "app-id" : "client-id", g->app_id);
		fprintf(fp, "%sinstallation-id: %llu\n", in,
		    (unsigned long long)g->installation_id);
		conf_printkv(fp, in, "key", g->key);
		conf_printkv(fp, in, "ca", g->ca);
		break;
	}
}

static void
conf_printenv(FILE *fp, const char *in, const struct conf_envpolicy *p)
{
	fprintf(fp, "%senvironment:\n", in);
	if (p->require_digest != CONF_UNSET)
		fprintf(fp, "%s  require-digest: %s\n", in,
		    p->require_digest ? "yes" : "no");
	if (p->host_root != CONF_UNSET)
		fprintf(fp, "%s  host-root: %s\n", in,
		    p->host_root ? "allow" : "deny");
}

static void
conf_printnames(FILE *fp, const char *in, const char *key,
    char (*names)[CONF_GW_NAMEMAX], size_t n)
{
	size_t	 i;

	fprintf(fp, "%s%s:\n", in, key);
	for (i = 0; i < n; i++) {
		fprintf(fp, "%s  - ", in);
		y_printstr(fp, names[i]);
		fputc('\n', fp);
	}
}

static void
conf_printgrant(FILE *fp, const struct conf_modelgrant *g)
{
	char	 usd[32];

	if (g->nproviders > 0) {
		fprintf(fp, "    model:\n");
		conf_printnames(fp, "      ", "providers",
		    (char (*)[CONF_GW_NAMEMAX])g->providers, g->nproviders);
		if (g->max_tokens != 0)
			fprintf(fp, "      max-tokens: %llu\n",
			    (unsigned long long)g->max_tokens);
		if (g->max_uusd != 0)
			fprintf(fp, "      max-usd: \"%s\"\n",
			    conf_usd(g->max_uusd, usd, sizeof(usd)));
	}
	if (g->nupstreams > 0)
		conf_printnames(fp, "    ", "upstreams",
		    (char (*)[CONF_GW_NAMEMAX])g->upstreams, g->nupstreams);
}

/* The cache rates set (in: the indent of the model's keys, less 2). */
static void
conf_printcache(FILE *fp, const char *in, uint64_t cr, uint64_t cw,
    uint64_t cw1h)
{
	const char	*k[] = { "cache-read", "cache-write",
			    "cache-write-1h" };
	uint64_t	 v[] = { cr, cw, cw1h };
	char		 usd[32];
	size_t		 i;

	for (i = 0; i < 3; i++)
		if (v[i] != UINT64_MAX)
			fprintf(fp, "%s    %s: \"%s\"\n", in, k[i],
			    conf_usd(v[i], usd, sizeof(usd)));
}

static void
conf_printgw1(FILE *fp, const struct conf_gw *g)
{
	const char	*in = "    ";
	char		 usd[32];
	size_t		 i;

	fprintf(fp, "  ");
	y_printstr(fp, g->name);
	fprintf(fp, ":\n");
	if (g->kind != CONF_GW_UPSTREAM)
		fprintf(fp, "%skind: %s\n", in, g->kind == CONF_GW_OPENAI ?
		    "openai" : g->kind == CONF_GW_GEMINI ? "gemini" :
		    "anthropic");
	conf_printkv(fp, in, "url", g->url);
	conf_printkv(fp, in, g->kind == CONF_GW_UPSTREAM ? "secret" : "key",
	    g->key);
	conf_printkv(fp, in, "ca", g->ca);
	if (g->idle_timeout != 0)
		fprintf(fp, "%sidle-timeout: %u\n", in,
		    (unsigned)g->idle_timeout);
	if (g->kind == CONF_GW_UPSTREAM) {
		conf_printkv(fp, in, "header", g->header);
		fprintf(fp, "%smethods:\n", in);
		for (i = 0; conf_method_names[i] != NULL; i++)
			if (g->methods & (1U << i))
				fprintf(fp, "%s  - %s\n", in,
				    conf_method_names[i]);
		return;
	}
	if (g->nprices == 0)
		return;
	fprintf(fp, "%sprices:\n", in);
	for (i = 0; i < g->nprices; i++) {
		fprintf(fp, "%s  ", in);
		y_printstr(fp, g->prices[i].model);
		fprintf(fp, ":\n%s    input: \"%s\"\n", in,
		    conf_usd(g->prices[i].in_uusd, usd, sizeof(usd)));
		fprintf(fp, "%s    output: \"%s\"\n", in,
		    conf_usd(g->prices[i].out_uusd, usd, sizeof(usd)));
		if (g->prices[i].max_output != 0)
			fprintf(fp, "%s    max-output: %llu\n", in,
			    (unsigned long long)g->prices[i].max_output);
		conf_printcache(fp, in, g->prices[i].cache_read,
		    g->prices[i].cache_write, g->prices[i].cache_write_1h);
		if (g->prices[i].long_above == 0)
			continue;
		fprintf(fp, "%s    long-context:\n%s      above: %llu\n", in,
		    in, (unsigned long long)g->prices[i].long_above);
		fprintf(fp, "%s      input: \"%s\"\n", in,
		    conf_usd(g->prices[i].longctx.in_uusd, usd, sizeof(usd)));
		fprintf(fp, "%s      output: \"%s\"\n", in,
		    conf_usd(g->prices[i].longctx.out_uusd, usd, sizeof(usd)));
		conf_printcache(fp, "      ", g->prices[i].longctx.cache_read,
		    g->prices[i].longctx.cache_write,
		    g->prices[i].longctx.cache_write_1h);
	}
}

static void
conf_printgw(FILE *fp, const struct factoryd_conf *c)
{
	size_t	 i, t;
	int	 head;

	for (t = 0; t < 2; t++) {
		head = 0;
		for (i = 0; i < c->ngw; i++) {
			if ((c->gw[i].kind == CONF_GW_UPSTREAM) != (t == 1))
				continue;
			if (!head)
				fprintf(fp, "%s:\n", t == 0 ? "providers" :
				    "upstreams");
			head = 1;
			conf_printgw1(fp, &c->gw[i]);
		}
	}
}

/*
 * The conninfo, unless it holds a password (password=..., in a URI's
 * query or as its user:...@): then not at all.  libpq's quoting and
 * escapes are not ours to parse, and a value masked by a parse that
 * differs from libpq's showed its tail.
 */
static void
conf_printconninfo(FILE *fp, const char *ci)
{
	const char	*p, *at;

	/* A URI's percent-escapes spell any keyword: none is read. */
	if (strstr(ci, "password") != NULL || ((p = strstr(ci, "://")) !=
	    NULL && (strchr(p, '%') != NULL || ((at = strchr(p + 3, '@')) !=
	    NULL && memchr(p + 3, ':', at - p - 3) != NULL))))
		y_printstr(fp, "(not shown: it holds a password)");
	else
		y_printstr(fp, ci);
}

static void
conf_printfleet(FILE *fp, const struct conf_fleet *f)
{
	const struct conf_tenant *t;
	size_t			 i, j;

	fprintf(fp, "fleet:\n  conninfo: ");
	conf_printconninfo(fp, f->conninfo);
	fprintf(fp, "\n  host: ");
	y_printstr(fp, f->host);
	fprintf(fp, "\n  slots: %u\n  lease: ", f->slots);
	y_printduration(fp, f->lease_ms);
	fprintf(fp, "\n  query-deadline: ");
	y_printduration(fp, f->deadline_ms);
	fprintf(fp, "\n  adopt-after: ");
	y_printduration(fp, f->adopt_after_ms);
	fprintf(fp, "\n  tenants:\n");
	for (i = 0; i < f->ntenants; i++) {
		t = &f->tenants[i];
		fprintf(fp, "    ");
		y_printstr(fp, t->name);
		fprintf(fp, ":\n      weight: %u\n      max-running: %u\n"
		    "      max-queued: %u\n      paused: %s\n", t->weight,
		    t->max_running, t->max_queued, t->paused ? "yes" : "no");
		fprintf(fp, "      users: [");
		for (j = 0; j < t->nuids; j++)
			fprintf(fp, "%s%u", j ? ", " : "", (unsigned)t->uids[j]);
		fprintf(fp, "]\n      groups: [");
		for (j = 0; j < t->ngids; j++)
			fprintf(fp, "%s%u", j ? ", " : "", (unsigned)t->gids[j]);
		fprintf(fp, "]\n      repositories: [");
		for (j = 0; j < t->nrepos; j++)
			fprintf(fp, "%s%s", j ? ", " : "", t->repos[j]);
		fprintf(fp, "]\n");
	}
}


void
conf_print(FILE *fp, const struct factoryd_conf *c)
{
	const struct conf_user	*u;
	const struct conf_repo	*r;
	size_t			 i;

	conf_printkv(fp, "", "socket", c->socket);
	conf_printkv(fp, "", "state-dir", c->statedir);
	conf_printkv(fp, "", "libexec", c->libexec);
	fprintf(fp, "users:\n");
	for (i = 0; i < NROLES; i++) {
		u = &c->users[conf_roles[i].id];
		if ((conf_roles[i].id == PROC_FLEET && !c->fleet.enabled) ||
		    (conf_roles[i].id == PROC_PREVIEW && !c->preview.enabled))
			continue;
		fprintf(fp, "  %s: ", conf_roles[i].key);
		y_printstr(fp, u->name);
		fprintf(fp, "\t# uid %u gid %u\n", (unsigned)u->uid,
		    (unsigned)u->gid);
	}
	fprintf(fp, "attempt-uids: %u-%u\n", (unsigned)c->attempt_uid_lo,
	    (unsigned)c->attempt_uid_hi);
	fprintf(fp, "max-attempts: %d\n", c->max_attempts);
	/* Printed when set, so that the golden files stay as they were. */
	if (c->max_cohort != 8)
		fprintf(fp, "max-cohort: %d\n", c->max_cohort);
	fprintf(fp, "verifiers: %d\n", c->verifiers);
	fprintf(fp, "lease-ttl: ");
	y_printduration(fp, (uint64_t)c->lease_ttl * 1000);
	fprintf(fp, "\nreconcile-interval: ");
	y_printduration(fp, (uint64_t)c->reconcile_interval * 1000);
	fprintf(fp, "\ncontrol-idle-timeout: ");
	y_printduration(fp, (uint64_t)c->control_idle * 1000);
	fprintf(fp, "\nattempt-disk:\n  default: ");
	y_printsize(fp, c->disk_default);
	fprintf(fp, "\n  max: ");
	y_printsize(fp, c->disk_max);
	fprintf(fp, "\nimages:\n  max-size: ");
	y_printsize(fp, c->image_max_size);
	fprintf(fp, "\n  max-files: %llu\n  max-depth: %d\n  max-path: %d",
	    (unsigned long long)c->image_max_files, c->image_max_depth,
	    c->image_max_path);
	if (c->metrics_file[0] != '\0') {
		fprintf(fp, "\nmetrics:\n");
		conf_printkv(fp, "  ", "file", c->metrics_file);
		fprintf(fp, "  interval: ");
		y_printduration(fp, (uint64_t)c->metrics_interval * 1000);
	}
	fprintf(fp, "\nkeys:\n");
	conf_printkv(fp, "  ", "receipts", c->receipt_key);
	conf_printkv(fp, "  ", "verifier", c->verifier_key);
	if (c->sandbox_downgrade != 0) {
		fprintf(fp, "sandbox:\n  downgrade:\n");
		for (i = 0; conf_downgrade_names[i] != NULL; i++)
			if (c->sandbox_downgrade & (1U << i))
				fprintf(fp, "    - %s\n",
				    conf_downgrade_names[i]);
	}
	/* Only what differs from the defaults, as the file said it. */
	if (c->envpolicy.require_digest != 0 || c->envpolicy.host_root != 1)
		conf_printenv(fp, "", &c->envpolicy);
	conf_printgw(fp, c);
	if (c->fleet.enabled)
		conf_printfleet(fp, &c->fleet);
	if (c->preview.enabled) {
		fprintf(fp, "preview:\n");
		conf_printkv(fp, "  ", "listen", c->preview.listen);
		conf_printkv(fp, "  ", "domain", c->preview.domain);
		fprintf(fp, "  ttl: ");
		y_printduration(fp, c->preview.ttl_ms);
		fprintf(fp, "\n  secure: %s\n", c->preview.secure ? "yes" : "no");
	}
	if (TAILQ_EMPTY(&c->repos)) {
		fprintf(fp, "repositories: {}\n");
		return;
	}
	fprintf(fp, "repositories:\n");
	TAILQ_FOREACH(r, &c->repos, entry) {
		fprintf(fp, "  ");
		y_printstr(fp, r->name);
		fprintf(fp, ":\n");
		conf_printkv(fp, "    ", "path", r->path);
		if (r->envpolicy.require_digest != CONF_UNSET ||
		    r->envpolicy.host_root != CONF_UNSET)
			conf_printenv(fp, "    ", &r->envpolicy);
		conf_printgrant(fp, &r->grant);
		conf_printpublish(fp, r);
	}
}
