/* The consumer-group side of `cairn consume TOPIC --group G`
 * (cli/cmd/consume/consume.c): the member's configuration (group.id, no
 * auto-commit, the partition assignment strategy), its rebalance
 * callback, and the
 * offsets it commits. A record counts as processed once written to
 * stdout: consume.c reports each one it prints (consume_group_processed())
 * and calls consume_group_commit() after each batch and before it
 * leaves, which flushes stdout, then synchronously commits the offset
 * after the last processed record of each partition that moved.
 * Partitions being revoked are committed the same way before they are
 * given up, so their next owner starts after what this member printed
 * (at least once: after a failed commit it prints them again).
 * One thread: the rebalance callback runs inside librdkafka's poll calls
 * on ours (rd_kafka_consume_batch_queue(), rd_kafka_consumer_close()).
 * The handle is borrowed; the partition arrays belong to the struct. */
#ifndef CAIRN_CLI_CONSUME_GROUP_H
#define CAIRN_CLI_CONSUME_GROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/cmd/consume/consume.h"
#include "cli/client/kclient.h"
#include "common/assert.h"
#include "common/limits.h"

/* Kafka's RangeAssignor: members sorted by id take contiguous ranges,
 * whatever order they joined in. */
#define CONSUME_GROUP_STRATEGY_DEFAULT "range"

struct consume_group {
    rd_kafka_t *rk;    /* the member; set once created */
    const char *topic; /* borrowed from the options */
    /* By partition id, sized for the largest topic (it may grow). */
    int64_t *next;      /* offset after the last record processed */
    int64_t *committed; /* the group's offset as we last set it */
    bool *assigned;
    bool *at_end; /* read to its end since last assigned */
    int32_t n_assigned;
    int32_t n_at_end; /* assigned and read to its end */
    char what[META_TOPIC_NAME_BYTES_MAX + 16]; /* "consume TOPIC" */
};

/* True when name is a strategy --assignment-strategy takes (range,
 * roundrobin, cooperative-sticky). */
bool consume_group_strategy_valid(const char *name);

/* Allocates the partition arrays. RC_OK or RC_NOMEM (e says so). */
MUST_CHECK int consume_group_init(struct consume_group *cg, const char *topic,
                                  struct kclient_error *e);

/* Sets group.id, auto.offset.reset (earliest with --from-beginning, else
 * latest: where a partition the group has no offset for starts),
 * enable.auto.commit=false, partition.assignment.strategy and the
 * rebalance callback (opaque: cg, which must outlive the handle).
 * RC_OK or RC_INVALID (e says why). */
MUST_CHECK int consume_group_configure(struct consume_group *cg,
                                       rd_kafka_conf_t *conf,
                                       const struct consume_opts *o,
                                       struct kclient_error *e);

/* Whether partition p is assigned to this member now. Records of other
 * partitions (fetched before a revocation) are dropped unprinted. */
bool consume_group_owns(const struct consume_group *cg, int32_t p);

/* Notes that record m (of an owned partition) was printed. */
void consume_group_processed(struct consume_group *cg,
                             const rd_kafka_message_t *m);

/* Marks owned partition p read to its end or not. Returns true when
 * every partition assigned to this member is read to its end. */
bool consume_group_set_at_end(struct consume_group *cg, int32_t p,
                              bool at_end);

/* Flushes stdout, then commits, and waits for, the offset after the last
 * processed record of every partition that moved since its last commit.
 * Failed commits are printed on stderr and tried again by the next call;
 * when stdout failed, nothing is committed (cli_finish_output() reports
 * that failure). RC_OK; RC_IO when an offset stayed uncommitted. */
MUST_CHECK int consume_group_commit(struct consume_group *cg);

void consume_group_free(struct consume_group *cg);

#endif
