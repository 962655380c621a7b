/*
 * Tests spell a child message as a JSON object (easy to write, easy
 * to damage); msgjson_encode lays it out on the wire field by field in
 * the order of msg.c's table, as msg_encode would, but checks nothing:
 * what the decoder must refuse is said as well as what it must read.
 *
 * A key the table has not: its bytes are appended (left over).  A
 * required key missing: the payload stops there (truncated at that
 * field).  An optional one missing: absent (an empty string, a count
 * of 0, a presence byte of 0).  A value of the wrong JSON type: a
 * field the decoder refuses by name (a length or count of 2^32 - 1,
 * a boolean of 2; a number that is not one stops the payload).  A string's length is its JSON length, so "\u0000"
 * puts a NUL among its bytes.
 */
#ifndef REGRESS_MSGJSON_H
#define REGRESS_MSGJSON_H

#include <jansson.h>

#include "msg.h"

/* The payload, malloc'd, *len bytes; NULL only without memory. */
char	*msgjson_encode(enum msg_kind, json_t *, size_t *);
/* The same from JSON text; NULL also if it is not JSON. */
char	*msgjson_encode_text(enum msg_kind, const char *, size_t *);

/* A struct as the JSON that msgjson_encode lays out the same. */
json_t	*msgjson_from_struct(enum msg_kind, const void *);

#endif /* REGRESS_MSGJSON_H */
