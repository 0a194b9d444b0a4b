/*
 * range_account: range state (per thread or per CPU) and exact delta
 * attribution.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/ranges/range_account.h"

/*
 * Which leaves are open, and how deep; and what the views open under this
 * state have counted in their current stretch.  A stretch is committed to
 * the view's sum when the view's gate closes, so that a stretch a lost
 * record spoils can be dropped whole: never half-counted.
 */
struct range_state {
	uint64_t open;				/* bit i: leaf i has depth > 0 */
	uint32_t depth[RANGE_LEAVES_MAX];
	uint64_t *pending;			/* [view][member], NULL while empty */
	bool *tainted;				/* [view]: its stretch spans a loss */
};

struct thread_state {
	uint32_t tid;
	bool used;
	unsigned root;
	struct range_state state;		/* scope "thread" */
	uint64_t *last;				/* per task: [cpu][member] last seen */
	bool *skip;				/* [cpu]: next delta there spans a loss */
	bool resync;				/* recount depths at the next record */
};

struct range_account {
	const struct range_member *members;
	size_t nr_members;
	const struct range_leaf *leaves;
	size_t nr_leaves;
	const struct range_view_def *views;
	size_t nr_views;
	unsigned nr_cpus;
	unsigned flags;				/* RANGE_ACCOUNT_* */
	uint64_t *sums;				/* [view][member] */
	uint64_t lost;
	/* Memory ran out while accounting: from then on every record counts
	 * as lost, so that the views show incomplete rather than short. */
	bool out_of_memory;

	/* CPU-wide counters: [cpu][member] last seen, who recorded last, and
	 * whether that record was a switch-out (then someone else runs now). */
	uint64_t *cpu_last;
	uint32_t *cpu_last_tid;
	bool *cpu_last_switched;
	/* Scope "cpu": the range state of each CPU. */
	struct range_state *cpu_states;
	/* CPU-wide: the next delta of each CPU spans a loss. */
	bool *cpu_skip;

	/* Final values of exited threads, per root: [root][cpu][member]. */
	uint64_t **exited;
	size_t nr_roots;

	/* Open-addressing table of threads by tid, at most half full. */
	struct thread_state *threads;
	size_t nr_threads, cap_threads;
};

static void state_commit(struct range_account *acct, struct range_state *st, bool everything);

static bool gate_open(const struct range_gate *gate, unsigned base, uint64_t open)
{
	switch (gate->kind) {
	case RANGE_GATE_RANGE:
		return open >> (base + gate->index) & 1;
	case RANGE_GATE_AND:
		for (size_t i = 0; i < gate->nchildren; i++)
			if (!gate_open(gate->children[i], base, open))
				return false;
		return true;
	case RANGE_GATE_OR:
		for (size_t i = 0; i < gate->nchildren; i++)
			if (gate_open(gate->children[i], base, open))
				return true;
		return false;
	case RANGE_GATE_NOT:
		return !gate_open(gate->children[0], base, open);
	}
	return false;
}

bool range_view_is_open(const struct range_view_def *view, uint64_t open_leaves)
{
	return !view->gate || gate_open(view->gate, view->leaf_base, open_leaves);
}

/* A range state as it begins (a new thread, or a CPU): "..T" leaves open,
 * nothing pending.  st's pending and tainted arrays, if any, are kept. */
static void state_begin(const struct range_account *acct, struct range_state *st)
{
	uint64_t *pending = st->pending;
	bool *tainted = st->tainted;

	memset(st, 0, sizeof(*st));
	st->pending = pending;
	st->tainted = tainted;
	if (pending)
		memset(pending, 0, acct->nr_views * acct->nr_members * sizeof(*pending));
	if (tainted)
		memset(tainted, 0, acct->nr_views * sizeof(*tainted));
	for (size_t i = 0; i < acct->nr_leaves; i++) {
		if (!acct->leaves[i].has_starter) {
			st->depth[i] = 1;
			st->open |= 1ull << i;
		}
	}
}

struct range_account *range_account_new(const struct range_member *members, size_t nr_members,
					const struct range_leaf *leaves, size_t nr_leaves,
					const struct range_view_def *views, size_t nr_views,
					unsigned nr_cpus, unsigned flags)
{
	struct range_account *acct = calloc(1, sizeof(*acct));

	if (!acct)
		return NULL;
	acct->flags = flags;
	acct->cpu_last = calloc((size_t)nr_cpus * nr_members, sizeof(uint64_t));
	acct->cpu_last_tid = calloc(nr_cpus, sizeof(uint32_t));
	acct->cpu_last_switched = calloc(nr_cpus, sizeof(bool));
	acct->cpu_states = calloc(nr_cpus, sizeof(struct range_state));
	acct->cpu_skip = calloc(nr_cpus, sizeof(bool));

	acct->members = members;
	acct->nr_members = nr_members;
	acct->leaves = leaves;
	acct->nr_leaves = nr_leaves;
	acct->views = views;
	acct->nr_views = nr_views;
	acct->nr_cpus = nr_cpus;
	acct->sums = calloc(nr_views * nr_members, sizeof(*acct->sums));
	acct->cap_threads = 64;
	acct->threads = calloc(acct->cap_threads, sizeof(*acct->threads));
	if (!acct->cpu_last || !acct->cpu_last_tid || !acct->cpu_last_switched ||
	    !acct->cpu_states || !acct->cpu_skip || !acct->sums || !acct->threads) {
		range_account_free(acct);
		return NULL;
	}
	for (unsigned cpu = 0; cpu < nr_cpus; cpu++)
		state_begin(acct, &acct->cpu_states[cpu]);
	return acct;
}

void range_account_free(struct range_account *acct)
{
	if (!acct)
		return;
	for (size_t i = 0; acct->threads && i < acct->cap_threads; i++) {
		free(acct->threads[i].last);
		free(acct->threads[i].skip);
		free(acct->threads[i].state.pending);
		free(acct->threads[i].state.tainted);
	}
	for (unsigned cpu = 0; acct->cpu_states && cpu < acct->nr_cpus; cpu++) {
		free(acct->cpu_states[cpu].pending);
		free(acct->cpu_states[cpu].tainted);
	}
	free(acct->cpu_skip);
	for (size_t i = 0; i < acct->nr_roots; i++)
		free(acct->exited[i]);
	free(acct->exited);
	free(acct->threads);
	free(acct->cpu_last);
	free(acct->cpu_last_tid);
	free(acct->cpu_last_switched);
	free(acct->cpu_states);
	free(acct->sums);
	free(acct);
}

static struct thread_state *thread_slot(struct thread_state *table, size_t cap, uint32_t tid)
{
	size_t i = (tid * 2654435761u) & (cap - 1);

	while (table[i].used && table[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &table[i];
}

/* 0, or -ENOMEM (the table as it was). */
static int threads_grow(struct range_account *acct)
{
	size_t cap = acct->cap_threads * 2;
	struct thread_state *table = calloc(cap, sizeof(*table));

	if (!table)
		return -ENOMEM;
	for (size_t i = 0; i < acct->cap_threads; i++)
		if (acct->threads[i].used)
			*thread_slot(table, cap, acct->threads[i].tid) = acct->threads[i];
	free(acct->threads);
	acct->threads = table;
	acct->cap_threads = cap;
	return 0;
}

/* The values banked for root's dead threads, or NULL out of memory. */
static uint64_t *exited_of(struct range_account *acct, unsigned root)
{
	size_t per_root = (size_t)acct->nr_cpus * acct->nr_members;

	while (root >= acct->nr_roots) {
		uint64_t **grown = realloc(acct->exited, (acct->nr_roots + 1) * sizeof(*grown));

		if (!grown)
			return NULL;
		acct->exited = grown;
		acct->exited[acct->nr_roots] = calloc(per_root, sizeof(uint64_t));
		if (!acct->exited[acct->nr_roots])
			return NULL;
		acct->nr_roots++;
	}
	return acct->exited[root];
}

static void thread_reset(struct range_account *acct, struct thread_state *t)
{
	memset(t->last, 0, (size_t)acct->nr_cpus * acct->nr_members * sizeof(*t->last));
	state_begin(acct, &t->state);
}

/* Counters never go back: a record below the last one of its (tid, CPU)
 * comes from a new thread the kernel gave a dead thread's tid. */
static bool values_went_back(const struct range_account *acct, const uint64_t *last,
			     const uint64_t *values)
{
	for (size_t m = 0; m < acct->nr_members; m++)
		if (values[m] < last[m])
			return true;
	return false;
}

/* The dead thread's values are banked with its root (finish still needs
 * them); the slot starts over for the new one.  0, or -ENOMEM (nothing
 * done). */
static int thread_reuse(struct range_account *acct, struct thread_state *t, unsigned root)
{
	uint64_t *bank = exited_of(acct, t->root);

	if (!bank)
		return -ENOMEM;
	for (size_t i = 0; i < (size_t)acct->nr_cpus * acct->nr_members; i++)
		bank[i] += t->last[i];
	/* The dead thread's open stretches were real: they count. */
	state_commit(acct, &t->state, true);
	thread_reset(acct, t);
	t->root = root;
	return 0;
}

/* The state of thread tid, made the first time; NULL out of memory. */
static struct thread_state *thread_get(struct range_account *acct, uint32_t tid, unsigned root)
{
	struct thread_state *t;

	/* Kept at most half full; a table that cannot grow takes no one
	 * more (a full one would have no free slot to probe for). */
	if (2 * (acct->nr_threads + 1) > acct->cap_threads && threads_grow(acct) &&
	    acct->nr_threads + 1 >= acct->cap_threads)
		return NULL;
	t = thread_slot(acct->threads, acct->cap_threads, tid);
	if (t->used)
		return t;
	/* skip too, now: a loss must be able to mark it without allocating. */
	t->last = calloc((size_t)acct->nr_cpus * acct->nr_members, sizeof(*t->last));
	t->skip = calloc(acct->nr_cpus, sizeof(*t->skip));
	if (!t->last || !t->skip) {
		free(t->last);
		free(t->skip);
		t->last = NULL;
		t->skip = NULL;
		return NULL;
	}
	t->used = true;
	t->tid = tid;
	t->root = root;
	thread_reset(acct, t);
	acct->nr_threads++;
	return t;
}

/* Out of memory: what is being accounted is lost, and so is every
 * record after it (range_account_record). */
static void account_out_of_memory(struct range_account *acct)
{
	acct->out_of_memory = true;
	acct->lost++;
}

/* st's stretches, made at its first delta or loss: false out of memory
 * (said to acct). */
static bool state_ready(struct range_account *acct, struct range_state *st)
{
	if (st->pending)
		return true;
	st->pending = calloc(acct->nr_views * acct->nr_members, sizeof(*st->pending));
	st->tainted = calloc(acct->nr_views, sizeof(*st->tainted));
	if (st->pending && st->tainted)
		return true;
	free(st->pending);
	free(st->tainted);
	st->pending = NULL;
	st->tainted = NULL;
	account_out_of_memory(acct);
	return false;
}

/* Add delta of member m to the stretch of every view whose gate is open
 * under st. */
static void attribute(struct range_account *acct, struct range_state *st, size_t m,
		      uint64_t delta)
{
	if (!delta || !acct->members[m].counted)
		return;
	if (!state_ready(acct, st))
		return;
	for (size_t v = 0; v < acct->nr_views; v++)
		if (range_view_is_open(&acct->views[v], st->open))
			st->pending[v * acct->nr_members + m] += delta;
}

/* Close the stretches of the views whose gate is closed under st (all of
 * them with everything set): into the sums, or dropped if a loss spoilt
 * them. */
static void state_commit(struct range_account *acct, struct range_state *st, bool everything)
{
	if (!st->pending)
		return;
	for (size_t v = 0; v < acct->nr_views; v++) {
		uint64_t *p = st->pending + v * acct->nr_members;

		if (!everything && range_view_is_open(&acct->views[v], st->open))
			continue;
		for (size_t m = 0; m < acct->nr_members; m++) {
			if (!st->tainted[v])
				acct->sums[v * acct->nr_members + m] += p[m];
			p[m] = 0;
		}
		st->tainted[v] = false;
	}
}

/* A loss: every stretch open now may lack a part; it is dropped when it
 * closes.  Views open under st are tainted, whatever they hold. */
static void state_taint_open(struct range_account *acct, struct range_state *st)
{
	if (!state_ready(acct, st))
		return;
	for (size_t v = 0; v < acct->nr_views; v++)
		if (range_view_is_open(&acct->views[v], st->open))
			st->tainted[v] = true;
}

static void apply_starts(struct range_account *acct, struct range_state *st, uint64_t starts)
{
	for (size_t i = 0; i < acct->nr_leaves; i++) {
		if (!(starts >> i & 1))
			continue;
		/* "S.." opens once and stays open: no depth to unwind. */
		if (acct->leaves[i].has_stopper || st->depth[i] == 0)
			st->depth[i]++;
		st->open |= 1ull << i;
	}
}

static void apply_stops(struct range_account *acct, struct range_state *st, uint64_t stops)
{
	for (size_t i = 0; i < acct->nr_leaves; i++) {
		if (!(stops >> i & 1) || st->depth[i] == 0)
			continue;
		/* "..T" closes at its first T and never reopens. */
		st->depth[i] = acct->leaves[i].has_starter ? st->depth[i] - 1 : 0;
		if (st->depth[i] == 0)
			st->open &= ~(1ull << i);
	}
}

/* Where a record's range state lives: its thread's, or its CPU's. */
static struct range_state *state_of(struct range_account *acct, struct thread_state *t,
				    uint32_t cpu)
{
	return acct->flags & RANGE_ACCOUNT_CPU_SCOPE ? &acct->cpu_states[cpu] : &t->state;
}

/*
 * Where the values a record follows on are: per task, the thread's own on
 * that CPU; CPU-wide, the CPU's, whoever ran (every switch-out leaves a
 * record, so the stretch since the CPU's last record was this thread's).
 */
static uint64_t *last_of(struct range_account *acct, struct thread_state *t, uint32_t cpu)
{
	if (acct->flags & RANGE_ACCOUNT_CPU_WIDE)
		return acct->cpu_last + (size_t)cpu * acct->nr_members;
	return t->last + (size_t)cpu * acct->nr_members;
}

/* Is this record the first of (thread, CPU) after a loss?  Clears it. */
static bool take_skip(struct range_account *acct, struct thread_state *t, uint32_t cpu)
{
	bool *skip = acct->flags & RANGE_ACCOUNT_CPU_WIDE ? &acct->cpu_skip[cpu] :
		     t->skip ? &t->skip[cpu] : NULL;
	bool was = skip && *skip;

	if (was)
		*skip = false;
	return was;
}

/* How many hits of the members that start (or stop) leaf i the thread made
 * in all, from its last values on every CPU, less the record's own hit. */
static uint64_t thread_hits(const struct range_account *acct, const struct thread_state *t,
			    size_t leaf, bool starts, size_t own)
{
	uint64_t hits = 0;

	for (size_t m = 0; m < acct->nr_members; m++) {
		if (!((starts ? acct->members[m].starts : acct->members[m].stops) >> leaf & 1))
			continue;
		for (unsigned cpu = 0; cpu < acct->nr_cpus; cpu++)
			hits += t->last[(size_t)cpu * acct->nr_members + m];
		if (m == own && hits)
			hits--;
	}
	return hits;
}

/*
 * After a loss a thread's depths may be wrong (a trigger's record lost);
 * its counters are not: each leaf's depth is its starters' hits less its
 * stoppers' (docs/design.md, "Ranges").  Views open after that may hold part of
 * a stretch the loss spoilt, so they are tainted.
 */
static void thread_resync(struct range_account *acct, struct thread_state *t, size_t own)
{
	struct range_state *st = &t->state;

	t->resync = false;
	if (acct->flags & (RANGE_ACCOUNT_CPU_WIDE | RANGE_ACCOUNT_CPU_SCOPE))
		return;		/* per-CPU counts say nothing of one thread's depth */
	for (size_t i = 0; i < acct->nr_leaves; i++) {
		uint64_t in = thread_hits(acct, t, i, true, own);
		uint64_t out = thread_hits(acct, t, i, false, own);
		uint64_t depth;

		if (!acct->leaves[i].has_starter)
			depth = out == 0;		/* "..T": open until the first T */
		else if (!acct->leaves[i].has_stopper)
			depth = in > 0;			/* "S..": open from the first S */
		else
			depth = in > out ? in - out : 0;
		st->depth[i] = (uint32_t)depth;
		st->open = depth ? st->open | 1ull << i : st->open & ~(1ull << i);
	}
	state_taint_open(acct, st);
}

void range_account_record(struct range_account *acct, const struct range_record *rec)
{
	struct thread_state *t;
	struct range_state *st;
	uint64_t *last;
	size_t own = rec->member >= 0 ? (size_t)rec->member : acct->nr_members;
	bool own_hit = false, spans_loss;

	if (rec->cpu >= acct->nr_cpus)
		return;
	if (acct->out_of_memory) {
		acct->lost++;
		return;
	}
	t = thread_get(acct, rec->tid, rec->root);
	if (!t) {
		account_out_of_memory(acct);
		return;
	}
	last = last_of(acct, t, rec->cpu);
	if (!(acct->flags & RANGE_ACCOUNT_CPU_WIDE) && values_went_back(acct, last, rec->values)) {
		if (thread_reuse(acct, t, rec->root)) {
			account_out_of_memory(acct);
			return;
		}
		last = last_of(acct, t, rec->cpu);
	}
	st = state_of(acct, t, rec->cpu);
	spans_loss = take_skip(acct, t, rec->cpu);
	for (size_t m = 0; m < acct->nr_members; m++) {
		uint64_t delta = rec->values[m] - last[m];

		/* The sampling member's own hit is placed after the others. */
		if (m == own && delta > 0) {
			delta--;
			own_hit = true;
		}
		/* A delta over a loss belongs to no one we can name. */
		if (!spans_loss)
			attribute(acct, st, m, delta);
		last[m] = rec->values[m];
	}
	if (t->resync)
		thread_resync(acct, t, own);
	acct->cpu_last_tid[rec->cpu] = rec->tid;
	acct->cpu_last_switched[rec->cpu] = own < acct->nr_members && acct->members[own].switches;
	if (own < acct->nr_members) {
		apply_starts(acct, st, acct->members[own].starts);
		if (own_hit)
			attribute(acct, st, own, 1);
		apply_stops(acct, st, acct->members[own].stops);
	}
	state_commit(acct, st, false);
}

/* A trigger samples every hit: a hit the records do not show is a record
 * lost at the very end, whose LOST record the kernel never got to write. */
static bool is_trigger(const struct range_account *acct, size_t m)
{
	return acct->members[m].starts || acct->members[m].stops;
}

/* What the root's groups counted that the records did not show, per
 * (cpu, member), into rest; returns the hits of triggers among it.  bank:
 * the root's dead threads' values. */
static uint64_t root_unseen(struct range_account *acct, const uint64_t *bank, unsigned root,
			    const uint64_t *values, uint64_t *rest)
{
	uint64_t trigger_hits = 0;

	for (size_t i = 0; i < (size_t)acct->nr_cpus * acct->nr_members; i++) {
		uint64_t seen = bank[i];

		for (size_t k = 0; k < acct->cap_threads; k++)
			if (acct->threads[k].used && acct->threads[k].root == root)
				seen += acct->threads[k].last[i];
		rest[i] = values[i] > seen ? values[i] - seen : 0;
		if (is_trigger(acct, i % acct->nr_members))
			trigger_hits += rest[i];
	}
	return trigger_hits;
}

void range_account_finish_root(struct range_account *acct, unsigned root, uint32_t root_tid,
			       const uint64_t *values)
{
	struct thread_state *root_thread = NULL;
	size_t n = (size_t)acct->nr_cpus * acct->nr_members;
	uint64_t *rest = NULL, *bank = NULL, unseen;

	if (!acct->out_of_memory) {
		root_thread = thread_get(acct, root_tid, root);
		bank = exited_of(acct, root);
		rest = calloc(n, sizeof(*rest));
	}
	if (!root_thread || !bank || !rest) {
		/* What the records did not show cannot be placed: lost. */
		if (!acct->out_of_memory)
			account_out_of_memory(acct);
		free(rest);
		range_account_commit_all(acct);
		return;
	}
	unseen = root_unseen(acct, bank, root, values, rest);
	if (unseen)
		range_account_mark_lost(acct, unseen, UINT32_MAX);
	for (size_t i = 0; i < n; i++) {
		if (!rest[i])
			continue;
		attribute(acct, state_of(acct, root_thread, (uint32_t)(i / acct->nr_members)),
			  i % acct->nr_members, rest[i]);
		root_thread->last[i] += rest[i];
	}
	free(rest);
	range_account_commit_all(acct);
}

void range_account_finish_cpus(struct range_account *acct, const uint64_t *values)
{
	uint64_t unseen = 0;

	/* Trigger hits no record shows: records lost at the very end. */
	for (size_t i = 0; i < (size_t)acct->nr_cpus * acct->nr_members; i++)
		if (is_trigger(acct, i % acct->nr_members) && values[i] > acct->cpu_last[i])
			unseen += values[i] - acct->cpu_last[i];
	if (unseen)
		range_account_mark_lost(acct, unseen, UINT32_MAX);
	for (unsigned cpu = 0; cpu < acct->nr_cpus; cpu++) {
		/*
		 * The stretch since the CPU's last record belongs to whoever ran
		 * then: the recording thread, unless its record was a switch-out
		 * -- then a thread that left no record yet, in a fresh state.
		 */
		struct thread_state *t = thread_get(acct, acct->cpu_last_tid[cpu], 0);
		struct range_state *st;
		uint64_t *last = acct->cpu_last + (size_t)cpu * acct->nr_members;
		struct range_state fresh = { 0 };

		if (!t) {
			account_out_of_memory(acct);
			continue;	/* this CPU's last stretch is lost */
		}
		st = state_of(acct, t, cpu);
		if (acct->cpu_last_switched[cpu] && !(acct->flags & RANGE_ACCOUNT_CPU_SCOPE)) {
			state_begin(acct, &fresh);
			st = &fresh;
		}

		for (size_t m = 0; m < acct->nr_members; m++) {
			uint64_t total = values[(size_t)cpu * acct->nr_members + m];

			if (total > last[m]) {
				attribute(acct, st, m, total - last[m]);
				last[m] = total;
			}
		}
		state_commit(acct, &fresh, true);
		free(fresh.pending);
		free(fresh.tainted);
	}
	range_account_commit_all(acct);
}

/* What a state's untainted open stretch holds for (view, member). */
static uint64_t state_pending(const struct range_account *acct, const struct range_state *st,
			      size_t view, size_t member)
{
	if (!st->pending || st->tainted[view])
		return 0;
	return st->pending[view * acct->nr_members + member];
}

uint64_t range_account_value(const struct range_account *acct, size_t view, size_t member)
{
	uint64_t value = acct->sums[view * acct->nr_members + member];

	/* The stretches still open count too, unless a loss spoilt them. */
	for (size_t i = 0; i < acct->cap_threads; i++)
		if (acct->threads[i].used)
			value += state_pending(acct, &acct->threads[i].state, view, member);
	for (unsigned cpu = 0; cpu < acct->nr_cpus; cpu++)
		value += state_pending(acct, &acct->cpu_states[cpu], view, member);
	return value;
}

void range_account_commit_all(struct range_account *acct)
{
	for (size_t i = 0; i < acct->cap_threads; i++)
		if (acct->threads[i].used)
			state_commit(acct, &acct->threads[i].state, true);
	for (unsigned cpu = 0; cpu < acct->nr_cpus; cpu++)
		state_commit(acct, &acct->cpu_states[cpu], true);
}

void range_account_mark_lost(struct range_account *acct, uint64_t lost, uint32_t cpu)
{
	acct->lost += lost ? lost : 1;
	for (size_t i = 0; i < acct->cap_threads; i++) {
		struct thread_state *t = &acct->threads[i];

		if (!t->used)
			continue;
		state_taint_open(acct, &t->state);
		if (cpu < acct->nr_cpus)	/* t->skip is made with t */
			t->skip[cpu] = true;
		t->resync = true;
	}
	for (unsigned c = 0; c < acct->nr_cpus; c++)
		state_taint_open(acct, &acct->cpu_states[c]);
	if (cpu < acct->nr_cpus)
		acct->cpu_skip[cpu] = true;
}

uint64_t range_account_lost(const struct range_account *acct)
{
	return acct->lost;
}
