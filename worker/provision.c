/*
 * Resolving a baseline and provisioning an attempt tree.
 *
 * The attempt tree's .git is made here, file by file, rather than by
 * cloning: the agent gets exactly the files we name (no hooks, no
 * config beyond two keys), and the repository's objects are reached
 * read-only through alternates, so nothing is copied and the
 * repository's object store is never written.
 *
 * HEAD is detached at the baseline: the agent's own commits, if any,
 * are ignored by collect, and no branch of ours appears in its .git.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <git2.h>

#include "factory.h"
#include "gitcommon.h"
#include "log.h"
#include "worker.h"

static int	write_at(int, const char *, const char *, char *, size_t);
static int	mkdir_at(int, const char *, const char *, char *, size_t);
static int	make_gitdir(int, const char *, const char *, char *, size_t);
static int	write_index(git_commit *, const char *, char *, size_t);
#ifdef FACTORY_TESTBUILD
static void	pristine_fault_index(git_commit *, const char *);
#endif
static void	pristine_fault(int);


int
gitw_init(char *err, size_t errlen)
{
	/*
	 * The repositories belong to the operator, not to _factoryw, and
	 * the only repositories we open are those and our own scratch
	 * ones: an agent's .git is read as plain files, never opened.
	 */
	return (gitc_init(GITC_STRICT, err, errlen));
}

int
gitw_attempt_id_valid(const char *id)
{
	size_t	 i, len;

	len = strlen(id);
	if (len == 0 || len > ATTEMPT_ID_MAX || id[0] == '.' ||
	    id[0] == '-' || strstr(id, "..") != NULL)
		return (0);
	if (len >= 5 && strcmp(id + len - 5, ".lock") == 0)
		return (0);
	for (i = 0; i < len; i++) {
		if (!isalnum((unsigned char)id[i]) && id[i] != '-' &&
		    id[i] != '_' && id[i] != '.')
			return (0);
	}
	return (1);
}

int
gitw_objects_dir(const char *repo_path, char *out, size_t outlen, char *err,
    size_t errlen)
{
	git_repository	*repo = NULL;
	char		 path[PATH_MAX];
	int		 n;

	if (git_repository_open_ext(&repo, repo_path,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		gitc_err(err, errlen, "open repository %s", repo_path);
		return (-1);
	}
	/* commondir: a linked worktree keeps its objects there. */
	n = snprintf(path, sizeof(path), "%sobjects",
	    git_repository_commondir(repo));
	git_repository_free(repo);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, errlen, "%s: objects path too long", repo_path);
		return (-1);
	}
	if (realpath(path, out) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (strlen(out) >= outlen || strchr(out, '\n') != NULL) {
		snprintf(err, errlen, "%s: unusable objects path", path);
		return (-1);
	}
	return (0);
}

int
resolve(const char *repo_path, const char *ref, char out[GITW_HEXSZ + 1],
    char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_object	*obj = NULL, *commit = NULL;
	git_oid		 oid;
	size_t		 i;
	int		 ret = -1;

	if (git_repository_open_ext(&repo, repo_path,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		gitc_err(err, errlen, "open repository %s", repo_path);
		return (-1);
	}
	for (i = 0; ref[i] != '\0' && isxdigit((unsigned char)ref[i]); i++)
		;
	if (i == GITW_HEXSZ && ref[i] == '\0') {
		if (git_oid_fromstr(&oid, ref) < 0 ||
		    git_object_lookup(&obj, repo, &oid, GIT_OBJECT_ANY) < 0) {
			gitc_err(err, errlen, "%s: object %s", repo_path, ref);
			goto done;
		}
	} else if (ref[0] == '\0' || ref[0] == '-' ||
	    git_revparse_single(&obj, repo, ref) < 0) {
		gitc_err(err, errlen, "%s: cannot resolve \"%s\"", repo_path,
		    ref);
		goto done;
	}
	if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		gitc_err(err, errlen, "%s: \"%s\" is not a commit", repo_path,
		    ref);
		goto done;
	}
	git_oid_tostr(out, GITW_HEXSZ + 1, git_object_id(commit));
	ret = 0;
 done:
	git_object_free(commit);
	git_object_free(obj);
	git_repository_free(repo);
	return (ret);
}

static int
write_at(int dirfd, const char *name, const char *data, char *err,
    size_t errlen)
{
	size_t	 len = strlen(data), off = 0;
	ssize_t	 n;
	int	 fd;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644);
	if (fd == -1) {
		snprintf(err, errlen, "create .git/%s: %s", name,
		    strerror(errno));
		return (-1);
	}
	while (off < len) {
		if ((n = write(fd, data + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "write .git/%s: %s", name,
			    strerror(errno));
			close(fd);
			return (-1);
		}
		off += n;
	}
	if (close(fd) == -1) {
		snprintf(err, errlen, "close .git/%s: %s", name,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

static int
mkdir_at(int dirfd, const char *name, const char *what, char *err,
    size_t errlen)
{
	if (mkdirat(dirfd, name, 0755) == -1) {
		snprintf(err, errlen, "mkdir %s%s: %s", what, name,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/* Makes tree/.git by hand; gitfd is tree/.git, already created. */
static int
make_gitdir(int gitfd, const char *repo_path, const char *baseline,
    char *err, size_t errlen)
{
	char	 objects[PATH_MAX], alt[PATH_MAX + 2], head[GITW_HEXSZ + 2];

	if (gitw_objects_dir(repo_path, objects, sizeof(objects), err,
	    errlen) == -1)
		return (-1);
	snprintf(alt, sizeof(alt), "%s\n", objects);
	snprintf(head, sizeof(head), "%s\n", baseline);
	if (write_at(gitfd, "HEAD", head, err, errlen) == -1 ||
	    write_at(gitfd, "config", GITW_TREE_CONFIG, err, errlen) == -1 ||
	    mkdir_at(gitfd, "objects", ".git/", err, errlen) == -1 ||
	    mkdir_at(gitfd, "objects/info", ".git/", err, errlen) == -1 ||
	    mkdir_at(gitfd, "objects/pack", ".git/", err, errlen) == -1 ||
	    write_at(gitfd, "objects/info/alternates", alt, err,
	    errlen) == -1 ||
	    mkdir_at(gitfd, "refs", ".git/", err, errlen) == -1 ||
	    mkdir_at(gitfd, "refs/heads", ".git/", err, errlen) == -1 ||
	    mkdir_at(gitfd, "refs/tags", ".git/", err, errlen) == -1)
		return (-1);
	return (0);
}

/*
 * The baseline, a 40-hex id, as a commit of the repository itself: the
 * repository and the commit, or -1 and err with nothing left open.
 */
static int
baseline_open(const char *repo_path, const char *baseline, git_oid *oid,
    git_repository **repo, git_commit **commit, char *err, size_t errlen)
{
	*repo = NULL;
	*commit = NULL;
	if (strlen(baseline) != GITW_HEXSZ ||
	    git_oid_fromstr(oid, baseline) < 0) {
		snprintf(err, errlen, "baseline \"%s\" is not a 40-hex id",
		    baseline);
		git_error_clear();
		return (-1);
	}
	if (git_repository_open_ext(repo, repo_path,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		gitc_err(err, errlen, "open repository %s", repo_path);
		return (-1);
	}
	if (git_commit_lookup(commit, *repo, oid) < 0) {
		gitc_err(err, errlen, "%s: baseline %s", repo_path, baseline);
		git_repository_free(*repo);
		*repo = NULL;
		return (-1);
	}
	return (0);
}

/*
 * A checkout of our own rather than git_checkout_tree: nothing to
 * compare (the target is empty), no attributes, filters or index, and
 * no submodule lookup, which libgit2 refuses without a work tree.  A
 * gitlink becomes an empty directory, as git leaves an uninitialised
 * submodule.  Each entry is made relative to its directory's fd,
 * O_EXCL and without following links, so a name the tree holds twice
 * or a link planted by an earlier entry cannot redirect a write.
 */
struct pco {
	git_repository	*repo;
	char		*err;
	size_t		 errlen;
	char		 path[PATH_MAX];
};

static int	pco_tree(struct pco *, const git_tree *, int, size_t);
static int	pco_blob(struct pco *, const git_tree_entry *, int);
static int	pco_name_ok(const char *);

/* A name git could hold that is safe as one path component here. */
static int
pco_name_ok(const char *name)
{
	return (name[0] != '\0' && strcmp(name, ".") != 0 &&
	    strcmp(name, "..") != 0 && strchr(name, '/') == NULL &&
	    !gitc_is_dotgit(name, strlen(name)));
}

static int
pco_blob(struct pco *p, const git_tree_entry *e, int dirfd)
{
	git_blob	*b = NULL;
	const char	*name = git_tree_entry_name(e), *data;
	char		*target = NULL;
	size_t		 len, off = 0;
	ssize_t		 n;
	int		 fd = -1, ret = -1;

	if (git_blob_lookup(&b, p->repo, git_tree_entry_id(e)) < 0) {
		gitc_err(p->err, p->errlen, "%s: blob", p->path);
		return (-1);
	}
	data = git_blob_rawcontent(b);
	len = git_blob_rawsize(b);
	if (git_tree_entry_filemode(e) == GIT_FILEMODE_LINK) {
		if (len == 0 || len >= PATH_MAX || memchr(data, '\0', len) !=
		    NULL || (target = strndup(data, len)) == NULL) {
			snprintf(p->err, p->errlen, "%s: unusable symlink "
			    "target", p->path);
			goto done;
		}
		if (symlinkat(target, dirfd, name) == -1) {
			snprintf(p->err, p->errlen, "%s: %s", p->path,
			    strerror(errno));
			goto done;
		}
		ret = 0;
		goto done;
	}
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, git_tree_entry_filemode(e) ==
	    GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644);
	if (fd == -1) {
		snprintf(p->err, p->errlen, "%s: %s", p->path,
		    strerror(errno));
		goto done;
	}
	while (off < len) {
		if ((n = write(fd, data + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(p->err, p->errlen, "%s: %s", p->path,
			    strerror(errno));
			goto done;
		}
		off += n;
	}
	ret = 0;
 done:
	if (fd != -1 && close(fd) == -1 && ret == 0) {
		snprintf(p->err, p->errlen, "%s: %s", p->path,
		    strerror(errno));
		ret = -1;
	}
	free(target);
	git_blob_free(b);
	return (ret);
}

/* The entries of t into the directory dirfd, p->path[0..len) its path. */
static int
pco_tree(struct pco *p, const git_tree *t, int dirfd, size_t len)
{
	const git_tree_entry	*e;
	git_tree		*sub;
	const char		*name;
	size_t			 i, n = git_tree_entrycount(t), nlen;
	int			 cfd, rc;

	for (i = 0; i < n; i++) {
		e = git_tree_entry_byindex(t, i);
		name = git_tree_entry_name(e);
		nlen = strlen(name);
		if (len + 1 + nlen >= sizeof(p->path)) {
			snprintf(p->err, p->errlen, "%s/%s: path too long",
			    p->path, name);
			return (-1);
		}
		if (len != 0)
			p->path[len] = '/';
		memcpy(p->path + len + (len != 0), name, nlen + 1);
		if (!pco_name_ok(name)) {
			snprintf(p->err, p->errlen, "%s: refused name",
			    p->path);
			return (-1);
		}
		switch (git_tree_entry_filemode(e)) {
		case GIT_FILEMODE_BLOB:
		case GIT_FILEMODE_BLOB_EXECUTABLE:
		case GIT_FILEMODE_LINK:
			if (pco_blob(p, e, dirfd) == -1)
				return (-1);
			break;
		case GIT_FILEMODE_COMMIT:
		case GIT_FILEMODE_TREE:
			if (mkdirat(dirfd, name, 0755) == -1) {
				snprintf(p->err, p->errlen, "%s: %s", p->path,
				    strerror(errno));
				return (-1);
			}
			if (git_tree_entry_filemode(e) == GIT_FILEMODE_COMMIT)
				break;
			if (git_tree_lookup(&sub, p->repo,
			    git_tree_entry_id(e)) < 0) {
				gitc_err(p->err, p->errlen, "%s: tree",
				    p->path);
				return (-1);
			}
			cfd = openat(dirfd, name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
			rc = cfd == -1 ? -1 : pco_tree(p, sub,
			    cfd, len + (len != 0) + nlen);
			if (cfd == -1)
				snprintf(p->err, p->errlen, "%s: %s", p->path,
				    strerror(errno));
			else
				close(cfd);
			git_tree_free(sub);
			if (rc == -1)
				return (-1);
			break;
		default:
			snprintf(p->err, p->errlen, "%s: mode %06o", p->path,
			    git_tree_entry_filemode_raw(e));
			return (-1);
		}
		p->path[len] = '\0';
	}
	return (0);
}

/*
 * The pristine checkout of a baseline into dest, an empty directory
 * the parent made for us: the blobs' exact bytes, nothing else (no
 * index: each attempt's is made from the object store, for it alone,
 * by provision_upper).  Only the repository's objects are read.
 */
int
pristine_checkout(const char *repo_path, const char *baseline,
    const char *dest, char *err, size_t errlen)
{
	struct pco	 p;
	git_repository	*repo = NULL;
	git_commit	*commit = NULL;
	git_tree	*tree = NULL;
	git_oid		 oid;
	char		 where[PATH_MAX + 1024];
	int		 fd = -1, ret = -1;

	if (baseline_open(repo_path, baseline, &oid, &repo, &commit, err,
	    errlen) == -1)
		return (-1);
	if (git_commit_tree(&tree, commit) < 0) {
		gitc_err(err, errlen, "%s: baseline %s", repo_path, baseline);
		goto done;
	}
	if ((fd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", dest, strerror(errno));
		goto done;
	}
	memset(&p, 0, sizeof(p));
	p.repo = repo;
	p.err = err;
	p.errlen = errlen;
	if (pco_tree(&p, tree, fd, 0) == -1) {
		/* Say where: the path alone is relative to dest. */
		snprintf(where, sizeof(where), "checkout into %s: %s", dest,
		    err);
		strlcpy(err, where, errlen);
		goto done;
	}
#ifdef FACTORY_TESTBUILD
	pristine_fault_index(commit, dest);
#endif
	pristine_fault(fd);
	ret = 0;
 done:
	if (fd != -1)
		close(fd);
	git_tree_free(tree);
	git_commit_free(commit);
	git_repository_free(repo);
	return (ret);
}

#ifdef FACTORY_TESTBUILD
/*
 * Test builds (regress/vtree): a compromised worker.  "poison-pristine"
 * rewrites check.sh of its checkout to pass; "hold-pristine" keeps it
 * open for writing, and pristine_fault_late() rewrites it later, after
 * the parent made the tree root's; "park-pristine" does the same with
 * the descriptor parked in a socket's queue (SCM_RIGHTS to itself),
 * where no /proc table shows it while the parent looks;
 * "sparse-pristine" leaves a sparse file of 4 GiB it wrote no byte of, for root's seal to copy; "poison-index"
 * leaves an index as dest/.git (where workers of old left the one the
 * cache kept) whose README.md entry names src/a.c's blob.
 */
static int	 pristine_held_fd = -1;
static int	 pristine_park[2] = { -1, -1 };

static void
pristine_park_fd(int fd)
{
	struct msghdr	 mh;
	struct cmsghdr	*cm;
	struct iovec	 iov;
	char		 c = 'p';
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cmsg;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    pristine_park) == -1) {
		log_warn("park-pristine: socketpair");
		return;
	}
	memset(&mh, 0, sizeof(mh));
	memset(&cmsg, 0, sizeof(cmsg));
	iov.iov_base = &c;
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cmsg.buf;
	mh.msg_controllen = sizeof(cmsg.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(pristine_park[0], &mh, 0) == -1)
		log_warn("park-pristine: sendmsg");
	close(fd);
}

static int
pristine_unpark_fd(void)
{
	struct msghdr	 mh;
	struct cmsghdr	*cm;
	struct iovec	 iov;
	char		 c;
	int		 fd = -1;
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cmsg;

	memset(&mh, 0, sizeof(mh));
	iov.iov_base = &c;
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cmsg.buf;
	mh.msg_controllen = sizeof(cmsg.buf);
	if (recvmsg(pristine_park[1], &mh, MSG_CMSG_CLOEXEC) == 1 &&
	    (cm = CMSG_FIRSTHDR(&mh)) != NULL && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	close(pristine_park[0]);
	close(pristine_park[1]);
	pristine_park[0] = pristine_park[1] = -1;
	return (fd);
}

static void
pristine_fault(int dfd)
{
	static const char	 pass[] = "exit 0\n";
	int			 fd;

	if (faultpoint("worker:poison-pristine") && (fd = openat(dfd,
	    "check.sh", O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)) != -1) {
		if (write(fd, pass, sizeof(pass) - 1) == -1)
			log_warn("poison-pristine");
		close(fd);
	}
	if (faultpoint("worker:hold-pristine") && pristine_held_fd == -1)
		pristine_held_fd = openat(dfd, "check.sh", O_WRONLY |
		    O_NOFOLLOW | O_CLOEXEC);
	if (faultpoint("worker:sparse-pristine") && (fd = openat(dfd,
	    "zz-sparse", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) != -1) {
		if (ftruncate(fd, (off_t)4096 << 20) == -1)
			log_warn("sparse-pristine");
		else
			log_warnx("sparse-pristine: zz-sparse left");
		close(fd);
	}
	if (faultpoint("worker:park-pristine") && pristine_park[0] == -1 &&
	    (fd = openat(dfd, "check.sh", O_WRONLY | O_NOFOLLOW |
	    O_CLOEXEC)) != -1)
		pristine_park_fd(fd);
}

static void
pristine_fault_index(git_commit *commit, const char *dest)
{
	git_index		*ix = NULL;
	const git_index_entry	*re, *ae;
	git_index_entry		 ne;
	char			 path[PATH_MAX], err[256];

	if (!faultpoint("worker:poison-index") ||
	    (size_t)snprintf(path, sizeof(path), "%s/.git", dest) >=
	    sizeof(path) || write_index(commit, path, err, sizeof(err)) == -1)
		return;
	if (git_index_open(&ix, path) == 0 &&
	    (re = git_index_get_bypath(ix, "README.md", 0)) != NULL &&
	    (ae = git_index_get_bypath(ix, "src/a.c", 0)) != NULL) {
		ne = *re;
		ne.id = ae->id;
		ne.file_size = ae->file_size;
		if (git_index_add(ix, &ne) == 0 && git_index_write(ix) == 0)
			log_warnx("poison-index: README.md is a.c");
	}
	git_index_free(ix);
}

void
pristine_fault_late(void)
{
	static const char	 pass[] = "exit 0\n";
	const char		*what = "hold-pristine";

	if (pristine_park[0] != -1) {
		pristine_held_fd = pristine_unpark_fd();
		what = "park-pristine";
	}
	if (pristine_held_fd == -1)
		return;
	if (ftruncate(pristine_held_fd, 0) == -1 ||
	    pwrite(pristine_held_fd, pass, sizeof(pass) - 1, 0) == -1)
		log_warn("%s", what);
	else
		log_warnx("%s: check.sh rewritten", what);
}
#else
static void
pristine_fault(int dfd)
{
}

void
pristine_fault_late(void)
{
}
#endif

/*
 * An index of the baseline's entries without stat data, at path: git
 * in the tree then sees a clean checkout (it hashes each file once, on
 * its first refresh, and records what it saw) rather than every file
 * deleted and untracked.
 */
static int
write_index(git_commit *commit, const char *path, char *err, size_t errlen)
{
	git_index	*idx = NULL;
	git_tree	*tree = NULL;
	int		 ret = -1;

	if (git_commit_tree(&tree, commit) < 0 ||
	    git_index_open(&idx, path) < 0 ||
	    git_index_read_tree(idx, tree) < 0 ||
	    git_index_write(idx) < 0) {
		gitc_err(err, errlen, "%s", path);
		goto done;
	}
	ret = 0;
 done:
	git_index_free(idx);
	git_tree_free(tree);
	return (ret);
}

/*
 * The per-attempt layer of an overlay tree: attempt_dir/upper/.git
 * (worker.h says what it holds) and attempt_dir/tree, the empty
 * directory the overlay is mounted on.  The pristine checkout is the lower layer.
 */
int
provision_upper(const char *repo_path, const char *baseline,
    const char *attempt_dir, char *err, size_t errlen)
{
	char		 path[PATH_MAX];
	git_repository	*repo = NULL;
	git_commit	*commit = NULL;
	git_oid		 oid;
	int		 afd = -1, ufd = -1, gfd = -1, ret = -1;

	if (baseline_open(repo_path, baseline, &oid, &repo, &commit, err,
	    errlen) == -1)
		return (-1);
	if ((afd = open(attempt_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		snprintf(err, errlen, "%s: %s", attempt_dir, strerror(errno));
		goto done;
	}
	if (mkdirat(afd, "tree", 0755) == -1 ||
	    mkdirat(afd, "upper", 0755) == -1 ||
	    (ufd = openat(afd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 ||
	    mkdirat(ufd, ".git", 0755) == -1 ||
	    (gfd = openat(ufd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s/upper/.git: %s", attempt_dir,
		    strerror(errno));
		goto done;
	}
	if (make_gitdir(gfd, repo_path, baseline, err, errlen) == -1)
		goto done;
	/*
	 * Its index, made here from the baseline's tree in the object
	 * store, for this attempt alone: never a copy of one kept in the
	 * cache, which a worker of an earlier attempt would have written
	 * and no one checks (an entry naming another blob would be what
	 * "git checkout -- path" restores; a cache-tree extension what
	 * "git commit" writes as the tree).
	 */
	if ((size_t)snprintf(path, sizeof(path), "%s/upper/.git/index",
	    attempt_dir) >= sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", attempt_dir);
		goto done;
	}
	if (write_index(commit, path, err, errlen) == -1)
		goto done;
	ret = 0;
 done:
	if (gfd != -1)
		close(gfd);
	if (ufd != -1)
		close(ufd);
	if (afd != -1)
		close(afd);
	git_commit_free(commit);
	git_repository_free(repo);
	return (ret);
}
