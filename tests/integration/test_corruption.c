/* A corrupt batch is never served, and a damaged replica repairs from its
 * peers, with real processes: three controllers, three brokers, a topic of
 * one partition with replication factor 3, min.insync.replicas=2 and
 * small segments, written with acks=all; then one byte of a record inside
 * a closed segment is flipped on disk (pwrite to the segment file while
 * the broker runs). On a follower, its scrub finds the batch and it
 * fetches it again from the leader. On the leader, fetches of the damaged
 * range are answered with KAFKA_STORAGE_ERROR, leadership moves to an
 * in-sync replica and the old leader repairs from it. Either way every
 * record reads back (raw Fetch from whichever broker leads) with its
 * original bytes, and the damaged replica's files end up intact. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/record_batch.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/bench_util.h"
#include "tests/lib/cluster.h"
#include "tests/lib/kafka_wire.h"

#define TOPIC "crc"
#define N_BATCHES 20
#define RECORDS_PER_BATCH 10
#define VALUE_BYTES 100
#define BUDGET_MS 60000

static const char extra_config[] = "min.insync.replicas=2\n"
                                   "replica.lag.time.max.ms=3000\n";

static struct cluster c;
static bool started;
static struct built_batch batches[N_BATCHES];

static void teardown(void)
{
    for (int i = 0; i < N_BATCHES; i++) {
        built_batch_free(&batches[i]);
    }
    if (started) {
        for (int i = 0; i < c.n_brokers; i++) {
            if (c.brokers[i].pid > 0) {
                cluster_node_signal(&c, &c.brokers[i], SIGKILL, true);
            }
        }
        cluster_destroy(&c);
    }
}

TestSuite(corruption, .fini = teardown, .timeout = 150);

/* The partition's metadata from the active controller; false if none. */
static bool part_read(struct meta_partition *out)
{
    struct meta_image img;
    meta_image_init(&img);
    bool ok = cluster_image(&c, &img);
    const struct meta_topic *t = ok ? meta_image_topic(&img, TOPIC) : NULL;
    ok = t != NULL && t->n_partitions == 1;
    if (ok) {
        *out = t->partitions[0];
    }
    meta_image_free(&img);
    return ok && out->leader >= 0;
}

static bool isr_has(const struct meta_partition *mp, int32_t id)
{
    for (int32_t i = 0; i < mp->isr.n; i++) {
        if (mp->isr.ids[i] == id) {
            return true;
        }
    }
    return false;
}

/* Starts the cluster, creates the topic and writes every batch with
 * acks=all while all three replicas are in the ISR; the partition. */
static struct meta_partition start_and_write(void)
{
    memset(&c, 0, sizeof c);
    c.broker_extra_config = extra_config;
    cluster_start(&c, 3, 3);
    started = true;
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    cr_assert_eq(cluster_create_topic_with(&c, TOPIC, 1, 3, "segment.bytes",
                                           "4096"), KAFKA_ERROR_NONE);
    struct meta_partition mp;
    uint64_t deadline = cluster_now_ms() + 30000;
    while (!part_read(&mp) || mp.isr.n != 3) {
        cr_assert_lt(cluster_now_ms(), deadline, "no leader with full ISR");
        bench_pause_ms(100);
    }
    struct kafka_client kc;
    cr_assert(kafka_wire_connect(&kc, cluster_broker(&c, mp.leader)->port),
              "%s", kc.error);
    for (int i = 0; i < N_BATCHES; i++) {
        batches[i] = batch_build(RECORDS_PER_BATCH, VALUE_BYTES, 1000 + i,
                                 (uint32_t)i + 7);
        while (kafka_wire_produce(&kc, TOPIC, 0, batches[i].bytes,
                                  batches[i].len, -1) != KAFKA_ERROR_NONE) {
            cr_assert_lt(cluster_now_ms(), deadline, "batch %d", i);
            bench_pause_ms(100); /* until every broker knows the topic */
        }
    }
    kafka_client_close(&kc);
    cr_assert(part_read(&mp));
    cr_assert_eq(mp.isr.n, 3, "acks=all with the whole ISR");
    return mp;
}

static void segment_path(int32_t broker, char *out, size_t cap)
{
    char dir[4096];
    cluster_broker_log_dir(&c, cluster_broker(&c, broker), dir, sizeof dir);
    int n = snprintf(out, cap, "%s/" TOPIC "-0/%020d.log", dir, 0);
    cr_assert(n > 0 && (size_t)n < cap);
}

/* Inside the records of the second batch (offsets 10-19), in segment 0,
 * which later batches have rolled past. */
static int64_t damage_position(void)
{
    return (int64_t)batches[0].len + (int64_t)batches[1].len - 10;
}

/* The byte at position of broker's segment 0, or -1 while the file is
 * shorter (cut back and not yet fetched again). */
static int byte_at(int32_t broker, int64_t position)
{
    char path[4300];
    segment_path(broker, path, sizeof path);
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0, "%s", path);
    uint8_t b = 0;
    ssize_t n = pread(fd, &b, 1, (off_t)position);
    close(fd);
    return n == 1 ? b : -1;
}

/* Flips one byte of broker's segment 0 in place; its old value. */
static uint8_t flip(int32_t broker, int64_t position)
{
    char path[4300];
    segment_path(broker, path, sizeof path);
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0, "%s", path);
    uint8_t b = 0;
    cr_assert_eq(pread(fd, &b, 1, (off_t)position), 1);
    uint8_t bad = (uint8_t)(b ^ 0x20);
    cr_assert_eq(pwrite(fd, &bad, 1, (off_t)position), 1);
    close(fd);
    return b;
}

/* Checks one fetched record set: whole batches, each intact and equal to
 * what was written; returns the offset after the last. */
static int64_t check_records(const uint8_t *p, size_t len, int64_t next)
{
    size_t at = 0;
    while (len - at >= 61) {
        struct record_batch_header h;
        cr_assert_eq(record_batch_parse(p + at, len - at, &h), RC_OK);
        size_t size = (size_t)record_batch_size(&h);
        if (size > len - at) {
            break; /* a partial batch at the end, as Kafka may send */
        }
        cr_assert(record_batch_crc_ok(p + at, &h),
                  "a corrupt batch at offset %lld was served",
                  (long long)h.base_offset);
        int64_t i = h.base_offset / RECORDS_PER_BATCH;
        cr_assert_eq(h.base_offset, next, "offsets in order");
        cr_assert(i >= 0 && i < N_BATCHES);
        cr_assert(batch_same_payload(p + at, &batches[i]),
                  "batch %lld differs from what was written", (long long)i);
        next = record_batch_last_offset(&h) + 1;
        at += size;
    }
    return next;
}

/* One Fetch v11 of partition 0 from offset next at the broker on port:
 * checks the records it returns (check_records) and sets *next past
 * them; the partition's ErrorCode, or -1 without an answer. */
static int fetch_once(int port, int64_t *next)
{
    struct kafka_FetchPartition fp = {
        .PartitionIndex = 0, .CurrentLeaderEpoch = -1,
        .FetchOffset = *next, .LogStartOffset = -1,
        .PartitionMaxBytes = 1 << 20};
    struct kafka_FetchableTopic ft = {.Name = slice_from_str(TOPIC),
                                      .Partitions = &fp,
                                      .PartitionsCnt = 1};
    struct kafka_FetchRequest rq = {
        .ReplicaId = -1, .MaxWaitMs = 100, .MinBytes = 1,
        .MaxBytes = 1 << 20, .IsolationLevel = 0, .SessionEpoch = -1,
        .Topics = &ft, .TopicsCnt = 1, .RackId = slice_from_str("")};
    struct writer w;
    writer_init(&w, 1 << 20);
    cr_assert_eq(kafka_fetch_request_encode(&w, 11, &rq), RC_OK);
    struct kafka_wire_answer ans;
    bool ok = kafka_wire_call(port, KAFKA_API_FETCH, 11, &w, &ans);
    writer_free(&w);
    if (!ok) {
        return -1;
    }
    struct kafka_FetchResponse out;
    cr_assert_eq(kafka_fetch_response_decode(&ans.r, 11, &ans.a, &out),
                 RC_OK);
    const struct kafka_FetchablePartitionResponse *pr =
        &out.Responses[0].Partitions[0];
    int err = pr->ErrorCode;
    if (err == KAFKA_ERROR_NONE && pr->Records.len > 0) {
        *next = check_records(pr->Records.ptr, pr->Records.len, *next);
    }
    kafka_wire_answer_free(&ans);
    return err;
}

/* Fetches from whichever broker leads until every record has been read;
 * how many answers were KAFKA_STORAGE_ERROR. */
static int consume_all(void)
{
    int64_t next = 0;
    int storage_errors = 0;
    uint64_t deadline = cluster_now_ms() + BUDGET_MS;
    while (next < N_BATCHES * RECORDS_PER_BATCH) {
        cr_assert_lt(cluster_now_ms(), deadline, "stuck at offset %lld "
                     "(%d storage errors)", (long long)next, storage_errors);
        struct meta_partition mp;
        int64_t before = next;
        int err = part_read(&mp)
                      ? fetch_once(cluster_broker(&c, mp.leader)->port, &next)
                      : -1;
        storage_errors += err == KAFKA_ERROR_KAFKA_STORAGE_ERROR;
        if (next == before) {
            bench_pause_ms(100);
        }
    }
    return storage_errors;
}

/* Waits until broker's segment 0 holds the original byte again and the
 * broker is back in the ISR. */
static void wait_repaired(int32_t broker, int64_t position, uint8_t good)
{
    uint64_t deadline = cluster_now_ms() + BUDGET_MS;
    struct meta_partition mp;
    while (byte_at(broker, position) != good ||
           !part_read(&mp) || !isr_has(&mp, broker)) {
        cr_assert_lt(cluster_now_ms(), deadline, "broker %d not repaired",
                     broker);
        bench_pause_ms(200);
    }
}

/* The number of the first line of n's log that holds text; -1 if none. */
static int log_line(const struct cluster_node *n, const char *text)
{
    FILE *f = fopen(n->log, "r");
    cr_assert_not_null(f);
    char line[4096];
    int at = -1;
    for (int i = 0; at < 0 && fgets(line, sizeof line, f) != NULL; i++) {
        at = strstr(line, text) != NULL ? i : -1;
    }
    fclose(f);
    return at;
}

/* The follower leaves the ISR before it cuts its log below the high
 * watermark: in the ISR without the records it cut, it could be elected
 * and lose them. */
Test(corruption, a_follower_fetches_a_corrupt_batch_again_from_its_leader)
{
    struct meta_partition mp = start_and_write();
    int32_t follower = mp.isr.ids[0] != mp.leader ? mp.isr.ids[0]
                                                  : mp.isr.ids[1];
    int64_t at = damage_position();
    uint8_t good = flip(follower, at);
    wait_repaired(follower, at, good);
    const struct cluster_node *n = cluster_broker(&c, follower);
    int left = log_line(n, "out of the ISR to repair a corrupt batch at "
                           "offset 10");
    int cut = log_line(n, "(a corrupt batch at 10;");
    cr_assert_geq(left, 0, "no ISR exit in %s", n->log);
    cr_assert_gt(cut, left, "truncated before it left the ISR: %s", n->log);
    consume_all();
}
Test(corruption, a_corrupt_batch_on_the_leader_moves_leadership_away)
{
    struct meta_partition mp = start_and_write();
    int32_t old = mp.leader;
    int64_t at = damage_position();
    uint8_t good = flip(old, at);
    consume_all();
    struct meta_partition now;
    cr_assert(part_read(&now));
    cr_assert_neq(now.leader, old, "leadership moved away");
    wait_repaired(old, at, good);
}

/* Damage found at start-up: the leader, stopped, gets a flipped byte in a
 * closed segment; restarted, its log opens whole (what follows the bad
 * batch may be acknowledged), the start-up check finds the batch off the
 * loop thread, and the broker, following the leader that took over,
 * truncates before it and fetches the rest again. */
Test(corruption, damage_found_at_start_up_is_repaired_from_a_replica)
{
    struct meta_partition mp = start_and_write();
    int32_t old = mp.leader;
    struct cluster_node *n = cluster_broker(&c, old);
    cluster_node_signal(&c, n, SIGTERM, true);
    int64_t at = damage_position();
    uint8_t good = flip(old, at);
    cluster_node_start(&c, n);
    wait_repaired(old, at, good);
    cr_assert(cluster_log_contains(n, "corrupt batch below the recovery "
                                   "point at offset=10"), "%s", n->log);
    cr_assert_eq(cluster_log_count(n, "start-up CRC pass: ", ", 1 corrupt, "
                                   "0 unreadable"), 1, "%s", n->log);
    consume_all();
}

/* Fetches from offset 0 of the leader until it answers
 * KAFKA_STORAGE_ERROR at `stop`; every batch before is intact. */
static void consume_until_storage_error(int32_t leader, int64_t stop)
{
    int64_t next = 0;
    uint64_t deadline = cluster_now_ms() + BUDGET_MS;
    for (;;) {
        cr_assert_lt(cluster_now_ms(), deadline, "no storage error at "
                     "%lld (next %lld)", (long long)stop, (long long)next);
        int err = fetch_once(cluster_broker(&c, leader)->port, &next);
        if (err == KAFKA_ERROR_KAFKA_STORAGE_ERROR) {
            cr_assert_eq(next, stop, "the error comes at the bad batch");
            return;
        }
        cr_assert_leq(next, stop, "read past the bad batch");
        if (err != KAFKA_ERROR_NONE) {
            bench_pause_ms(100);
        }
    }
}

/* The leader is the only in-sync copy left and it is damaged: nothing can
 * repair it, and no consumer gets the damaged bytes: reads stop at the
 * bad batch with KAFKA_STORAGE_ERROR, the leader says why, and the
 * partition goes offline. */
Test(corruption, every_in_sync_copy_damaged_serves_no_corrupt_byte)
{
    struct meta_partition mp = start_and_write();
    for (int i = 0; i < mp.replicas.n; i++) {
        if (mp.replicas.ids[i] != mp.leader) {
            cluster_node_signal(&c, cluster_broker(&c, mp.replicas.ids[i]),
                                SIGKILL, true);
        }
    }
    uint64_t deadline = cluster_now_ms() + BUDGET_MS;
    while (!part_read(&mp) || mp.isr.n != 1) {
        cr_assert_lt(cluster_now_ms(), deadline, "ISR did not shrink");
        bench_pause_ms(100);
    }
    flip(mp.leader, damage_position());
    consume_until_storage_error(mp.leader, RECORDS_PER_BATCH);
    struct cluster_node *n = cluster_broker(&c, mp.leader);
    while (!cluster_log_contains(n, "every in-sync copy is damaged")) {
        cr_assert_lt(cluster_now_ms(), deadline, "no event in %s", n->log);
        bench_pause_ms(100);
    }
    /* Offline rather than led by the damaged copy: no leader, and the
     * ISR keeps its last member. */
    for (;;) {
        mp.leader = 0; /* part_read() fills it in, but is false at -1 */
        if (!part_read(&mp) && mp.leader == META_NO_LEADER) {
            break;
        }
        cr_assert_lt(cluster_now_ms(), deadline, "still led by %d",
                     mp.leader);
        bench_pause_ms(100);
    }
    cr_assert_eq(mp.isr.n, 1);
}
