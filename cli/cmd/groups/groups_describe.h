/* `cairn groups describe GROUP [--json]` (cli/cmd/groups/groups.h): the group's
 * state, protocol and members from DescribeGroups
 * (rd_kafka_DescribeConsumerGroups(), which also decodes each member's
 * consumer-protocol assignment), its committed offsets from an
 * OffsetFetch of all its partitions sent to its coordinator
 * (cli/client/group_offsets.h), and the high watermark of each partition
 * it has an offset for or is assigned, from ListOffsets
 * (rd_kafka_query_watermark_offsets()); lag = HW - committed. Shown as
 * text tables or JSON. One thread; rk is borrowed. */
#ifndef CAIRN_CLI_GROUPS_DESCRIBE_H
#define CAIRN_CLI_GROUPS_DESCRIBE_H

#include <librdkafka/rdkafka.h>
#include <stdbool.h>

#include "common/assert.h"

/* Describes group; returns the exit code: 1 when the group does not
 * exist (Kafka answers "Dead" with no members and no offsets: printed as
 * GROUP_ID_NOT_FOUND), a request failed, or a partition's offsets could
 * not be read (the rest is still shown). */
MUST_CHECK int groups_describe_run(rd_kafka_t *rk, const char *group,
                                   bool json);

#endif
