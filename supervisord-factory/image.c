/*
 * The image store, as the rest of the parent sees it: a reference
 * resolved to a digest, a digest to its rootfs.  The layout is in
 * image.h.  Everything here is under the state directory, which only
 * root writes, so what is read is ours; names are still checked before
 * they become paths.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "factoryd.h"
#include "image.h"

#define IMAGE_PREFIX	"sha256:"

int
image_name_valid(const char *name)
{
	size_t	 i, len;

	len = strlen(name);
	if (len == 0 || len > IMAGE_NAME_MAX || name[0] == '.' ||
	    name[0] == '-')
		return (0);
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '.' &&
		    name[i] != '_' && name[i] != '-')
			return (0);
	return (1);
}

static int
hex_valid(const char *s)
{
	size_t	 i;

	for (i = 0; i < IMAGE_HEXLEN; i++)
		if (!isdigit((unsigned char)s[i]) &&
		    (s[i] < 'a' || s[i] > 'f'))
			return (0);
	return (s[i] == '\0');
}

int
image_rootfs(const char *hex, char *buf, size_t len)
{
	struct stat	 sb;
	int		 n;

	if (!hex_valid(hex))
		return (-1);
	n = snprintf(buf, len, "%s/images/sha256/%s/rootfs",
	    env->conf->statedir, hex);
	if (n < 0 || (size_t)n >= len)
		return (-1);
	if (lstat(buf, &sb) == -1 || !S_ISDIR(sb.st_mode) || sb.st_uid != 0)
		return (-1);
	return (0);
}

/* NAME's digest, from images/names/NAME. */
static int
name_digest(const char *name, char hex[IMAGE_HEXLEN + 1], char *err,
    size_t errlen)
{
	char	 path[PATH_MAX], line[sizeof(IMAGE_PREFIX) + IMAGE_HEXLEN + 2];
	ssize_t	 n;
	int	 fd;

	if (snprintf(path, sizeof(path), "%s/images/names/%s",
	    env->conf->statedir, name) >= (int)sizeof(path)) {
		snprintf(err, errlen, "image %s: name too long", name);
		return (-1);
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "image %s: %s", name, errno == ENOENT ?
		    "no such image" : strerror(errno));
		return (-1);
	}
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	if (strncmp(line, IMAGE_PREFIX, strlen(IMAGE_PREFIX)) != 0 ||
	    !hex_valid(line + strlen(IMAGE_PREFIX))) {
		snprintf(err, errlen, "image %s: %s is not a digest", name,
		    path);
		return (-1);
	}
	memcpy(hex, line + strlen(IMAGE_PREFIX), IMAGE_HEXLEN + 1);
	return (0);
}

int
image_resolve(const char *ref, char hex[IMAGE_HEXLEN + 1], int *pinned,
    char *err, size_t errlen)
{
	char		 name[IMAGE_NAME_MAX + 1], path[PATH_MAX];
	const char	*at, *digest = NULL;
	size_t		 len;

	if (strncmp(ref, IMAGE_PREFIX, strlen(IMAGE_PREFIX)) == 0) {
		digest = ref + strlen(IMAGE_PREFIX);
		name[0] = '\0';
	} else {
		at = strchr(ref, '@');
		len = at != NULL ? (size_t)(at - ref) : strlen(ref);
		if (len > IMAGE_NAME_MAX) {
			snprintf(err, errlen, "image name too long");
			return (-1);
		}
		memcpy(name, ref, len);
		name[len] = '\0';
		if (!image_name_valid(name)) {
			snprintf(err, errlen, "image %.*s: not a valid name",
			    (int)len, ref);
			return (-1);
		}
		if (at != NULL) {
			if (strncmp(at + 1, IMAGE_PREFIX,
			    strlen(IMAGE_PREFIX)) != 0) {
				snprintf(err, errlen, "image %s: the digest "
				    "must be sha256:HEX", name);
				return (-1);
			}
			digest = at + 1 + strlen(IMAGE_PREFIX);
		}
	}
	if (digest != NULL) {
		if (!hex_valid(digest)) {
			snprintf(err, errlen, "image %s: the digest is not 64 "
			    "lower-case hex digits", ref);
			return (-1);
		}
		memcpy(hex, digest, IMAGE_HEXLEN + 1);
	} else if (name_digest(name, hex, err, errlen) == -1)
		return (-1);
	*pinned = digest != NULL;
	if (image_rootfs(hex, path, sizeof(path)) == -1) {
		snprintf(err, errlen, "image sha256:%s: not in the store", hex);
		return (-1);
	}
	return (0);
}
