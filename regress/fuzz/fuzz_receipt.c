/*
 * The receipts export that `factoryctl verify` reads (libcommon/
 * receipt.c): any bytes through receipt_verify_buf() and, as factoryctl
 * reads a file, receipt_verify_file().  Both must agree; a refusal is
 * one line of printable text (factoryctl prints it on the operator's
 * terminal); a chain that verifies must not verify against a pin that
 * is not its key.
 */
#include "receipt.h"
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
	struct receipt_summary	 s, s2;
	FILE			*fp;
	char			 err[1024], err2[1024];
	int			 rv, rv2;

	err[0] = '\0';
	rv = receipt_verify_buf((const char *)data, size, NULL, NULL, &s, err,
	    sizeof(err));
	/* fmemopen(3) refuses an empty buffer: factoryctl reads a file. */
	if ((fp = size > 0 ? fmemopen((void *)data, size, "r") :
	    fopen("/dev/null", "r")) == NULL)
		abort();
	err2[0] = '\0';
	rv2 = receipt_verify_file(fp, NULL, NULL, &s2, err2, sizeof(err2));
	fclose(fp);
	FUZZ_ASSERT(rv == rv2 && strcmp(err, err2) == 0,
	    "buf and file differ: %d %s / %d %s", rv, err, rv2, err2);
	if (rv == -1) {
		check_err(err);
		return (0);
	}
	FUZZ_ASSERT(memcmp(&s, &s2, sizeof(s)) == 0, "summaries differ");
	FUZZ_ASSERT(s.count > 0 && s.last_seq == s.count - 1 &&
	    strlen(s.head) == SHA256_HEX_LEN, "summary");
	FUZZ_ASSERT(receipt_verify_buf((const char *)data, size, BADPIN, NULL,
	    NULL, err, sizeof(err)) == -1, "verified with a wrong pin");
	FUZZ_ASSERT(receipt_verify_buf((const char *)data, size, NULL, BADPIN,
	    NULL, err, sizeof(err)) == -1, "verified with a wrong pin");
	return (0);
}
