/* `cairn consume TOPIC`: prints record values (or key, separator, value)
 * one a line. Without --group it reads the partitions directly with
 * librdkafka's simple consumer (rd_kafka_consume_start_queue(): no group,
 * no commits); with --group it subscribes as a member of that consumer
 * group (rd_kafka_subscribe()), and commits the offsets of what it
 * printed after each batch and before leaving
 * (cli/cmd/consume/consume_group.h).
 * One thread; records arrive through one librdkafka queue. */
#ifndef CAIRN_CLI_CONSUME_H
#define CAIRN_CLI_CONSUME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/client/kclient.h"
#include "common/assert.h"
#include "common/limits.h"

/* A topic cannot have more (the controller's bound); the per-partition
 * state is sized from the cluster's answer, so it is checked first. */
#define CONSUME_PARTITIONS_MAX META_PARTITIONS_MAX

/* Records taken from librdkafka's queue at once. */
#define CONSUME_BATCH_MAX 1024

/* How long one wait for records lasts; SIGINT is noticed between. */
#define CONSUME_POLL_MS 100

/* No --offset. */
#define CONSUME_OFFSET_NONE INT64_MIN

struct consume_opts {
    const char *topic;
    bool from_beginning;
    int32_t partition; /* -1: every partition */
    int64_t offset;    /* >= 0: that offset; < 0: that many records
                              before the end; CONSUME_OFFSET_NONE */
    int64_t count;     /* stop after this many; -1: no limit */
    bool exit_at_end;  /* stop when every partition is read to its end */
    bool print_key;
    const char *separator; /* between key and value; "\t" */
    const char *group;     /* subscribe as this group's member; NULL */
    const char *assignment_strategy; /* range, roundrobin,
                                        cooperative-sticky; NULL: range */
};

void consume_usage(FILE *out);

/* Parses argv[1..argc) (argv[0] is "consume"); reorders argv. Returns -1
 * to go on and run, or the exit code to stop with. */
MUST_CHECK int consume_parse(int argc, char **argv, struct consume_opts *o);

/* Consumes until --count, the end (--exit-at-end) or SIGINT/SIGTERM;
 * returns the exit code. */
MUST_CHECK int consume_run(const struct kclient_opts *k,
                           const struct consume_opts *o);

#endif
