/*
 * The inventory: what exists on this host that an attempt may have
 * left.  Read-only.  Every name below a configured path may have been
 * chosen by whoever wrote there, so it is checked before it is listed,
 * and no symbolic link below a configured path is followed.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>
#include <jansson.h>

#include "gitcommon.h"
#include "invmsg.h"
#include "log.h"
#include "reconciler.h"
#include "wire.h"

#define INV_CGTOP	"factory"		/* in every hierarchy */

/* factory/<instance>: the cgroups of the daemon that started us. */
static const char	*inv_cgparent = INV_CGTOP;

void
inv_set_cgparent(const char *p)
{
	inv_cgparent = p;
}
#define INV_REFPREFIX	"refs/heads/factory/"
#define INV_PULLLOCK	".lock"		/* the publisher's own */
#define INV_RECORDMAX	(64 * 1024)		/* a pull record */
#define INV_STATUSMAX	4096		/* /proc/<pid>/status */

/* A growable list of strings, sorted before it becomes JSON. */
struct inv_names {
	char	**v;
	size_t	  n, cap;
};

static void	 inv_push(json_t *, json_t *);
static json_t	*inv_strj(const char *);
static void	 inv_error(struct inv_tally *, const char *, ...)
		    __attribute__((__format__ (printf, 2, 3)));
static int	 inv_printable(const char *);
static void	 inv_names_add(struct inv_names *, const char *);
static json_t	*inv_names_json(struct inv_names *);
static DIR	*inv_opendir(int, const char *);
static ssize_t	 inv_readat(int, const char *, char *, size_t, int);
static void	 inv_cgroup_dir(int, const char *, struct inv_names *,
		    struct inv_tally *);
static int	 inv_process(int, const char *, uid_t, uid_t, json_t *,
		    struct inv_tally *);
static void	 inv_unescape(char *);
static const char *inv_mount_attempt(const char *, char *, size_t);
static json_t	*inv_mount_json(struct inv_names *);
static json_t	*inv_pull_record(int, const char *, const char *);
static int	 inv_seen(const char **, size_t, const char *);
static int	 inv_strcmp(const void *, const void *);
static const char *inv_git_errmsg(void);
static void	 inv_set(json_t *, const char *, json_t *);
static void	 inv_extend(json_t *, json_t *);
static size_t	 inv_wirelen(json_t *);
static int	 inv_encode_value(struct ibuf *, json_t *);
static int	 inv_encode_list(struct ibuf *, json_t *, const char *const *);
static ssize_t	 inv_encodelen(json_t *);

/* Out of memory is the only way these fail. */
static void
inv_push(json_t *arr, json_t *v)
{
	if (v == NULL || json_array_append_new(arr, v) == -1)
		fatalx("inventory: out of memory");
}

/* Callers pass only checked, printable ASCII (or config paths). */
static json_t *
inv_strj(const char *s)
{
	json_t	*j;

	if ((j = json_string(s)) == NULL)
		fatalx("inventory: out of memory or bad string");
	return (j);
}

static void
inv_error(struct inv_tally *t, const char *fmt, ...)
{
	va_list	 ap;
	char	 buf[512], *p;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* A path in the message may hold any byte: keep JSON valid. */
	for (p = buf; *p != '\0'; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	log_debug("inventory: %s", buf);
	inv_push(t->errors, inv_strj(buf));
}

static int
inv_printable(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s < 0x20 || *s > 0x7e)
			return (0);
	return (1);
}

/*
 * The parent's own syntax, plus (cgsuffix) the suffix of a validation
 * or a service cgroup (invmsg.h, CG_KIND_*).
 */
int
inv_id_valid(const char *s, int cgsuffix)
{
	size_t	 len = strlen(s), idlen;

	if (invmsg_id_valid(s, len))
		return (1);
	return (cgsuffix && cg_kind(s, &idlen) != CG_KIND_AGENT &&
	    invmsg_id_valid(s, idlen));
}

int
inv_parse_uids(const char *s, uid_t *lo, uid_t *hi)
{
	unsigned long	 a, b;
	char		*end;

	if (s == NULL || *s < '0' || *s > '9')
		return (-1);
	errno = 0;
	a = strtoul(s, &end, 10);
	if (errno != 0 || *end != '-' || end[1] < '0' || end[1] > '9')
		return (-1);
	b = strtoul(end + 1, &end, 10);
	if (errno != 0 || *end != '\0' || a == 0 || a > b ||
	    b >= (uid_t)-1)
		return (-1);
	*lo = a;
	*hi = b;
	return (0);
}

void
inv_tally_init(struct inv_tally *t)
{
	t->skipped = 0;
	if ((t->errors = json_array()) == NULL)
		fatalx("inventory: out of memory");
}

void
inv_tally_free(struct inv_tally *t)
{
	json_decref(t->errors);
	t->errors = NULL;
}

static void
inv_names_add(struct inv_names *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap == 0 ? 16 : l->cap * 2;
		if ((l->v = reallocarray(l->v, l->cap, sizeof(*l->v))) == NULL)
			fatal("inventory");
	}
	if ((l->v[l->n++] = strdup(s)) == NULL)
		fatal("inventory");
}

static int
inv_strcmp(const void *a, const void *b)
{
	return (strcmp(*(char * const *)a, *(char * const *)b));
}

/* Sorted, so that two inventories of the same host read the same. */
static json_t *
inv_names_json(struct inv_names *l)
{
	json_t	*arr;
	size_t	 i;

	if ((arr = json_array()) == NULL)
		fatalx("inventory: out of memory");
	if (l->n > 0)
		qsort(l->v, l->n, sizeof(*l->v), inv_strcmp);
	for (i = 0; i < l->n; i++) {
		inv_push(arr, inv_strj(l->v[i]));
		free(l->v[i]);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
	return (arr);
}

/*
 * A directory relative to fd, never through a symbolic link in its
 * last component (the caller opens one component at a time below a
 * configured path).
 */
static DIR *
inv_opendir(int fd, const char *path)
{
	DIR	*d;
	int	 dfd;

	if ((dfd = openat(fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return (NULL);
	if ((d = fdopendir(dfd)) == NULL)
		close(dfd);
	return (d);
}

/*
 * A small regular file relative to fd, NUL-terminated.  O_NONBLOCK: a
 * FIFO planted under a name must not hang us.  -1 if it is not a
 * regular file, cannot be read or, if whole, does not fit in len - 1
 * bytes; else its first len - 1 bytes will do.
 */
static ssize_t
inv_readat(int fd, const char *name, char *buf, size_t len, int whole)
{
	struct stat	 sb;
	size_t		 off = 0;
	ssize_t		 n;
	int		 f, saved;

	if ((f = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return (-1);
	if (fstat(f, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		close(f);
		errno = EINVAL;
		return (-1);
	}
	for (;;) {
		if (off == len - 1) {
			if (!whole)
				break;
			close(f);
			errno = EFBIG;
			return (-1);
		}
		if ((n = read(f, buf + off, len - 1 - off)) == -1) {
			if (errno == EINTR)
				continue;
			saved = errno;
			close(f);
			errno = saved;
			return (-1);
		}
		if (n == 0)
			break;
		off += n;
	}
	close(f);
	buf[off] = '\0';
	return (off);
}

json_t *
inv_list_dir(const char *dir, struct inv_tally *t)
{
	struct inv_names l = { NULL, 0, 0 };
	struct dirent	*de;
	struct stat	 sb;
	DIR		*d;

	if ((d = opendir(dir)) == NULL) {
		if (errno != ENOENT)
			inv_error(t, "%s: %s", dir, strerror(errno));
		return (inv_names_json(&l));
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		/* A symbolic link named like an attempt is not one. */
		if (!inv_id_valid(de->d_name, 0) ||
		    fstatat(dirfd(d), de->d_name, &sb,
		    AT_SYMLINK_NOFOLLOW) == -1 || !S_ISDIR(sb.st_mode)) {
			t->skipped++;
			continue;
		}
		inv_names_add(&l, de->d_name);
	}
	closedir(d);
	return (inv_names_json(&l));
}

/*
 * The cgroups in one "factory" directory, open at fd as path.  Its
 * plain files are the controllers' own (tasks, memory.*): only
 * directories are cgroups.
 */
static void
inv_cgroup_dir(int fd, const char *path, struct inv_names *l,
    struct inv_tally *t)
{
	struct dirent	*de;
	struct stat	 sb;
	DIR		*d;
	char		 full[PATH_MAX];

	if ((d = inv_opendir(fd, inv_cgparent)) == NULL) {
		if (errno == ELOOP || errno == ENOTDIR)
			t->skipped++;	/* not our directory */
		else if (errno != ENOENT)
			inv_error(t, "%s/%s: %s", path, inv_cgparent,
			    strerror(errno));
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb,
		    AT_SYMLINK_NOFOLLOW) == -1)
			continue;	/* removed meanwhile */
		if (S_ISREG(sb.st_mode))
			continue;
		if (!S_ISDIR(sb.st_mode) || !inv_id_valid(de->d_name, 1)) {
			t->skipped++;
			continue;
		}
		if ((size_t)snprintf(full, sizeof(full), "%s/%s/%s", path,
		    inv_cgparent, de->d_name) >= sizeof(full)) {
			inv_error(t, "%s/%s: path too long", path,
			    inv_cgparent);
			continue;
		}
		inv_names_add(l, full);
	}
	closedir(d);
}

json_t *
inv_list_cgroups(const char *root, struct inv_tally *t)
{
	struct inv_names l = { NULL, 0, 0 };
	struct dirent	*de;
	struct stat	 sb;
	DIR		*d, *h;
	char		 path[PATH_MAX];

	if ((d = opendir(root)) == NULL) {
		if (errno != ENOENT)
			inv_error(t, "%s: %s", root, strerror(errno));
		return (inv_names_json(&l));
	}
	/* One cgroup2 tree: root/factory/<id>. */
	inv_cgroup_dir(dirfd(d), root, &l, t);
	/*
	 * Hybrid: root/<hierarchy>/factory/<id>.  Joined controllers
	 * have symbolic links (cpu -> cpu,cpuacct): skipping links lists
	 * each hierarchy once.
	 */
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, INV_CGTOP) == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb,
		    AT_SYMLINK_NOFOLLOW) == -1 || !S_ISDIR(sb.st_mode))
			continue;
		if ((h = inv_opendir(dirfd(d), de->d_name)) == NULL)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", root,
		    de->d_name) < sizeof(path) && inv_printable(path))
			inv_cgroup_dir(dirfd(h), path, &l, t);
		closedir(h);
	}
	closedir(d);
	return (inv_names_json(&l));
}

/*
 * The parent names cgroups itself, from an id: each attempt's (and
 * each validation run's) once, whatever the hierarchies it is in.
 * paths is consumed.
 */
json_t *
inv_cgroup_ids(json_t *paths)
{
	struct inv_names l = { NULL, 0, 0 };
	json_t		*arr, *v;
	const char	*p, *base;
	size_t		 i, n;
	int		 kind;

	json_array_foreach(paths, i, v) {
		p = json_string_value(v);
		base = strrchr(p, '/') != NULL ? strrchr(p, '/') + 1 : p;
		inv_names_add(&l, base);	/* listed: an id and a suffix */
	}
	json_decref(paths);
	if ((arr = json_array()) == NULL)
		fatalx("inventory: out of memory");
	if (l.n > 0)
		qsort(l.v, l.n, sizeof(*l.v), inv_strcmp);
	for (i = 0; i < l.n; i++) {
		if (i == 0 || strcmp(l.v[i], l.v[i - 1]) != 0) {
			kind = cg_kind(l.v[i], &n);
			inv_push(arr, json_pack("{s:s%, s:i}", "id", l.v[i], n,
			    "kind", kind));
		}
	}
	for (i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	return (arr);
}

/*
 * One /proc entry: appended if its real uid is in range.  A process
 * that exits while we look is not an error.
 */
static int
inv_process(int procfd, const char *name, uid_t lo, uid_t hi, json_t *arr,
    struct inv_tally *t)
{
	char		 buf[INV_STATUSMAX], comm[64], *p;
	unsigned long	 uid;
	long		 pid;
	int		 fd;

	if ((fd = openat(procfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		if (errno != ENOENT && errno != ESRCH && errno != ELOOP &&
		    errno != ENOTDIR)
			inv_error(t, "process %s: %s", name, strerror(errno));
		return (-1);
	}
	/* The Uid line is near the top: a prefix of the file will do. */
	if (inv_readat(fd, "status", buf, sizeof(buf), 0) == -1) {
		if (errno != ENOENT && errno != ESRCH)
			inv_error(t, "process %s: status: %s", name,
			    strerror(errno));
		close(fd);
		return (-1);
	}
	if ((p = strstr(buf, "\nUid:")) == NULL) {
		inv_error(t, "process %s: status: no Uid line", name);
		close(fd);
		return (-1);
	}
	uid = strtoul(p + 5, NULL, 10);	/* the first is the real uid */
	if (uid < lo || uid > hi) {
		close(fd);
		return (0);
	}
	if (inv_readat(fd, "comm", comm, sizeof(comm), 0) == -1)
		comm[0] = '\0';
	close(fd);
	comm[strcspn(comm, "\n")] = '\0';
	/* The process chose its name: printable ASCII only. */
	for (p = comm; *p != '\0'; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	pid = strtol(name, NULL, 10);
	inv_push(arr, json_pack("{s:I, s:I, s:s}", "pid", (json_int_t)pid,
	    "uid", (json_int_t)uid, "comm", comm));
	return (0);
}

json_t *
inv_list_processes(const char *proc, uid_t lo, uid_t hi,
    struct inv_tally *t)
{
	struct dirent	*de;
	json_t		*arr;
	DIR		*d;

	if ((arr = json_array()) == NULL)
		fatalx("inventory: out of memory");
	if ((d = opendir(proc)) == NULL) {
		inv_error(t, "%s: %s", proc, strerror(errno));
		return (arr);
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    strspn(de->d_name, "0123456789") != strlen(de->d_name))
			continue;
		(void)inv_process(dirfd(d), de->d_name, lo, hi, arr, t);
	}
	closedir(d);
	return (arr);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void
inv_unescape(char *s)
{
	char	*w = s;

	while (*s != '\0') {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = ((s[1] - '0') << 6) | ((s[2] - '0') << 3) |
			    (s[3] - '0');
			s += 4;
		} else
			*w++ = *s++;
	}
	*w = '\0';
}

/*
 * The attempt a mount belongs to, from the part of its target below
 * the state directory: attempts/<id>[/...] or verify/<id>[/...].  The
 * name is "a:<id>" or "v:<id>", which sorts and compares as one.
 */
static const char *
inv_mount_attempt(const char *rest, char *name, size_t len)
{
	size_t	 n;
	char	 kind;

	if (strncmp(rest, "attempts/", 9) == 0) {
		rest += 9;
		kind = 'a';
	} else if (strncmp(rest, "verify/", 7) == 0) {
		rest += 7;
		kind = 'v';
	} else
		return (NULL);
	n = strcspn(rest, "/");
	if (n + 2 >= len)
		return (NULL);
	name[0] = kind;
	name[1] = ':';
	memcpy(name + 2, rest, n);
	name[n + 2] = '\0';
	return (inv_id_valid(name + 2, 0) ? name : NULL);
}

/* {id, verify} of each "a:<id>" or "v:<id>", once each. */
static json_t *
inv_mount_json(struct inv_names *l)
{
	json_t	*arr;
	size_t	 i;

	if ((arr = json_array()) == NULL)
		fatalx("inventory: out of memory");
	if (l->n > 0)
		qsort(l->v, l->n, sizeof(*l->v), inv_strcmp);
	for (i = 0; i < l->n; i++) {
		if (i == 0 || strcmp(l->v[i], l->v[i - 1]) != 0)
			inv_push(arr, json_pack("{s:s, s:b}", "id",
			    l->v[i] + 2, "verify", l->v[i][0] == 'v'));
	}
	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
	return (arr);
}

json_t *
inv_list_mounts(const char *mountinfo, const char *below,
    struct inv_tally *t)
{
	struct inv_names l = { NULL, 0, 0 };
	FILE		*f;
	char		*line = NULL, *fields[5], *p, *sep, *fstype;
	char		 name[ATTEMPT_ID_MAX + 2];
	size_t		 linesz = 0, blen, i;

	blen = strlen(below);
	while (blen > 1 && below[blen - 1] == '/')
		blen--;
	if ((f = fopen(mountinfo, "re")) == NULL) {
		inv_error(t, "%s: %s", mountinfo, strerror(errno));
		return (inv_mount_json(&l));
	}
	while (getline(&line, &linesz, f) != -1) {
		line[strcspn(line, "\n")] = '\0';
		/* id parent dev root target opts [optional...] - fstype ... */
		for (i = 0, p = line; i < 5; i++)
			if ((fields[i] = strsep(&p, " ")) == NULL)
				break;
		if (i < 5 || p == NULL || (sep = strstr(p, " - ")) == NULL)
			continue;
		fstype = sep + 3;
		fstype[strcspn(fstype, " ")] = '\0';
		inv_unescape(fields[4]);
		if (strncmp(fields[4], below, blen) != 0 ||
		    (blen > 1 && fields[4][blen] != '/') ||
		    fields[4][blen + (blen > 1)] == '\0')
			continue;
		if (!inv_printable(fields[4]) || !inv_printable(fstype)) {
			t->skipped++;
			continue;
		}
		/* Only an attempt's mounts are the parent's business. */
		if (inv_mount_attempt(fields[4] + blen + (blen > 1), name,
		    sizeof(name)) != NULL)
			inv_names_add(&l, name);
	}
	if (ferror(f))
		inv_error(t, "%s: read error", mountinfo);
	free(line);
	fclose(f);
	return (inv_mount_json(&l));
}

int
inv_git_init(void)
{
	static int	 done;

	if (done)
		return (0);
	/*
	 * The repositories and remotes belong to the operator and the
	 * publisher, not to us; we only list their refs.
	 */
	if (gitc_init(0, NULL, 0) == -1)
		return (-1);
	done = 1;
	return (0);
}

static const char *
inv_git_errmsg(void)
{
	const git_error	*e = git_error_last();

	return (e != NULL && e->message != NULL ? e->message : "unknown");
}

json_t *
inv_list_branches(const char *path, struct inv_tally *t)
{
	git_repository		*repo = NULL;
	git_reference_iterator	*it = NULL;
	git_reference		*ref;
	const git_oid		*oid;
	const char		*name;
	json_t			*arr;
	char			 hex[GIT_OID_HEXSZ + 1];
	int			 rc;

	if ((arr = json_array()) == NULL)
		fatalx("inventory: out of memory");
	if (inv_git_init() == -1) {
		inv_error(t, "%s: libgit2: %s", path, inv_git_errmsg());
		return (arr);
	}
	if (git_repository_open_ext(&repo, path,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0 ||
	    git_reference_iterator_glob_new(&it, repo,
	    INV_REFPREFIX "*") < 0) {
		inv_error(t, "%s: %s", path, inv_git_errmsg());
		git_repository_free(repo);
		return (arr);
	}
	while ((rc = git_reference_next(&ref, it)) == 0) {
		name = git_reference_name(ref);
		/* A symbolic ref points at someone else's branch. */
		if (strncmp(name, INV_REFPREFIX, strlen(INV_REFPREFIX)) != 0 ||
		    !inv_id_valid(name + strlen(INV_REFPREFIX), 0) ||
		    git_reference_type(ref) != GIT_REFERENCE_DIRECT ||
		    (oid = git_reference_target(ref)) == NULL) {
			t->skipped++;
			git_reference_free(ref);
			continue;
		}
		git_oid_tostr(hex, sizeof(hex), oid);
		inv_push(arr, json_pack("{s:s, s:s, s:s}", "repo", path,
		    "id", name + strlen(INV_REFPREFIX), "commit", hex));
		git_reference_free(ref);
	}
	if (rc != GIT_ITEROVER)
		inv_error(t, "%s: refs: %s", path, inv_git_errmsg());
	git_reference_iterator_free(it);
	git_repository_free(repo);
	return (arr);
}

/* One pull record, or NULL if it is not one we trust. */
static json_t *
inv_pull_record(int dfd, const char *dir, const char *name)
{
	char		 id[ATTEMPT_ID_MAX], *buf;
	size_t		 n = strlen(name);
	ssize_t		 len;
	json_t		*j, *num, *rec = NULL;
	json_int_t	 v;

	if (n <= 5 || n - 5 >= sizeof(id) ||
	    strcmp(name + n - 5, ".json") != 0)
		return (NULL);
	memcpy(id, name, n - 5);
	id[n - 5] = '\0';
	if (!inv_id_valid(id, 0))
		return (NULL);
	if ((buf = malloc(INV_RECORDMAX)) == NULL)
		fatal("inventory");
	if ((len = inv_readat(dfd, name, buf, INV_RECORDMAX, 1)) == -1) {
		free(buf);
		return (NULL);
	}
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	free(buf);
	/* The file name and the record must agree on the attempt. */
	num = json_object_get(j, "number");
	if (json_is_object(j) && json_is_integer(num) &&
	    (v = json_integer_value(num)) > 0 && v <= INT_MAX &&
	    strcmp(json_str(j, "attempt"), id) == 0)
		rec = json_pack("{s:s, s:s, s:I}", "dir", dir, "id", id,
		    "number", v);
	json_decref(j);
	return (rec);
}

json_t *
inv_list_pulls(const char *dir, struct inv_tally *t)
{
	struct dirent	*de;
	json_t		*arr, *rec;
	DIR		*d;

	if ((arr = json_array()) == NULL)
		fatalx("inventory: out of memory");
	if ((d = opendir(dir)) == NULL) {
		if (errno != ENOENT)
			inv_error(t, "%s: %s", dir, strerror(errno));
		return (arr);
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, INV_PULLLOCK) == 0)
			continue;
		if ((rec = inv_pull_record(dirfd(d), dir, de->d_name)) ==
		    NULL) {
			t->skipped++;
			continue;
		}
		inv_push(arr, rec);
	}
	closedir(d);
	return (arr);
}

/* Was path among the first n of list? */
static int
inv_seen(const char **list, size_t n, const char *path)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i], path) == 0)
			return (1);
	return (0);
}

static void
inv_set(json_t *o, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(o, key, v) == -1)
		fatalx("inventory: out of memory");
}

/* Append the elements of more to arr; more is consumed. */
static void
inv_extend(json_t *arr, json_t *more)
{
	if (json_array_extend(arr, more) == -1)
		fatalx("inventory: out of memory");
	json_decref(more);
}

json_t *
inventory_build(const struct inv_config *c)
{
	struct inv_tally t;
	json_t		*inv, *branches, *pulls;
	char		 path[PATH_MAX];
	size_t		 i;

	inv_tally_init(&t);
	if ((inv = json_object()) == NULL || (branches = json_array()) ==
	    NULL || (pulls = json_array()) == NULL)
		fatalx("inventory: out of memory");

	if (c->state == NULL || !inv_printable(c->state)) {
		inv_error(&t, "no usable state directory");
		inv_set(inv, "attempt_dirs", json_array());
		inv_set(inv, "verify_dirs", json_array());
		inv_set(inv, "mounts", json_array());
	} else {
		snprintf(path, sizeof(path), "%s/attempts", c->state);
		inv_set(inv, "attempt_dirs", inv_list_dir(path, &t));
		snprintf(path, sizeof(path), "%s/verify", c->state);
		inv_set(inv, "verify_dirs", inv_list_dir(path, &t));
		inv_set(inv, "mounts", inv_list_mounts(c->mountinfo,
		    c->state, &t));
	}
	inv_set(inv, "cgroups", inv_cgroup_ids(inv_list_cgroups(c->cgroot,
	    &t)));
	if (c->have_uids)
		inv_set(inv, "processes", inv_list_processes(c->procroot,
		    c->uid_lo, c->uid_hi, &t));
	else {
		inv_error(&t, "no attempt_uids: processes not listed");
		inv_set(inv, "processes", json_array());
	}

	for (i = 0; i < c->nrepos + c->nremotes; i++) {
		const char *p = i < c->nrepos ? c->repos[i] :
		    c->remotes[i - c->nrepos];

		if (i < c->nrepos ? inv_seen(c->repos, i, p) :
		    inv_seen(c->repos, c->nrepos, p) ||
		    inv_seen(c->remotes, i - c->nrepos, p))
			continue;
		if (!inv_printable(p)) {
			inv_error(&t, "repository path not printable");
			continue;
		}
		inv_extend(branches, inv_list_branches(p, &t));
	}
	for (i = 0; i < c->npulls; i++) {
		if (inv_seen(c->pulls, i, c->pulls[i]))
			continue;
		if (!inv_printable(c->pulls[i])) {
			inv_error(&t, "pulls path not printable");
			continue;
		}
		inv_extend(pulls, inv_list_pulls(c->pulls[i], &t));
	}
	inv_set(inv, "branches", branches);
	inv_set(inv, "pulls", pulls);
	inv_set(inv, "skipped", json_integer(t.skipped));
	inv_set(inv, "errors", json_incref(t.errors));
	inv_set(inv, "truncated", json_false());
	inv_tally_free(&t);
	return (inv);
}

/* The element's bytes on the wire, as inv_encode() writes them. */
static size_t
inv_wirelen(json_t *j)
{
	const char	*key;
	json_t		*v;
	size_t		 i, len = 0;

	if (json_is_string(j))
		return (4 + json_string_length(j));
	if (json_is_integer(j))
		return (4);
	if (json_is_boolean(j))
		return (1);
	if (json_is_array(j)) {
		len = 4;
		for (i = 0; i < json_array_size(j); i++)
			len += inv_wirelen(json_array_get(j, i));
	} else
		json_object_foreach(j, key, v)
			len += inv_wirelen(v);
	return (len);
}

static int
inv_encode_value(struct ibuf *b, json_t *v)
{
	json_int_t	 n;

	if (json_is_string(v))
		return (m_add_str(b, json_string_value(v)));
	if (json_is_boolean(v))
		return (ibuf_add_n8(b, json_is_true(v)));
	if (!json_is_integer(v) || (n = json_integer_value(v)) < 0 ||
	    n > UINT32_MAX)
		return (-1);
	return (ibuf_add_n32(b, n));
}

static int
inv_encode_list(struct ibuf *b, json_t *arr, const char *const *members)
{
	json_t	*el, *v;
	size_t	 i, k;

	if (!json_is_array(arr) || json_array_size(arr) > UINT32_MAX ||
	    ibuf_add_n32(b, json_array_size(arr)) == -1)
		return (-1);
	json_array_foreach(arr, i, el) {
		if (members[0] == NULL) {
			if (inv_encode_value(b, el) == -1)
				return (-1);
			continue;
		}
		for (k = 0; k < 3 && members[k] != NULL; k++) {
			/* "n8:NAME": a small number, in one byte. */
			if (strncmp(members[k], "n8:", 3) == 0) {
				v = json_object_get(el, members[k] + 3);
				if (!json_is_integer(v) ||
				    json_integer_value(v) < 0 ||
				    json_integer_value(v) > UINT8_MAX ||
				    ibuf_add_n8(b, json_integer_value(v)) ==
				    -1)
					return (-1);
				continue;
			}
			if (inv_encode_value(b, json_object_get(el,
			    members[k])) == -1)
				return (-1);
		}
	}
	return (0);
}

int
inv_encode(json_t *inv, struct ibuf *b)
{
	static const struct {
		const char	*key;
		const char	*members[3];
	} lists[] = {
		{ "attempt_dirs",	{ NULL } },
		{ "verify_dirs",	{ NULL } },
		{ "cgroups",		{ "id", "n8:kind", NULL } },
		{ "processes",		{ "pid", "uid", "comm" } },
		{ "mounts",		{ "id", "verify", NULL } },
		{ "branches",		{ "repo", "id", "commit" } },
		{ "pulls",		{ "dir", "id", "number" } },
	};
	json_t	*v;
	size_t	 i;

	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		if (inv_encode_list(b, json_object_get(inv, lists[i].key),
		    lists[i].members) == -1)
			return (-1);
	v = json_object_get(inv, "skipped");
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    ibuf_add_n64(b, json_integer_value(v)) == -1 ||
	    inv_encode_list(b, json_object_get(inv, "errors"),
	    lists[0].members) == -1 ||
	    !json_is_boolean(json_object_get(inv, "truncated")) ||
	    ibuf_add_n8(b, json_is_true(json_object_get(inv,
	    "truncated"))) == -1)
		return (-1);
	return (0);
}

/* The length of inv on the wire; -1 if it does not encode. */
static ssize_t
inv_encodelen(json_t *inv)
{
	struct ibuf	*b;
	ssize_t		 len;

	if ((b = ibuf_dynamic(1024, SIZE_MAX)) == NULL)
		fatalx("inventory: out of memory");
	len = inv_encode(inv, b) == -1 ? -1 : (ssize_t)ibuf_size(b);
	ibuf_free(b);
	return (len);
}

int
inv_fit(json_t *inv, size_t maxlen)
{
	const char	*key;
	json_t		*v, *longest;
	size_t		 excess, drop, n;
	ssize_t		 len;

	for (;;) {
		if ((len = inv_encodelen(inv)) == -1)
			return (-1);
		if ((size_t)len <= maxlen)
			return (0);
		excess = len - maxlen;
		longest = NULL;
		json_object_foreach(inv, key, v)
			if (json_is_array(v) && json_array_size(v) > 0 &&
			    (longest == NULL ||
			    json_array_size(v) > json_array_size(longest)))
				longest = v;
		if (longest == NULL)
			return (-1);
		/* Drop from the tail until the excess is gone. */
		for (drop = 0; drop < excess &&
		    (n = json_array_size(longest)) > 0; ) {
			drop += inv_wirelen(json_array_get(longest, n - 1));
			json_array_remove(longest, n - 1);
		}
		inv_set(inv, "truncated", json_true());
	}
}
