/*
 * The github forge.  Per publication the publisher proves it is the
 * GitHub App (a JWT signed with the App key), buys the narrowest token
 * GitHub issues (one repository, contents and pull requests), pushes
 * one branch with libgit2, opens or reuses one pull request, and
 * revokes the token whatever happened.
 *
 * Every step is idempotent against the forge's own state, which is
 * what makes a crash anywhere safe to replay: the branch is pushed
 * only if the forge does not hold it at our commit already (and never
 * moved if it holds another), and the pull request is looked up by
 * its head before one is created.  A replayed PUBLISH after a crash
 * between the push and the pull request finds the branch in place and
 * creates the one missing pull request.
 *
 * The token lives in one malloc'd buffer of struct gh.  It reaches the
 * API as an Authorization header (libevent's copy is wiped once sent)
 * and git only through the credential callback, never a URL.  It is
 * not logged: error messages carry the forge's status and message.
 *
 * libgit2 needs the bundle's prerequisite (the baseline) and its trees
 * to compute what to push.  The publisher may not read the local
 * repositories, so it keeps a cache of the forge repository's objects,
 * scratch/gh-<repository-id>.git, filled by fetching the base branch
 * when the prerequisite is not there yet (the first publication pays
 * one fetch; later ones usually none) and flocked while in use.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <git2.h>
#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "attest.h"
#include "crypto.h"
#include "factory.h"
#include "gitcommon.h"
#include "log.h"
#include "publisher.h"
#include "util.h"

#define GH_KEY_MAX		(64 * 1024)	/* bytes of the App key file */
#define GH_TOKEN_MAX		4096		/* opaque, but not unbounded */
#define GH_JWT_PAST		60		/* iat, against clock skew */
#define GH_JWT_LIFE		540		/* exp - now: under 10 minutes */
#define GH_TRIES		4		/* per API call, fetch or push */
#define GH_WAIT_MAX		60		/* seconds of backoff, default */
#define GH_TIMEOUT		30		/* seconds per HTTP request */
#define GH_BUDGET		PUB_GITHUB_BUDGET_S
#define GH_BACKOFF_MAX		8		/* seconds between two tries */
#define GH_CRED_TRIES		1		/* the callback answers once */
#define GH_CHECK_NAME		"factory"	/* the check run's name */
#define GH_CHECK_TEXT_MAX	60000		/* GitHub caps output.text */
#define GH_PAGE_SIZE		100		/* per_page: GitHub's most */
#define GH_PAGES_MAX		10		/* pages of one list */
#define GH_REDIRECTS		3		/* per API call */

enum gh_auth {
	GH_AUTH_JWT,
	GH_AUTH_TOKEN
};

/* One publication in progress. */
struct gh {
	const struct publish_req	*req;
	const struct gh_conf		*conf;
	struct http_conn		*http;
	char				*jwt;
	char				*token;
	int				 waited;	/* seconds, in all */
	int64_t				 deadline;	/* net_now() ms */
	int				 git_transient;	/* the last git
							   failure may mend */
	int				 cred_calls;
	char				 branch[128];	/* factory/<attempt> */
	char				 refname[160];	/* refs/heads/... */
	char				 clone_url[512];
	char				 push_why[256];	/* a ref refused */
	char				 push_msg[320];	/* the forge's lines
							   ("remote: ...") */
	int				 push_open;	/* ... the last one
							   not ended yet */
	char				 owner[128];	/* the repository's */
	char				 repo[128];	/* name, as its entry
							   says (moved) */
	char				 next[1024];	/* the last answer's
							   next page */
	int				 link;		/* it had a Link */
	int				 next_bad;	/* ... unusable */
	struct attest_summary		 as;	/* count 0: none carried */
	int				 checks;	/* a check run carries
							   them: granted */
};

static void	 gh_free(void *);
static void	*gh_realloc(void *, size_t);
static void	*gh_ossl_malloc(size_t, const char *, int);
static void	*gh_ossl_realloc(void *, size_t, const char *, int);
static void	 gh_ossl_free(void *, const char *, int);
static void	 gh_secret_free(char **);
static int	 gh_name_ok(const char *, size_t);
static int	 gh_b64url(const void *, size_t, char **);
static EVP_PKEY	*gh_key_load(const char *, char *, size_t);
static char	*gh_jwt(const struct gh_conf *, char *, size_t);
static void	 gh_message(const struct http_resp *, char *, size_t);
static long	 gh_retry_wait(const struct http_resp *, const char **);
static int	 gh_backoff(struct gh *, long, const char *, char *, size_t);
static int	 gh_redirect(struct gh *, const char *, const char *,
		    const struct http_resp *, int, char *, size_t, char *,
		    size_t);
static int	 gh_git_failed(struct gh *, int, char *, size_t,
		    const char *, ...)
		    __attribute__((__format__ (printf, 5, 6)));
static int	 gh_with_token(struct gh *, const struct pub_bundle *,
		    struct publish_result *, char *, size_t);
static void	 gh_api_error(const char *, const char *,
		    const struct http_resp *, char *, size_t);
static int	 gh_api(struct gh *, const char *, const char *, enum gh_auth,
		    json_t *, struct http_resp *, char *, size_t);
static json_t	*gh_api_json(struct gh *, const char *, const char *,
		    enum gh_auth, json_t *, int, int *, char *, size_t);
static json_t	*gh_api_list(struct gh *, const char *, const char *,
		    const char *, char *, size_t);
static int	 gh_push_message(const char *, int, void *);
static int	 gh_grant_ok(const struct gh_conf *, json_t *, int, char *,
		    size_t);
static int	 gh_installation(struct gh *, char *, size_t);
static int	 gh_token(struct gh *, char *, size_t);
static void	 gh_revoke(struct gh *);
static int	 gh_moved(struct gh *, json_t *, char *, size_t);
static int	 gh_repo(struct gh *, char *, size_t);
static int	 gh_cred(git_credential **, const char *, const char *,
		    unsigned int, void *);
static int	 gh_push_status(const char *, const char *, void *);
static git_repository *gh_cache_open(struct gh *, int *, char *, size_t);
static int	 gh_fetch_base(struct gh *, git_repository *,
		    const struct pub_bundle *, char *, size_t);
static int	 gh_fetch_once(struct gh *, git_repository *, int *, char *,
		    size_t);
static int	 gh_git_retry(struct gh *, int (*)(struct gh *,
		    git_repository *, int *, char *, size_t),
		    git_repository *, int *, char *, size_t);
static int	 gh_remote_state(git_remote *, struct gh *, char *, size_t);
static int	 gh_push_once(struct gh *, git_repository *, int *, char *,
		    size_t);
static int	 gh_cached(git_repository *, const struct pub_bundle *);
static int	 gh_git(struct gh *, const struct pub_bundle *, int *, char *,
		    size_t);
static int	 gh_pulls_of(struct gh *, const char *, json_t **, char *,
		    size_t);
static int	 gh_pull_open(json_t *);
static int	 gh_pull_merged(json_t *);
static int	 gh_pull_find(struct gh *, int *, int *, int *, char *, size_t,
		    char *, size_t);
static int	 gh_pull_state(struct gh *, int, const char *, int *, char *,
		    size_t);
static int	 gh_branch_state(struct gh *, const char *, const char *,
		    const char *, char *, size_t);
static int	 gh_branch_delete(struct gh *, const char *, const char *,
		    char *, size_t);
static int	 gh_pulls_based(struct gh *, const char *, char *, size_t,
		    char *, size_t);
static int	 gh_supersede_fail(char *, size_t, const char *, ...)
		    __attribute__((__format__ (printf, 3, 4)));
static int	 gh_supersede(struct gh *, const struct msg_superseded *,
		    char *, size_t);
static int	 gh_check_find(struct gh *, char *, size_t);
static int	 gh_check_run(struct gh *, char *, size_t);
static int	 gh_pull_create(struct gh *, int *, char *, size_t, int *,
		    char *, size_t);

/*
 * Free that wipes first.  jansson and libevent hand blocks to free()
 * without telling their size; malloc_usable_size() knows it.
 */
static void
gh_free(void *p)
{
	if (p == NULL)
		return;
	explicit_bzero(p, malloc_usable_size(p));
	free(p);
}

/* realloc(3) would free the old block unwiped. */
static void *
gh_realloc(void *p, size_t n)
{
	void	*q;
	size_t	 old;

	if (p == NULL)
		return (malloc(n));
	if (n == 0) {
		gh_free(p);
		return (NULL);
	}
	if ((q = malloc(n)) == NULL)
		return (NULL);
	old = malloc_usable_size(p);
	memcpy(q, p, old < n ? old : n);
	gh_free(p);
	return (q);
}

/* OpenSSL's signatures; its TLS record buffers hold the plaintext. */
static void *
gh_ossl_malloc(size_t n, const char *file, int line)
{
	return (malloc(n));
}

static void *
gh_ossl_realloc(void *p, size_t n, const char *file, int line)
{
	return (gh_realloc(p, n));
}

static void
gh_ossl_free(void *p, const char *file, int line)
{
	gh_free(p);
}

void
gh_wipe_init(void)
{
	json_set_alloc_funcs(malloc, gh_free);
	event_set_mem_functions(malloc, gh_realloc, gh_free);
	/* Refused once OpenSSL has allocated: then its own frees stay. */
	if (CRYPTO_set_mem_functions(gh_ossl_malloc, gh_ossl_realloc,
	    gh_ossl_free) != 1)
		log_debug("OpenSSL allocated already: its buffers are freed "
		    "unwiped");
}

static void
gh_secret_free(char **s)
{
	if (*s == NULL)
		return;
	explicit_bzero(*s, strlen(*s));
	free(*s);
	*s = NULL;
}

/* An owner or repository name: what GitHub allows, nothing that
 * could change the meaning of a URL path or query. */
static int
gh_name_ok(const char *s, size_t max)
{
	size_t	 i, len = strlen(s);

	if (len == 0 || len > max || strcmp(s, ".") == 0 ||
	    strcmp(s, "..") == 0)
		return (0);
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_' && s[i] != '.')
			return (0);
	return (1);
}

static int
gh_conf_str(json_t *g, const char *key, char *dst, size_t dstlen,
    char *err, size_t errlen)
{
	json_t	*v = json_object_get(g, key);

	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    strlcpy(dst, json_string_value(v), dstlen) >= dstlen)
		return (errfmt(err, errlen, "github: %s: missing or too "
		    "long", key));
	return (0);
}

static int
gh_conf_id(json_t *g, const char *key, uint64_t *dst, char *err,
    size_t errlen)
{
	json_t	*v = json_object_get(g, key);

	if (!json_is_integer(v) || json_integer_value(v) <= 0)
		return (errfmt(err, errlen, "github: %s: not a positive "
		    "integer", key));
	*dst = (uint64_t)json_integer_value(v);
	return (0);
}

int
gh_conf_from_json(json_t *g, const char *scratch, struct gh_conf *c,
    char *err, size_t errlen)
{
	size_t	 i;

	memset(c, 0, sizeof(*c));
	if (!json_is_object(g))
		return (errfmt(err, errlen, "github: no settings"));
	if (gh_conf_str(g, "api", c->api, sizeof(c->api), err, errlen) ==
	    -1 || gh_conf_str(g, "owner", c->owner, sizeof(c->owner), err,
	    errlen) == -1 || gh_conf_str(g, "repo", c->repo, sizeof(c->repo),
	    err, errlen) == -1 || gh_conf_str(g, "app_id", c->app_id,
	    sizeof(c->app_id), err, errlen) == -1 || gh_conf_str(g, "key",
	    c->key, sizeof(c->key), err, errlen) == -1 || gh_conf_str(g,
	    "ca", c->ca, sizeof(c->ca), err, errlen) == -1 ||
	    gh_conf_id(g, "repository_id", &c->repository_id, err,
	    errlen) == -1 || gh_conf_id(g, "installation_id",
	    &c->installation_id, err, errlen) == -1)
		return (-1);
	if (strncmp(c->api, "https://", 8) != 0)
		return (errfmt(err, errlen, "github: api is not https"));
	if (!gh_name_ok(c->owner, 39) || !gh_name_ok(c->repo, 100))
		return (errfmt(err, errlen, "github: bad owner or repo "
		    "name"));
	for (i = 0; c->app_id[i] != '\0'; i++)
		if (!isalnum((unsigned char)c->app_id[i]) &&
		    c->app_id[i] != '.')
			return (errfmt(err, errlen, "github: bad app id"));
	if (c->key[0] != '/' || c->ca[0] != '/')
		return (errfmt(err, errlen, "github: key and ca must be "
		    "absolute paths"));
	if (scratch == NULL || scratch[0] != '/' || strlcpy(c->scratch,
	    scratch, sizeof(c->scratch)) >= sizeof(c->scratch) - 64)
		return (errfmt(err, errlen, "github: bad scratch directory"));
	c->wait_max = GH_WAIT_MAX;
	c->timeout = GH_TIMEOUT;
	c->budget = GH_BUDGET;
	return (0);
}

/* base64url without padding (RFC 7515), malloc'd. */
static int
gh_b64url(const void *data, size_t len, char **out)
{
	char	*s, *p;

	if ((s = malloc(BASE64_SIZE(len))) == NULL)
		return (-1);
	base64_encode(data, len, 0, s);
	for (p = s; *p != '\0'; p++)
		if (*p == '+')
			*p = '-';
		else if (*p == '/')
			*p = '_';
	*out = s;
	return (0);
}

/*
 * The App key, read with read(2) into a buffer wiped afterwards (stdio
 * would leave the PEM text in a freed buffer).  RSA of 2048 bits or
 * more only: that is what GitHub issues, and RS256 needs.
 */
static EVP_PKEY *
gh_key_load(const char *path, char *err, size_t errlen)
{
	EVP_PKEY	*pkey = NULL;
	BIO		*bio;
	char		*buf;
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		errfmt(err, errlen, "App key %s: %s", path, strerror(errno));
		return (NULL);
	}
	if ((buf = malloc(GH_KEY_MAX)) == NULL) {
		close(fd);
		errfmt(err, errlen, "App key: out of memory");
		return (NULL);
	}
	while (len < GH_KEY_MAX) {
		if ((n = read(fd, buf + len, GH_KEY_MAX - len)) == -1 &&
		    errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (len == 0 || len >= GH_KEY_MAX)
		errfmt(err, errlen, "App key %s: empty or larger than %d "
		    "bytes", path, GH_KEY_MAX);
	else if ((bio = BIO_new_mem_buf(buf, len)) == NULL)
		errfmt(err, errlen, "App key: out of memory");
	else {
		pkey = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
		BIO_free(bio);
		if (pkey == NULL)
			errfmt(err, errlen, "App key %s: not a PEM private "
			    "key", path);
		else if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA ||
		    EVP_PKEY_get_bits(pkey) < 2048) {
			errfmt(err, errlen, "App key %s: not an RSA key of "
			    "2048 bits or more", path);
			EVP_PKEY_free(pkey);
			pkey = NULL;
		}
	}
	explicit_bzero(buf, GH_KEY_MAX);
	free(buf);
	return (pkey);
}

/*
 * header.claims.signature, RS256.  iat is a minute in the past and
 * exp nine minutes ahead, so that a clock off by a minute either way
 * still gives a JWT GitHub takes (it refuses exp - iat over 10 min).
 */
static char *
gh_jwt(const struct gh_conf *c, char *err, size_t errlen)
{
	static const char hdr[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
	EVP_PKEY	*pkey;
	EVP_MD_CTX	*md = NULL;
	json_t		*claims, *iss;
	char		*cj = NULL, *h64 = NULL, *c64 = NULL, *s64 = NULL;
	char		*input = NULL, *jwt = NULL;
	unsigned char	*sig = NULL;
	size_t		 siglen = 0, i;
	time_t		 now = time(NULL);
	int		 digits = 1;

	if ((pkey = gh_key_load(c->key, err, errlen)) == NULL)
		return (NULL);
	for (i = 0; c->app_id[i] != '\0'; i++)
		if (!isdigit((unsigned char)c->app_id[i]))
			digits = 0;
	/* An App id is a number; a client id ("Iv1.…") a string. */
	iss = digits ? json_integer(strtoll(c->app_id, NULL, 10)) :
	    json_string(c->app_id);
	claims = json_pack("{s:I, s:I, s:o}", "iat",
	    (json_int_t)(now - GH_JWT_PAST), "exp",
	    (json_int_t)(now + GH_JWT_LIFE), "iss", iss);
	if (claims == NULL ||
	    (cj = json_dumps(claims, JSON_COMPACT | JSON_SORT_KEYS)) == NULL ||
	    gh_b64url(hdr, strlen(hdr), &h64) == -1 ||
	    gh_b64url(cj, strlen(cj), &c64) == -1 ||
	    asprintf(&input, "%s.%s", h64, c64) == -1) {
		input = NULL;
		errfmt(err, errlen, "JWT: out of memory");
		goto done;
	}
	if ((md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, pkey) != 1 ||
	    EVP_DigestSign(md, NULL, &siglen, (unsigned char *)input,
	    strlen(input)) != 1 || (sig = malloc(siglen)) == NULL ||
	    EVP_DigestSign(md, sig, &siglen, (unsigned char *)input,
	    strlen(input)) != 1 || gh_b64url(sig, siglen, &s64) == -1 ||
	    asprintf(&jwt, "%s.%s", input, s64) == -1) {
		jwt = NULL;
		errfmt(err, errlen, "JWT: RS256 signature failed");
	}
 done:
	json_decref(claims);
	free(cj);
	free(h64);
	free(c64);
	free(s64);
	free(sig);
	free(input);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pkey);
	return (jwt);
}

/*
 * GitHub's words in an answer: its "message", then each entry of
 * "errors" (its message, or resource, field and code), as printable
 * ASCII, cut short; "" if the body says nothing.  "Troubleshooting the
 * REST API" (docs.github.com/en/rest/using-the-rest-api/troubleshooting-
 * the-rest-api), Validation Failed: a 422's errors say what failed.
 */
static void
gh_message(const struct http_resp *r, char *out, size_t outlen)
{
	json_t		*j, *errs, *e;
	const char	*m;
	char		 one[200];
	size_t		 i, k;

	out[0] = '\0';
	if (r->body == NULL || (j = json_loadb(r->body, r->len, 0,
	    NULL)) == NULL)
		return;
	if ((m = json_string_value(json_object_get(j, "message"))) != NULL)
		strlcpy(out, m, outlen);
	errs = json_object_get(j, "errors");
	json_array_foreach(errs, i, e) {
		if (i >= 4)
			break;
		if ((m = json_string_value(json_object_get(e, "message"))) !=
		    NULL)
			strlcpy(one, m, sizeof(one));
		else
			snprintf(one, sizeof(one), "%.40s %.40s %.40s",
			    json_is_string(json_object_get(e, "resource")) ?
			    json_string_value(json_object_get(e, "resource")) :
			    "", json_is_string(json_object_get(e, "field")) ?
			    json_string_value(json_object_get(e, "field")) : "",
			    json_is_string(json_object_get(e, "code")) ?
			    json_string_value(json_object_get(e, "code")) : "");
		strlcat(out, i == 0 ? ": " : "; ", outlen);
		strlcat(out, one, outlen);
	}
	json_decref(j);
	/* The forge's bytes reach logs and terminals: no controls. */
	for (k = 0; out[k] != '\0'; k++)
		if ((unsigned char)out[k] < 0x20 ||
		    (unsigned char)out[k] > 0x7e)
			out[k] = '?';
}

/*
 * Seconds to wait before trying again, -2 for the caller's backoff, or
 * -1 if the answer is final; *why says what GitHub asked for.  "Rate
 * limits for the REST API" (docs.github.com/en/rest/using-the-rest-api/
 * rate-limits-for-the-rest-api), Exceeding the rate limit: a 403 or
 * 429 with retry-after waits that long; with x-ratelimit-remaining 0,
 * until x-ratelimit-reset; a secondary limit saying neither, at least a
 * minute.  A 5xx with retry-after waits that long too.
 */
static long
gh_retry_wait(const struct http_resp *r, const char **why)
{
	char		 msg[256];
	long long	 d;

	*why = "backoff";
	if (r->status == 403 || r->status == 429) {
		if (r->retry_after >= 0) {
			*why = "retry-after, as GitHub asked";
			return (r->retry_after > 0 ? r->retry_after : 1);
		}
		if (r->ratelimit_remaining == 0 && r->ratelimit_reset >= 0) {
			*why = "the rate limit is spent until "
			    "x-ratelimit-reset";
			d = r->ratelimit_reset - (long long)time(NULL) + 1;
			return (d < 1 ? 1 : d > LONG_MAX ? LONG_MAX : (long)d);
		}
		gh_message(r, msg, sizeof(msg));
		if (r->status == 429 || strcasestr(msg, "secondary rate "
		    "limit") != NULL) {
			*why = "a secondary rate limit without retry-after: "
			    "a minute at least, as GitHub asks";
			return (60);
		}
		return (-1);
	}
	if (r->status == 500 || r->status == 502 || r->status == 503 ||
	    r->status == 504) {
		if (r->retry_after >= 0) {
			*why = "retry-after, as GitHub asked";
			return (r->retry_after > 0 ? r->retry_after : 1);
		}
		return (-2);	/* the caller's backoff */
	}
	return (-1);
}

/*
 * Sleep wait seconds before another try, if the retry budget (wait_max)
 * and the publication's deadline allow it, saying so and why; -1 with
 * err (which holds the last failure) extended by why not.
 */
static int
gh_backoff(struct gh *g, long wait, const char *why, char *err,
    size_t errlen)
{
	size_t	 n = strlen(err);

	if (wait > g->conf->wait_max - g->waited) {
		snprintf(err + n, errlen - n, ": retry after %ld s (%s): more "
		    "than the %d s left to wait", wait, why,
		    g->conf->wait_max - g->waited);
		return (-1);
	}
	if (net_now() + wait * 1000 >= g->deadline) {
		snprintf(err + n, errlen - n, " (the publication's budget "
		    "of %d s is spent)", g->conf->budget);
		return (-1);
	}
	log_info("%s: %s; waits %ld s before trying again (%s)",
	    g->req->attempt, err, wait, why);
	g->waited += wait;
	sleep(wait);
	return (0);
}

/*
 * "POST /x: 422 Validation Failed: No commits between main and x", and
 * for a 403 the permissions the endpoint takes ("Troubleshooting the
 * REST API", Resource not accessible: X-Accepted-GitHub-Permissions).
 */
static void
gh_api_error(const char *method, const char *path,
    const struct http_resp *r, char *err, size_t errlen)
{
	char	 msg[400];

	gh_message(r, msg, sizeof(msg));
	errfmt(err, errlen, "%s %s: %d%s%s%s%s%s", method, path, r->status,
	    msg[0] != '\0' ? " " : "", msg, r->accepted[0] != '\0' ?
	    " (the endpoint takes " : "", r->accepted, r->accepted[0] != '\0' ?
	    "; see the App's permissions in factoryd.conf(5))" : "");
}

/*
 * A redirect is followed on the API's own origin and base only: "Best
 * practices for using the REST API" (docs.github.com/en/rest/using-the-
 * rest-api/best-practices-for-using-the-rest-api), Follow redirects:
 * any request may be redirected, and is repeated at the location (a
 * renamed or transferred repository answers 301).  Elsewhere the token
 * would follow: refused.  0 with the new path in cur, or -1.
 */
static int
gh_redirect(struct gh *g, const char *method, const char *path,
    const struct http_resp *r, int hops, char *cur, size_t curlen,
    char *err, size_t errlen)
{
	if (hops >= GH_REDIRECTS)
		return (errfmt(err, errlen, "%s %s: more than %d redirects",
		    method, path, GH_REDIRECTS));
	if (r->location[0] == '\0')
		return (errfmt(err, errlen, "%s %s: %d without a usable "
		    "location", method, path, r->status));
	if (http_path_of(g->http, r->location, cur, curlen) == -1)
		return (errfmt(err, errlen, "%s %s: %d to %.200s: another "
		    "host or API base, not followed (the token goes to %s "
		    "only)", method, path, r->status, r->location,
		    g->conf->api));
	log_info("%s: %s %s: %d, repeated at %s", g->req->attempt, method,
	    path, r->status, cur);
	return (0);
}

/*
 * One API call, tried again (GH_TRIES in all) when no answer came, on
 * 5xx and on rate limits, while the waits stay within wait_max and the
 * publication's deadline, and repeated where a redirect on the same
 * origin says.  Any final status is returned in r (the caller judges
 * it); -1 when no usable answer came in the end, or waiting longer was
 * refused, with the last reason in err.
 */
static int
gh_api(struct gh *g, const char *method, const char *path,
    enum gh_auth auth, json_t *body, struct http_resp *r, char *err,
    size_t errlen)
{
	char		*hdr = NULL, *text = NULL, cur[1024];
	const char	*why;
	long		 wait;
	size_t		 n;
	int		 try, rv = -1, rc, hops = 0;

	if (body != NULL && (text = json_dumps(body, JSON_COMPACT)) == NULL)
		return (errfmt(err, errlen, "%s %s: out of memory", method,
		    path));
	if (auth == GH_AUTH_JWT)
		rc = asprintf(&hdr, "Bearer %s", g->jwt);
	else
		rc = asprintf(&hdr, "token %s", g->token);
	if (rc == -1) {
		hdr = NULL;
		errfmt(err, errlen, "%s %s: out of memory", method, path);
		goto done;
	}
	strlcpy(cur, path, sizeof(cur));
	for (try = 1; ; try++) {
		http_deadline(g->http, g->deadline);
		if ((rc = http_request(g->http, method, cur, hdr, text, r,
		    err, errlen)) == HTTP_FINAL)
			goto done;
		if (rc == 0 && (r->status == 301 || r->status == 302 ||
		    r->status == 307 || r->status == 308)) {
			rc = gh_redirect(g, method, path, r, hops++, cur,
			    sizeof(cur), err, errlen);
			http_resp_free(r);
			if (rc == -1)
				goto done;
			try--;		/* not a failure */
			continue;
		}
		if (rc == 0 && (wait = gh_retry_wait(r, &why)) == -1)
			break;		/* final: the caller judges it */
		if (rc == 0) {
			gh_api_error(method, path, r, err, errlen);
			http_resp_free(r);
		} else {
			wait = -2;
			why = "backoff";
		}
		if (try >= GH_TRIES) {
			n = strlen(err);
			snprintf(err + n, errlen - n, " (gave up after %d "
			    "tries)", try);
			goto done;
		}
		if (wait == -2)
			wait = (1L << (try - 1)) > GH_BACKOFF_MAX ?
			    GH_BACKOFF_MAX : 1L << (try - 1);
		if (gh_backoff(g, wait, why, err, errlen) == -1)
			goto done;
	}
	rv = 0;
 done:
	gh_secret_free(&hdr);
	free(text);
	return (rv);
}

/*
 * An API call whose answer must be JSON with status want (or, if
 * also is non-zero, that status too: *status tells which).  The
 * answer's next page, if any, is kept in g (gh_api_list).
 */
static json_t *
gh_api_json(struct gh *g, const char *method, const char *path,
    enum gh_auth auth, json_t *body, int want, int *status, char *err,
    size_t errlen)
{
	struct http_resp	 r;
	json_t			*j;
	json_error_t		 jerr;

	g->next[0] = '\0';
	g->link = g->next_bad = 0;
	if (gh_api(g, method, path, auth, body, &r, err, errlen) == -1)
		return (NULL);
	if (status != NULL)
		*status = r.status;
	if (r.status != want) {
		gh_api_error(method, path, &r, err, errlen);
		http_resp_free(&r);
		return (NULL);
	}
	strlcpy(g->next, r.next, sizeof(g->next));
	g->link = r.link;
	g->next_bad = r.next_bad;
	if ((j = json_loadb(r.body, r.len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL)
		errfmt(err, errlen, "%s %s: bad JSON: %s", method, path,
		    jerr.text);
	http_resp_free(&r);
	return (j);
}

/*
 * Every page of a list (GET path with per_page=100), its entries (the
 * answer, or its member key) in one array.  "Using pagination in the
 * REST API" (docs.github.com/en/rest/using-the-rest-api/using-pagination-
 * in-the-rest-api): the link header's rel="next" names the next page,
 * and its absence says there is none.  Followed on the API's origin
 * only, GH_PAGES_MAX pages at most; a full page without any link header
 * is refused (what; a forge that ignored the filter), as is a page that
 * is not a list.
 */
static json_t *
gh_api_list(struct gh *g, const char *path, const char *key,
    const char *what, char *err, size_t errlen)
{
	json_t		*all, *j, *items;
	char		 cur[1024];
	int		 page;

	if ((all = json_array()) == NULL) {
		errfmt(err, errlen, "out of memory");
		return (NULL);
	}
	strlcpy(cur, path, sizeof(cur));
	for (page = 1; ; page++) {
		if ((j = gh_api_json(g, "GET", cur, GH_AUTH_TOKEN, NULL, 200,
		    NULL, err, errlen)) == NULL)
			goto bad;
		items = key != NULL ? json_object_get(j, key) : j;
		if (!json_is_array(items)) {
			if (key != NULL)
				errfmt(err, errlen, "GET %s: no %s", path,
				    key);
			else
				errfmt(err, errlen, "GET %s: not a list",
				    path);
			json_decref(j);
			goto bad;
		}
		if (!g->link && json_array_size(items) >= GH_PAGE_SIZE) {
			errfmt(err, errlen, "GET %s: %d %s or more: not all "
			    "checked", path, GH_PAGE_SIZE, what);
			json_decref(j);
			goto bad;
		}
		if (json_array_extend(all, items) == -1) {
			errfmt(err, errlen, "out of memory");
			json_decref(j);
			goto bad;
		}
		json_decref(j);
		if (g->next_bad) {
			errfmt(err, errlen, "GET %s: page %d: a malformed "
			    "link header", path, page);
			goto bad;
		}
		if (g->next[0] == '\0')
			return (all);
		if (page >= GH_PAGES_MAX) {
			errfmt(err, errlen, "GET %s: more than %d pages of "
			    "%s: not all checked", path, GH_PAGES_MAX, what);
			goto bad;
		}
		if (http_path_of(g->http, g->next, cur, sizeof(cur)) == -1) {
			errfmt(err, errlen, "GET %s: next page %.200s on "
			    "another host or API base, not followed", path,
			    g->next);
			goto bad;
		}
	}
 bad:
	json_decref(all);
	return (NULL);
}

/*
 * Exactly what was asked for: one repository, ours; contents and
 * pull_requests write, checks write when there are attestations to
 * attach; metadata read (GitHub adds it to every token).
 */
static int
gh_grant_ok(const struct gh_conf *c, json_t *t, int checks, char *why,
    size_t whylen)
{
	json_t		*perms, *repos, *v, *id;
	const char	*k, *want;
	int		 nwrite = 0;

	perms = json_object_get(t, "permissions");
	repos = json_object_get(t, "repositories");
	if (!json_is_object(perms))
		return (errfmt(why, whylen, "no permissions in the grant"));
	json_object_foreach(perms, k, v) {
		if (strcmp(k, "contents") == 0 ||
		    strcmp(k, "pull_requests") == 0 ||
		    (checks && strcmp(k, "checks") == 0)) {
			want = "write";
			nwrite++;
		} else if (strcmp(k, "metadata") == 0)
			want = "read";
		else
			return (errfmt(why, whylen, "permission %.64s "
			    "granted", k));
		if (!json_is_string(v) || strcmp(json_string_value(v),
		    want) != 0)
			return (errfmt(why, whylen, "permission %s is not "
			    "%s", k, want));
	}
	if (nwrite != 2 + (checks != 0))
		return (errfmt(why, whylen, "contents, pull_requests%s "
		    "write missing", checks ? " or checks" : ""));
	if ((v = json_object_get(t, "repository_selection")) != NULL &&
	    (!json_is_string(v) || strcmp(json_string_value(v),
	    "selected") != 0))
		return (errfmt(why, whylen, "repository selection is not "
		    "\"selected\""));
	if (!json_is_array(repos) || json_array_size(repos) != 1 ||
	    !json_is_integer(id = json_object_get(json_array_get(repos, 0),
	    "id")) || (uint64_t)json_integer_value(id) != c->repository_id)
		return (errfmt(why, whylen, "repositories is not exactly "
		    "[%" PRIu64 "]", c->repository_id));
	return (0);
}

/*
 * What the installation was granted, asked with the App's JWT (REST
 * "Get an installation for the authenticated app",
 * docs.github.com/en/rest/apps/apps#get-an-installation-for-the-
 * authenticated-app).  A token request for a permission the
 * installation lacks is refused whole (422 "The permissions requested
 * are not granted to this installation": "Create an installation
 * access token for an app", same page), so the publisher asks for
 * checks: write only where it was granted, and says so where it was
 * not: the attestations then go out in the pull request's body only.
 */
static int
gh_installation(struct gh *g, char *err, size_t errlen)
{
	const struct gh_conf	*c = g->conf;
	json_t			*inst, *perms, *v;
	const char		*need[] = { "contents", "pull_requests" };
	char			 path[96];
	size_t			 i;

	snprintf(path, sizeof(path), "/app/installations/%" PRIu64,
	    c->installation_id);
	if ((inst = gh_api_json(g, "GET", path, GH_AUTH_JWT, NULL, 200, NULL,
	    err, errlen)) == NULL)
		return (-1);
	v = json_object_get(inst, "suspended_at");
	if (v != NULL && !json_is_null(v)) {
		json_decref(inst);
		return (errfmt(err, errlen, "installation %" PRIu64 " is "
		    "suspended", c->installation_id));
	}
	if (!json_is_object(perms = json_object_get(inst, "permissions"))) {
		json_decref(inst);
		return (errfmt(err, errlen, "GET %s: no permissions", path));
	}
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!json_is_string(v = json_object_get(perms, need[i])) ||
		    strcmp(json_string_value(v), "write") != 0) {
			json_decref(inst);
			return (errfmt(err, errlen, "installation %" PRIu64
			    " was not granted %s: write (the App needs "
			    "Contents and Pull requests, read and write: "
			    "factoryd.conf(5))", c->installation_id,
			    need[i]));
		}
	v = json_object_get(perms, "checks");
	g->checks = g->as.count > 0 && json_is_string(v) &&
	    strcmp(json_string_value(v), "write") == 0;
	if (g->as.count > 0 && !g->checks)
		log_info("%s: installation %" PRIu64 " has no checks: write: "
		    "the attestations go in the pull request's body, not in "
		    "a check run", g->req->attempt, c->installation_id);
	json_decref(inst);
	return (0);
}

static int
gh_token(struct gh *g, char *err, size_t errlen)
{
	const struct gh_conf	*c = g->conf;
	json_t			*body, *t;
	const char		*tok;
	char			 path[128], why[256];
	size_t			 i, len;
	int			 rv = -1;

	if ((g->jwt = gh_jwt(c, err, errlen)) == NULL)
		return (-1);
	if (gh_installation(g, err, errlen) == -1) {
		gh_secret_free(&g->jwt);
		return (-1);
	}
	snprintf(path, sizeof(path), "/app/installations/%" PRIu64
	    "/access_tokens", c->installation_id);
	body = json_pack("{s:[I], s:{s:s, s:s}}", "repository_ids",
	    (json_int_t)c->repository_id, "permissions", "contents", "write",
	    "pull_requests", "write");
	/* A check run carries the attestations: nothing wider. */
	if (body != NULL && g->checks)
		json_object_set_new(json_object_get(body, "permissions"),
		    "checks", json_string("write"));
	t = gh_api_json(g, "POST", path, GH_AUTH_JWT, body, 201, NULL, err,
	    errlen);
	json_decref(body);
	gh_secret_free(&g->jwt);	/* the grant, then the token */
	if (t == NULL)
		return (-1);
	tok = json_string_value(json_object_get(t, "token"));
	len = tok != NULL ? strlen(tok) : 0;
	for (i = 0; i < len; i++)
		if (tok[i] <= ' ' || tok[i] > '~')
			break;
	if (len == 0 || len > GH_TOKEN_MAX || i != len) {
		errfmt(err, errlen, "POST %s: no usable token in the answer",
		    path);
		goto done;
	}
	if ((g->token = strdup(tok)) == NULL) {
		errfmt(err, errlen, "token: out of memory");
		goto done;
	}
	if (gh_grant_ok(c, t, g->checks, why, sizeof(why)) == -1) {
		/* Do not hold more than asked for: publish_github's one
		 * way out revokes it at once. */
		errfmt(err, errlen, "installation token refused and "
		    "revoked: %s", why);
		goto done;
	}
	log_info("%s: installation token for repository %" PRIu64 ", "
	    "expires %.32s", g->req->attempt, c->repository_id,
	    json_is_string(json_object_get(t, "expires_at")) ?
	    json_string_value(json_object_get(t, "expires_at")) : "?");
	rv = 0;
 done:
	json_decref(t);		/* gh_wipe_init: wiped on free */
	return (rv);
}

/* Always, also after a failure: a token nobody holds is still live. */
static void
gh_revoke(struct gh *g)
{
	struct http_resp	 r;
	char			 err[512];

	if (g->token == NULL)
		return;
	/* Its own tries and time: a spent publication still revokes. */
	g->waited = 0;
	g->deadline = net_now() + (int64_t)g->conf->timeout * 3000 +
	    GH_BACKOFF_MAX * 1000;
	if (gh_api(g, "DELETE", "/installation/token", GH_AUTH_TOKEN, NULL,
	    &r, err, sizeof(err)) == -1)
		log_warnx("%s: token not revoked: %s", g->req->attempt, err);
	else {
		if (r.status == 204)
			log_info("%s: installation token revoked",
			    g->req->attempt);
		else {
			gh_api_error("DELETE", "/installation/token", &r, err,
			    sizeof(err));
			log_warnx("%s: token not revoked: %s",
			    g->req->attempt, err);
		}
		http_resp_free(&r);
	}
	gh_secret_free(&g->token);
}

/*
 * The repository's entry names it "owner/name" (full_name).  Renamed or
 * transferred, its old name answered a redirect that led here: the new
 * name is used from now on, and the operator told to write it down.
 */
static int
gh_moved(struct gh *g, json_t *j, char *err, size_t errlen)
{
	const char	*full;
	char		 owner[128], repo[128], *slash;

	if ((full = json_string_value(json_object_get(j, "full_name"))) ==
	    NULL || strlen(full) >= sizeof(owner) ||
	    (slash = strchr(full, '/')) == NULL)
		return (errfmt(err, errlen, "%s/%s: no full_name", g->owner,
		    g->repo));
	strlcpy(owner, full, sizeof(owner));
	owner[slash - full] = '\0';
	strlcpy(repo, slash + 1, sizeof(repo));
	if (!gh_name_ok(owner, 39) || !gh_name_ok(repo, 100))
		return (errfmt(err, errlen, "%s/%s: full_name is not a "
		    "repository's name", g->owner, g->repo));
	if (strcasecmp(owner, g->owner) == 0 && strcasecmp(repo,
	    g->repo) == 0)
		return (0);
	log_warnx("%s: repository %" PRIu64 " moved: %s/%s is now %s/%s; "
	    "published there (update owner and repo in factoryd.conf)",
	    g->req->attempt, g->conf->repository_id, g->owner, g->repo,
	    owner, repo);
	strlcpy(g->owner, owner, sizeof(g->owner));
	strlcpy(g->repo, repo, sizeof(g->repo));
	return (0);
}

/*
 * The configured owner/repo must be the configured repository id:
 * a name now another repository's is refused, whereas a rename or a
 * transfer (a redirect to the same id) is followed.  Its entry tells
 * where git goes.
 */
static int
gh_repo(struct gh *g, char *err, size_t errlen)
{
	const struct gh_conf	*c = g->conf;
	json_t			*j, *id;
	const char		*url;
	char			 path[300];
	int			 rv = -1;

	snprintf(path, sizeof(path), "/repos/%s/%s", g->owner, g->repo);
	if ((j = gh_api_json(g, "GET", path, GH_AUTH_TOKEN, NULL, 200, NULL,
	    err, errlen)) == NULL)
		return (-1);
	id = json_object_get(j, "id");
	url = json_string_value(json_object_get(j, "clone_url"));
	if (!json_is_integer(id) || (uint64_t)json_integer_value(id) !=
	    c->repository_id)
		errfmt(err, errlen, "%s/%s is not repository %" PRIu64,
		    g->owner, g->repo, c->repository_id);
	else if (url == NULL || strncmp(url, "https://", 8) != 0 ||
	    strpbrk(url, "@?#") != NULL || strlcpy(g->clone_url, url,
	    sizeof(g->clone_url)) >= sizeof(g->clone_url))
		errfmt(err, errlen, "%s/%s: clone_url is not a plain https "
		    "URL", g->owner, g->repo);
	else
		rv = gh_moved(g, j, err, errlen);
	json_decref(j);
	return (rv);
}

/* The token, once per git operation: a refused token is final. */
static int
gh_cred(git_credential **out, const char *url, const char *user,
    unsigned int allowed, void *payload)
{
	struct gh	*g = payload;

	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) == 0 ||
	    g->token == NULL || g->cred_calls++ >= GH_CRED_TRIES)
		return (GIT_EAUTH);
	return (git_credential_userpass_plaintext_new(out, "x-access-token",
	    g->token));
}

/*
 * What the forge's side of the push printed ("remote: ..." in git): a
 * hook's refusal says why there, as GitHub's branch protection and
 * rulesets do ("GH006: Protected branch update failed for REF.", "About
 * protected branches", docs.github.com/en/repositories/configuring-
 * branches-and-merges-in-your-repository/managing-protected-branches/
 * about-protected-branches; "GH013: Repository rule violations found
 * for REF.").  Kept bounded, printable, one line; progress lines
 * ("NN% (a/b)") are passed over.
 */
static int
gh_push_message(const char *str, int len, void *payload)
{
	struct gh	*g = payload;
	size_t		 n = strlen(g->push_msg);
	int		 i, start, cont;

	for (start = 0; start < len; start = i + 1) {
		for (i = start; i < len && str[i] != '\n' && str[i] != '\r';
		    i++)
			;
		/* A line may come in two pieces: no space inside it. */
		cont = start == 0 && g->push_open;
		g->push_open = i == len;
		if (i == start || memmem(str + start, i - start, "% (",
		    3) != NULL)
			continue;
		if (n > 0 && !cont && n + 1 < sizeof(g->push_msg))
			g->push_msg[n++] = ' ';
		for (; start < i && n + 1 < sizeof(g->push_msg); start++)
			g->push_msg[n++] = (unsigned char)str[start] < 0x20 ||
			    (unsigned char)str[start] > 0x7e ? '?' :
			    str[start];
		g->push_msg[n] = '\0';
	}
	return (0);
}

/* The forge's word on each ref of the push: NULL status means taken. */
static int
gh_push_status(const char *ref, const char *status, void *payload)
{
	struct gh	*g = payload;
	char		*p;

	if (status != NULL) {
		snprintf(g->push_why, sizeof(g->push_why), "%s: %s", ref,
		    status);
		/* The forge's bytes: no controls in a log line. */
		for (p = g->push_why; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 ||
			    (unsigned char)*p > 0x7e)
				*p = '?';
	}
	return (0);
}

/* The cache, opened or made, and flocked: *lockfd to close after. */
static git_repository *
gh_cache_open(struct gh *g, int *lockfd, char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	char		 path[PATH_MAX], lock[PATH_MAX];

	snprintf(path, sizeof(path), "%s/gh-%" PRIu64 ".git",
	    g->conf->scratch, g->conf->repository_id);
	snprintf(lock, sizeof(lock), "%s/gh-%" PRIu64 ".lock",
	    g->conf->scratch, g->conf->repository_id);
	if ((*lockfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1 || flock(*lockfd, LOCK_EX) == -1) {
		errfmt(err, errlen, "%s: %s", lock, strerror(errno));
		if (*lockfd != -1)
			close(*lockfd);
		*lockfd = -1;
		return (NULL);
	}
	if (git_repository_open_bare(&repo, path) < 0 &&
	    git_repository_init(&repo, path, 1) < 0) {
		gitc_err(err, errlen, "cache %s", path);
		close(*lockfd);
		*lockfd = -1;
		return (NULL);
	}
	return (repo);
}

/*
 * A libgit2 call failed: err as gitc_err, and whether trying again
 * may mend it (the network, HTTP or TLS layer; not a refused
 * credential or certificate).
 */
static int
gh_git_failed(struct gh *g, int code, char *err, size_t errlen,
    const char *fmt, ...)
{
	const git_error	*e = git_error_last();
	va_list		 ap;
	size_t		 n;

	g->git_transient = code != GIT_EAUTH && code != GIT_ECERTIFICATE &&
	    e != NULL && (e->klass == GIT_ERROR_NET ||
	    e->klass == GIT_ERROR_HTTP || e->klass == GIT_ERROR_SSL ||
	    e->klass == GIT_ERROR_OS);
	if (errlen == 0)
		return (-1);
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	n = strlen(err);
	if (e != NULL && e->message != NULL && n < errlen)
		snprintf(err + n, errlen - n, ": %s", e->message);
	return (-1);
}

/*
 * A fetch or push, tried again (GH_TRIES in all, with the API's
 * backoff) while it fails for a reason that may mend.  Each try runs
 * from its start: a fresh connection, the forge's refs read again.
 */
static int
gh_git_retry(struct gh *g, int (*op)(struct gh *, git_repository *, int *,
    char *, size_t), git_repository *repo, int *arg, char *err,
    size_t errlen)
{
	size_t	 n;
	long	 wait;
	int	 try;

	for (try = 1; ; try++) {
		g->git_transient = 0;
		net_git_limits(g->conf->timeout, g->deadline);
		if (op(g, repo, arg, err, errlen) == 0)
			return (0);
		if (!g->git_transient)
			return (-1);
		if (try >= GH_TRIES) {
			n = strlen(err);
			snprintf(err + n, errlen - n, " (gave up after %d "
			    "tries)", try);
			return (-1);
		}
		wait = (1L << (try - 1)) > GH_BACKOFF_MAX ? GH_BACKOFF_MAX :
		    1L << (try - 1);
		if (gh_backoff(g, wait, "backoff", err, errlen) == -1)
			return (-1);
	}
}

static int
gh_fetch_once(struct gh *g, git_repository *repo, int *unused, char *err,
    size_t errlen)
{
	git_fetch_options	 fo;
	git_remote		*remote = NULL;
	git_strarray		 specs;
	char			 spec[512], *sp = spec;
	int			 rc, rv = -1;

	snprintf(spec, sizeof(spec), "+refs/heads/%s:refs/forge/%s",
	    g->req->base, g->req->base);
	specs.strings = &sp;
	specs.count = 1;
	if (git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION) < 0 ||
	    git_remote_create_anonymous(&remote, repo, g->clone_url) < 0)
		return (gitc_err(err, errlen, "fetch %s", g->clone_url));
	fo.callbacks.credentials = gh_cred;
	fo.callbacks.payload = g;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	fo.update_fetchhead = 0;
	g->cred_calls = 0;
	if ((rc = git_remote_fetch(remote, &specs, &fo, NULL)) < 0)
		gh_git_failed(g, rc, err, errlen, "fetch %s of %s",
		    g->req->base, g->clone_url);
	else
		rv = 0;
	git_remote_free(remote);
	return (rv);
}

/* Fetch the base branch, for the prerequisite and its trees. */
static int
gh_fetch_base(struct gh *g, git_repository *repo, const struct pub_bundle *b,
    char *err, size_t errlen)
{
	git_odb	*odb = NULL;
	char	 hex[GIT_OID_HEXSZ + 1];
	int	 rv = -1;

	git_oid_tostr(hex, sizeof(hex), &b->prereq);
	if (git_repository_odb(&odb, repo) < 0)
		return (gitc_err(err, errlen, "cache: objects"));
	if (git_odb_exists(odb, &b->prereq)) {
		git_odb_free(odb);
		return (0);
	}
	if (gh_git_retry(g, gh_fetch_once, repo, NULL, err, errlen) == -1)
		goto done;
	if (git_odb_refresh(odb) < 0 || !git_odb_exists(odb, &b->prereq)) {
		errfmt(err, errlen, "the forge's %s does not hold the "
		    "bundle's prerequisite %s", g->req->base, hex);
		goto done;
	}
	log_debug("%s: fetched %s into the cache", g->req->attempt,
	    g->req->base);
	rv = 0;
 done:
	git_odb_free(odb);
	return (rv);
}

/*
 * What the forge holds at our branch: 0 nothing, 1 our commit, -1
 * something else (refused: a branch is never moved) or no answer.
 */
static int
gh_remote_state(git_remote *remote, struct gh *g, char *err,
    size_t errlen)
{
	const git_remote_head	**heads;
	size_t			  n, i;
	char			  hex[GIT_OID_HEXSZ + 1];

	int				  rc;

	if ((rc = git_remote_ls(&heads, &n, remote)) < 0)
		return (gh_git_failed(g, rc, err, errlen, "ls %s",
		    g->clone_url));
	for (i = 0; i < n; i++) {
		if (strcmp(heads[i]->name, g->refname) != 0)
			continue;
		git_oid_tostr(hex, sizeof(hex), &heads[i]->oid);
		if (strcmp(hex, g->req->commit) == 0)
			return (1);
		return (errfmt(err, errlen, "branch %s on the forge holds "
		    "%s, not %s", g->branch, hex, g->req->commit));
	}
	return (0);
}

/*
 * Push our branch unless the forge has it at our commit.  The command
 * goes out as "create" (old id zero), so a branch someone made since
 * the advertisement is refused by the forge, not overwritten.
 */
static int
gh_push_once(struct gh *g, git_repository *repo, int *pushed, char *err,
    size_t errlen)
{
	git_remote_callbacks	 cb;
	git_push_options	 po;
	git_remote		*remote = NULL;
	git_strarray		 specs;
	char			 spec[400], *sp = spec;
	int			 rc, rv = -1;

	*pushed = 0;
	snprintf(spec, sizeof(spec), "%s:%s", g->refname, g->refname);
	specs.strings = &sp;
	specs.count = 1;
	if (git_remote_init_callbacks(&cb, GIT_REMOTE_CALLBACKS_VERSION) < 0 ||
	    git_push_options_init(&po, GIT_PUSH_OPTIONS_VERSION) < 0 ||
	    git_remote_create_anonymous(&remote, repo, g->clone_url) < 0)
		return (gitc_err(err, errlen, "push %s", g->clone_url));
	cb.credentials = gh_cred;
	cb.push_update_reference = gh_push_status;
	cb.sideband_progress = gh_push_message;
	cb.payload = g;
	g->cred_calls = 0;
	g->push_why[0] = '\0';
	g->push_msg[0] = '\0';
	g->push_open = 0;
	if ((rc = git_remote_connect(remote, GIT_DIRECTION_PUSH, &cb, NULL,
	    NULL)) < 0) {
		gh_git_failed(g, rc, err, errlen, "push: connect %s",
		    g->clone_url);
		goto done;
	}
	if ((rc = gh_remote_state(remote, g, err, errlen)) != 0) {
		rv = rc == 1 ? 0 : -1;
		goto done;
	}
	po.callbacks = cb;
	if ((rc = git_remote_upload(remote, &specs, &po)) < 0) {
		gh_git_failed(g, rc, err, errlen, "push %s to %s", g->branch,
		    g->clone_url);
		goto done;
	}
	if (g->push_why[0] != '\0') {
		errfmt(err, errlen, "push refused by the forge: %s%s%s%s",
		    g->push_why, g->push_msg[0] != '\0' ? " (remote: " : "",
		    g->push_msg, g->push_msg[0] != '\0' ? ")" : "");
		goto done;
	}
	*pushed = 1;
	rv = 0;
 done:
	git_remote_disconnect(remote);
	git_remote_free(remote);
	return (rv);
}

/* The tip is in the cache already, a commit grown from the prereq. */
static int
gh_cached(git_repository *repo, const struct pub_bundle *b)
{
	git_commit	*c;

	if (git_commit_lookup(&c, repo, &b->tip) < 0)
		return (0);
	git_commit_free(c);
	return (git_graph_descendant_of(repo, &b->tip, &b->prereq) == 1);
}

static int
gh_git(struct gh *g, const struct pub_bundle *b, int *pushed, char *err,
    size_t errlen)
{
	git_repository	*repo;
	git_reference	*ref = NULL;
	int		 lockfd, rv = -1;

	net_git_init();
	if (git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, g->conf->ca,
	    NULL) < 0)
		return (gitc_err(err, errlen, "CA file %s", g->conf->ca));
	if ((repo = gh_cache_open(g, &lockfd, err, errlen)) == NULL)
		return (-1);
	if (gh_fetch_base(g, repo, b, err, errlen) == -1)
		goto done;
	/* Indexed by an earlier run (a replay): the same checks hold. */
	if (!gh_cached(repo, b) && pub_import(repo, g->req, b, err,
	    errlen) == -1)
		goto done;
	/* The cache is ours: its copy of the branch may be overwritten. */
	if (git_reference_create(&ref, repo, g->refname, &b->tip, 1,
	    "factory: publish") < 0) {
		gitc_err(err, errlen, "cache: %s", g->refname);
		goto done;
	}
	rv = gh_git_retry(g, gh_push_once, repo, pushed, err, errlen);
 done:
	git_reference_free(ref);
	git_repository_free(repo);
	close(lockfd);
	return (rv);
}

/*
 * The pull requests whose head is branch in our repository, in any
 * state, from the forge's list, judged strictly: an entry that is not
 * an object with a head is garbage and refuses the whole answer, and
 * one of ours must say its number, state ("open" or "closed"), whether
 * it was merged and its html_url.  Entries of other heads (the filter
 * ignored) or of other repositories (a fork's branch of the same name)
 * are not ours and are passed over.  0 with *out (ours) set, or -1.
 */
static int
gh_pulls_of(struct gh *g, const char *branch, json_t **out, char *err,
    size_t errlen)
{
	const struct gh_conf	*c = g->conf;
	json_t			*arr, *pr, *head, *id, *st, *mg, *n, *html;
	const char		*ref;
	char			 path[512];
	size_t			 i;

	*out = NULL;
	snprintf(path, sizeof(path), "/repos/%s/%s/pulls?head=%s:%s"
	    "&state=all&per_page=100", g->owner, g->repo, g->owner, branch);
	if ((arr = gh_api_list(g, path, NULL, "pull requests", err,
	    errlen)) == NULL)
		return (-1);
	if ((*out = json_array()) == NULL) {
		json_decref(arr);
		return (errfmt(err, errlen, "out of memory"));
	}
	json_array_foreach(arr, i, pr) {
		head = json_object_get(pr, "head");
		ref = json_string_value(json_object_get(head, "ref"));
		if (!json_is_object(pr) || ref == NULL) {
			errfmt(err, errlen, "GET %s: entry %zu is not a "
			    "pull request", path, i);
			goto bad;
		}
		/* Check the filter's work: without OWNER: it matches all. */
		id = json_object_get(json_object_get(head, "repo"), "id");
		if (strcmp(ref, branch) != 0 || !json_is_integer(id) ||
		    (uint64_t)json_integer_value(id) != c->repository_id)
			continue;
		n = json_object_get(pr, "number");
		st = json_object_get(pr, "state");
		mg = json_object_get(pr, "merged_at");
		html = json_object_get(pr, "html_url");
		if (!json_is_integer(n) || json_integer_value(n) <= 0 ||
		    json_integer_value(n) > INT_MAX || !json_is_string(st) ||
		    (strcmp(json_string_value(st), "open") != 0 &&
		    strcmp(json_string_value(st), "closed") != 0) ||
		    (mg != NULL && !json_is_null(mg) && !json_is_string(mg)) ||
		    !json_is_string(html) || json_string_length(html) >=
		    PATH_MAX) {
			errfmt(err, errlen, "GET %s: pull request of %s "
			    "without a number, a state or an html_url", path,
			    branch);
			goto bad;
		}
		if (json_array_append(*out, pr) == -1) {
			errfmt(err, errlen, "out of memory");
			goto bad;
		}
	}
	json_decref(arr);
	return (0);
 bad:
	json_decref(arr);
	json_decref(*out);
	*out = NULL;
	return (-1);
}

static int
gh_pull_open(json_t *pr)
{
	return (strcmp(json_string_value(json_object_get(pr, "state")),
	    "open") == 0);
}

static int
gh_pull_merged(json_t *pr)
{
	return (json_is_string(json_object_get(pr, "merged_at")));
}

/*
 * The pull request whose head is our branch in our repository, in any
 * state: a closed one is the attempt's answer too, and publishing
 * again must not open a second.  An open one comes first, then the
 * lowest number.  1 found (*open says whether it is), 0 none, -1 no
 * answer.
 */
static int
gh_pull_find(struct gh *g, int *number, int *open, int *merged, char *url,
    size_t urllen, char *err, size_t errlen)
{
	json_t		*ours, *pr, *best = NULL;
	size_t		 i;
	json_int_t	 n;

	*number = *open = *merged = 0;
	if (gh_pulls_of(g, g->branch, &ours, err, errlen) == -1)
		return (-1);
	json_array_foreach(ours, i, pr) {
		n = json_integer_value(json_object_get(pr, "number"));
		if (best == NULL || (gh_pull_open(pr) && !gh_pull_open(best)) ||
		    (gh_pull_open(pr) == gh_pull_open(best) &&
		    n < json_integer_value(json_object_get(best, "number"))))
			best = pr;
	}
	if (best != NULL) {
		if (strlcpy(url, json_string_value(json_object_get(best,
		    "html_url")), urllen) >= urllen) {
			json_decref(ours);
			return (errfmt(err, errlen, "pull request: html_url "
			    "too long"));
		}
		*number = (int)json_integer_value(json_object_get(best,
		    "number"));
		*open = gh_pull_open(best);
		*merged = gh_pull_merged(best);
	}
	json_decref(ours);
	return (best != NULL);
}

/*
 * PATCH the state of pull request n to want ("open" or "closed"); the
 * answer must be that pull request in that state.
 */
static int
gh_pull_state(struct gh *g, int n, const char *want, int *status,
    char *err, size_t errlen)
{
	json_t			*body, *pr;
	const char		*st;
	char			 path[300];
	int			 rv = -1;

	snprintf(path, sizeof(path), "/repos/%s/%s/pulls/%d", g->owner,
	    g->repo, n);
	if ((body = json_pack("{s:s}", "state", want)) == NULL)
		return (errfmt(err, errlen, "out of memory"));
	pr = gh_api_json(g, "PATCH", path, GH_AUTH_TOKEN, body, 200, status,
	    err, errlen);
	json_decref(body);
	if (pr == NULL)
		return (-1);
	st = json_string_value(json_object_get(pr, "state"));
	if (json_integer_value(json_object_get(pr, "number")) != n ||
	    st == NULL || strcmp(st, want) != 0)
		errfmt(err, errlen, "PATCH %s: the answer does not say "
		    "pull request %d is %s", path, n, want);
	else
		rv = 0;
	json_decref(pr);
	return (rv);
}

/*
 * What the forge holds at a branch: 0 nothing, 1 commit, -1 another
 * commit or no answer.  The reason for another commit ends with the
 * caller's words other ("": none; a superseded member's branch holding
 * another is never deleted, it is not what we pushed).
 */
static int
gh_branch_state(struct gh *g, const char *branch, const char *commit,
    const char *other, char *err, size_t errlen)
{
	json_t			*j;
	const char		*ref, *sha;
	char			 path[400], want[300];
	int			 status = 0, rv = -1;

	snprintf(path, sizeof(path), "/repos/%s/%s/git/ref/heads/%s",
	    g->owner, g->repo, branch);
	snprintf(want, sizeof(want), "refs/heads/%s", branch);
	if ((j = gh_api_json(g, "GET", path, GH_AUTH_TOKEN, NULL, 200,
	    &status, err, errlen)) == NULL)
		return (status == 404 ? 0 : -1);
	ref = json_string_value(json_object_get(j, "ref"));
	sha = json_string_value(json_object_get(json_object_get(j, "object"),
	    "sha"));
	if (ref == NULL || strcmp(ref, want) != 0 || sha == NULL)
		errfmt(err, errlen, "GET %s: not the ref %s", path, want);
	else if (strcmp(sha, commit) != 0)
		errfmt(err, errlen, "branch %s on the forge holds %.40s, not "
		    "%s%s", branch, sha, commit, other);
	else
		rv = 1;
	json_decref(j);
	return (rv);
}

/*
 * DELETE the branch.  GitHub answers 422 both for "Reference does not
 * exist" (deleted meanwhile: a retry) and for a deletion it refuses (a
 * rule protecting the branch): the message is not parsed, the ref is
 * looked up again and only its absence (404) is taken for deleted.
 */
static int
gh_branch_delete(struct gh *g, const char *branch, const char *commit,
    char *err, size_t errlen)
{
	struct http_resp	 r;
	char			 path[400], why[256], serr[256];
	int			 status, rv = -1;

	snprintf(path, sizeof(path), "/repos/%s/%s/git/refs/heads/%s",
	    g->owner, g->repo, branch);
	if (gh_api(g, "DELETE", path, GH_AUTH_TOKEN, NULL, &r, err,
	    errlen) == -1)
		return (-1);
	status = r.status;
	if (status == 204)
		rv = 0;
	else
		gh_api_error("DELETE", path, &r, err, errlen);
	http_resp_free(&r);
	if (status != 422)
		return (rv);
	strlcpy(why, err, sizeof(why));
	if (gh_branch_state(g, branch, commit, ": not deleted", serr,
	    sizeof(serr)) == 0)
		return (0);
	return (errfmt(err, errlen, "%s: the branch is not gone",
	    why));
}

/*
 * Open pull requests whose base is branch: a person's fix-up proposed
 * against a member's branch, which deleting the branch would close.
 * Checked as strictly as the list of our own: a list, not a full page,
 * each entry a pull request with a number.  Their numbers ("#4, #7")
 * in keep; 1 some, 0 none, -1 no usable answer.
 */
static int
gh_pulls_based(struct gh *g, const char *branch, char *keep, size_t keeplen,
    char *err, size_t errlen)
{
	json_t			*arr, *pr, *n, *st;
	const char		*ref;
	char			 path[512], num[32];
	size_t			 i;
	int			 found = 0;

	keep[0] = '\0';
	snprintf(path, sizeof(path), "/repos/%s/%s/pulls?base=%s"
	    "&state=open&per_page=100", g->owner, g->repo, branch);
	if ((arr = gh_api_list(g, path, NULL, "pull requests", err,
	    errlen)) == NULL)
		return (-1);
	json_array_foreach(arr, i, pr) {
		ref = json_string_value(json_object_get(json_object_get(pr,
		    "base"), "ref"));
		n = json_object_get(pr, "number");
		st = json_object_get(pr, "state");
		if (!json_is_object(pr) || ref == NULL || !json_is_integer(n) ||
		    json_integer_value(n) <= 0 ||
		    json_integer_value(n) > INT_MAX || !json_is_string(st)) {
			json_decref(arr);
			return (errfmt(err, errlen, "GET %s: entry %zu is "
			    "not a pull request", path, i));
		}
		/* Check the filter's work. */
		if (strcmp(ref, branch) != 0 ||
		    strcmp(json_string_value(st), "open") != 0)
			continue;
		snprintf(num, sizeof(num), "%s#%d", found ? ", " : "",
		    (int)json_integer_value(n));
		if (strlcat(keep, num, keeplen) >= keeplen) {
			json_decref(arr);
			return (errfmt(err, errlen, "GET %s: too many",
			    path));
		}
		found = 1;
	}
	json_decref(arr);
	return (found);
}

/* err, and what was not done: "...: pull request #3 of a-1 not closed" */
static int
gh_supersede_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 n = strlen(err);

	if (n + 2 < errlen) {
		strlcat(err, ": ", errlen);
		va_start(ap, fmt);
		vsnprintf(err + n + 2, errlen - n - 2, fmt, ap);
		va_end(ap);
	}
	return (-1);
}

/*
 * A cohort's member whose selection failed may have left its pull
 * request open (the forge made it, its answer was lost) and its branch
 * pushed.  Before this member's are made, its open pull requests are
 * closed and its branch deleted: the cohort ends with one pull request
 * and one branch.  Everything is checked before anything is changed:
 * a merged pull request is refused (its work is in the base already:
 * selecting that member again records it as published), and so is a
 * branch holding another commit than the member's.  Any failure fails
 * the publication, saying why; nothing of ours is made.
 */
static int
gh_supersede(struct gh *g, const struct msg_superseded *s, char *err,
    size_t errlen)
{
	json_t		*ours, *pr;
	char		 branch[128], keep[1400];
	size_t		 i;
	int		 num, present, based, closed = 0, rv = -1;

	snprintf(branch, sizeof(branch), "%s%s", PUB_BRANCH_PREFIX, s->id);
	if (gh_pulls_of(g, branch, &ours, err, errlen) == -1)
		return (gh_supersede_fail(err, errlen, "pull requests of %s "
		    "not checked", s->id));
	json_array_foreach(ours, i, pr)
		if (gh_pull_merged(pr)) {
			errfmt(err, errlen, "pull request #%d of %s, whose "
			    "selection failed, was merged: %s is not published "
			    "over it", (int)json_integer_value(
			    json_object_get(pr, "number")), s->id,
			    g->req->attempt);
			goto done;
		}
	if ((present = gh_branch_state(g, branch, s->commit,
	    ": not deleted", err, errlen)) == -1) {
		gh_supersede_fail(err, errlen, "branch of %s not checked",
		    s->id);
		goto done;
	}
	json_array_foreach(ours, i, pr) {
		if (!gh_pull_open(pr))
			continue;
		num = (int)json_integer_value(json_object_get(pr, "number"));
		if (gh_pull_state(g, num, "closed", NULL, err, errlen) == -1) {
			gh_supersede_fail(err, errlen, "pull request #%d of %s "
			    "not closed", num, s->id);
			goto done;
		}
		log_info("%s: closed pull request #%d of %s, superseded in "
		    "cohort %s", g->req->attempt, num, s->id, g->req->cohort);
		closed++;
	}
	/*
	 * Deleting the branch closes every open pull request based on it:
	 * a person's fix-up proposed against it keeps it.
	 */
	if (present && (based = gh_pulls_based(g, branch, keep, sizeof(keep),
	    err, errlen)) == -1) {
		gh_supersede_fail(err, errlen, "pull requests into %s not "
		    "checked: branch of %s not deleted", branch, s->id);
		goto done;
	}
	if (present && based) {
		log_warnx("%s: branch %s of %s kept: the base of open pull "
		    "request%s %s", g->req->attempt, branch, s->id,
		    strchr(keep, ',') != NULL ? "s" : "", keep);
		present = 2;
	}
	/*
	 * Looked up again right before the DELETE: the branch moved since
	 * is not deleted.  The REST API has no conditional delete: a push
	 * between this answer and the DELETE is not seen (factoryctl(8)).
	 */
	if (present == 1 && (present = gh_branch_state(g, branch, s->commit,
	    ": not deleted", err, errlen)) == -1) {
		gh_supersede_fail(err, errlen, "branch of %s not checked again",
		    s->id);
		goto done;
	}
	if (present == 1 && gh_branch_delete(g, branch, s->commit, err,
	    errlen) == -1) {
		gh_supersede_fail(err, errlen, "branch %s of %s not deleted",
		    branch, s->id);
		goto done;
	}
	log_info("%s: %s superseded: %d pull request%s closed, branch %s",
	    g->req->attempt, s->id, closed, closed == 1 ? "" : "s",
	    present == 2 ? "kept" : present ? "deleted" : "absent");
	rv = 0;
 done:
	json_decref(ours);
	return (rv);
}

/*
 * Create it; on 422 (GitHub's answer to a duplicate, among others)
 * look again instead of parsing the message.
 */
static int
gh_pull_create(struct gh *g, int *number, char *url, size_t urllen,
    int *created, char *err, size_t errlen)
{
	json_t			*body, *pr;
	const char		*html;
	char			 path[300], text[1024], ferr[512];
	json_int_t		 n;
	int			 status = 0, rc, open, merged;

	*created = 0;
	snprintf(path, sizeof(path), "/repos/%s/%s/pulls", g->owner, g->repo);
	snprintf(text, sizeof(text), "Published by factory.\n\n"
	    "Attempt: %s\nCommit: %s\n", g->req->attempt, g->req->commit);
	if (g->as.count > 0 && g->checks)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
		    "\nVerification: %s, verifier key %s; provenance by %s. "
		    "The check run \"%s\" carries the attestations "
		    "(factoryctl verify -a -K %s,%s, once you trust these "
		    "keys).\n", g->as.result, g->as.verifier_key,
		    g->as.builder_key, GH_CHECK_NAME, g->as.builder_key,
		    g->as.verifier_key);
	else if (g->as.count > 0)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
		    "\nVerification: %s, verifier key %s; provenance by %s. "
		    "No check run carries the attestations: the App was not "
		    "granted Checks. On the factory host, factoryctl attest "
		    "%s prints them (factoryctl verify -a -K %s,%s, once you "
		    "trust these keys).\n", g->as.result, g->as.verifier_key,
		    g->as.builder_key, g->req->attempt, g->as.builder_key,
		    g->as.verifier_key);
	body = json_pack("{s:s, s:s, s:s, s:s, s:b}", "title", g->req->title,
	    "head", g->branch, "base", g->req->base, "body", text,
	    "maintainer_can_modify", 0);
	if (body == NULL)
		return (errfmt(err, errlen, "pull request: title or base "
		    "is not valid UTF-8"));
	pr = gh_api_json(g, "POST", path, GH_AUTH_TOKEN, body, 201, &status,
	    err, errlen);
	json_decref(body);
	if (pr == NULL && status == 422) {
		if ((rc = gh_pull_find(g, number, &open, &merged, url, urllen,
		    ferr, sizeof(ferr))) == 1 && open) {
			log_info("%s: pull request created meanwhile: #%d",
			    g->req->attempt, *number);
			return (0);
		}
		if (rc == -1)
			errfmt(err, errlen, "%s", ferr);
		else if (rc == 1)
			errfmt(err, errlen, "POST %s: 422, and pull request "
			    "#%d of %s is closed", path, *number, g->branch);
		*number = 0;
		url[0] = '\0';
		return (-1);
	}
	if (pr == NULL)
		return (-1);
	n = json_integer_value(json_object_get(pr, "number"));
	html = json_string_value(json_object_get(pr, "html_url"));
	if (n <= 0 || n > INT_MAX || html == NULL ||
	    strlcpy(url, html, urllen) >= urllen) {
		json_decref(pr);
		return (errfmt(err, errlen, "POST %s: no number or html_url",
		    path));
	}
	*number = (int)n;
	*created = 1;
	json_decref(pr);
	return (0);
}

/*
 * Our check run on the commit, found by its external_id (the attempt):
 * 1 found, 0 none, -1 no answer.  A replay after a crash between the
 * pull request and the check run creates the one missing, never two.
 */
static int
gh_check_find(struct gh *g, char *err, size_t errlen)
{
	json_t			*runs, *r;
	const char		*ext;
	char			 path[512];
	size_t			 i;
	int			 found = 0;

	snprintf(path, sizeof(path), "/repos/%s/%s/commits/%s/check-runs"
	    "?check_name=%s&per_page=100", g->owner, g->repo, g->req->commit,
	    GH_CHECK_NAME);
	if ((runs = gh_api_list(g, path, "check_runs", "check runs", err,
	    errlen)) == NULL)
		return (-1);
	json_array_foreach(runs, i, r) {
		ext = json_string_value(json_object_get(r, "external_id"));
		if (ext != NULL && strcmp(ext, g->req->attempt) == 0)
			found = 1;
	}
	json_decref(runs);
	return (found);
}

/* The envelopes as output.text: a block a reviewer copies to verify. */
static char *
gh_check_text(const struct publish_req *req)
{
	char	*t;
	size_t	 i, len = 64;

	for (i = 0; i < req->nattest; i++)
		len += strlen(req->attest[i]) + 1;
	if (len > GH_CHECK_TEXT_MAX || (t = malloc(len)) == NULL)
		return (NULL);
	strlcpy(t, "```\n", len);
	for (i = 0; i < req->nattest; i++) {
		strlcat(t, req->attest[i], len);
		strlcat(t, "\n", len);
	}
	strlcat(t, "```\n", len);
	return (t);
}

/*
 * The verdict and its evidence on the pushed commit: a completed check
 * run, its summary the parent's text, its text the envelopes.
 */
static int
gh_check_run(struct gh *g, char *err, size_t errlen)
{
	const struct publish_req *req = g->req;
	json_t			*body, *r;
	char			 path[300], title[128], *text;
	int			 rc;

	if (!g->checks)
		return (0);
	if ((rc = gh_check_find(g, err, errlen)) != 0) {
		if (rc == 1)
			log_info("%s: check run reused", req->attempt);
		return (rc == 1 ? 0 : -1);
	}
	snprintf(path, sizeof(path), "/repos/%s/%s/check-runs", g->owner,
	    g->repo);
	snprintf(title, sizeof(title), "factory: verification %s",
	    g->as.result);
	text = gh_check_text(req);
	body = json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s?}}",
	    "name", GH_CHECK_NAME, "head_sha", req->commit, "external_id",
	    req->attempt, "status", "completed", "conclusion",
	    strcmp(g->as.result, "PASSED") == 0 ? "success" : "failure",
	    "output", "title", title, "summary", req->summary != NULL ?
	    req->summary : title, "text", text);
	free(text);
	if (body == NULL)
		return (errfmt(err, errlen, "check run: summary is not "
		    "valid UTF-8"));
	r = gh_api_json(g, "POST", path, GH_AUTH_TOKEN, body, 201, NULL, err,
	    errlen);
	json_decref(body);
	if (r == NULL)
		return (-1);
	log_info("%s: check run %lld created", req->attempt,
	    (long long)json_integer_value(json_object_get(r, "id")));
	json_decref(r);
	return (0);
}

/* Everything done with the token, which the caller revokes after. */
static int
gh_with_token(struct gh *g, const struct pub_bundle *b,
    struct publish_result *res, char *err, size_t errlen)
{
	const struct publish_req	*req = g->req;
	size_t				 i;
	int				 pushed = 0, created = 0, found;
	int				 open = 0, merged = 0, reopened = 0;
	int				 status = 0;

	if (gh_repo(g, err, errlen) == -1)
		return (-1);
	/* The cohort's failed selections go first: nothing of ours yet. */
	for (i = 0; i < req->nsupersede; i++)
		if (gh_supersede(g, &req->supersede[i], err, errlen) == -1)
			return (-1);
	if (b == NULL) {
		/* An adoption: the lost host's push is there, or nothing. */
		if ((found = gh_branch_state(g, g->branch, req->commit, "",
		    err, errlen)) == 0)
			errfmt(err, errlen, "branch %s is not on the forge: its "
			    "host was lost before the push, and the bundle "
			    "with it", g->branch);
		if (found != 1)
			return (-1);
	} else if (gh_git(g, b, &pushed, err, errlen) == -1)
		return (-1);
	if (pushed)
		log_info("%s: pushed %s at %s", req->attempt, g->branch,
		    req->commit);
	/*
	 * The check run (on the pushed commit) before the pull request:
	 * the pull request is the last thing made, so a publication that
	 * fails has opened none, and a cohort whose selection failed may
	 * select another member without a second pull request.
	 */
	if (gh_check_run(g, err, errlen) == -1)
		return (-1);
	if ((found = gh_pull_find(g, &res->number, &open, &merged,
	    res->record, sizeof(res->record), err, errlen)) == -1)
		return (-1);
	/*
	 * A cohort's member selected again after another's selection
	 * failed: that publication closed this member's pull request (and
	 * deleted its branch, pushed again above).  The selection is the
	 * operator's word that this one is published: it is reopened.
	 */
	if (found && !open && !merged && req->cohort != NULL) {
		/*
		 * GitHub refuses to reopen (422) a pull request whose head
		 * branch was recreated or force-pushed since: a new one is
		 * opened, as a first publication would.
		 */
		if (gh_pull_state(g, res->number, "open", &status, err,
		    errlen) == 0)
			reopened = 1;
		else if (status == 422) {
			log_info("%s: pull request #%d not reopened (%s): a "
			    "new one is opened", req->attempt, res->number,
			    err);
			err[0] = '\0';
			found = 0;
		} else
			return (-1);
	}
	if (!found && gh_pull_create(g, &res->number, res->record,
	    sizeof(res->record), &created, err, errlen) == -1)
		return (-1);
	log_info("%s: pull request #%d %s", req->attempt, res->number,
	    created ? "created" : reopened ? "reopened" : "reused");
	strlcpy(res->branch, g->branch, sizeof(res->branch));
	res->reused = !pushed && !created && !reopened;
	return (0);
}

int
publish_github(const struct publish_req *req, const struct gh_conf *c,
    struct publish_result *res, char *err, size_t errlen)
{
	struct gh		 g;
	struct pub_bundle	 b;
	int			 rv = -1;

	memset(res, 0, sizeof(*res));
	if (errlen > 0)
		err[0] = '\0';
	memset(&g, 0, sizeof(g));
	if (pub_check_common(req, err, errlen) == -1 ||
	    pub_check_verdict(req, err, errlen) == -1 ||
	    pub_attest_check(req, &g.as, err, errlen) == -1)
		return (-1);
	memset(&b, 0, sizeof(b));
	if (!req->adopt && pub_bundle_header(req, &b, err, errlen) == -1)
		return (-1);

	g.req = req;
	g.conf = c;
	strlcpy(g.owner, c->owner, sizeof(g.owner));
	strlcpy(g.repo, c->repo, sizeof(g.repo));
	g.deadline = net_now() + (int64_t)(c->budget > 0 ? c->budget :
	    GH_BUDGET) * 1000;
	snprintf(g.branch, sizeof(g.branch), "%s%s", PUB_BRANCH_PREFIX,
	    req->attempt);
	snprintf(g.refname, sizeof(g.refname), "refs/heads/%s", g.branch);
	if ((g.http = http_open(c->api, c->ca, c->timeout, err, errlen)) ==
	    NULL)
		return (-1);
	/*
	 * The one way out once a token may be held: whatever gh_token or
	 * gh_with_token did or failed to do, the revocation runs.
	 */
	if (gh_token(&g, err, errlen) == 0)
		rv = gh_with_token(&g, req->adopt ? NULL : &b, res, err,
		    errlen);
	gh_revoke(&g);
	gh_secret_free(&g.jwt);
	http_close(g.http);
	if (rv == -1)
		memset(res, 0, sizeof(*res));
	return (rv);
}
