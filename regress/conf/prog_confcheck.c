/*
 * prog_confcheck conf|manifest FILE: parse FILE as factoryd.conf(5) or
 * as a factory-manifest(5) and print it with conf_print or
 * manifest_print on stdout, or print the one error line on stderr and
 * exit 1.  Manifests are read into memory first and parsed with
 * manifest_parse, as the parent does with the bytes it receives.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

static void __attribute__((__noreturn__))
usage(void)
{
	fprintf(stderr, "usage: prog_confcheck conf|manifest file\n");
	exit(2);
}

static int
check_conf(const char *file)
{
	struct factoryd_conf	*c;
	char			 err[CONF_ERRLEN];

	if (conf_parse(file, &c, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s\n", err);
		return (1);
	}
	conf_print(stdout, c);
	conf_free(c);
	return (0);
}

static int
check_manifest(const char *file)
{
	struct manifest	*m;
	FILE		*fp;
	char		*buf = NULL, err[CONF_ERRLEN];
	size_t		 len = 0, n;

	if ((fp = fopen(file, "r")) == NULL) {
		fprintf(stderr, "%s: %s\n", file, strerror(errno));
		return (1);
	}
	for (;;) {
		if ((buf = realloc(buf, len + 4096)) == NULL) {
			fprintf(stderr, "%s: %s\n", file, strerror(errno));
			exit(1);
		}
		if ((n = fread(buf + len, 1, 4096, fp)) == 0)
			break;
		len += n;
	}
	fclose(fp);
	if (manifest_parse(file, buf, len, &m, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s\n", err);
		free(buf);
		return (1);
	}
	free(buf);
	manifest_print(stdout, m);
	manifest_free(m);
	return (0);
}

int
main(int argc, char *argv[])
{
	if (argc != 3)
		usage();
	if (strcmp(argv[1], "conf") == 0)
		return (check_conf(argv[2]));
	if (strcmp(argv[1], "manifest") == 0)
		return (check_manifest(argv[2]));
	usage();
}
