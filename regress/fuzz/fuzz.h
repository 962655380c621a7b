/*
 * Shared by the libFuzzer harnesses of regress/fuzz/ (fuzz_NAME.c).
 * A harness feeds one input to one parser and checks what the parser
 * promises; a broken promise aborts, which libFuzzer reports as a
 * crash and saves the input.  Errors the parser reports are normal.
 */
#ifndef FACTORY_FUZZ_H
#define FACTORY_FUZZ_H

#include <sys/types.h>
#include <sys/mman.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	LLVMFuzzerInitialize(int *, char ***);

#define FUZZ_ASSERT(cond, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz: %s:%d: ", __FILE__, __LINE__);	\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		abort();						\
	}								\
} while (0)

/* An anonymous regular file, for parsers that take a path or an fd. */
static inline int
fuzz_memfd(const char *name)
{
	int	 fd;

	if ((fd = memfd_create(name, MFD_CLOEXEC)) == -1) {
		perror("memfd_create");
		abort();
	}
	return (fd);
}

/* The file's whole content becomes data. */
static inline void
fuzz_memfd_set(int fd, const void *data, size_t len)
{
	const char	*p = data;
	ssize_t		 n;
	size_t		 off = 0;

	if (ftruncate(fd, 0) == -1) {
		perror("ftruncate");
		abort();
	}
	while (off < len) {
		if ((n = pwrite(fd, p + off, len - off, off)) <= 0) {
			perror("pwrite");
			abort();
		}
		off += n;
	}
}

/* "/proc/self/fd/N": opening it gives a fresh offset. */
static inline void
fuzz_fdpath(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

#endif /* FACTORY_FUZZ_H */
