/* Tests for broker/replication/open_retry.c: the back-off of partition
 * logs that fail to open. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "broker/replication/open_retry.h"

static struct open_retry r;
static const struct meta_uuid topic = {.b = {1, 2, 3}};
static const struct meta_uuid other = {.b = {9}};

static void setup(void)
{
    open_retry_init(&r);
}

static void teardown(void)
{
    open_retry_free(&r);
}

TestSuite(open_retry, .init = setup, .fini = teardown);

Test(open_retry, a_partition_never_failed_is_due)
{
    cr_assert(open_retry_due(&r, &topic, 0, 0));
    cr_assert_eq(open_retry_next_ms(&r), OPEN_RETRY_NONE);
}

/* Each failure waits twice as long as the one before, within a quarter
 * either way, up to the cap; the rand argument picks where. */
Test(open_retry, back_off_doubles_jittered_up_to_the_cap)
{
    uint64_t now = 1000;
    uint64_t base = OPEN_RETRY_FIRST_MS;
    for (unsigned i = 1; i <= 12; i++) {
        uint64_t rand = i % 2 == 0 ? 0 : UINT64_MAX;
        cr_assert_eq(open_retry_failed(&r, &topic, 3, now, rand), i);
        uint64_t at = open_retry_next_ms(&r);
        cr_assert_geq(at, now + base * 3 / 4, "failure %u", i);
        cr_assert_leq(at, now + base * 5 / 4, "failure %u", i);
        cr_assert_not(open_retry_due(&r, &topic, 3, at - 1));
        cr_assert(open_retry_due(&r, &topic, 3, at));
        now = at;
        base = base * 2 > OPEN_RETRY_MAX_MS ? OPEN_RETRY_MAX_MS : base * 2;
    }
    cr_assert_eq(base, OPEN_RETRY_MAX_MS, "the cap was reached");
}

Test(open_retry, partitions_back_off_apart)
{
    open_retry_failed(&r, &topic, 0, 0, 0);
    cr_assert(open_retry_due(&r, &topic, 1, 0));
    cr_assert(open_retry_due(&r, &other, 0, 0));
    cr_assert_not(open_retry_due(&r, &topic, 0, 0));
}

Test(open_retry, an_open_that_works_forgets_the_back_off)
{
    open_retry_failed(&r, &topic, 0, 0, 0);
    open_retry_failed(&r, &topic, 0, 200, 0);
    open_retry_clear(&r, &topic, 0);
    cr_assert(open_retry_due(&r, &topic, 0, 0));
    cr_assert_eq(open_retry_failed(&r, &topic, 0, 0, 0), 1,
                 "the count starts again");
}

Test(open_retry, partitions_no_longer_hosted_are_forgotten)
{
    open_retry_failed(&r, &topic, 0, 0, 0);
    open_retry_failed(&r, &topic, 1, 0, 0);
    open_retry_unsee(&r);
    (void)open_retry_due(&r, &topic, 1, 0); /* still hosted */
    open_retry_prune(&r);
    cr_assert(open_retry_due(&r, &topic, 0, 0), "forgotten");
    cr_assert_not(open_retry_due(&r, &topic, 1, 0), "kept");
}
