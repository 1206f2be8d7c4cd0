/* `cairn groups list|describe|delete`: consumer groups through Kafka's
 * Admin API on the brokers, with librdkafka. list: ListGroups to every
 * broker, merged (rd_kafka_ListConsumerGroups()); describe:
 * DescribeGroups and OffsetFetch on the group's coordinator, ListOffsets
 * on the partitions' leaders (cli/cmd/groups/groups_describe.h); delete:
 * DeleteGroups. Errors name Kafka's
 * error code. One thread. */
#ifndef CAIRN_CLI_GROUPS_H
#define CAIRN_CLI_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/client/kclient.h"
#include "common/assert.h"

enum groups_cmd {
    GROUPS_LIST,
    GROUPS_DESCRIBE,
    GROUPS_DELETE,
};

struct groups_opts {
    enum groups_cmd cmd;
    char **names; /* group ids: positional arguments, moved to the front
                       of the parsed argv (borrowed from it) */
    size_t n_names;
    bool json; /* describe --json */
};

/* Lines of the usage text for these commands. */
void groups_usage(FILE *out);

/* Parses argv[1..argc) (argv[0] is "groups"); reorders argv. Returns -1
 * to go on and run, or the exit code to stop with (--help: 0; a usage
 * error: 2, with the message and usage printed). */
MUST_CHECK int groups_parse(int argc, char **argv, struct groups_opts *o);

/* Runs the command; returns the exit code (1 when any group failed). */
MUST_CHECK int groups_run(const struct kclient_opts *k,
                          const struct groups_opts *o);

#endif
