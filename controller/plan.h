/* Active-controller planning: the deterministic core of the controller's
 * duties. Each function reads the metadata image and one request or event
 * (registration, heartbeat, session expiry, CreateTopics, DeleteTopics,
 * AlterPartition, AllocateProducerIds) and appends the metadata records to
 * propose to a struct plan_records, plus the Kafka ErrorCode and fields of
 * the answer. Pure: no I/O, no clock (controller/sessions.c decides when a
 * session lapsed), no globals; the same image and request always give the
 * same records. The glue proposes the records as one Raft entry, applies
 * them with meta_apply() (common/meta/meta.h) once committed, and answers.
 * Leader election and fencing live in controller/plan_election.c, the
 * rest in controller/plan.c; elections on request (ElectLeaders) and the
 * preferred-leader rebalance in controller/plan_elect.h.
 *
 * Contract with the glue:
 *   - Plan against an image that already holds every record proposed
 *     before: a planner cannot see records still in flight, so two
 *     overlapping plans (two AllocateProducerIds, two CreateTopics of one
 *     name) would both be computed from the same state. Serialise: one
 *     batch in flight at a time, or plan on a copy that has the in-flight
 *     records applied (meta_image_copy()).
 *   - Records are appended; the list holds at most META_BATCH_RECORDS_MAX,
 *     the size of one Raft entry. Where a broker's state change touches more
 *     partitions than fit, the planner stops at the bound, sets
 *     out->more and leaves the records consistent: see each function for
 *     how the rest gets done.
 *   - Functions return RC_OK or RC_NOMEM; the single-record planners
 *     (registration, AlterPartition, producer ids) also RC_FULL when the
 *     list is already full. On failure the list is as it was before the
 *     call and the ErrorCode out-param says UNKNOWN_SERVER_ERROR. A
 *     request's own mistakes are Kafka ErrorCodes in out-params
 *     (common/kafka/kafka_error.h), never RC_* codes.
 *
 * Loop thread of the active controller; nothing here is shared. */
#ifndef CAIRN_CONTROLLER_PLAN_H
#define CAIRN_CONTROLLER_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/kafka/kafka_error.h"
#include "common/meta/meta.h"

/* "No broker" for plan_elect_leader()'s excluded and extra arguments. */
#define PLAN_NO_BROKER (-1)

/* Producer ids handed out per AllocateProducerIds (Kafka's
 * ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE). */
#define PLAN_PRODUCER_ID_BLOCK_SIZE 1000

/* --- Record list -------------------------------------------------------- */

/* The rule that picked a leader, for its event: "rule: first live ISR
 * member of replicas 2,3,1, chose 2". */
#define PLAN_RULE_BYTES 512u

/* Records to propose, in order. Grows on demand up to
 * META_BATCH_RECORDS_MAX records. */
struct plan_records {
    struct meta_record *recs;
    char (*rules)[PLAN_RULE_BYTES]; /* rules[i]: recs[i]'s, or "" */
    size_t n;
    size_t cap;
    bool more; /* a planner stopped at the bound; work is left */
};

void plan_records_init(struct plan_records *r);
void plan_records_free(struct plan_records *r);
/* Empties the list (and clears more), keeping its memory. */
void plan_records_clear(struct plan_records *r);
/* Appends a copy of rec: RC_FULL when META_BATCH_RECORDS_MAX records are
 * already there, RC_NOMEM when growing fails. */
MUST_CHECK int plan_records_push(struct plan_records *r,
                                 const struct meta_record *rec);
/* Sets the rule of the record pushed last (cut to PLAN_RULE_BYTES). */
void plan_records_rule(struct plan_records *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* --- Leader election ---------------------------------------------------- */

/* Which step of plan_elect_leader() chose. */
enum plan_elect_step {
    PLAN_ELECT_KEPT,      /* 1: the leader stays */
    PLAN_ELECT_FIRST_ISR, /* 2: the first acceptable ISR member */
    PLAN_ELECT_UNCLEAN,   /* 3: the first acceptable replica */
    PLAN_ELECT_NONE,      /* 4: nobody */
};

struct plan_election {
    int32_t leader; /* META_NO_LEADER when nobody is acceptable */
    bool unclean;   /* leader is outside the target ISR: new ISR = [it] */
    enum plan_elect_step step;
    bool unclean_allowed; /* as asked */
};

/* Whether the controller may make broker id a leader: registered, unfenced,
 * not in controlled shutdown, and not excluded. extra_acceptable counts as
 * unfenced even if the image still says fenced (it is being unfenced in
 * the same batch). Pass PLAN_NO_BROKER for no exclusion / no extra. */
bool plan_broker_acceptable(const struct meta_image *img, int32_t id,
                            int32_t excluded, int32_t extra_acceptable);

/* Kafka's ONLINE election (PartitionChangeBuilder.electAnyLeader) for
 * partition p when its ISR becomes target_isr:
 *   1. keep p's leader if it is in target_isr and acceptable;
 *   2. else the first replica, in Replicas order, in target_isr and
 *      acceptable;
 *   3. else, if unclean_allowed, the first acceptable replica in Replicas
 *      order (.unclean = true: the new ISR must be just that leader);
 *   4. else META_NO_LEADER.
 * "Acceptable" is plan_broker_acceptable(img, id, excluded, extra). */
struct plan_election plan_elect_leader(const struct meta_image *img,
                                       const struct meta_partition *p,
                                       const struct meta_replica_set *isr,
                                       int32_t excluded_broker,
                                       int32_t extra_acceptable_broker,
                                       bool unclean_allowed);

/* The rule e followed for partition p (replicas in order) and target
 * ISR isr, as "rule: first live ISR member of replicas 2,3,1, chose 2";
 * "" when the leader stays. "Live" is plan_broker_acceptable(). */
void plan_election_rule(const struct meta_partition *p,
                        const struct meta_replica_set *isr,
                        const struct plan_election *e, char *out,
                        size_t cap);

/* The topic's unclean.leader.election.enable ("true"/"false", any case)
 * if set, else the controller's default. */
bool plan_unclean_allowed(const struct meta_topic *t, bool unclean_default);

/* --- Broker state changes ----------------------------------------------- */

/* Session of unfenced broker id lapsed (or it asked to be fenced): for
 * every partition whose ISR holds it or that it leads, a PartitionChange
 * taking it out of the ISR (unless it is the last member: the ISR stays
 * [id]) and, if it led, electing another leader with id excluded (which
 * may leave the partition offline, META_NO_LEADER); then
 * BrokerChange(fenced=1). The fence record comes last, as in Kafka's
 * handleBrokerFenced: if the partition changes do not all fit, out->more
 * is set and the fence record is left out, so the broker stays unfenced
 * in the image and the next call (next session check) continues. id must
 * be registered; for a broker already fenced, nothing. */
MUST_CHECK int plan_fence_broker(const struct meta_image *img, int32_t id,
                                 bool unclean_default,
                                 struct plan_records *out);

/* Elections for every leaderless partition that has an acceptable leader
 * now (also unclean ones where the topic allows them). For the periodic
 * check Kafka runs every unclean.leader.election.interval.ms, and to finish
 * an unfence that set out->more. */
MUST_CHECK int plan_elect_leaderless(const struct meta_image *img,
                                     bool unclean_default,
                                     struct plan_records *out);

/* --- Heartbeat ---------------------------------------------------------- */

struct plan_heartbeat_req {
    int32_t broker_id;
    int64_t broker_epoch;
    int64_t current_metadata_offset;
    bool want_fence;
    bool want_shut_down;
};

struct plan_heartbeat_result {
    int16_t error;         /* KAFKA_ERROR_*; the fields below are valid */
    bool is_caught_up;     /* only with KAFKA_ERROR_NONE */
    bool is_fenced;        /* once the planned records are applied */
    bool should_shut_down;
};

/* One BrokerHeartbeat (Kafka's BrokerHeartbeatManager state machine,
 * shared/reference/replication-design.md 1.3):
 *   - unknown broker: BROKER_ID_NOT_REGISTERED; other epoch:
 *     STALE_BROKER_EPOCH; no records;
 *   - is_caught_up = current_metadata_offset >= the broker's epoch;
 *   - FENCED + want_shut_down, or fenced after a controlled shutdown:
 *     should_shut_down, no records;
 *   - FENCED, !want_fence, caught up: unfence: BrokerChange(fenced=-1),
 *     then an election for every leaderless partition in which it is an
 *     acceptable leader (in the ISR, or a replica where unclean election
 *     is allowed); elections that do not fit set out->more and
 *     plan_elect_leaderless() finishes them;
 *   - UNFENCED + want_fence: plan_fence_broker() (should_shut_down =
 *     want_shut_down);
 *   - UNFENCED + want_shut_down (or already in controlled shutdown): while
 *     it leads a partition or sits in an ISR it is not the last member of,
 *     BrokerChange(in_controlled_shutdown=1) (once) plus the ISR removals
 *     and leader moves of fencing; once nothing is left to move,
 *     should_shut_down and BrokerChange(fenced=1).
 * Kafka also waits, before SHUTDOWN_NOW, for every broker to have applied
 * the metadata past the start of the shutdown; the image does not know
 * brokers' offsets, so that check, if wanted, is the glue's. */
MUST_CHECK int plan_heartbeat(const struct meta_image *img,
                              const struct plan_heartbeat_req *req,
                              bool unclean_default, struct plan_records *out,
                              struct plan_heartbeat_result *res);

/* --- Registration ------------------------------------------------------- */

/* BrokerRegistration. other_incarnation_alive: the id has a live session
 * (the glue asks controller/sessions.c; Kafka also counts a fenced broker
 * as not alive). Outcomes, in order:
 *   - the same incarnation as registered: an idempotent retry, no record,
 *     *epoch_out = the registered epoch;
 *   - another incarnation alive: DUPLICATE_BROKER_REGISTRATION;
 *   - broker_id < 0, or a new id when META_BROKERS_MAX are registered:
 *     INVALID_REQUEST;
 *   - otherwise one RegisterBroker record; *epoch_out = -1, because the
 *     epoch is the metadata offset at which the record is applied: read
 *     meta_image_broker(img, id)->epoch after applying it. When the old
 *     incarnation is still unfenced (its session lapsed, the fence not yet
 *     planned), plan_fence_broker()'s records come first (no unclean
 *     elections; the periodic check runs those), so its partitions move
 *     to new leader epochs; if they do not all fit, only they are
 *     planned and the answer is DUPLICATE_BROKER_REGISTRATION (retry). */
MUST_CHECK int plan_register_broker(const struct meta_image *img,
                                    const struct meta_rec_register_broker *req,
                                    bool other_incarnation_alive,
                                    struct plan_records *out,
                                    int16_t *error_out, int64_t *epoch_out);

/* --- Topics ------------------------------------------------------------- */

struct plan_config {
    const char *name;
    const char *value; /* NULL is INVALID_CONFIG */
};

struct plan_topic_req {
    const char *name;           /* NUL-terminated; NULL counts as "" */
    int32_t num_partitions;     /* -1: defaults->num_partitions */
    int32_t replication_factor; /* -1: defaults->replication_factor */
    const struct plan_config *configs;
    size_t n_configs;
    struct meta_uuid id;        /* fresh, non-zero, chosen by the caller */
};

struct plan_topic_defaults {
    int32_t num_partitions;     /* num.partitions */
    int32_t replication_factor; /* default.replication.factor */
};

/* Room for an error's message, with the value that caused it. */
#define PLAN_CONFIG_MESSAGE_BYTES 256

struct plan_topic_result {
    int16_t error;
    int32_t num_partitions;     /* resolved; with KAFKA_ERROR_NONE */
    int32_t replication_factor;
    char message[PLAN_CONFIG_MESSAGE_BYTES]; /* a config's error, or "" */
};

/* CreateTopics: results[i] answers topics[i]. Errors, first match wins:
 *   INVALID_REQUEST             the name appears more than once (each one);
 *   INVALID_TOPIC_EXCEPTION     not 1..249 of [a-zA-Z0-9._-], or "."/"..";
 *   TOPIC_ALREADY_EXISTS;
 *   INVALID_PARTITIONS          <= 0 or > META_PARTITIONS_MAX;
 *   INVALID_REPLICATION_FACTOR  <= 0, > META_REPLICAS_MAX, or more than
 *                               the unfenced brokers not shutting down;
 *   INVALID_CONFIG              unknown topic config name, null value,
 *                               a value that is not of the config's type
 *                               or out of its bounds (Kafka's LogConfig,
 *                               controller/plan_configs.h), one over
 *                               META_CONFIG_VALUE_BYTES_MAX, or a name
 *                               given twice; .message says which, in
 *                               Kafka's words;
 *   POLICY_VIOLATION            the image holds META_TOPICS_MAX topics;
 *   THROTTLING_QUOTA_EXCEEDED   the topic's records do not fit in this
 *                               batch next to the earlier topics (retry).
 * For each valid topic: Topic, its Configs, then Partition 0..n-1 with
 * replicas eligible[(start + p + k) % n_eligible] for k < RF (eligible =
 * unfenced brokers not shutting down, by id; start = the number of topics
 * in the image plus those created earlier in this request, so leadership
 * spreads), ISR = replicas, leader = replicas[0], epochs 0. validate_only
 * fills results the same way but appends no records. */
MUST_CHECK int plan_create_topics(const struct meta_image *img,
                                  const struct plan_topic_req *topics,
                                  size_t n_topics,
                                  const struct plan_topic_defaults *defaults,
                                  bool validate_only, struct plan_records *out,
                                  struct plan_topic_result *results);

/* DeleteTopics: errors[i] answers names[i]: a RemoveTopic record and
 * NONE, UNKNOWN_TOPIC_OR_PARTITION, or INVALID_REQUEST for a name given
 * more than once (each one). */
MUST_CHECK int plan_delete_topics(const struct meta_image *img,
                                  const char *const *names, size_t n_names,
                                  struct plan_records *out, int16_t *errors);

/* --- AlterPartition ----------------------------------------------------- */

struct plan_alter_partition_req {
    int32_t broker_id;
    int64_t broker_epoch;
    struct meta_uuid topic_id;
    int32_t partition;
    int32_t leader_epoch;
    int32_t partition_epoch;
    const int32_t *new_isr; /* borrowed */
    size_t n_new_isr;
};

/* AlterPartition from a partition leader. Errors, in this order:
 * STALE_BROKER_EPOCH (unknown broker or other epoch),
 * UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER (sender does not lead
 * it), FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH (leader_epoch older /
 * newer), INVALID_UPDATE_VERSION (partition_epoch differs),
 * INVALID_REQUEST (new ISR empty, too long, with duplicates, not a subset
 * of the replicas, or without the leader), INELIGIBLE_REPLICA (an added
 * member is not registered, fenced or shutting down). On success, one
 * PartitionChange with the new ISR and the leader unchanged; none when the
 * new ISR has the same members as the current one. When the new ISR holds
 * every adding replica of a reassignment, the same change completes it
 * (plan_reassign_complete()), which may move the leader: the answer is
 * then NEW_LEADER_ELECTED. Answer from the image once applied. */
MUST_CHECK int plan_alter_partition(const struct meta_image *img,
                                    const struct plan_alter_partition_req *req,
                                    struct plan_records *out,
                                    int16_t *error_out);

/* --- LeaveLeadership (controller/plan_repair.c) -------------------------- */

struct plan_leave_leadership_req {
    int32_t broker_id;
    int64_t broker_epoch;
    struct meta_uuid topic_id;
    int32_t partition;
    int32_t leader_epoch;
};

/* A replica found a corrupt batch in its log and asks to leave the ISR
 * before it repairs (truncates and fetches again), so that it is never
 * elected while it lacks records the ISR promised. Errors, in this order:
 * STALE_BROKER_EPOCH, UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER
 * (not a replica), FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH. Then:
 *
 *   out of the ISR already   NONE, a PartitionChange that changes
 *                            nothing but the partition epoch, so that a
 *                            leader's expansion computed on fetches from
 *                            before its cut is refused as stale;
 *   a follower in the ISR    NONE, a PartitionChange: the ISR without it;
 *   the leader               NONE, a PartitionChange: the ISR without it,
 *                            led by its first acceptable member in
 *                            Replicas order, or by none (offline until one
 *                            is unfenced) when all are fenced;
 *   the last ISR member      ELIGIBLE_LEADERS_NOT_AVAILABLE with a
 *                            PartitionChange that leaves the ISR as it is
 *                            and the partition without a leader: every
 *                            in-sync copy is damaged, and it goes offline
 *                            rather than serve one (none when it has no
 *                            leader already). */
MUST_CHECK int
plan_leave_leadership(const struct meta_image *img,
                      const struct plan_leave_leadership_req *req,
                      struct plan_records *out, int16_t *error_out);

/* --- Partition reassignment (KIP-455) ------------------------------------ */

struct plan_reassignment {
    const char *topic;        /* NUL-terminated; NULL counts as "" */
    int32_t partition;
    bool cancel;              /* Replicas null in the request */
    const int32_t *replicas;  /* the target, in preferred order; borrowed */
    size_t n_replicas;
};

/* AlterPartitionReassignments: errors[i] answers reqs[i]. Errors:
 *   UNKNOWN_TOPIC_OR_PARTITION   no such topic or partition;
 *   INVALID_REQUEST              the partition appears twice (the later);
 *   INVALID_REPLICA_ASSIGNMENT   an empty target, duplicates, a broker that
 *                                is not registered, or more than
 *                                META_REPLICAS_MAX replicas during the move;
 *   NO_REASSIGNMENT_IN_PROGRESS  cancel of a partition not being moved;
 *   ELIGIBLE_LEADERS_NOT_AVAILABLE  the change would leave no ISR member
 *                                (a cancel whose only in-sync replicas
 *                                are the adding ones: Kafka would need an
 *                                unclean election);
 *   THROTTLING_QUOTA_EXCEEDED    no room left in this batch (retry).
 * A target is measured from the partition's original replicas (replicas
 * without adding): one PartitionChange with replicas = target + the
 * original ones leaving, adding, removing; when every adding replica is
 * already in the ISR (a reorder or a pure removal) it completes at once
 * (plan_reassign_complete()). The current assignment as target changes
 * nothing. Cancel returns to the original replicas; adding replicas leave
 * the ISR and the leader moves if it was one of them. */
MUST_CHECK int plan_alter_reassignments(const struct meta_image *img,
                                        const struct plan_reassignment *reqs,
                                        size_t n, struct plan_records *out,
                                        int16_t *errors);

/* UnregisterBroker (KIP-500's decommission): one UnregisterBroker record
 * for a registered broker that no partition names as a replica (adding
 * ones included). BROKER_ID_NOT_REGISTERED for an unknown id;
 * INVALID_REQUEST while it still hosts replicas (move them first). A
 * broker process still running registers again, as in Kafka. */
MUST_CHECK int plan_unregister_broker(const struct meta_image *img,
                                      int32_t broker_id,
                                      struct plan_records *out,
                                      int16_t *error_out);

/* --- Producer ids ------------------------------------------------------- */

/* AllocateProducerIds: STALE_BROKER_EPOCH for an unknown broker or another
 * epoch; else one ProducerIds record raising next_producer_id by
 * PLAN_PRODUCER_ID_BLOCK_SIZE, and the block [*first_id_out,
 * *first_id_out + PLAN_PRODUCER_ID_BLOCK_SIZE). UNKNOWN_SERVER_ERROR if the
 * id space is exhausted. */
MUST_CHECK int plan_allocate_producer_ids(const struct meta_image *img,
                                          int32_t broker_id,
                                          int64_t broker_epoch,
                                          struct plan_records *out,
                                          int16_t *error_out,
                                          int64_t *first_id_out);

#endif
