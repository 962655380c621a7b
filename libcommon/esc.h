/*
 * The one encoding of untrusted byte strings in the whole suite: file
 * names from a tree, reasons and log lines from a child, ref names.
 * Whatever the bytes, the encoding is printable ASCII (so valid UTF-8,
 * safe in JSON, a receipt, a log line or on a terminal) and reversible:
 *
 *	0x20-0x7e except '\'	as itself
 *	'\' (0x5c)		"\\"
 *	every other byte	"\xNN", two lower-case hex digits
 *
 * Non-ASCII bytes are escaped even where they form valid UTF-8: a
 * reader sees exactly which bytes a name holds, and no bidirectional
 * override, look-alike or invisible character reaches an operator.
 * The encoding is canonical: each byte string has exactly one, and
 * esc_decode() refuses every other spelling ("\x41", "\xFF", a raw
 * control byte, a lone backslash), so two encodings are equal exactly
 * when the byte strings are.
 */
#ifndef FACTORY_ESC_H
#define FACTORY_ESC_H

#include <stddef.h>

#include <jansson.h>

/* Encoded bytes per input byte, at most. */
#define ESC_MAXEXPAND	4

/* The length of the encoding of len bytes, without a NUL. */
size_t	 esc_len(const void *, size_t);
/*
 * Encode into dst (dstsize bytes, NUL-terminated).  Returns the
 * encoded length, or -1 (nothing useful in dst) if it does not fit.
 */
int	 esc_encode(const void *, size_t, char *, size_t);
/*
 * As much of len bytes as dst holds, encoded (whole escapes only): for
 * showing a peer's text, a reason, never for keeping it.
 */
void	 esc_show(const void *, size_t, char *, size_t);
/* A malloc'd encoding, or NULL if memory ran out. */
char	*esc_strdup(const void *, size_t);
/*
 * Decode slen bytes of an encoding into dst (dstsize bytes; no NUL is
 * added).  Returns the decoded length, or -1 if s is not the canonical
 * encoding of anything or the result does not fit.
 */
int	 esc_decode(const char *, size_t, void *, size_t);
/* 1 if the NUL-terminated s is a canonical encoding, else 0. */
int	 esc_valid(const char *);
/*
 * The encoding as a JSON string.  Never NULL, for any input: running
 * out of memory is fatal, as everywhere in the suite.
 */
json_t	*esc_json(const void *, size_t);
/* esc_json of a NUL-terminated string. */
json_t	*esc_json_str(const char *);

#endif /* FACTORY_ESC_H */
