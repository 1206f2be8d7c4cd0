/* Why `cairn produce` could not deliver a record (cli/cmd/produce.c).
 * librdkafka retries a Produce the broker refused (NOT_ENOUGH_REPLICAS,
 * NOT_LEADER_OR_FOLLOWER, ...) until message.timeout.ms, then reports
 * only _MSG_TIMED_OUT. The broker's answers show in librdkafka's debug
 * line of each failed Produce (context "msg"); the producer's log
 * callback hands every line here, and this module keeps the last error
 * of each partition of the topic. After the run, a partition whose
 * records failed for want of in-sync replicas is explained with its ISR
 * (Metadata) and min.insync.replicas (DescribeConfigs).
 *
 * produce_why_note() runs on librdkafka's threads; the table is guarded
 * by a mutex. Everything else runs on the command's thread. */
#ifndef CAIRN_CLI_PRODUCE_WHY_H
#define CAIRN_CLI_PRODUCE_WHY_H

#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/assert.h"

/* Partitions explained after a run; more failed ones are only counted. */
#define PRODUCE_WHY_PARTITIONS_SHOWN 5

/* Metadata and DescribeConfigs for an explanation wait this long: the
 * records failed already, the command should not linger. */
#define PRODUCE_WHY_TIMEOUT_MS 5000

/* The broker's last error for one partition. */
struct produce_why_error {
    rd_kafka_resp_err_t err; /* RD_KAFKA_RESP_ERR_NO_ERROR: none seen */
    int32_t broker_id;       /* who said it; -1: not known */
};

struct produce_why {
    const char *topic;              /* borrowed */
    pthread_mutex_t lock;           /* guards last */
    struct produce_why_error *last; /* by partition; NULL: not started */
    bool *failed;                   /* by partition: a record failed */
    int32_t n_partitions;
};

void produce_why_init(struct produce_why *w, const char *topic);

/* Makes room for the topic's n partitions: lines noted before are
 * dropped (nothing was sent). RC_OK or RC_NOMEM. */
MUST_CHECK int produce_why_start(struct produce_why *w, int32_t n);

void produce_why_destroy(struct produce_why *w);

/* A librdkafka log line: when it is the debug line of a failed Produce
 * to the topic, its partition's last error becomes that error. Any
 * thread. */
void produce_why_note(struct produce_why *w, int level, const char *fac,
                      const char *line);

/* partition's last error from a broker (err NO_ERROR: none), and marks
 * the partition as one with a failed record. */
struct produce_why_error produce_why_failed(struct produce_why *w,
                                            int32_t partition);

/* Prints, for each partition marked failed whose last error says the ISR
 * is too small, its ISR, replicas and min.insync.replicas, as far as
 * the cluster answers within PRODUCE_WHY_TIMEOUT_MS. */
void produce_why_explain(struct produce_why *w, rd_kafka_t *rk);

/* For tests: parses one librdkafka 2.0 MSGSET debug line of a failed
 * Produce to topic. */
MUST_CHECK bool produce_why_parse(const char *line, const char *topic,
                                  int32_t *partition, int32_t *broker_id,
                                  rd_kafka_resp_err_t *err);

#endif
