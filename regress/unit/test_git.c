/*
 * The libgit2 work of the worker (resolve, provision, collect, bundle)
 * and of the verifier (bundle, recheck, checkout), against real
 * repositories made with the git CLI in a temporary directory.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include <check.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>

#include "conf.h"
#include "../../worker/worker.h"
#include "../../verifier/verifier.h"

#define ID	"a-20261129-0007"
#define TITLE	"Fix the thing"
#define DIGEST	"sha256:" \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define MSG	TITLE "\n\nAttempt-Id: " ID "\nManifest-Digest: " DIGEST "\n"

/*
 * main() makes root and removes it at the end, so a test that fails
 * (and ends its forked process before teardown) leaves nothing behind.
 * Short enough that every path made from them fits PATH_MAX.
 */
static char	 root[32], tmp[64], repo[128], adir[128];
static char	 tree[256], bundle[256], base[GITW_HEXSZ + 1];
static char	 objsum[128], err[1024];
static char	 upper[256], pristine[256];
static int	 overlay;		/* collect walks upper */
static char	*scope[] = { "src/**", "docs/*.md", NULL };

static int	 sh(const char *, ...)
		    __attribute__((__format__ (printf, 1, 2)));
static int	 out(char *, size_t, const char *, ...)
		    __attribute__((__format__ (printf, 3, 4)));

/* Runs a shell command; its exit status, or -1. */
static int
sh(const char *fmt, ...)
{
	char	*cmd;
	va_list	 ap;
	int	 st;

	va_start(ap, fmt);
	ck_assert_int_ne(vasprintf(&cmd, fmt, ap), -1);
	va_end(ap);
	st = system(cmd);
	free(cmd);
	return (WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* Runs a shell command and keeps its output, without the last '\n'. */
static int
out(char *buf, size_t len, const char *fmt, ...)
{
	FILE	*fp;
	char	*cmd;
	size_t	 n;
	va_list	 ap;
	int	 st;

	va_start(ap, fmt);
	ck_assert_int_ne(vasprintf(&cmd, fmt, ap), -1);
	va_end(ap);
	ck_assert_ptr_nonnull(fp = popen(cmd, "r"));
	n = fread(buf, 1, len - 1, fp);
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	st = pclose(fp);
	free(cmd);
	return (WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void
put(const char *rel, const char *data)
{
	char	 path[PATH_MAX];
	FILE	*fp;

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	ck_assert_msg((fp = fopen(path, "w")) != NULL, "%s", path);
	fputs(data, fp);
	ck_assert_int_eq(fclose(fp), 0);
}

/* What the repository's object store looks like: names, sizes, times. */
static void
objects_sum(char *buf, size_t len)
{
	ck_assert_int_eq(out(buf, len, "cd %s/.git/objects && find . "
	    "-printf '%%p %%s %%T@ %%C@\\n' | sort | sha256sum", repo), 0);
}

static void
setup(void)
{
	char	 e[1024];

	snprintf(tmp, sizeof(tmp), "%s/t.XXXXXX", root);
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(repo, sizeof(repo), "%s/repo", tmp);
	snprintf(adir, sizeof(adir), "%s/a1", tmp);
	snprintf(tree, sizeof(tree), "%s/tree", adir);
	snprintf(bundle, sizeof(bundle), "%s/bundle", adir);
	/* The git CLI of the tests must not read the host's config. */
	setenv("HOME", tmp, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "test", 1);
	setenv("GIT_AUTHOR_EMAIL", "test@localhost", 1);
	setenv("GIT_COMMITTER_NAME", "test", 1);
	setenv("GIT_COMMITTER_EMAIL", "test@localhost", 1);
	ck_assert_msg(gitv_init(e, sizeof(e)) == 0, "%s", e);
	ck_assert_msg(gitw_init(e, sizeof(e)) == 0, "%s", e);
	ck_assert_int_eq(sh("git init -q -b main %s && cd %s && "
	    "mkdir -p src docs .github/workflows && "
	    "printf 'int a;\\n' > src/a.c && printf 'int b;\\n' > src/b.c && "
	    "printf '#!/bin/sh\\n' > src/run.sh && chmod 755 src/run.sh && "
	    "printf '# x\\n' > docs/x.md && printf 'readme\\n' > README && "
	    "printf 'on: push\\n' > .github/workflows/ci.yml && "
	    "git add -A && git commit -q -m 'initial commit'", repo, repo),
	    0);
	ck_assert_msg(resolve(repo, "main", base, e, sizeof(e)) == 0, "%s",
	    e);
	objects_sum(objsum, sizeof(objsum));
	ck_assert_int_eq(mkdir(adir, 0700), 0);
}

static void	make_overlay(void);

static void
teardown(void)
{
	sh("/bin/rm -rf %s", tmp);
	git_libgit2_shutdown();
	git_libgit2_shutdown();
}

static int
do_collect(struct collect_result *res, uint64_t limit)
{
	struct collect_req	 req;

	memset(&req, 0, sizeof(req));
	req.repo_path = repo;
	req.baseline_hex = base;
	req.attempt_dir = adir;
	req.scope = scope;
	req.title = TITLE;
	req.attempt_id = ID;
	req.manifest_digest = DIGEST;
	req.tree_limit = limit;
	req.bundle_path = bundle;
	req.upper = overlay ? upper : NULL;
	return (collect(&req, res, err, sizeof(err)));
}

static const char *
join(char **v, size_t n)
{
	static char	 buf[4096];
	size_t		 i;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		strlcat(buf, "[", sizeof(buf));
		strlcat(buf, v[i], sizeof(buf));
		strlcat(buf, "]", sizeof(buf));
	}
	return (buf);
}

static int
has(char **v, size_t n, const char *s)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return (1);
	return (0);
}

/* Collects and expects exactly these reasons (NULL-terminated). */
static void
expect_rejects(uint64_t limit, ...)
{
	struct collect_result	 res;
	const char		*s;
	struct stat		 st;
	va_list			 ap;
	size_t			 n = 0;

	unlink(bundle);
	ck_assert_msg(do_collect(&res, limit) == 0, "%s", err);
	va_start(ap, limit);
	while ((s = va_arg(ap, const char *)) != NULL) {
		ck_assert_msg(has(res.rejects, res.nrejects, s),
		    "want \"%s\" in %s", s, join(res.rejects, res.nrejects));
		n++;
	}
	va_end(ap);
	ck_assert_msg(res.nrejects == n, "want %zu reasons, got %s", n,
	    join(res.rejects, res.nrejects));
	ck_assert_str_eq(res.commit_hex, "");
	ck_assert_int_eq(stat(bundle, &st), -1);
	collect_result_free(&res);
}

static char
change(const struct collect_result *res, const char *path)
{
	size_t	 i;

	for (i = 0; i < res->nchanges; i++)
		if (strcmp(res->changes[i].path, path) == 0)
			return (res->changes[i].status);
	return (0);
}

/* The object count in the header of a bundle's pack. */
static unsigned
pack_objects(const char *path)
{
	unsigned char	 buf[4096], *p;
	ssize_t		 n;
	int		 fd;

	ck_assert_int_ne(fd = open(path, O_RDONLY), -1);
	ck_assert_int_gt(n = read(fd, buf, sizeof(buf)), 0);
	close(fd);
	ck_assert_ptr_nonnull(p = memmem(buf, n, "\n\nPACK", 6));
	p += 2 + 8;
	return ((unsigned)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]);
}

/* A good attempt: an edit and a new file, collected. */
static void
good_collect(struct collect_result *res)
{
	put("src/a.c", "int a = 1;\n");
	put("src/new.c", "int n;\n");
	ck_assert_msg(do_collect(res, 1 << 20) == 0, "%s", err);
	ck_assert_msg(res->nrejects == 0, "%s",
	    join(res->rejects, res->nrejects));
}

START_TEST(test_resolve)
{
	char	 hex[GITW_HEXSZ + 1], buf[128];

	ck_assert_int_eq(out(buf, sizeof(buf), "git -C %s rev-parse main",
	    repo), 0);
	ck_assert_str_eq(base, buf);
	ck_assert_msg(resolve(repo, buf, hex, err, sizeof(err)) == 0, "%s",
	    err);
	ck_assert_str_eq(hex, buf);
	ck_assert_msg(resolve(repo, "refs/heads/main", hex, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(hex, buf);
	ck_assert_int_eq(resolve(repo, "nosuchbranch", hex, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "nosuchbranch") != NULL, "%s", err);
	ck_assert_int_eq(resolve(repo, "0123456789012345678901234567890123"
	    "456789", hex, err, sizeof(err)), -1);
	ck_assert_int_eq(resolve(repo, "main^{tree}", hex, err,
	    sizeof(err)), -1);
}
END_TEST

START_TEST(test_provision)
{
	char		 buf[PATH_MAX + 64], objects[PATH_MAX], sum[128];
	struct stat	 st;

	ck_assert_int_eq(out(buf, sizeof(buf), "cat %s/src/a.c", tree), 0);
	ck_assert_str_eq(buf, "int a;");
	snprintf(buf, sizeof(buf), "%s/src/run.sh", tree);
	ck_assert_int_eq(stat(buf, &st), 0);
	ck_assert_int_eq(st.st_mode & 0100, 0100);
	ck_assert_int_eq(out(buf, sizeof(buf), "cat %s/.git/config; echo .",
	    tree), 0);
	ck_assert_str_eq(buf, GITW_TREE_CONFIG ".");
	ck_assert_int_eq(out(buf, sizeof(buf), "cat %s/.git/HEAD", tree), 0);
	ck_assert_str_eq(buf, base);
	snprintf(buf, sizeof(buf), "%s/.git/objects", repo);
	ck_assert_ptr_nonnull(realpath(buf, objects));
	strlcat(objects, "\n.", sizeof(objects));
	ck_assert_int_eq(out(buf, sizeof(buf),
	    "cat %s/.git/objects/info/alternates; echo .", tree), 0);
	ck_assert_str_eq(buf, objects);
	snprintf(buf, sizeof(buf), "%s/.git/hooks", tree);
	ck_assert_int_eq(stat(buf, &st), -1);
	ck_assert_int_eq(out(buf, sizeof(buf), "find %s/.git/refs "
	    "-mindepth 1 -not -path '*/refs/heads' -not -path '*/refs/tags'",
	    tree), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(out(buf, sizeof(buf), "git -C %s status "
	    "--porcelain --ignored", tree), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(out(buf, sizeof(buf), "git -C %s rev-parse HEAD",
	    tree), 0);
	ck_assert_str_eq(buf, base);
	objects_sum(sum, sizeof(sum));
	ck_assert_str_eq(sum, objsum);
	/* A second provision into the same attempt is refused. */
	ck_assert_int_eq(provision_upper(repo, base, adir, err,
	    sizeof(err)), -1);
}
END_TEST

START_TEST(test_collect_edit)
{
	struct collect_result	 res;
	struct stat		 st;
	char			 buf[4096], clone[PATH_MAX], sum[128];

	good_collect(&res);
	ck_assert_int_eq(strlen(res.commit_hex), GITW_HEXSZ);
	ck_assert_int_eq(change(&res, "src/a.c"), 'M');
	ck_assert_int_eq(change(&res, "src/new.c"), 'A');
	ck_assert_int_eq(res.nchanges, 2);
	ck_assert_int_eq(out(buf, sizeof(buf), "git --git-dir=%s/collect.git "
	    "log -1 --format='%%P %%T %%an <%%ae> %%cn <%%ce>' %s", adir,
	    res.commit_hex), 0);
	snprintf(clone, sizeof(clone), "%s %s factory <factory@localhost> "
	    "factory <factory@localhost>", base, res.tree_hex);
	ck_assert_str_eq(buf, clone);
	ck_assert_int_eq(out(buf, sizeof(buf), "git --git-dir=%s/collect.git "
	    "cat-file commit %s | sed '1,/^$/d'; echo .", adir,
	    res.commit_hex), 0);
	ck_assert_str_eq(buf, MSG ".");
	/* The bundle: its digest, its size, and git's own opinion. */
	ck_assert_int_eq(out(buf, sizeof(buf), "sha256sum < %s | cut -c1-64",
	    bundle), 0);
	ck_assert_str_eq(buf, res.bundle_sha256);
	ck_assert_int_eq(stat(bundle, &st), 0);
	ck_assert_int_eq(st.st_size, res.bundle_size);
	snprintf(clone, sizeof(clone), "%s/clone", tmp);
	ck_assert_int_eq(sh("git clone -q --no-local %s %s", repo, clone), 0);
	ck_assert_int_eq(sh("git -C %s bundle verify -q %s >/dev/null 2>&1",
	    clone, bundle), 0);
	ck_assert_int_eq(sh("git -C %s fetch -q %s refs/heads/factory/" ID
	    ":refs/heads/got", clone, bundle), 0);
	ck_assert_int_eq(out(buf, sizeof(buf), "git -C %s rev-parse got",
	    clone), 0);
	ck_assert_str_eq(buf, res.commit_hex);
	ck_assert_int_eq(out(buf, sizeof(buf), "git -C %s show got:src/a.c",
	    clone), 0);
	ck_assert_str_eq(buf, "int a = 1;");
	ck_assert_int_eq(out(buf, sizeof(buf), "git -C %s bundle list-heads "
	    "%s", clone, bundle), 0);
	snprintf(clone, sizeof(clone), "%s refs/heads/factory/" ID,
	    res.commit_hex);
	ck_assert_str_eq(buf, clone);
	/* Only what the baseline lacks: a commit, 2 trees, 2 blobs. */
	ck_assert_int_eq(pack_objects(bundle), 5);
	objects_sum(sum, sizeof(sum));
	ck_assert_str_eq(sum, objsum);
	collect_result_free(&res);
}
END_TEST

START_TEST(test_collect_scope)
{
	put("README", "changed\n");
	put(".github/workflows/ci.yml", "on: pull_request\n");
	put("docs/x.md", "# y\n");
	expect_rejects(1 << 20, "README: outside the scope",
	    ".github/workflows/ci.yml: outside the scope",
	    ".github/workflows/ci.yml: change under .github/workflows/",
	    NULL);
}
END_TEST

START_TEST(test_collect_delete_mode)
{
	struct collect_result	 res;
	char			 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/src/b.c", tree);
	ck_assert_int_eq(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/src/run.sh", tree);
	ck_assert_int_eq(chmod(path, 0644), 0);
	ck_assert_msg(do_collect(&res, 0) == 0, "%s", err);
	ck_assert_msg(res.nrejects == 0, "%s",
	    join(res.rejects, res.nrejects));
	ck_assert_int_eq(change(&res, "src/b.c"), 'D');
	ck_assert_int_eq(change(&res, "src/run.sh"), 'M');
	collect_result_free(&res);
	/* Deleting outside the scope is a change outside the scope. */
	snprintf(path, sizeof(path), "%s/README", tree);
	ck_assert_int_eq(unlink(path), 0);
	expect_rejects(0, "README: outside the scope", NULL);
}
END_TEST

START_TEST(test_collect_dotgit)
{
	ck_assert_int_eq(sh("mkdir -p %s/src/.git %s/.GIT && "
	    "echo x > %s/src/.git/x && echo y > %s/.GIT/config", tree, tree,
	    tree, tree), 0);
	expect_rejects(1 << 20, "src/.git: '.git' path component",
	    ".GIT: '.git' path component", NULL);
}
END_TEST

START_TEST(test_collect_gitconfig)
{
	put("src/a.c", "int a = 2;\n");
	ck_assert_int_eq(sh("printf '[core]\\n\\tfsmonitor = evil\\n' >> "
	    "%s/.git/config", tree), 0);
	expect_rejects(1 << 20,
	    ".git/config: differs from the provisioned config", NULL);
}
END_TEST

START_TEST(test_collect_hook)
{
	put("src/a.c", "int a = 2;\n");
	ck_assert_int_eq(sh("mkdir %s/.git/hooks && printf '#!/bin/sh\\n' > "
	    "%s/.git/hooks/pre-commit && echo /tmp > "
	    "%s/.git/objects/info/alternates && mkdir %s/.git/modules",
	    tree, tree, tree, tree), 0);
	expect_rejects(1 << 20, ".git/hooks/pre-commit: hook installed",
	    ".git/objects/info/alternates: changed",
	    ".git/modules: not allowed", NULL);
}
END_TEST

START_TEST(test_collect_symlink_escape)
{
	ck_assert_int_eq(sh("ln -s ../../etc/passwd %s/src/evil && "
	    "ln -s /etc/passwd %s/src/abs && ln -s ../src/../.. %s/src/n && "
	    "ln -s ../.git/config %s/src/cfg", tree, tree, tree, tree), 0);
	expect_rejects(1 << 20, "src/evil: symlink escapes the tree",
	    "src/abs: absolute symlink",
	    "src/n: symlink target not normalized",
	    "src/cfg: symlink into .git", NULL);
}
END_TEST

START_TEST(test_collect_symlink_inside)
{
	struct collect_result	 res;
	char			 buf[256];

	ck_assert_int_eq(sh("ln -s ../docs/x.md %s/src/ok", tree), 0);
	ck_assert_msg(do_collect(&res, 1 << 20) == 0, "%s", err);
	ck_assert_msg(res.nrejects == 0, "%s",
	    join(res.rejects, res.nrejects));
	ck_assert_int_eq(change(&res, "src/ok"), 'A');
	ck_assert_int_eq(out(buf, sizeof(buf), "git --git-dir=%s/collect.git "
	    "ls-tree %s src/ok | cut -c1-6", adir, res.commit_hex), 0);
	ck_assert_str_eq(buf, "120000");
	collect_result_free(&res);
}
END_TEST

START_TEST(test_collect_hardlink_fifo)
{
	ck_assert_int_eq(sh("ln %s/src/a.c %s/src/h.c && mkfifo %s/src/p",
	    tree, tree, tree), 0);
	expect_rejects(1 << 20, "src/a.c: hardlinked file",
	    "src/h.c: hardlinked file", "src/p: fifo", NULL);
}
END_TEST

START_TEST(test_collect_nochange)
{
	expect_rejects(1 << 20, "tree: no change", NULL);
}
END_TEST

START_TEST(test_collect_limit)
{
	/* Over the upper dir: the bytes the agent added or changed. */
	put("src/big.c", "0123456789012345678901234567890123456789\n");
	expect_rejects(40, "src/big.c: tree exceeds the size limit of 40 "
	    "bytes", NULL);
}
END_TEST

/* The agent's commits are not the result: only its files are. */
START_TEST(test_collect_agent_commits)
{
	put("src/a.c", "int a = 3;\n");
	ck_assert_int_eq(sh("git -C %s commit -q -am 'agent commit'", tree),
	    0);
	put("src/a.c", "int a;\n");
	expect_rejects(1 << 20, "tree: no change", NULL);
}
END_TEST

/*
 * The baseline gains a gitlink at src/sub (and one outside the scope,
 * at vendor/mod), and the attempt tree is provisioned again: a
 * submodule's directory is checked out empty.
 */
static void
gitlink_baseline(void)
{
	char	 e[1024];

	ck_assert_int_eq(sh("cd %s && git update-index --add --cacheinfo "
	    "160000,1111111111111111111111111111111111111111,src/sub && "
	    "git update-index --add --cacheinfo "
	    "160000,2222222222222222222222222222222222222222,vendor/mod && "
	    "git commit -q -m 'two submodules'", repo), 0);
	ck_assert_msg(resolve(repo, "main", base, e, sizeof(e)) == 0, "%s",
	    e);
	make_overlay();
	ck_assert_int_eq(sh("test -d %s/src/sub && test -d %s/vendor/mod",
	    tree, tree), 0);
}

/* An untouched submodule is no change, outside the scope or not. */
START_TEST(test_collect_gitlink_kept)
{
	struct collect_result	 res;
	char			 mode[64];

	gitlink_baseline();
	put("src/a.c", "int a = 4;\n");
	ck_assert_msg(do_collect(&res, 1 << 20) == 0, "%s", err);
	ck_assert_msg(res.nrejects == 0, "%s",
	    join(res.rejects, res.nrejects));
	ck_assert_uint_eq(res.nchanges, 1);
	ck_assert_int_eq(change(&res, "src/a.c"), 'M');
	ck_assert_int_eq(sh("git -C %s/collect.git ls-tree %s vendor/mod | "
	    "grep -q '^160000 commit 2222222222222222222222222222222222222222"
	    "'", adir, res.tree_hex), 0);
	ck_assert_int_eq(out(mode, sizeof(mode), "git -C %s/collect.git "
	    "ls-tree %s src/sub | cut -c1-6", adir, res.tree_hex), 0);
	ck_assert_str_eq(mode, "160000");
	collect_result_free(&res);
	/* Nothing but the submodules: still no change. */
	put("src/a.c", "int a;\n");
	expect_rejects(1 << 20, "tree: no change", NULL);
}
END_TEST

/* A touched submodule is refused, in the scope or not. */
START_TEST(test_collect_gitlink_touched)
{
	gitlink_baseline();
	put("src/sub/x.c", "int x;\n");
	expect_rejects(1 << 20, "src/sub: submodule (gitlink) changed",
	    NULL);
	ck_assert_int_eq(sh("/bin/rm -rf %s/src/sub && "
	    "rmdir %s/vendor/mod", tree, tree), 0);
	expect_rejects(1 << 20, "src/sub: submodule (gitlink) changed",
	    "vendor/mod: submodule (gitlink) changed",
	    "vendor/mod: outside the scope", NULL);
	put("src/sub", "a file now\n");
	ck_assert_int_eq(sh("ln -s ../src %s/vendor/mod", tree), 0);
	expect_rejects(1 << 20, "src/sub: submodule (gitlink) changed",
	    "vendor/mod: submodule (gitlink) changed",
	    "vendor/mod: outside the scope", NULL);
}
END_TEST

/*
 * The tree as factoryd makes it: an overlay of the pristine checkout
 * (lower) and attempt_dir/upper, mounted on attempt_dir/tree with the
 * options of supervisord-factory/disk.c.
 */
static void
setup_overlay(void)
{
	/*
	 * Each test runs in a process of its own: in a mount namespace of
	 * its own too, its overlay goes with it, failed or not.
	 */
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL),
	    0);
	setup();
	make_overlay();
}

/*
 * adir (made again) as the worker provisions it for factoryd: a
 * pristine checkout of repo's base beside it, adir/upper and the
 * overlay of both on adir/tree.
 */
static void
make_overlay(void)
{
	char	 e[1024], opts[1024];

	if (overlay)
		umount2(tree, MNT_DETACH);
	snprintf(pristine, sizeof(pristine), "%s.pristine", adir);
	snprintf(upper, sizeof(upper), "%s/upper", adir);
	ck_assert_int_eq(sh("/bin/rm -rf %s %s %s.index && mkdir %s %s",
	    adir, pristine, pristine, adir, pristine), 0);
	ck_assert_msg(pristine_checkout(repo, base, pristine, e,
	    sizeof(e)) == 0, "%s", e);
	/* The checkout holds no index: the attempt's is made for it. */
	ck_assert_int_eq(sh("test ! -e %s/.git", pristine), 0);
	ck_assert_msg(provision_upper(repo, base, adir, e, sizeof(e)) == 0,
	    "%s", e);
	ck_assert_int_eq(sh("mkdir -m 700 %s/work", adir), 0);
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s/work,"
	    "volatile,userxattr,redirect_dir=nofollow,metacopy=off,index=off,"
	    "xino=off", pristine, upper, adir);
	ck_assert_msg(mount("overlay", tree, "overlay", MS_NOSUID | MS_NODEV,
	    opts) == 0, "mount %s: %s", tree, strerror(errno));
	overlay = 1;
}

static void
teardown_overlay(void)
{
	overlay = 0;
	umount2(tree, MNT_DETACH);
	teardown();
}

/* Exactly one change, of this status. */
static void
expect_one(const char *path, char status)
{
	struct collect_result	 res;

	unlink(bundle);
	ck_assert_msg(do_collect(&res, 1 << 20) == 0, "%s", err);
	ck_assert_msg(res.nrejects == 0, "%s",
	    join(res.rejects, res.nrejects));
	ck_assert_msg(res.nchanges == 1 && change(&res, path) == status,
	    "want %c %s, got %zu changes, %s: %c", status, path,
	    res.nchanges, res.nchanges ? res.changes[0].path : "-",
	    res.nchanges ? res.changes[0].status : '-');
	ck_assert_str_ne(res.commit_hex, "");
	collect_result_free(&res);
}

START_TEST(test_overlay_provision)
{
	struct stat	 st;
	char		 buf[64];

	/* The tree is the baseline, its .git the upper's alone. */
	ck_assert_int_eq(sh("cd %s && git status --porcelain | "
	    "grep -q . && exit 1; test \"$(git rev-parse HEAD)\" = %s", tree,
	    base), 0);
	ck_assert_int_eq(stat(pristine, &st), 0);
	snprintf(buf, sizeof(buf), "%s/.git", pristine);
	ck_assert_int_eq(lstat(buf, &st), -1);
	ck_assert_int_eq(sh("test \"$(ls -A %s)\" = .git", upper), 0);
	expect_rejects(1 << 20, "tree: no change", NULL);
}
END_TEST

START_TEST(test_overlay_edit)
{
	put("src/a.c", "int a = 5;\n");
	expect_one("src/a.c", 'M');
	/* Back to the baseline's bytes: copied up, but no change. */
	put("src/a.c", "int a;\n");
	ck_assert_int_eq(sh("touch %s/src/b.c && chmod 755 %s/src && "
	    "test -f %s/src/b.c", tree, tree, upper), 0);
	expect_rejects(1 << 20, "tree: no change", NULL);
	/* Created and deleted again: nothing in upper says otherwise. */
	put("src/tmp.c", "x\n");
	ck_assert_int_eq(sh("rm %s/src/tmp.c", tree), 0);
	expect_rejects(1 << 20, "tree: no change", NULL);
	put("src/new.c", "int n;\n");
	expect_one("src/new.c", 'A');
}
END_TEST

START_TEST(test_overlay_delete_chmod)
{
	ck_assert_int_eq(sh("rm %s/src/b.c", tree), 0);
	expect_one("src/b.c", 'D');
	ck_assert_int_eq(sh("git -C %s checkout -q -- src/b.c && "
	    "chmod 644 %s/src/run.sh", tree, tree), 0);
	expect_one("src/run.sh", 'M');
	ck_assert_int_eq(sh("chmod 755 %s/src/run.sh && rm %s/README", tree,
	    tree), 0);
	expect_rejects(1 << 20, "README: outside the scope", NULL);
}
END_TEST

/* A directory renamed, or replaced by a file: opaque dirs, whiteouts. */
START_TEST(test_overlay_rename_replace)
{
	struct collect_result	 res;

	ck_assert_int_eq(sh("mkdir -p %s/src/lib && echo l > %s/src/lib/l.c",
	    tree, tree), 0);
	ck_assert_int_eq(sh("cd %s && git add -A src && git -c "
	    "user.name=t -c user.email=t@l commit -qm lib", tree), 0);
	/* Its own commit, undone in the files: no change. */
	ck_assert_int_eq(sh("rm -rf %s/src/lib", tree), 0);
	expect_rejects(1 << 20, "tree: no change", NULL);
	ck_assert_int_eq(sh("mv %s/src %s/src2", tree, tree), 0);
	unlink(bundle);
	ck_assert_msg(do_collect(&res, 1 << 20) == 0, "%s", err);
	ck_assert_int_eq(change(&res, "src/a.c"), 'D');
	ck_assert_int_eq(change(&res, "src2/a.c"), 'A');
	ck_assert_msg(has(res.rejects, res.nrejects,
	    "src2/a.c: outside the scope"), "%s",
	    join(res.rejects, res.nrejects));
	collect_result_free(&res);
	ck_assert_int_eq(sh("mv %s/src2 %s/src", tree, tree), 0);
	expect_rejects(1 << 20, "tree: no change", NULL);
	/* A directory replaced by a file, and a file by a directory. */
	ck_assert_int_eq(sh("rm -rf %s/docs && echo d > %s/docs && "
	    "rm %s/src/a.c && mkdir %s/src/a.c && echo i > %s/src/a.c/i",
	    tree, tree, tree, tree, tree), 0);
	unlink(bundle);
	ck_assert_msg(do_collect(&res, 1 << 20) == 0, "%s", err);
	ck_assert_int_eq(change(&res, "docs/x.md"), 'D');
	ck_assert_int_eq(change(&res, "docs"), 'A');
	ck_assert_int_eq(change(&res, "src/a.c"), 'D');
	ck_assert_int_eq(change(&res, "src/a.c/i"), 'A');
	collect_result_free(&res);
}
END_TEST

/*
 * Collect reads only the trees on the way to a change: with the
 * objects of two untouched directories gone from the repository, a
 * change beside them is still collected (the cost follows the
 * change, not the repository).
 */
START_TEST(test_overlay_cost_follows_change)
{
	static const char	*mv = "cd %s && for p in docs .github; do "
	    "o=$(git rev-parse main:$p) && d=$(echo $o | cut -c1-2) && "
	    "f=$(echo $o | cut -c3-) && test -f .git/objects/$d/$f && "
	    "mv .git/objects/$d/$f %s/$p.obj && echo $d/$f >> %s/moved; done";

	ck_assert_int_eq(sh(mv, repo, tmp, tmp), 0);
	put("src/a.c", "int a = 5;\n");
	expect_one("src/a.c", 'M');
	ck_assert_int_eq(sh("cd %s && for p in docs .github; do "
	    "read -r f && mv %s/$p.obj .git/objects/$f; done < %s/moved",
	    repo, tmp, tmp), 0);
}
END_TEST

/* A file that becomes a link, a link that becomes a file: T. */
START_TEST(test_overlay_typechange)
{
	ck_assert_int_eq(sh("rm %s/src/b.c && ln -s a.c %s/src/b.c", tree,
	    tree), 0);
	expect_one("src/b.c", 'T');
	ck_assert_int_eq(sh("cd %s && git add -A && git -c user.name=t -c "
	    "user.email=t@l commit -qm link && rm src/b.c && echo b > src/b.c "
	    "&& git checkout -q -- src/b.c 2>/dev/null; rm -f src/b.c && "
	    "printf 'int b;\\n' > src/b.c", tree), 0);
	expect_rejects(1 << 20, "tree: no change", NULL);
}
END_TEST

/* A directory emptied and filled again hides all of the lower. */
START_TEST(test_overlay_opaque)
{
	struct collect_result	 res;
	char			 path[PATH_MAX];

	ck_assert_int_eq(sh("rm -rf %s/src && mkdir %s/src && "
	    "echo a > %s/src/a.c", tree, tree, tree), 0);
	unlink(bundle);
	ck_assert_msg(do_collect(&res, 1 << 20) == 0, "%s", err);
	ck_assert_msg(res.nrejects == 0, "%s",
	    join(res.rejects, res.nrejects));
	ck_assert_int_eq(change(&res, "src/a.c"), 'M');
	ck_assert_int_eq(change(&res, "src/b.c"), 'D');
	ck_assert_int_eq(change(&res, "src/run.sh"), 'D');
	ck_assert_uint_eq(res.nchanges, 3);
	collect_result_free(&res);
	/*
	 * The agent's own "opaque" marker, set through the tree, is
	 * escaped by the overlay: docs/ still shows the lower.
	 */
	snprintf(path, sizeof(path), "%s/docs", tree);
	ck_assert_int_eq(sh("rm -rf %s/src && git -C %s checkout -q -- src",
	    tree, tree), 0);
	put("docs/y.md", "# y\n");
	ck_assert_int_eq(setxattr(path, "user.overlay.opaque", "y", 1, 0),
	    0);
	expect_one("docs/y.md", 'A');
}
END_TEST

/* Every rule of the whole walk holds over the upper dir too. */
START_TEST(test_overlay_rules)
{
	ck_assert_int_eq(sh("mkdir %s/src/.git && echo x > %s/src/.git/x && "
	    "ln -s /etc/passwd %s/src/abs && ln %s/src/a.c %s/src/hard && "
	    "mkfifo %s/src/fifo && echo hook > %s/.git/hooks-x && "
	    "mkdir %s/.git/hooks && echo h > %s/.git/hooks/pre-commit && "
	    "echo '[core]' >> %s/.git/config && "
	    "mkdir -p %s/.github/workflows && echo x > "
	    "%s/.github/workflows/ci.yml", tree, tree, tree, tree, tree, tree,
	    tree, tree, tree, tree, tree, tree), 0);
	expect_rejects(1 << 20, "src/.git: '.git' path component",
	    "src/abs: absolute symlink", "src/a.c: hardlinked file",
	    "src/hard: hardlinked file", "src/fifo: fifo",
	    ".git/hooks/pre-commit: hook installed",
	    ".git/config: differs from the provisioned config",
	    ".github/workflows/ci.yml: outside the scope",
	    ".github/workflows/ci.yml: change under .github/workflows/",
	    NULL);
}
END_TEST

/*
 * The verifier's tree: an overlay of the pristine checkout, with the
 * commit's changes written through it, is the commit's checkout.
 */
START_TEST(test_overlay_vapply)
{
	struct collect_result	 res;
	char			 opts[1024], gitdir[PATH_MAX], full[PATH_MAX];
	char			 merged[PATH_MAX];

	ck_assert_int_eq(sh("cd %s && echo 'int a = 7;' > src/a.c && "
	    "rm src/b.c && mkdir src/b.c && echo x > src/b.c/x && "
	    "chmod 644 src/run.sh && ln -s a.c src/lnk && "
	    "mkdir -p src/deep/er && echo d > src/deep/er/f", tree), 0);
	unlink(bundle);
	ck_assert_msg(do_collect(&res, 1 << 20) == 0, "%s", err);
	ck_assert_msg(res.nrejects == 0, "%s",
	    join(res.rejects, res.nrejects));
	snprintf(gitdir, sizeof(gitdir), "%s/collect.git", adir);
	snprintf(full, sizeof(full), "%s/full", tmp);
	snprintf(merged, sizeof(merged), "%s/v/checkout", tmp);
	ck_assert_msg(vcheckout(gitdir, res.commit_hex, full, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(sh("mkdir -p %s/v/upper %s/v/work %s", tmp, tmp,
	    merged), 0);
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s/v/upper,"
	    "workdir=%s/v/work,volatile,userxattr,redirect_dir=nofollow,"
	    "metacopy=off,index=off,xino=off", pristine, tmp, tmp);
	ck_assert_int_eq(mount("overlay", merged, "overlay", 0, opts), 0);
	ck_assert_msg(vcheckout(gitdir, res.commit_hex, merged, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(sh("diff -r --no-dereference %s %s && "
	    "test -L %s/src/lnk && ! test -x %s/src/run.sh && "
	    "test -d %s/src/b.c", full, merged, merged, merged, merged), 0);
	ck_assert_int_eq(umount2(merged, 0), 0);
	collect_result_free(&res);
}
END_TEST

START_TEST(test_overlay_gitlink)
{
	char	 e[1024], opts[1024];

	umount2(tree, MNT_DETACH);
	ck_assert_int_eq(sh("cd %s && git update-index --add --cacheinfo "
	    "160000,1111111111111111111111111111111111111111,src/sub && "
	    "ln -s a.c src/rel && git add src/rel && "
	    "git commit -q -m sub", repo), 0);
	ck_assert_msg(resolve(repo, "main", base, e, sizeof(e)) == 0, "%s",
	    e);
	ck_assert_int_eq(sh("/bin/rm -rf %s %s && mkdir %s %s", adir,
	    pristine, adir, pristine), 0);
	ck_assert_msg(pristine_checkout(repo, base, pristine, e,
	    sizeof(e)) == 0, "%s", e);
	ck_assert_msg(provision_upper(repo, base, adir, e,
	    sizeof(e)) == 0,
	    "%s", e);
	ck_assert_int_eq(sh("mkdir -m 700 %s/work && test -d %s/src/sub",
	    adir, pristine), 0);
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s/work,"
	    "volatile,userxattr,redirect_dir=nofollow,metacopy=off,index=off,"
	    "xino=off", pristine, upper, adir);
	ck_assert_int_eq(mount("overlay", tree, "overlay", 0, opts), 0);
	/* From a bare repository too, as factoryd's usually are. */
	ck_assert_int_eq(sh("git clone -q --bare %s %s/bare.git && "
	    "mkdir %s/p2", repo, tmp, tmp), 0);
	snprintf(opts, sizeof(opts), "%s/bare.git", tmp);
	snprintf(e, sizeof(e), "%s/p2", tmp);
	ck_assert_msg(pristine_checkout(opts, base, e, err, sizeof(err)) ==
	    0, "%s", err);
	ck_assert_int_eq(sh("diff -r %s %s/p2 && test -d %s/p2/src/sub && "
	    "test -L %s/p2/src/rel && test -x %s/p2/src/run.sh", pristine, tmp,
	    tmp, tmp, tmp), 0);
	/* The verifier's checkout of a commit with a gitlink, too. */
	snprintf(e, sizeof(e), "%s/vc", tmp);
	ck_assert_msg(vcheckout(opts, base, e, err, sizeof(err)) == 0, "%s",
	    err);
	ck_assert_int_eq(sh("test -d %s/vc/src/sub && test -L %s/vc/src/rel",
	    tmp, tmp), 0);
	put("src/a.c", "int a = 6;\n");
	expect_one("src/a.c", 'M');
	put("src/sub/x", "x\n");
	expect_rejects(1 << 20, "src/sub: submodule (gitlink) changed", NULL);
	ck_assert_int_eq(sh("rm -rf %s/src/sub", tree), 0);
	expect_rejects(1 << 20, "src/sub: submodule (gitlink) changed", NULL);
}
END_TEST

static void
verify_open(const char *path, struct vbundle *vb, int *fd)
{
	ck_assert_int_ne(*fd = open(path, O_RDONLY), -1);
	ck_assert_msg(vbundle_open(*fd, vb, err, sizeof(err)) == 0, "%s",
	    err);
}

static void
recheck_run(const struct vbundle *vb, const char *log,
    struct recheck_result *rr)
{
	struct recheck_req	 req;

	memset(&req, 0, sizeof(req));
	req.gitdir = vb->gitdir;
	req.commit_hex = vb->commit;
	req.attempt_id = ID;
	req.baseline_hex = base;
	req.scope = scope;
	req.title = TITLE;
	req.manifest_digest = DIGEST;
	req.log = log;
	req.loglen = log ? strlen(log) : 0;
	ck_assert_msg(recheck(&req, rr, err, sizeof(err)) == 0, "%s", err);
}

START_TEST(test_verify_good)
{
	struct collect_result	 res;
	struct recheck_result	 rr;
	struct vbundle		 vb;
	struct stat		 st;
	char			 scratch[PATH_MAX], dest[PATH_MAX];
	char			 buf[256];
	int			 fd;

	good_collect(&res);
	verify_open(bundle, &vb, &fd);
	ck_assert_str_eq(vb.prereq, base);
	ck_assert_str_eq(vb.commit, res.commit_hex);
	ck_assert_str_eq(vb.attempt_id, ID);
	snprintf(scratch, sizeof(scratch), "%s/v.git", tmp);
	ck_assert_msg(vbundle_index(&vb, repo, scratch, base, err,
	    sizeof(err)) == 0, "%s", err);
	recheck_run(&vb, "build ok\n", &rr);
	ck_assert_msg(rr.accepted, "%s", join(rr.findings, rr.nfindings));
	ck_assert_str_eq(rr.tree_hex, res.tree_hex);
	recheck_result_free(&rr);
	snprintf(dest, sizeof(dest), "%s/check", tmp);
	ck_assert_msg(vcheckout(vb.gitdir, vb.commit, dest, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(out(buf, sizeof(buf), "cat %s/src/a.c %s/src/new.c "
	    "%s/README", dest, dest, dest), 0);
	ck_assert_str_eq(buf, "int a = 1;\nint n;\nreadme");
	snprintf(buf, sizeof(buf), "%s/.git", dest);
	ck_assert_int_eq(stat(buf, &st), -1);
	snprintf(buf, sizeof(buf), "%s/src/run.sh", dest);
	ck_assert_int_eq(stat(buf, &st), 0);
	ck_assert_int_eq(st.st_mode & 0100, 0100);
	/* The wrong baseline for this manifest is refused. */
	snprintf(scratch, sizeof(scratch), "%s/v2.git", tmp);
	ck_assert_int_eq(vbundle_index(&vb, repo, scratch, res.commit_hex,
	    err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "prerequisite") != NULL, "%s", err);
	close(fd);
	collect_result_free(&res);
}
END_TEST

/* Writes a bundle with this header and the pack of the good one. */
static void
rewrite_header(const char *path, const char *hdr)
{
	char	*data, *p;
	FILE	*fp;
	long	 len;

	ck_assert_ptr_nonnull(fp = fopen(bundle, "r"));
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	ck_assert_ptr_nonnull(data = malloc(len));
	ck_assert_int_eq(fread(data, 1, len, fp), len);
	fclose(fp);
	ck_assert_ptr_nonnull(p = memmem(data, len, "\n\nPACK", 6));
	p += 2;
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	fputs(hdr, fp);
	fwrite(p, 1, len - (p - data), fp);
	ck_assert_int_eq(fclose(fp), 0);
	free(data);
}

static void
expect_open_fails(const char *hdr, const char *why)
{
	struct vbundle	 vb;
	char		 path[PATH_MAX];
	int		 fd;

	snprintf(path, sizeof(path), "%s/bad.bundle", tmp);
	rewrite_header(path, hdr);
	ck_assert_int_ne(fd = open(path, O_RDONLY), -1);
	ck_assert_msg(vbundle_open(fd, &vb, err, sizeof(err)) == -1,
	    "accepted: %s", hdr);
	ck_assert_msg(strstr(err, why) != NULL, "%s", err);
	close(fd);
}

START_TEST(test_verify_bad_header)
{
	struct collect_result	 res;
	struct vbundle		 vb;
	char			 hdr[1024], path[PATH_MAX], *big, *comment;
	const char		*c;
	int			 fd;

	good_collect(&res);
	c = res.commit_hex;
	snprintf(hdr, sizeof(hdr), "# v2 git bundle\n-%s x\n%s "
	    "refs/heads/factory/" ID "\n%s refs/heads/factory/b\n\n", base, c,
	    c);
	expect_open_fails(hdr, "more than one ref");
	snprintf(hdr, sizeof(hdr), "# v2 git bundle\n-%s x\n-%s y\n%s "
	    "refs/heads/factory/" ID "\n\n", base, c, c);
	expect_open_fails(hdr, "more than one prerequisite");
	snprintf(hdr, sizeof(hdr), "# v2 git bundle\n%s "
	    "refs/heads/factory/" ID "\n\n", c);
	expect_open_fails(hdr, "prerequisite");
	snprintf(hdr, sizeof(hdr), "# v3 git bundle\n-%s x\n%s "
	    "refs/heads/factory/" ID "\n\n", base, c);
	expect_open_fails(hdr, "not a v2");
	snprintf(hdr, sizeof(hdr), "# v2 git bundle\n-%s x\n%s "
	    "refs/heads/main\n\n", base, c);
	expect_open_fails(hdr, "is not refs/heads/factory/");
	snprintf(hdr, sizeof(hdr), "# v2 git bundle\n-%s x\n%s "
	    "refs/heads/factory/../x\n\n", base, c);
	expect_open_fails(hdr, "is not refs/heads/factory/");
	/* A header past 64 KiB, in a long prerequisite comment. */
	ck_assert_ptr_nonnull(comment = malloc(70 * 1024));
	memset(comment, 'x', 70 * 1024);
	comment[70 * 1024 - 1] = '\0';
	ck_assert_int_ne(asprintf(&big, "# v2 git bundle\n-%s %s\n%s "
	    "refs/heads/factory/" ID "\n\n", base, comment, c), -1);
	expect_open_fails(big, "no end of header");
	free(big);
	free(comment);
	/* A wrong prerequisite parses, and is refused by the index. */
	snprintf(hdr, sizeof(hdr), "# v2 git bundle\n-%s x\n%s "
	    "refs/heads/factory/" ID "\n\n", c, c);
	snprintf(path, sizeof(path), "%s/pre.bundle", tmp);
	rewrite_header(path, hdr);
	verify_open(path, &vb, &fd);
	snprintf(path, sizeof(path), "%s/v.git", tmp);
	ck_assert_int_eq(vbundle_index(&vb, repo, path, base, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "prerequisite") != NULL, "%s", err);
	close(fd);
	collect_result_free(&res);
}
END_TEST

/* A bundle made by hand with git itself, outside the scope. */
START_TEST(test_verify_handmade)
{
	struct recheck_result	 rr;
	struct vbundle		 vb;
	char			 clone[PATH_MAX], path[PATH_MAX];
	int			 fd;

	snprintf(clone, sizeof(clone), "%s/clone", tmp);
	snprintf(path, sizeof(path), "%s/hand.bundle", tmp);
	ck_assert_int_eq(sh("git clone -q --no-local %s %s && cd %s && "
	    "git checkout -q -b factory/" ID " && echo evil > README && "
	    "git commit -qam '" TITLE "' -m 'Attempt-Id: " ID
	    "' && git bundle create -q %s factory/" ID " ^%s", repo, clone,
	    clone, path, base), 0);
	verify_open(path, &vb, &fd);
	snprintf(path, sizeof(path), "%s/v.git", tmp);
	ck_assert_msg(vbundle_index(&vb, repo, path, base, err,
	    sizeof(err)) == 0, "%s", err);
	recheck_run(&vb, NULL, &rr);
	ck_assert_int_eq(rr.accepted, 0);
	ck_assert_msg(has(rr.findings, rr.nfindings,
	    "README: outside the scope"), "%s",
	    join(rr.findings, rr.nfindings));
	ck_assert_msg(has(rr.findings, rr.nfindings,
	    "commit: trailers differ from the manifest"), "%s",
	    join(rr.findings, rr.nfindings));
	ck_assert_int_eq(rr.nfindings, 2);
	recheck_result_free(&rr);
	close(fd);
}
END_TEST

/* What git itself can put in a tree: a gitlink, a link out, ".Git". */
START_TEST(test_verify_structure)
{
	struct recheck_result	 rr;
	struct vbundle		 vb;
	char			 clone[PATH_MAX], path[PATH_MAX];
	int			 fd;

	snprintf(clone, sizeof(clone), "%s/clone", tmp);
	snprintf(path, sizeof(path), "%s/hand.bundle", tmp);
	ck_assert_int_eq(sh("git clone -q --no-local %s %s && cd %s && "
	    "git update-index --add --cacheinfo 160000,%s,src/sub && "
	    "ln -s ../../etc/passwd src/evil && git add src/evil && "
	    "printf '" TITLE "\\n\\nAttempt-Id: " ID "\\nManifest-Digest: "
	    DIGEST "\\n' > ../msg && git commit -q -F ../msg && "
	    "b=$(echo x | git hash-object -w --stdin) && "
	    "s=$( (git ls-tree HEAD:src; printf '100644 blob %%s\\t.Git\\n' "
	    "$b) | git mktree) && "
	    "r=$( (git ls-tree HEAD | grep -v 'src$'; "
	    "printf '040000 tree %%s\\tsrc\\n' $s) | git mktree) && "
	    "c=$(git commit-tree $r -p %s -F ../msg) && "
	    "git branch factory/" ID " $c && "
	    "git bundle create -q %s factory/" ID " ^%s", repo, clone, clone,
	    base, base, path, base), 0);
	verify_open(path, &vb, &fd);
	snprintf(path, sizeof(path), "%s/v.git", tmp);
	ck_assert_msg(vbundle_index(&vb, repo, path, base, err,
	    sizeof(err)) == 0, "%s", err);
	recheck_run(&vb, NULL, &rr);
	ck_assert_int_eq(rr.accepted, 0);
	ck_assert_msg(has(rr.findings, rr.nfindings, "src/sub: gitlink") &&
	    has(rr.findings, rr.nfindings,
	    "src/evil: symlink escapes the tree") &&
	    has(rr.findings, rr.nfindings,
	    "src/.Git: '.git' path component") &&
	    rr.nfindings == 3, "%s", join(rr.findings, rr.nfindings));
	recheck_result_free(&rr);
	close(fd);
}
END_TEST

START_TEST(test_verify_secrets)
{
	struct collect_result	 res;
	struct recheck_result	 rr;
	struct vbundle		 vb;
	char			 data[256], tok[64], path[PATH_MAX];
	int			 fd;

	/* Made at run time, so this file holds no token-looking string. */
	snprintf(tok, sizeof(tok), "gh%s_%s", "p",
	    "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789");
	snprintf(data, sizeof(data), "int a;\nconst char *t = \"%s\";\n", tok);
	put("src/a.c", data);
	snprintf(data, sizeof(data), "-----BEGIN %s-----\nMIIE\n", "RSA "
	    "PRIVATE KEY");
	put("src/key.pem", data);
	ck_assert_msg(do_collect(&res, 1 << 20) == 0, "%s", err);
	ck_assert_msg(res.nrejects == 0, "%s",
	    join(res.rejects, res.nrejects));
	verify_open(bundle, &vb, &fd);
	snprintf(path, sizeof(path), "%s/v.git", tmp);
	ck_assert_msg(vbundle_index(&vb, repo, path, base, err,
	    sizeof(err)) == 0, "%s", err);
	snprintf(data, sizeof(data), "ok\nkey %s%s\nslack %s-1234\n",
	    "AKIA", "ABCDEFGHIJKLMNOP", "xoxb");
	recheck_run(&vb, data, &rr);
	ck_assert_int_eq(rr.accepted, 0);
	ck_assert_msg(has(rr.findings, rr.nfindings,
	    "src/a.c: GitHub token on line 2") &&
	    has(rr.findings, rr.nfindings,
	    "src/key.pem: private key block on line 1") &&
	    has(rr.findings, rr.nfindings, "log:2: AWS access key id") &&
	    has(rr.findings, rr.nfindings, "log:3: Slack token") &&
	    rr.nfindings == 4, "%s", join(rr.findings, rr.nfindings));
	ck_assert_ptr_null(strstr(join(rr.findings, rr.nfindings), tok));
	recheck_result_free(&rr);
	close(fd);
	collect_result_free(&res);
}
END_TEST

/*
 * A submodule beside the change: the changed tree names the gitlink's
 * commit, which is no object of the repository (issue 24: libgit2's
 * indexer with verify refused it, "packfile is missing 1 objects").
 */
START_TEST(test_verify_gitlink)
{
	struct collect_result	 res;
	struct recheck_result	 rr;
	struct vbundle		 vb;
	char			 path[PATH_MAX];
	int			 fd;

	gitlink_baseline();
	put("src/a.c", "int a = 4;\n");
	ck_assert_msg(do_collect(&res, 1 << 20) == 0, "%s", err);
	ck_assert_msg(res.nrejects == 0, "%s",
	    join(res.rejects, res.nrejects));
	verify_open(bundle, &vb, &fd);
	snprintf(path, sizeof(path), "%s/v.git", tmp);
	ck_assert_msg(vbundle_index(&vb, repo, path, base, err,
	    sizeof(err)) == 0, "%s", err);
	recheck_run(&vb, NULL, &rr);
	ck_assert_msg(rr.accepted, "%s", join(rr.findings, rr.nfindings));
	ck_assert_str_eq(rr.tree_hex, res.tree_hex);
	recheck_result_free(&rr);
	close(fd);
	collect_result_free(&res);
}
END_TEST

/*
 * A bundle whose pack holds exactly the objects the shell script
 * prints (one id a line) after the commit, its first line.
 */
static void
handpack(const char *name, const char *script)
{
	char	 clone[PATH_MAX], path[PATH_MAX];

	snprintf(clone, sizeof(clone), "%s/clone", tmp);
	snprintf(path, sizeof(path), "%s/%s.bundle", tmp, name);
	ck_assert_int_eq(sh("test -d %s || git clone -q --no-local %s %s",
	    clone, repo, clone), 0);
	ck_assert_int_eq(sh("cd %s && printf '" TITLE "\\n\\nAttempt-Id: " ID
	    "\\nManifest-Digest: " DIGEST "\\n' > ../msg && (%s) > ../ids && "
	    "{ printf '# v2 git bundle\\n-%s x\\n%%s refs/heads/factory/" ID
	    "\\n\\n' $(head -1 ../ids); git pack-objects -q --stdout "
	    "< ../ids; } > %s", clone, script, base, path), 0);
}

/* Indexing the bundle handpack() made is refused, saying why. */
static void
expect_links_refused(const char *name, const char *why)
{
	struct vbundle	 vb;
	char		 path[PATH_MAX];
	int		 fd;

	snprintf(path, sizeof(path), "%s/%s.bundle", tmp, name);
	verify_open(path, &vb, &fd);
	snprintf(path, sizeof(path), "%s/%s.git", tmp, name);
	ck_assert_int_eq(vbundle_index(&vb, repo, path, base, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, why) != NULL, "%s: %s", name, err);
	close(fd);
}

/*
 * The verifier checks connectivity itself (libgit2's verify is off):
 * an object named but carried by neither the pack nor the repository,
 * by the commit's tree or by a stray tree; one named as a blob that is
 * a commit; a gitlink's missing commit is no object of ours (kept).
 */
START_TEST(test_verify_links)
{
	struct vbundle	 vb;
	char		 path[PATH_MAX];
	int		 fd;

	handpack("noblob", "b=$(echo lost | git hash-object -w --stdin) && "
	    "t=$( (git ls-tree HEAD | grep -v README; "
	    "printf '100644 blob %s\\tREADME\\n' $b) | git mktree) && "
	    "c=$(git commit-tree $t -p HEAD -F ../msg) && echo $c && echo $t");
	expect_links_refused("noblob", "missing from both the pack and "
	    "the repository");
	handpack("stray", "b=$(echo new | git hash-object -w --stdin) && "
	    "t=$( (git ls-tree HEAD | grep -v README; "
	    "printf '100644 blob %s\\tREADME\\n' $b) | git mktree) && "
	    "c=$(git commit-tree $t -p HEAD -F ../msg) && "
	    "m=$(echo lost | git hash-object -w --stdin) && "
	    "s=$(printf '100644 blob %s\\tx\\n' $m | git mktree) && "
	    "printf '%s\\n' $c $t $b $s");
	expect_links_refused("stray", "missing from both the pack and "
	    "the repository");
	/* mktree checks types: the tree's bytes by hand. */
	handpack("type", "t=$( { printf '100644 README\\0'; perl -e "
	    "'print pack(\"H*\", $ARGV[0])' $(git rev-parse HEAD); } | "
	    "git hash-object -t tree -w --stdin) && "
	    "c=$(git commit-tree $t -p HEAD -F ../msg) && echo $c && "
	    "echo $t");
	expect_links_refused("type", "as a blob; it is a commit");
	handpack("link", "t=$( (git ls-tree HEAD; printf '160000 commit "
	    "3333333333333333333333333333333333333333\\tmod\\n') | git mktree) "
	    "&& c=$(git commit-tree $t -p HEAD -F ../msg) && echo $c && "
	    "echo $t");
	snprintf(path, sizeof(path), "%s/link.bundle", tmp);
	verify_open(path, &vb, &fd);
	snprintf(path, sizeof(path), "%s/link.git", tmp);
	ck_assert_msg(vbundle_index(&vb, repo, path, base, err,
	    sizeof(err)) == 0, "%s", err);
	close(fd);
}
END_TEST

static double
since(const struct timespec *t0)
{
	struct timespec	 t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((t1.tv_sec - t0->tv_sec) * 1e3 +
	    (t1.tv_nsec - t0->tv_nsec) / 1e6);
}

/* Not a pass/fail bound: prints what provision costs at this size. */
START_TEST(test_provision_2000)
{
	struct collect_result	 res;
	struct timespec		 t0;
	char			 big[128], a2[128], buf[64];
	double			 ms;

	snprintf(big, sizeof(big), "%s/big", tmp);
	snprintf(a2, sizeof(a2), "%s/a2", tmp);
	ck_assert_int_eq(sh("git init -q -b main %s && cd %s && "
	    "for d in $(seq 1 40); do mkdir -p src/d$d; "
	    "for f in $(seq 1 50); do echo \"file $d $f\" > src/d$d/f$f.c; "
	    "done; done && git add -A && git commit -q -m big", big, big), 0);
	ck_assert_msg(resolve(big, "main", base, err, sizeof(err)) == 0, "%s",
	    err);
	umount2(tree, MNT_DETACH);
	overlay = 0;
	strlcpy(repo, big, sizeof(repo));
	strlcpy(adir, a2, sizeof(adir));
	snprintf(tree, sizeof(tree), "%s/tree", adir);
	snprintf(bundle, sizeof(bundle), "%s/bundle", adir);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	make_overlay();
	ms = since(&t0);
	fprintf(stderr, "pristine checkout and overlay of 2000 files: "
	    "%.1f ms\n", ms);
	ck_assert_int_eq(out(buf, sizeof(buf), "git -C %s/tree status "
	    "--porcelain | wc -l", a2), 0);
	ck_assert_str_eq(buf, "0");
	put("src/d7/f7.c", "changed\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_msg(do_collect(&res, 0) == 0, "%s", err);
	ms = since(&t0);
	fprintf(stderr, "collect of 2000 files: %.1f ms\n", ms);
	ck_assert_msg(res.nrejects == 0, "%s",
	    join(res.rejects, res.nrejects));
	ck_assert_int_eq(res.nchanges, 1);
	collect_result_free(&res);
}
END_TEST

/*
 * factoryctl diff on a result of many files: the patch is cut at the
 * cap, and libgit2's list holds no more files than the cap could show
 * (the review of stop 18: 300k empty files took 68 MB, 1M 175 MB).
 */
static void
diff_repo(const char *d, int n)
{
	ck_assert_int_eq(sh("git init -q --bare %s/collect.git && "
	    "python3 -c 'import sys\n"
	    "n = int(sys.argv[1]); w = sys.stdout.write\n"
	    "w(\"blob\\nmark :1\\ndata 0\\n\")\n"
	    "w(\"commit refs/heads/base\\nmark :2\\ncommitter a <a@b> 0 "
	    "+0000\\ndata 1\\nb\\nM 100644 :1 README\\n\\n\")\n"
	    "w(\"commit refs/heads/res\\ncommitter a <a@b> 0 +0000\\n"
	    "data 1\\nr\\nfrom :2\\n\")\n"
	    "[w(\"M 100644 :1 d%%03d/f%%07d\\n\" %% (i %% 1000, i)) "
	    "for i in range(n)]\n' %d | "
	    "git --git-dir=%s/collect.git fast-import --quiet", d, n, d), 0);
}

START_TEST(test_diff_files)
{
	char		 d[] = "/tmp/test_git_diff.XXXXXX", b[GITW_HEXSZ + 1];
	char		 r[GITW_HEXSZ + 1], *patch;
	struct rusage	 ru0, ru1;
	size_t		 len, n = 0;
	const char	*p;
	int		 trunc;

	ck_assert_ptr_nonnull(mkdtemp(d));
	/* A few files and room: the whole patch, not cut. */
	diff_repo(d, 3);
	ck_assert_int_eq(out(b, sizeof(b), "git --git-dir=%s/collect.git "
	    "rev-parse base", d), 0);
	ck_assert_int_eq(out(r, sizeof(r), "git --git-dir=%s/collect.git "
	    "rev-parse res", d), 0);
	ck_assert_msg(diff_result(d, b, r, 10240, &patch, &len, &trunc, err,
	    sizeof(err)) == 0, "%s", err);
	for (p = patch; (p = strstr(p, "diff --git ")) != NULL; p++)
		n++;
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(trunc, 0);
	free(patch);
	ck_assert_int_eq(sh("rm -rf %s/collect.git", d), 0);
	/* 300k files: cut at the cap, the first files shown, memory flat. */
	diff_repo(d, 300000);
	ck_assert_int_eq(out(b, sizeof(b), "git --git-dir=%s/collect.git "
	    "rev-parse base", d), 0);
	ck_assert_int_eq(out(r, sizeof(r), "git --git-dir=%s/collect.git "
	    "rev-parse res", d), 0);
	getrusage(RUSAGE_SELF, &ru0);
	ck_assert_msg(diff_result(d, b, r, 10240, &patch, &len, &trunc, err,
	    sizeof(err)) == 0, "%s", err);
	getrusage(RUSAGE_SELF, &ru1);
	ck_assert_int_eq(len, 10240);
	ck_assert_int_eq(trunc, 1);
	ck_assert(strncmp(patch, "diff --git a/d000/f0000000 ", 27) == 0);
	free(patch);
	fprintf(stderr, "diff of 300000 files: maxrss %ld -> %ld KiB\n",
	    ru0.ru_maxrss, ru1.ru_maxrss);
#ifndef __SANITIZE_ADDRESS__
	/* The trees themselves are 1 MB; the list of 300k was 60 MB. */
	ck_assert_msg(ru1.ru_maxrss - ru0.ru_maxrss < 32 * 1024,
	    "diff of 300000 files grew by %ld KiB",
	    ru1.ru_maxrss - ru0.ru_maxrss);
#endif
	ck_assert_int_eq(sh("rm -rf %s", d), 0);
}
END_TEST

static Suite *
git_suite(void)
{
	Suite	*s = suite_create("git");
	TCase	*w = tcase_create("worker"), *v = tcase_create("verifier");
	TCase	*o = tcase_create("overlay");

	tcase_add_checked_fixture(w, setup_overlay, teardown_overlay);
	tcase_add_checked_fixture(v, setup_overlay, teardown_overlay);
	tcase_set_timeout(w, 120);
	tcase_set_timeout(v, 120);
	tcase_add_test(w, test_resolve);
	tcase_add_test(w, test_provision);
	tcase_add_test(w, test_collect_edit);
	tcase_add_test(w, test_collect_scope);
	tcase_add_test(w, test_collect_delete_mode);
	tcase_add_test(w, test_collect_dotgit);
	tcase_add_test(w, test_collect_gitconfig);
	tcase_add_test(w, test_collect_hook);
	tcase_add_test(w, test_collect_symlink_escape);
	tcase_add_test(w, test_collect_symlink_inside);
	tcase_add_test(w, test_collect_hardlink_fifo);
	tcase_add_test(w, test_collect_nochange);
	tcase_add_test(w, test_collect_limit);
	tcase_add_test(w, test_collect_agent_commits);
	tcase_add_test(w, test_collect_gitlink_kept);
	tcase_add_test(w, test_collect_gitlink_touched);
	tcase_add_test(w, test_provision_2000);
	tcase_add_test(w, test_diff_files);
	tcase_add_test(v, test_verify_good);
	tcase_add_test(v, test_verify_bad_header);
	tcase_add_test(v, test_verify_handmade);
	tcase_add_test(v, test_verify_structure);
	tcase_add_test(v, test_verify_secrets);
	tcase_add_test(v, test_verify_gitlink);
	tcase_add_test(v, test_verify_links);
	tcase_add_checked_fixture(o, setup_overlay, teardown_overlay);
	tcase_set_timeout(o, 120);
	tcase_add_test(o, test_overlay_provision);
	tcase_add_test(o, test_overlay_edit);
	tcase_add_test(o, test_overlay_delete_chmod);
	tcase_add_test(o, test_overlay_rename_replace);
	tcase_add_test(o, test_overlay_opaque);
	tcase_add_test(o, test_overlay_cost_follows_change);
	tcase_add_test(o, test_overlay_typechange);
	tcase_add_test(o, test_overlay_rules);
	tcase_add_test(o, test_overlay_gitlink);
	tcase_add_test(o, test_overlay_vapply);
	suite_add_tcase(s, w);
	suite_add_tcase(s, o);
	suite_add_tcase(s, v);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	char	 cmd[64];
	int	 failed;

	strlcpy(root, "/tmp/test_git.XXXXXX", sizeof(root));
	if (mkdtemp(root) == NULL) {
		perror(root);
		return (EXIT_FAILURE);
	}
	sr = srunner_create(git_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	/* Not sh(): check's assertions work inside tests only. */
	snprintf(cmd, sizeof(cmd), "/bin/rm -rf %s", root);
	if (system(cmd) != 0)
		failed++;
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
