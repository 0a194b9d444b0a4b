/*
 * cpu_list.c: the -C LIST parser (the API and grammar are in cpu_list.h).
 */
#include "grammar/cpu_list.h"

#include <errno.h>
#include <stdlib.h>

#include "grammar/scan.h"

/* One CPU number at sc->pos; false (error recorded) when there is none. */
static bool cpu_number(struct scan *sc, long *cpu, const char *what)
{
	size_t start = sc->pos;
	long v = 0;

	if (!scan_is_digit(scan_peek(sc, 0))) {
		scan_fail(sc, sc->pos, "%s", what);
		return false;
	}
	while (scan_is_digit(scan_peek(sc, 0))) {
		int d = scan_peek(sc, 0) - '0';

		if (v > (CPU_LIST_MAX - d) / 10) {
			scan_fail(sc, start, "CPU number too large (at most %ld)", CPU_LIST_MAX);
			return false;
		}
		v = v * 10 + d;
		sc->pos++;
	}
	*cpu = v;
	return true;
}

struct cpu_list_item *cpu_list_parse(const char *text, size_t len, size_t *n,
				     struct pg_error *err)
{
	struct scan sc = SCAN_INIT(text, len, err);
	struct cpu_list_item *items = NULL, item;

	*n = 0;
	for (;;) {
		item.offset = sc.pos;
		if (!cpu_number(&sc, &item.lo, "expected a CPU number or range (0,2-3)"))
			break;
		item.hi = item.lo;
		if (scan_peek(&sc, 0) == '-') {
			size_t hi_at;

			sc.pos++;
			hi_at = sc.pos;
			if (!cpu_number(&sc, &item.hi, "expected a CPU number after '-'"))
				break;
			if (item.hi < item.lo) {
				scan_fail(&sc, hi_at, "range %ld-%ld goes backwards", item.lo, item.hi);
				break;
			}
		}
		if (!SCAN_PUSH(&sc, items, *n, item))
			break;
		if (sc.pos == len)
			return items;
		if (scan_peek(&sc, 0) != ',') {
			scan_fail(&sc, sc.pos, "expected ',' between CPUs");
			break;
		}
		sc.pos++;
	}
	free(items);
	*n = 0;
	return NULL;
}
