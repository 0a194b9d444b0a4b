/*
 * filter_check: tracepoint filters against tracefs formats (libtraceevent).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include <tracefs.h>

#include "agent/filter_check.h"

struct check_ctx {
	const char *subsys, *name;
	struct tep_event *event;
	struct filter_error *err;
};

/* Report a mistake at offset; returns -1 so callers can return it. */
static int check_fail(struct check_ctx *ctx, size_t offset, const char *reason)
{
	ctx->err->offset = offset;
	snprintf(ctx->err->reason, sizeof(ctx->err->reason), "%.127s", reason);
	return -1;
}

/* Strings: char arrays, __string/__data_loc fields, char pointers. */
static bool field_is_string(const struct tep_format_field *field)
{
	if (field->flags & (TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC))
		return true;
	return (field->flags & TEP_FIELD_IS_ARRAY) && strstr(field->type, "char");
}

static bool op_fits_string(enum filter_op op)
{
	return op == FILTER_OP_EQ || op == FILTER_OP_NE || op == FILTER_OP_GLOB;
}

static int check_pred(const struct filter_pred *pred, void *arg)
{
	struct check_ctx *ctx = arg;
	struct tep_format_field *field = tep_find_any_field(ctx->event, pred->field);
	char why[160];
	bool is_string;

	/* The kernel's own pseudo-fields, valid on every tracepoint. */
	if (!field && (!strcmp(pred->field, "CPU") || !strcmp(pred->field, "cpu") ||
		       !strcmp(pred->field, "COMM") || !strcmp(pred->field, "comm")))
		return 0;
	if (!field) {
		snprintf(why, sizeof(why), "field '%s' not in %s:%s", pred->field,
			 ctx->subsys, ctx->name);
		return check_fail(ctx, pred->field_span.offset, why);
	}
	is_string = field_is_string(field);
	if (is_string && !op_fits_string(pred->op)) {
		snprintf(why, sizeof(why), "operator '%s' does not apply to string field '%s' "
			 "(use ==, != or ~)", filter_op_name(pred->op), pred->field);
		return check_fail(ctx, pred->op_span.offset, why);
	}
	if (!is_string && pred->op == FILTER_OP_GLOB) {
		snprintf(why, sizeof(why), "operator '~' needs a string field; '%s' is a number",
			 pred->field);
		return check_fail(ctx, pred->op_span.offset, why);
	}
	if (!is_string && pred->value_kind == FILTER_VALUE_STRING && !pred->suffix) {
		snprintf(why, sizeof(why), "field '%s' is a number: expected a number, not a string",
			 pred->field);
		return check_fail(ctx, pred->value_span.offset, why);
	}
	if (is_string && pred->value_kind == FILTER_VALUE_NUMBER) {
		snprintf(why, sizeof(why), "field '%s' is a string: quote the value", pred->field);
		return check_fail(ctx, pred->value_span.offset, why);
	}
	return 0;
}

int filter_check(const char *subsys, const char *name, const struct filter_node *filter,
		 struct filter_error *err)
{
	struct check_ctx ctx = { subsys, name, NULL, err };
	struct tep_handle *tep = tep_alloc();
	char *format;
	int size = 0, rc = -1;

	format = tracefs_event_file_read(NULL, subsys, name, "format", &size);
	if (!tep || !format || size <= 0 ||
	    tep_parse_format(tep, &ctx.event, format, (unsigned long)size, subsys) != 0) {
		err->offset = 0;
		snprintf(err->reason, sizeof(err->reason), "cannot read the format of %s:%s",
			 subsys, name);
		goto out;
	}
	rc = filter_for_each_pred(filter, check_pred, &ctx) ? -1 : 0;
out:
	free(format);
	if (tep)
		tep_free(tep);
	return rc;
}
