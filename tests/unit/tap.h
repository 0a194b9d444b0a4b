/*
 * tap.h: the smallest TAP producer the unit tests need.  automake's
 * tap-driver.sh reads its output; each ok()/is_*() is one test point.
 */
#ifndef PERFGATE_TAP_H
#define PERFGATE_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

static inline int tap_ok(int cond, const char *file, int line, const char *what)
{
	tap_count++;
	printf("%sok %d - %s\n", cond ? "" : "not ", tap_count, what);
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	return cond;
}

#define ok(cond, what) tap_ok(!!(cond), __FILE__, __LINE__, (what))

/* Compare two strings, showing both when they differ. */
#define is_str(got, want, what) do {						\
	const char *g_ = (got), *w_ = (want);					\
	if (!ok(g_ && w_ && strcmp(g_, w_) == 0, (what)))			\
		printf("#   got:  '%s'\n#   want: '%s'\n", g_ ? g_ : "(null)", w_); \
} while (0)

#define is_int(got, want, what) do {						\
	long long g_ = (got), w_ = (want);					\
	if (!ok(g_ == w_, (what)))						\
		printf("#   got:  %lld\n#   want: %lld\n", g_, w_);		\
} while (0)

/* Print the plan last ("1..N"), as TAP allows; returns the exit status. */
static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
