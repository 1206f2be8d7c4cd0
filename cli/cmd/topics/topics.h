/* `cairn topics create|delete|list|describe|delete-records|alter` through
 * Kafka's Admin API on the brokers, with librdkafka: CreateTopics and
 * DeleteTopics (which the brokers forward to the active controller),
 * Metadata for listings, DescribeConfigs for the topics' own configs
 * (cli/cmd/topics/topics_describe.c), DeleteRecords to the partition's leader.
 * Errors name Kafka's error code. One thread. */
#ifndef CAIRN_CLI_TOPICS_H
#define CAIRN_CLI_TOPICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/client/kclient.h"
#include "common/meta/meta.h"

/* --config arguments of one create: a topic cannot hold more keys. */
#define TOPICS_CONFIGS_MAX META_TOPIC_CONFIGS_MAX

enum topics_cmd {
    TOPICS_CREATE,
    TOPICS_DELETE,
    TOPICS_LIST,
    TOPICS_DESCRIBE,
    TOPICS_DELETE_RECORDS,
    TOPICS_ALTER,
};

struct topics_opts {
    enum topics_cmd cmd;
    char **names; /* positional arguments, moved to the front of the
                           parsed argv (borrowed from it) */
    size_t n_names;
    int32_t partitions; /* -1: the cluster's num.partitions; alter: the
                           new count (-1: not given) */
    int32_t replication_factor; /* -1: default.replication.factor */
    const char *configs[TOPICS_CONFIGS_MAX]; /* "key=value", borrowed */
    size_t n_configs;
    bool json;
    int32_t partition; /* delete-records --partition; -1: not given */
    int64_t before;    /* delete-records --before; -1: the HW;
                           INT64_MIN: not given */
};

/* Lines of the usage text for these commands. */
void topics_usage(FILE *out);

/* Parses argv[1..argc) (argv[0] is "topics"); reorders argv. Returns -1
 * to go on and run, or the exit code to stop with (--help: 0; a usage
 * error: 2, with the message and usage printed). */
MUST_CHECK int topics_parse(int argc, char **argv, struct topics_opts *o);

/* Runs the command; returns the exit code (1 when any topic failed). */
MUST_CHECK int topics_run(const struct kclient_opts *k,
                          const struct topics_opts *o);

#endif
