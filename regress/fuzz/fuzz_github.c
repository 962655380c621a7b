/*
 * What the publisher makes of the GitHub API's answers (publisher/
 * github.c): the installation token and its grant, the repository,
 * the pull request lookup and creation, revocation, error messages and
 * retry advice, and the "github" settings the parent sends.  The
 * forge is a stand-in: http_request() is replaced at link time
 * (--wrap) by one that answers from the input (http_parse has its own
 * harness), so github.c is built here unchanged, with its static
 * functions in reach.
 *
 * Input: one line "MODE" (token, repo, find, create, supersede, revoke,
 * conf),
 * then answers separated by NUL bytes, each a line "STATUS
 * [RETRY-AFTER [REMAINING [RESET]]]" and a body.  Once the answers run
 * out, a request fails as a dropped connection does.
 */
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "../../publisher/github.c"
#include "fuzz.h"

#define ANSWERS_MAX	8
#define URL_SMALL	96	/* a record buffer a long html_url overflows */

struct answer {
	int		 status;
	long		 retry_after, remaining;
	long long	 reset;
	const char	*body;
	size_t		 len;
};

static struct {
	struct answer	 a[ANSWERS_MAX];
	size_t		 n, next;
	const char	*last_body;	/* of the last answer handed out */
	size_t		 last_len;
	int		 deletes;	/* DELETE /installation/token sent */
	char		 deleted[GH_TOKEN_MAX + 16];
} fake;

static char	 tmpdir[64], keypath[128];

int	__wrap_http_request(struct http_conn *, const char *, const char *,
	    const char *, const char *, struct http_resp *, char *, size_t);
void	__wrap_http_deadline(struct http_conn *, int64_t);

/* There is no connection. */
void
__wrap_http_deadline(struct http_conn *hc, int64_t deadline)
{
}

int
__wrap_http_request(struct http_conn *hc, const char *method,
    const char *path, const char *auth, const char *body,
    struct http_resp *resp, char *err, size_t errlen)
{
	const struct answer	*a;

	memset(resp, 0, sizeof(*resp));
	if (strcmp(method, "DELETE") == 0 &&
	    strcmp(path, "/installation/token") == 0) {
		fake.deletes++;
		strlcpy(fake.deleted, auth != NULL ? auth : "",
		    sizeof(fake.deleted));
	}
	if (fake.next >= fake.n) {
		errfmt(err, errlen, "stand-in: connection closed");
		return (HTTP_TRANSIENT);
	}
	a = &fake.a[fake.next++];
	resp->status = a->status;
	resp->retry_after = a->retry_after;
	resp->ratelimit_remaining = a->remaining;
	resp->ratelimit_reset = a->reset;
	FUZZ_ASSERT((resp->body = malloc(a->len + 1)) != NULL, "malloc");
	memcpy(resp->body, a->body, a->len);
	resp->body[a->len] = '\0';
	resp->len = a->len;
	fake.last_body = a->body;
	fake.last_len = a->len;
	return (0);
}

static void
cleanup(void)
{
	unlink(keypath);
	rmdir(tmpdir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	EVP_PKEY	*k;
	FILE		*fp;

	/* As the publisher does, before anything allocates. */
	gh_wipe_init();
	strlcpy(tmpdir, "/tmp/factory-regress.fuzzXXXXXX", sizeof(tmpdir));
	FUZZ_ASSERT(mkdtemp(tmpdir) != NULL, "mkdtemp");
	snprintf(keypath, sizeof(keypath), "%s/app.pem", tmpdir);
	atexit(cleanup);
	FUZZ_ASSERT((k = EVP_RSA_gen(2048)) != NULL, "RSA key");
	FUZZ_ASSERT((fp = fopen(keypath, "w")) != NULL, "%s", keypath);
	FUZZ_ASSERT(PEM_write_PrivateKey(fp, k, NULL, NULL, 0, NULL, NULL) ==
	    1 && fclose(fp) == 0, "PEM");
	EVP_PKEY_free(k);
	return (0);
}

/* Cut the input into answers; returns the mode's length. */
static size_t
split(const char *d, size_t size, size_t *modelen)
{
	const char	*p, *end = d + size, *nl, *z;
	struct answer	*a;
	char		 line[128];

	memset(&fake, 0, sizeof(fake));
	if ((nl = memchr(d, '\n', size)) == NULL)
		return (0);
	*modelen = nl - d;
	for (p = nl + 1; p < end && fake.n < ANSWERS_MAX; p = z + 1) {
		if ((z = memchr(p, '\0', end - p)) == NULL)
			z = end;
		a = &fake.a[fake.n++];
		a->retry_after = a->remaining = a->reset = -1;
		if ((nl = memchr(p, '\n', z - p)) == NULL)
			nl = z;
		/* The input is not NUL-terminated: sscanf needs a string. */
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		sscanf(line, "%d %ld %ld %lld", &a->status, &a->retry_after,
		    &a->remaining, &a->reset);
		a->body = nl < z ? nl + 1 : z;
		a->len = z - a->body;
	}
	return (1);
}

static void
conf_init(struct gh_conf *c)
{
	memset(c, 0, sizeof(*c));
	strlcpy(c->api, "https://api.github.test", sizeof(c->api));
	strlcpy(c->owner, "octo", sizeof(c->owner));
	strlcpy(c->repo, "site", sizeof(c->repo));
	c->repository_id = 4242;
	strlcpy(c->app_id, "77", sizeof(c->app_id));
	c->installation_id = 99;
	strlcpy(c->key, keypath, sizeof(c->key));
	strlcpy(c->ca, "/nonexistent/ca.pem", sizeof(c->ca));
	strlcpy(c->scratch, tmpdir, sizeof(c->scratch));
	c->wait_max = 0;	/* never sleep: a wait is refused */
	c->timeout = 1;
	c->budget = 10;
}

/* The grant, read independently: exactly what gh_token asked for. */
static int
grant_exact(const char *body, size_t len, uint64_t repo)
{
	json_t		*t, *perms, *v, *repos;
	const char	*k;
	int		 ok = 1, n = 0;

	if ((t = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL)) == NULL)
		return (0);
	perms = json_object_get(t, "permissions");
	json_object_foreach(perms, k, v) {
		if (strcmp(k, "metadata") == 0)
			ok &= json_is_string(v) &&
			    strcmp(json_string_value(v), "read") == 0;
		else if (strcmp(k, "contents") == 0 ||
		    strcmp(k, "pull_requests") == 0) {
			ok &= json_is_string(v) &&
			    strcmp(json_string_value(v), "write") == 0;
			n++;
		} else
			ok = 0;
	}
	repos = json_object_get(t, "repositories");
	ok &= n == 2 && json_array_size(repos) == 1 &&
	    json_is_integer(v = json_object_get(json_array_get(repos, 0),
	    "id")) && (uint64_t)json_integer_value(v) == repo;
	v = json_object_get(t, "repository_selection");
	ok &= v == NULL || (json_is_string(v) &&
	    strcmp(json_string_value(v), "selected") == 0);
	json_decref(t);
	return (ok);
}

/*
 * As publish_github: the token, then, whatever happened, the one way
 * out that revokes what is held.
 */
static void
mode_token(struct gh *g)
{
	char	 err[512], tok[GH_TOKEN_MAX + 8];
	int	 rv;

	rv = gh_token(g, err, sizeof(err));
	FUZZ_ASSERT(g->jwt == NULL, "the JWT outlived its one use");
	if (rv == 0)
		FUZZ_ASSERT(g->token != NULL && grant_exact(fake.last_body,
		    fake.last_len, g->conf->repository_id),
		    "a wider grant was accepted");
	if (g->token == NULL)
		return;
	FUZZ_ASSERT(strlen(g->token) <= GH_TOKEN_MAX, "token");
	snprintf(tok, sizeof(tok), "token %s", g->token);
	gh_revoke(g);
	FUZZ_ASSERT(g->token == NULL && fake.deletes == 1 &&
	    strcmp(fake.deleted, tok) == 0, "not revoked with its token");
}

static void
mode_repo(struct gh *g)
{
	char	 err[512];

	if (gh_repo(g, err, sizeof(err)) == -1)
		return;
	FUZZ_ASSERT(strncmp(g->clone_url, "https://", 8) == 0 &&
	    strpbrk(g->clone_url, "@?#") == NULL, "clone_url %s",
	    g->clone_url);
}

/*
 * What gh_pull_find must make of a list: -2 refused (not a list, a full
 * page, an entry that is not a pull request, one of ours without a
 * number, state, merged_at or html_url of its kind, an html_url too
 * long), else the number it picks (0: none): ours, an open one first,
 * then the lowest.
 */
static int
pull_expected(const char *body, size_t len, const struct gh *g, size_t urllen,
    char *url, int *open)
{
	json_t		*arr, *pr, *head, *id, *st, *mg, *html;
	const char	*ref;
	json_int_t	 n, best = 0;
	size_t		 i;
	int		 o, bo = 0;

	if ((arr = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL)) ==
	    NULL)
		return (-1);
	if (!json_is_array(arr) || json_array_size(arr) >= GH_PAGE_SIZE) {
		json_decref(arr);
		return (-2);
	}
	json_array_foreach(arr, i, pr) {
		head = json_object_get(pr, "head");
		ref = json_string_value(json_object_get(head, "ref"));
		if (!json_is_object(pr) || ref == NULL) {
			best = -2;
			break;
		}
		id = json_object_get(json_object_get(head, "repo"), "id");
		if (strcmp(ref, g->branch) != 0 || !json_is_integer(id) ||
		    (uint64_t)json_integer_value(id) != g->conf->repository_id)
			continue;
		n = json_integer_value(json_object_get(pr, "number"));
		st = json_object_get(pr, "state");
		mg = json_object_get(pr, "merged_at");
		html = json_object_get(pr, "html_url");
		if (!json_is_integer(json_object_get(pr, "number")) ||
		    n <= 0 || n > INT_MAX || !json_is_string(st) ||
		    (strcmp(json_string_value(st), "open") != 0 &&
		    strcmp(json_string_value(st), "closed") != 0) ||
		    (mg != NULL && !json_is_null(mg) && !json_is_string(mg)) ||
		    !json_is_string(html) ||
		    json_string_length(html) >= PATH_MAX) {
			best = -2;
			break;
		}
		o = strcmp(json_string_value(st), "open") == 0;
		if (best != 0 && !(o && !bo) && !(o == bo && n < best))
			continue;
		best = n;
		bo = o;
		if (json_string_length(html) >= urllen)
			url[0] = '\0';	/* refused if it stays the best */
		else
			strlcpy(url, json_string_value(html), urllen);
	}
	json_decref(arr);
	if (best > 0 && url[0] == '\0')
		return (-2);
	*open = bo;
	return ((int)best);
}

static void
mode_find(struct gh *g, size_t urllen)
{
	char	 err[512], url[PATH_MAX], want[PATH_MAX];
	int	 number = -1, rv, best, open = -1, merged = -1, wopen = 0;

	memset(url, 0, sizeof(url));
	rv = gh_pull_find(g, &number, &open, &merged, url, urllen, err,
	    sizeof(err));
	want[0] = '\0';
	best = fake.last_body == NULL ? -1 : pull_expected(fake.last_body,
	    fake.last_len, g, urllen, want, &wopen);
	if (rv == -1) {
		FUZZ_ASSERT(best < 0 || fake.a[0].status != 200 ||
		    fake.n == 0, "refused a list it should take: %s", err);
		return;
	}
	FUZZ_ASSERT(best != -2, "took a list it should refuse");
	FUZZ_ASSERT(rv == (best > 0) && number == best, "found #%d, "
	    "want #%d", number, best);
	if (rv == 1)
		FUZZ_ASSERT(strcmp(url, want) == 0 && open == wopen,
		    "#%d is %s (open %d), not %s", number, want, wopen, url);
}

/*
 * A superseded member: whatever the forge answers, success means every
 * open pull request of its branch was sent a close (a PATCH answered
 * 200 "closed") and its branch was found gone or deleted.
 */
static void
mode_supersede(struct gh *g)
{
	static const struct msg_superseded s = {
		"a-20261201-0002", "0123456789abcdef0123456789abcdef01234567"
	};
	static const struct publish_req	 creq = {
		.attempt = "a-20261201-0001",
		.title = "fuzz",
		.base = "main",
		.commit = "89abcdef0123456789abcdef0123456789abcdef",
		.cohort = "c-20261201-0001",
		.supersede = &s,
		.nsupersede = 1,
	};
	char	 err[512];

	g->req = &creq;
	if (gh_supersede(g, &s, err, sizeof(err)) == -1) {
		FUZZ_ASSERT(err[0] != '\0', "failed without a reason");
		return;
	}
	FUZZ_ASSERT(fake.next >= 2, "superseded after %zu answers",
	    fake.next);
}

static void
mode_create(struct gh *g, size_t urllen)
{
	char	 err[512], url[PATH_MAX];
	int	 number = 0, created = -1;

	memset(url, 0, sizeof(url));
	if (gh_pull_create(g, &number, url, urllen, &created, err,
	    sizeof(err)) == -1)
		return;
	FUZZ_ASSERT(number > 0 && url[0] != '\0' && strlen(url) < urllen &&
	    (created == 0 || created == 1), "created #%d %s", number, url);
}

static void
mode_revoke(struct gh *g)
{
	char		 err[512];
	const char	*why;
	size_t		 i;
	long		 w;

	FUZZ_ASSERT((g->token = strdup("ghs_fuzz")) != NULL, "strdup");
	gh_revoke(g);
	FUZZ_ASSERT(g->token == NULL && fake.deletes >= 1, "not revoked");
	/* Every answer's advice and message, however odd. */
	for (i = 0; i < fake.n; i++) {
		struct http_resp	 r;

		memset(&r, 0, sizeof(r));
		r.status = fake.a[i].status;
		r.retry_after = fake.a[i].retry_after;
		r.ratelimit_remaining = fake.a[i].remaining;
		r.ratelimit_reset = fake.a[i].reset;
		FUZZ_ASSERT((r.body = strndup(fake.a[i].body,
		    fake.a[i].len)) != NULL, "strndup");
		r.len = strlen(r.body);
		w = gh_retry_wait(&r, &why);
		FUZZ_ASSERT((w == -1 || w == -2 || w >= 1) && why != NULL,
		    "wait %ld", w);
		gh_api_error("GET", "/x", &r, err, sizeof(err));
		FUZZ_ASSERT(strncmp(err, "GET /x: ", 8) == 0, "%s", err);
		/* GitHub's words reach logs: never a control byte. */
		for (w = 0; err[w] != '\0'; w++)
			FUZZ_ASSERT((unsigned char)err[w] >= 0x20 &&
			    (unsigned char)err[w] < 0x7f, "control in %s",
			    err);
		http_resp_free(&r);
	}
}

static void
mode_conf(void)
{
	struct gh_conf	 c;
	json_t		*j;
	char		 err[512];
	size_t		 i;

	for (i = 0; i < fake.n; i++) {
		if ((j = json_loadb(fake.a[i].body, fake.a[i].len, 0,
		    NULL)) == NULL)
			continue;
		if (gh_conf_from_json(j, "/var/lib/factory/publish", &c, err,
		    sizeof(err)) == 0)
			FUZZ_ASSERT(strncmp(c.api, "https://", 8) == 0 &&
			    c.key[0] == '/' && c.ca[0] == '/' &&
			    c.repository_id > 0 && c.installation_id > 0 &&
			    gh_name_ok(c.owner, 39) && gh_name_ok(c.repo, 100),
			    "settings");
		json_decref(j);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct publish_req	 req = {
		.attempt = "a-20261201-0001",
		.title = "fuzz",
		.base = "main",
		.commit = "89abcdef0123456789abcdef0123456789abcdef",
	};
	struct gh_conf	 c;
	struct gh	 g;
	const char	*d = (const char *)data;
	size_t		 ml = 0;

	if (!split(d, size, &ml))
		return (0);
	conf_init(&c);
	memset(&g, 0, sizeof(g));
	g.req = &req;
	g.conf = &c;
	strlcpy(g.owner, c.owner, sizeof(g.owner));
	strlcpy(g.repo, c.repo, sizeof(g.repo));
	g.deadline = net_now() + c.budget * 1000;
	snprintf(g.branch, sizeof(g.branch), "%s%s", PUB_BRANCH_PREFIX,
	    req.attempt);
	snprintf(g.refname, sizeof(g.refname), "refs/heads/%s", g.branch);
	if (ml != 5 || memcmp(d, "token", 5) != 0)
		FUZZ_ASSERT((g.token = strdup("ghs_fuzz")) != NULL, "strdup");
	if (ml == 5 && memcmp(d, "token", 5) == 0)
		mode_token(&g);
	else if (ml == 4 && memcmp(d, "repo", 4) == 0)
		mode_repo(&g);
	else if (ml == 4 && memcmp(d, "find", 4) == 0)
		mode_find(&g, URL_SMALL);
	else if (ml == 6 && memcmp(d, "create", 6) == 0)
		mode_create(&g, URL_SMALL);
	else if (ml == 9 && memcmp(d, "supersede", 9) == 0)
		mode_supersede(&g);
	else if (ml == 6 && memcmp(d, "revoke", 6) == 0) {
		gh_secret_free(&g.token);
		mode_revoke(&g);
	} else if (ml == 4 && memcmp(d, "conf", 4) == 0)
		mode_conf();
	gh_secret_free(&g.token);
	gh_secret_free(&g.jwt);
	return (0);
}
