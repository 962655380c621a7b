/*
 * The v2 bundle header, parsed strictly (bundlehdr.h).  The verifier
 * and the publisher each read the header of a bundle the worker wrote
 * from a tree an agent controlled; both use this one parser.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundlehdr.h"
#include "crypto.h"
#include "esc.h"
#include "util.h"

#define PREFIX_LEN	(sizeof(BUNDLE_REF_PREFIX) - 1)
#define SIG_LEN		(sizeof(BUNDLE_SIGNATURE) - 1)
#define MAGIC_LEN	(sizeof(BUNDLE_PACK_MAGIC) - 1)
#define SHOW_MAX	80	/* bytes of a bad ref shown in an error */

struct hdr_state {
	struct bundle_hdr	*out;
	int			 nprereq;
	int			 nref;
	int			 lineno;
};

static void	hdr_show(const char *, size_t, char *, size_t);
static int	hdr_prereq(struct hdr_state *, const char *, size_t, char *,
		    size_t);
static int	hdr_ref(struct hdr_state *, const char *, size_t, char *,
		    size_t);

/* A ref name from the bundle, fit for a log line (esc.h), cut short. */
static void
hdr_show(const char *s, size_t len, char *dst, size_t dstlen)
{
	if (esc_encode(s, len < SHOW_MAX ? len : SHOW_MAX, dst, dstlen) == -1)
		strlcpy(dst, "?", dstlen);
}

int
bundle_hex40(const char *s, size_t len)
{
	return (len >= BUNDLE_HEXSZ && hex_lower(s, BUNDLE_HEXSZ));
}

int
bundle_attempt_valid(const char *s, size_t len)
{
	size_t	 i;

	if (len == 0 || len > ATTEMPT_ID_MAX ||
	    !isalnum((unsigned char)s[0]))
		return (0);
	if (len >= 5 && memcmp(s + len - 5, ".lock", 5) == 0)
		return (0);
	for (i = 0; i < len; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_' && s[i] != '.')
			return (0);
		if (i > 0 && s[i] == '.' && s[i - 1] == '.')
			return (0);
	}
	return (1);
}

/* "-<oid>" or "-<oid> <comment>": the baseline, before the ref. */
static int
hdr_prereq(struct hdr_state *st, const char *line, size_t len, char *err,
    size_t errlen)
{
	if (!bundle_hex40(line + 1, len - 1) ||
	    (len > BUNDLE_HEXSZ + 1 && line[BUNDLE_HEXSZ + 1] != ' '))
		return (errfmt(err, errlen, "bundle: line %d: bad "
		    "prerequisite", st->lineno));
	if (st->nref > 0)
		return (errfmt(err, errlen, "bundle: line %d: prerequisite "
		    "after the ref", st->lineno));
	if (++st->nprereq > 1)
		return (errfmt(err, errlen, "bundle: line %d: more than one "
		    "prerequisite", st->lineno));
	memcpy(st->out->prereq, line + 1, BUNDLE_HEXSZ);
	st->out->prereq[BUNDLE_HEXSZ] = '\0';
	return (0);
}

/* "<oid> refs/heads/factory/<attempt id>" */
static int
hdr_ref(struct hdr_state *st, const char *line, size_t len, char *err,
    size_t errlen)
{
	const char	*ref = line + BUNDLE_HEXSZ + 1;
	size_t		 rlen;
	char		 show[SHOW_MAX * ESC_MAXEXPAND + 1];

	if (len < BUNDLE_HEXSZ + 2 || !bundle_hex40(line, len) ||
	    line[BUNDLE_HEXSZ] != ' ')
		return (errfmt(err, errlen, "bundle: line %d: bad ref line",
		    st->lineno));
	if (++st->nref > 1)
		return (errfmt(err, errlen, "bundle: line %d: more than one "
		    "ref", st->lineno));
	rlen = len - BUNDLE_HEXSZ - 1;
	if (rlen <= PREFIX_LEN ||
	    memcmp(ref, BUNDLE_REF_PREFIX, PREFIX_LEN) != 0 ||
	    !bundle_attempt_valid(ref + PREFIX_LEN, rlen - PREFIX_LEN)) {
		hdr_show(ref, rlen, show, sizeof(show));
		return (errfmt(err, errlen, "bundle: ref \"%s\" is not "
		    BUNDLE_REF_PREFIX "<attempt id>", show));
	}
	memcpy(st->out->commit, line, BUNDLE_HEXSZ);
	st->out->commit[BUNDLE_HEXSZ] = '\0';
	memcpy(st->out->attempt, ref + PREFIX_LEN, rlen - PREFIX_LEN);
	st->out->attempt[rlen - PREFIX_LEN] = '\0';
	return (0);
}

int
bundle_hdr_parse(const void *data, size_t len, struct bundle_hdr *out,
    char *err, size_t errlen)
{
	const char		*buf = data, *end, *p, *nl;
	struct hdr_state	 st;
	size_t			 off;

	memset(out, 0, sizeof(*out));
	if (len < SIG_LEN || memcmp(buf, BUNDLE_SIGNATURE, SIG_LEN) != 0)
		return (errfmt(err, errlen, "bundle: not a v2 git bundle"));
	/* The signature's own newline may start the empty line. */
	if ((end = memmem(buf + SIG_LEN - 1, (len < BUNDLE_HDR_MAX ? len :
	    BUNDLE_HDR_MAX) - (SIG_LEN - 1), "\n\n", 2)) == NULL)
		return (errfmt(err, errlen, "bundle: no end of header in the "
		    "first %d bytes", BUNDLE_HDR_MAX));
	if (memchr(buf, '\0', end - buf) != NULL)
		return (errfmt(err, errlen, "bundle: NUL byte in the header"));
	memset(&st, 0, sizeof(st));
	st.out = out;
	st.lineno = 1;
	/* Each line ends in '\n'; the last one's is end[0]. */
	for (p = buf + SIG_LEN; p <= end; p = nl + 1) {
		nl = memchr(p, '\n', end + 1 - p);
		st.lineno++;
		if (p[0] == '-') {
			if (hdr_prereq(&st, p, nl - p, err, errlen) == -1)
				return (-1);
		} else if (hdr_ref(&st, p, nl - p, err, errlen) == -1)
			return (-1);
	}
	if (st.nprereq == 0)
		return (errfmt(err, errlen, "bundle: no prerequisite"));
	if (st.nref == 0)
		return (errfmt(err, errlen, "bundle: no ref"));
	off = end + 2 - buf;
	if (len - off < MAGIC_LEN ||
	    memcmp(buf + off, BUNDLE_PACK_MAGIC, MAGIC_LEN) != 0)
		return (errfmt(err, errlen, "bundle: no pack after the "
		    "header"));
	out->pack_offset = off;
	return (0);
}

int
bundle_hdr_read(int fd, struct bundle_hdr *out, char *err, size_t errlen)
{
	struct stat	 sb;
	char		*buf;
	size_t		 len = 0, want = BUNDLE_HDR_MAX + MAGIC_LEN;
	ssize_t		 n;
	int		 rv;

	memset(out, 0, sizeof(*out));
	if (fstat(fd, &sb) == -1)
		return (errfmt(err, errlen, "bundle: fstat: %s",
		    strerror(errno)));
	if (!S_ISREG(sb.st_mode))
		return (errfmt(err, errlen, "bundle: not a regular file"));
	if ((buf = malloc(want)) == NULL)
		return (errfmt(err, errlen, "bundle: out of memory"));
	while (len < want) {
		n = pread(fd, buf + len, want - len, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			errfmt(err, errlen, "bundle: read: %s",
			    strerror(errno));
			free(buf);
			return (-1);
		}
		if (n == 0)
			break;
		len += n;
	}
	rv = bundle_hdr_parse(buf, len, out, err, errlen);
	free(buf);
	return (rv);
}
