/*
 * The display form of untrusted bytes, for every line a person reads
 * (factoryctl's human output, the log): vis(3) in spirit.  Printable
 * valid UTF-8 passes as it is; everything a terminal could act on is
 * written out instead:
 *	C0 controls, DEL, a byte that is not part of valid UTF-8
 *	(overlong forms, surrogates, past U+10FFFF, truncated)	\xNN
 *	C1 controls U+0080-U+009F, the separators U+2028, U+2029,
 *	and every format character (Unicode's Cf: zero width space
 *	and joiners U+200B-U+200F, bidi controls U+202A-U+202E and
 *	U+2066-U+2069, U+00AD, U+061C, U+180E, U+2060-U+206F,
 *	U+FEFF, the tags U+E0000-U+E007F, ...)			\u{XXXX}
 *	the backslash itself					\\
 * so the form is unambiguous and holds no byte below 0x20 (but a
 * newline or tab the caller let through), no DEL and no ESC.
 */
#ifndef FACTORY_VIS_H
#define FACTORY_VIS_H

#include <stddef.h>

#define VIS_NL		0x01	/* newlines pass: they separate lines */
#define VIS_TAB		0x02	/* tabs pass */
/*
 * The backslash passes as itself: for text already in the suite's
 * encoding (esc.h), whose backslashes are escapes to be shown once.
 * The form is then not reversible, but still inert.
 */
#define VIS_NOSLASH	0x04

/*
 * The display form of src[0..len) into dst, always NUL-terminated if
 * dstsize > 0, cut at a whole escape or character if it does not fit.
 * Returns the length of the whole form (as strlcpy(3) does): it was
 * cut if that is >= dstsize.
 */
size_t	 vis_buf(char *, size_t, const void *, size_t, int);
/* The same, in memory of its own (free(3) it); NULL without memory. */
char	*vis_alloc(const void *, size_t, int);
/*
 * How many bytes at the end of src[0..len) begin a UTF-8 character
 * that is not complete yet (0-3): a stream keeps them for its next
 * piece instead of escaping them as invalid.
 */
size_t	 vis_tail(const void *, size_t);

#endif /* FACTORY_VIS_H */
