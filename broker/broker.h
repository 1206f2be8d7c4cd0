/* The cairn-broker process state shared by its parts: membership with the
 * controllers (broker/membership.h), the hosted partitions
 * (broker/replication/replica_manager.h), the Kafka listener with its
 * request handlers (broker/kafka/), the follower fetchers
 * (broker/replication/follower.h) and the group coordinator
 * (broker/group/coordinator.h). One libuv loop thread. */
#ifndef CAIRN_BROKER_BROKER_H
#define CAIRN_BROKER_BROKER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/event_ring.h"
#include "common/limits.h"
#include "common/loop_watch.h"
#include "common/net/http_metrics.h"
#include "broker/group/coordinator.h"
#include "broker/image_wait.h"
#include "broker/kafka/fetch_session.h"
#include "broker/kafka/kafka_server.h"
#include "broker/membership.h"
#include "broker/replication/replica_manager.h"
#include "broker/replication/follower.h"
#include "broker/replication/throttle.h"
#include "common/trace.h"

struct fetch_wait;

/* Produce answers counted per Kafka ErrorCode, -1 to 128: slot code + 1
 * (a code outside counts as UNKNOWN_SERVER_ERROR, slot 0). */
#define BROKER_ERROR_SLOTS 130

/* The broker's exit status after its only log dir failed. */
#define BROKER_EXIT_LOG_DIR_FAILED 3

struct broker {
    uv_loop_t *loop;
    struct tracer tracer;
    int32_t id;
    struct membership *membership;
    struct replica_manager partitions;
    struct kafka_server *kafka;
    struct follower *fetchers;
    struct coordinator coordinator; /* consumer groups */
    bool auto_create_topics;       /* auto.create.topics.enable */
    int64_t producer_id_next;      /* producer-id block handed out */
    int64_t producer_id_end;
    struct fetch_wait *fetch_waits; /* parked long polls */
    size_t n_fetch_waits;
    /* Incremental fetch sessions (KIP-227, broker/kafka/fetch_session.h);
     * max.incremental.fetch.session.cache.slots of them at most. */
    struct fetch_session_cache fetch_sessions;
    /* Admin answers held until the image holds their change, and the
     * timer for the earliest deadline among them
     * (broker/kafka/kafka_forward.h). */
    struct image_wait forward_waits;
    uv_timer_t forward_timer;
    bool forward_open;             /* kafka_forward_start() .. _close() */
    uv_signal_t sig_term;
    uv_signal_t sig_int;
    struct loop_watch loop_watch;  /* the loop's stalls */
    bool stopping;
    struct http_metrics *metrics;  /* metrics.port; NULL when off */
    struct event_ring events;      /* the tracer's event lines, /events */
    char events_source[24];        /* "broker-ID" */
    uint64_t isr_shrinks;          /* committed ISR changes proposed here */
    uint64_t isr_expands;
    uint64_t bytes_in;             /* record bytes produced by clients */
    uint64_t messages_in;          /* and their records */
    /* Produce: each partition's answer by ErrorCode (Kafka's
     * RequestMetrics ErrorsPerSec, NONE included), those with an error
     * (BrokerTopicMetrics FailedProduceRequestsPerSec), and the requests
     * waiting for their acks now, acks=all's HW or acks=1's fsync with
     * log.sync.before.ack (DelayedOperationPurgatory PurgatorySize). */
    uint64_t produce_errors[BROKER_ERROR_SLOTS];
    uint64_t produce_failed;
    uint64_t produce_waiting;
    /* leader.replication.throttled.rate: what this broker, as leader,
     * sends to followers of partitions being reassigned;
     * follower.replication.throttled.rate: what it fetches for them. Their
     * rates follow the dynamic broker configs, else the static ones. */
    struct throttle leader_throttle;
    struct throttle follower_throttle;
    int64_t leader_throttle_static;
    int64_t follower_throttle_static;
    /* log.fetch.verify.crc: every batch a Fetch answer carries is checked
     * by its CRC-32C first (broker/kafka/kafka_fetch.c), read back into
     * this buffer. */
    bool fetch_verify_crc;
    uint64_t fetch_corrupt_batches; /* bad batches found by those checks */
    uint8_t fetch_verify_buf[FETCH_VERIFY_BUFFER_BYTES];
};

/* The broker's Prometheus text (broker/metrics.c). */
void broker_metrics_render(void *arg, struct writer *w);

/* The same without a series per partition or per group offset
 * (`GET /metrics/summary`): its size does not grow with the partitions, so
 * a poller that wants the broker's gauges every few milliseconds does not
 * stall the broker's loop for the 100,000 series of a large one. */
void broker_metrics_summary_render(void *arg, struct writer *w);

/* The groups this broker coordinates, as JSON (`GET /groups`): id, state,
 * generation, protocol, members (with their assignment as "topic
 * p,p; ..."), committed offsets with the partition's HW and the lag where
 * the partition is hosted here (else null). */
void broker_groups_render(void *arg, struct writer *w);

/* The Kafka request callback (broker/kafka/kafka_handlers.c). */
void kafka_handlers_request(void *arg, struct kafka_request *req);

/* Per-API handlers; each answers req exactly once. */
void kafka_handle_api_versions(struct broker *b, struct kafka_request *req);
void kafka_handle_metadata(struct broker *b, struct kafka_request *req);
void kafka_handle_list_offsets(struct broker *b, struct kafka_request *req);
void kafka_handle_produce(struct broker *b, struct kafka_request *req);
void kafka_handle_fetch(struct broker *b, struct kafka_request *req);
void kafka_handle_create_topics(struct broker *b, struct kafka_request *req);
void kafka_handle_delete_topics(struct broker *b, struct kafka_request *req);
void kafka_handle_delete_records(struct broker *b,
                                 struct kafka_request *req);
void kafka_handle_describe_configs(struct broker *b,
                                   struct kafka_request *req);
void kafka_handle_init_producer_id(struct broker *b,
                                   struct kafka_request *req);
void kafka_handle_offset_for_leader_epoch(struct broker *b,
                                          struct kafka_request *req);
void kafka_handle_find_coordinator(struct broker *b,
                                   struct kafka_request *req);
void kafka_handle_join_group(struct broker *b, struct kafka_request *req);
void kafka_handle_sync_group(struct broker *b, struct kafka_request *req);
void kafka_handle_heartbeat(struct broker *b, struct kafka_request *req);
void kafka_handle_leave_group(struct broker *b, struct kafka_request *req);
void kafka_handle_offset_commit(struct broker *b, struct kafka_request *req);
void kafka_handle_offset_fetch(struct broker *b, struct kafka_request *req);
void kafka_handle_describe_groups(struct broker *b,
                                  struct kafka_request *req);
void kafka_handle_list_groups(struct broker *b, struct kafka_request *req);
/* broker/kafka/kafka_cluster.c */
void kafka_handle_describe_cluster(struct broker *b,
                                   struct kafka_request *req);
void kafka_handle_describe_log_dirs(struct broker *b,
                                    struct kafka_request *req);
/* broker/kafka/kafka_partitions.c */
void kafka_handle_create_partitions(struct broker *b,
                                    struct kafka_request *req);
void kafka_handle_delete_groups(struct broker *b, struct kafka_request *req);
void kafka_handle_elect_leaders(struct broker *b, struct kafka_request *req);
void kafka_handle_alter_configs(struct broker *b, struct kafka_request *req);
void kafka_handle_incremental_alter_configs(struct broker *b,
                                            struct kafka_request *req);
/* broker/kafka/kafka_reassign.c */
void kafka_handle_alter_partition_reassignments(struct broker *b,
                                                struct kafka_request *req);
void kafka_handle_list_partition_reassignments(struct broker *b,
                                               struct kafka_request *req);
void kafka_handle_unregister_broker(struct broker *b,
                                    struct kafka_request *req);

/* The configs of a topic created with t's CreateTopics configs, as
 * CreateTopics v5+ answers them (broker/kafka/kafka_configs.c): each one
 * set (DYNAMIC_TOPIC_CONFIG), then the broker's setting or Kafka's
 * default for the rest, sorted by name as Kafka's controller sorts them;
 * allocated in a. */
struct arena;
struct kafka_CreatableTopic;
struct kafka_CreatableTopicConfigs;
MUST_CHECK int
kafka_configs_of_new_topic(const struct broker *b,
                           const struct kafka_CreatableTopic *t,
                           struct arena *a,
                           const struct kafka_CreatableTopicConfigs **out,
                           int32_t *n_out);

/* The group core's deferred answers to JoinGroup, SyncGroup and
 * OffsetCommit (broker/kafka/kafka_group.c), given to the coordinator as
 * its struct coordinator_answers. */
void kafka_group_join_done(struct group_io *io, void *req,
                           const struct group_join_result *res);
void kafka_group_sync_done(struct group_io *io, void *req,
                           const struct group_sync_result *res);
void kafka_group_commit_done(struct group_io *io, void *req,
                             const int16_t *errors, size_t n);

/* The replica manager's alter_isr hook
 * (broker/replication/alter_partition.c): AlterPartition to the active
 * controller; arg is the broker. */
void broker_alter_isr(void *arg, struct partition *p,
                      const struct meta_replica_set *isr);

/* The replica manager's log_corrupt hook (the same file): LeaveLeadership
 * to the active controller for p, which this broker leads and whose log
 * holds a corrupt batch at offset; arg is the broker. */
void broker_log_corrupt(void *arg, struct partition *p, int64_t offset);

/* A partition's high watermark or log end moved: wake the long polls on
 * it (deferred by replica_manager_wake()). */
void kafka_fetch_hw_moved(void *arg, struct partition *p);
/* Answers every parked long poll now (shutdown). */
void kafka_fetch_flush(struct broker *b);
/* The replica manager's replica_seen hook (partition_host): when the
 * latest fetch session of follower replica last fetched while holding p
 * at fetch_offset, else -1; arg is the broker. */
int64_t kafka_fetch_replica_seen(void *arg, const struct partition *p,
                                 int32_t replica, int64_t fetch_offset);
/* Starts the fetch session cache (slots sessions at most) and closes it. */
void kafka_fetch_sessions_init(struct broker *b, size_t slots);
void kafka_fetch_sessions_close(struct broker *b);

/* Encodes with enc into a fresh response and replies; on an encoding
 * failure the connection is closed instead. */
typedef int (*kafka_encode_fn)(struct writer *w, int16_t version,
                               const void *resp);
void kafka_send(struct kafka_request *req, kafka_encode_fn enc,
                const void *resp);

/* Asks the active controller to create a topic (fire and forget: callers
 * retry until it exists); -1 partitions / rf take the defaults; configs
 * holds n_configs (name, value) pairs, at most BROKER_CREATE_CONFIGS_MAX. */
#define BROKER_CREATE_CONFIGS_MAX 4
void broker_create_topic(struct broker *b, const char *name,
                         int32_t partitions, int32_t rf,
                         const char *const *configs, size_t n_configs);
/* One CreateTopics call to the active controller for the names (the
 * defaults for partitions and replication factor), however many a
 * Metadata request named; fire and forget, as broker_create_topic(). */
void broker_auto_create_topics(struct broker *b, const char *const *names,
                               size_t n);

/* The topic name in wire slice s as a C string in buf, or NULL when its
 * bytes break Kafka's rule (meta_topic_name_bytes_valid(): an embedded
 * NUL, a character outside [a-zA-Z0-9._-], too long), so that no name is
 * ever cut short into another topic's. */
const char *broker_topic_name(struct slice s,
                              char buf[META_TOPIC_NAME_BYTES_MAX + 1]);

/* The partition of topic named by a wire slice, or NULL. */
struct partition *broker_partition(struct broker *b, struct slice topic,
                                   int32_t id);
/* Kafka error for a partition this broker does not lead: 3 when the topic
 * or partition does not exist in the metadata, else 6. */
int16_t broker_not_leader_error(struct broker *b, struct slice topic,
                                int32_t id);

#endif
