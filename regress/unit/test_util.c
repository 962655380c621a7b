/*
 * The helpers every program shares, one home each: errfmt, now_ms and
 * mono_ms, name_valid (util.c), hex_lower, hex_valid and sha256_fd
 * (crypto.c), gitc_err and gitc_is_dotgit (gitcommon.c), msg_send and
 * msg_send_error (msg.c).  Each bound is tried on both sides.
 */
#include <sys/socket.h>

#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <git2.h>

#include "crypto.h"
#include "esc.h"
#include "gitcommon.h"
#include "imsgev.h"
#include "msg.h"
#include "util.h"

#define SHA_ABC		"ba7816bf8f01cfea414140de5dae2223" \
			"b00361a396177a9cb410ff61f20015ad"
#define SHA_EMPTY	"e3b0c44298fc1c149afbf4c8996fb924" \
			"27ae41e4649b934ca495991b7852b855"
#define HEX40		"0123456789abcdef0123456789abcdef01234567"

START_TEST(t_errfmt)
{
	char	 err[8];

	memset(err, 'x', sizeof(err));
	ck_assert_int_eq(errfmt(err, sizeof(err), "%s %d", "ab", 12), -1);
	ck_assert_str_eq(err, "ab 12");
	/* Cut to errlen - 1 bytes and NUL-terminated. */
	ck_assert_int_eq(errfmt(err, sizeof(err), "%s", "0123456789"), -1);
	ck_assert_str_eq(err, "0123456");
	ck_assert_int_eq(errfmt(err, 1, "%s", "abc"), -1);
	ck_assert_str_eq(err, "");
	/* errlen 0: nothing is written, not even through NULL. */
	ck_assert_int_eq(errfmt(NULL, 0, "%s", "abc"), -1);
	memset(err, 'x', sizeof(err));
	ck_assert_int_eq(errfmt(err, 0, "%s", "abc"), -1);
	ck_assert_int_eq(err[0], 'x');
}
END_TEST

START_TEST(t_clocks)
{
	struct timespec	 ts = { 0, 30 * 1000 * 1000 };
	uint64_t	 wall, a, b;

	wall = (uint64_t)time(NULL) * 1000;
	ck_assert_uint_ge(now_ms() + 1000, wall);
	ck_assert_uint_le(now_ms(), wall + 2000);
	a = mono_ms();
	nanosleep(&ts, NULL);
	b = mono_ms();
	ck_assert_uint_ge(b - a, 30);
	ck_assert_uint_lt(b - a, 5000);
}
END_TEST

START_TEST(t_name_valid)
{
	char	 s[80];

	ck_assert_int_eq(name_valid("a", 1), 1);
	ck_assert_int_eq(name_valid("Repo_1.x-y", 63), 1);
	ck_assert_int_eq(name_valid("a.", 63), 1);
	ck_assert_int_eq(name_valid("a-", 63), 1);
	ck_assert_int_eq(name_valid("", 63), 0);
	ck_assert_int_eq(name_valid(".a", 63), 0);
	ck_assert_int_eq(name_valid("..", 63), 0);
	ck_assert_int_eq(name_valid("-a", 63), 0);
	ck_assert_int_eq(name_valid("a/b", 63), 0);
	ck_assert_int_eq(name_valid("a b", 63), 0);
	ck_assert_int_eq(name_valid("a:b", 63), 0);
	ck_assert_int_eq(name_valid("a@b", 63), 0);
	ck_assert_int_eq(name_valid("\xc3\xa9", 63), 0);
	/* max bytes are taken, one more is not. */
	memset(s, 'a', 64);
	s[63] = '\0';
	ck_assert_int_eq(name_valid(s, 63), 1);
	s[63] = 'a';
	s[64] = '\0';
	ck_assert_int_eq(name_valid(s, 63), 0);
	ck_assert_int_eq(name_valid(s, 64), 1);
	ck_assert_int_eq(name_valid("ab", 1), 0);
	ck_assert_int_eq(name_valid("a", 0), 0);
}
END_TEST

START_TEST(t_hex)
{
	char	 s[80];

	ck_assert_int_eq(hex_valid(HEX40, 40), 1);
	ck_assert_int_eq(hex_valid(HEX40, 39), 0);
	ck_assert_int_eq(hex_valid(HEX40, 41), 0);
	ck_assert_int_eq(hex_valid(HEX40 "8", 40), 0);
	ck_assert_int_eq(hex_valid(SHA_ABC, 64), 1);
	ck_assert_int_eq(hex_valid(SHA_ABC, 40), 0);
	ck_assert_int_eq(hex_valid(NULL, 40), 0);
	ck_assert_int_eq(hex_valid("", 0), 1);
	ck_assert_int_eq(hex_valid("a", 0), 0);
	/* Lowercase only, nothing outside 0-9a-f, no NUL inside. */
	strlcpy(s, HEX40, sizeof(s));
	s[5] = 'A';
	ck_assert_int_eq(hex_valid(s, 40), 0);
	s[5] = 'g';
	ck_assert_int_eq(hex_valid(s, 40), 0);
	s[5] = ' ';
	ck_assert_int_eq(hex_valid(s, 40), 0);
	s[5] = '\0';
	ck_assert_int_eq(hex_valid(s, 40), 0);

	/* hex_lower: exactly n bytes, whatever follows them. */
	strlcpy(s, HEX40 " rest\n", sizeof(s));
	ck_assert_int_eq(hex_lower(s, 40), 1);
	ck_assert_int_eq(hex_lower(s, 41), 0);
	ck_assert_int_eq(hex_lower(s, 0), 1);
	s[39] = 'F';
	ck_assert_int_eq(hex_lower(s, 39), 1);
	ck_assert_int_eq(hex_lower(s, 40), 0);
	s[0] = '/';		/* '0' - 1 */
	ck_assert_int_eq(hex_lower(s, 1), 0);
	s[0] = ':';		/* '9' + 1 */
	ck_assert_int_eq(hex_lower(s, 1), 0);
	s[0] = '`';		/* 'a' - 1 */
	ck_assert_int_eq(hex_lower(s, 1), 0);
	s[0] = 'f';
	ck_assert_int_eq(hex_lower(s, 1), 1);
}
END_TEST

static int
tmpfile_with(const void *buf, size_t len)
{
	char	 path[] = "/tmp/test_util.XXXXXX";
	int	 fd;

	ck_assert_int_ne(fd = mkstemp(path), -1);
	unlink(path);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	return (fd);
}

START_TEST(t_sha256_fd)
{
	char	 hex[SHA256_HEX_LEN + 1], want[SHA256_HEX_LEN + 1];
	char	*big;
	off_t	 len;
	size_t	 n;
	int	 fd, p[2];

	/* From offset 0 whatever the offset, and it does not move. */
	fd = tmpfile_with("abc", 3);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 3);
	ck_assert_int_eq(sha256_fd(fd, hex, &len), 0);
	ck_assert_str_eq(hex, SHA_ABC);
	ck_assert_int_eq(len, 3);
	ck_assert_int_eq(lseek(fd, 1, SEEK_SET), 1);
	ck_assert_int_eq(sha256_fd(fd, hex, NULL), 0);
	ck_assert_str_eq(hex, SHA_ABC);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 1);
	close(fd);

	fd = tmpfile_with("", 0);
	ck_assert_int_eq(sha256_fd(fd, hex, &len), 0);
	ck_assert_str_eq(hex, SHA_EMPTY);
	ck_assert_int_eq(len, 0);
	close(fd);

	/* Across the read size and one byte past it. */
	n = 64 * 1024 * 3 + 1;
	ck_assert_ptr_nonnull(big = malloc(n));
	memset(big, 'q', n);
	big[n - 1] = 'z';
	ck_assert_int_eq(sha256_hex(big, n, want), 0);
	fd = tmpfile_with(big, n);
	ck_assert_int_eq(sha256_fd(fd, hex, &len), 0);
	ck_assert_str_eq(hex, want);
	ck_assert_int_eq(len, (off_t)n);
	close(fd);
	ck_assert_int_eq(sha256_hex(big, n - 1, want), 0);
	ck_assert_str_ne(hex, want);
	free(big);

	/* Not a file: refused with errno, nothing claimed. */
	ck_assert_int_eq(pipe(p), 0);
	errno = 0;
	ck_assert_int_eq(sha256_fd(p[0], hex, &len), -1);
	ck_assert_int_eq(errno, ESPIPE);
	close(p[0]);
	close(p[1]);
	ck_assert_int_eq(sha256_fd(-1, hex, NULL), -1);
	ck_assert_int_eq(errno, EBADF);
}
END_TEST

START_TEST(t_dotgit)
{
	static const char *yes[] = { ".git", ".GIT", ".Git", ".git.",
	    ".git ", ".git. .", "git~1", "GIT~1", NULL };
	static const char *no[] = { ".gitx", ".gi", "git", ".github",
	    "git~1x", "git~2", "a.git", " .git", ".git.x", "", NULL };
	size_t	 i;

	for (i = 0; yes[i] != NULL; i++)
		ck_assert_msg(gitc_is_dotgit(yes[i], strlen(yes[i])),
		    "%s", yes[i]);
	for (i = 0; no[i] != NULL; i++)
		ck_assert_msg(!gitc_is_dotgit(no[i], strlen(no[i])),
		    "%s", no[i]);
	/* Only the len bytes count: a component of a longer path. */
	ck_assert_int_eq(gitc_is_dotgit(".git/config", 4), 1);
	ck_assert_int_eq(gitc_is_dotgit(".git/config", 5), 0);
	ck_assert_int_eq(gitc_is_dotgit("git~1/x", 5), 1);
	ck_assert_int_eq(gitc_is_dotgit("git~1/x", 4), 0);
	ck_assert_int_eq(gitc_is_dotgit(".gi", 3), 0);
	ck_assert_str_eq(GITC_WORKFLOWS, ".github/workflows/");
}
END_TEST

START_TEST(t_gitc_err)
{
	char	 err[64];

	git_libgit2_init();
	git_error_set_str(GIT_ERROR_OS, "disk on fire");
	ck_assert_int_eq(gitc_err(err, sizeof(err), "fetch %s", "x"), -1);
	ck_assert_str_eq(err, "fetch x: disk on fire");
	/* Cleared once told: the next reason does not repeat it. */
	ck_assert_int_eq(gitc_err(err, sizeof(err), "push"), -1);
	ck_assert_str_eq(err, "push");
	git_error_set_str(GIT_ERROR_OS, "disk on fire");
	ck_assert_int_eq(gitc_err(err, 10, "fetch %s", "abcdef"), -1);
	ck_assert_str_eq(err, "fetch abc");
	ck_assert_int_eq(gitc_err(NULL, 0, "nothing"), -1);
	git_libgit2_shutdown();
}
END_TEST

static void
nop(int fd, short ev, void *arg)
{
}

/* One message off the other end of the pair, decoded as MSG_ERROR. */
static void
read_error(int fd, struct msg_error *m)
{
	struct imsgbuf	 rb;
	struct imsg	 imsg;
	char		 err[256];

	ck_assert_int_eq(imsgbuf_init(&rb, fd), 0);
	imsgbuf_set_maxsize(&rb, FACTORY_MAXIMSG);
	ck_assert_int_eq(imsgbuf_read(&rb), 1);
	ck_assert_int_eq(imsgbuf_get(&rb, &imsg), 1);
	ck_assert_uint_eq(imsg_get_type(&imsg), IMSG_ERROR);
	ck_assert_msg(msg_get(&imsg, MSG_ERROR, m, err, sizeof(err)) == 0,
	    "%s", err);
	imsg_free(&imsg);
	imsgbuf_clear(&rb);
}

START_TEST(t_msg_send_error)
{
	struct imsgev		 iev;
	struct msg_error	*m;
	char			 want[64], *huge;
	size_t			 n;
	int			 sv[2];

	event_init();
	ck_assert_ptr_nonnull(m = malloc(sizeof(*m)));
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(imsgev_init(&iev, sv[0], nop, NULL,
	    FACTORY_MAXIMSG), 0);

	/* The reason goes out escaped. */
	msg_send_error(&iev, "a-20261206-0001", "bad\npath\x01");
	ck_assert_int_eq(imsgbuf_flush(&iev.ibuf), 0);
	read_error(sv[1], m);
	ck_assert_str_eq(m->id, "a-20261206-0001");
	ck_assert_int_ne(esc_encode("bad\npath\x01", 9, want, sizeof(want)),
	    -1);
	ck_assert_str_eq(m->error, want);
	ck_assert_ptr_null(strchr(m->error, '\n'));

	/* One that fits escaped is sent whole; one that does not, named. */
	n = MSG_ESC_MAX - 1;
	ck_assert_ptr_nonnull(huge = malloc(n + 2));
	memset(huge, 'r', n + 1);
	huge[n] = '\0';
	msg_send_error(&iev, "a-1", huge);
	ck_assert_int_eq(imsgbuf_flush(&iev.ibuf), 0);
	read_error(sv[1], m);
	ck_assert_str_eq(m->error, huge);
	huge[n] = 'r';
	huge[n + 1] = '\0';
	msg_send_error(&iev, "a-1", huge);
	ck_assert_int_eq(imsgbuf_flush(&iev.ibuf), 0);
	read_error(sv[1], m);
	ck_assert_str_eq(m->error, "(reason too long)");
	free(huge);
	free(m);
	imsgev_clear(&iev);
	close(sv[1]);
}
END_TEST

/* A message of ours that breaks the rules: we are broken, and exit 1. */
START_TEST(t_msg_send_broken)
{
	struct imsgev		 iev;
	struct msg_error	 m;
	int			 sv[2];

	event_init();
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(imsgev_init(&iev, sv[0], nop, NULL, 0), 0);
	memset(&m, 0, sizeof(m));
	strlcpy(m.id, "-not-an-id", sizeof(m.id));
	msg_send(&iev, IMSG_ERROR, MSG_ERROR, &m);
}
END_TEST

static Suite *
util_suite(void)
{
	Suite	*s = suite_create("util");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, t_errfmt);
	tcase_add_test(tc, t_clocks);
	tcase_add_test(tc, t_name_valid);
	tcase_add_test(tc, t_hex);
	tcase_add_test(tc, t_sha256_fd);
	tcase_add_test(tc, t_dotgit);
	tcase_add_test(tc, t_gitc_err);
	tcase_add_test(tc, t_msg_send_error);
	tcase_add_exit_test(tc, t_msg_send_broken, 1);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(util_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
