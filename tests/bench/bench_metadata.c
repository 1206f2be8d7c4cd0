/* Metadata apply benchmark (`make bench`): what one metadata change
 * costs a broker as the cluster grows. Two images, of SMALL and LARGE
 * partitions (in topics of 10,000), with the same HOSTED partitions on this
 * broker (real logs in a temporary directory); then, for each image,
 * CHANGES leader moves, one partition at a time (every other one
 * hosted), each applied to the image (meta_apply) and to the replica
 * manager with the change list the broker keeps (what the broker does
 * for each record it learns); and, as the baseline measured in the same
 * run, the walk of the whole image that every change cost before.
 *
 *   RESULT bench=metadata_apply small=100 large=100000 hosted=100
 *       change_us_small=... change_us_large=... ratio=... (large/small,
 *       floor 2) full_us_large=... full_over_change=...
 *
 * One libuv loop, no sockets. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "broker/replication/replica_manager.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "common/topic_config.h"
#include "common/trace.h"
#include "tests/lib/bench_util.h"
#include "tests/lib/tmpdir.h"

#define SMALL 100
#define LARGE 100000
#define HOSTED 100
#define CHANGES 4000
#define FULL_PASSES 20
#define SELF 1

struct bench {
    char dir[4096];
    uv_loop_t loop;
    struct tracer tracer;
    struct replica_manager rm;
    struct meta_image img;
    struct meta_changes changes;
    int32_t n;
};

static void quiet(struct tracer *t, enum trace_level level, const char *file,
                  int line, const char *msg)
{
    (void)t;
    (void)level;
    (void)file;
    (void)line;
    (void)msg;
}

static void apply_or_fail(struct bench *b, const struct meta_record *r)
{
    if (meta_apply(&b->img, r) != RC_OK) {
        bench_fail("meta_apply of record type %d failed", (int)r->type);
    }
}

/* Global partition i: topic i / PER_TOPIC, partition i % PER_TOPIC. */
#define PER_TOPIC 10000 /* META_PARTITIONS_MAX */

static void topic_id(struct meta_uuid *id, int32_t i)
{
    memset(id, 0, sizeof *id);
    id->b[0] = 0x5c;
    id->b[1] = (uint8_t)(i / PER_TOPIC);
}

/* n partitions in topics of PER_TOPIC, HOSTED of them (evenly spread) on
 * SELF. */
static void setup(struct bench *b, int32_t n)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    tmpdir_make(b->dir, sizeof b->dir);
    if (uv_loop_init(&b->loop) != 0) {
        bench_fail("uv_loop_init");
    }
    b->tracer = (struct tracer){.level = TRACE_LEVEL_ERROR, .emit = quiet};
    struct replica_manager_config cfg = {
        .broker_id = SELF, .log_dir = b->dir, .lag_max_ms = 10000};
    log_config_default(&cfg.log);
    topic_config_values_default(&cfg.topic_defaults);
    struct replica_manager_hooks hooks = {0};
    if (replica_manager_init(&b->rm, &b->loop, &cfg, &hooks, &b->tracer) !=
        RC_OK) {
        bench_fail("replica_manager_init");
    }
    meta_image_init(&b->img);
    for (int32_t i = 0; i < n; i++) {
        struct meta_record r = {.type = META_REC_TOPIC};
        if (i % PER_TOPIC == 0) {
            snprintf(r.u.topic.name, sizeof r.u.topic.name, "m%d",
                     (int)(i / PER_TOPIC));
            topic_id(&r.u.topic.id, i);
            apply_or_fail(b, &r);
        }
        r = (struct meta_record){.type = META_REC_PARTITION};
        topic_id(&r.u.partition.topic_id, i);
        r.u.partition.partition = i % PER_TOPIC;
        bool hosted = i % (n / HOSTED) == 0;
        r.u.partition.replicas = (struct meta_replica_set){
            .n = 3, .ids = {2, 3, hosted ? SELF : 4}};
        r.u.partition.isr = r.u.partition.replicas;
        r.u.partition.leader = 2;
        apply_or_fail(b, &r);
    }
    replica_manager_unfence(&b->rm);
    replica_manager_apply(&b->rm, &b->img);
    for (int turn = 0; turn < 1000 && b->rm.n < HOSTED; turn++) {
        uv_run(&b->loop, UV_RUN_NOWAIT); /* opens are paced per turn */
    }
    if (b->rm.n != HOSTED) {
        bench_fail("%zu of %d partitions opened", b->rm.n, HOSTED);
    }
    meta_changes_init(&b->changes);
    b->img.changes = &b->changes;
}

static void teardown(struct bench *b)
{
    b->img.changes = NULL;
    meta_changes_free(&b->changes);
    replica_manager_close(&b->rm);
    uv_run(&b->loop, UV_RUN_DEFAULT);
    (void)uv_loop_close(&b->loop);
    meta_image_free(&b->img);
    tmpdir_remove(b->dir);
}

/* Microseconds per change: CHANGES leader moves, each applied as the
 * broker applies one record it learns. */
static double changes_us(struct bench *b)
{
    int32_t step = b->n / HOSTED;
    double t0 = bench_clock_ms();
    for (int k = 0; k < CHANGES; k++) {
        int32_t p = (k / 2 * step + k % 2) % b->n; /* hosted, then next */
        struct meta_record r = {.type = META_REC_PARTITION_CHANGE};
        topic_id(&r.u.partition_change.topic_id, p);
        r.u.partition_change.partition = p % PER_TOPIC;
        r.u.partition_change.leader = k % 2 == 0 ? 3 : 2;
        apply_or_fail(b, &r);
        replica_manager_apply(&b->rm, &b->img);
        meta_changes_clear(&b->changes);
    }
    return (bench_clock_ms() - t0) * 1000.0 / CHANGES;
}

/* Microseconds per walk of the whole image (what each change cost). */
static double full_us(struct bench *b)
{
    double t0 = bench_clock_ms();
    for (int k = 0; k < FULL_PASSES; k++) {
        b->changes.all = true;
        replica_manager_apply(&b->rm, &b->img);
        meta_changes_clear(&b->changes);
    }
    return (bench_clock_ms() - t0) * 1000.0 / FULL_PASSES;
}

int main(void)
{
    bench_set_name("bench_metadata");
    static struct bench b;
    setup(&b, SMALL);
    double small = changes_us(&b);
    teardown(&b);
    setup(&b, LARGE);
    double large = changes_us(&b);
    double full = full_us(&b);
    uint64_t visits = b.rm.visits;
    teardown(&b);
    printf("RESULT bench=metadata_apply small=%d large=%d hosted=%d "
           "change_us_small=%.2f change_us_large=%.2f ratio=%.2f floor=2 "
           "met=%s full_us_large=%.0f full_over_change=%.0f visits=%" PRIu64
           "\n",
           SMALL, LARGE, HOSTED, small, large, large / small,
           large / small <= 2.0 ? "yes" : "no", full, full / large, visits);
    return 0;
}
