/*
 * What the agent clients factory supports read to find their model
 * endpoint and key, in one table: for a model grant, every row of the
 * provider's kind becomes a variable of the agent's environment or a
 * file below its HOME (the private /tmp, written by pid 1 before the
 * agent runs, sandbox/child.c), so a manifest names the client's own
 * command line and nothing else.  factory-agents(7) documents each
 * row; a client upgrade that reads something else is a new row here
 * and a diff in regress/agents.
 *
 * The token is in the environment only: a file names the variable
 * that holds it (codex's env_key, pi's apiKey), so no file of HOME
 * holds a key, and the files are the same for every attempt of a
 * grant but for the port.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factoryd.h"
#include "log.h"

enum agents_where {
	AG_ENV,			/* NAME=value in the environment */
	AG_FILE			/* a file below HOME */
};

/*
 * A value is a template: @PORT@ is the endpoint's port inside the
 * sandbox, @TOKEN@ the grant's token (variables only), @MODELS@ the
 * granted models as a JSON array of {"id": ...} objects.
 */
struct agents_row {
	const char	*client;	/* who reads it (factory-agents(7)) */
	int		 kind;		/* enum conf_gwkind */
	enum agents_where where;
	const char	*name;		/* the variable, or the file's name */
	const char	*value;
};

static const struct agents_row agents_rows[] = {
	/* Claude Code, and the Anthropic SDKs. */
	{ "claude", CONF_GW_ANTHROPIC, AG_ENV, "ANTHROPIC_BASE_URL",
	    "http://127.0.0.1:@PORT@" },
	{ "claude", CONF_GW_ANTHROPIC, AG_ENV, "ANTHROPIC_API_KEY",
	    "@TOKEN@" },
	/* The OpenAI SDKs (Codex CLI no longer reads OPENAI_BASE_URL). */
	{ "openai", CONF_GW_OPENAI, AG_ENV, "OPENAI_BASE_URL",
	    "http://127.0.0.1:@PORT@/v1" },
	{ "openai", CONF_GW_OPENAI, AG_ENV, "OPENAI_API_KEY", "@TOKEN@" },
	/*
	 * Codex CLI: its built-in provider wants a login and tries
	 * WebSocket upgrades first; a provider of its own, the default,
	 * speaks plain Responses over HTTP with the key from the
	 * environment.  Its web search is a tool the provider runs and
	 * bills beyond the request's bytes, which a budgeted grant
	 * refuses: off, unless its command line turns it on again.
	 */
	{ "codex", CONF_GW_OPENAI, AG_FILE, ".codex/config.toml",
	    "model_provider = \"factory\"\n"
	    "web_search = \"disabled\"\n"
	    "\n"
	    "[model_providers.factory]\n"
	    "name = \"factory\"\n"
	    "base_url = \"http://127.0.0.1:@PORT@/v1\"\n"
	    "env_key = \"OPENAI_API_KEY\"\n"
	    "wire_api = \"responses\"\n" },
	/* Gemini CLI, and @google/genai. */
	{ "gemini", CONF_GW_GEMINI, AG_ENV, "GOOGLE_GEMINI_BASE_URL",
	    "http://127.0.0.1:@PORT@" },
	{ "gemini", CONF_GW_GEMINI, AG_ENV, "GEMINI_API_KEY", "@TOKEN@" },
	/*
	 * Gemini CLI 0.61 takes GOOGLE_GEMINI_BASE_URL for an
	 * authentication of its own ("gateway") that it then refuses as
	 * an invalid method; the API key's, chosen here, reads the same
	 * two variables.
	 */
	{ "gemini", CONF_GW_GEMINI, AG_FILE, ".gemini/settings.json",
	    "{\"security\": {\"auth\": "
	    "{\"selectedType\": \"gemini-api-key\"}}}\n" },
	/* pi: a provider "factory" with the granted models. */
	{ "pi", CONF_GW_ANTHROPIC, AG_FILE, ".pi/agent/models.json",
	    "{\"providers\": {\"factory\": {"
	    "\"baseUrl\": \"http://127.0.0.1:@PORT@\", "
	    "\"api\": \"anthropic-messages\", "
	    "\"apiKey\": \"ANTHROPIC_API_KEY\", "
	    "\"models\": @MODELS@}}}\n" },
	{ "pi", CONF_GW_OPENAI, AG_FILE, ".pi/agent/models.json",
	    "{\"providers\": {\"factory\": {"
	    "\"baseUrl\": \"http://127.0.0.1:@PORT@/v1\", "
	    "\"api\": \"openai-responses\", "
	    "\"apiKey\": \"OPENAI_API_KEY\", "
	    "\"models\": @MODELS@}}}\n" },
	{ "pi", CONF_GW_GEMINI, AG_FILE, ".pi/agent/models.json",
	    "{\"providers\": {\"factory\": {"
	    "\"baseUrl\": \"http://127.0.0.1:@PORT@/v1beta\", "
	    "\"api\": \"google-generative-ai\", "
	    "\"apiKey\": \"GEMINI_API_KEY\", "
	    "\"models\": @MODELS@}}}\n" },
};

#define AGENTS_NROWS	(sizeof(agents_rows) / sizeof(agents_rows[0]))

/* Append s to buf (of len), escaping '"' and '\\' when esc; -1: full. */
static int
agents_put(char *buf, size_t len, size_t *off, const char *s, int esc)
{
	for (; *s != '\0'; s++) {
		if (esc && (*s == '"' || *s == '\\')) {
			if (*off + 1 >= len)
				return (-1);
			buf[(*off)++] = '\\';
		}
		if (*off + 1 >= len)
			return (-1);
		buf[(*off)++] = *s;
	}
	buf[*off] = '\0';
	return (0);
}

static int
agents_models(char *buf, size_t len, size_t *off,
    const struct manifest_model *mm)
{
	size_t	 i;

	if (agents_put(buf, len, off, "[", 0) == -1)
		return (-1);
	for (i = 0; i < mm->nmodels; i++)
		if (agents_put(buf, len, off, i == 0 ? "{\"id\": \"" :
		    ", {\"id\": \"", 0) == -1 ||
		    agents_put(buf, len, off, mm->models[i], 1) == -1 ||
		    agents_put(buf, len, off, "\"}", 0) == -1)
			return (-1);
	return (agents_put(buf, len, off, "]", 0));
}

/* The row's value with its @NAME@s replaced; -1 if it does not fit. */
static int
agents_expand(const struct agents_row *row, uint16_t port,
    const char *token, const struct manifest_model *mm, char *buf,
    size_t len)
{
	const char	*p = row->value, *at;
	char		 num[8];
	size_t		 off = 0;
	int		 r = 0;

	buf[0] = '\0';
	snprintf(num, sizeof(num), "%u", port);
	while (r == 0 && (at = strchr(p, '@')) != NULL) {
		if (off + (size_t)(at - p) + 1 >= len)
			return (-1);
		memcpy(buf + off, p, at - p);
		off += at - p;
		buf[off] = '\0';
		if (strncmp(at, "@PORT@", 6) == 0) {
			r = agents_put(buf, len, &off, num, 0);
			p = at + 6;
		} else if (strncmp(at, "@TOKEN@", 7) == 0 &&
		    row->where == AG_ENV) {
			r = agents_put(buf, len, &off, token, 0);
			p = at + 7;
		} else if (strncmp(at, "@MODELS@", 8) == 0) {
			r = agents_models(buf, len, &off, mm);
			p = at + 8;
		} else
			return (-1);	/* a row of this table is wrong */
	}
	if (r == -1)
		return (-1);
	return (agents_put(buf, len, &off, p, 0));
}

/*
 * The variables and HOME files of a grant of kind on port, appended
 * to envp (*ne of maxenv used) and home (pairs, *nh of maxhome used),
 * each string allocated.  -1 if one does not fit or memory is short.
 */
int
agents_grant(int kind, uint16_t port, const char *token,
    const struct manifest_model *mm, char **envp, int *ne, int maxenv,
    char **home, int *nh, int maxhome)
{
	const struct agents_row	*row;
	char			*buf;
	size_t			 i, len = AGENTS_FILEMAX;
	int			 r = 0;

	if ((buf = malloc(len)) == NULL)
		return (-1);
	for (i = 0; i < AGENTS_NROWS && r == 0; i++) {
		row = &agents_rows[i];
		if (row->kind != kind)
			continue;
		if (agents_expand(row, port, token, mm, buf, len) == -1) {
			log_warnx("agents: %s %s: does not fit in %zu bytes",
			    row->client, row->name, len);
			r = -1;
		} else if (row->where == AG_ENV) {
			if (*ne >= maxenv || asprintf(&envp[*ne], "%s=%s",
			    row->name, buf) == -1)
				r = -1;
			else
				(*ne)++;
		} else if (*nh + 2 > maxhome ||
		    (home[*nh] = strdup(row->name)) == NULL)
			r = -1;
		else if ((home[*nh + 1] = strdup(buf)) == NULL) {
			free(home[*nh]);
			home[*nh] = NULL;
			r = -1;
		} else
			*nh += 2;
	}
	explicit_bzero(buf, len);
	free(buf);
	return (r);
}
