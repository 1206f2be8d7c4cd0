/* `cairn bench produce|consume|e2e`: librdkafka's throughput and latency
 * against the cluster, or, with --mock, against librdkafka's in-memory
 * mock cluster (rd_kafka_mock_cluster_new(), in this process) as a
 * baseline. Each run prints one line, for example
 *
 *   RESULT bench=produce records=1000000 record_bytes=100 msgs_s=...
 *          mb_s=... p50_ms=... p99_ms=... p999_ms=... max_ms=...
 *          seconds=... acks=1 partitions=3 target=cairn
 *
 *   produce  from the first produce() to the last delivery report; a
 *            record's latency is from its produce() to its delivery
 *            report (acks as asked).
 *   consume  reads the topic from the beginning with the simple consumer
 *            (every partition, one queue) until --records or the end
 *            each partition had when reading began, timed from the
 *            start of the fetches (connections are up by then: the
 *            watermarks were asked for) to the last record. --fill
 *            (implied by --mock) produces --records first, untimed. The
 *            mock keeps only the newest few MB of each partition.
 *   e2e      a producer and a consumer in this process; the consumer
 *            starts at the end of each partition, and a record's latency
 *            is from its produce() to its arrival, the send time
 *            travelling in the value's first 8 bytes.
 *
 * MB is 10^6 bytes of record values. The topic is created when missing
 * (--partitions, --replication-factor, --config). One thread of ours;
 * delivery reports are served by rd_kafka_poll() on it. */
#ifndef CAIRN_CLI_BENCH_H
#define CAIRN_CLI_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/client/kclient.h"
#include "cli/util/opts.h"
#include "common/assert.h"

/* --config arguments for the topic's creation. */
#define BENCH_CONFIGS_MAX 32

/* Records are at most what one produce line may be. */
#define BENCH_RECORD_BYTES_MAX (1024 * 1024)

/* e2e records carry an 8-byte send time. */
#define BENCH_E2E_RECORD_BYTES_MIN 8

/* The mock cluster's brokers, as many as the local cluster's. */
#define BENCH_MOCK_BROKERS 3

enum bench_mode {
    BENCH_PRODUCE,
    BENCH_CONSUME,
    BENCH_E2E,
};

struct bench_opts {
    enum bench_mode mode;
    const char *topic;
    int64_t records;
    int32_t record_bytes;
    const char *acks;
    int32_t batch_bytes;   /* batch.size; 0: librdkafka's default */
    int32_t batch_records; /* batch.num.messages; 0: default */
    int32_t linger_ms;     /* linger.ms; -1: default */
    int32_t fetch_bytes;   /* fetch.message.max.bytes; 0: default */
    const char *compression;
    int32_t partitions; /* when the topic is created */
    int32_t replication_factor;
    const char *config_items[BENCH_CONFIGS_MAX];
    struct opts_list configs; /* "key=value" into config_items */
    int64_t rate;             /* records/s; 0: as fast as possible */
    bool fill;
    bool mock;
};

void bench_usage(FILE *out);

/* Parses argv[1..argc) (argv[0] is "bench"); reorders argv. Returns -1
 * to go on and run, or the exit code to stop with. */
MUST_CHECK int bench_parse(int argc, char **argv, struct bench_opts *o);

/* Runs the benchmark and prints its RESULT line; returns the exit code (1
 * when a record failed or went missing, or the cluster was unusable). */
MUST_CHECK int bench_run(const struct kclient_opts *k,
                         const struct bench_opts *o);

#endif
