/*
 * fuzz_event.c: libFuzzer target for grammar/event_parse, the parser of -e
 * lists (command lines, and later control channels).
 *
 * The input is a list, any bytes.  Whatever it holds, the parser must not
 * crash, leak or read out of bounds, and:
 *
 * - an error names a byte inside the input (or its end) and a one-line
 *   reason, and the caret formatter keeps snprintf's contract;
 * - a list that parses is consistent: every event's text, name, PMU,
 *   subsystem, tracepoint name, term key and value is the very bytes at its
 *   offsets, inside the event's span; events are left to right, each in
 *   the group whose members range holds it; tracepoint names hold no '/'
 *   or "..", and a pattern is exactly a name with '*' or '?'; numbers are
 *   their digits' value; modifiers are letters, precise at most 3;
 * - the list rebuilt from the events' texts ("{a,b}:u,c") parses again to
 *   the same kinds, types, configs, terms and modifiers.
 *
 * Build: clang -g -O1 -I. -fsanitize=fuzzer,address,undefined -o fuzz_event \
 *        tests/fuzz/fuzz_event.c grammar/event_parse.c grammar/range_parse.c \
 *        grammar/filter_parse.c grammar/scan.c grammar/text_out.c
 */
#include "grammar/event_parse.h"
#include "tests/fuzz/check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t *in;
static size_t in_len;

/* Is text the very bytes of the input at span? */
static bool at_input(const char *text, struct event_span span)
{
	return text_at(in, in_len, text, span.offset, span.len);
}

static bool inside(struct event_span inner, struct event_span outer)
{
	return inner.offset >= outer.offset &&
	       inner.offset + inner.len <= outer.offset + outer.len;
}

static void check_error(const struct pg_error *err)
{
	size_t n, caps[] = { 0, 1, 2, 7 };
	char *full, part[8];

	CHECK(err->offset <= in_len);
	CHECK(err->message && err->message[0] != '\0' && strchr(err->message, '\n') == NULL);
	n = event_parse_error_format((const char *)in, in_len, err, NULL, 0);
	full = malloc(n + 1);
	CHECK(full);
	CHECK(event_parse_error_format((const char *)in, in_len, err, full, n + 1) == n);
	CHECK(strlen(full) == n && strchr(full, '\n') && !strchr(strchr(full, '\n') + 1, '\n'));
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		memset(part, 'X', sizeof(part));
		CHECK(event_parse_error_format((const char *)in, in_len, err, part, caps[i]) == n);
		if (caps[i]) {
			size_t end = caps[i] - 1 < n ? caps[i] - 1 : n;

			CHECK(part[end] == '\0' && memcmp(part, full, end) == 0);
		}
	}
	free(full);
}

static void check_mods(const struct event_mods *m)
{
	CHECK(m->precise <= 3);
	CHECK(m->bits < (1u << 12));
	if (m->span.len == 0) {
		CHECK(m->bits == 0 && m->precise == 0);
		return;
	}
	CHECK(m->span.offset + m->span.len <= in_len);
	for (size_t i = 0; i < m->span.len; i++)
		CHECK(strchr("ukhGHpPSDIWeb", in[m->span.offset + i]) && in[m->span.offset + i]);
}

static void check_event(const struct event_list *l, const struct event_desc *e)
{
	CHECK(e->span.len > 0 && at_input(e->text, e->span));
	CHECK(e->name_span.len > 0 && inside(e->name_span, e->span));
	check_mods(&e->mods);
	if (e->mods.span.len)
		CHECK(inside(e->mods.span, e->span) &&
		      e->mods.span.offset >= e->name_span.offset + e->name_span.len);
	CHECK(e->group < l->ngroups);
	CHECK(e->kind == EVENT_TOOL ? e->tool != EVENT_TOOL_NONE : e->tool == EVENT_TOOL_NONE);
	switch (e->kind) {
	case EVENT_CACHE: {
		uint64_t c;

		CHECK(e->type == 3 && (e->config & 0xff) < 7 && (e->config >> 8 & 0xff) < 3 &&
		      (e->config >> 16) < 2);
		CHECK(event_cache_config(l->text + e->name_span.offset, e->name_span.len, &c) &&
		      c == e->config);
		break;
	}
	case EVENT_RAW:
		CHECK(e->type == 4 && in[e->name_span.offset] == 'r');
		break;
	case EVENT_PMU:
		CHECK(at_input(e->pmu, e->pmu_span) && e->pmu_span.offset == e->span.offset);
		CHECK(e->nterms <= EVENT_TERMS_MAX);
		for (size_t t = 0; t < e->nterms; t++) {
			const struct event_term *tm = &e->terms[t];

			CHECK(at_input(tm->key, tm->key_span) && inside(tm->key_span, e->name_span));
			CHECK(tm->has_value == (tm->value != NULL));
			if (!tm->has_value)
				continue;
			CHECK(at_input(tm->value, tm->value_span) &&
			      inside(tm->value_span, e->name_span));
			if (tm->is_number) {
				bool hex = tm->value[0] == '0' && (tm->value[1] | 0x20) == 'x';

				CHECK(strtoull(tm->value + (hex ? 2 : 0), NULL, hex ? 16 : 10) ==
				      tm->number);
			}
		}
		break;
	case EVENT_TRACEPOINT:
	case EVENT_TRACEPOINT_GLOB: {
		bool glob = strpbrk(e->subsys, "*?") || strpbrk(e->tp_name, "*?");

		CHECK(at_input(e->subsys, e->subsys_span) && at_input(e->tp_name, e->tp_span));
		CHECK(e->subsys_span.offset == e->span.offset &&
		      in[e->subsys_span.offset + e->subsys_span.len] == ':');
		CHECK(!strpbrk(e->subsys, "/.:-") && !strpbrk(e->tp_name, "/.:-"));
		CHECK(glob == (e->kind == EVENT_TRACEPOINT_GLOB));
		break;
	}
	default:
		CHECK(e->kind <= EVENT_TOOL);
		break;
	}
}

/* "{a,b}:u,c" from the events' own texts. */
static char *rebuild(const struct event_list *l)
{
	size_t cap = 3 * l->text_len + 16, n = 0;
	char *s = malloc(cap);

	CHECK(s);
	for (size_t g = 0; g < l->ngroups; g++) {
		const struct event_group *grp = &l->groups[g];

		n += (size_t)snprintf(s + n, cap - n, "%s%s", g ? "," : "", grp->braced ? "{" : "");
		for (size_t i = grp->first; i < grp->first + grp->n; i++)
			n += (size_t)snprintf(s + n, cap - n, "%s%s", i > grp->first ? "," : "",
					      l->events[i].text);
		if (grp->braced)
			n += (size_t)snprintf(s + n, cap - n, "}%s%.*s", grp->mods.span.len ? ":" : "",
					      (int)grp->mods.span.len,
					      l->text + grp->mods.span.offset);
		CHECK(n < cap);
	}
	return s;
}

static void check_same(const struct event_list *a, const struct event_list *b)
{
	CHECK(a->nevents == b->nevents && a->ngroups == b->ngroups);
	for (size_t i = 0; i < a->nevents; i++) {
		const struct event_desc *x = &a->events[i], *y = &b->events[i];

		CHECK(x->kind == y->kind && x->type == y->type && x->config == y->config);
		CHECK(x->group == y->group && x->nterms == y->nterms && !strcmp(x->text, y->text));
		CHECK(x->mods.bits == y->mods.bits && x->mods.precise == y->mods.precise);
		for (size_t t = 0; t < x->nterms; t++)
			CHECK(!strcmp(x->terms[t].key, y->terms[t].key) &&
			      x->terms[t].number == y->terms[t].number);
	}
	for (size_t g = 0; g < a->ngroups; g++)
		CHECK(a->groups[g].braced == b->groups[g].braced &&
		      a->groups[g].n == b->groups[g].n &&
		      a->groups[g].mods.bits == b->groups[g].mods.bits &&
		      a->groups[g].mods.precise == b->groups[g].mods.precise);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pg_error err = { 0 };
	struct event_list *l, *again;
	size_t next = 0, end = 0;
	char *text;

	in = data;
	in_len = size;
	l = event_list_parse((const char *)data, size, &err);
	if (!l) {
		check_error(&err);
		pg_error_clear(&err);
		return 0;
	}
	CHECK(l->text_len == size && memcmp(l->text, data, size) == 0 && l->text[size] == '\0');
	CHECK(l->nevents >= 1 && l->nevents <= EVENT_LIST_MAX && l->ngroups >= 1);
	for (size_t g = 0; g < l->ngroups; g++) {
		const struct event_group *grp = &l->groups[g];

		CHECK(grp->first == next && grp->n >= 1 && (grp->braced || grp->n == 1));
		CHECK(grp->span.offset >= end && grp->span.offset + grp->span.len <= size);
		CHECK(!grp->braced || (in[grp->span.offset] == '{' && grp->span.len >= 2));
		check_mods(&grp->mods);
		CHECK(grp->braced || grp->mods.span.len == 0);
		for (size_t i = grp->first; i < grp->first + grp->n; i++) {
			CHECK(l->events[i].group == g && inside(l->events[i].span, grp->span));
			CHECK(l->events[i].span.offset >= end);
			check_event(l, &l->events[i]);
			end = l->events[i].span.offset + l->events[i].span.len;
		}
		end = grp->span.offset + grp->span.len;
		next += grp->n;
	}
	CHECK(next == l->nevents);
	text = rebuild(l);
	again = event_list_parse(text, strlen(text), &err);
	if (!again)
		fprintf(stderr, "rebuilt '%s' does not parse: %s at %zu\n", text, err.message,
			err.offset);
	CHECK(again);
	check_same(l, again);
	event_list_free(again);
	free(text);
	event_list_free(l);
	return 0;
}
