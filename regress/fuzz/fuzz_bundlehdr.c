/*
 * The bundle header (libcommon/bundlehdr.c), as the verifier and the
 * publisher read it from a bundle the worker wrote out of a tree an
 * agent controlled.  A header that parses must say exactly what the
 * bytes say; a refusal is one printable line; reading the same bytes
 * from a file gives the same answer.
 */
#include "bundlehdr.h"
#include "fuzz.h"

static int	 fd = -1;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fd = fuzz_memfd("bundle");
	return (0);
}

static void
check_err(const char *err)
{
	const unsigned char	*p;

	FUZZ_ASSERT(strncmp(err, "bundle: ", 8) == 0, "error: %s", err);
	for (p = (const unsigned char *)err; *p != '\0'; p++)
		FUZZ_ASSERT(*p >= 0x20 && *p < 0x7f, "unprintable error: %s",
		    err);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bundle_hdr	 h, h2;
	const char		*d = (const char *)data, *ref;
	char			 err[512], err2[512];
	size_t			 n, want;
	int			 rv, rv2;

	err[0] = '\0';
	rv = bundle_hdr_parse(data, size, &h, err, sizeof(err));
	fuzz_memfd_set(fd, data, size);
	err2[0] = '\0';
	rv2 = bundle_hdr_read(fd, &h2, err2, sizeof(err2));
	/* The reader looks at the first BUNDLE_HDR_MAX + 4 bytes only. */
	want = BUNDLE_HDR_MAX + 4;
	if (size <= want)
		FUZZ_ASSERT(rv == rv2 && strcmp(err, err2) == 0 &&
		    (rv == -1 || memcmp(&h, &h2, sizeof(h)) == 0),
		    "parse and read differ: %s / %s", err, err2);
	if (rv == -1) {
		check_err(err);
		return (0);
	}
	FUZZ_ASSERT(h.pack_offset >= sizeof(BUNDLE_SIGNATURE) + 1 &&
	    h.pack_offset <= BUNDLE_HDR_MAX && h.pack_offset + 4 <= size,
	    "pack offset %zu", h.pack_offset);
	FUZZ_ASSERT(memcmp(d + h.pack_offset - 2, "\n\nPACK", 6) == 0,
	    "no blank line and pack at the offset");
	FUZZ_ASSERT(memchr(d, '\0', h.pack_offset) == NULL, "NUL");
	FUZZ_ASSERT(memcmp(d, BUNDLE_SIGNATURE, 16) == 0, "signature");
	FUZZ_ASSERT(d[16] == '-' && memcmp(d + 17, h.prereq, 40) == 0 &&
	    strlen(h.prereq) == 40 && bundle_hex40(h.prereq, 40) &&
	    (d[57] == ' ' || d[57] == '\n'), "prerequisite");
	/* The ref line is the last line of the header. */
	n = strlen(h.attempt);
	ref = d + h.pack_offset - 2 - n - strlen(BUNDLE_REF_PREFIX) - 41;
	FUZZ_ASSERT(ref > d + 57 && ref[-1] == '\n' &&
	    memcmp(ref, h.commit, 40) == 0 && ref[40] == ' ' &&
	    memcmp(ref + 41, BUNDLE_REF_PREFIX, 19) == 0 &&
	    memcmp(ref + 60, h.attempt, n) == 0, "ref line");
	FUZZ_ASSERT(bundle_hex40(h.commit, 40) && strlen(h.commit) == 40,
	    "commit");
	FUZZ_ASSERT(bundle_attempt_valid(h.attempt, n), "attempt id");
	/* Exactly two lines between the signature and the blank line. */
	FUZZ_ASSERT(memchr(d + 17, '\n', ref - 1 - (d + 17)) == NULL,
	    "more than two lines");
	return (0);
}
