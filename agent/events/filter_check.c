/*
 * filter_check: tracepoint filters against tracefs formats (libtraceevent).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include <tracefs.h>
#include <unistd.h>

#include "agent/events/filter_check.h"

struct check_ctx {
	const char *subsys, *name;
	struct tep_event *event;
	struct pg_error *err;
};

/* Report a mistake at offset; returns -1 so callers can return it. */
__attribute__((format(printf, 3, 4)))
static int check_fail(struct check_ctx *ctx, size_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pg_error_vset(ctx->err, offset, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * A field as the kernel's tracepoint filter parser sees it (its
 * filter_assign_type(), is_string_field(), parse_pred()).  The kernel decides
 * from the type as the format file spells it, so the same test is made here
 * on the same text.
 */
enum field_kind {
	FIELD_NUMBER,		/* FILTER_OTHER: numbers, & and CPUS{} */
	FIELD_STRING,		/* char arrays, __data_loc/__rel_loc char[], char * */
	FIELD_CPU,		/* CPU, cpu, common_cpu: numbers and CPUS{} */
	FIELD_CPUMASK,		/* __data_loc cpumask_t: numbers and CPUS{} */
	FIELD_STACKTRACE,	/* stacktrace, STACKTRACE: numbers only */
};

static enum field_kind kind_of_type(const char *type)
{
	if (strstr(type, "__data_loc")) {
		if (strstr(type, "char"))
			return FIELD_STRING;
		if (strstr(type, "cpumask_t"))
			return FIELD_CPUMASK;
	}
	if (strstr(type, "__rel_loc") && strstr(type, "char"))
		return FIELD_STRING;
	if (strchr(type, '[') && strstr(type, "char"))
		return FIELD_STRING;
	if (!strcmp(type, "char *") || !strcmp(type, "const char *"))
		return FIELD_STRING;
	return FIELD_NUMBER;
}

/* A field as the checks need it. */
struct field_info {
	enum field_kind kind;
	int size;
	bool is_signed;		/* the kernel reads its values with kstrtoll() */
	const char *type;	/* as the format spells it */
};

/* The kernel's fields of every event (trace_define_generic_fields()),
 * looked up after the format's own, as trace_find_event_field() does;
 * size is theirs, for .function, and so is the sign: is_signed_type() of
 * int and of char *. */
static bool generic_field(const char *name, struct field_info *f)
{
	static const struct { const char *name; struct field_info f; } fields[] = {
		{ "CPU", { FIELD_CPU, sizeof(int), true, "int" } },
		{ "cpu", { FIELD_CPU, sizeof(int), true, "int" } },
		{ "common_cpu", { FIELD_CPU, sizeof(int), true, "int" } },
		{ "COMM", { FIELD_STRING, sizeof(char *), false, "char *" } },
		{ "comm", { FIELD_STRING, sizeof(char *), false, "char *" } },
		{ "stacktrace", { FIELD_STACKTRACE, sizeof(char *), false, "char *" } },
		{ "STACKTRACE", { FIELD_STACKTRACE, sizeof(char *), false, "char *" } },
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(fields[i].name, name)) {
			*f = fields[i].f;
			return true;
		}
	return false;
}

static bool op_fits_string(enum filter_op op)
{
	return op == FILTER_OP_EQ || op == FILTER_OP_NE || op == FILTER_OP_GLOB;
}

/* A ".function" predicate: an address-sized field, == or !=, and a symbol
 * name or an address, unquoted. */
static int check_function(struct check_ctx *ctx, const struct filter_pred *pred, int size)
{
	if (size != (int)sizeof(long))
		return check_fail(ctx, pred->field_span.offset, "field '%s' is %d bytes: "
				  ".function needs an address field (%zu bytes)",
				  pred->field, size, sizeof(long));
	if (pred->op != FILTER_OP_EQ && pred->op != FILTER_OP_NE)
		return check_fail(ctx, pred->op_span.offset, "operator '%s' does not apply "
				  "to .function (use == or !=)", filter_op_name(pred->op));
	if (pred->value_kind != FILTER_VALUE_WORD && pred->value_kind != FILTER_VALUE_NUMBER)
		return check_fail(ctx, pred->value_span.offset,
				  "a .function value is a symbol or an address, unquoted");
	return 0;
}

/*
 * A number for a number field: the kernel reads it with kstrtoull() when
 * the field is unsigned, so "-1" is refused there, and with kstrtoll()
 * when it is signed, so a value above INT64_MAX is (0xffffffffffffffff
 * included).  Both are a bare EINVAL from the kernel.
 */
static int check_sign(struct check_ctx *ctx, const struct filter_pred *pred,
		      const struct field_info *f)
{
	if (!f->is_signed && pred->negative)
		return check_fail(ctx, pred->value_span.offset, "field '%s' is unsigned (%s): "
				  "the kernel takes no negative value", pred->field, f->type);
	if (f->is_signed && !pred->negative && pred->number > INT64_MAX)
		return check_fail(ctx, pred->value_span.offset, "field '%s' is signed (%s): "
				  "the kernel takes at most %" PRId64 " (%" PRId64 " has these "
				  "64 bits)", pred->field, f->type, INT64_MAX, (int64_t)pred->number);
	return 0;
}

/* The field pred names, from the event's format or else the kernel's
 * generic fields: 0 with *f filled, or -1 when neither has it. */
static int find_field(struct check_ctx *ctx, const struct filter_pred *pred,
		      struct field_info *f)
{
	struct tep_format_field *field = tep_find_any_field(ctx->event, pred->field);

	if (field) {
		f->kind = kind_of_type(field->type);
		f->size = field->size;
		f->is_signed = field->flags & TEP_FIELD_IS_SIGNED;
		f->type = field->type;
		return 0;
	}
	if (generic_field(pred->field, f))
		return 0;
	return check_fail(ctx, pred->field_span.offset, "field '%s' not in %s:%s",
			  pred->field, ctx->subsys, ctx->name);
}

/* CPUS{...}: for a number, CPU or cpumask field, with ==, != or &. */
static int check_cpus_value(struct check_ctx *ctx, const struct filter_pred *pred,
			    enum field_kind kind)
{
	if (kind == FIELD_STRING || kind == FIELD_STACKTRACE)
		return check_fail(ctx, pred->value_span.offset, "CPUS{} needs a number, "
				  "CPU or cpumask field; '%s' is a %s", pred->field,
				  kind == FIELD_STRING ? "string" : "stack trace");
	if (pred->op != FILTER_OP_EQ && pred->op != FILTER_OP_NE && pred->op != FILTER_OP_BAND)
		return check_fail(ctx, pred->op_span.offset, "operator '%s' does not apply "
				  "to CPUS{} (use ==, != or &)", filter_op_name(pred->op));
	return 0;
}

/* A string or a bare word (quoted on its way to the kernel): for a string
 * field, with ==, != or ~. */
static int check_string_value(struct check_ctx *ctx, const struct filter_pred *pred,
			      enum field_kind kind)
{
	if (!op_fits_string(pred->op))	/* filter_parse refuses it first */
		return check_fail(ctx, pred->op_span.offset, "operator '%s' does not apply "
				  "to strings: use ==, != or ~", filter_op_name(pred->op));
	if (kind != FIELD_STRING)
		return check_fail(ctx, pred->value_span.offset, "field '%s' is a number: "
				  "expected a number, not %s", pred->field,
				  pred->value_kind == FILTER_VALUE_WORD ? "a word" : "a string");
	return 0;
}

/* A number: for a number field, with no '~', of a sign the field takes. */
static int check_number_value(struct check_ctx *ctx, const struct filter_pred *pred,
			      const struct field_info *f)
{
	if (f->kind == FIELD_STRING && !op_fits_string(pred->op))
		return check_fail(ctx, pred->op_span.offset, "operator '%s' does not apply "
				  "to string field '%s' (use ==, != or ~)",
				  filter_op_name(pred->op), pred->field);
	if (f->kind == FIELD_STRING)
		return check_fail(ctx, pred->value_span.offset,
				  "field '%s' is a string: quote the value", pred->field);
	if (pred->op == FILTER_OP_GLOB)
		return check_fail(ctx, pred->op_span.offset, "operator '~' needs a string "
				  "field; '%s' is a number", pred->field);
	return check_sign(ctx, pred, f);
}

/* One predicate: its field exists, and its operator and value fit it. */
static int check_pred(const struct filter_pred *pred, void *arg)
{
	struct check_ctx *ctx = arg;
	struct field_info f = { 0 };

	if (find_field(ctx, pred, &f))
		return -1;
	if (pred->suffix == FILTER_SUFFIX_FUNCTION)
		return check_function(ctx, pred, f.size);
	switch (pred->value_kind) {
	case FILTER_VALUE_CPUS:
		return check_cpus_value(ctx, pred, f.kind);
	case FILTER_VALUE_STRING:
	case FILTER_VALUE_WORD:
		return check_string_value(ctx, pred, f.kind);
	case FILTER_VALUE_NUMBER:
		return check_number_value(ctx, pred, &f);
	}
	return 0;
}

int filter_check(const char *subsys, const char *name, const struct filter_node *filter,
		 struct pg_error *err)
{
	struct check_ctx ctx = { subsys, name, NULL, err };
	size_t len = filter_format(filter, FILTER_FORMAT_KERNEL, NULL, 0);
	size_t max = (size_t)sysconf(_SC_PAGESIZE) - 1;
	struct tep_handle *tep;
	char *format = NULL;
	int size = 0, rc = -EINVAL;

	/* PERF_EVENT_IOC_SET_FILTER copies at most a page, NUL included
	 * (strndup_user(arg, PAGE_SIZE)): longer is a bare EINVAL. */
	if (len > max) {
		pg_error_set(err, filter->span.offset,
			     "filter is %zu bytes; the kernel takes at most %zu", len, max);
		return -EINVAL;
	}
	tep = tep_alloc();
	if (!tep) {
		pg_error_set(err, 0, "out of memory");
		return -ENOMEM;
	}
	format = tracefs_event_file_read(NULL, subsys, name, "format", &size);
	if (!format || size <= 0 ||
	    tep_parse_format(tep, &ctx.event, format, (unsigned long)size, subsys) != 0) {
		pg_error_set(err, 0, "cannot read the format of %s:%s", subsys, name);
		goto out;
	}
	rc = filter_for_each_pred(filter, check_pred, &ctx) ? -EINVAL : 0;
out:
	free(format);
	tep_free(tep);
	return rc;
}
