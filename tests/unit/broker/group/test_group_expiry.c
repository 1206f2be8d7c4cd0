/* offsets.retention.minutes for offsets committed outside any membership
 * (broker/group/group.c): each expires from its own commit. The emptied
 * group's rule is in test_group.c, beside its membership helpers. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "broker/group/group.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"

#define T0 1000000

static struct groups gs;
static struct group_io io;
static struct group_commit *last_token;
static int tombstone_calls;
static int32_t tombstoned[8];
static size_t n_tombstoned;

static int32_t partition_for(struct group_io *i, struct slice id)
{
    (void)i;
    (void)id;
    return 0;
}

static int16_t persist(struct group_io *i, struct group_commit *token,
                       int32_t partition, struct slice group,
                       const struct group_offset *o, size_t n)
{
    (void)i, (void)partition, (void)group, (void)o, (void)n;
    last_token = token;
    return KAFKA_ERROR_NONE;
}

static void commit_done(struct group_io *i, void *req, const int16_t *errors,
                        size_t n)
{
    (void)i, (void)req;
    for (size_t k = 0; k < n; k++) {
        cr_assert_eq(errors[k], KAFKA_ERROR_NONE);
    }
}

static void tombstones(struct group_io *i, int32_t partition,
                       struct slice group, const struct group_offset *o,
                       size_t n)
{
    (void)i, (void)partition, (void)group;
    tombstone_calls++;
    for (size_t k = 0; k < n && n_tombstoned < 8; k++) {
        tombstoned[n_tombstoned++] = o[k].partition;
    }
}

static void setup(void)
{
    io = (struct group_io){.partition_for = partition_for,
                           .persist_offsets = persist,
                           .commit_done = commit_done,
                           .persist_tombstones = tombstones};
    struct group_config cfg;
    group_config_default(&cfg);
    cfg.offsets_retention_ms = 60000;
    cfg.sweep_interval_ms = 1000;
    group_init(&gs, &io, &cfg);
    tombstone_calls = 0;
    n_tombstoned = 0;
}

static void teardown(void)
{
    group_free(&gs);
}

TestSuite(group_expiry, .init = setup, .fini = teardown);

static void commit_at(int32_t partition, int64_t offset, int64_t now)
{
    struct group_commit_partition p = {
        .topic = slice_from_str("t"), .partition = partition,
        .offset = offset, .leader_epoch = -1,
        .metadata = slice_from_str("")};
    struct group_commit_request r = {
        .group_id = slice_from_str("solo"), .generation_id = -1,
        .member_id = slice_from_str(""), .group_instance_id = slice_null(),
        .partitions = &p, .n_partitions = 1};
    cr_assert_eq(group_offset_commit(&gs, (void *)1, &r, now), RC_OK);
    group_offsets_persisted(&gs, last_token, KAFKA_ERROR_NONE);
}

Test(group_expiry, standalone_offsets_expire_each_from_its_commit)
{
    commit_at(0, 7, T0);
    commit_at(1, 8, T0 + 30000);
    group_tick(&gs, T0 + 30000); /* arms the sweep */
    group_tick(&gs, T0 + 61000);
    struct slice g = slice_from_str("solo"), t = slice_from_str("t");
    cr_assert_null(group_offset_get(&gs, g, t, 0));
    cr_assert_not_null(group_offset_get(&gs, g, t, 1),
                       "committed 30 s later: not yet");
    cr_assert_eq(tombstone_calls, 1);
    cr_assert_eq(n_tombstoned, 1);
    cr_assert_eq(tombstoned[0], 0);
    group_tick(&gs, T0 + 91000);
    cr_assert_null(group_find(&gs, g), "nothing left: forgotten");
    cr_assert_eq(tombstone_calls, 2);
}
