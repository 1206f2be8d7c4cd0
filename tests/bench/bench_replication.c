/* Replication benchmark (`make bench`): `cairn bench` (cli/cmd/bench.h), run
 * as a child process, against one real local cluster (3 controllers and 3
 * brokers of this build, started by tests/lib/cluster.h on free ports in
 * a temporary directory), the brokers with min.insync.replicas=2. Topics
 * have 3 partitions, so each broker leads one and follows two; every run
 * gets a fresh topic, deleted once measured (a growing page cache makes
 * every later write dearer on a virtual machine).
 *
 *   replication_produce  100 B records, 200 MB of values a run, and 1 KiB
 *                        records, 1000 MB a run (BENCH_REPLICATION_MB sets
 *                        both): replication factor 3 with acks=all, then
 *                        the baseline, replication factor 1 with acks=1,
 *                        alternating, BENCH_ROUNDS of each; medians and
 *                        their ratio rf3/rf1. Floors (the issue): >=
 *                        200,000 records/s at 100 B, >= 60 MB/s at 1 KiB.
 *   replication_e2e      produce() to arrival at a consumer at a steady
 *                        10,000 records/s of 100 B (linger.ms 1),
 *                        replication factor 3 with acks=all and, as the
 *                        baseline, replication factor 1 with acks=1,
 *                        alternating, BENCH_REPLICATION_E2E_S seconds a
 *                        round (default 15), BENCH_ROUNDS rounds of each;
 *                        the medians of p50, p99 and p99.9. Floors (the
 *                        issues): p99 <= 10 ms at rf 3, and <= 1.5 x the
 *                        p99 at rf 1 (p99_over_rf1). A consumer sees a
 *                        record only once the high watermark passes it:
 *                        after the leader's fdatasync at rf 1, and also
 *                        a follower's fetch and fdatasync at rf 3. Run
 *                        first, before the produce runs leave gigabytes
 *                        of dirty pages for the disk to write back.
 *
 *   replication_saturate one partition, replication factor 3, acks=all,
 *                        librdkafka's defaults (many requests in flight),
 *                        without and with idempotence, 1 KiB records
 *                        (BENCH_SATURATE_1K_MB, default 2000 MB) and
 *                        100 B (BENCH_SATURATE_100_MB, default 300 MB);
 *                        the baseline is one partition of replication
 *                        factor 1 with acks=1 in the same run. Prints the
 *                        partition epoch before and after (a saturated
 *                        cluster must not change its ISR), and the six
 *                        processes' CPU time (user + system, from
 *                        /proc/PID/stat) per acknowledged record. Floors
 *                        (the replication-under-load issue): ratio >= 0.30
 *                        at 1 KiB and >= 0.6 at 100 B, no ISR change,
 *                        <= 3 us of CPU per 1 KiB record, <= 1.2 us per
 *                        100 B record. The same run measures what the
 *                        machine itself costs: the CPU time of writing
 *                        each record's bytes three times into the page
 *                        cache (three replicas on one machine) with
 *                        1 MiB pwrite(2) calls into new pages, as a
 *                        growing log takes them, measured right after the
 *                        rf 3 run (up to 512 MB written three times;
 *                        copy_floor_us_per_record),
 *                        the part of the server's CPU no design avoids,
 *                        and the server's CPU as a multiple of it
 *                        (cpu_over_copy_floor).
 *
 * Each child's RESULT line is echoed as a `run` line. MB is 10^6 bytes.
 * A failed child or check prints why, stops every process
 * (cluster_destroy) and aborts; a floor not met is reported (met=no), not
 * fatal. CAIRN_KEEP_TEST_DIR=1 keeps the node logs. One thread; each
 * child's output is read with poll() against a budget. */
#include "tests/lib/bench_util.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/assert.h"
#include "common/meta/meta.h"

#define BENCH_ROUNDS 3               /* of each configuration; median */
#define BENCH_PARTITIONS 3
#define BENCH_STR_(x) #x
#define BENCH_STR(x) BENCH_STR_(x) /* a number as an argument */
/* Runs of a few seconds: shorter ones measure mostly the ramp-up. At the
 * floors the rf 3 runs take about 80 s in all; the largest run (1 KiB
 * saturation, rf 3) leaves about 6 GB until its topic is deleted. */
#define BENCH_PRODUCE_100_MB 200     /* 2 million records */
#define BENCH_PRODUCE_1K_MB 1000     /* about 977,000 records */
#define BENCH_MB_MAX 65536           /* bound on the environment override */
#define BENCH_E2E_RATE 10000         /* records/s */
#define BENCH_E2E_SECONDS 15         /* a round */
#define BENCH_E2E_SECONDS_MAX 600
#define BENCH_E2E_RECORD_BYTES "100"
/* librdkafka 2.0's default linger.ms is 5: up to 5 ms of client-side
 * batching in every record's latency, which measures the client, not the
 * replication. 1 ms still batches at 10,000 records/s. */
#define BENCH_E2E_LINGER_MS "1"
#define BENCH_FLOOR_100_MSGS_S 200000.0
#define BENCH_FLOOR_1K_MB_S 60.0
#define BENCH_FLOOR_E2E_P99_MS 10.0
#define BENCH_FLOOR_E2E_P99_OVER_RF1 1.5
#define BENCH_SATURATE_1K_MB 2000
#define BENCH_SATURATE_100_MB 300
#define BENCH_COPY_FLOOR_MB 512      /* at most, written three times */
#define BENCH_FLOOR_SATURATE_1K_RATIO 0.30
#define BENCH_FLOOR_SATURATE_100_RATIO 0.6
#define BENCH_FLOOR_SATURATE_1K_CPU_US 3.0
#define BENCH_FLOOR_SATURATE_100_CPU_US 1.2
#define BENCH_BROKER_CONFIG \
    "min.insync.replicas=2\nreplica.lag.time.max.ms=10000\n"
#define BENCH_BOOTSTRAP_BYTES 256

_Static_assert(BENCH_ROUNDS % 2 == 1, "a median of an odd count");
_Static_assert(BENCH_E2E_SECONDS <= BENCH_E2E_SECONDS_MAX,
               "the default within the override's bound");

/* What one `cairn bench` run printed. */
struct run_result {
    int64_t records;
    double msgs_s;
    double mb_s;
    double p50_ms;
    double p99_ms;
    double p999_ms;
};

/* ------------------------------------------------------------------------
 * Running `cairn bench` */

/* Runs `cairn --bootstrap-servers boot bench ARGS...` (args
 * NULL-terminated), echoes its RESULT line as a run line labelled label,
 * and returns its numbers. Every field must be there. */
static struct run_result run_bench(const char *label, const char *boot,
                                   const char *const *args)
{
    const char *argv[BENCH_ARGS_MAX];
    size_t n = 0;
    argv[n++] = "--bootstrap-servers";
    argv[n++] = boot;
    argv[n++] = "bench";
    for (size_t i = 0; args[i] != NULL; i++) {
        ASSERT(n + 1 < BENCH_ARGS_MAX);
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    const char *line = bench_run_cairn(label, argv);
    return (struct run_result){
        .records = (int64_t)bench_field(line, "records", true),
        .msgs_s = bench_field(line, "msgs_s", true),
        .mb_s = bench_field(line, "mb_s", true),
        .p50_ms = bench_field(line, "p50_ms", true),
        .p99_ms = bench_field(line, "p99_ms", true),
        .p999_ms = bench_field(line, "p999_ms", true),
    };
}

/* Creates topic name with rf replicas of BENCH_PARTITIONS partitions and
 * waits until its replicas have applied it (bench_create_topic()). */
static void create_topic(const char *name, int32_t rf)
{
    bench_create_topic(name, BENCH_PARTITIONS, rf, NULL);
}

/* ------------------------------------------------------------------------
 * The measurements */

/* One produce run into a fresh topic: rf 3 with acks=all, or rf 1 with
 * acks=1. */
static struct run_result produce_round(const char *boot, int record_bytes,
                                       const char *records, bool rf3,
                                       int round)
{
    char topic[64];
    char size[16];
    snprintf(topic, sizeof topic, "bench-repl-%d-rf%d-%d", record_bytes,
             rf3 ? 3 : 1, round);
    create_topic(topic, rf3 ? 3 : 1);
    snprintf(size, sizeof size, "%d", record_bytes);
    const char *args[] = {"produce", "--topic", topic, "--records", records,
                          "--record-size", size,
                          "--acks", rf3 ? "all" : "1",
                          "--partitions", BENCH_STR(BENCH_PARTITIONS),
                          "--replication-factor", rf3 ? "3" : "1", NULL};
    struct run_result res = run_bench(rf3 ? "rf=3 acks=all" : "rf=1 acks=1",
                                      boot, args);
    if (res.records != strtoll(records, NULL, 10)) {
        bench_fail("%s: %" PRId64 " of %s records delivered", topic,
                   res.records, records);
    }
    bench_delete_topic(boot, topic);
    return res;
}

static void bench_produce(const char *boot, int record_bytes, long mb)
{
    char records[32];
    snprintf(records, sizeof records, "%ld", mb * 1000000 / record_bytes);
    double msgs_s[2][BENCH_ROUNDS];
    double mb_s[2][BENCH_ROUNDS];
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        for (int t = 0; t < 2; t++) { /* rf 3, then rf 1 */
            struct run_result res =
                produce_round(boot, record_bytes, records, t == 0, r);
            msgs_s[t][r] = res.msgs_s;
            mb_s[t][r] = res.mb_s;
        }
    }
    double rf3_msgs = bench_median(msgs_s[0], BENCH_ROUNDS);
    double rf3_mb = bench_median(mb_s[0], BENCH_ROUNDS);
    double rf1_msgs = bench_median(msgs_s[1], BENCH_ROUNDS);
    double rf1_mb = bench_median(mb_s[1], BENCH_ROUNDS);
    printf("RESULT bench=replication_produce record_bytes=%d records=%s "
           "rounds=%d partitions=%d rf3_msgs_s=%.0f rf3_mb_s=%.1f "
           "rf1_msgs_s=%.0f rf1_mb_s=%.1f ratio=%.3f", record_bytes,
           records, BENCH_ROUNDS, BENCH_PARTITIONS, rf3_msgs, rf3_mb,
           rf1_msgs, rf1_mb, rf3_mb / rf1_mb);
    if (record_bytes == 1024) {
        printf(" floor_mb_s=%.0f met=%s\n", BENCH_FLOOR_1K_MB_S,
               rf3_mb >= BENCH_FLOOR_1K_MB_S ? "yes" : "no");
    } else {
        printf(" floor_msgs_s=%.0f met=%s\n", BENCH_FLOOR_100_MSGS_S,
               rf3_msgs >= BENCH_FLOOR_100_MSGS_S ? "yes" : "no");
    }
    fflush(stdout);
}

/* One e2e run into a fresh topic at BENCH_E2E_RATE: rf 3 with acks=all,
 * or rf 1 with acks=1. */
static struct run_result e2e_round(const char *boot, const char *records,
                                   bool rf3, int round)
{
    char topic[64];
    char rate[16];
    snprintf(topic, sizeof topic, "bench-repl-e2e-rf%d-%d", rf3 ? 3 : 1,
             round);
    snprintf(rate, sizeof rate, "%d", BENCH_E2E_RATE);
    create_topic(topic, rf3 ? 3 : 1);
    const char *args[] = {"e2e", "--topic", topic, "--records", records,
                          "--rate", rate, "--record-size",
                          BENCH_E2E_RECORD_BYTES, "--linger-ms",
                          BENCH_E2E_LINGER_MS, "--acks", rf3 ? "all" : "1",
                          "--partitions", BENCH_STR(BENCH_PARTITIONS),
                          "--replication-factor", rf3 ? "3" : "1", NULL};
    return run_bench(rf3 ? "rf=3 acks=all" : "rf=1 acks=1", boot, args);
}

static void bench_e2e(const char *boot, long seconds)
{
    char records[32];
    snprintf(records, sizeof records, "%ld", seconds * BENCH_E2E_RATE);
    double msgs_s[BENCH_ROUNDS];
    double p[2][3][BENCH_ROUNDS]; /* rf 3, rf 1; p50, p99, p99.9 */
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        for (int t = 0; t < 2; t++) { /* rf 3, then rf 1 */
            struct run_result res = e2e_round(boot, records, t == 0, r);
            if (t == 0) {
                msgs_s[r] = res.msgs_s;
            }
            p[t][0][r] = res.p50_ms;
            p[t][1][r] = res.p99_ms;
            p[t][2][r] = res.p999_ms;
        }
    }
    double p99_med = bench_median(p[0][1], BENCH_ROUNDS);
    double rf1_p99_med = bench_median(p[1][1], BENCH_ROUNDS);
    double p99_ratio = p99_med / rf1_p99_med;
    printf("RESULT bench=replication_e2e rate=%d record_bytes=%s "
           "linger_ms=%s records=%s rounds=%d partitions=%d msgs_s=%.0f "
           "p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f rf1_p50_ms=%.3f "
           "rf1_p99_ms=%.3f rf1_p999_ms=%.3f p99_over_rf1=%.2f "
           "floor_p99_ms=%.0f floor_p99_over_rf1=%.1f met=%s\n",
           BENCH_E2E_RATE, BENCH_E2E_RECORD_BYTES, BENCH_E2E_LINGER_MS,
           records, BENCH_ROUNDS, BENCH_PARTITIONS,
           bench_median(msgs_s, BENCH_ROUNDS),
           bench_median(p[0][0], BENCH_ROUNDS), p99_med,
           bench_median(p[0][2], BENCH_ROUNDS),
           bench_median(p[1][0], BENCH_ROUNDS), rf1_p99_med,
           bench_median(p[1][2], BENCH_ROUNDS), p99_ratio,
           BENCH_FLOOR_E2E_P99_MS, BENCH_FLOOR_E2E_P99_OVER_RF1,
           p99_med <= BENCH_FLOOR_E2E_P99_MS &&
                   p99_ratio <= BENCH_FLOOR_E2E_P99_OVER_RF1
               ? "yes"
               : "no");
    fflush(stdout);
}

/* ------------------------------------------------------------------------
 * One saturated partition */

/* User + system CPU seconds of every node of c so far. */
static double cluster_cpu_s(const struct cluster *c)
{
    double ticks = 0;
    const struct cluster_node *nodes[2] = {c->controllers, c->brokers};
    int counts[2] = {c->n_controllers, c->n_brokers};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < counts[k]; i++) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/stat",
                     (int)nodes[k][i].pid);
            FILE *f = fopen(path, "r");
            if (f == NULL) {
                bench_fail("%s: cannot read the node's CPU time", path);
            }
            unsigned long utime = 0;
            unsigned long stime = 0;
            /* pid (comm) state, then 10 fields before utime and stime;
             * comm is "cairn-broker" or "cairn-controller" (no spaces). */
            int got = fscanf(f, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u "
                             "%*u %*u %*u %lu %lu", &utime, &stime);
            fclose(f);
            if (got != 2) {
                bench_fail("%s: unexpected format", path);
            }
            ticks += (double)(utime + stime);
        }
    }
    return ticks / (double)sysconf(_SC_CLK_TCK);
}

/* The partition epoch of topic-0 in the active controller's image. */
static int32_t partition_epoch(struct cluster *c, const char *topic)
{
    struct meta_image img;
    meta_image_init(&img);
    if (!cluster_image(c, &img)) {
        bench_fail("no active controller to read %s's epoch", topic);
    }
    const struct meta_topic *t = meta_image_topic(&img, topic);
    if (t == NULL || t->n_partitions < 1) {
        bench_fail("%s is not in the metadata", topic);
    }
    int32_t epoch = t->partitions[0].partition_epoch;
    meta_image_free(&img);
    return epoch;
}

/* CPU microseconds (user + system of this process) per record_bytes of
 * writing sample_mb MB three times into a file in dir with 1 MiB
 * pwrite(2) calls, the file removed after. Every copy goes to new file
 * offsets, as a growing log does: writing into pages the page cache
 * already holds costs a fraction of taking new ones (on a virtual
 * machine a new page can cost ten times the copy itself). */
static double copy_floor_us(const char *dir, int record_bytes, long sample_mb)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/copy-floor", dir);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {
        bench_fail("%s: cannot create", path);
    }
    size_t chunk = 1u << 20;
    char *buf = malloc(chunk);
    if (buf == NULL) {
        bench_fail("out of memory");
    }
    memset(buf, 'x', chunk);
    struct rusage r0;
    struct rusage r1;
    getrusage(RUSAGE_SELF, &r0);
    long chunks = sample_mb * 1000000 / (long)chunk;
    for (int copy = 0; copy < 3; copy++) {
        for (long i = 0; i < chunks; i++) {
            off_t at = ((off_t)copy * (off_t)chunks + (off_t)i) *
                       (off_t)chunk;
            if (pwrite(fd, buf, chunk, at) !=
                (ssize_t)chunk) {
                bench_fail("%s: write failed", path);
            }
        }
    }
    getrusage(RUSAGE_SELF, &r1);
    close(fd);
    unlink(path);
    free(buf);
    double us = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec +
                         r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e6 +
                (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec +
                         r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
    double records = (double)chunks * (double)chunk / record_bytes;
    return us / records;
}

struct saturate_run {
    struct run_result res;
    int32_t epoch_before;
    int32_t epoch_after;
    double cpu_s;
    double copy_us; /* the copy floor, measured before the topic went */
};

/* One produce of records records of record_bytes into a fresh topic of
 * one partition: rf 3 acks=all (idempotent or not) or rf 1 acks=1. */
static struct saturate_run saturate_round(struct cluster *c, const char *boot,
                                          int record_bytes, long mb,
                                          const char *records, bool rf3,
                                          bool idempotent)
{
    static int n_rounds; /* every round gets a fresh topic */
    char topic[64];
    char size[16];
    snprintf(topic, sizeof topic, "bench-sat-%d-rf%d%s-%d", record_bytes,
             rf3 ? 3 : 1, idempotent ? "-idem" : "", n_rounds++);
    bench_create_topic(topic, 1, rf3 ? 3 : 1, NULL);
    snprintf(size, sizeof size, "%d", record_bytes);
    const char *args[] = {"produce", "--topic", topic, "--records", records,
                          "--record-size", size,
                          "--acks", rf3 ? "all" : "1",
                          "--partitions", "1",
                          "--replication-factor", rf3 ? "3" : "1",
                          "--config", idempotent ? "enable.idempotence=true"
                                                 : "enable.idempotence=false",
                          NULL};
    struct saturate_run run;
    run.epoch_before = partition_epoch(c, topic);
    double cpu0 = cluster_cpu_s(c);
    run.res = run_bench(rf3 ? (idempotent ? "rf=3 acks=all idempotent"
                                          : "rf=3 acks=all")
                            : "rf=1 acks=1",
                        boot, args);
    run.cpu_s = cluster_cpu_s(c) - cpu0;
    run.epoch_after = partition_epoch(c, topic);
    if (run.res.records != strtoll(records, NULL, 10)) {
        bench_fail("%s: %" PRId64 " of %s records delivered", topic,
                   run.res.records, records);
    }
    /* While the run's pages are still cached, so that the floor takes
     * new pages as the run did. */
    long floor_mb = mb < BENCH_COPY_FLOOR_MB ? mb : BENCH_COPY_FLOOR_MB;
    run.copy_us = rf3 ? copy_floor_us(c->dir, record_bytes, floor_mb) : 0;
    bench_delete_topic(boot, topic);
    return run;
}

static void bench_saturate(struct cluster *c, const char *boot,
                           int record_bytes, long mb, bool idempotent)
{
    char records[32];
    snprintf(records, sizeof records, "%ld", mb * 1000000 / record_bytes);
    struct saturate_run rf3 = saturate_round(c, boot, record_bytes, mb,
                                             records, true, idempotent);
    struct saturate_run rf1 = saturate_round(c, boot, record_bytes, mb,
                                             records, false, false);
    double ratio = rf3.res.mb_s / rf1.res.mb_s;
    double cpu_us = rf3.cpu_s * 1e6 / (double)rf3.res.records;
    bool k1 = record_bytes >= 1024;
    double floor_ratio = k1 ? BENCH_FLOOR_SATURATE_1K_RATIO
                            : BENCH_FLOOR_SATURATE_100_RATIO;
    double floor_cpu = k1 ? BENCH_FLOOR_SATURATE_1K_CPU_US
                          : BENCH_FLOOR_SATURATE_100_CPU_US;
    bool met = ratio >= floor_ratio && cpu_us <= floor_cpu &&
               rf3.epoch_after == rf3.epoch_before;
    double copy_us = rf3.copy_us;
    printf("RESULT bench=replication_saturate record_bytes=%d records=%s "
           "partitions=1 idempotent=%s rf3_msgs_s=%.0f rf3_mb_s=%.1f "
           "rf1_msgs_s=%.0f rf1_mb_s=%.1f ratio=%.3f epoch_before=%d "
           "epoch_after=%d cpu_us_per_record=%.3f "
           "copy_floor_us_per_record=%.3f cpu_over_copy_floor=%.2f "
           "floor_ratio=%.2f floor_cpu_us=%.1f met=%s\n",
           record_bytes, records, idempotent ? "true" : "false",
           rf3.res.msgs_s, rf3.res.mb_s, rf1.res.msgs_s, rf1.res.mb_s,
           ratio, rf3.epoch_before, rf3.epoch_after, cpu_us, copy_us,
           cpu_us / copy_us, floor_ratio, floor_cpu, met ? "yes" : "no");
    fflush(stdout);
}

int main(void)
{
    bench_set_name("bench_replication");
    long small_mb = bench_env_long("BENCH_REPLICATION_MB",
                                   BENCH_PRODUCE_100_MB, BENCH_MB_MAX);
    long large_mb = bench_env_long("BENCH_REPLICATION_MB",
                                   BENCH_PRODUCE_1K_MB, BENCH_MB_MAX);
    long e2e_s = bench_env_long("BENCH_REPLICATION_E2E_S",
                                BENCH_E2E_SECONDS, BENCH_E2E_SECONDS_MAX);
    static struct cluster c;
    c.broker_extra_config = BENCH_BROKER_CONFIG;
    double t0 = bench_clock_ms();
    bench_cluster_start(&c, 3, 3);
    char boot[BENCH_BOOTSTRAP_BYTES];
    cluster_bootstrap(&c, boot, sizeof boot);
    printf("info bench=replication controllers=3 brokers=3 partitions=%d "
           "min_insync_replicas=2 produce_mb=%ld,%ld e2e_s=%ld rounds=%d "
           "bootstrap=%s\n", BENCH_PARTITIONS, small_mb, large_mb, e2e_s,
           BENCH_ROUNDS, boot);
    fflush(stdout);
    bench_e2e(boot, e2e_s); /* first: no writeback of GBs produced */
    bench_produce(boot, 100, small_mb);
    bench_produce(boot, 1024, large_mb);
    long sat_1k_mb = bench_env_long("BENCH_SATURATE_1K_MB",
                                    BENCH_SATURATE_1K_MB, BENCH_MB_MAX);
    long sat_100_mb = bench_env_long("BENCH_SATURATE_100_MB",
                                     BENCH_SATURATE_100_MB, BENCH_MB_MAX);
    for (int idem = 0; idem < 2; idem++) {
        bench_saturate(&c, boot, 1024, sat_1k_mb, idem == 1);
        bench_saturate(&c, boot, 100, sat_100_mb, idem == 1);
    }
    bench_cluster_stop(&c);
    printf("info bench=replication total_s=%.1f\n",
           (bench_clock_ms() - t0) / 1e3);
    return 0;
}
