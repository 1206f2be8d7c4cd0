/* What Kafka's LogValidator on the leader costs (`make bench`): produce
 * throughput with the record walk (common/kafka/record_validate.h) against
 * the same produce without it, uncompressed and lz4, 1 KiB records.
 *
 *   in-process  the walker alone over realistic batches (1000 records of
 *               1 KiB of text-like, different values, about 1 MiB; lz4 at
 *               about 2.5:1), against a memcpy of the same batch bytes
 *               (what storing them costs at least). Printed as `info`
 *               lines: walker MB/s of records, ns per record; it shows the
 *               walk's own price, not what a producer sees.
 *   end to end  the RESULT line. `cairn bench produce` (librdkafka, acks=1,
 *               3 partitions, replication factor 1) against a real cluster
 *               (3 controllers, 1 broker, tests/lib/cluster.h) started
 *               once with the walk and once with
 *               produce.record.validation.enable=false, the broker's
 *               switch for exactly this comparison; both with
 *               log.sync.before.ack=false, so that fdatasync does not hide
 *               the CPU the walk takes (the ratio is then the least
 *               favourable one). Runs alternate between the two clusters,
 *               BENCH_ROUNDS each, medians compared: ratio = with / without.
 *               cairn bench sends one payload in every record, so its lz4
 *               batches compress far more than real ones: the broker
 *               inflates the most bytes per byte received, which again
 *               errs against the walk.
 *
 * Floors (the issue): >= 0.85 uncompressed, >= 0.6 lz4; a floor not met is
 * reported (met=no), not fatal. BENCH_VALIDATION_MB (default 1024) sets the
 * MB of values per run. MB is 10^6 bytes. One thread. */
#include "tests/lib/bench_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/kafka/record_batch.h"
#include "common/kafka/record_inflate.h"
#include "common/kafka/record_validate.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/writer.h"
#include "tests/lib/batch_builder.h"

#define BENCH_ROUNDS 5
#define BENCH_RECORD_BYTES 1024
#define BENCH_MB_DEFAULT 1024
#define BENCH_MB_MAX 65536
#define BENCH_FLOOR_NONE 0.85
#define BENCH_FLOOR_LZ4 0.6
#define BENCH_BATCH_RECORDS 1000
#define BENCH_IN_PROCESS_MS 1000.0 /* of each in-process measurement */
#define BENCH_BOOTSTRAP_BYTES 64
#define BENCH_NOW_MS 1700000000000LL

_Static_assert(BENCH_ROUNDS % 2 == 1, "a median of an odd count");

/* ------------------------------------------------------------------------
 * In process */

/* Text-like 1 KiB values, different in every record. */
static void fill_value(uint8_t *v, size_t n, uint32_t seed)
{
    static const char *const words[] = {
        "order", "user", "status", "shipped", "id", "amount", "currency",
        "EUR", "timestamp", "region", "warehouse", "sku", "quantity"};
    uint32_t x = seed * 2654435761u + 1;
    size_t i = 0;
    while (i < n) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        const char *w = words[x % ARRAY_LEN(words)];
        char piece[32];
        int len = snprintf(piece, sizeof piece, "\"%s\":%u,", w,
                           (unsigned)(x >> 20));
        for (int k = 0; k < len && i < n; k++) {
            v[i++] = (uint8_t)piece[k];
        }
    }
}

static struct built_batch realistic_batch(int codec, size_t *records_bytes)
{
    struct writer w;
    writer_init(&w, 16u * 1024 * 1024);
    uint8_t value[BENCH_RECORD_BYTES];
    for (int32_t i = 0; i < BENCH_BATCH_RECORDS; i++) {
        fill_value(value, sizeof value, (uint32_t)i);
        struct batch_record r = {.offset_delta = i, .timestamp_delta = i,
                                 .key_len = -1, .value = value,
                                 .value_len = (int32_t)sizeof value};
        batch_write_record(&w, &r);
    }
    struct batch_spec spec = {.codec = codec,
                              .record_count = BENCH_BATCH_RECORDS,
                              .base_timestamp = BENCH_NOW_MS,
                              .max_timestamp = BENCH_NOW_MS +
                                               BENCH_BATCH_RECORDS - 1,
                              .producer_id = -1};
    struct built_batch b = batch_wrap(w.data, w.len, &spec);
    *records_bytes = w.len;
    writer_free(&w);
    return b;
}

static void bench_in_process(int codec, const char *name)
{
    size_t records_bytes = 0;
    struct built_batch b = realistic_batch(codec, &records_bytes);
    struct record_batch_header h;
    if (record_batch_validate(b.bytes, b.len, true, &h) != RC_OK) {
        bench_fail("in-process %s batch does not validate", name);
    }
    struct record_validator *v = NULL;
    if (record_validator_new(&v) != RC_OK) {
        bench_fail("out of memory");
    }
    struct record_validate_config cfg = {
        .now_ms = BENCH_NOW_MS, .timestamp_before_max_ms = INT64_MAX,
        .timestamp_after_max_ms = 3600000,
        .inflated_bytes_max = RECORD_INFLATED_BYTES_MAX};
    struct record_validate_result res;
    int64_t walks = 0;
    double t0 = bench_clock_ms();
    double t = t0;
    while (t - t0 < BENCH_IN_PROCESS_MS) {
        if (record_validate(v, b.bytes, b.len, &h, &cfg, &res) != RC_OK) {
            bench_fail("in-process %s batch refused: %s", name, res.message);
        }
        walks++;
        t = bench_clock_ms();
    }
    double walk_ms = t - t0;
    uint8_t *copy = malloc(b.len);
    ASSERT(copy != NULL);
    int64_t copies = 0;
    t0 = bench_clock_ms();
    t = t0;
    while (t - t0 < BENCH_IN_PROCESS_MS) {
        memcpy(copy, b.bytes, b.len);
        __asm__ volatile("" : : "r"(copy) : "memory"); /* keep the copy */
        copies++;
        t = bench_clock_ms();
    }
    double copy_ms = t - t0;
    double walk_mb_s = (double)walks * (double)records_bytes / walk_ms / 1e3;
    double copy_mb_s = (double)copies * (double)records_bytes / copy_ms /
                       1e3;
    printf("info bench=produce_validation part=in_process codec=%s "
           "records_per_batch=%d record_bytes=%d batch_bytes=%zu "
           "records_bytes=%zu walk_mb_s=%.0f walk_ns_per_record=%.1f "
           "memcpy_batch_mb_s=%.0f\n",
           name, BENCH_BATCH_RECORDS, BENCH_RECORD_BYTES, b.len,
           records_bytes, walk_mb_s,
           walk_ms * 1e6 / ((double)walks * BENCH_BATCH_RECORDS), copy_mb_s);
    fflush(stdout);
    free(copy);
    record_validator_free(v);
    built_batch_free(&b);
}

/* ------------------------------------------------------------------------
 * End to end */

struct e2e_runs {
    double mb_s[2][2][BENCH_ROUNDS]; /* [walk on][lz4][round] */
};

static void produce_run(const char *boot, const char *topic,
                        const char *records, const char *codec,
                        const char *label, double *mb_s)
{
    char size[16];
    snprintf(size, sizeof size, "%d", BENCH_RECORD_BYTES);
    const char *args[] = {"--bootstrap-servers", boot, "bench", "produce",
                          "--topic", topic, "--records", records,
                          "--record-size", size, "--acks", "1",
                          "--compression", codec, "--partitions", "3",
                          "--replication-factor", "1", NULL};
    const char *line = bench_run_cairn(label, args);
    *mb_s = bench_field(line, "mb_s", true);
}

/* One round on a fresh cluster, with or without the walk. */
static void e2e_round(bool walk, int round, const char *records,
                      struct e2e_runs *runs)
{
    static struct cluster c;
    memset(&c, 0, sizeof c);
    c.broker_extra_config =
        walk ? "log.sync.before.ack=false\n"
             : "log.sync.before.ack=false\n"
               "produce.record.validation.enable=false\n";
    bench_cluster_start(&c, 3, 1);
    char boot[BENCH_BOOTSTRAP_BYTES];
    snprintf(boot, sizeof boot, "127.0.0.1:%d", c.brokers[0].port);
    static const char *const codecs[2] = {"none", "lz4"};
    for (int z = 0; z < 2; z++) {
        char topic[32];
        snprintf(topic, sizeof topic, "pv-%s", codecs[z]);
        bench_create_topic(topic, 3, 1, NULL);
        char label[64];
        snprintf(label, sizeof label, "walk=%s codec=%s round=%d",
                 walk ? "on" : "off", codecs[z], round);
        produce_run(boot, topic, records, codecs[z], label,
                    &runs->mb_s[walk][z][round]);
    }
    bench_cluster_stop(&c);
}

int main(void)
{
    bench_set_name("bench_validation");
    long mb = bench_env_long("BENCH_VALIDATION_MB", BENCH_MB_DEFAULT,
                             BENCH_MB_MAX);
    double t0 = bench_clock_ms();
    bench_in_process(RECORD_CODEC_NONE, "none");
    bench_in_process(RECORD_CODEC_LZ4, "lz4");
    char records[32];
    snprintf(records, sizeof records, "%ld", mb * 1000000 /
                                                  BENCH_RECORD_BYTES);
    static struct e2e_runs runs;
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        /* Alternate which goes first, so drift favours neither. */
        bool first = r % 2 == 0;
        e2e_round(first, r, records, &runs);
        e2e_round(!first, r, records, &runs);
    }
    double on_none = bench_median(runs.mb_s[1][0], BENCH_ROUNDS);
    double off_none = bench_median(runs.mb_s[0][0], BENCH_ROUNDS);
    double on_lz4 = bench_median(runs.mb_s[1][1], BENCH_ROUNDS);
    double off_lz4 = bench_median(runs.mb_s[0][1], BENCH_ROUNDS);
    double ratio_none = on_none / off_none;
    double ratio_lz4 = on_lz4 / off_lz4;
    bool met = ratio_none >= BENCH_FLOOR_NONE && ratio_lz4 >= BENCH_FLOOR_LZ4;
    printf("RESULT bench=produce_validation record_bytes=%d records=%s "
           "rounds=%d acks=1 log_sync_before_ack=false "
           "none_on_mb_s=%.1f none_off_mb_s=%.1f none_ratio=%.3f "
           "none_floor=%.2f lz4_on_mb_s=%.1f lz4_off_mb_s=%.1f "
           "lz4_ratio=%.3f lz4_floor=%.2f met=%s\n",
           BENCH_RECORD_BYTES, records, BENCH_ROUNDS, on_none, off_none,
           ratio_none, BENCH_FLOOR_NONE, on_lz4, off_lz4, ratio_lz4,
           BENCH_FLOOR_LZ4, met ? "yes" : "no");
    printf("info bench=produce_validation total_s=%.1f\n",
           (bench_clock_ms() - t0) / 1e3);
    return 0;
}
