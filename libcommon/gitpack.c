/*
 * The connectivity of a received pack: see gitpack.h.  Linked only by
 * the processes that link libgit2.
 */
#include <sys/types.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>
#include <git2/sys/odb_backend.h>

#include "esc.h"
#include "gitcommon.h"
#include "gitpack.h"

#define HEXSZ	40

struct oids {
	git_oid		*v;
	size_t		 n, cap;
};

static int	add_oid(const git_oid *, void *);
static int	need(git_odb *, const git_oid *, git_object_t, const char *,
		    const git_oid *, char *, size_t);
static int	tree_links(const git_tree *, git_odb *, const git_oid *,
		    char *, size_t);
static int	object_links(git_repository *, git_odb *, const git_oid *,
		    char *, size_t);

static int
add_oid(const git_oid *id, void *arg)
{
	struct oids	*o = arg;
	git_oid		*v;
	size_t		 cap;

	if (o->n == o->cap) {
		cap = o->cap ? o->cap * 2 : 64;
		if ((v = reallocarray(o->v, cap, sizeof(*v))) == NULL)
			return (-1);
		o->v = v;
		o->cap = cap;
	}
	git_oid_cpy(&o->v[o->n++], id);
	return (0);
}

/* id, which from names as what, is an object of all, of type want. */
static int
need(git_odb *all, const git_oid *id, git_object_t want, const char *what,
    const git_oid *from, char *err, size_t errlen)
{
	git_object_t	 type;
	size_t		 len;
	char		 fhex[HEXSZ + 1], hex[HEXSZ + 1];
	int		 rc;

	git_oid_tostr(fhex, sizeof(fhex), from);
	git_oid_tostr(hex, sizeof(hex), id);
	if ((rc = git_odb_read_header(&len, &type, all, id)) ==
	    GIT_ENOTFOUND) {
		snprintf(err, errlen, "bundle: %s %s names %s, missing from "
		    "both the pack and the repository", what, fhex, hex);
		git_error_clear();
		return (-1);
	}
	if (rc < 0) {
		gitc_err(err, errlen, "bundle: %s %s names %s", what, fhex,
		    hex);
		return (-1);
	}
	if (type != want) {
		snprintf(err, errlen, "bundle: %s %s names %s as a %s; it is "
		    "a %s", what, fhex, hex, git_object_type2string(want),
		    git_object_type2string(type));
		return (-1);
	}
	return (0);
}

static int
tree_links(const git_tree *t, git_odb *all, const git_oid *id, char *err,
    size_t errlen)
{
	const git_tree_entry	*e;
	const char		*name;
	char			 ename[128], what[160];
	size_t			 i, n = git_tree_entrycount(t);

	for (i = 0; i < n; i++) {
		e = git_tree_entry_byindex(t, i);
		/* A gitlink's commit is another repository's object. */
		if (git_tree_entry_type(e) == GIT_OBJECT_COMMIT)
			continue;
		/* The name is the sender's: encoded, and short. */
		name = git_tree_entry_name(e);
		if (esc_encode(name, strlen(name), ename, sizeof(ename)) ==
		    -1)
			strlcpy(ename, "(a long name)", sizeof(ename));
		snprintf(what, sizeof(what), "entry \"%s\" of tree", ename);
		if (need(all, git_tree_entry_id(e), git_tree_entry_type(e),
		    what, id, err, errlen) == -1)
			return (-1);
	}
	return (0);
}

/* Everything one object of the pack names. */
static int
object_links(git_repository *pack, git_odb *all, const git_oid *id,
    char *err, size_t errlen)
{
	git_object	*obj = NULL;
	git_commit	*c;
	git_tag		*tag;
	char		 hex[HEXSZ + 1];
	unsigned int	 i;
	int		 ret = -1;

	if (git_object_lookup(&obj, pack, id, GIT_OBJECT_ANY) < 0) {
		git_oid_tostr(hex, sizeof(hex), id);
		gitc_err(err, errlen, "bundle: object %s of the pack", hex);
		return (-1);
	}
	switch (git_object_type(obj)) {
	case GIT_OBJECT_COMMIT:
		c = (git_commit *)obj;
		if (need(all, git_commit_tree_id(c), GIT_OBJECT_TREE,
		    "commit", id, err, errlen) == -1)
			goto done;
		for (i = 0; i < git_commit_parentcount(c); i++)
			if (need(all, git_commit_parent_id(c, i),
			    GIT_OBJECT_COMMIT, "commit", id, err,
			    errlen) == -1)
				goto done;
		break;
	case GIT_OBJECT_TREE:
		if (tree_links((git_tree *)obj, all, id, err, errlen) == -1)
			goto done;
		break;
	case GIT_OBJECT_TAG:
		tag = (git_tag *)obj;
		if (need(all, git_tag_target_id(tag),
		    git_tag_target_type(tag), "tag", id, err, errlen) == -1)
			goto done;
		break;
	default:
		break;		/* a blob names nothing */
	}
	ret = 0;
 done:
	git_object_free(obj);
	return (ret);
}

int
gitpack_links(const char *idx_path, git_odb *all, char *err, size_t errlen)
{
	git_repository	*pack = NULL;
	git_odb		*podb = NULL;
	git_odb_backend	*be = NULL;
	struct oids	 o = { NULL, 0, 0 };
	size_t		 i;
	int		 ret = -1;

	/* The pack alone, to list its objects and parse each. */
	if (git_odb_new(&podb) < 0 ||
	    git_odb_backend_one_pack(&be, idx_path) < 0) {
		gitc_err(err, errlen, "bundle: open %s", idx_path);
		goto done;
	}
	if (git_odb_add_backend(podb, be, 1) < 0) {
		be->free(be);		/* still ours */
		gitc_err(err, errlen, "bundle: open %s", idx_path);
		goto done;
	}
	if (git_repository_wrap_odb(&pack, podb) < 0 ||
	    git_odb_foreach(podb, add_oid, &o) < 0) {
		gitc_err(err, errlen, "bundle: objects of %s", idx_path);
		goto done;
	}
	for (i = 0; i < o.n; i++)
		if (object_links(pack, all, &o.v[i], err, errlen) == -1)
			goto done;
	ret = 0;
 done:
	free(o.v);
	git_repository_free(pack);
	git_odb_free(podb);
	return (ret);
}
