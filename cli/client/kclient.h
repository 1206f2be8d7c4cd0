/* librdkafka plumbing shared by the Kafka commands (cli/cmd/produce.c,
 * cli/cmd/consume/consume.c, cli/cmd/topics/topics.c, cli/cmd/bench.c):
 * client configurations built from the global options, Kafka's names of
 * errors, and blocking metadata and admin calls. The commands run on one
 * thread; librdkafka runs its own threads behind each handle. The one
 * callback installed here, the log callback, runs on those threads and
 * touches nothing but stderr and two atomic flags. Handles and
 * configurations returned belong to the caller. */
#ifndef CAIRN_CLI_KCLIENT_H
#define CAIRN_CLI_KCLIENT_H

#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"

/* -X arguments on one command line. */
#define KCLIENT_PROPS_MAX 64

/* The text of one error, with room for a broker's ErrorMessage. */
#define KCLIENT_ERROR_BYTES 512

/* Metadata and admin requests wait this long for the cluster. */
#define KCLIENT_TIMEOUT_MS 30000

/* Pause between metadata polls while waiting for a topic. */
#define KCLIENT_POLL_MS 100

/* One broker's answer to a direct Metadata request (kclient_wait_topic). */
#define KCLIENT_BROKER_TIMEOUT_MS 2000

/* How long produce and consume wait for a topic to become known. */
#define KCLIENT_TOPIC_WAIT_MS 5000

struct kclient_opts {
    const char *bootstrap;                /* "host:port,...", borrowed */
    const char *props[KCLIENT_PROPS_MAX]; /* -X "key=value", borrowed */
    size_t n_props;
};

/* Why a call failed. code is the Kafka (or librdkafka-local) error; it is
 * RD_KAFKA_RESP_ERR_NO_ERROR for a mistake on the command line (a bad -X
 * property), where text says everything. */
struct kclient_error {
    rd_kafka_resp_err_t code;
    char text[KCLIENT_ERROR_BYTES];
};

/* A topic to create: configs are "key=value" strings. partitions and
 * replication_factor may be -1 for the cluster's defaults. */
struct kclient_topic {
    const char *name;
    int32_t partitions;
    int32_t replication_factor;
    const char *const *configs;
    size_t n_configs;
};

/* The log callback of every configuration kclient_conf_new() makes (a
 * command that installs its own hands each line on to it): prints
 * librdkafka's line on stderr when its level is within $CAIRN_LOG's
 * (debug, info, warn, error, off; errors only by default; all with -X
 * debug=...). Lines about broker connections failing (a broker down)
 * are folded: the process prints the first, saying that the rest are
 * not shown, unless CAIRN_LOG=debug. Runs on librdkafka's threads. */
void kclient_log(const rd_kafka_t *rk, int level, const char *fac,
                 const char *buf);

/* A configuration with bootstrap.servers, client.id and the log callback
 * (kclient_log) set, log_level at $CAIRN_LOG's. The -X properties are
 * applied later, by kclient_new(). NULL when out of memory or a
 * property is refused (e says why). */
rd_kafka_conf_t *kclient_conf_new(const struct kclient_opts *o,
                                  struct kclient_error *e);

/* Sets one property; RC_INVALID when librdkafka refuses it (e says why). */
MUST_CHECK int kclient_conf_set(rd_kafka_conf_t *conf, const char *name,
                                const char *value, struct kclient_error *e);

/* Applies the -X properties last, so they override the command's own
 * settings, then creates the handle. Takes ownership of conf, also on
 * failure. NULL on failure (e says why). */
rd_kafka_t *kclient_new(const struct kclient_opts *o, rd_kafka_type_t type,
                        rd_kafka_conf_t *conf, struct kclient_error *e);

/* A handle for metadata and admin requests only, with the command's
 * configuration and no settings of its own (a producer that sends
 * nothing). NULL on failure (e says why). */
rd_kafka_t *kclient_admin_new(const struct kclient_opts *o,
                              struct kclient_error *e);

/* Kafka's name of a broker's error (Errors.java: TOPIC_ALREADY_EXISTS,
 * UNKNOWN_TOPIC_OR_PARTITION), librdkafka's for its local ones
 * (_TIMED_OUT). Never NULL. */
const char *kclient_err_name(rd_kafka_resp_err_t err);

/* Fills e from a librdkafka error and its text (NULL or "": librdkafka's
 * description of the code). */
void kclient_error_set(struct kclient_error *e, rd_kafka_resp_err_t code,
                       const char *text);

/* "cairn: WHAT: NAME: TEXT" on stderr (no NAME for a command-line
 * mistake). */
void kclient_error_print(const char *what, const struct kclient_error *e);

/* The number of partitions of topic, from Metadata requests. While the
 * cluster does not know the topic (or has no leader for it), asks again
 * every KCLIENT_POLL_MS for up to wait_ms: brokers learn of a new topic a
 * moment after its creation. RC_OK; RC_NOT_FOUND when the topic stayed
 * unknown; RC_IO when a request or the topic failed (e says why). */
MUST_CHECK int kclient_partition_count(rd_kafka_t *rk, const char *topic,
                                       int wait_ms, int32_t *n,
                                       struct kclient_error *e);

/* Polls metadata until topic exists with a leader for each partition
 * (exists) or is no longer listed (!exists), then until every broker that
 * answers says the same, listing at least partitions partitions (0: any)
 * (each learns of the change on its own, so a script's next command may
 * ask another broker); RC_TIMEOUT after timeout_ms (e says what was
 * missing). */
MUST_CHECK int kclient_wait_topic(rd_kafka_t *rk, const char *topic,
                                  bool exists, int32_t partitions,
                                  int timeout_ms, struct kclient_error *e);

/* The ids of topics names[0..n), which librdkafka 2.0's metadata does
 * not carry: one Metadata v12 of every topic from the first of md's
 * brokers that answers; ids[i] is the id of names[i] as Kafka prints it
 * (22 characters of URL-safe base64), "" when none came. */
void kclient_topic_ids(const rd_kafka_metadata_t *md,
                       const char *const *names, size_t n, char (*ids)[23]);

/* CreateTopics for one topic through the Admin API. RC_OK; RC_EXISTS when
 * the topic exists already; RC_IO for any other failure (e says which). */
MUST_CHECK int kclient_create_topic(rd_kafka_t *rk,
                                    const struct kclient_topic *t,
                                    struct kclient_error *e);

/* Issues one admin request, built from arg, with the options and the
 * reply queue given. RC_OK, or another RC_* with e set when the request
 * could not be made (out of memory). */
typedef int (*kclient_admin_send_cb)(rd_kafka_t *rk,
                                     rd_kafka_AdminOptions_t *opts,
                                     rd_kafka_queue_t *q, const void *arg,
                                     struct kclient_error *e);

/* One admin request for op: options with the request (and for topic
 * creation and deletion, the operation) timeout at KCLIENT_TIMEOUT_MS, a
 * reply queue, send_cb to issue it, then the wait for its result. RC_OK
 * with *ev, the caller's to destroy, whose per-item results the caller
 * checks; else *ev is NULL and e says why: RC_NOMEM, send_cb's failure,
 * RC_TIMEOUT when no result came within KCLIENT_TIMEOUT_MS and a margin,
 * RC_IO when the request failed as a whole. */
MUST_CHECK int kclient_admin_call(rd_kafka_t *rk, rd_kafka_admin_op_t op,
                                  rd_kafka_event_t **ev,
                                  struct kclient_error *e,
                                  kclient_admin_send_cb send_cb,
                                  const void *arg);

/* A command's report of an admin result (each item's outcome, printed);
 * returns the exit code. */
typedef int (*kclient_admin_report_cb)(rd_kafka_t *rk, rd_kafka_event_t *ev,
                                       const void *arg);

/* One admin request of a command: kclient_admin_call() with send_cb,
 * then report_cb on the result, both given arg. A request that fails as
 * a whole is printed as "cairn: WHAT: NAME: TEXT" (CLI_EXIT_FAILED). */
int kclient_admin_run(rd_kafka_t *rk, rd_kafka_admin_op_t op,
                      const char *what, kclient_admin_send_cb send_cb,
                      kclient_admin_report_cb report_cb, const void *arg);

#endif
