/*
 * The suite's encoding of untrusted bytes (libcommon/esc.c): any bytes
 * encode to printable ASCII that is valid and decodes back to them;
 * any string that decodes is the one encoding of what it decodes to
 * (canonical), and esc_valid() says so exactly when esc_decode() does.
 */
#include <jansson.h>

#include "esc.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const unsigned char	*p;
	unsigned char		*back;
	char			*e, *s, small[16];
	json_t			*j;
	int			 n, m;

	/* Bytes -> encoding -> the same bytes. */
	FUZZ_ASSERT((e = esc_strdup(data, size)) != NULL, "esc_strdup");
	FUZZ_ASSERT(strlen(e) == esc_len(data, size), "esc_len");
	for (p = (const unsigned char *)e; *p != '\0'; p++)
		FUZZ_ASSERT(*p >= 0x20 && *p <= 0x7e, "unprintable 0x%02x", *p);
	FUZZ_ASSERT(esc_valid(e) == 1, "its own encoding is not valid");
	FUZZ_ASSERT((back = malloc(size + 1)) != NULL, "malloc");
	FUZZ_ASSERT(esc_decode(e, strlen(e), back, size) == (int)size &&
	    memcmp(back, data, size) == 0, "does not decode back");
	if (size > 0)
		FUZZ_ASSERT(esc_decode(e, strlen(e), back, size - 1) == -1,
		    "decoded into a buffer too small");
	/* A buffer too small is refused whole, and says so. */
	n = esc_encode(data, size, small, sizeof(small));
	FUZZ_ASSERT(n == (strlen(e) < sizeof(small) ? (int)strlen(e) : -1) &&
	    (n == -1 || strcmp(small, e) == 0), "esc_encode into 16 bytes");
	j = esc_json(data, size);
	FUZZ_ASSERT(json_is_string(j) && strcmp(json_string_value(j), e) == 0,
	    "esc_json");
	json_decref(j);
	free(e);

	/* The input as an encoding: canonical if it decodes. */
	FUZZ_ASSERT((s = malloc(size + 1)) != NULL, "malloc");
	memcpy(s, data, size);
	s[size] = '\0';
	n = esc_decode(s, size, back, size);
	if (n >= 0) {
		FUZZ_ASSERT((e = esc_strdup(back, n)) != NULL, "esc_strdup");
		FUZZ_ASSERT(strlen(e) == size && memcmp(e, data, size) == 0,
		    "a second spelling of the same bytes decoded");
		free(e);
	}
	/* esc_valid reads up to the first NUL. */
	n = esc_decode(s, strlen(s), back, size);
	m = esc_valid(s);
	FUZZ_ASSERT(m == (n >= 0), "esc_valid %d, esc_decode %d", m, n);
	free(s);
	free(back);
	return (0);
}
