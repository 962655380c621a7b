/*
 * The signing keys: the parent's receipt key (root, 0600) and the
 * verifier's key (owned by the verifier's uid, 0400).  The parent
 * keeps only the verifier's public half, pinned at start.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "factoryd.h"
#include "log.h"

static int
key_create(const char *path, uid_t uid, gid_t gid, mode_t mode)
{
	EVP_PKEY	*k;
	char		 dir[PATH_MAX], err[256];

	if (access(path, F_OK) == 0)
		return (0);
	strlcpy(dir, path, sizeof(dir));
	if (mkdir(dirname(dir), 0755) == -1 && errno != EEXIST) {
		log_warn("keys: mkdir %s", dir);
		return (-1);
	}
	if ((k = ed25519_generate()) == NULL) {
		log_warnx("keys: cannot generate a key");
		return (-1);
	}
	if (ed25519_save_pem(k, path, 0, err, sizeof(err)) == -1) {
		log_warnx("keys: %s: %s", path, err);
		EVP_PKEY_free(k);
		return (-1);
	}
	EVP_PKEY_free(k);
	if (chown(path, uid, gid) == -1 || chmod(path, mode) == -1) {
		log_warn("keys: %s", path);
		return (-1);
	}
	log_info("keys: created %s", path);
	return (0);
}

/* factoryd -k: create whichever key is missing. */
int
keys_create(struct factoryd_conf *conf)
{
	if (key_create(conf->receipt_key, 0, 0, 0600) == -1)
		return (-1);
	return (key_create(conf->verifier_key,
	    conf->users[PROC_VERIFIER].uid, conf->users[PROC_VERIFIER].gid,
	    0400));
}

int
keys_load(void)
{
	EVP_PKEY	*v;
	char		 err[256], fp[CRYPTO_FP_SIZE];

	if ((env->receipt_key = ed25519_load_pem(env->conf->receipt_key, err,
	    sizeof(err))) == NULL) {
		log_warnx("keys.receipts: %s (create it with factoryd -k)",
		    err);
		return (-1);
	}
	if ((v = ed25519_load_pem(env->conf->verifier_key, err,
	    sizeof(err))) == NULL) {
		log_warnx("keys.verifier: %s (create it with factoryd -k)",
		    err);
		return (-1);
	}
	if (ed25519_public_raw(v, env->verifier_pub) == -1 ||
	    ed25519_public_raw(env->receipt_key, env->receipt_pub) == -1) {
		EVP_PKEY_free(v);
		return (-1);
	}
	base64_encode(env->verifier_pub, ED25519_PUB_LEN, 1,
	    env->verifier_pub_b64);
	ed25519_fingerprint(v, fp);
	EVP_PKEY_free(v);
	log_info("keys: verifier key %s pinned", fp);
	ed25519_fingerprint(env->receipt_key, fp);
	log_info("keys: receipt key %s", fp);
	return (0);
}
