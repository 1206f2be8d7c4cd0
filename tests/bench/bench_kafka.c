/* Kafka client benchmark (`make bench`): `cairn bench` (cli/cmd/bench.h), run
 * as a child process, against a real local cluster (3 controllers and 3
 * brokers of this build, started by tests/lib/cluster.h on free ports in
 * a temporary directory) and, in the same run, against librdkafka's
 * in-memory mock cluster (`cairn bench --mock`, rd_kafka_mock_cluster_new
 * with 3 brokers) as the baseline, because the machine is shared and
 * noisy. Topics have 3 partitions and replication factor 1; acks=1.
 *
 *   kafka_produce  100 B records, 256 MB of values a run, and 1 KiB
 *                  records, 1024 MB a run (BENCH_KAFKA_MB sets both);
 *                  cairn and mock runs alternate, BENCH_ROUNDS of each,
 *                  medians reported with their ratio cairn/mock. Floor
 *                  (the issue): >= 0.5 at 1 KiB.
 *   kafka_consume  a topic of BENCH_KAFKA_CONSUME_MIB (default 1024) MiB
 *                  of 1 KiB records, produced once with large batches
 *                  (just written, so in the page cache), then read from
 *                  its beginning BENCH_ROUNDS times; the median against
 *                  the floor (the issue): >= 800 MB/s. The mock keeps only
 *                  a few MB a partition, so it is no baseline here.
 *
 * Each child's RESULT line is echoed as a `run` line. MB is 10^6 bytes.
 * A failed child or check prints why, stops every process
 * (cluster_destroy) and aborts; a floor not met is reported (met=no),
 * not fatal. CAIRN_KEEP_TEST_DIR=1 keeps the node logs. One thread; each
 * child's output is read with poll() against a budget. */
#include "tests/lib/bench_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"

#define BENCH_ROUNDS 3               /* of each target; median */
#define BENCH_PARTITIONS "3"
#define BENCH_PRODUCE_100_MB 256     /* 2.56 million records */
#define BENCH_PRODUCE_1K_MB 1024     /* a million records */
#define BENCH_CONSUME_MIB_DEFAULT 1024
#define BENCH_MB_MAX 65536           /* bound on the environment overrides */
#define BENCH_CONSUME_RECORD_BYTES 1024
#define BENCH_PRODUCE_FLOOR 0.5      /* cairn/mock at 1 KiB */
#define BENCH_CONSUME_FLOOR_MB_S 800.0
#define BENCH_BOOTSTRAP_BYTES 256

_Static_assert(BENCH_ROUNDS % 2 == 1, "a median of an odd count");

/* What one `cairn bench` run printed. */
struct run_result {
    int64_t records;
    double record_bytes;
    double msgs_s;
    double mb_s;
    double p50_ms; /* produce only */
    double p99_ms;
};

/* ------------------------------------------------------------------------
 * Running `cairn bench` */

/* Runs `cairn ARGS...` (NULL-terminated), echoes its RESULT line as a run
 * line labelled label, and returns its numbers. */
static struct run_result run_cairn(const char *label, const char *const *args)
{
    const char *line = bench_run_cairn(label, args);
    return (struct run_result){
        .records = (int64_t)bench_field(line, "records", true),
        .record_bytes = bench_field(line, "record_bytes", true),
        .msgs_s = bench_field(line, "msgs_s", true),
        .mb_s = bench_field(line, "mb_s", true),
        .p50_ms = bench_field(line, "p50_ms", false),
        .p99_ms = bench_field(line, "p99_ms", false),
    };
}

/* ------------------------------------------------------------------------
 * The measurements */

static void produce_round(const char *boot, const char *topic,
                          const char *records, const char *size, bool mock,
                          struct run_result *out)
{
    const char *common[] = {"produce", "--topic", topic, "--records",
                            records, "--record-size", size, "--acks", "1",
                            "--partitions", BENCH_PARTITIONS,
                            "--replication-factor", "1", NULL};
    const char *args[BENCH_ARGS_MAX];
    size_t n = 0;
    if (mock) {
        args[n++] = "bench";
        args[n++] = "--mock";
    } else {
        args[n++] = "--bootstrap-servers";
        args[n++] = boot;
        args[n++] = "bench";
    }
    for (size_t i = 0; i < ARRAY_LEN(common); i++) {
        args[n++] = common[i];
    }
    *out = run_cairn(mock ? "target=mock" : "target=cairn", args);
}

static void bench_produce(const char *boot, int record_bytes, long mb,
                          bool sync_before_ack)
{
    char topic[64];
    char records[32];
    char size[16];
    snprintf(topic, sizeof topic, "bench-produce-%d", record_bytes);
    snprintf(records, sizeof records, "%ld", mb * 1000000 / record_bytes);
    snprintf(size, sizeof size, "%d", record_bytes);
    double mb_s[2][BENCH_ROUNDS];
    double msgs_s[2][BENCH_ROUNDS];
    double p50[2][BENCH_ROUNDS];
    double p99[2][BENCH_ROUNDS];
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        for (int t = 0; t < 2; t++) { /* cairn, then mock */
            struct run_result res;
            produce_round(boot, topic, records, size, t == 1, &res);
            mb_s[t][r] = res.mb_s;
            msgs_s[t][r] = res.msgs_s;
            p50[t][r] = res.p50_ms;
            p99[t][r] = res.p99_ms;
        }
    }
    double c_mb = bench_median(mb_s[0], BENCH_ROUNDS);
    double m_mb = bench_median(mb_s[1], BENCH_ROUNDS);
    double ratio = c_mb / m_mb;
    printf("RESULT bench=kafka_produce record_bytes=%d records=%s "
           "rounds=%d acks=1 log_sync_before_ack=%s cairn_msgs_s=%.0f "
           "cairn_mb_s=%.1f "
           "cairn_p50_ms=%.3f cairn_p99_ms=%.3f mock_msgs_s=%.0f "
           "mock_mb_s=%.1f mock_p50_ms=%.3f mock_p99_ms=%.3f ratio=%.3f",
           record_bytes, records, BENCH_ROUNDS,
           sync_before_ack ? "true" : "false",
           bench_median(msgs_s[0], BENCH_ROUNDS), c_mb,
           bench_median(p50[0], BENCH_ROUNDS),
           bench_median(p99[0], BENCH_ROUNDS),
           bench_median(msgs_s[1], BENCH_ROUNDS), m_mb,
           bench_median(p50[1], BENCH_ROUNDS),
           bench_median(p99[1], BENCH_ROUNDS),
           ratio);
    if (record_bytes == 1024 && sync_before_ack) {
        printf(" floor=%.2f met=%s", BENCH_PRODUCE_FLOOR,
               ratio >= BENCH_PRODUCE_FLOOR ? "yes" : "no");
    }
    printf("\n");
    fflush(stdout);
}

/* Writes the consume topic once: big batches, a long linger. */
static void fill_consume_topic(const char *boot, const char *records)
{
    const char *args[] = {"--bootstrap-servers", boot, "bench", "produce",
                          "--topic", "bench-consume", "--records", records,
                          "--record-size", "1024", "--acks", "1",
                          "--linger-ms", "100", "--batch-records", "100000",
                          "--partitions", BENCH_PARTITIONS,
                          "--replication-factor", "1", "--config",
                          "segment.bytes=1073741824", NULL};
    double t0 = bench_clock_ms();
    (void)run_cairn("fill", args);
    printf("info bench=kafka_consume fill_s=%.1f\n",
           (bench_clock_ms() - t0) / 1e3);
    fflush(stdout);
}

static void bench_consume(const char *boot, long mib)
{
    char records[32];
    int64_t n = (int64_t)mib * 1024 * 1024 / BENCH_CONSUME_RECORD_BYTES;
    snprintf(records, sizeof records, "%" PRId64, n);
    fill_consume_topic(boot, records);
    const char *args[] = {"--bootstrap-servers", boot, "bench", "consume",
                          "--topic", "bench-consume", "--records", records,
                          NULL};
    double mb_s[BENCH_ROUNDS];
    double msgs_s[BENCH_ROUNDS];
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        struct run_result res = run_cairn("target=cairn", args);
        if (res.records != n) {
            bench_fail("consume read %" PRId64 " of %" PRId64 " records",
                       res.records, n);
        }
        mb_s[r] = res.mb_s;
        msgs_s[r] = res.msgs_s;
    }
    double med = bench_median(mb_s, BENCH_ROUNDS);
    printf("RESULT bench=kafka_consume topic_bytes=%" PRId64 " records=%"
           PRId64 " record_bytes=%d rounds=%d page_cache=warm msgs_s=%.0f "
           "mb_s=%.1f floor_mb_s=%.0f ratio=%.3f met=%s\n",
           n * BENCH_CONSUME_RECORD_BYTES, n,
           BENCH_CONSUME_RECORD_BYTES, BENCH_ROUNDS,
           bench_median(msgs_s, BENCH_ROUNDS), med, BENCH_CONSUME_FLOOR_MB_S,
           med / BENCH_CONSUME_FLOOR_MB_S,
           med >= BENCH_CONSUME_FLOOR_MB_S ? "yes" : "no");
    fflush(stdout);
}

int main(void)
{
    bench_set_name("bench_kafka");
    long small_mb = bench_env_long("BENCH_KAFKA_MB", BENCH_PRODUCE_100_MB,
                                   BENCH_MB_MAX);
    long large_mb = bench_env_long("BENCH_KAFKA_MB", BENCH_PRODUCE_1K_MB,
                                   BENCH_MB_MAX);
    long consume_mib = bench_env_long("BENCH_KAFKA_CONSUME_MIB",
                                      BENCH_CONSUME_MIB_DEFAULT,
                                      BENCH_MB_MAX);
    static struct cluster c;
    double t0 = bench_clock_ms();
    bench_cluster_start(&c, 3, 3);
    char boot[BENCH_BOOTSTRAP_BYTES];
    snprintf(boot, sizeof boot, "127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d",
             c.brokers[0].port, c.brokers[1].port, c.brokers[2].port);
    printf("info bench=kafka controllers=3 brokers=3 partitions=%s rf=1 "
           "produce_mb=%ld,%ld consume_mib=%ld rounds=%d bootstrap=%s\n",
           BENCH_PARTITIONS, small_mb, large_mb, consume_mib, BENCH_ROUNDS,
           boot);
    fflush(stdout);
    bench_produce(boot, 100, small_mb, true);
    bench_produce(boot, 1024, large_mb, true);
    bench_consume(boot, consume_mib);
    bench_cluster_stop(&c);
    /* The mock never syncs: the same produce run with Kafka's own flush
     * policy (page cache, no fdatasync before the ack) shows what the
     * durability default costs on this disk. */
    static struct cluster k;
    k.broker_extra_config = "log.sync.before.ack=false\n";
    bench_cluster_start(&k, 3, 3);
    snprintf(boot, sizeof boot, "127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d",
             k.brokers[0].port, k.brokers[1].port, k.brokers[2].port);
    bench_produce(boot, 1024, large_mb, false);
    bench_cluster_stop(&k);
    printf("info bench=kafka total_s=%.1f\n", (bench_clock_ms() - t0) / 1e3);
    return 0;
}
