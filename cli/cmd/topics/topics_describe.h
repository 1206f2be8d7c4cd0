/* `cairn topics describe [--json] [NAME...]` (cli/cmd/topics/topics.h):
 * partitions, leaders, replicas and ISR from a Metadata request; the
 * configs each topic sets (those not at their default) from one
 * DescribeConfigs request. Shown as the TOPICS and PARTITIONS tables of
 * `cairn status` (cli/cmd/status/view.h), or as JSON. One thread. */
#ifndef CAIRN_CLI_TOPICS_DESCRIBE_H
#define CAIRN_CLI_TOPICS_DESCRIBE_H

#include <librdkafka/rdkafka.h>

#include "cli/cmd/topics/topics.h"
#include "common/assert.h"

/* Describes o->names (every topic, sorted, when none is given); returns
 * the exit code: 1 when a named topic does not exist or a request
 * failed. rk is borrowed. */
MUST_CHECK int topics_describe_run(rd_kafka_t *rk,
                                   const struct topics_opts *o);

#endif
