/*
 * Image trees: entry path checks and the canonical walk (imgtree.h).
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "crypto.h"
#include "esc.h"
#include "imgtree.h"


int
imgpath_clean(const char *in, char *out, size_t outlen, size_t maxpath,
    int maxdepth, char *err, size_t errlen)
{
	const char	*p = in, *e;
	size_t		 n, len = 0;
	int		 depth = 0;

	if (*in == '/') {
		snprintf(err, errlen, "an absolute path");
		return (-1);
	}
	if (outlen == 0 || maxpath >= outlen) {
		snprintf(err, errlen, "no room for the path");
		return (-1);
	}
	while (*p != '\0') {
		if ((e = strchr(p, '/')) == NULL)
			e = p + strlen(p);
		n = (size_t)(e - p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* "a//b", "./a", "a/.": nothing to add */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			snprintf(err, errlen, "a \"..\" component");
			return (-1);
		} else if (n > NAME_MAX) {
			snprintf(err, errlen, "a component of %zu bytes, "
			    "more than %d", n, NAME_MAX);
			return (-1);
		} else {
			if (++depth > maxdepth) {
				snprintf(err, errlen, "deeper than %d",
				    maxdepth);
				return (-1);
			}
			if (len + (len > 0) + n > maxpath) {
				snprintf(err, errlen, "longer than %zu bytes",
				    maxpath);
				return (-1);
			}
			if (len > 0)
				out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
		}
		p = *e == '/' ? e + 1 : e;
	}
	out[len] = '\0';
	return (len == 0 ? 1 : 0);
}

/* One directory of the walk: its sorted names, the next to visit. */
struct imgwalk_level {
	char		**names;
	size_t		  n;
	size_t		  i;
	size_t		  plen;		/* its path's length in the buffer */
};

/* A regular file with a second name, seen while walking. */
struct imgwalk_link {
	dev_t		 dev;
	ino_t		 ino;
	nlink_t		 nlink;
	char		*path;
};

struct imgwalk {
	int			 rootfd;
	uid_t			 owner;
	int			 chown;
	FILE			*out;
	FILE			*canon;
	struct sha256_ctx	 ctx;
	struct imgwalk_result	*res;
	const struct imgwalk_limits *lim;
	uint64_t		 bound_bytes;	/* a hard link counted once */
	struct imgwalk_level	*lv;
	size_t			 nlv;
	size_t			 maxlv;
	struct imgwalk_link	*links;
	size_t			 nlinks;
	char			 path[IMG_PATHMAX + NAME_MAX + 2];
	char			*cpath;		/* canon's record, read back */
	size_t			 cpathcap;
	char			*crest;
	size_t			 crestcap;
	char			*err;
	size_t			 errlen;
	int			 differs;
};

static int
walk_fail(struct imgwalk *w, const char *what)
{
	char	 name[256];

	if (esc_encode(w->path, strlen(w->path), name, sizeof(name)) == -1)
		strlcpy(name, "(a long name)", sizeof(name));
	snprintf(w->err, w->errlen, "%s: %s", w->path[0] == '\0' ? "." :
	    name, what);
	return (-1);
}

static int
walk_open(struct imgwalk *w, int flags)
{
	return (open_beneath_how(w->rootfd, w->path[0] == '\0' ? "." :
	    w->path, flags, BENEATH_XDEV));
}

static int
name_cmp(const void *a, const void *b)
{
	return (strcmp(*(char * const *)a, *(char * const *)b));
}

static void
names_free(char **names, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The sorted names of directory fd (closed), pushed as a new level. */
static int
walk_push(struct imgwalk *w, int fd, size_t plen)
{
	struct imgwalk_level	*l;
	struct dirent		*de;
	DIR			*d;
	char			**names = NULL, **nn;
	size_t			 n = 0, cap = 0;

	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return (walk_fail(w, strerror(errno)));
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nn = reallocarray(names, cap,
			    sizeof(*names))) == NULL)
				goto nomem;
			names = nn;
		}
		if ((names[n] = strdup(de->d_name)) == NULL)
			goto nomem;
		n++;
	}
	if (errno != 0) {
		closedir(d);
		names_free(names, n);
		return (walk_fail(w, strerror(errno)));
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), name_cmp);
	if (w->nlv == w->maxlv) {
		w->maxlv = w->maxlv ? w->maxlv * 2 : 16;
		if ((l = reallocarray(w->lv, w->maxlv, sizeof(*l))) == NULL) {
			names_free(names, n);
			return (walk_fail(w, "out of memory"));
		}
		w->lv = l;
	}
	l = &w->lv[w->nlv++];
	l->names = names;
	l->n = n;
	l->i = 0;
	l->plen = plen;
	return (0);
 nomem:
	closedir(d);
	names_free(names, n);
	return (walk_fail(w, "out of memory"));
}

/* The hash of fd's contents, size bytes of them, in hex. */
static int
walk_hash_file(struct imgwalk *w, int fd, off_t size, char hex[65])
{
	off_t	 total;

	if (sha256_fd(fd, hex, &total) == -1)
		return (walk_fail(w, strerror(errno)));
	if (total != size)
		return (walk_fail(w, "changed while it was read"));
	return (0);
}

/* Does path a come before path b in the walk (pre-order, sorted)? */
static int
walk_before(const char *a, const char *b)
{
	size_t	 na, nb;
	int	 c;

	for (;;) {
		na = strcspn(a, "/");
		nb = strcspn(b, "/");
		c = memcmp(a, b, na < nb ? na : nb);
		if (c == 0 && na != nb)
			c = na < nb ? -1 : 1;	/* "a" before "ab" */
		if (c != 0)
			return (c < 0);
		if (a[na] == '\0' || b[nb] == '\0')
			return (a[na] == '\0');	/* a parent first */
		a += na + 1;
		b += nb + 1;
	}
}

/* Compare one record with canon's next one; differs set if not equal. */
static int
walk_compare(struct imgwalk *w, const char *rest)
{
	char	 a[256], b[256], want[256];
	ssize_t	 n;

	if ((n = getdelim(&w->cpath, &w->cpathcap, '\0', w->canon)) <= 0 ||
	    w->cpath[n - 1] != '\0' ||
	    (n = getline(&w->crest, &w->crestcap, w->canon)) <= 0) {
		w->differs = 1;
		return (walk_fail(w, "in the tree, not in the stored image"));
	}
	if (strcmp(w->cpath, w->path) != 0) {
		w->differs = 1;
		if (walk_before(w->path, w->cpath))
			return (walk_fail(w, "in the tree, not in the stored "
			    "image"));
		strlcpy(w->path, w->cpath, sizeof(w->path));
		return (walk_fail(w, "in the stored image, not in the tree"));
	}
	if (strcmp(w->crest, rest) != 0) {
		w->differs = 1;
		if (esc_encode(w->crest, strcspn(w->crest, "\n"), a,
		    sizeof(a)) == -1 || esc_encode(rest, strcspn(rest, "\n"),
		    b, sizeof(b)) == -1)
			return (walk_fail(w, "differs"));
		snprintf(want, sizeof(want), "stored \"%s\", found \"%s\"", a,
		    b);
		return (walk_fail(w, want));
	}
	return (0);
}

/* Another name of a file this walk gave to root already? */
static int
walk_given(struct imgwalk *w, const struct stat *sb)
{
	size_t	 i;

	if (!w->chown || sb->st_uid != 0 || !S_ISREG(sb->st_mode) ||
	    sb->st_nlink < 2)
		return (0);
	for (i = 0; i < w->nlinks; i++)
		if (w->links[i].dev == sb->st_dev &&
		    w->links[i].ino == sb->st_ino)
			return (1);
	return (0);
}

/* The entry at w->path against the bounds, before anything of it is read. */
static int
walk_bounds(struct imgwalk *w)
{
	const struct imgwalk_limits	*lim = w->lim;
	const char			*p;
	char				 why[128];
	uint32_t			 depth = 1;

	if (lim == NULL)
		return (0);
	if (w->res->entries + 1 > lim->max_entries) {
		snprintf(why, sizeof(why), "more than %llu entries "
		    "(images: max-files)",
		    (unsigned long long)lim->max_entries);
		return (walk_fail(w, why));
	}
	if (strlen(w->path) > lim->max_path) {
		snprintf(why, sizeof(why), "longer than %u bytes "
		    "(images: max-path)", lim->max_path);
		return (walk_fail(w, why));
	}
	for (p = w->path; (p = strchr(p, '/')) != NULL; p++)
		depth++;
	if (depth > lim->max_depth) {
		snprintf(why, sizeof(why), "deeper than %u (images: "
		    "max-depth)", lim->max_depth);
		return (walk_fail(w, why));
	}
	return (0);
}

static int
walk_bytes(struct imgwalk *w, uint64_t size, int given)
{
	char	 why[128];

	if (w->lim == NULL || given)
		return (0);
	w->bound_bytes += size;
	if (w->bound_bytes > w->lim->max_bytes) {
		snprintf(why, sizeof(why), "more than %llu bytes of files "
		    "(images: max-size)",
		    (unsigned long long)w->lim->max_bytes);
		return (walk_fail(w, why));
	}
	return (0);
}

/* One entry, at w->path: checked, given away, hashed, recorded. */
static int
walk_entry(struct imgwalk *w, size_t plen)
{
	struct stat	 sb, sb2;
	char		 hex[65], rest[128], target[PATH_MAX + 1];
	char		 type;
	uid_t		 uid;
	gid_t		 gid;
	ssize_t		 n;
	uint64_t	 size = 0;
	int		 fd, cfd, given;
	struct imgwalk_link *l;

	if (walk_bounds(w) == -1)
		return (-1);
	if ((fd = walk_open(w, O_PATH)) == -1)
		return (walk_fail(w, strerror(errno)));
	if (fstat(fd, &sb) == -1) {
		close(fd);
		return (walk_fail(w, strerror(errno)));
	}
	if (!S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode) &&
	    !S_ISLNK(sb.st_mode)) {
		close(fd);
		return (walk_fail(w, "neither a directory, a regular file "
		    "nor a symbolic link"));
	}
	given = walk_given(w, &sb);
	if (sb.st_uid != w->owner && !given) {
		close(fd);
		snprintf(rest, sizeof(rest), "owned by uid %u, not %u",
		    (unsigned)sb.st_uid, (unsigned)w->owner);
		return (walk_fail(w, rest));
	}
	if (!S_ISLNK(sb.st_mode) && (sb.st_mode & (S_ISUID | S_ISGID))) {
		close(fd);
		return (walk_fail(w, "setuid or setgid"));
	}
	uid = sb.st_uid;
	gid = sb.st_gid;
	if (w->chown) {
		if (fchownat(fd, "", 0, 0, AT_EMPTY_PATH) == -1) {
			close(fd);
			return (walk_fail(w, strerror(errno)));
		}
		uid = 0;
		gid = 0;
	}
	strlcpy(hex, "-", sizeof(hex));
	if (S_ISDIR(sb.st_mode)) {
		type = 'd';
		close(fd);
		if ((cfd = walk_open(w, O_RDONLY | O_DIRECTORY)) == -1)
			return (walk_fail(w, strerror(errno)));
		if (walk_push(w, cfd, plen) == -1)
			return (-1);
	} else if (S_ISLNK(sb.st_mode)) {
		type = 'l';
		n = readlinkat(fd, "", target, sizeof(target));
		close(fd);
		if (n < 0 || (size_t)n >= sizeof(target))
			return (walk_fail(w, n < 0 ? strerror(errno) :
			    "link target too long"));
		size = (uint64_t)n;
		sha256_hex(target, (size_t)n, hex);
	} else {
		type = 'f';
		close(fd);
		if (walk_bytes(w, (uint64_t)sb.st_size, given) == -1)
			return (-1);
		if ((cfd = walk_open(w, O_RDONLY | O_NONBLOCK | O_NOCTTY)) ==
		    -1)
			return (walk_fail(w, strerror(errno)));
		if (fstat(cfd, &sb2) == -1 || sb2.st_ino != sb.st_ino ||
		    sb2.st_dev != sb.st_dev) {
			close(cfd);
			return (walk_fail(w, "replaced while it was read"));
		}
		if (walk_hash_file(w, cfd, sb.st_size, hex) == -1) {
			close(cfd);
			return (-1);
		}
		close(cfd);
		size = (uint64_t)sb.st_size;
		w->res->files++;
		w->res->bytes += size;
		if (sb.st_nlink > 1) {
			l = reallocarray(w->links, w->nlinks + 1,
			    sizeof(*w->links));
			if (l == NULL)
				return (walk_fail(w, "out of memory"));
			w->links = l;
			l = &w->links[w->nlinks];
			l->dev = sb.st_dev;
			l->ino = sb.st_ino;
			l->nlink = sb.st_nlink;
			if ((l->path = strdup(w->path)) == NULL)
				return (walk_fail(w, "out of memory"));
			w->nlinks++;
		}
	}
	snprintf(rest, sizeof(rest), "%c %04o %u %u %llu %s\n", type,
	    (unsigned)(sb.st_mode & 07777), (unsigned)uid, (unsigned)gid,
	    (unsigned long long)size, hex);
	if (sha256_update(&w->ctx, w->path, strlen(w->path) + 1) == -1 ||
	    sha256_update(&w->ctx, rest, strlen(rest)) == -1)
		return (walk_fail(w, "sha256"));
	if (w->out != NULL && (fwrite(w->path, strlen(w->path) + 1, 1,
	    w->out) != 1 || fputs(rest, w->out) == EOF))
		return (walk_fail(w, "cannot write the entry list"));
	w->res->entries++;
	if (w->canon != NULL)
		return (walk_compare(w, rest));
	return (0);
}

static int
link_cmp(const void *a, const void *b)
{
	const struct imgwalk_link *x = a, *y = b;

	if (x->dev != y->dev)
		return (x->dev < y->dev ? -1 : 1);
	if (x->ino != y->ino)
		return (x->ino < y->ino ? -1 : 1);
	return (0);
}

/* Every name of a file with several is in the tree. */
static int
walk_links(struct imgwalk *w)
{
	size_t	 i, j;

	if (w->nlinks == 0)
		return (0);
	qsort(w->links, w->nlinks, sizeof(*w->links), link_cmp);
	for (i = 0; i < w->nlinks; i = j) {
		for (j = i + 1; j < w->nlinks && link_cmp(&w->links[i],
		    &w->links[j]) == 0; j++)
			;
		if (j - i != w->links[i].nlink) {
			strlcpy(w->path, w->links[i].path, sizeof(w->path));
			return (walk_fail(w, "a hard link to a file outside "
			    "the tree"));
		}
	}
	return (0);
}

static int
walk_run(struct imgwalk *w)
{
	struct imgwalk_level	*l;
	size_t			 len;
	int			 fd;

	w->path[0] = '\0';
	if ((fd = walk_open(w, O_RDONLY | O_DIRECTORY)) == -1)
		return (walk_fail(w, strerror(errno)));
	if (walk_push(w, fd, 0) == -1)
		return (-1);
	while (w->nlv > 0) {
		l = &w->lv[w->nlv - 1];
		if (l->i == l->n) {
			names_free(l->names, l->n);
			w->nlv--;
			continue;
		}
		len = l->plen;
		if (len + 1 + strlen(l->names[l->i]) > IMG_PATHMAX) {
			w->path[len] = '\0';
			return (walk_fail(w, "a path too long below"));
		}
		if (len > 0)
			w->path[len++] = '/';
		strlcpy(w->path + len, l->names[l->i], sizeof(w->path) - len);
		l->i++;
		if (walk_entry(w, strlen(w->path)) == -1)
			return (-1);
	}
	return (walk_links(w));
}

int
imgwalk(int rootfd, uid_t owner, int chown, FILE *out, FILE *canon,
    struct imgwalk_result *res, char *err, size_t errlen)
{
	return (imgwalk_bounded(rootfd, owner, chown, out, canon, NULL, res,
	    err, errlen));
}

int
imgwalk_bounded(int rootfd, uid_t owner, int chown, FILE *out, FILE *canon,
    const struct imgwalk_limits *lim, struct imgwalk_result *res, char *err,
    size_t errlen)
{
	struct imgwalk	 w;
	uint8_t		 md[SHA256_LEN];
	size_t		 i;
	int		 rc;

	memset(&w, 0, sizeof(w));
	memset(res, 0, sizeof(*res));
	w.rootfd = rootfd;
	w.owner = owner;
	w.chown = chown;
	w.out = out;
	w.canon = canon;
	w.res = res;
	w.lim = lim;
	w.err = err;
	w.errlen = errlen;
	if (sha256_init(&w.ctx) == -1) {
		snprintf(err, errlen, "sha256");
		return (-1);
	}
	rc = walk_run(&w);
	if (rc == 0 && canon != NULL && getc(canon) != EOF) {
		snprintf(err, errlen, "the stored image has entries the tree "
		    "lacks, after the last one");
		rc = -1;
	}
	for (i = 0; i < w.nlv; i++)
		names_free(w.lv[i].names, w.lv[i].n);
	free(w.lv);
	for (i = 0; i < w.nlinks; i++)
		free(w.links[i].path);
	free(w.links);
	free(w.cpath);
	free(w.crest);
	if (rc == -1) {
		sha256_abort(&w.ctx);
		return (-1);
	}
	if (sha256_final(&w.ctx, md) == -1) {
		snprintf(err, errlen, "sha256");
		return (-1);
	}
	for (i = 0; i < SHA256_LEN; i++)
		snprintf(res->hex + 2 * i, 3, "%02x", md[i]);
	return (0);
}
