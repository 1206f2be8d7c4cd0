/* Unit tests for broker/replication/throttle.c: the bucket lets a fetch
 * go while not in debt, refills at the rate (a second's worth at most),
 * and an unlimited rate never holds anything back. */
#include "broker/replication/throttle.h"

#include <criterion/criterion.h>

Test(throttle, unlimited_never_holds_back)
{
    struct throttle t;
    throttle_init(&t, THROTTLE_RATE_UNLIMITED, 0);
    cr_assert(!throttle_on(&t));
    throttle_record(&t, UINT64_MAX);
    cr_assert(throttle_allows(&t, 0));
}

Test(throttle, debt_waits_for_the_rate)
{
    struct throttle t;
    throttle_init(&t, 1000, 0); /* 1000 bytes/s */
    cr_assert(throttle_on(&t));
    cr_assert(throttle_allows(&t, 0), "a full bucket to start");
    throttle_record(&t, 3000); /* a fetch overshoots: 2000 in debt */
    cr_assert(!throttle_allows(&t, 0));
    cr_assert(!throttle_allows(&t, 1000));
    cr_assert(!throttle_allows(&t, 2000), "exactly paid off: still 0");
    cr_assert(throttle_allows(&t, 2001));
    cr_assert_eq(throttle_available(&t), 1);
    cr_assert_eq(t.throttled_bytes, 3000);
}

Test(throttle, average_rate_over_many_fetches)
{
    struct throttle t;
    throttle_init(&t, 100000, 0);
    uint64_t sent = 0;
    for (uint64_t ms = 0; ms <= 10000; ms += 10) {
        if (throttle_allows(&t, ms)) {
            throttle_record(&t, 4096);
            sent += 4096;
        }
    }
    /* 10 s at 100 kB/s plus the first second's bucket and one fetch. */
    cr_assert_geq(sent, 1000000);
    cr_assert_leq(sent, 1100000 + 4096);
}

Test(throttle, idle_time_refills_one_second_at_most)
{
    struct throttle t;
    throttle_init(&t, 1000, 0);
    throttle_record(&t, 1000);
    cr_assert(!throttle_allows(&t, 0));
    cr_assert(throttle_allows(&t, 3600000));
    cr_assert_eq(t.tokens, 1000, "one second of bytes, not an hour's");
}

Test(throttle, zero_lets_nothing_through)
{
    struct throttle t;
    throttle_init(&t, 0, 0);
    cr_assert(throttle_on(&t));
    cr_assert(!throttle_allows(&t, 0));
    cr_assert(!throttle_allows(&t, 3600000));
    cr_assert_eq(throttle_available(&t), 0);
}

Test(throttle, a_new_rate_applies_at_once)
{
    struct throttle t;
    throttle_init(&t, THROTTLE_RATE_UNLIMITED, 0);
    throttle_set_rate(&t, 1000, 5000);
    cr_assert(throttle_on(&t), "turned on by a live change");
    cr_assert_eq(throttle_available(&t), 1000, "starts with a full bucket");
    throttle_record(&t, 1500);
    /* 500 in debt; 250 ms at 1000 bytes/s pays half of it, then the rate
     * halves: the other 250 bytes take 500 ms. */
    throttle_set_rate(&t, 500, 5250);
    cr_assert_eq(t.tokens, -250);
    cr_assert(!throttle_allows(&t, 5750));
    cr_assert(throttle_allows(&t, 5752));
    /* Lowered below what the bucket holds: a second of the new rate. */
    throttle_set_rate(&t, 1000, 9000);
    throttle_set_rate(&t, 100, 9000);
    cr_assert_eq(throttle_available(&t), 100);
    throttle_set_rate(&t, THROTTLE_RATE_UNLIMITED, 9000);
    cr_assert(!throttle_on(&t));
    cr_assert_eq(t.throttled_bytes, 1500, "the total is kept");
}
