/*
 * event_resolve.c: perf_event_attrs for a parsed -e list (the API is in
 * event_resolve.h): modifiers as perf applies them, PMU terms through
 * sysfs's format/ and events/ files, tracepoints and their patterns
 * through tracefs's events/ directory.
 *
 * The facts of perf's behaviour (which modifier sets what, how a format's
 * bit ranges take a value) are checked against `perf stat -vv` of perf 6.1
 * in tests/unit/test_event_parse.c; the sysfs and tracefs layouts are the
 * kernel's ABI (Documentation/ABI/testing/sysfs-bus-event_source-devices-*).
 */
#include "agent/events/event_resolve.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- errors --------------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static int fail(struct pg_error *err, size_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pg_error_vset(err, offset, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- modifiers ---------------------------------------------------------------- */

int event_mods_apply(struct perf_event_attr *attr, struct event_attr_flags *flags,
		     const struct event_mods *mods, bool group, bool leader)
{
	unsigned b = mods->bits;
	bool eu = group && attr->exclude_user, ek = group && attr->exclude_kernel;
	bool eh = group && attr->exclude_hv, eH = group && attr->exclude_host;
	bool eG = group && attr->exclude_guest;
	bool exclude = eu || ek || eh, exclude_GH = group && flags->exclude_GH;
	unsigned precise = (group ? attr->precise_ip : 0) + mods->precise;

	if (precise > 3)
		return -1;
	if (mods->precise && !exclude_GH)
		eG = true;		/* precise needs exclude_guest */
	if (b & (EVENT_MOD_USER | EVENT_MOD_KERNEL | EVENT_MOD_HV)) {
		if (!exclude)
			eu = ek = eh = true;
		if (b & EVENT_MOD_USER) {
			eu = false;
			if (!exclude_GH)
				eG = true;
		}
		if (b & EVENT_MOD_KERNEL)
			ek = false;
		if (b & EVENT_MOD_HV)
			eh = false;
	}
	if (b & (EVENT_MOD_GUEST | EVENT_MOD_HOST)) {
		if (!exclude_GH)
			eG = eH = exclude_GH = true;
		if (b & EVENT_MOD_GUEST)
			eG = false;
		if (b & EVENT_MOD_HOST)
			eH = false;
	}
	attr->exclude_user = eu;
	attr->exclude_kernel = ek;
	attr->exclude_hv = eh;
	attr->exclude_host = eH;
	attr->exclude_guest = eG;
	attr->precise_ip = precise;
	flags->exclude_GH = exclude_GH;
	if (b & EVENT_MOD_NON_IDLE)
		attr->exclude_idle = 1;
	if ((b & EVENT_MOD_PINNED) && leader)
		attr->pinned = 1;
	if ((b & EVENT_MOD_EXCLUSIVE) && leader)
		attr->exclusive = 1;
	flags->sample_read |= !!(b & EVENT_MOD_SAMPLE_READ);
	flags->precise_max |= !!(b & EVENT_MOD_PRECISE_MAX);
	flags->weak_group |= !!(b & EVENT_MOD_WEAK);
	flags->bpf_counter |= !!(b & EVENT_MOD_BPF);
	return 0;
}

static bool mods_given(const struct event_mods *m)
{
	return m->span.len > 0;
}

/* ---- files ------------------------------------------------------------------ */

/* The first line of a small file, without its newline, into *line
 * (malloc'd): 0, or -errno (-ENOMEM: out of memory, else no such file). */
static int read_line(const char *path, char **line)
{
	char buf[4096];
	FILE *f = fopen(path, "re");
	size_t n;

	*line = NULL;
	if (!f)
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	*line = strdup(buf);
	return *line ? 0 : -ENOMEM;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(char **names, long n)
{
	for (long i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/*
 * The names in dir (no dot files) that match pattern (NULL: all), sorted,
 * or in the directory's own order (readdir's) unless sorted; with want_dir
 * only subdirectories.  Returns the count, or -errno: -ENOMEM when out of
 * memory, another when dir cannot be read.  *out is NULL on failure.
 */
static long list_dir(const char *dir, const char *pattern, bool want_dir, bool sorted,
		     char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL, path[4096];
	size_t n = 0;

	*out = NULL;
	if (!d)
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	while ((de = readdir(d))) {
		char **grown;

		if (de->d_name[0] == '.' || (pattern && fnmatch(pattern, de->d_name, 0)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (want_dir && !is_dir(path))
			continue;
		grown = realloc(names, (n + 1) * sizeof(*names));
		if (grown)
			names = grown;
		if (!grown || !(names[n] = strdup(de->d_name))) {
			/* A list cut short would name the wrong choices. */
			closedir(d);
			names_free(names, (long)n);
			return -ENOMEM;
		}
		n++;
	}
	closedir(d);
	if (n && sorted)
		qsort(names, n, sizeof(*names), by_name);
	*out = names;
	return (long)n;
}

/* Append name to the list at *end, after ", " unless it is the first. */
static void names_append(char *list, char **end, const char *name)
{
	size_t n = strlen(name);

	if (*end > list) {
		memcpy(*end, ", ", 2);
		*end += 2;
	}
	memcpy(*end, name, n + 1);
	*end += n;
}

/* names, then extra (NULL-terminated; may be NULL), joined by ", " in a
 * new string, whole however many there are; NULL when out of memory. */
static char *names_join(char **names, long n, const char *const *extra)
{
	size_t len = 1;
	char *list, *end;

	for (long i = 0; i < n; i++)
		len += strlen(names[i]) + 2;
	for (const char *const *e = extra; e && *e; e++)
		len += strlen(*e) + 2;
	list = malloc(len);
	if (!list)
		return NULL;
	end = list;
	*end = '\0';
	for (long i = 0; i < n; i++)
		names_append(list, &end, names[i]);
	for (const char *const *e = extra; e && *e; e++)
		names_append(list, &end, *e);
	return list;
}

/* ---- PMU formats ---------------------------------------------------------------- */

/* A format file's meaning: which attr field, which of its bits (LSB first). */
struct pmu_format {
	int field;		/* 0: config, 1: config1, 2: config2 */
	uint64_t mask;
};

/* "config:0-7,32-35", "config1:0-63", "config:23".  false when malformed. */
static bool format_parse(const char *text, struct pmu_format *f)
{
	const char *p = text;
	char *end;

	if (!strncmp(p, "config1:", 8))
		f->field = 1, p += 8;
	else if (!strncmp(p, "config2:", 8))
		f->field = 2, p += 8;
	else if (!strncmp(p, "config:", 7))
		f->field = 0, p += 7;
	else
		return false;
	f->mask = 0;
	for (;;) {
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p || lo > 63)
			return false;
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			if (end == p + 1 || hi > 63 || hi < lo)
				return false;
			p = end;
		}
		for (unsigned long bit = lo; bit <= hi; bit++)
			f->mask |= 1ull << bit;
		if (*p != ',')
			break;
		p++;
	}
	return *p == '\0' && f->mask;
}

/* value's bits, lowest first, into the format's bits (perf's pmu_format_value). */
static uint64_t format_place(uint64_t mask, uint64_t value)
{
	uint64_t out = 0, vbit = 1;

	for (unsigned bit = 0; bit < 64; bit++) {
		if (!(mask & (1ull << bit)))
			continue;
		if (value & vbit)
			out |= 1ull << bit;
		vbit <<= 1;
	}
	return out;
}

static __u64 *attr_config_field(struct perf_event_attr *attr, int field)
{
	return field == 0 ? &attr->config : field == 1 ? &attr->config1 : &attr->config2;
}

/* perf's own terms that any PMU takes (besides format/ and events/). */
static const char *const static_terms[] = { "config", "config1", "config2", "name", "period",
					    NULL };

struct pmu_ctx {
	const char *root;
	const char *pmu;
	const struct event_desc *ev;	/* the event, for messages */
	struct perf_event_attr *attr;
	char **name;
	struct pg_error *err;
};

/* The unknown-term message: the terms the PMU's format has. */
static int unknown_term(struct pmu_ctx *c, const struct event_term *t, size_t at)
{
	char dir[4096], *list, **names;
	long n;
	int rc;

	snprintf(dir, sizeof(dir), "%s/%s/format", c->root, c->pmu);
	n = list_dir(dir, NULL, false, true, &names);
	list = n == -ENOMEM ? NULL : names_join(names, n < 0 ? 0 : n, static_terms);
	names_free(names, n);
	if (!list)
		return fail(c->err, at, "out of memory");
	rc = fail(c->err, at, "unknown term '%s' for PMU '%s' (terms: %s)", t->key, c->pmu,
		  list);
	free(list);
	return rc;
}

static int apply_terms(struct pmu_ctx *c, const struct event_term *terms, size_t n,
		       const size_t *at_override, int depth);

/* An alias from events/: its terms, applied as if written in its place. */
static int apply_alias(struct pmu_ctx *c, const struct event_term *t, const char *text,
		       size_t at, int depth)
{
	struct event_list *l;
	char *wrapped;
	int rc;

	if (depth > 0)
		return fail(c->err, at, "alias '%s' of PMU '%s' names another alias", t->key,
			    c->pmu);
	/* Its text is a term list: parse it as "x/TEXT/" with the same parser. */
	if (asprintf(&wrapped, "x/%s/", text) < 0)
		return fail(c->err, at, "out of memory");
	l = event_list_parse(wrapped, strlen(wrapped), NULL);	/* a bad alias is reported below */
	free(wrapped);
	if (!l && errno == ENOMEM)
		return fail(c->err, at, "out of memory");
	if (!l || l->nevents != 1 || l->events[0].kind != EVENT_PMU) {
		event_list_free(l);
		return fail(c->err, at, "cannot read alias '%s' of PMU '%s': '%s'", t->key,
			    c->pmu, text);
	}
	rc = apply_terms(c, l->events[0].terms, l->events[0].nterms, &at, depth + 1);
	event_list_free(l);
	return rc;
}

/*
 * perf's own terms, which any PMU takes: name, period, config, config1,
 * config2.  0 or -1 when t is one of them, 1 when it is not.
 */
static int apply_perf_term(struct pmu_ctx *c, const struct event_term *t, size_t at,
			   uint64_t value)
{
	if (!strcmp(t->key, "name")) {
		if (!t->has_value)
			return fail(c->err, at, "term 'name' needs a value (name=NAME)");
		if (c->name) {
			free(*c->name);
			*c->name = strdup(t->value);
			if (!*c->name)
				return fail(c->err, at, "out of memory");
		}
		return 0;
	}
	if (!strcmp(t->key, "period")) {
		c->attr->sample_period = value;
		return 0;
	}
	for (int i = 0; i < 3; i++) {
		if (!strcmp(t->key, static_terms[i])) {
			*attr_config_field(c->attr, i) = value;
			return 0;
		}
	}
	return 1;
}

/*
 * A term the PMU's format/ directory describes: value put into its bits.
 * 0 or -1 when the format file is there, 1 when it is not.
 */
static int apply_format_term(struct pmu_ctx *c, const struct event_term *t, size_t at,
			     size_t vat, uint64_t value)
{
	char path[4096], *text;
	struct pmu_format f;
	uint64_t room;
	__u64 *field;
	int bits, rc = -1, got;

	snprintf(path, sizeof(path), "%s/%s/format/%s", c->root, c->pmu, t->key);
	got = read_line(path, &text);
	if (got == -ENOMEM)
		return fail(c->err, at, "out of memory");
	if (got)
		return 1;
	if (!format_parse(text, &f)) {
		fail(c->err, at, "cannot read format '%s' of PMU '%s': '%s'", t->key, c->pmu, text);
		goto out;
	}
	bits = __builtin_popcountll(f.mask);
	room = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
	if (value > room) {
		fail(c->err, vat, "value 0x%llx too big for '%s' (%s): 0x%llx at most",
		     (unsigned long long)value, t->key, text, (unsigned long long)room);
		goto out;
	}
	field = attr_config_field(c->attr, f.field);
	*field = (*field & ~f.mask) | format_place(f.mask, value);
	rc = 0;
out:
	free(text);
	return rc;
}

/* An alias in the PMU's events/ directory: 0 or -1 when the file is
 * there, 1 when it is not. */
static int apply_alias_term(struct pmu_ctx *c, const struct event_term *t, size_t at, int depth)
{
	char path[4096], *text;
	int rc;

	snprintf(path, sizeof(path), "%s/%s/events/%s", c->root, c->pmu, t->key);
	rc = read_line(path, &text);
	if (rc == -ENOMEM)
		return fail(c->err, at, "out of memory");
	if (rc)
		return 1;
	rc = apply_alias(c, t, text, at, depth);
	free(text);
	return rc;
}

/*
 * One term: perf's own, else the PMU's format/, else (with no value) its
 * events/ aliases.  Errors at byte at (about the term) or vat (about its
 * value).
 */
static int apply_term(struct pmu_ctx *c, const struct event_term *t, size_t at, size_t vat,
		      int depth)
{
	uint64_t value = t->has_value ? t->number : 1;
	int rc;

	if (t->has_value && !t->is_number && strcmp(t->key, "name") != 0)
		return fail(c->err, vat, "term '%s' takes a number, not '%s'", t->key, t->value);
	rc = apply_perf_term(c, t, at, value);
	if (rc <= 0)
		return rc;
	rc = apply_format_term(c, t, at, vat, value);
	if (rc <= 0)
		return rc;
	if (!t->has_value) {
		rc = apply_alias_term(c, t, at, depth);
		if (rc <= 0)
			return rc;
	}
	return unknown_term(c, t, at);
}

/* Terms in order; at_override: every error at this offset (an alias's terms). */
static int apply_terms(struct pmu_ctx *c, const struct event_term *terms, size_t n,
		       const size_t *at_override, int depth)
{
	for (size_t i = 0; i < n; i++) {
		const struct event_term *t = &terms[i];
		size_t at = at_override ? *at_override : t->key_span.offset;
		size_t vat = at_override ? *at_override
				: t->has_value ? t->value_span.offset : at;

		if (apply_term(c, t, at, vat, depth))
			return -1;
	}
	return 0;
}

int event_resolve_pmu(const char *pmus_root, const struct event_desc *ev,
		      struct perf_event_attr *attr, char **name,
		      struct pg_error *err)
{
	struct pmu_ctx c = { pmus_root ? pmus_root : EVENT_RESOLVE_SYSFS, ev->pmu, ev, attr,
			     name, err };
	char path[4096], *list, *text, *end;
	char **names;
	unsigned long type;
	long n;
	int rc;

	snprintf(path, sizeof(path), "%s/%s/type", c.root, ev->pmu);
	rc = read_line(path, &text);
	if (rc == -ENOMEM)
		return fail(err, ev->pmu_span.offset, "out of memory");
	if (rc) {
		n = list_dir(c.root, NULL, false, true, &names);
		if (n == -ENOMEM)
			return fail(err, ev->pmu_span.offset, "out of memory");
		if (n < 0)
			return fail(err, ev->pmu_span.offset, "unknown PMU '%s' (cannot read %s)",
				    ev->pmu, c.root);
		list = names_join(names, n, NULL);
		names_free(names, n);
		if (!list)
			return fail(err, ev->pmu_span.offset, "out of memory");
		fail(err, ev->pmu_span.offset, "unknown PMU '%s' (PMUs: %s)", ev->pmu, list);
		free(list);
		return -1;
	}
	type = strtoul(text, &end, 10);
	if (end == text || *end) {
		fail(err, ev->pmu_span.offset, "cannot read the type of PMU '%s': '%s'",
		     ev->pmu, text);
		free(text);
		return -1;
	}
	free(text);
	attr->type = (uint32_t)type;
	return apply_terms(&c, ev->terms, ev->nterms, NULL, 0);
}

/* ---- tracepoints -------------------------------------------------------------- */

/* The id of EVENTS/sys/name, or -errno: -ENOMEM when out of memory,
 * -ENOENT when sys:name is not a tracepoint. */
static long long tracepoint_id(const char *root, const char *sys, const char *name)
{
	char path[4096], *text, *end;
	long long id;
	int rc;

	snprintf(path, sizeof(path), "%s/%s/%s/id", root, sys, name);
	rc = read_line(path, &text);
	if (rc)
		return rc;
	id = strtoll(text, &end, 10);
	if (end == text || *end || id < 0)
		id = -ENOENT;
	free(text);
	return id;
}

/* ---- the list ---------------------------------------------------------------- */

static int push(struct event_resolved_list *out, struct event_resolved *r)
{
	struct event_resolved *grown = realloc(out->events, (out->n + 1) * sizeof(*grown));

	if (!grown) {
		free(r->name);
		return -1;
	}
	out->events = grown;
	out->events[out->n++] = *r;
	return 0;
}

/* The name of a tracepoint's row: "subsys:name", without the modifiers,
 * as perf 6.1 prints it ("perf stat -e syscalls:sys_enter_write:u" shows
 * "syscalls:sys_enter_write"; "task-clock:u" keeps its ":u"). */
static char *tracepoint_name(const char *sys, const char *name)
{
	char *s;

	if (asprintf(&s, "%s:%s", sys, name) < 0)
		return NULL;
	return s;
}

/* Every match of a pattern, as members of the event's group, in perf's
 * order: tracefs's directory order (perf 6.1 reads events/ and each
 * subsystem with readdir and sorts nothing). */
static int resolve_glob(const struct event_resolve_roots *roots, const struct event_list *list,
			const struct event_desc *ev, const struct event_resolved *proto,
			struct event_resolved_list *out, struct pg_error *err)
{
	char **systems, **names, dir[4096];
	long ns, nn;
	size_t before = out->n;
	int rc = 0;

	if (!roots->tracepoints)
		return fail(err, ev->span.offset, "no tracefs: cannot expand '%s'", ev->text);
	ns = list_dir(roots->tracepoints, ev->subsys, true, false, &systems);
	if (ns == -ENOMEM)
		rc = fail(err, ev->span.offset, "out of memory");
	for (long i = 0; i < ns && !rc; i++) {
		snprintf(dir, sizeof(dir), "%s/%s", roots->tracepoints, systems[i]);
		nn = list_dir(dir, ev->tp_name, true, false, &names);
		if (nn == -ENOMEM)
			rc = fail(err, ev->span.offset, "out of memory");
		for (long j = 0; j < nn && !rc; j++) {
			long long id = tracepoint_id(roots->tracepoints, systems[i], names[j]);
			struct event_resolved r = *proto;

			if (id == -ENOMEM) {
				rc = fail(err, ev->span.offset, "out of memory");
				break;
			}
			if (id < 0)
				continue;	/* "enable", "filter": files, not events */
			r.attr.config = (uint64_t)id;
			r.name = tracepoint_name(systems[i], names[j]);
			if (!r.name || push(out, &r))
				rc = fail(err, ev->span.offset, "out of memory");
		}
		names_free(names, nn);
	}
	names_free(systems, ns);
	if (!rc && out->n == before)
		rc = fail(err, ev->name_span.offset, "no tracepoint matches '%.*s'",
			  (int)ev->name_span.len, list->text + ev->name_span.offset);
	return rc;
}

static int resolve_tracepoint(const struct event_resolve_roots *roots,
			      const struct event_desc *ev, struct perf_event_attr *attr,
			      struct pg_error *err)
{
	char dir[4096];
	long long id;

	if (!roots->tracepoints)
		return fail(err, ev->span.offset, "no tracefs: cannot find tracepoint '%s'",
			    ev->text);
	snprintf(dir, sizeof(dir), "%s/%s", roots->tracepoints, ev->subsys);
	if (!is_dir(dir))
		return fail(err, ev->subsys_span.offset, "unknown tracepoint subsystem '%s'",
			    ev->subsys);
	id = tracepoint_id(roots->tracepoints, ev->subsys, ev->tp_name);
	if (id == -ENOMEM)
		return fail(err, ev->tp_span.offset, "out of memory");
	if (id < 0)
		return fail(err, ev->tp_span.offset, "unknown tracepoint '%s' in subsystem '%s'",
			    ev->tp_name, ev->subsys);
	attr->config = (uint64_t)id;
	return 0;
}

/* One event (before its group's modifiers): its attr, or its matches. */
static int resolve_one(const struct event_resolve_roots *roots, const struct event_list *list,
		       size_t i, struct event_resolved_list *out, struct pg_error *err)
{
	const struct event_desc *ev = &list->events[i];
	struct event_resolved r = {
		.kind = ev->kind, .tool = ev->tool, .desc = i, .group = ev->group,
		.braced = list->groups[ev->group].braced,
	};
	char *name = NULL;

	r.attr.size = sizeof(r.attr);
	r.attr.type = ev->type;
	r.attr.config = ev->config;
	/* perf's event_attr_init(): guests excluded unless --guest. */
	r.attr.exclude_guest = 1;
	if (mods_given(&ev->mods) &&
	    event_mods_apply(&r.attr, &r.flags, &ev->mods, false, true))
		return fail(err, ev->mods.span.offset, "precise level above 3");
	switch (ev->kind) {
	case EVENT_PMU:
		if (event_resolve_pmu(roots->pmus, ev, &r.attr, &name, err)) {
			free(name);
			return -1;
		}
		break;
	case EVENT_TRACEPOINT:
		r.attr.type = PERF_TYPE_TRACEPOINT;
		if (resolve_tracepoint(roots, ev, &r.attr, err))
			return -1;
		if (ev->mods.span.len && !(name = tracepoint_name(ev->subsys, ev->tp_name)))
			return fail(err, ev->span.offset, "out of memory");
		break;
	case EVENT_TRACEPOINT_GLOB:
		r.attr.type = PERF_TYPE_TRACEPOINT;
		return resolve_glob(roots, list, ev, &r, out, err);
	default:
		break;
	}
	r.name = name ? name : strdup(ev->text);
	if (!r.name || push(out, &r))
		return fail(err, ev->span.offset, "out of memory");
	return 0;
}

int event_resolve_list(const struct event_resolve_roots *roots, const struct event_list *list,
		       struct event_resolved_list *out, struct pg_error *err)
{
	out->n = 0;
	out->events = NULL;
	for (size_t g = 0; g < list->ngroups; g++) {
		const struct event_group *grp = &list->groups[g];
		size_t first = out->n;

		for (size_t i = grp->first; i < grp->first + grp->n; i++) {
			if (resolve_one(roots, list, i, out, err)) {
				event_resolved_list_free(out);
				return -1;
			}
		}
		for (size_t i = first; i < out->n; i++) {
			struct event_resolved *r = &out->events[i];

			r->leader = first;
			if (mods_given(&grp->mods) &&
			    event_mods_apply(&r->attr, &r->flags, &grp->mods, true, i == first)) {
				fail(err, grp->mods.span.offset, "precise level above 3 for '%s' "
				     "with the group's modifiers", list->events[r->desc].text);
				event_resolved_list_free(out);
				return -1;
			}
		}
	}
	return 0;
}

void event_resolved_list_free(struct event_resolved_list *out)
{
	for (size_t i = 0; i < out->n; i++)
		free(out->events[i].name);
	free(out->events);
	out->n = 0;
	out->events = NULL;
}
