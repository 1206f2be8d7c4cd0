/* What checking every fetched batch's CRC-32C costs a consumer (`make
 * bench`): `cairn bench consume` (librdkafka, from the beginning, warm
 * page cache) of a topic of BENCH_FETCH_CRC_MB MB (default 512) of 1 KiB
 * records in 3 partitions, against a real cluster (3 controllers, 1
 * broker, tests/lib/cluster.h) started once with log.fetch.verify.crc=true
 * (the default: each span is read back and checked before it is sent,
 * broker/log/log_verify.h) and once with false, the broker's switch for
 * exactly this comparison. Each cluster is filled once and read
 * BENCH_READS times; clusters alternate which goes first over
 * BENCH_ROUNDS rounds; the medians of all reads are compared: ratio = on
 * / off. The floor (on >= 0.8 x off) not met is reported (met=no), not
 * fatal. MB is 10^6 bytes. One thread. */
#include "tests/lib/bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_ROUNDS 3
#define BENCH_READS 3
#define BENCH_RECORD_BYTES 1024
#define BENCH_MB_DEFAULT 512
#define BENCH_MB_MAX 65536
#define BENCH_FLOOR 0.8
#define BENCH_BOOTSTRAP_BYTES 64
#define BENCH_TOPIC "fetch-crc"

static void fill(const char *boot, const char *records)
{
    const char *args[] = {"--bootstrap-servers", boot, "bench", "produce",
                          "--topic", BENCH_TOPIC, "--records", records,
                          "--record-size", "1024", "--acks", "1",
                          "--linger-ms", "100", "--batch-records", "100000",
                          "--partitions", "3", "--replication-factor", "1",
                          "--config", "segment.bytes=1073741824", NULL};
    (void)bench_run_cairn("fill", args);
}

/* One cluster, with or without the check: filled, then read BENCH_READS
 * times into mb_s[0..BENCH_READS). */
static void round_on(bool verify, int round, const char *records,
                     double *mb_s)
{
    static struct cluster c;
    memset(&c, 0, sizeof c);
    c.broker_extra_config = verify ? "log.sync.before.ack=false\n"
                                     "log.fetch.verify.crc=true\n"
                                   : "log.sync.before.ack=false\n"
                                     "log.fetch.verify.crc=false\n";
    bench_cluster_start(&c, 3, 1);
    char boot[BENCH_BOOTSTRAP_BYTES];
    snprintf(boot, sizeof boot, "127.0.0.1:%d", c.brokers[0].port);
    fill(boot, records);
    const char *args[] = {"--bootstrap-servers", boot, "bench", "consume",
                          "--topic", BENCH_TOPIC, "--records", records,
                          NULL};
    for (int i = 0; i < BENCH_READS; i++) {
        char label[64];
        snprintf(label, sizeof label, "crc=%s round=%d read=%d",
                 verify ? "on" : "off", round, i);
        const char *line = bench_run_cairn(label, args);
        double n = bench_field(line, "records", true);
        if (n != strtod(records, NULL)) {
            bench_fail("%s: read %.0f of %s records", label, n, records);
        }
        mb_s[i] = bench_field(line, "mb_s", true);
    }
    bench_cluster_stop(&c);
}

int main(void)
{
    bench_set_name("bench_fetch_crc");
    long mb = bench_env_long("BENCH_FETCH_CRC_MB", BENCH_MB_DEFAULT,
                             BENCH_MB_MAX);
    double t0 = bench_clock_ms();
    char records[32];
    snprintf(records, sizeof records, "%ld",
             mb * 1000000 / BENCH_RECORD_BYTES);
    static double mb_s[2][BENCH_ROUNDS * BENCH_READS]; /* [crc on] */
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        bool first = r % 2 == 0; /* drift favours neither */
        round_on(first, r, records, &mb_s[first][r * BENCH_READS]);
        round_on(!first, r, records, &mb_s[!first][r * BENCH_READS]);
    }
    double on = bench_median(mb_s[1], BENCH_ROUNDS * BENCH_READS);
    double off = bench_median(mb_s[0], BENCH_ROUNDS * BENCH_READS);
    double ratio = on / off;
    printf("RESULT bench=fetch_crc mb=%ld record_bytes=%d reads=%d "
           "on_mb_s=%.1f off_mb_s=%.1f ratio=%.3f floor=%.1f met=%s\n",
           mb, BENCH_RECORD_BYTES, BENCH_ROUNDS * BENCH_READS, on, off,
           ratio, BENCH_FLOOR, ratio >= BENCH_FLOOR ? "yes" : "no");
    printf("info bench=fetch_crc total_s=%.1f\n",
           (bench_clock_ms() - t0) / 1e3);
    return 0;
}
