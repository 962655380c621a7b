/*
 * Reading a bundle: a strict parse of its v2 header, then its pack
 * indexed into a scratch repository of our own.  Nothing the bundle
 * says is believed until the objects themselves confirm it.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "bundlehdr.h"
#include "factory.h"
#include "gitcommon.h"
#include "gitpack.h"
#include "verifier.h"

static int	 put_file(int, const char *, const char *, const char *,
		    char *, size_t);
static int	 make_scratch(const char *, const char *, char *, size_t);
static int	 index_pack(const struct vbundle *, git_odb *, const char *,
		    char *, size_t, char *, size_t);
static int	 check_links(const char *, const char *, char *, size_t);
static int	 check_commit(const struct vbundle *, const char *,
		    const char *, char *, size_t);


int
gitv_init(char *err, size_t errlen)
{
	/* Only scratch repositories we made ourselves are opened. */
	return (gitc_init(GITC_OWNER_CHECK | GITC_STRICT, err, errlen));
}

int
vbundle_open(int fd, struct vbundle *vb, char *err, size_t errlen)
{
	struct bundle_hdr	 h;

	memset(vb, 0, sizeof(*vb));
	vb->fd = -1;
	if (bundle_hdr_read(fd, &h, err, errlen) == -1)
		return (-1);
	memcpy(vb->prereq, h.prereq, sizeof(vb->prereq));
	memcpy(vb->commit, h.commit, sizeof(vb->commit));
	strlcpy(vb->attempt_id, h.attempt, sizeof(vb->attempt_id));
	vb->pack_offset = h.pack_offset;
	vb->fd = fd;
	return (0);
}

/*
 * The repository's objects directory, found without opening it with
 * libgit2: its config and its owner are not ours to trust.
 */
int
gitv_objects(const char *repo, char *out, size_t outlen, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/HEAD", repo);
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		snprintf(path, sizeof(path), "%s/objects", repo);
	else
		snprintf(path, sizeof(path), "%s/.git/objects", repo);
	if (realpath(path, out) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (stat(out, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    strlen(out) + 2 > outlen || strchr(out, '\n') != NULL) {
		snprintf(err, errlen, "%s: not a usable objects directory",
		    path);
		return (-1);
	}
	return (0);
}

static int
put_file(int dirfd, const char *name, const char *data, const char *gitdir,
    char *err, size_t errlen)
{
	size_t	 len = strlen(data);
	int	 fd, ok;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644);
	ok = fd != -1 && write(fd, data, len) == (ssize_t)len;
	if (fd == -1 || close(fd) == -1 || !ok) {
		snprintf(err, errlen, "%s/%s: %s", gitdir, name,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * The scratch repository is made file by file, not with
 * git_repository_init: that probes the filesystem with chmod(2), which
 * the verifier's pledge does not allow, and writes more than we need.
 * gitdir must be new or an empty directory.
 */
static int
make_scratch(const char *gitdir, const char *objects, char *err,
    size_t errlen)
{
	static const char *const dirs[] = {
		"objects", "objects/info", "objects/pack", "refs",
		"refs/heads", "refs/tags"
	};
	char	 alt[PATH_MAX + 1];
	size_t	 i;
	int	 fd, ret = -1;

	if (mkdir(gitdir, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", gitdir, strerror(errno));
		return (-1);
	}
	if ((fd = open(gitdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", gitdir, strerror(errno));
		return (-1);
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (mkdirat(fd, dirs[i], 0700) == -1) {
			snprintf(err, errlen, "%s/%s: %s", gitdir, dirs[i],
			    strerror(errno));
			goto done;
		}
	}
	snprintf(alt, sizeof(alt), "%s\n", objects);
	if (put_file(fd, "HEAD", "ref: refs/heads/main\n", gitdir, err,
	    errlen) == -1 ||
	    put_file(fd, "config", "[core]\n\trepositoryformatversion = 0\n"
	    "\tbare = true\n", gitdir, err, errlen) == -1 ||
	    put_file(fd, "objects/info/alternates", alt, gitdir, err,
	    errlen) == -1)
		goto done;
	ret = 0;
 done:
	close(fd);
	return (ret);
}

/*
 * Feeds the pack to git_indexer; odb completes a thin pack.  The
 * name of the pack written (its hash, hex) goes to name.
 *
 * The indexer's own connectivity check (verify) stays off: it is
 * wrong for gitlinks (gitpack.h); check_links() checks it instead.
 */
static int
index_pack(const struct vbundle *vb, git_odb *odb, const char *gitdir,
    char *name, size_t namelen, char *err, size_t errlen)
{
	git_indexer_options	 opts;
	git_indexer_progress	 stats;
	git_indexer		*idx = NULL;
	char			 packdir[PATH_MAX], *buf;
	off_t			 off = vb->pack_offset;
	ssize_t			 n;
	int			 ret = -1;

	if ((buf = malloc(64 * 1024)) == NULL) {
		snprintf(err, errlen, "bundle: out of memory");
		return (-1);
	}
	snprintf(packdir, sizeof(packdir), "%s/objects/pack", gitdir);
	git_indexer_options_init(&opts, GIT_INDEXER_OPTIONS_VERSION);
	opts.verify = 0;
	memset(&stats, 0, sizeof(stats));
	if (git_indexer_new(&idx, packdir, 0, odb, &opts) < 0) {
		gitc_err(err, errlen, "bundle: indexer in %s", packdir);
		goto done;
	}
	for (;;) {
		n = pread(vb->fd, buf, 64 * 1024, off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "bundle: read: %s",
			    strerror(errno));
			goto done;
		}
		if (n == 0)
			break;
		if (git_indexer_append(idx, buf, n, &stats) < 0) {
			gitc_err(err, errlen, "bundle: pack at offset %lld",
			    (long long)off);
			goto done;
		}
		off += n;
	}
	if (git_indexer_commit(idx, &stats) < 0) {
		gitc_err(err, errlen, "bundle: pack");
		goto done;
	}
	if (strlcpy(name, git_indexer_name(idx), namelen) >= namelen) {
		snprintf(err, errlen, "bundle: pack name too long");
		goto done;
	}
	ret = 0;
 done:
	git_indexer_free(idx);
	free(buf);
	return (ret);
}

/* The new pack, connected: see gitpack.h. */
static int
check_links(const char *gitdir, const char *name, char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_odb		*all = NULL;
	char		 path[PATH_MAX];
	int		 ret = -1;

	if ((size_t)snprintf(path, sizeof(path), "%s/objects/pack/pack-%s.idx",
	    gitdir, name) >= sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", gitdir);
		return (-1);
	}
	/* A fresh open: its object store sees the new pack. */
	if (git_repository_open_bare(&repo, gitdir) < 0 ||
	    git_repository_odb(&all, repo) < 0) {
		gitc_err(err, errlen, "open %s", gitdir);
		goto done;
	}
	ret = gitpack_links(path, all, err, errlen);
 done:
	git_odb_free(all);
	git_repository_free(repo);
	return (ret);
}

/* The ref's commit, with the baseline as its one and only parent. */
static int
check_commit(const struct vbundle *vb, const char *gitdir,
    const char *baseline, char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_commit	*c = NULL;
	git_oid		 oid;
	char		 hex[GITV_HEXSZ + 1];
	int		 ret = -1;

	if (strcmp(vb->prereq, baseline) != 0) {
		snprintf(err, errlen, "bundle: prerequisite %s is not the "
		    "baseline %s", vb->prereq, baseline);
		return (-1);
	}
	if (git_repository_open_bare(&repo, gitdir) < 0) {
		gitc_err(err, errlen, "open %s", gitdir);
		return (-1);
	}
	if (git_oid_fromstr(&oid, vb->commit) < 0 ||
	    git_commit_lookup(&c, repo, &oid) < 0) {
		gitc_err(err, errlen, "bundle: commit %s", vb->commit);
		goto done;
	}
	if (git_commit_parentcount(c) != 1) {
		snprintf(err, errlen, "bundle: commit %s has %u parents, "
		    "not 1", vb->commit, git_commit_parentcount(c));
		goto done;
	}
	git_oid_tostr(hex, sizeof(hex), git_commit_parent_id(c, 0));
	if (strcmp(hex, baseline) != 0) {
		snprintf(err, errlen, "bundle: commit %s has parent %s, not "
		    "the baseline %s", vb->commit, hex, baseline);
		goto done;
	}
	ret = 0;
 done:
	git_commit_free(c);
	git_repository_free(repo);
	return (ret);
}

int
vbundle_index(struct vbundle *vb, const char *repo_path,
    const char *scratch_dir, const char *baseline, char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_odb		*odb = NULL;
	char		 objects[PATH_MAX], name[GITV_HEXSZ * 2 + 1];
	int		 ret = -1;

	if (vb->fd == -1) {
		snprintf(err, errlen, "bundle: not opened");
		return (-1);
	}
	if (strlen(baseline) != GITV_HEXSZ ||
	    !bundle_hex40(baseline, GITV_HEXSZ)) {
		snprintf(err, errlen, "baseline \"%s\" is not a 40-hex id",
		    baseline);
		return (-1);
	}
	if (strlcpy(vb->gitdir, scratch_dir, sizeof(vb->gitdir)) >=
	    sizeof(vb->gitdir)) {
		snprintf(err, errlen, "%s: path too long", scratch_dir);
		return (-1);
	}
	if (gitv_objects(repo_path, objects, sizeof(objects), err,
	    errlen) == -1 ||
	    make_scratch(scratch_dir, objects, err, errlen) == -1)
		return (-1);
	if (git_repository_open_bare(&repo, scratch_dir) < 0 ||
	    git_repository_odb(&odb, repo) < 0) {
		gitc_err(err, errlen, "open %s", scratch_dir);
		goto done;
	}
	if (index_pack(vb, odb, scratch_dir, name, sizeof(name), err,
	    errlen) == -1 ||
	    check_links(scratch_dir, name, err, errlen) == -1)
		goto done;
	/* A fresh open sees the new pack. */
	ret = check_commit(vb, scratch_dir, baseline, err, errlen);
 done:
	git_odb_free(odb);
	git_repository_free(repo);
	if (ret == -1)
		vb->gitdir[0] = '\0';
	return (ret);
}
