/*
 * A hostile worker, installed in a test libexec as factory-worker.  It
 * speaks the worker's side of the protocol just well enough for an
 * attempt to reach COLLECT (a baseline given in its conf file, an
 * empty tree, heartbeats), then puts something other than a bundle
 * where the parent will open it and reports a result.
 *
 * "factory-worker.conf" beside the binary, read again at each COLLECT:
 *	oid HEX		the baseline every RESOLVE answers
 *	mode MODE	fifo, symlink, dir, socket, link (a hard link) or
 *			good (a regular file of its own)
 *	target PATH	what symlink and link point at
 *	file REL SRC	a file of the baseline's tree, copied from SRC
 *			into a pristine checkout the parent asks for (the
 *			verifier compares it with the tree: it must be the
 *			baseline's for the attempt to reach COLLECT)
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <err.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"
#include "imsg.h"
#include "imsgev.h"
#include "msg.h"

#define BW_FILES	8

struct bw_conf {
	char	 oid[41];
	char	 mode[16];
	char	 target[PATH_MAX];
	char	 rel[BW_FILES][PATH_MAX];
	char	 src[BW_FILES][PATH_MAX];
	int	 nfiles;
};

static char		 conf_path[PATH_MAX];
static struct imsgbuf	 ib;

static void
bw_read_conf(struct bw_conf *c)
{
	FILE	*f;
	char	 line[PATH_MAX + 16], *v;

	memset(c, 0, sizeof(*c));
	if ((f = fopen(conf_path, "r")) == NULL)
		err(1, "%s", conf_path);
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((v = strchr(line, ' ')) == NULL)
			continue;
		*v++ = '\0';
		if (strcmp(line, "oid") == 0)
			strlcpy(c->oid, v, sizeof(c->oid));
		else if (strcmp(line, "mode") == 0)
			strlcpy(c->mode, v, sizeof(c->mode));
		else if (strcmp(line, "target") == 0)
			strlcpy(c->target, v, sizeof(c->target));
		else if (strcmp(line, "file") == 0 && c->nfiles < BW_FILES &&
		    strchr(v, ' ') != NULL) {
			*strchr(v, ' ') = '\0';
			strlcpy(c->rel[c->nfiles], v, sizeof(c->rel[0]));
			strlcpy(c->src[c->nfiles], v + strlen(v) + 1,
			    sizeof(c->src[0]));
			c->nfiles++;
		}
	}
	fclose(f);
}

static void
bw_send(uint32_t type, enum msg_kind k, const void *m)
{
	char	*s, e[MSG_ERRLEN];
	size_t	 len;

	if ((s = msg_encode(k, m, &len, e, sizeof(e))) == NULL)
		errx(1, "%s", e);
	if (imsg_compose(&ib, type, 0, 0, -1, s, len) == -1)
		err(1, "imsg_compose");
	free(s);
}

/* Whatever the mode says, where the bundle should be. */
static void
bw_plant(const struct bw_conf *c, const char *path)
{
	struct sockaddr_un	 sun;
	int			 s, fd;

	unlink(path);
	if (strcmp(c->mode, "fifo") == 0) {
		if (mkfifo(path, 0644) == -1)
			err(1, "mkfifo %s", path);
	} else if (strcmp(c->mode, "symlink") == 0) {
		if (symlink(c->target, path) == -1)
			err(1, "symlink %s", path);
	} else if (strcmp(c->mode, "link") == 0) {
		/*
		 * The attempt directory is a file system of its own (its
		 * disk): a link to a file outside cannot be made at all.
		 * Then the bundle is simply missing.
		 */
		if (link(c->target, path) == -1) {
			if (errno != EXDEV)
				err(1, "link %s", path);
			warn("bw: link %s", path);
		}
	} else if (strcmp(c->mode, "dir") == 0) {
		if (mkdir(path, 0755) == -1)
			err(1, "mkdir %s", path);
	} else if (strcmp(c->mode, "socket") == 0) {
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		strlcpy(sun.sun_path, path, sizeof(sun.sun_path));
		if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
		    bind(s, (struct sockaddr *)&sun, sizeof(sun)) == -1)
			err(1, "bind %s", path);
		close(s);
	} else if (strcmp(c->mode, "good") == 0) {
		if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644)) == -1)
			err(1, "%s", path);
		close(fd);
	} else
		errx(1, "unknown mode %s", c->mode);
}

/* The baseline's files into the pristine checkout dir (one level deep). */
static void
bw_pristine(const struct bw_conf *c, const char *dir)
{
	char	 path[PATH_MAX], buf[4096], *slash;
	ssize_t	 n;
	int	 i, in, out;

	for (i = 0; i < c->nfiles; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, c->rel[i]);
		if ((slash = strrchr(path, '/')) != NULL &&
		    slash > path + strlen(dir)) {
			*slash = '\0';
			(void)mkdir(path, 0755);
			*slash = '/';
		}
		if ((in = open(c->src[i], O_RDONLY)) == -1)
			err(1, "%s", c->src[i]);
		if ((out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644)) == -1)
			err(1, "%s", path);
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, n) != n)
				err(1, "%s", path);
		close(in);
		close(out);
	}
}

static void
bw_dispatch(struct imsg *imsg)
{
	struct bw_conf		 c;
	struct msg_resolve	 rs;
	struct msg_resolved	 rd;
	struct msg_provision	 p;
	struct msg_ready	 r;
	struct msg_collect	 co;
	struct msg_result	 res;
	char			 tree[PATH_MAX], e[MSG_ERRLEN];
	int			 fd;

	bw_read_conf(&c);
	switch (imsg_get_type(imsg)) {
	case IMSG_RESOLVE:
		if (msg_get(imsg, MSG_RESOLVE, &rs, e, sizeof(e)) == -1)
			errx(1, "%s", e);
		memset(&rd, 0, sizeof(rd));
		rd.req = rs.req;
		strlcpy(rd.oid, c.oid, sizeof(rd.oid));
		bw_send(IMSG_RESOLVE, MSG_RESOLVED, &rd);
		msg_free(MSG_RESOLVE, &rs);
		break;
	case IMSG_PROVISION:
		if (msg_get(imsg, MSG_PROVISION, &p, e, sizeof(e)) == -1)
			errx(1, "%s", e);
		if (p.pristine[0] != '\0')
			bw_pristine(&c, p.pristine);
		/* The tree's mount point and its upper layer, as provision. */
		snprintf(tree, sizeof(tree), "%s/tree", p.dir);
		if (mkdir(tree, 0755) == -1)
			err(1, "mkdir %s", tree);
		snprintf(tree, sizeof(tree), "%s/upper", p.dir);
		if (mkdir(tree, 0755) == -1)
			err(1, "mkdir %s", tree);
		strlcat(tree, "/README.md", sizeof(tree));
		if ((fd = open(tree, O_WRONLY | O_CREAT, 0644)) != -1)
			close(fd);
		memset(&r, 0, sizeof(r));
		strlcpy(r.id, p.id, sizeof(r.id));
		r.epoch = p.epoch;
		bw_send(IMSG_READY, MSG_READY, &r);
		msg_free(MSG_PROVISION, &p);
		break;
	case IMSG_COLLECT:
		if (msg_get(imsg, MSG_COLLECT, &co, e, sizeof(e)) == -1)
			errx(1, "%s", e);
		bw_plant(&c, co.bundle);
		/* A well-formed RESULT (msg.h): only the bundle lies. */
		memset(&res, 0, sizeof(res));
		strlcpy(res.id, co.id, sizeof(res.id));
		res.epoch = co.epoch;
		strlcpy(res.commit, c.oid, sizeof(res.commit));
		strlcpy(res.tree, "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
		    sizeof(res.tree));
		strlcpy(res.bundle_sha256, "e3b0c44298fc1c149afbf4c8996fb924"
		    "27ae41e4649b934ca495991b7852b855",
		    sizeof(res.bundle_sha256));
		bw_send(IMSG_RESULT, MSG_RESULT, &res);
		msg_free(MSG_COLLECT, &co);
		break;
	default:
		break;
	}
}

int
main(int argc, char *argv[])
{
	struct pollfd	 pfd;
	struct imsg	 imsg;
	const char	*t = "promises: (hostile test worker)";
	ssize_t		 n;

	if ((n = readlink("/proc/self/exe", conf_path,
	    sizeof(conf_path) - 8)) == -1)
		err(1, "readlink");
	conf_path[n] = '\0';
	strlcat(conf_path, ".conf", sizeof(conf_path));
	if (imsgbuf_init(&ib, PROC_PARENT_FD) == -1 ||
	    imsgbuf_set_maxsize(&ib, FACTORY_MAXIMSG) == -1)
		err(1, "imsgbuf_init");
	if (imsg_compose(&ib, IMSG_HELLO, 0, 0, -1, t, strlen(t) + 1) == -1)
		err(1, "imsg_compose");
	pfd.fd = PROC_PARENT_FD;
	pfd.events = POLLIN;
	for (;;) {
		if (imsgbuf_flush(&ib) == -1)
			err(1, "imsgbuf_flush");
		/* A heartbeat whenever the parent is quiet for 200 ms. */
		if (poll(&pfd, 1, 200) == 0) {
			if (imsg_compose(&ib, IMSG_HEARTBEAT, 0, 0, -1, NULL,
			    0) == -1)
				err(1, "imsg_compose");
			continue;
		}
		if (imsgbuf_read(&ib) != 1)
			return (0);
		while ((n = imsgbuf_get(&ib, &imsg)) == 1) {
			bw_dispatch(&imsg);
			imsg_free(&imsg);
		}
		if (n == -1)
			errx(1, "malformed imsg from the parent");
	}
}
