/* Reassignment plans for `cairn reassign` and `cairn brokers decommission`:
 * a balanced target for adding or removing brokers (like Kafka's
 * kafka-reassign-partitions --generate, rack-unaware), and the plan file
 * in Kafka's JSON format ({"version":1,"partitions":[{"topic":...,
 * "partition":...,"replicas":[...]}]}), so plans from Kafka's tool work
 * here and ours there. Pure (no I/O but the FILE given); one thread. */
#ifndef CAIRN_CLI_REASSIGN_PLAN_H
#define CAIRN_CLI_REASSIGN_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/assert.h"
#include "common/meta/meta.h"

/* Partitions one plan may move (a file or a computed plan). */
#define REASSIGN_PLAN_MOVES_MAX 4096
/* Brokers a plan spreads over. */
#define REASSIGN_PLAN_BROKERS_MAX META_BROKERS_MAX

struct reassign_move {
    char topic[META_TOPIC_NAME_BYTES_MAX + 1];
    int32_t partition;
    struct meta_replica_set from; /* current replicas (computed plans) */
    struct meta_replica_set to;   /* the target */
};

struct reassign_plan {
    struct reassign_move *moves; /* heap; reassign_plan_free() */
    size_t n;
};

void reassign_plan_free(struct reassign_plan *p);

/* A balanced plan over the topics named (every topic, internal ones
 * included, when n_topics is 0) of img: brokers[0..n_brokers) are the
 * brokers to use (the registered ones plus an added one, or without a
 * removed one).
 * Replicas on brokers outside that set move to the least-loaded broker of
 * the set the partition does not use yet, in the same position (so the
 * preferred order stays); then, while the most-loaded broker holds more
 * than one replica more than the least-loaded, one replica moves from the
 * first to the second. Each step moves one replica, so the plan moves
 * only what balance needs. Only partitions whose replicas change are in
 * the plan. RC_INVALID (why in err) when a partition has more replicas
 * than there are brokers, or a topic is unknown; RC_NOMEM. */
MUST_CHECK int reassign_plan_compute(const struct meta_image *img,
                                     const int32_t *brokers, size_t n_brokers,
                                     const char *const *topics,
                                     size_t n_topics,
                                     struct reassign_plan *out, char *err,
                                     size_t cap);

/* Writes the targets as Kafka's plan JSON (one line). With current, the
 * current replicas instead (the "current assignment" kafka-reassign-
 * partitions prints, for a rollback). */
void reassign_plan_write_json(FILE *out, const struct reassign_plan *p,
                              bool current);

/* Parses Kafka's plan JSON in text[0..len): "version" 1 and "partitions",
 * each with "topic", "partition" and "replicas" (other keys, such as
 * "log_dirs", are skipped). RC_MALFORMED (where in err) otherwise;
 * RC_TOO_LARGE beyond REASSIGN_PLAN_MOVES_MAX moves or META_REPLICAS_MAX
 * replicas; RC_NOMEM. */
MUST_CHECK int reassign_plan_parse(const char *text, size_t len,
                                   struct reassign_plan *out, char *err,
                                   size_t cap);

#endif
