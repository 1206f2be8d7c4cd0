/* `cairn configs get|set`: a topic's or a broker's configs, read with
 * DescribeConfigs and changed with IncrementalAlterConfigs (which
 * librdkafka 2.0 lacks, so both go through the plain Kafka client,
 * common/kafka/kafka_client.h, to the broker that must answer: any for a
 * topic or the cluster-wide default, broker N itself for broker N, found
 * with librdkafka's metadata). One thread. */
#ifndef CAIRN_CLI_CONFIGS_H
#define CAIRN_CLI_CONFIGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/client/kclient.h"
#include "common/assert.h"

/* Keys one `configs set` may change. */
#define CONFIGS_OPS_MAX 64

struct configs_opts {
    bool set;             /* set, else get */
    int8_t resource_type; /* 2 topic, 4 broker */
    const char *name;     /* topic, broker id, or "" (broker default) */
    bool all;             /* get --all: every config, not only dynamic */
    const char *ops[CONFIGS_OPS_MAX]; /* set: "key=value" */
    size_t n_ops;
    const char *deletes[CONFIGS_OPS_MAX]; /* set: --delete key */
    size_t n_deletes;
};

/* Lines of the usage text for these commands. */
void configs_usage(FILE *out);

/* Parses argv[1..argc) (argv[0] is "configs"). Returns -1 to go on and
 * run, or the exit code to stop with (--help: 0; a usage error: 2). */
MUST_CHECK int configs_parse(int argc, char **argv, struct configs_opts *o);

/* Runs the command; returns the exit code. */
MUST_CHECK int configs_run(const struct kclient_opts *k,
                           const struct configs_opts *o);

#endif
