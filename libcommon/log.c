/*
 * Logging for every process of the suite.  Every line goes out in the
 * display form of vis.h, whatever its arguments hold: a file name, a
 * ref or a reason from a child or an agent cannot move the cursor,
 * retitle the terminal or forge a line of its own (a newline in an
 * argument is shown as \x0a).  Text already in the suite's encoding
 * (esc.h) shows once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "vis.h"

#define LOG_MAXLINE	8192	/* composed, before its display form */

static int		 log_debug_stderr;
static int		 log_verbose;
static const char	*log_procname;

void
log_init(int debug, int facility)
{
	extern char	*__progname;

	log_debug_stderr = debug;
	if (!debug)
		openlog(__progname, LOG_PID | LOG_NDELAY, facility);
	tzset();
}

void
log_procinit(const char *name)
{
	if (name != NULL)
		log_procname = name;
}

void
log_setverbose(int v)
{
	log_verbose = v;
}

int
log_getverbose(void)
{
	return (log_verbose);
}

static void	(*log_hook)(int, const char *);

void
log_sethook(void (*hook)(int, const char *))
{
	log_hook = hook;
}

/* One line, to stderr with -d, else to syslog. */
static void
log_emit(int pri, const char *raw)
{
	char	 buf[LOG_MAXLINE * 2];

	(void)vis_buf(buf, sizeof(buf), raw, strlen(raw), VIS_NOSLASH);
	if (log_hook != NULL && pri <= LOG_WARNING)
		log_hook(pri, buf);
	if (log_debug_stderr) {
		if (log_procname != NULL)
			fprintf(stderr, "%s: %s\n", log_procname, buf);
		else
			fprintf(stderr, "%s\n", buf);
		fflush(stderr);
	} else
		syslog(pri, "%s", buf);
}

void
vlog(int pri, const char *fmt, va_list ap)
{
	char	 buf[LOG_MAXLINE];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_emit(pri, buf);
}

static void
log_errno(int pri, const char *fmt, va_list ap)
{
	char	 buf[LOG_MAXLINE];
	int	 saved = errno;

	if (fmt == NULL) {
		snprintf(buf, sizeof(buf), "%s", strerror(saved));
	} else {
		vsnprintf(buf, sizeof(buf), fmt, ap);
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ": %s",
		    strerror(saved));
	}
	log_emit(pri, buf);
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_errno(LOG_ERR, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list	 ap;

	if (log_verbose < 1)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

__dead void
fatal(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_errno(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}

__dead void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}
