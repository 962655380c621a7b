/*
 * Logging: syslog(3) in the background, stderr with -d.
 */
#ifndef FACTORY_LOG_H
#define FACTORY_LOG_H

#include <stdarg.h>
#include <syslog.h>

#ifndef __dead
#define __dead		__attribute__((__noreturn__))
#endif

void	log_init(int, int);		/* debug (stderr), syslog facility */
void	log_procinit(const char *);	/* name prefixed to each line */
void	log_setverbose(int);
/* Called with each warning and error as logged (escaped), or NULL. */
void	log_sethook(void (*)(int, const char *));
int	log_getverbose(void);
void	log_warn(const char *, ...)
	    __attribute__((__format__ (printf, 1, 2)));
void	log_warnx(const char *, ...)
	    __attribute__((__format__ (printf, 1, 2)));
void	log_info(const char *, ...)
	    __attribute__((__format__ (printf, 1, 2)));
void	log_debug(const char *, ...)
	    __attribute__((__format__ (printf, 1, 2)));
void	vlog(int, const char *, va_list)
	    __attribute__((__format__ (printf, 2, 0)));
__dead void fatal(const char *, ...)
	    __attribute__((__format__ (printf, 1, 2)));
__dead void fatalx(const char *, ...)
	    __attribute__((__format__ (printf, 1, 2)));

#endif /* FACTORY_LOG_H */
