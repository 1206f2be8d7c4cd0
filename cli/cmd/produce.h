/* `cairn produce TOPIC`: each line of stdin becomes one record's value,
 * sent with librdkafka. Keyed records go to Kafka's murmur2 partition of
 * the key, as a Java producer would put them (librdkafka's
 * "murmur2_random" partitioner; common/murmur2.h has the same hash),
 * unkeyed ones to a random partition. One thread: librdkafka's delivery
 * reports are served by rd_kafka_poll() on it. */
#ifndef CAIRN_CLI_PRODUCE_H
#define CAIRN_CLI_PRODUCE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/client/kclient.h"
#include "common/assert.h"

/* The longest line taken: Kafka's max.message.bytes default, 1048588,
 * less a batch's overhead, rounded down to a whole MiB. */
#define PRODUCE_LINE_BYTES_MAX (1024u * 1024)

/* Failed deliveries shown one by one; the rest are counted. */
#define PRODUCE_ERRORS_SHOWN 5

/* message.timeout.ms unless --timeout-ms: a record not delivered by then
 * fails (librdkafka's default, 5 minutes, is long for a command). */
#define PRODUCE_TIMEOUT_MS_DEFAULT 30000

struct produce_opts {
    const char *topic;
    const char *key;           /* every record's key; NULL: none */
    const char *key_separator; /* split lines at it; NULL: values only */
    const char *acks;          /* "0", "1", "all" */
    const char *compression;   /* NULL: none */
    int32_t partition;         /* -1: the partitioner picks */
    int64_t timeout_ms;
};

void produce_usage(FILE *out);

/* Parses argv[1..argc) (argv[0] is "produce"); reorders argv. Returns -1
 * to go on and run, or the exit code to stop with. */
MUST_CHECK int produce_parse(int argc, char **argv, struct produce_opts *o);

/* Sends stdin; returns the exit code: 1 when a record was not delivered,
 * a line was too long, or the cluster could not be reached. */
MUST_CHECK int produce_run(const struct kclient_opts *k,
                           const struct produce_opts *o);

#endif
