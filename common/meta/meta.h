/* Cluster metadata: the records of the controllers' Raft log and the
 * in-memory image they build, shared by the controller (which proposes and
 * applies them) and the broker (which fetches and applies them). Plain C
 * structs; only common/meta/meta_codec.c sees protobuf-c. meta_apply() is pure
 * and deterministic: every node applying the same records in the same order
 * ends with the same image. Loop thread of whichever process owns the
 * image. */
#ifndef CAIRN_COMMON_META_H
#define CAIRN_COMMON_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/limits.h"
#include "common/meta/meta_index.h"

#define META_NO_LEADER (-1)
#define META_LEADER_UNCHANGED (-2)


/* Kafka's ConfigResource types. */
#define META_RESOURCE_TOPIC 2
#define META_RESOURCE_BROKER 4

struct meta_uuid {
    uint8_t b[16];
};

bool meta_uuid_eq(const struct meta_uuid *a, const struct meta_uuid *b);
bool meta_uuid_is_zero(const struct meta_uuid *u);
/* 22-character URL-safe base64 without padding, as Kafka prints ids;
 * out must hold 23 bytes. */
void meta_uuid_format(const struct meta_uuid *u, char out[23]);
/* Makes 16 random bytes a version-4 UUID, as java.util.UUID.randomUUID()
 * does for Kafka's Uuid.randomUuid(): version nibble 4, IETF variant. */
void meta_uuid_set_v4(struct meta_uuid *u);
/* Whether Kafka would hand u out as a topic id: Uuid.randomUuid() draws
 * again for its reserved ids (zero, and (0, 1) for the metadata topic)
 * and for an id whose base64 form starts with '-', which a command line
 * would take for an option. */
bool meta_uuid_ok_as_topic_id(const struct meta_uuid *u);

struct meta_replica_set {
    int32_t n;
    int32_t ids[META_REPLICAS_MAX];
};

bool meta_replica_set_contains(const struct meta_replica_set *s, int32_t id);
/* Every member of a is in b. */
bool meta_replica_set_within(const struct meta_replica_set *a,
                             const struct meta_replica_set *b);

/* --- Records ------------------------------------------------------------ */

enum meta_record_type {
    META_REC_REGISTER_BROKER = 1,
    META_REC_BROKER_CHANGE = 2,
    META_REC_TOPIC = 3,
    META_REC_PARTITION = 4,
    META_REC_PARTITION_CHANGE = 5,
    META_REC_REMOVE_TOPIC = 6,
    META_REC_CONFIG = 7,
    META_REC_PRODUCER_IDS = 8,
    META_REC_UNREGISTER_BROKER = 22,
};

struct meta_rec_register_broker {
    int32_t broker_id;
    struct meta_uuid incarnation;
    char host[META_HOST_BYTES_MAX + 1];
    int32_t port;
    char rack[META_RACK_BYTES_MAX + 1]; /* "" = none */
};

struct meta_rec_broker_change {
    int32_t broker_id;
    int64_t broker_epoch;
    int8_t fenced;                 /* 1 fence, -1 unfence, 0 unchanged */
    int8_t in_controlled_shutdown; /* 1 yes, -1 no, 0 unchanged */
};

struct meta_rec_topic {
    char name[META_TOPIC_NAME_BYTES_MAX + 1];
    struct meta_uuid id;
};

struct meta_rec_partition {
    struct meta_uuid topic_id;
    int32_t partition;
    struct meta_replica_set replicas; /* preferred order */
    struct meta_replica_set isr;
    int32_t leader;                   /* META_NO_LEADER = offline */
    int32_t leader_epoch;
    int32_t partition_epoch;
    struct meta_replica_set adding;   /* reassignment: joining replicas */
    struct meta_replica_set removing; /* reassignment: leaving replicas */
};

/* Setting leader (anything but META_LEADER_UNCHANGED, even the same
 * broker) bumps leader_epoch; every change bumps partition_epoch. */
struct meta_rec_partition_change {
    struct meta_uuid topic_id;
    int32_t partition;
    bool isr_changed;
    struct meta_replica_set isr;
    int32_t leader;
    /* Replaces replicas, adding and removing together: a reassignment
     * starting, completing or being cancelled (KIP-455). */
    bool replicas_changed;
    struct meta_replica_set replicas;
    struct meta_replica_set adding;
    struct meta_replica_set removing;
};

struct meta_rec_remove_topic {
    struct meta_uuid topic_id;
};

struct meta_rec_config {
    int8_t resource_type; /* META_RESOURCE_* */
    char resource_name[META_TOPIC_NAME_BYTES_MAX + 1];
    char name[META_CONFIG_NAME_BYTES_MAX + 1];
    bool has_value;       /* false deletes the key */
    char value[META_CONFIG_VALUE_BYTES_MAX + 1];
};

struct meta_rec_producer_ids {
    int32_t broker_id;
    int64_t broker_epoch;
    int64_t next_producer_id;
};

/* The broker's registration goes (epoch must match); it hosts no
 * replica. */
struct meta_rec_unregister_broker {
    int32_t broker_id;
    int64_t broker_epoch;
};

struct meta_record {
    enum meta_record_type type;
    union {
        struct meta_rec_register_broker register_broker;
        struct meta_rec_broker_change broker_change;
        struct meta_rec_topic topic;
        struct meta_rec_partition partition;
        struct meta_rec_partition_change partition_change;
        struct meta_rec_remove_topic remove_topic;
        struct meta_rec_config config;
        struct meta_rec_producer_ids producer_ids;
        struct meta_rec_unregister_broker unregister_broker;
    } u;
};

/* --- Image -------------------------------------------------------------- */

struct meta_broker {
    int32_t id;
    int64_t epoch;          /* metadata offset of its registration */
    struct meta_uuid incarnation;
    char host[META_HOST_BYTES_MAX + 1];
    int32_t port;
    char rack[META_RACK_BYTES_MAX + 1];
    bool fenced;
    bool in_controlled_shutdown;
};

struct meta_partition {
    int32_t id;
    struct meta_replica_set replicas;
    struct meta_replica_set isr;
    int32_t leader;
    int32_t leader_epoch;
    int32_t partition_epoch;
    /* Non-empty while a reassignment runs (KIP-455): replicas is then the
     * target set followed by the replicas leaving; adding are the target
     * replicas not yet in the original set, removing the original ones not
     * in the target. */
    struct meta_replica_set adding;
    struct meta_replica_set removing;
};

struct meta_config_entry {
    char *name;  /* heap, owned by the image */
    char *value;
};

struct meta_topic {
    char name[META_TOPIC_NAME_BYTES_MAX + 1];
    struct meta_uuid id;
    int32_t n_partitions;
    int32_t cap_partitions;            /* allocated; >= n_partitions */
    struct meta_partition *partitions; /* indexed by partition id */
    size_t n_configs;
    struct meta_config_entry *configs; /* sorted by name (strcmp) */
};

/* The dynamic configs of one broker resource (KIP-226): broker id, or
 * META_BROKER_DEFAULT for the cluster-wide default (resource name ""). */
#define META_BROKER_DEFAULT (-1)
struct meta_broker_configs {
    int32_t broker;
    size_t n_configs;
    struct meta_config_entry *configs; /* sorted by name (strcmp) */
};

/* What a run of applies changed, so that who follows the image (the
 * broker's replica manager) visits only that: partitions created or
 * changed, and topics whose every partition may have changed (a config).
 * `hosted` asks for a visit of everything the follower holds (a broker
 * registered, changed or left, a broker config, a topic removed), `all`
 * for a visit of the whole image (the image was replaced, or more
 * changes came than are kept). Recorded by meta_apply() while
 * img->changes points at one. */
#define META_CHANGES_MAX 8192

struct meta_change {
    struct meta_uuid topic_id;
    int32_t partition; /* META_INDEX_TOPIC: each partition of the topic */
};

struct meta_changes {
    struct meta_change *items;
    size_t n;
    size_t cap;
    bool hosted;
    bool all;
};

void meta_changes_init(struct meta_changes *c);
void meta_changes_free(struct meta_changes *c);
/* Empties c (keeps its memory). */
void meta_changes_clear(struct meta_changes *c);
/* Notes a partition (or, with META_INDEX_TOPIC, a topic) as changed; once
 * META_CHANGES_MAX are noted, or memory runs out, c says `all`. */
void meta_changes_note(struct meta_changes *c, const struct meta_uuid *topic,
                       int32_t partition);

struct meta_image {
    int64_t offset;           /* records applied; the next gets offset + 1 */
    struct meta_broker *brokers; /* sorted by id */
    size_t n_brokers;
    size_t cap_brokers;
    struct meta_topic *topics;   /* in creation order */
    size_t n_topics;
    size_t cap_topics;
    int64_t next_producer_id;
    struct meta_broker_configs *broker_configs; /* sorted by broker */
    size_t n_broker_configs;
    /* Each topic's position + 1, by id (partition META_INDEX_TOPIC) and
     * by name key (META_INDEX_NAME), so that lookups cost the same
     * whatever the number of topics; while topics_indexed is false (an
     * index that could not grow) lookups scan. */
    struct meta_index topic_index;
    bool topics_indexed;
    struct meta_changes *changes; /* not owned; NULL: not recorded */
};

void meta_image_init(struct meta_image *img);
/* Indexes every topic again (after topics were removed or loaded). */
void meta_image_reindex(struct meta_image *img);
/* Indexes the topic at position i, the last one added. */
void meta_image_index_topic(struct meta_image *img, size_t i);
void meta_image_free(struct meta_image *img);
/* Deep copy of src into an initialised, empty dst. */
MUST_CHECK int meta_image_copy(struct meta_image *dst,
                               const struct meta_image *src);

/* Lookups; NULL when absent. Pointers are valid until the next apply. */
const struct meta_broker *meta_image_broker(const struct meta_image *img,
                                            int32_t id);
const struct meta_topic *meta_image_topic(const struct meta_image *img,
                                          const char *name);
const struct meta_topic *meta_image_topic_by_id(const struct meta_image *img,
                                                const struct meta_uuid *id);
const struct meta_partition *
meta_image_partition(const struct meta_image *img,
                     const struct meta_uuid *topic_id, int32_t partition);
/* Frees what topic t owns (configs, partitions) and empties it; t itself
 * stays the caller's. */
void meta_topic_free(struct meta_topic *t);

/* A topic config value, or NULL when the topic does not set it. */
const char *meta_topic_config(const struct meta_topic *t, const char *name);

/* A dynamic broker config: of broker (META_BROKER_DEFAULT for the
 * cluster-wide default), or NULL when it is not set there. */
const char *meta_broker_config(const struct meta_image *img, int32_t broker,
                               const char *name);

/* A broker resource name: "" is META_BROKER_DEFAULT, a decimal id in
 * 0..INT32_MAX (no sign, no leading zero) is that broker; false for
 * anything else. */
bool meta_broker_resource(const char *name, int32_t *broker);

/* Kafka's topic-name rule (Topic.validate): 1..META_TOPIC_NAME_BYTES_MAX
 * bytes of [a-zA-Z0-9._-], not "." or "..". The controller checks
 * CreateTopics with it and every node checks Topic records with it. NULL
 * is invalid. Pure. */
bool meta_topic_name_valid(const char *name);

/* The same rule over n bytes at p, as they came off the wire: a NUL byte
 * is as illegal as any other character outside the set. */
bool meta_topic_name_bytes_valid(const char *p, size_t n);

/* Applies one record; the image's offset advances by one whatever the
 * outcome, so every node counts the same. A record that does not fit the
 * image (unknown topic, stale broker epoch, ...) changes nothing else and
 * returns RC_INVALID. The one exception is RC_NOMEM: it leaves the whole
 * image unchanged, offset included, so the same record may be applied
 * again (the FSM aborts instead; replicas must not diverge). */
MUST_CHECK int meta_apply(struct meta_image *img,
                          const struct meta_record *rec);

/* Short human text of a record for logs ("partition t-3 leader=2 ..."). */
void meta_record_describe(const struct meta_image *img,
                          const struct meta_record *rec, char *out,
                          size_t cap);

/* State changes as a learner reads them, before -> after, e.g. "demo-0
 * leader 1 -> 2 epoch 3 -> 4, isr 1,2,3 -> 2,3" or "broker 1 fenced";
 * the caller adds the cause it knows. */
/* "1,2,3" ("-" for an empty set) into out (always terminated when cap >
 * 0, cut short if it does not fit). */
void meta_replica_set_format(const struct meta_replica_set *s, char *out,
                             size_t cap);

/* A partition leader's id, or "none" (META_NO_LEADER). */
void meta_leader_format(int32_t leader, char out[16]);

/* What rec changes in img, which it is about to be applied to: partition
 * leader, leader epoch and ISR changes, brokers registered, fenced,
 * unfenced and shutting down, topics created and deleted. False (out
 * empty) for records that change nothing a learner follows (configs,
 * producer ids, a partition change that only bumps the partition
 * epoch). */
bool meta_record_event(const struct meta_image *img,
                       const struct meta_record *rec, char *out, size_t cap);

#endif
