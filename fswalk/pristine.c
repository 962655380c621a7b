/*
 * factory-fswalk's FSWALK_PRISTINE: the seal of a worker's cold
 * checkout, on fd 5, whose top root made its own already and found no
 * handle of the worker's on (supervisord-factory/pristine.c).  Here:
 * it is bounded (pristine_bound: no sparse file, no more bytes than
 * the cache may hold, looked at before any byte is copied), every
 * entry given to root (only what the worker made, no second names),
 * every file replaced by root's copy with git's modes (pristine_modes)
 * and its blocks counted.  Root sets the top's mode and ACL after.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <linux/capability.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esc.h"
#include "factory.h"
#include "fstree.h"
#include "fswalk.h"
#include "log.h"
#include "pledge.h"

/*
 * A regular file may have this many bytes more than its blocks hold
 * and still not be sparse: a small file kept in its inode (ext4's
 * inline data, btrfs's inline extents) has no block at all.
 */
#define PRISTINE_SLACK	4096

static uint64_t	 pristine_max;		/* pristine-cache, for reasons */

/*
 * A regular file of the worker's checkout replaced by root's copy of
 * it, under its own name, with mode: a new inode the worker never had.
 * Write permission is checked when a file is opened, so a descriptor
 * the worker opened for writing before the tree was made root's would
 * still write it, and one parked in a unix socket's queue (SCM_RIGHTS
 * to itself) is in no table pristine_unheld can look at.  Whatever the
 * copy reads is what the verifier then checks, and nobody but root can
 * write the copy.  Such a descriptor could also make the file longer
 * or sparse after pristine_bound looked: the copy refuses a sparse
 * file, takes no more than *left bytes of the whole tree, and copies
 * no more of a file than it was long when it began.
 */
static int
pristine_renew(int dfd, const char *name, uid_t from, mode_t mode,
    uint64_t *left)
{
	static unsigned int	 n;
	struct stat		 sb;
	char			 tmp[64];
	char			 buf[65536];
	ssize_t			 r, w, off;
	off_t			 remain;
	int			 src, dst, rc = -1;

	if ((src = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return (-1);
	/* The file opened, looked at again: swapped since, it is refused. */
	if (fstat(src, &sb) == -1) {
		close(src);
		return (-1);
	}
	if (!S_ISREG(sb.st_mode) || (sb.st_uid != from && sb.st_uid != 0) ||
	    sb.st_nlink != 1) {
		close(src);
		errno = EPERM;
		return (-1);
	}
	if (sb.st_size > sb.st_blocks * 512 + PRISTINE_SLACK ||
	    (uint64_t)sb.st_size > *left) {
		errno = EFBIG;
		close(src);
		return (-1);
	}
	*left -= sb.st_size;
	remain = sb.st_size;
	snprintf(tmp, sizeof(tmp), ".factory-seal.%d.%u", (int)getpid(), n++);
	(void)unlinkat(dfd, tmp, 0);
	if ((dst = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		close(src);
		return (-1);
	}
	while (remain > 0) {
		if ((r = read(src, buf, remain < (off_t)sizeof(buf) ? remain :
		    (off_t)sizeof(buf))) == -1) {
			if (errno == EINTR)
				continue;
			goto done;
		}
		if (r == 0)
			break;
		remain -= r;
		for (off = 0; off < r; off += w)
			if ((w = write(dst, buf + off, r - off)) == -1) {
				if (errno == EINTR) {
					w = 0;
					continue;
				}
				goto done;
			}
	}
	if (fchmod(dst, mode) == -1 || renameat(dfd, tmp, dfd, name) == -1)
		goto done;
	rc = 0;
 done:
	if (rc == -1)
		(void)unlinkat(dfd, tmp, 0);
	close(dst);
	close(src);
	return (rc);
}

/*
 * The first look at the worker's checkout below the directory dfd
 * (closed here), by stat alone, before root copies a byte of it: no
 * regular file may be sparse (a worker that wrote no byte of a file of
 * gigabytes would have root write them all, in factoryd's loop), none
 * may be .git (no tree holds it: an index a worker left, as older
 * versions had it do), and their bytes together may not exceed *left
 * (pristine-cache: a tree over it could never be kept), which is what
 * they leave of it.
 */
static int
pristine_bound(int dfd, int depth, uint64_t *left, char *why, size_t whylen)
{
	struct dirent	*de;
	struct stat	 sb;
	DIR		*d;
	int		 fd, rc = 0;

	if (depth > 256 || (d = fdopendir(dfd)) == NULL) {
		snprintf(why, whylen, "too deep, or %s", strerror(errno));
		close(dfd);
		return (-1);
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (strcmp(de->d_name, ".git") == 0) {
			snprintf(why, whylen, ".git: no tree holds one");
			rc = -1;
		} else if (fstatat(dirfd(d), de->d_name, &sb,
		    AT_SYMLINK_NOFOLLOW) == -1) {
			snprintf(why, whylen, "%.200s: %s", de->d_name,
			    strerror(errno));
			rc = -1;
		} else if (S_ISREG(sb.st_mode) && sb.st_size > sb.st_blocks *
		    512 + PRISTINE_SLACK) {
			snprintf(why, whylen, "%.200s: a sparse file (%lld "
			    "bytes, %lld on disk), nothing copied",
			    de->d_name, (long long)sb.st_size,
			    (long long)sb.st_blocks * 512);
			rc = -1;
		} else if (S_ISREG(sb.st_mode) && (uint64_t)sb.st_size >
		    *left) {
			snprintf(why, whylen, "%.200s: the tree is larger "
			    "than pristine-cache (%llu bytes), nothing copied",
			    de->d_name,
			    (unsigned long long)pristine_max);
			rc = -1;
		} else if (S_ISREG(sb.st_mode))
			*left -= sb.st_size;
		else if (S_ISDIR(sb.st_mode)) {
			if ((fd = openat(dirfd(d), de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
				snprintf(why, whylen, "%.200s: %s", de->d_name,
				    strerror(errno));
				rc = -1;
			} else
				rc = pristine_bound(fd, depth + 1, left, why,
				    whylen);
		}
	}
	closedir(d);
	return (rc);
}

/*
 * Test builds, regress/vtree: a directory of the worker's made in a
 * directory just after the seal gave that one to root, as a worker
 * holding a descriptor of it (one parked in an SCM_RIGHTS queue) could
 * while its mode still let it write there.  The walk may not chown to
 * anyone but root, so a child forked before the confinement makes it,
 * through /proc, when told.
 */
#ifdef FACTORY_TESTBUILD
static int	 pristine_planter[2] = { -1, -1 };	/* to it, from it */

static void
pristine_plant_fork(uid_t from)
{
	struct stat	 sb;
	char		 path[64];
	int		 go[2], done[2], fd, dfd;

	if (!faultpoint("pristine:plant-dir") || pipe(go) == -1 ||
	    pipe(done) == -1)
		return;
	switch (fork()) {
	case -1:
		log_warn("plant-dir: fork");
		return;
	case 0:
		close(go[1]);
		close(done[0]);
		if (read(go[0], &fd, sizeof(fd)) != sizeof(fd))
			_exit(0);
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getppid(),
		    fd);
		if ((dfd = open(path, O_RDONLY | O_DIRECTORY)) == -1 ||
		    mkdirat(dfd, "planted", 0777) == -1 ||
		    fchownat(dfd, "planted", from, from, 0) == -1) {
			log_warn("plant-dir");
			_exit(0);
		}
		log_warnx("plant-dir: a directory of uid %u planted",
		    (unsigned)from);
		if (write(done[1], "", 1) != 1)
			_exit(0);
		/* Whose it is once the seal ended (its pipe's end). */
		while (read(go[0], &fd, sizeof(fd)) > 0)
			;
		if (fstatat(dfd, "planted", &sb, AT_SYMLINK_NOFOLLOW) == 0)
			log_warnx("plant-dir: after the seal, uid %u's",
			    (unsigned)sb.st_uid);
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	pristine_planter[0] = go[1];
	pristine_planter[1] = done[0];
}

static void
pristine_plant(int dfd)
{
	char	 c;

	if (pristine_planter[1] == -1)
		return;
	/* Its pipe stays open to the end of the walk: it waits on it. */
	if (write(pristine_planter[0], &dfd, sizeof(dfd)) == sizeof(dfd) &&
	    read(pristine_planter[1], &c, 1) != 1)
		log_warnx("plant-dir: no word back");
	close(pristine_planter[1]);
	pristine_planter[1] = -1;
}
#else
#define pristine_plant_fork(from)	do { } while (0)
#define pristine_plant(dfd)		do { } while (0)
#endif

/*
 * The directory dfd (closed here) and everything below it given to
 * root with git's modes, in one pass: each directory is looked at
 * (made by from, or root's), given to root and made 0755 (the top's
 * mode is root's to set after) before its entries are read, so no
 * entry the worker made in it can escape the walk: after its chmod
 * the worker cannot write there, whatever descriptor of it it kept,
 * and whatever it made before is read and checked.  Files are each a
 * copy of root's (pristine_renew), 0755 or 0644 (executable or not,
 * as the worker wrote them: the verifier checks which), links given
 * to root as they are; anything else fails the tree.  Before, a first
 * pass gave the tree to root and a second set the modes, and a worker
 * could make a directory of its own between them.
 */
static int
pristine_modes(int dfd, int depth, uid_t from, uint64_t *left, char *why,
    size_t whylen)
{
	struct dirent	*de;
	struct stat	 sb;
	DIR		*d;
	int		 fd, rc = 0;

	if (depth > 256 || fstat(dfd, &sb) == -1 || fs_chown_ok(&sb, from,
	    0, "directory", why, whylen) == -1 || fchown(dfd, 0, 0) == -1 ||
	    (depth > 0 && fchmod(dfd, 0755) == -1)) {
		if (why[0] == '\0')
			snprintf(why, whylen, "too deep, or %s",
			    strerror(errno));
		close(dfd);
		return (-1);
	}
	if (depth == 1)
		pristine_plant(dfd);
	if ((d = fdopendir(dfd)) == NULL) {
		snprintf(why, whylen, "%s", strerror(errno));
		close(dfd);
		return (-1);
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) ==
		    -1) {
			snprintf(why, whylen, "%.200s: %s", de->d_name,
			    strerror(errno));
			rc = -1;
		} else if (S_ISLNK(sb.st_mode))
			rc = fs_chown_one(dirfd(d), de->d_name, from, 0, 0,
			    why, whylen);
		else if (S_ISREG(sb.st_mode)) {
			if (fs_chown_ok(&sb, from, 0, de->d_name, why,
			    whylen) == -1 || pristine_renew(dirfd(d),
			    de->d_name, from, sb.st_mode & 0111 ? 0755 : 0644,
			    left) == -1)
				rc = -1;
		} else if (S_ISDIR(sb.st_mode)) {
			/*
			 * By the descriptor, never the name: swapped for
			 * a link since the fstatat, the name would have
			 * fchmodat(2) follow it out of the tree.
			 */
			if ((fd = openat(dirfd(d), de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK |
			    O_CLOEXEC)) == -1)
				rc = -1;
			else
				rc = pristine_modes(fd, depth + 1, from, left,
				    why, whylen);
		} else {
			snprintf(why, whylen, "%.200s: a special file",
			    de->d_name);
			errno = EPERM;
			rc = -1;
		}
		if (rc == -1 && why[0] == '\0')
			snprintf(why, whylen, "%.200s: %s", de->d_name,
			    strerror(errno));
	}
	closedir(d);
	return (rc);
}

/*
 * The blocks below and at the directory dfd (closed here), each entry
 * once, as du(1) counts them: what the tree takes of the cache.
 */
static int
pristine_sum(int dfd, int depth, uint64_t *sum)
{
	struct dirent	*de;
	struct stat	 sb;
	DIR		*d;
	int		 fd, rc = 0;

	if (depth > FS_MAXDEPTH || fstat(dfd, &sb) == -1 ||
	    (d = fdopendir(dfd)) == NULL) {
		if (depth > FS_MAXDEPTH)
			errno = ELOOP;
		close(dfd);
		return (-1);
	}
	*sum += (uint64_t)sb.st_blocks * 512;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) ==
		    -1)
			rc = -1;
		else if (!S_ISDIR(sb.st_mode))
			*sum += (uint64_t)sb.st_blocks * 512;
		else if ((fd = openat(dirfd(d), de->d_name, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
			rc = -1;
		else
			rc = pristine_sum(fd, depth + 1, sum);
	}
	closedir(d);
	return (rc);
}

/*
 * Of root's capabilities: CAP_CHOWN (each entry given to root),
 * CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (the worker's files and
 * directories, whatever modes it left), CAP_FOWNER (their modes, while
 * still the worker's).  Landlock: the tree alone, read, written,
 * created in; pledge: no socket, no exec, chown only to root.
 */
static int
pristine_confine(void)
{
	char	 tree[64];
	int	 failed;

	if (caps_keep(1U << CAP_CHOWN | 1U << CAP_DAC_OVERRIDE |
	    1U << CAP_DAC_READ_SEARCH | 1U << CAP_FOWNER, &failed) == -1)
		return (-1);
	snprintf(tree, sizeof(tree), "/proc/self/fd/%d", FSWALK_FD_ARG);
	/* rpath wpath cpath: the copies; fattr: modes; chown: to root. */
	if (unveil(tree, "rwc") == -1 ||
	    pledge("stdio rpath wpath cpath fattr chown", NULL) == -1)
		return (-1);
	return (0);
}

void
fswalk_pristine(struct mread *m, struct fswalk_answer *a)
{
	struct fswalk_pristine_job	 j;
	uint64_t			 left, sum = 0;
	char				 why[PATH_MAX + 64];
	char				 msg[FSWALK_ERRMAX];

	if (fswalk_pristine_job_parse(m, &j) == -1)
		fatalx("%s", m->err);
	setproctitle("pristine seal");
	closefrom(FSWALK_FD_ARG + 1);
	pristine_max = j.max;
	a->failed = 1;
	why[0] = '\0';
	pristine_plant_fork(j.from);
	if (pristine_confine() == -1) {
		snprintf(msg, sizeof(msg), "%s: confinement: %s", j.path,
		    strerror(errno));
		fswalk_answer_why(a, msg);
		return;
	}
	left = j.max;
	/* Its own open of the top: a dup would share where readdir is. */
	if (pristine_bound(openat(FSWALK_FD_ARG, ".", O_RDONLY |
	    O_DIRECTORY | O_CLOEXEC), 0, &left, why, sizeof(why)) == -1) {
		fswalk_answer_why(a, why);
		return;
	}
	left = j.max - left;	/* what it holds */
	if (pristine_modes(openat(FSWALK_FD_ARG, ".", O_RDONLY |
	    O_DIRECTORY | O_NONBLOCK | O_CLOEXEC), 0, j.from, &left, why,
	    sizeof(why)) == -1) {
		snprintf(msg, sizeof(msg), "%s: %s", j.path, why[0] != '\0' ?
		    why : strerror(errno));
		fswalk_answer_why(a, msg);
		return;
	}
	if (pristine_sum(openat(FSWALK_FD_ARG, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC), 0, &sum) == -1) {
		snprintf(msg, sizeof(msg), "%s: %s", j.path, strerror(errno));
		fswalk_answer_why(a, msg);
		return;
	}
	a->u.bytes = sum;
	a->failed = 0;
}
