/*
 * SHA-256, hex, base64 and Ed25519 through OpenSSL 3 EVP.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "crypto.h"
#include "util.h"

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void
seterr(char *err, size_t errlen, const char *fmt, const char *arg)
{
	if (errlen == 0)
		return;
	snprintf(err, errlen, fmt, arg);
}

int
sha256(const void *buf, size_t len, uint8_t out[SHA256_LEN])
{
	unsigned int	 outlen = SHA256_LEN;

	if (EVP_Digest(buf, len, out, &outlen, EVP_sha256(), NULL) != 1 ||
	    outlen != SHA256_LEN)
		return (-1);
	return (0);
}

int
sha256_hex(const void *buf, size_t len, char out[SHA256_HEX_LEN + 1])
{
	uint8_t	 md[SHA256_LEN];

	if (sha256(buf, len, md) == -1)
		return (-1);
	hex_encode(md, sizeof(md), out);
	return (0);
}

int
sha256_init(struct sha256_ctx *ctx)
{
	if ((ctx->md = EVP_MD_CTX_new()) == NULL)
		return (-1);
	if (EVP_DigestInit_ex(ctx->md, EVP_sha256(), NULL) != 1) {
		sha256_abort(ctx);
		return (-1);
	}
	return (0);
}

int
sha256_update(struct sha256_ctx *ctx, const void *buf, size_t len)
{
	if (ctx->md == NULL)
		return (-1);
	if (EVP_DigestUpdate(ctx->md, buf, len) != 1)
		return (-1);
	return (0);
}

int
sha256_final(struct sha256_ctx *ctx, uint8_t out[SHA256_LEN])
{
	unsigned int	 outlen = SHA256_LEN;
	int		 rv = 0;

	if (ctx->md == NULL)
		return (-1);
	if (EVP_DigestFinal_ex(ctx->md, out, &outlen) != 1 ||
	    outlen != SHA256_LEN)
		rv = -1;
	sha256_abort(ctx);
	return (rv);
}

void
sha256_abort(struct sha256_ctx *ctx)
{
	EVP_MD_CTX_free(ctx->md);
	ctx->md = NULL;
}

/*
 * The SHA-256 of a file's whole contents, read with pread(2) from
 * offset 0 to the end, so the descriptor's offset, which a passed
 * descriptor shares with its sender, does not move.  *lenp, if not
 * NULL, gets the number of bytes hashed.  -1 with errno on a failed
 * read.
 */
int
sha256_fd(int fd, char hex[SHA256_HEX_LEN + 1], off_t *lenp)
{
	struct sha256_ctx	 ctx;
	uint8_t			 md[SHA256_LEN], buf[64 * 1024];
	ssize_t			 n;
	off_t			 off = 0;

	if (sha256_init(&ctx) == -1)
		return (-1);
	while ((n = pread(fd, buf, sizeof(buf), off)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 || sha256_update(&ctx, buf, (size_t)n) == -1) {
			sha256_abort(&ctx);
			return (-1);
		}
		off += n;
	}
	if (sha256_final(&ctx, md) == -1)
		return (-1);
	hex_encode(md, sizeof(md), hex);
	if (lenp != NULL)
		*lenp = off;
	return (0);
}

void
hex_encode(const uint8_t *in, size_t len, char *out)
{
	static const char	 digits[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0x0f];
	}
	out[2 * len] = '\0';
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/* The n bytes at s are lowercase hex digits; s need not end there. */
int
hex_lower(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (!(s[i] >= '0' && s[i] <= '9') && !(s[i] >= 'a' &&
		    s[i] <= 'f'))
			return (0);
	return (1);
}

/* s is exactly n lowercase hex digits: a git id (40), a SHA-256 (64). */
int
hex_valid(const char *s, size_t n)
{
	return (s != NULL && strnlen(s, n + 1) == n && hex_lower(s, n));
}

int
hex_decode(const char *in, uint8_t *out, size_t outlen)
{
	size_t	 i;
	int	 hi, lo;

	if (strlen(in) != 2 * outlen)
		return (-1);
	for (i = 0; i < outlen; i++) {
		if ((hi = hexval(in[2 * i])) == -1 ||
		    (lo = hexval(in[2 * i + 1])) == -1)
			return (-1);
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (0);
}

void
base64_encode(const uint8_t *in, size_t len, int pad, char *out)
{
	uint32_t	 v;
	size_t		 i, o = 0;

	for (i = 0; i + 3 <= len; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 |
		    in[i + 2];
		out[o++] = b64chars[v >> 18 & 0x3f];
		out[o++] = b64chars[v >> 12 & 0x3f];
		out[o++] = b64chars[v >> 6 & 0x3f];
		out[o++] = b64chars[v & 0x3f];
	}
	if (len - i == 1) {
		v = (uint32_t)in[i] << 16;
		out[o++] = b64chars[v >> 18 & 0x3f];
		out[o++] = b64chars[v >> 12 & 0x3f];
		if (pad) {
			out[o++] = '=';
			out[o++] = '=';
		}
	} else if (len - i == 2) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		out[o++] = b64chars[v >> 18 & 0x3f];
		out[o++] = b64chars[v >> 12 & 0x3f];
		out[o++] = b64chars[v >> 6 & 0x3f];
		if (pad)
			out[o++] = '=';
	}
	out[o] = '\0';
}

static int
b64val(char c)
{
	const char	*p;

	if (c == '\0' || (p = strchr(b64chars, c)) == NULL)
		return (-1);
	return ((int)(p - b64chars));
}

int
base64_decode(const char *in, uint8_t *out, size_t outmax, size_t *outlen)
{
	size_t	 len = strlen(in), full, pad = 0, i, o = 0;
	int	 a, b, c, d;

	/*
	 * RFC 4648 section 4, strictly: whole quanta of four characters,
	 * "=" only as the last one or two of the last quantum.
	 */
	if (len % 4 != 0)
		return (-1);
	if (len > 0 && in[len - 1] == '=')
		pad = in[len - 2] == '=' ? 2 : 1;
	full = len / 4 - (pad > 0);
	if (full * 3 + (pad > 0 ? 3 - pad : 0) > outmax)
		return (-1);
	for (i = 0; i < full; i++) {
		if ((a = b64val(in[4 * i])) == -1 ||
		    (b = b64val(in[4 * i + 1])) == -1 ||
		    (c = b64val(in[4 * i + 2])) == -1 ||
		    (d = b64val(in[4 * i + 3])) == -1)
			return (-1);
		out[o++] = (uint8_t)(a << 2 | b >> 4);
		out[o++] = (uint8_t)(b << 4 | c >> 2);
		out[o++] = (uint8_t)(c << 6 | d);
	}
	if (pad > 0) {
		/* The unused bits of the last character must be zero. */
		if ((a = b64val(in[4 * i])) == -1 ||
		    (b = b64val(in[4 * i + 1])) == -1)
			return (-1);
		out[o++] = (uint8_t)(a << 2 | b >> 4);
		if (pad == 2 && (b & 0x0f) != 0)
			return (-1);
		if (pad == 1) {
			if ((c = b64val(in[4 * i + 2])) == -1 ||
			    (c & 0x03) != 0)
				return (-1);
			out[o++] = (uint8_t)(b << 4 | c >> 2);
		}
	}
	*outlen = o;
	return (0);
}

EVP_PKEY *
ed25519_generate(void)
{
	EVP_PKEY_CTX	*ctx;
	EVP_PKEY	*key = NULL;

	if ((ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL)) == NULL)
		return (NULL);
	if (EVP_PKEY_keygen_init(ctx) != 1 ||
	    EVP_PKEY_keygen(ctx, &key) != 1)
		key = NULL;
	EVP_PKEY_CTX_free(ctx);
	return (key);
}

/* Serialize a private key as PKCS#8 PEM into a malloc'd buffer. */
static char *
pem_encode(EVP_PKEY *key, size_t *lenp)
{
	BIO	*bio;
	char	*data, *buf = NULL;
	long	 len;

	if ((bio = BIO_new(BIO_s_mem())) == NULL)
		return (NULL);
	if (PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL,
	    NULL) == 1 &&
	    (len = BIO_get_mem_data(bio, &data)) > 0 &&
	    (buf = malloc(len)) != NULL) {
		memcpy(buf, data, len);
		*lenp = len;
	}
	BIO_free_all(bio);	/* BUF_MEM_free clears the key bytes */
	return (buf);
}


int
ed25519_save_pem(EVP_PKEY *key, const char *path, int overwrite, char *err,
    size_t errlen)
{
	char	 tmp[PATH_MAX], *pem;
	size_t	 len = 0;
	int	 fd, rv = -1, saved = 0;

	if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
		seterr(err, errlen, "%s: not an Ed25519 key", path);
		return (-1);
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >=
	    (int)sizeof(tmp)) {
		seterr(err, errlen, "%s: path too long", path);
		return (-1);
	}
	if ((pem = pem_encode(key, &len)) == NULL) {
		seterr(err, errlen, "%s: cannot encode the key", path);
		return (-1);
	}
	/* mkstemp creates the file 0600, whatever the umask. */
	if ((fd = mkstemp(tmp)) == -1) {
		saved = errno;
		seterr(err, errlen, "%s: mkstemp", path);
		goto out;
	}
	if (fchmod(fd, 0600) == -1 || write_all(fd, pem, len) == -1 ||
	    fsync(fd) == -1) {
		saved = errno;
		seterr(err, errlen, "%s: write", tmp);
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (overwrite) {
		if (rename(tmp, path) == -1) {
			saved = errno;
			seterr(err, errlen, "%s: rename", path);
			unlink(tmp);
			goto out;
		}
	} else {
		/* link(2) fails with EEXIST instead of replacing a key. */
		if (link(tmp, path) == -1) {
			saved = errno;
			seterr(err, errlen, errno == EEXIST ?
			    "%s: exists, not replaced" : "%s: link", path);
			unlink(tmp);
			goto out;
		}
		unlink(tmp);
	}
	if (fsync_dir_of(path) == -1) {
		saved = errno;
		seterr(err, errlen, "%s: fsync of the directory", path);
		goto out;
	}
	rv = 0;
 out:
	if (rv == -1 && errlen > 0 && strlen(err) + 3 < errlen && saved != 0)
		snprintf(err + strlen(err), errlen - strlen(err), ": %s",
		    strerror(saved));
	OPENSSL_clear_free(pem, len);
	if (rv == -1)
		errno = saved;
	return (rv);
}

static EVP_PKEY *
check_ed25519(EVP_PKEY *key, const char *what, char *err, size_t errlen)
{
	if (key == NULL) {
		seterr(err, errlen, "%s: not a PEM private key", what);
		return (NULL);
	}
	if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
		seterr(err, errlen, "%s: not an Ed25519 key", what);
		EVP_PKEY_free(key);
		return (NULL);
	}
	return (key);
}

EVP_PKEY *
ed25519_load_pem(const char *path, char *err, size_t errlen)
{
	FILE		*fp;
	EVP_PKEY	*key;

	if ((fp = fopen(path, "re")) == NULL) {
		if (errlen > 0)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (NULL);
	}
	key = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	fclose(fp);
	return (check_ed25519(key, path, err, errlen));
}

EVP_PKEY *
ed25519_load_pem_mem(const void *buf, size_t len, char *err, size_t errlen)
{
	BIO		*bio;
	EVP_PKEY	*key;

	if (len > INT_MAX || (bio = BIO_new_mem_buf(buf, (int)len)) == NULL) {
		seterr(err, errlen, "%s: cannot read the buffer", "key");
		return (NULL);
	}
	key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	BIO_free(bio);
	return (check_ed25519(key, "key", err, errlen));
}

int
ed25519_public_raw(EVP_PKEY *key, uint8_t out[ED25519_PUB_LEN])
{
	size_t	 len = ED25519_PUB_LEN;

	if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519 ||
	    EVP_PKEY_get_raw_public_key(key, out, &len) != 1 ||
	    len != ED25519_PUB_LEN)
		return (-1);
	return (0);
}

int
ed25519_fingerprint_raw(const uint8_t pub[ED25519_PUB_LEN],
    char out[CRYPTO_FP_SIZE])
{
	uint8_t	 md[SHA256_LEN];

	if (sha256(pub, ED25519_PUB_LEN, md) == -1)
		return (-1);
	memcpy(out, "SHA256:", 7);
	base64_encode(md, sizeof(md), 0, out + 7);
	return (0);
}

int
ed25519_fingerprint(EVP_PKEY *key, char out[CRYPTO_FP_SIZE])
{
	uint8_t	 pub[ED25519_PUB_LEN];

	if (ed25519_public_raw(key, pub) == -1)
		return (-1);
	return (ed25519_fingerprint_raw(pub, out));
}

int
ed25519_sign(EVP_PKEY *key, const void *msg, size_t len,
    uint8_t sig[ED25519_SIG_LEN])
{
	EVP_MD_CTX	*ctx;
	size_t		 siglen = ED25519_SIG_LEN;
	int		 rv = -1;

	if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519)
		return (-1);
	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return (-1);
	/* Ed25519 hashes internally: no digest is named. */
	if (EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) == 1 &&
	    EVP_DigestSign(ctx, sig, &siglen, msg, len) == 1 &&
	    siglen == ED25519_SIG_LEN)
		rv = 0;
	EVP_MD_CTX_free(ctx);
	return (rv);
}

int
ed25519_verify(const uint8_t pub[ED25519_PUB_LEN], const void *msg, size_t len,
    const uint8_t sig[ED25519_SIG_LEN])
{
	EVP_PKEY	*key;
	EVP_MD_CTX	*ctx;
	int		 rv = -1;

	if ((key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub,
	    ED25519_PUB_LEN)) == NULL)
		return (-1);
	if ((ctx = EVP_MD_CTX_new()) != NULL) {
		if (EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) == 1 &&
		    EVP_DigestVerify(ctx, sig, ED25519_SIG_LEN, msg, len) == 1)
			rv = 0;
		EVP_MD_CTX_free(ctx);
	}
	EVP_PKEY_free(key);
	return (rv);
}
