/*
 * Small wrappers around OpenSSL 3 (EVP) for what the suite needs:
 * SHA-256, hex and base64, and Ed25519 keys, signatures and
 * fingerprints.  No global state; every function is reentrant.
 *
 * Functions that return int return 0 on success and -1 on failure.
 * Those taking (err, errlen) write a reason there on failure; errlen
 * may be 0 when the caller does not want one.
 */
#ifndef FACTORY_CRYPTO_H
#define FACTORY_CRYPTO_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#define SHA256_LEN		32
#define SHA256_HEX_LEN		64	/* without the NUL */
#define ED25519_PUB_LEN		32
#define ED25519_SIG_LEN		64
#define ED25519_SIG_B64_LEN	88	/* padded base64, without NUL */
/* "SHA256:" + 43 characters of unpadded base64, like ssh-keygen -l */
#define CRYPTO_FP_LEN		50	/* without the NUL */
#define CRYPTO_FP_SIZE		(CRYPTO_FP_LEN + 1)

/* The size of a buffer holding the base64 of n bytes, padded, plus NUL. */
#define BASE64_SIZE(n)		((((n) + 2) / 3) * 4 + 1)

/* Incremental SHA-256; the context is owned by the caller. */
struct sha256_ctx {
	EVP_MD_CTX	*md;
};

/* crypto.c */
int	 sha256(const void *, size_t, uint8_t [SHA256_LEN]);
int	 sha256_hex(const void *, size_t, char [SHA256_HEX_LEN + 1]);
int	 sha256_init(struct sha256_ctx *);
int	 sha256_update(struct sha256_ctx *, const void *, size_t);
/* Writes the digest and frees the context, also on failure. */
int	 sha256_final(struct sha256_ctx *, uint8_t [SHA256_LEN]);
/* Frees a context that will not be finished (safe to call twice). */
void	 sha256_abort(struct sha256_ctx *);
/* A file's whole contents by pread(2); the offset does not move. */
int	 sha256_fd(int, char [SHA256_HEX_LEN + 1], off_t *);

/* Lowercase hex; out holds 2 * len + 1 bytes. */
void	 hex_encode(const uint8_t *, size_t, char *);
/* Exactly 2 * outlen hex digits (either case), nothing more. */
int	 hex_decode(const char *, uint8_t *, size_t);
/* The n bytes at s are lowercase hex digits (no NUL needed after). */
int	 hex_lower(const char *, size_t);
/* Exactly n lowercase hex digits, then the NUL; NULL is not. */
int	 hex_valid(const char *, size_t);

/*
 * Standard base64 (RFC 4648 section 4).  The encoder writes padding
 * when pad is set; out holds BASE64_SIZE(len) bytes.  The decoder takes
 * a NUL-terminated string in the padded form only, and refuses anything
 * else: a length not a multiple of 4, missing or misplaced padding,
 * whitespace or any byte outside the alphabet, and non-zero unused
 * bits, so each byte string has exactly one accepted encoding.  It
 * writes nothing past outmax bytes.
 */
void	 base64_encode(const uint8_t *, size_t, int, char *);
int	 base64_decode(const char *, uint8_t *, size_t, size_t *);

/* Ed25519.  Keys are EVP_PKEY (free with EVP_PKEY_free). */
EVP_PKEY *ed25519_generate(void);
/*
 * Write a private key as an unencrypted PKCS#8 PEM file of mode 0600,
 * atomically: a temporary file in the same directory is written and
 * fsynced, then renamed (or, without overwrite, linked, so an existing
 * key is never replaced), and the directory is fsynced.
 */
int	 ed25519_save_pem(EVP_PKEY *, const char *, int, char *, size_t);
/* Load a private key PEM; refuses keys of any other type. */
EVP_PKEY *ed25519_load_pem(const char *, char *, size_t);
EVP_PKEY *ed25519_load_pem_mem(const void *, size_t, char *, size_t);
int	 ed25519_public_raw(EVP_PKEY *, uint8_t [ED25519_PUB_LEN]);
/* Fingerprint "SHA256:<unpadded base64 of sha256(raw public key)>". */
int	 ed25519_fingerprint(EVP_PKEY *, char [CRYPTO_FP_SIZE]);
int	 ed25519_fingerprint_raw(const uint8_t [ED25519_PUB_LEN],
	    char [CRYPTO_FP_SIZE]);
int	 ed25519_sign(EVP_PKEY *, const void *, size_t,
	    uint8_t [ED25519_SIG_LEN]);
/* Returns 0 only for a valid signature by the given raw public key. */
int	 ed25519_verify(const uint8_t [ED25519_PUB_LEN], const void *,
	    size_t, const uint8_t [ED25519_SIG_LEN]);

#endif /* FACTORY_CRYPTO_H */
