/*
 * test_range_account: the range accounting arithmetic on synthetic records,
 * as the kernel would write them (values are running per-(thread, CPU)
 * group counts).  Members here: 0 = context-switch sampler, 1 = starter S,
 * 2 = stopper T, 3 = a counted event E.
 */
#include "agent/ranges/range_account.h"
#include "tests/unit/tap.h"

enum { SW, S, T, E, NM };

static struct range_member members[NM] = {
	[SW] = { 0 },
	[S] = { .starts = 1 },
	[T] = { .stops = 1 },
	[E] = { .counted = true },
};
static struct range_leaf leaf_st = { true, true };
static struct range_gate leaf0 = { .kind = RANGE_GATE_RANGE, .index = 0 };
static struct range_gate *not0_children[] = { &leaf0 };
static struct range_gate not0 = { .kind = RANGE_GATE_NOT, .nchildren = 1, .children = not0_children };

/* Views: 0 = E@S..T, 1 = E@!(S..T). */
static struct range_view_def views[2] = { { &leaf0, 0 }, { &not0, 0 } };

static void rec(struct range_account *a, uint32_t tid, uint32_t cpu, int member, uint64_t s,
		uint64_t t, uint64_t e)
{
	uint64_t values[NM] = { 0, s, t, e };
	struct range_record r = { 0, tid, cpu, 0, member, values };

	range_account_record(a, &r);
}

static void test_simple_range(void)
{
	struct range_account *a = range_account_new(members, NM, &leaf_st, 1, views, 2, 2, 0);

	rec(a, 10, 0, S, 1, 0, 3);		/* 3 E before S */
	rec(a, 10, 0, T, 1, 1, 8);		/* 5 E inside */
	rec(a, 10, 0, SW, 1, 1, 15);	/* 7 E after */
	is_int(range_account_value(a, 0, E), 5, "E inside S..T is the 5 between them");
	is_int(range_account_value(a, 1, E), 10, "E outside is the 3 before and 7 after");
	range_account_free(a);
}

static void test_migration(void)
{
	struct range_account *a = range_account_new(members, NM, &leaf_st, 1, views, 2, 2, 0);

	rec(a, 10, 0, S, 1, 0, 2);		/* opens on CPU 0 */
	rec(a, 10, 0, SW, 1, 0, 6);	/* switch out of CPU 0: 4 inside */
	rec(a, 10, 1, T, 0, 1, 3);		/* closes on CPU 1: 3 more */
	is_int(range_account_value(a, 0, E), 7, "deltas on both CPUs of a migrated thread count");
	is_int(range_account_value(a, 1, E), 2, "only the 2 before S are outside");
	range_account_free(a);
}

static void test_nesting_and_threads(void)
{
	struct range_account *a = range_account_new(members, NM, &leaf_st, 1, views, 2, 1, 0);

	rec(a, 1, 0, S, 1, 0, 0);
	rec(a, 1, 0, S, 2, 0, 1);		/* nested: depth 2 */
	rec(a, 2, 0, SW, 0, 0, 50);	/* another thread, outside */
	rec(a, 1, 0, T, 2, 1, 3);		/* depth 1: still open */
	rec(a, 1, 0, SW, 2, 1, 4);
	rec(a, 1, 0, T, 2, 2, 6);		/* closes */
	rec(a, 1, 0, SW, 2, 2, 9);
	is_int(range_account_value(a, 0, E), 6, "nested starters keep the range open to the last stopper");
	is_int(range_account_value(a, 1, E), 53, "the other thread's work and the tail are outside");
	range_account_free(a);
}

static void test_own_hit_order(void)
{
	/* S itself is the counted event: its own hit is inside. */
	struct range_member self[3] = { { 0 }, { .starts = 1, .counted = true },
					{ .stops = 1, .counted = true } };
	struct range_account *a = range_account_new(self, 3, &leaf_st, 1, views, 2, 1, 0);
	uint64_t v1[3] = { 0, 1, 0 }, v2[3] = { 0, 1, 1 };
	struct range_record r1 = { 0, 1, 0, 0, 1, v1 };
	struct range_record r2 = { 0, 1, 0, 0, 2, v2 };

	range_account_record(a, &r1);
	range_account_record(a, &r2);
	is_int(range_account_value(a, 0, 1), 1, "the starter's own hit is inside its range");
	is_int(range_account_value(a, 0, 2), 1, "the stopper's own hit is inside its range");
	is_int(range_account_value(a, 1, 1) + range_account_value(a, 1, 2), 0,
	       "neither hit is outside");
	range_account_free(a);
}

static void test_open_ends(void)
{
	struct range_leaf open_start = { false, true }, open_end = { true, false };
	struct range_account *a = range_account_new(members, NM, &open_start, 1, views, 2, 1, 0);

	rec(a, 1, 0, SW, 0, 0, 4);		/* open from the start */
	rec(a, 1, 0, T, 0, 1, 6);		/* ..T closes */
	rec(a, 1, 0, T, 0, 2, 9);		/* stays closed */
	is_int(range_account_value(a, 0, E), 6, "..T counts from the start to the first T");
	range_account_free(a);

	a = range_account_new(members, NM, &open_end, 1, views, 2, 1, 0);
	rec(a, 1, 0, SW, 0, 0, 4);
	rec(a, 1, 0, S, 1, 0, 6);		/* S.. opens for good */
	rec(a, 1, 0, S, 2, 0, 7);
	rec(a, 1, 0, SW, 2, 0, 10);
	is_int(range_account_value(a, 0, E), 4, "S.. counts from the first S to the end");
	is_int(range_account_value(a, 1, E), 6, "what came before the first S is outside");
	range_account_free(a);
}

static void test_finish_and_tid_reuse(void)
{
	struct range_account *a = range_account_new(members, NM, &leaf_st, 1, views, 2, 1, 0);
	uint64_t totals[NM] = { 0, 2, 0, 40 };	/* every trigger hit has its record */

	rec(a, 1, 0, S, 1, 0, 1);		/* root opens */
	rec(a, 2, 0, S, 1, 0, 2);		/* child opens */
	rec(a, 2, 0, SW, 1, 0, 12);	/* child: 10 inside, exits */
	rec(a, 2, 0, SW, 0, 0, 5);		/* values went back: tid reused */
	is_int(range_account_value(a, 1, E), 1 + 2 + 5, "a reused tid starts over, outside");
	/* The root's tail no record shows: 40 - (root 1 + dead child 12 +
	 * new thread 5) = 22, under the root's last state (open). */
	range_account_finish_root(a, 0, 1, totals);
	is_int(range_account_value(a, 0, E) + range_account_value(a, 1, E), 40,
	       "views add up to the fds' total after finish");
	is_int(range_account_value(a, 0, E), 10 + 22, "child's and root's open stretches inside");
	range_account_free(a);
}

/* A loss never half-counts: the stretch it falls in is dropped whole, and
 * the thread's depth is recounted from its trigger counts. */
static void test_loss_drops_whole_stretches(void)
{
	struct range_account *a = range_account_new(members, NM, &leaf_st, 1, views, 2, 1, 0);

	rec(a, 1, 0, S, 1, 0, 1);		/* 1 outside, R opens */
	rec(a, 1, 0, SW, 1, 0, 5);		/* 4 inside, pending */
	range_account_mark_lost(a, 3, 0);
	rec(a, 1, 0, T, 1, 1, 9);		/* spans the loss: dropped */
	is_int(range_account_value(a, 0, E), 0, "the range the loss fell in is dropped whole");
	rec(a, 1, 0, S, 2, 1, 10);		/* 1 outside, R opens */
	rec(a, 1, 0, T, 2, 2, 13);		/* 3 inside */
	is_int(range_account_value(a, 0, E), 3, "the next range counts whole");
	is_int(range_account_value(a, 1, E), 2, "outside: the stretches before each S");
	is_int(range_account_lost(a), 3, "the loss is counted");
	range_account_free(a);
}

/* After a loss that took a starter's record, the depth comes from counts. */
static void test_loss_resyncs_depth(void)
{
	struct range_account *a = range_account_new(members, NM, &leaf_st, 1, views, 2, 1, 0);

	rec(a, 1, 0, SW, 0, 0, 2);		/* 2 outside */
	range_account_mark_lost(a, 1, 0);			/* S's record lost here */
	rec(a, 1, 0, SW, 1, 0, 6);		/* spans: dropped; S seen */
	rec(a, 1, 0, T, 1, 1, 8);		/* closes a tainted stretch */
	rec(a, 1, 0, S, 2, 1, 9);
	rec(a, 1, 0, T, 2, 2, 14);
	is_int(range_account_value(a, 0, E), 5, "only the range after the loss counts, whole");
	range_account_free(a);
}

/* A trigger hit no record shows is a record lost at the very end (the
 * kernel writes no LOST record once counting stops): flagged, and the
 * stretch open then is dropped, not counted short. */
static void test_trailing_loss(void)
{
	struct range_account *a = range_account_new(members, NM, &leaf_st, 1, views, 2, 1, 0);
	uint64_t totals[NM] = { 0, 1, 1, 9 };

	rec(a, 1, 0, S, 1, 0, 2);		/* R opens */
	rec(a, 1, 0, SW, 1, 0, 5);		/* 3 pending inside */
	range_account_finish_root(a, 0, 1, totals);		/* T hit, record gone */
	ok(range_account_lost(a) > 0, "a trigger hit without its record is a loss");
	is_int(range_account_value(a, 0, E), 0, "the stretch it ends is dropped, not counted short");
	range_account_free(a);
}

static void test_gates(void)
{
	struct range_gate l0 = { .kind = RANGE_GATE_RANGE, .index = 0 };
	struct range_gate l1 = { .kind = RANGE_GATE_RANGE, .index = 1 };
	struct range_gate *both[] = { &l0, &l1 };
	struct range_gate and = { .kind = RANGE_GATE_AND, .nchildren = 2, .children = both };
	struct range_gate or = { .kind = RANGE_GATE_OR, .nchildren = 2, .children = both };
	struct range_gate *and_child[] = { &and };
	struct range_gate not = { .kind = RANGE_GATE_NOT, .nchildren = 1, .children = and_child };
	struct range_view_def v_and = { &and, 0 }, v_or = { &or, 0 }, v_not = { &not, 0 };
	struct range_view_def v_based = { &l0, 2 }, v_all = { NULL, 0 };

	ok(range_view_is_open(&v_and, 3) && !range_view_is_open(&v_and, 1), "&& needs both leaves");
	ok(range_view_is_open(&v_or, 2) && !range_view_is_open(&v_or, 0), "|| needs one leaf");
	ok(range_view_is_open(&v_not, 1) && !range_view_is_open(&v_not, 3), "! complements");
	ok(range_view_is_open(&v_based, 4) && !range_view_is_open(&v_based, 1),
	   "a view's leaves start at its leaf_base");
	ok(range_view_is_open(&v_all, 0), "no gate: always open");
}

int main(void)
{
	test_simple_range();
	test_migration();
	test_nesting_and_threads();
	test_own_hit_order();
	test_open_ends();
	test_finish_and_tid_reuse();
	test_loss_drops_whole_stretches();
	test_loss_resyncs_depth();
	test_trailing_loss();
	test_gates();
	return tap_done();
}
