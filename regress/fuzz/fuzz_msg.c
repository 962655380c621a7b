/*
 * The typed decoders of the children's messages (libcommon/msg.c),
 * one per kind, and HELLO's: byte 0 of the input picks the kind
 * (MSG_KIND_MAX: HELLO), the rest is the payload as the peer sent it
 * (msg.c's binary layout: a kind byte, then field by field).
 * A refusal is one printable line; a payload that is accepted encodes
 * again, and that encoding reads back to the same encoding (what is
 * composed is exactly what is read).
 */
#include "msg.h"
#include "fuzz.h"

static void
check_err(const char *err)
{
	const unsigned char	*p;

	FUZZ_ASSERT(err[0] != '\0', "refused without a reason");
	for (p = (const unsigned char *)err; *p != '\0'; p++)
		FUZZ_ASSERT(*p >= 0x20 && *p <= 0x7e, "unprintable 0x%02x in "
		    "the error: %s", *p, err);
}

static void
hello(const uint8_t *data, size_t size)
{
	const unsigned char	*p;
	char			 err[MSG_ERRLEN], *text = NULL;

	err[0] = '\0';
	if (msg_hello_read(data, size, &text, err, sizeof(err)) == -1) {
		check_err(err);
		return;
	}
	/* Escaped lines joined by newlines: nothing else. */
	for (p = (const unsigned char *)text; *p != '\0'; p++)
		FUZZ_ASSERT((*p >= 0x20 && *p <= 0x7e) || *p == '\n',
		    "HELLO text holds 0x%02x", *p);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum msg_kind	 k;
	void		*a, *b;
	char		 err[MSG_ERRLEN], *e1, *e2;
	size_t		 l1, l2;

	if (size < 1)
		return (0);
	k = data[0] % (MSG_KIND_MAX + 1);
	if (k == MSG_KIND_MAX) {
		hello(data + 1, size - 1);
		return (0);
	}
	FUZZ_ASSERT((a = malloc(msg_size(k))) != NULL &&
	    (b = malloc(msg_size(k))) != NULL, "malloc");
	err[0] = '\0';
	if (msg_read(k, data + 1, size - 1, a, err, sizeof(err)) == -1) {
		check_err(err);
		free(a);
		free(b);
		return (0);
	}
	e1 = msg_encode(k, a, &l1, err, sizeof(err));
	FUZZ_ASSERT(e1 != NULL, "%s: read, but does not encode: %s",
	    msg_kind_name(k), err);
	FUZZ_ASSERT(msg_read(k, e1, l1, b, err, sizeof(err)) == 0,
	    "%s: its own encoding is refused: %s", msg_kind_name(k), err);
	e2 = msg_encode(k, b, &l2, err, sizeof(err));
	FUZZ_ASSERT(e2 != NULL && l1 == l2 && memcmp(e1, e2, l1) == 0,
	    "%s: encode(read(encode(x))) differs: %zu and %zu bytes",
	    msg_kind_name(k), l1, e2 != NULL ? l2 : 0);
	free(e1);
	free(e2);
	msg_free(k, a);
	msg_free(k, b);
	free(a);
	free(b);
	return (0);
}
