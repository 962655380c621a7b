/*
 * factory-fswalk: one walk of a tree that an agent, a setup or an
 * image wrote, for root, in a process that holds none of root's memory
 * and keeps only the power the walk needs.
 *
 * Root execs it once per job, as uid 0 (the store's files are given to
 * 0:0 as they are passed, and the trees it reads are any user's), with
 * the job on a pipe on fd 3 (fswalkmsg.h), a pipe for the answer on
 * fd 4 and the job's descriptors from fd 5: the tree, an entry list.
 * It reads the job to its end, confines itself to the job before it
 * reads one byte of the tree (capabilities, Landlock, seccomp through
 * pledge(2)), does it, writes one answer and exits.  Root believes the
 * answer only in form (fswalk_answer_parse) and kills it at a
 * deadline of its own.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/capability.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "factory.h"
#include "fswalk.h"
#include "imgtree.h"
#include "log.h"
#include "pledge.h"

static __dead void	usage(void);
static void		fswalk_fds(void);
static size_t		fswalk_read_job(char *, size_t);
static void		fswalk_answer(const struct fswalk_answer *);
static void		fswalk_image(struct mread *, struct fswalk_answer *);

static __dead void
usage(void)
{
	fatalx("usage: factory-fswalk [-dv]");
}

int
main(int argc, char *argv[])
{
	struct fswalk_answer	 a;
	struct mread		 m;
	char			 job[FSWALK_JOB_MAX], err[256];
	size_t			 len;
	uint32_t		 kind;
	int			 ch, debug = 0, verbose = 0;

	log_init(1, LOG_DAEMON);
	while ((ch = getopt(argc, argv, "dv")) != -1) {
		switch (ch) {
		case 'd':
			debug = 1;
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	log_init(debug, LOG_DAEMON);
	log_setverbose(verbose);
	log_procinit("fswalk");
	fswalk_fds();

	len = fswalk_read_job(job, sizeof(job));
	if (fswalk_job_kind(&m, job, len, &kind, err, sizeof(err)) == -1)
		fatalx("%s", err);
	memset(&a, 0, sizeof(a));
	a.kind = kind;
	switch (kind) {
	case FSWALK_IMAGE:
		fswalk_image(&m, &a);
		break;
	case FSWALK_PRISTINE:
		fswalk_pristine(&m, &a);
		break;
	case FSWALK_SETUP_STORE:
		fswalk_setup_store(&m, &a);
		break;
	case FSWALK_SETUP_SEAL:
		fswalk_setup_seal(&m, &a);
		break;
	case FSWALK_SETUP_INPUTS:
		fswalk_setup_inputs(&m, &a);
		break;
	case FSWALK_SETUP_REMOVE:
		fswalk_setup_remove(&m, &a);
		break;
	default:
		fatalx("job kind %u", kind);
	}
	if (!a.failed)
		a.err[0] = '\0';
	else if (a.err[0] == '\0')
		strlcpy(a.err, "failed, no reason given", sizeof(a.err));
	fswalk_answer(&a);
	return (0);
}

/*
 * Started by root and no one else: uid 0, the job and the answer on
 * pipes, dying with the parent (root set that before the exec).
 */
static void
fswalk_fds(void)
{
	struct stat	 sb;
	int		 fd;

	if (getuid() != 0 || geteuid() != 0)
		fatalx("not started by factoryd: not uid 0");
	for (fd = FSWALK_FD_JOB; fd <= FSWALK_FD_ANSWER; fd++)
		if (fstat(fd, &sb) == -1 || !S_ISFIFO(sb.st_mode))
			fatalx("not started by factoryd: no pipe on fd %d",
			    fd);
	closefrom(FSWALK_FD_ARG + FSWALK_NARGS);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() == 1)
		fatalx("not started by factoryd: no parent");
}

/* The whole job, up to the end of its pipe, at most size bytes. */
static size_t
fswalk_read_job(char *buf, size_t size)
{
	size_t	 len = 0;
	ssize_t	 n;
	char	 extra;

	for (;;) {
		if (len == size)
			n = read(FSWALK_FD_JOB, &extra, 1);
		else
			n = read(FSWALK_FD_JOB, buf + len, size - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			fatal("job");
		if (n == 0)
			break;
		if (len == size)
			fatalx("job: more than %zu bytes", size);
		len += n;
	}
	close(FSWALK_FD_JOB);
	return (len);
}

/* The one answer: whole or not at all (below PIPE_BUF). */
static void
fswalk_answer(const struct fswalk_answer *a)
{
	struct ibuf	*b;

	if ((b = fswalk_answer_compose(a)) == NULL)
		fatal("answer");
	if (write(FSWALK_FD_ANSWER, ibuf_data(b), ibuf_size(b)) !=
	    (ssize_t)ibuf_size(b))
		fatal("answer");
	ibuf_free(b);
}

/*
 * The image walk's confinement: of root's capabilities only
 * CAP_DAC_READ_SEARCH (the importer's files, of any mode, and the
 * store's) and, for an import, CAP_CHOWN (each entry given to 0:0);
 * its uid stays 0.  Landlock: the tree (through /proc, so no path is
 * named again), read-only, nothing else; then no_new_privs and
 * pledge(2)'s seccomp filter: no socket, no exec.
 */
static int
fswalk_image_confine(int chown)
{
	char	 tree[64];
	int	 failed;

	if (caps_keep(1U << CAP_DAC_READ_SEARCH |
	    (chown ? 1U << CAP_CHOWN : 0), &failed) == -1)
		return (-1);
	snprintf(tree, sizeof(tree), "/proc/self/fd/%d", FSWALK_FD_ARG);
	/* rpath: the tree; chown: its entries, given to root. */
	if (unveil(tree, "r") == -1 ||
	    pledge(chown ? "stdio rpath chown" : "stdio rpath", NULL) == -1)
		return (-1);
	return (0);
}

/*
 * Test builds, regress/imgsafe: a walk that tries what it may not, and
 * says so in the log, or one that holds until it is killed.
 */
static void
fswalk_image_faults(void)
{
	int	 fd;

	if (faultpoint("image:walk-escape")) {
		fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
		log_warnx("image walk escape: open /etc/passwd: %s",
		    fd == -1 ? strerror(errno) : "opened");
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		log_warnx("image walk escape: socket: %s",
		    fd == -1 ? strerror(errno) : "made");
	}
	while (faultpoint("image:walk-hold"))
		(void)poll(NULL, 0, -1);
	/* regress/image: a walk slow enough to be seen. */
	if (faultpoint("image:slow-walk"))
		(void)poll(NULL, 0, 3000);
}

/* The tree on fd 5, its entry list written to or read from fd 6. */
static void
fswalk_image(struct mread *m, struct fswalk_answer *a)
{
	struct fswalk_image_job	 j;
	FILE			*out = NULL, *canon = NULL;
	int			 list = FSWALK_FD_ARG + 1;

	if (fswalk_image_job_parse(m, &j) == -1)
		fatalx("%s", m->err);
	setproctitle("image walk");
	if (!j.out && !j.canon)
		list = -1;
	closefrom(list == -1 ? FSWALK_FD_ARG + 1 : list + 1);
	if ((j.out && (out = fdopen(list, "w")) == NULL) ||
	    (j.canon && (canon = fdopen(list, "r")) == NULL))
		fatal("entry list on fd %d", list);
	a->failed = 1;
	if (fswalk_image_confine(j.chown) == -1) {
		snprintf(a->err, sizeof(a->err), "walk: confinement: %s",
		    strerror(errno));
		return;
	}
	fswalk_image_faults();
	if (imgwalk_bounded(FSWALK_FD_ARG, j.owner, j.chown, out, canon,
	    j.bounded ? &j.lim : NULL, &a->u.image, a->err,
	    sizeof(a->err)) == -1)
		return;
	if (out != NULL && fflush(out) == EOF) {
		snprintf(a->err, sizeof(a->err), "entry list: %s",
		    strerror(errno));
		return;
	}
	a->failed = 0;
}
