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
