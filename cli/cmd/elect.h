/* `cairn elect`: leader elections on request, as Kafka's
 * kafka-leader-election.sh runs them: one ElectLeaders request (Kafka API
 * 43) to a broker, which forwards it to the active controller; each
 * partition's outcome is printed.
 *
 * Why the CLI speaks ElectLeaders itself (common/kafka/kafka_client.c,
 * v1: the newest with the classic request header that client writes)
 * rather than through librdkafka: librdkafka 2.0.2, Debian's, has no
 * ElectLeaders admin call (rd_kafka_ElectLeaders arrived in 2.4.0). And
 * rather than calling the controllers' RPC: it takes the brokers'
 * bootstrap list like the other Kafka commands and goes through the same
 * API the Kafka tools and admin clients use. One thread. */
#ifndef CAIRN_CLI_ELECT_H
#define CAIRN_CLI_ELECT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/client/kclient.h"
#include "common/assert.h"

/* ElectLeaders version sent (v1 adds ElectionType). */
#define ELECT_VERSION 1

/* How long the broker, and the controller behind it, may take. */
#define ELECT_TIMEOUT_MS 30000u

struct elect_opts {
    int8_t type;       /* 0 preferred, 1 unclean */
    const char *topic; /* NULL: every partition of every topic */
    int32_t partition; /* -1: every partition of topic */
};

void elect_usage(FILE *out);

/* Parses argv[1..argc) (argv[0] is "elect"). -1 to go on, else the exit
 * code (0 after --help, 2 after a usage error). */
MUST_CHECK int elect_parse(int argc, char **argv, struct elect_opts *o);

/* Runs the election; 0 when every partition was elected or needed no
 * election, 1 otherwise. */
MUST_CHECK int elect_run(const struct kclient_opts *k,
                         const struct elect_opts *o);

#endif
