/*
 * The attestation file that `factoryctl verify -a` reads (libcommon/
 * attest.c): any bytes through attest_verify_buf(), and each line
 * through attest_open().  A refusal is one line of printable text; a
 * file that verifies names PASSED or FAILED and hex digests, and does
 * not verify against a pin that is none of its keys.
 */
#include "attest.h"
#include "fuzz.h"

#define BADPIN	"SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

static void
check_err(const char *err)
{
	const unsigned char	*p;

	FUZZ_ASSERT(err[0] != '\0', "no reason");
	for (p = (const unsigned char *)err; *p != '\0'; p++)
		FUZZ_ASSERT(*p >= 0x20 && *p != 0x7f, "control character "
		    "0x%02x in the error: %s", *p, err);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct attest_summary	 s;
	struct attest_env	 e;
	char			 err[1024], *pins[1] = { BADPIN };
	const char		*p = (const char *)data, *nl;

	err[0] = '\0';
	if (attest_open(p, (nl = memchr(p, '\n', size)) != NULL ?
	    (size_t)(nl - p) : size, NULL, &e, err, sizeof(err)) == 0)
		attest_env_free(&e);
	else
		check_err(err);
	err[0] = '\0';
	if (attest_verify_buf(p, size, NULL, 0, &s, err, sizeof(err)) == -1) {
		check_err(err);
		return (0);
	}
	FUZZ_ASSERT(s.count > 0 && (strcmp(s.result, "PASSED") == 0 ||
	    strcmp(s.result, "FAILED") == 0), "summary");
	FUZZ_ASSERT(strcmp(s.builder_key, s.verifier_key) != 0,
	    "one key for both roles");
	FUZZ_ASSERT(attest_verify_buf(p, size, pins, 1, NULL, err,
	    sizeof(err)) == -1, "verified with a wrong pin");
	return (0);
}
