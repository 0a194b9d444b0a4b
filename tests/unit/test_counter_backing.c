/*
 * test_counter_backing: a counter backed by something else (agent/count/
 * counter.h, struct counter_backing_ops) opens and reads through the
 * operations it was given, and never through a perf fd of its own.  The
 * backing here is a fake: no kernel, no root.
 */
#include <stdio.h>
#include <string.h>

#include "agent/count/counter.h"
#include "agent/count/target.h"
#include "tests/unit/tap.h"

struct fake_backing {
	size_t member;		/* the one member it can count */
	size_t asked;		/* the member last asked about */
	unsigned reads;
};

static bool fake_supported(const void *obj, size_t member)
{
	const struct fake_backing *f = obj;

	return member == f->member;
}

static void fake_read(void *obj, size_t member, struct counter_value *value)
{
	struct fake_backing *f = obj;

	f->asked = member;
	f->reads++;
	value->val = 1000 * member + f->reads;
	value->ena = 20;
	value->run = 10;
}

static const struct counter_backing_ops fake_ops = {
	.supported = fake_supported,
	.read = fake_read,
};

static void test_read_through(void)
{
	struct fake_backing fake = { .member = 3 };
	struct counter_target target = { 0 };
	struct counter c = { 0 };
	struct counter_value v = { 0 };

	c.def.name = "fake";
	counter_back_with(&c, &fake_ops, &fake, 3);
	ok(counter_open(&c, &target) == 0, "a backed counter opens without a perf fd");
	ok(c.supported, "supported as its backing says");
	counter_read(&c, &v);
	ok(fake.reads == 1 && fake.asked == 3, "read asks the backing for its member");
	ok(v.val == 3001 && v.ena == 20 && v.run == 10, "read gives the backing's value");
	ok(counter_read_index(&c, 0, 0, &v) == -1, "no value per CPU: the backing keeps none");
	counter_close(&c);
}

static void test_unsupported(void)
{
	struct fake_backing fake = { .member = 3 };
	struct counter_target target = { 0 };
	struct counter c = { 0 };

	c.def.name = "fake";
	counter_back_with(&c, &fake_ops, &fake, 4);
	ok(counter_open(&c, &target) == 0, "a member the backing lacks still opens");
	ok(!c.supported, "... and is not supported");
	counter_close(&c);
}

int main(void)
{
	test_read_through();
	test_unsupported();
	return tap_done();
}
