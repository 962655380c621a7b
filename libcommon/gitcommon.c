/*
 * libgit2, set up once per process: host configuration (system,
 * global, xdg, programdata) can never steer what we check out, commit,
 * conclude or push; the caller decides owner validation and the rest.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <git2.h>

#include "gitcommon.h"

int
gitc_err(char *err, size_t errlen, const char *fmt, ...)
{
	const git_error	*e;
	va_list		 ap;
	size_t		 n;

	if (errlen == 0)
		return (-1);
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	if ((e = git_error_last()) != NULL && e->message != NULL) {
		n = strlen(err);
		if (n < errlen)
			snprintf(err + n, errlen - n, ": %s", e->message);
		git_error_clear();
	}
	return (-1);
}

/*
 * ".git" in any case, and the names other systems fold into it
 * (trailing dots or spaces on NTFS, its short name GIT~1): a tree
 * holding one must not reach a checkout anywhere.  The len bytes at
 * name are one path component.
 */
int
gitc_is_dotgit(const char *name, size_t len)
{
	size_t	 i;

	if (len == 5 && strncasecmp(name, "git~1", 5) == 0)
		return (1);
	if (len < 4 || strncasecmp(name, ".git", 4) != 0)
		return (0);
	for (i = 4; i < len; i++)
		if (name[i] != '.' && name[i] != ' ')
			return (0);
	return (1);
}

int
gitc_init(int flags, char *err, size_t errlen)
{
	static const int levels[] = {
		GIT_CONFIG_LEVEL_PROGRAMDATA,
		GIT_CONFIG_LEVEL_SYSTEM,
		GIT_CONFIG_LEVEL_XDG,
		GIT_CONFIG_LEVEL_GLOBAL
	};
	size_t	 i;

	if (git_libgit2_init() < 0) {
		gitc_err(err, errlen, "git_libgit2_init");
		return (-1);
	}
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i],
		    "") < 0) {
			gitc_err(err, errlen, "config search path level %d",
			    levels[i]);
			return (-1);
		}
	if (git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION,
	    (flags & GITC_OWNER_CHECK) != 0) < 0 ||
	    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION,
	    (flags & GITC_STRICT) != 0) < 0 ||
	    ((flags & GITC_FSYNC) && git_libgit2_opts(
	    GIT_OPT_ENABLE_FSYNC_GITDIR, 1) < 0)) {
		gitc_err(err, errlen, "libgit2 options");
		return (-1);
	}
	return (0);
}
