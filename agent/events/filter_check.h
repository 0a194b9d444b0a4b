/*
 * filter_check: a parsed tracepoint filter checked against the tracepoint's
 * format, with libtraceevent, before it goes to the kernel.
 *
 * The kernel answers a bad filter with EINVAL and puts no caret where the
 * mistake is (its caret is always at the filter's start).  Here every
 * predicate is checked with the kernel's own rules (its tracepoint filter
 * parser's parse_pred()) -- the field exists (the kernel's CPU/comm/common_cpu/
 * stacktrace fields and common_* included), the operator fits the field's
 * type, the value's kind fits the field, a number fits the field's sign
 * (no '-' for an unsigned one) -- and the whole filter fits the page
 * the kernel copies; a mistake is reported at its byte with a reason such as
 * "field 'dsig' not in irq:irq_handler_entry".
 */
#ifndef PERFGATE_FILTER_CHECK_H
#define PERFGATE_FILTER_CHECK_H

#include "grammar/filter_parse.h"

/* 0 when the filter fits subsys:name's format; -EINVAL with *err set
 * (offsets as in the tree) otherwise, or when the format cannot be read;
 * -ENOMEM with *err "out of memory". */
int filter_check(const char *subsys, const char *name, const struct filter_node *filter,
		 struct pg_error *err);

#endif
