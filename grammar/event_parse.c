/*
 * event_parse.c: a hand-written parser for perf's -e syntax (the grammar is
 * in event_parse.h, the user's view in perfgate(1), EVENTS), and the tables of
 * the names perf knows without asking the machine.
 *
 * perf reads these lists with a flex lexer and a bison grammar
 * (tools/perf/util/parse-events.{l,y}); the tables below carry the same
 * spellings, facts of perf's user interface, so that a script's -e list
 * means here what it means to perf.  The parser reads one event at a
 * time: a word of name bytes, then what follows it decides the kind ('/'
 * a PMU, ':' modifiers or a tracepoint, nothing a name from the tables).
 *
 * Every error stops the parse with the offset of the byte it is about
 * (the unknown name's first byte, the bad modifier letter, the '{' left
 * open), through grammar/scan.c's first-error-wins reporting.  Memory: an
 * event is built in a local struct and pushed whole, so an error frees
 * what was pushed with event_list_free() and the local one with
 * desc_clear(), and nothing leaks.
 */
#include "grammar/event_parse.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/range_parse.h"
#include "grammar/scan.h"

/* ---- the names perf knows ------------------------------------------------------ */

struct named {
	const char *name;
	enum event_kind kind;
	uint32_t type;
	uint64_t config;
	enum event_tool tool;
};

#define HW(n, c) { n, EVENT_HARDWARE, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##c, EVENT_TOOL_NONE }
#define SW(n, c) { n, EVENT_SOFTWARE, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##c, EVENT_TOOL_NONE }
#define TOOL(n, t) { n, EVENT_TOOL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, EVENT_TOOL_##t }

/* perf's lexer (parse-events.l), name for name. */
static const struct named named_events[] = {
	HW("cpu-cycles", CPU_CYCLES),
	HW("cycles", CPU_CYCLES),
	HW("stalled-cycles-frontend", STALLED_CYCLES_FRONTEND),
	HW("idle-cycles-frontend", STALLED_CYCLES_FRONTEND),
	HW("stalled-cycles-backend", STALLED_CYCLES_BACKEND),
	HW("idle-cycles-backend", STALLED_CYCLES_BACKEND),
	HW("instructions", INSTRUCTIONS),
	HW("cache-references", CACHE_REFERENCES),
	HW("cache-misses", CACHE_MISSES),
	HW("branch-instructions", BRANCH_INSTRUCTIONS),
	HW("branches", BRANCH_INSTRUCTIONS),
	HW("branch-misses", BRANCH_MISSES),
	HW("bus-cycles", BUS_CYCLES),
	HW("ref-cycles", REF_CPU_CYCLES),
	SW("cpu-clock", CPU_CLOCK),
	SW("task-clock", TASK_CLOCK),
	SW("page-faults", PAGE_FAULTS),
	SW("faults", PAGE_FAULTS),
	SW("minor-faults", PAGE_FAULTS_MIN),
	SW("major-faults", PAGE_FAULTS_MAJ),
	SW("context-switches", CONTEXT_SWITCHES),
	SW("cs", CONTEXT_SWITCHES),
	SW("cpu-migrations", CPU_MIGRATIONS),
	SW("migrations", CPU_MIGRATIONS),
	SW("alignment-faults", ALIGNMENT_FAULTS),
	SW("emulation-faults", EMULATION_FAULTS),
	SW("dummy", DUMMY),
	SW("bpf-output", BPF_OUTPUT),
	SW("cgroup-switches", CGROUP_SWITCHES),
	TOOL("duration_time", DURATION_TIME),
	TOOL("user_time", USER_TIME),
	TOOL("system_time", SYSTEM_TIME),
};

/*
 * perf's generic cache names (its evsel__hw_cache* tables): the first
 * spelling of each row is perf's own, the others its aliases.  Row i is
 * the kernel's id i (PERF_COUNT_HW_CACHE_L1D, ..._OP_READ, ..._RESULT_ACCESS).
 */
#define ALIASES_MAX 6
static const char *const cache_names[][ALIASES_MAX] = {
	{ "L1-dcache", "l1-d", "l1d", "L1-data" },
	{ "L1-icache", "l1-i", "l1i", "L1-instruction" },
	{ "LLC", "L2" },
	{ "dTLB", "d-tlb", "Data-TLB" },
	{ "iTLB", "i-tlb", "Instruction-TLB" },
	{ "branch", "branches", "bpu", "btb", "bpc" },
	{ "node" },
};
static const char *const cache_ops[][ALIASES_MAX] = {
	{ "load", "loads", "read" },
	{ "store", "stores", "write" },
	{ "prefetch", "prefetches", "speculative-read", "speculative-load" },
};
static const char *const cache_results[][ALIASES_MAX] = {
	{ "refs", "Reference", "ops", "access" },
	{ "misses", "miss" },
};
#define NCACHES (sizeof(cache_names) / sizeof(cache_names[0]))
#define NOPS (sizeof(cache_ops) / sizeof(cache_ops[0]))
#define NRESULTS (sizeof(cache_results) / sizeof(cache_results[0]))

/* Which operations each cache counts (perf's evsel__hw_cache_stat). */
#define OP(x) (1u << PERF_COUNT_HW_CACHE_OP_##x)
static const unsigned cache_op_valid[NCACHES] = {
	OP(READ) | OP(WRITE) | OP(PREFETCH),	/* L1-dcache */
	OP(READ) | OP(PREFETCH),		/* L1-icache */
	OP(READ) | OP(WRITE) | OP(PREFETCH),	/* LLC */
	OP(READ) | OP(WRITE) | OP(PREFETCH),	/* dTLB */
	OP(READ),				/* iTLB */
	OP(READ),				/* branch */
	OP(READ) | OP(WRITE) | OP(PREFETCH),	/* node */
};

/*
 * The row of table whose longest alias starts s[0..n) and is followed by
 * '-' or the end; *used gets the alias's length.  -1 when none.
 */
static int alias_match(const char *const table[][ALIASES_MAX], size_t rows,
		       const char *s, size_t n, size_t *used)
{
	int row = -1;

	*used = 0;
	for (size_t i = 0; i < rows; i++) {
		for (size_t j = 0; j < ALIASES_MAX && table[i][j]; j++) {
			size_t an = strlen(table[i][j]);

			if (an > *used && an <= n && memcmp(s, table[i][j], an) == 0 &&
			    (an == n || s[an] == '-')) {
				*used = an;
				row = (int)i;
			}
		}
	}
	return row;
}

/* Why a cache name did not decode, and where (an offset into the name). */
enum cache_fail {
	CACHE_OK,
	CACHE_NOT_A_CACHE,	/* no cache name starts it */
	CACHE_BAD_PART,		/* a part is neither an operation nor a result */
	CACHE_TWICE,		/* two operations, or two results */
	CACHE_BAD_OP,		/* the cache does not count that operation */
};

static enum cache_fail cache_decode(const char *s, size_t n, uint64_t *config, size_t *at,
				    int *cache_out, int *op_out)
{
	size_t used, pos;
	int cache = alias_match(cache_names, NCACHES, s, n, &used), op = -1, result = -1;

	*at = 0;
	if (cache < 0)
		return CACHE_NOT_A_CACHE;
	pos = used;
	while (pos < n) {		/* s[pos] == '-' */
		int o, r;
		size_t uo, ur;

		pos++;
		*at = pos;
		o = alias_match(cache_ops, NOPS, s + pos, n - pos, &uo);
		r = alias_match(cache_results, NRESULTS, s + pos, n - pos, &ur);
		if (o >= 0 && uo >= ur) {
			if (op >= 0)
				return CACHE_TWICE;
			op = o;
			*cache_out = cache;
			*op_out = op;
			if (!(cache_op_valid[cache] & (1u << op)))
				return CACHE_BAD_OP;
			pos += uo;
		} else if (r >= 0) {
			if (result >= 0)
				return CACHE_TWICE;
			result = r;
			pos += ur;
		} else {
			return CACHE_BAD_PART;
		}
	}
	if (op < 0)
		op = PERF_COUNT_HW_CACHE_OP_READ;
	if (result < 0)
		result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	*config = (uint64_t)cache | (uint64_t)op << 8 | (uint64_t)result << 16;
	return CACHE_OK;
}

bool event_cache_config(const char *name, size_t len, uint64_t *config)
{
	size_t at;
	int cache, op;

	return cache_decode(name, len, config, &at, &cache, &op) == CACHE_OK;
}

bool event_named_lookup(const char *name, size_t len, struct event_desc *ev)
{
	for (size_t i = 0; i < sizeof(named_events) / sizeof(named_events[0]); i++) {
		const struct named *e = &named_events[i];

		if (strlen(e->name) == len && memcmp(e->name, name, len) == 0) {
			ev->kind = e->kind;
			ev->type = e->type;
			ev->config = e->config;
			ev->tool = e->tool;
			return true;
		}
	}
	return false;
}

const char *event_kind_name(enum event_kind kind)
{
	switch (kind) {
	case EVENT_HARDWARE: return "hardware";
	case EVENT_SOFTWARE: return "software";
	case EVENT_CACHE: return "cache";
	case EVENT_RAW: return "raw";
	case EVENT_TOOL: return "tool";
	case EVENT_PMU: return "pmu";
	case EVENT_TRACEPOINT: return "tracepoint";
	case EVENT_TRACEPOINT_GLOB: return "tracepoint glob";
	}
	return "?";
}

/* ---- the parser -------------------------------------------------------------- */

struct eparser {
	struct scan sc;		/* the text, the position, the first error */
	struct event_list *list;
};

/* A byte for a reason: 'x', or "byte 0x01" when it would not print. */
static const char *describe(char *buf, size_t cap, int c)
{
	if (c < 0)
		snprintf(buf, cap, "end of list");
	else if (c > 0x20 && c < 0x7f)
		snprintf(buf, cap, "'%c'", c);
	else
		snprintf(buf, cap, "byte 0x%02x", (unsigned)c & 0xff);
	return buf;
}

/* Bytes of a name: L1-dcache-loads, sys_enter_*, uncore_imc_0, msr. */
static bool is_name_byte(int c)
{
	return scan_is_ident(c) || c == '-' || c == '.' || c == '*' || c == '?';
}

static bool is_glob_byte(int c)
{
	return c == '*' || c == '?';
}

/* Bytes of a tracepoint's subsystem or name (as in the range grammar). */
static bool is_tp_byte(int c)
{
	return scan_is_ident(c) || is_glob_byte(c);
}

/* Bytes of a term key or word value: event, umask, cpu-cycles, foo.bar. */
static bool is_term_byte(int c)
{
	return scan_is_ident(c) || c == '-' || c == '.';
}

/* Where an event may end: the next item, the end of a group, the end. */
static bool is_event_end(int c)
{
	return c < 0 || c == ',' || c == '}' || scan_is_space(c);
}

static void desc_clear(struct event_desc *ev)
{
	free(ev->text);
	free(ev->pmu);
	for (size_t i = 0; i < ev->nterms; i++) {
		free(ev->terms[i].key);
		free(ev->terms[i].value);
	}
	free(ev->terms);
	free(ev->subsys);
	free(ev->tp_name);
}

void event_list_free(struct event_list *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->nevents; i++)
		desc_clear(&list->events[i]);
	free(list->events);
	free(list->groups);
	free(list->text);
	free(list);
}

/* Move the position past the run of bytes ok() takes; returns its length. */
static size_t scan_run(struct scan *sc, bool (*ok)(int))
{
	size_t from = sc->pos;

	while (sc->pos < sc->len && ok((unsigned char)sc->s[sc->pos]))
		sc->pos++;
	return sc->pos - from;
}

/*
 * Modifier letters after ':' (or after a PMU event's closing '/').  perf
 * takes each letter once, except p up to three times.
 */
static bool parse_mods(struct eparser *p, struct event_mods *m, bool after_colon)
{
	static const char letters[] = "ukhGHPSDIWeb";
	size_t from = p->sc.pos;
	char d[16];

	m->span.offset = from;
	scan_run(&p->sc, scan_is_alpha);
	m->span.len = p->sc.pos - from;
	if (m->span.len == 0 && after_colon) {
		scan_fail(&p->sc, from, "expected modifiers after ':', found %s",
			  describe(d, sizeof(d), scan_peek(&p->sc, 0)));
		return false;
	}
	for (size_t i = from; i < p->sc.pos; i++) {
		char c = p->sc.s[i];
		const char *at = strchr(letters, c);

		if (c == 'p') {
			if (++m->precise > 3) {
				scan_fail(&p->sc, i, "too many 'p' modifiers: precise level 3 "
					  "('ppp') is the highest");
				return false;
			}
			continue;
		}
		if (!at) {
			scan_fail(&p->sc, i, "unknown modifier '%c' (modifiers: u k h G H p P "
				  "S D I W e b)", c);
			return false;
		}
		if (m->bits & (1u << (at - letters))) {
			scan_fail(&p->sc, i, "modifier '%c' given twice", c);
			return false;
		}
		m->bits |= 1u << (at - letters);
	}
	return true;
}

/* The letter order of parse_mods() is enum event_mod_bit's order. */
_Static_assert(EVENT_MOD_USER == 1u << 0 && EVENT_MOD_HOST == 1u << 4 &&
	       EVENT_MOD_PRECISE_MAX == 1u << 5 && EVENT_MOD_BPF == 1u << 11,
	       "modifier letters and bits out of step");

/* After an event: optional ":mods", then an end of event. */
static bool parse_event_tail(struct eparser *p, struct event_desc *ev, const char *what)
{
	char d[16];
	int c = scan_peek(&p->sc, 0);

	if (c == ':') {
		p->sc.pos++;
		if (!parse_mods(p, &ev->mods, true))
			return false;
		c = scan_peek(&p->sc, 0);
	}
	if (!is_event_end(c)) {
		if (c == '/' && ev->kind == EVENT_TRACEPOINT)
			scan_fail(&p->sc, p->sc.pos, "unexpected '/' in tracepoint name");
		else
			scan_fail(&p->sc, p->sc.pos, "unexpected %s after %s",
				  describe(d, sizeof(d), c), what);
		return false;
	}
	return true;
}

/* text[from..from + n) as a number: decimal or 0x hex, 64 bits at most. */
static bool parse_number(struct eparser *p, size_t from, size_t n, uint64_t *out)
{
	const char *s = p->sc.s + from;
	bool hex = n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	uint64_t v = 0;

	if (hex && n == 2) {
		scan_fail(&p->sc, from + 2, "bad hex number: no digits after '0x'");
		return false;
	}

	for (size_t i = hex ? 2 : 0; i < n; i++) {
		int c = (unsigned char)s[i], dgt;

		if (scan_is_digit(c))
			dgt = c - '0';
		else if (hex && c >= 'a' && c <= 'f')
			dgt = c - 'a' + 10;
		else if (hex && c >= 'A' && c <= 'F')
			dgt = c - 'A' + 10;
		else {
			scan_fail(&p->sc, from + i, "bad %s number", hex ? "hex" : "decimal");
			return false;
		}
		if (v > (UINT64_MAX - (uint64_t)dgt) / (hex ? 16 : 10)) {
			scan_fail(&p->sc, from, "number too large (64 bits at most)");
			return false;
		}
		v = v * (hex ? 16 : 10) + (uint64_t)dgt;
	}
	*out = v;
	return true;
}

static bool parse_term(struct eparser *p, struct event_desc *ev)
{
	struct event_term t = { .key_span.offset = p->sc.pos };
	char d[16];
	int c = scan_peek(&p->sc, 0);

	if (!scan_is_alpha(c) && c != '_') {
		scan_fail(&p->sc, p->sc.pos, "expected a term (name or name=value), found %s",
			  describe(d, sizeof(d), c));
		return false;
	}
	t.key_span.len = scan_run(&p->sc, is_term_byte);
	if (scan_peek(&p->sc, 0) == '=') {
		p->sc.pos++;
		t.has_value = true;
		t.value_span.offset = p->sc.pos;
		t.value_span.len = scan_run(&p->sc, is_term_byte);
		if (t.value_span.len == 0) {
			scan_fail(&p->sc, p->sc.pos, "expected a value after '=', found %s",
				  describe(d, sizeof(d), scan_peek(&p->sc, 0)));
			return false;
		}
		t.is_number = scan_is_digit((unsigned char)p->sc.s[t.value_span.offset]);
		if (t.is_number && !parse_number(p, t.value_span.offset, t.value_span.len,
						 &t.number))
			return false;
	}
	if (ev->nterms == EVENT_TERMS_MAX) {
		scan_fail(&p->sc, t.key_span.offset, "more than %d terms", EVENT_TERMS_MAX);
		return false;
	}
	t.key = scan_copy(&p->sc, p->sc.s + t.key_span.offset, t.key_span.len);
	if (t.key && t.has_value)
		t.value = scan_copy(&p->sc, p->sc.s + t.value_span.offset, t.value_span.len);
	if (!t.key || (t.has_value && !t.value) || !SCAN_PUSH(&p->sc, ev->terms, ev->nterms, t)) {
		free(t.key);
		free(t.value);
		return false;
	}
	return true;
}

/* pmu/term,term/mods: the position is on the first '/'. */
static bool parse_pmu_event(struct eparser *p, struct event_desc *ev, size_t word, size_t n)
{
	char d[16];
	size_t open = p->sc.pos;

	ev->kind = EVENT_PMU;
	ev->pmu_span = (struct event_span){ word, n };
	for (size_t i = word; i < word + n; i++) {
		if (is_glob_byte((unsigned char)p->sc.s[i])) {
			scan_fail(&p->sc, i, "wildcards are not supported in PMU names");
			return false;
		}
	}
	ev->pmu = scan_copy(&p->sc, p->sc.s + word, n);
	if (!ev->pmu)
		return false;
	p->sc.pos++;
	if (scan_peek(&p->sc, 0) != '/') {
		for (;;) {
			int c;

			if (!parse_term(p, ev))
				return false;
			c = scan_peek(&p->sc, 0);
			if (c == ',') {
				p->sc.pos++;
				continue;
			}
			if (c == '/')
				break;
			if (c < 0)
				scan_fail(&p->sc, open, "unterminated PMU event: missing '/'");
			else
				scan_fail(&p->sc, p->sc.pos, "expected ',' or '/' after a term, "
					  "found %s", describe(d, sizeof(d), c));
			return false;
		}
	}
	p->sc.pos++;		/* the closing '/' */
	ev->name_span = (struct event_span){ word, p->sc.pos - word };
	if (scan_is_alpha(scan_peek(&p->sc, 0)) && !parse_mods(p, &ev->mods, false))
		return false;
	return parse_event_tail(p, ev, "PMU event");
}

/* subsys:name[:mods]: the position is on the ':' after the subsystem. */
static bool parse_tracepoint(struct eparser *p, struct event_desc *ev, size_t word, size_t n)
{
	char q[SCAN_QUOTE_SIZE], d[16];
	bool glob = false;
	size_t tp;

	for (size_t i = word; i < word + n; i++) {
		int c = (unsigned char)p->sc.s[i];

		if (!is_tp_byte(c)) {
			scan_fail(&p->sc, word, "unknown event '%s'",
				  scan_quote(q, sizeof(q), p->sc.s + word, n));
			return false;
		}
		glob |= is_glob_byte(c);
	}
	p->sc.pos++;
	tp = p->sc.pos;
	scan_run(&p->sc, is_tp_byte);
	if (p->sc.pos == tp) {
		scan_fail(&p->sc, tp, "expected a tracepoint name after '%s:', found %s",
			  scan_quote(q, sizeof(q), p->sc.s + word, n),
			  describe(d, sizeof(d), scan_peek(&p->sc, 0)));
		return false;
	}
	for (size_t i = tp; i < p->sc.pos; i++)
		glob |= is_glob_byte((unsigned char)p->sc.s[i]);
	if (scan_peek(&p->sc, 0) == '.' || scan_peek(&p->sc, 0) == '-') {
		scan_fail(&p->sc, p->sc.pos, "unexpected '%c' in tracepoint name",
			  p->sc.s[p->sc.pos]);
		return false;
	}
	ev->kind = glob ? EVENT_TRACEPOINT_GLOB : EVENT_TRACEPOINT;
	ev->subsys_span = (struct event_span){ word, n };
	ev->tp_span = (struct event_span){ tp, p->sc.pos - tp };
	ev->name_span = (struct event_span){ word, p->sc.pos - word };
	ev->subsys = scan_copy(&p->sc, p->sc.s + word, n);
	ev->tp_name = ev->subsys ? scan_copy(&p->sc, p->sc.s + tp, p->sc.pos - tp) : NULL;
	if (!ev->tp_name)
		return false;
	return parse_event_tail(p, ev, "tracepoint");
}

/* rNNNN: up to 16 hex digits. */
static bool is_raw(const char *s, size_t n)
{
	if (n < 2 || s[0] != 'r')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!scan_is_digit((unsigned char)s[i]) && !strchr("abcdefABCDEF", s[i]))
			return false;
	return true;
}

/*
 * A name from the tables, or a raw code: the kind, type and config.
 * Returns 1 when found, -1 after recording an error, and 0 for a word that
 * is no such name at all when quiet (the caller tries a tracepoint).
 */
static int parse_symbolic(struct eparser *p, struct event_desc *ev, size_t word, size_t n,
			  bool quiet)
{
	const char *s = p->sc.s + word;
	char q[SCAN_QUOTE_SIZE], part[SCAN_QUOTE_SIZE];
	size_t at, plen;
	int cache = -1, op = -1;

	if (event_named_lookup(s, n, ev))
		return 1;
	if (is_raw(s, n)) {
		if (n > 17) {
			scan_fail(&p->sc, word, "raw event code longer than 16 hex digits");
			return -1;
		}
		ev->kind = EVENT_RAW;
		ev->type = PERF_TYPE_RAW;
		for (size_t i = 1; i < n; i++)
			ev->config = ev->config << 4 |
				     (uint64_t)(scan_is_digit((unsigned char)s[i]) ? s[i] - '0'
						: (s[i] | 0x20) - 'a' + 10);
		return 1;
	}
	scan_quote(q, sizeof(q), s, n);
	switch (cache_decode(s, n, &ev->config, &at, &cache, &op)) {
	case CACHE_OK:
		ev->kind = EVENT_CACHE;
		ev->type = PERF_TYPE_HW_CACHE;
		return 1;
	case CACHE_NOT_A_CACHE:
		if (quiet)
			return 0;
		break;
	case CACHE_BAD_PART:
		for (plen = 0; at + plen < n && s[at + plen] != '-'; plen++)
			;
		scan_fail(&p->sc, word + at, "unknown event '%s': '%s' is no cache operation "
			  "(load, store, prefetch) or result (refs, misses)", q,
			  scan_quote(part, sizeof(part), s + at, plen));
		return -1;
	case CACHE_TWICE:
		scan_fail(&p->sc, word + at, "unknown event '%s': a second operation or result",
			  q);
		return -1;
	case CACHE_BAD_OP:
		scan_fail(&p->sc, word + at, "unknown event '%s': %s has no %s events", q,
			  cache_names[cache][0], cache_ops[op][0]);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (is_glob_byte((unsigned char)s[i])) {
			scan_fail(&p->sc, word + i, "wildcards are only for tracepoints "
				  "(subsys:name)");
			return -1;
		}
	}
	scan_fail(&p->sc, word, "unknown event '%s'", q);
	return -1;
}

/* Is the word at text[from] all modifier letters (an empty one too)? */
static bool only_mod_letters(const struct eparser *p, size_t from)
{
	for (size_t i = from; i < p->sc.len && is_tp_byte((unsigned char)p->sc.s[i]); i++)
		if (!strchr("ukhGHpPSDIWeb", p->sc.s[i]))
			return false;
	return true;
}

/* One event, pushed onto the list in group g. */
static bool parse_event(struct eparser *p, size_t g)
{
	struct event_list *list = p->list;
	struct event_desc ev = { .span.offset = p->sc.pos, .group = g };
	char d[16];
	size_t word = p->sc.pos, n = scan_run(&p->sc, is_name_byte);
	int c = scan_peek(&p->sc, 0);
	bool ok;

	if (n == 0) {
		scan_fail(&p->sc, p->sc.pos, "expected an event, found %s",
			  describe(d, sizeof(d), c));
		return false;
	}
	if (list->nevents == EVENT_LIST_MAX) {
		scan_fail(&p->sc, word, "more than %d events", EVENT_LIST_MAX);
		return false;
	}
	ev.name_span = (struct event_span){ word, n };
	if (c == '/') {
		ok = parse_pmu_event(p, &ev, word, n);
	} else if (c == ':') {
		/* A name perf knows with modifiers, or else a tracepoint. */
		switch (parse_symbolic(p, &ev, word, n, true)) {
		case 1:
			if (ev.kind == EVENT_RAW && !only_mod_letters(p, p->sc.pos + 1)) {
				/* "rbd:..." is a subsystem, not raw 0xbd */
				ev.kind = 0;
				ev.type = 0;
				ev.config = 0;
				ok = parse_tracepoint(p, &ev, word, n);
			} else {
				ok = parse_event_tail(p, &ev, "event");
			}
			break;
		case 0: ok = parse_tracepoint(p, &ev, word, n); break;
		default: ok = false; break;
		}
	} else {
		ok = parse_symbolic(p, &ev, word, n, false) == 1 &&
		     parse_event_tail(p, &ev, "event name");
	}
	ev.span.len = p->sc.pos - ev.span.offset;
	if (ok)
		ev.text = scan_copy(&p->sc, p->sc.s + ev.span.offset, ev.span.len);
	if (!ok || !ev.text || !SCAN_PUSH(&p->sc, list->events, list->nevents, ev)) {
		desc_clear(&ev);
		return false;
	}
	return true;
}

/* A new group at the list's end; false (out of memory) recorded. */
static bool group_push(struct eparser *p, size_t offset, bool braced)
{
	struct event_group g = {
		.span.offset = offset, .braced = braced, .first = p->list->nevents,
	};

	return SCAN_PUSH(&p->sc, p->list->groups, p->list->ngroups, g);
}

/* "{" event { "," event } "}" [ ":" mods ]: the position is on the '{'. */
static bool parse_group(struct eparser *p)
{
	struct event_list *list = p->list;
	struct event_group *g;
	size_t open = p->sc.pos, gi = list->ngroups;
	char d[16];

	if (!group_push(p, open, true))
		return false;
	p->sc.pos++;
	for (;;) {
		int c;

		scan_skip_space(&p->sc);
		c = scan_peek(&p->sc, 0);
		if (c == '{') {
			scan_fail(&p->sc, p->sc.pos, "groups do not nest: '{' inside a group");
			return false;
		}
		if (c == '}' && list->nevents == list->groups[gi].first) {
			scan_fail(&p->sc, p->sc.pos, "empty group");
			return false;
		}
		if (c < 0) {
			scan_fail(&p->sc, open, "unbalanced '{': the group has no '}'");
			return false;
		}
		if (!parse_event(p, gi))
			return false;
		scan_skip_space(&p->sc);
		c = scan_peek(&p->sc, 0);
		if (c == ',') {
			p->sc.pos++;
			continue;
		}
		if (c == '}')
			break;
		if (c < 0)
			scan_fail(&p->sc, open, "unbalanced '{': the group has no '}'");
		else
			scan_fail(&p->sc, p->sc.pos, "expected ',' or '}' in a group, found %s",
				  describe(d, sizeof(d), c));
		return false;
	}
	p->sc.pos++;		/* '}' */
	g = &list->groups[gi];
	if (scan_peek(&p->sc, 0) == ':') {
		p->sc.pos++;
		if (!parse_mods(p, &g->mods, true))
			return false;
	}
	g->n = list->nevents - g->first;
	g->span.len = p->sc.pos - open;
	if (!is_event_end(scan_peek(&p->sc, 0))) {
		scan_fail(&p->sc, p->sc.pos, "unexpected %s after a group",
			  describe(d, sizeof(d), scan_peek(&p->sc, 0)));
		return false;
	}
	return true;
}

static bool parse_list(struct eparser *p)
{
	struct event_list *list = p->list;
	char d[16];

	for (;;) {
		int c;

		scan_skip_space(&p->sc);
		c = scan_peek(&p->sc, 0);
		if (c == '{') {
			if (!parse_group(p))
				return false;
		} else if (c == '}') {
			scan_fail(&p->sc, p->sc.pos, "unbalanced '}': no group is open");
			return false;
		} else if (c < 0 || c == ',') {
			scan_fail(&p->sc, p->sc.pos, list->nevents ? "expected an event after ','"
				  : "expected an event");
			return false;
		} else {
			if (!group_push(p, p->sc.pos, false) || !parse_event(p, list->ngroups - 1))
				return false;
			list->groups[list->ngroups - 1].n = 1;
			list->groups[list->ngroups - 1].span = list->events[list->nevents - 1].span;
		}
		scan_skip_space(&p->sc);
		c = scan_peek(&p->sc, 0);
		if (c < 0)
			return true;
		if (c == '}') {
			scan_fail(&p->sc, p->sc.pos, "unbalanced '}': no group is open");
			return false;
		}
		if (c != ',') {
			scan_fail(&p->sc, p->sc.pos, "expected ',' between events, found %s",
				  describe(d, sizeof(d), c));
			return false;
		}
		p->sc.pos++;
	}
}

struct event_list *event_list_parse(const char *text, size_t len,
				    struct pg_error *err)
{
	struct eparser p = { .sc = SCAN_INIT(text, len, err) };
	int saved;

	p.list = scan_calloc(&p.sc, sizeof(*p.list));
	if (!p.list)
		return NULL;
	p.list->text = scan_copy(&p.sc, text, len);
	p.list->text_len = len;
	if (p.list->text && parse_list(&p))
		return p.list;
	saved = errno;
	event_list_free(p.list);
	errno = saved;
	return NULL;
}

size_t event_parse_error_format(const char *text, size_t len,
				const struct pg_error *err, char *buf, size_t cap)
{
	return range_error_format(text, len, err, buf, cap);
}
