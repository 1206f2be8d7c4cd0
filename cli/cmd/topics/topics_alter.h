/* `cairn topics alter NAME --partitions N`: grows a topic to N partitions
 * through librdkafka's CreatePartitions admin call (the brokers forward
 * it to the active controller), then waits until the brokers serve the
 * new count. Warns on stderr that keyed records now hash over N
 * partitions. One thread. */
#ifndef CAIRN_CLI_TOPICS_ALTER_H
#define CAIRN_CLI_TOPICS_ALTER_H

#include <librdkafka/rdkafka.h>

#include "cli/cmd/topics/topics.h"

/* Runs the alter; returns the exit code. */
MUST_CHECK int topics_alter_run(rd_kafka_t *rk, const struct topics_opts *o);

#endif
