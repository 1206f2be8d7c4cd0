/* Tests for broker/replication/follower.c's pure part: how many bytes a
 * follower asks per partition from one round to the next. */
#include <criterion/criterion.h>

#include "broker/replication/follower.h"

static const struct follower_config cfg = {
    .self = 2,
    .partition_max_bytes = 1 << 20,
    .response_max_bytes = 10 << 20,
};

Test(follower, a_full_answer_doubles_the_ask_up_to_the_response_max)
{
    int32_t ask = cfg.partition_max_bytes;
    int32_t seen[8];
    for (int i = 0; i < 8; i++) {
        ask = follower_next_partition_max(ask, (size_t)ask, &cfg);
        seen[i] = ask;
    }
    cr_expect_eq(seen[0], 2 << 20);
    cr_expect_eq(seen[1], 4 << 20);
    cr_expect_eq(seen[2], 8 << 20);
    cr_expect_eq(seen[3], 10 << 20, "capped at the response's maximum");
    cr_expect_eq(seen[7], 10 << 20);
}

Test(follower, small_answers_halve_it_back_to_the_configured_size)
{
    int32_t ask = 8 << 20;
    ask = follower_next_partition_max(ask, 100, &cfg);
    cr_expect_eq(ask, 4 << 20);
    ask = follower_next_partition_max(ask, 0, &cfg);
    ask = follower_next_partition_max(ask, 0, &cfg);
    cr_expect_eq(ask, 1 << 20);
    ask = follower_next_partition_max(ask, 0, &cfg);
    cr_expect_eq(ask, 1 << 20, "never below replica.fetch.max.bytes");
}

Test(follower, answers_in_between_keep_it)
{
    int32_t ask = 4 << 20;
    cr_expect_eq(follower_next_partition_max(ask, 1 << 20, &cfg), ask);
    cr_expect_eq(follower_next_partition_max(ask, (2 << 20) - 1, &cfg), ask);
    cr_expect_eq(follower_next_partition_max(ask, 2 << 20, &cfg), 8 << 20);
    cr_expect_eq(follower_next_partition_max(ask, (512 << 10) - 1, &cfg),
                 2 << 20);
}

Test(follower, a_response_max_below_the_partition_max_keeps_the_ask_fixed)
{
    struct follower_config small = cfg;
    small.response_max_bytes = 1024;
    int32_t ask = small.partition_max_bytes;
    cr_expect_eq(follower_next_partition_max(ask, (size_t)ask, &small), ask);
    cr_expect_eq(follower_next_partition_max(ask, 0, &small), ask);
}
