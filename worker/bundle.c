/*
 * Writing a git bundle, v2 format, by hand: libgit2 1.5 has no bundle
 * API.  The layout is the one git-bundle(1) reads:
 *
 *	# v2 git bundle
 *	-<baseline> <baseline's subject>
 *	<commit> refs/heads/factory/<attempt id>
 *	<empty line>
 *	<pack>
 *
 * The pack holds what the commit reaches and the baseline does not.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>
#include <openssl/evp.h>

#include "gitcommon.h"
#include "worker.h"

#define BUNDLE_SIGNATURE	"# v2 git bundle\n"

struct bundle_out {
	int		 fd;
	EVP_MD_CTX	*md;
	uint64_t	 size;
	int		 error;		/* errno of a failed write */
};

static int	bundle_put(struct bundle_out *, const void *, size_t);
static int	pack_cb(void *, size_t, void *);
static int	bundle_header(git_repository *, const git_oid *, const char *,
		    const char *, char **, char *, size_t);
static int	pack_changed(git_packbuilder *, git_repository *,
		    const git_tree *, const git_tree *);
static int	bundle_pack(git_repository *, const git_oid *, const git_oid *,
		    struct bundle_out *, char *, size_t);
static int	sync_dir(const char *);

static int
bundle_put(struct bundle_out *out, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	if (EVP_DigestUpdate(out->md, buf, len) != 1) {
		out->error = EIO;
		return (-1);
	}
	while (len > 0) {
		if ((n = write(out->fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			out->error = errno;
			return (-1);
		}
		p += n;
		len -= n;
		out->size += n;
	}
	return (0);
}

static int
pack_cb(void *buf, size_t len, void *arg)
{
	return (bundle_put(arg, buf, len) == -1 ? -1 : 0);
}

/* The header, up to and including the empty line, in *hdr. */
static int
bundle_header(git_repository *repo, const git_oid *base, const char *commit,
    const char *attempt_id, char **hdr, char *err, size_t errlen)
{
	git_commit	*bc = NULL;
	const char	*subject;
	char		 bhex[GITW_HEXSZ + 1];
	int		 n;

	git_oid_tostr(bhex, sizeof(bhex), base);
	if (git_commit_lookup(&bc, repo, base) < 0) {
		gitc_err(err, errlen, "bundle: baseline %s", bhex);
		return (-1);
	}
	/* The summary is one line; git shows it as the comment. */
	if ((subject = git_commit_summary(bc)) == NULL)
		subject = "";
	n = asprintf(hdr, "%s-%s %s\n%s refs/heads/factory/%s\n\n",
	    BUNDLE_SIGNATURE, bhex, subject, commit, attempt_id);
	git_commit_free(bc);
	if (n == -1) {
		*hdr = NULL;
		snprintf(err, errlen, "bundle: out of memory");
		return (-1);
	}
	return (0);
}

/*
 * What the commit's tree has that the baseline's has not, by a walk of
 * both trees side by side that skips every entry whose id is the same:
 * the cost follows the change.  (git_packbuilder_insert_walk with the
 * baseline hidden marks the baseline's whole tree first.)  A blob the
 * baseline holds at another path may be packed again: harmless, the
 * pack is only a little larger.
 */
static int
pack_changed(git_packbuilder *pb, git_repository *repo, const git_tree *nt,
    const git_tree *bt)
{
	const git_tree_entry	*e, *be;
	git_tree		*sub = NULL, *bsub = NULL;
	size_t			 i, n = git_tree_entrycount(nt);
	int			 rc;

	if (git_packbuilder_insert(pb, git_tree_id(nt), NULL) < 0)
		return (-1);
	for (i = 0; i < n; i++) {
		e = git_tree_entry_byindex(nt, i);
		be = bt != NULL ? git_tree_entry_byname(bt,
		    git_tree_entry_name(e)) : NULL;
		if (be != NULL && git_oid_equal(git_tree_entry_id(e),
		    git_tree_entry_id(be)))
			continue;
		switch (git_tree_entry_type(e)) {
		case GIT_OBJECT_BLOB:
			if (git_packbuilder_insert(pb, git_tree_entry_id(e),
			    NULL) < 0)
				return (-1);
			break;
		case GIT_OBJECT_TREE:
			if (git_tree_lookup(&sub, repo,
			    git_tree_entry_id(e)) < 0)
				return (-1);
			if (be != NULL &&
			    git_tree_entry_type(be) == GIT_OBJECT_TREE &&
			    git_tree_lookup(&bsub, repo,
			    git_tree_entry_id(be)) < 0) {
				git_tree_free(sub);
				return (-1);
			}
			rc = pack_changed(pb, repo, sub, bsub);
			git_tree_free(bsub);
			git_tree_free(sub);
			bsub = sub = NULL;
			if (rc == -1)
				return (-1);
			break;
		default:
			break;	/* a gitlink: no object of this repository */
		}
	}
	return (0);
}

static int
bundle_pack(git_repository *repo, const git_oid *commit, const git_oid *base,
    struct bundle_out *out, char *err, size_t errlen)
{
	git_packbuilder	*pb = NULL;
	git_commit	*c = NULL, *bc = NULL;
	git_tree	*t = NULL, *bt = NULL;
	int		 ret = -1;

	if (git_packbuilder_new(&pb, repo) < 0 ||
	    git_commit_lookup(&c, repo, commit) < 0 ||
	    git_commit_lookup(&bc, repo, base) < 0 ||
	    git_commit_tree(&t, c) < 0 || git_commit_tree(&bt, bc) < 0 ||
	    git_packbuilder_insert(pb, commit, NULL) < 0 ||
	    (!git_oid_equal(git_tree_id(t), git_tree_id(bt)) &&
	    pack_changed(pb, repo, t, bt) == -1)) {
		gitc_err(err, errlen, "bundle: pack objects");
		goto done;
	}
	if (git_packbuilder_foreach(pb, pack_cb, out) < 0) {
		if (out->error != 0)
			snprintf(err, errlen, "bundle: write: %s",
			    strerror(out->error));
		else
			gitc_err(err, errlen, "bundle: write pack");
		goto done;
	}
	ret = 0;
 done:
	git_tree_free(bt);
	git_tree_free(t);
	git_commit_free(bc);
	git_commit_free(c);
	git_packbuilder_free(pb);
	return (ret);
}

/* The rename must survive a crash too. */
static int
sync_dir(const char *path)
{
	char	 buf[PATH_MAX];
	int	 fd, r;

	if (strlcpy(buf, path, sizeof(buf)) >= sizeof(buf))
		return (-1);
	if ((fd = open(dirname(buf), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return (-1);
	r = fsync(fd);
	close(fd);
	return (r);
}

int
gitw_bundle_write(git_repository *repo, const char *commit_hex,
    const char *base_hex, const char *attempt_id, const char *path,
    char sha256[64 + 1], uint64_t *size, char *err, size_t errlen)
{
	struct bundle_out	 out;
	unsigned char		 md[EVP_MAX_MD_SIZE];
	unsigned int		 mdlen, i;
	git_oid			 commit, base;
	char			 tmp[PATH_MAX], *hdr = NULL;
	int			 ret = -1;

	memset(&out, 0, sizeof(out));
	out.fd = -1;
	if (git_oid_fromstr(&commit, commit_hex) < 0 ||
	    git_oid_fromstr(&base, base_hex) < 0) {
		gitc_err(err, errlen, "bundle: bad id %s or %s", commit_hex,
		    base_hex);
		return (-1);
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >=
	    sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		return (-1);
	}
	if (bundle_header(repo, &base, commit_hex, attempt_id, &hdr, err,
	    errlen) == -1)
		return (-1);
	if ((out.md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(out.md, EVP_sha256(), NULL) != 1) {
		snprintf(err, errlen, "bundle: sha256 init");
		goto done;
	}
	if ((out.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto done;
	}
	if (bundle_put(&out, hdr, strlen(hdr)) == -1) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(out.error));
		goto done;
	}
	if (bundle_pack(repo, &commit, &base, &out, err, errlen) == -1)
		goto done;
	if (fsync(out.fd) == -1 || close(out.fd) == -1) {
		out.fd = -1;
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto done;
	}
	out.fd = -1;
	if (rename(tmp, path) == -1 || sync_dir(path) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto done;
	}
	if (EVP_DigestFinal_ex(out.md, md, &mdlen) != 1 || mdlen != 32) {
		snprintf(err, errlen, "bundle: sha256 final");
		goto done;
	}
	for (i = 0; i < mdlen; i++)
		snprintf(sha256 + 2 * i, 3, "%02x", md[i]);
	*size = out.size;
	ret = 0;
 done:
	if (out.fd != -1)
		close(out.fd);
	if (ret == -1)
		unlink(tmp);
	EVP_MD_CTX_free(out.md);
	free(hdr);
	return (ret);
}
