/*
 * check.h: what the fuzzers check with.
 *
 * CHECK(cond) holds whatever the build: unlike assert(), NDEBUG cannot
 * turn it off.  A failure names the file, the line and the expression, then
 * aborts, which libFuzzer reports as a crash and saves the input for.
 */
#ifndef PERFGATE_TESTS_FUZZ_CHECK_H
#define PERFGATE_TESTS_FUZZ_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: invariant failed: %s\n",	\
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

/*
 * Is text the very bytes of input (in_len bytes) at [offset, offset + len)?
 * A parser's names and spans must point back at what it read.
 */
static inline bool text_at(const uint8_t *input, size_t in_len, const char *text,
			   size_t offset, size_t len)
{
	return offset <= in_len && len <= in_len - offset && strlen(text) == len &&
	       memcmp(text, input + offset, len) == 0;
}

#endif
