/* The topic configs Cairn knows, in one table: each one's name, type,
 * bounds or allowed strings, Kafka's default, its broker synonym (the
 * broker config that sets the default for every topic), whether the
 * broker applies a change without a restart and how DescribeConfigs
 * shows it. The definitions are Kafka 3.8's LogConfig (and the synonyms
 * its TopicConfigSynonyms).
 *
 * Everything that reads or checks a topic config goes through here: the
 * controller checks CreateTopics and AlterConfigs values with
 * topic_config_check() before writing them, brokers resolve a topic's
 * effective settings with topic_config_resolve(), DescribeConfigs walks
 * the table for names, defaults and synonyms, and the broker checks the
 * defaults of its properties file with topic_config_set().
 *
 * Values parse by common/config.h's strict parsers (no blanks around a
 * number), so what the controller accepted is read the same way by every
 * broker. Pure: no I/O, no clock; the table is constant, any thread. */
#ifndef CAIRN_COMMON_TOPIC_CONFIG_H
#define CAIRN_COMMON_TOPIC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/meta/meta.h"

/* An error message, as Kafka's ConfigException words it. */
#define TOPIC_CONFIG_MESSAGE_BYTES 256

/* Every topic config, in name order (the table's order). */
enum topic_config_id {
    TOPIC_CONFIG_CLEANUP_POLICY,
    TOPIC_CONFIG_COMPRESSION_TYPE,
    TOPIC_CONFIG_DELETE_RETENTION_MS,
    TOPIC_CONFIG_FILE_DELETE_DELAY_MS,
    TOPIC_CONFIG_FLUSH_MESSAGES,
    TOPIC_CONFIG_FLUSH_MS,
    TOPIC_CONFIG_FOLLOWER_THROTTLED_REPLICAS,
    TOPIC_CONFIG_INDEX_INTERVAL_BYTES,
    TOPIC_CONFIG_LEADER_THROTTLED_REPLICAS,
    TOPIC_CONFIG_LOCAL_RETENTION_BYTES,
    TOPIC_CONFIG_LOCAL_RETENTION_MS,
    TOPIC_CONFIG_MAX_COMPACTION_LAG_MS,
    TOPIC_CONFIG_MAX_MESSAGE_BYTES,
    TOPIC_CONFIG_MESSAGE_DOWNCONVERSION_ENABLE,
    TOPIC_CONFIG_TIMESTAMP_AFTER_MAX_MS,
    TOPIC_CONFIG_TIMESTAMP_BEFORE_MAX_MS,
    TOPIC_CONFIG_TIMESTAMP_DIFFERENCE_MAX_MS,
    TOPIC_CONFIG_TIMESTAMP_TYPE,
    TOPIC_CONFIG_MIN_CLEANABLE_DIRTY_RATIO,
    TOPIC_CONFIG_MIN_COMPACTION_LAG_MS,
    TOPIC_CONFIG_MIN_INSYNC_REPLICAS,
    TOPIC_CONFIG_PREALLOCATE,
    TOPIC_CONFIG_REMOTE_STORAGE_ENABLE,
    TOPIC_CONFIG_RETENTION_BYTES,
    TOPIC_CONFIG_RETENTION_MS,
    TOPIC_CONFIG_SEGMENT_BYTES,
    TOPIC_CONFIG_SEGMENT_INDEX_BYTES,
    TOPIC_CONFIG_SEGMENT_JITTER_MS,
    TOPIC_CONFIG_SEGMENT_MS,
    TOPIC_CONFIG_UNCLEAN_LEADER_ELECTION_ENABLE,
    TOPIC_CONFIG_COUNT
};

/* Kafka's ConfigDef types. */
enum topic_config_type {
    TOPIC_CONFIG_BOOLEAN, /* "true" or "false", any case */
    TOPIC_CONFIG_INT,     /* int32 in [min, max] */
    TOPIC_CONFIG_LONG,    /* int64 in [min, max] */
    TOPIC_CONFIG_DOUBLE,  /* finite, in [min, max] */
    TOPIC_CONFIG_STRING,  /* one of choices (Kafka's ValidString) */
    TOPIC_CONFIG_LIST     /* comma-separated; each item one of choices,
                           * or anything when choices is NULL */
};

/* cleanup.policy's items, as bits of topic_config_values.cleanup_policy
 * (the order of its choices). */
#define TOPIC_CONFIG_CLEANUP_COMPACT 1u
#define TOPIC_CONFIG_CLEANUP_DELETE 2u

/* message.timestamp.type, as topic_config_values.timestamp_type (the
 * index among its choices). */
#define TOPIC_CONFIG_TIMESTAMP_CREATE_TIME 0
#define TOPIC_CONFIG_TIMESTAMP_LOG_APPEND_TIME 1

/* No lower bound. */
#define TOPIC_CONFIG_NO_MIN INT64_MIN

/* The settings of a topic a broker (or the controller) acts on, typed.
 * Each field belongs to one config of the table. */
struct topic_config_values {
    uint32_t cleanup_policy;         /* TOPIC_CONFIG_CLEANUP_* bits */
    int64_t delete_retention_ms;
    int32_t index_interval_bytes;
    int64_t max_compaction_lag_ms;
    int32_t max_message_bytes;
    int64_t timestamp_after_max_ms;
    int64_t timestamp_before_max_ms;
    int32_t timestamp_type;          /* TOPIC_CONFIG_TIMESTAMP_* */
    double min_cleanable_dirty_ratio;
    int64_t min_compaction_lag_ms;
    int32_t min_insync_replicas;
    int64_t retention_bytes;
    int64_t retention_ms;
    int32_t segment_bytes;
    int64_t segment_ms;
    bool unclean_leader_election_enable;
};

/* Where in struct topic_config_values a config's value goes. */
struct topic_config_field {
    bool present;  /* false: stored and described only */
    size_t offset; /* of a field of the def's type (see topic_config.c) */
};

struct topic_config_def {
    const char *name;
    enum topic_config_type type;
    int64_t min;               /* INT, LONG, DOUBLE; or TOPIC_CONFIG_NO_MIN */
    int64_t max;               /* likewise; 0: none (no topic config has
                                * an upper bound of 0) */
    const char *choices;       /* "a, b" as Kafka prints them, or NULL */
    const char *default_value; /* Kafka's, as DescribeConfigs shows it */
    const char *synonym;       /* the broker's config, or NULL */
    int64_t synonym_min;       /* the synonym's lower bound in Kafka */
    bool synonym_dynamic;      /* the synonym may be altered at runtime */
    bool live;                 /* applied without a restart; false: kept
                                * and described, not acted on */
    bool listed;               /* DescribeConfigs lists it unasked */
    bool read_only;            /* as DescribeConfigs reports */
    bool sensitive;            /* as DescribeConfigs reports */
    struct topic_config_field field;
};

/* Definition i < TOPIC_CONFIG_COUNT. */
const struct topic_config_def *topic_config_at(enum topic_config_id i);
/* By name; NULL for a name that is no topic config. */
const struct topic_config_def *topic_config_lookup(const char *name);
/* By broker synonym; NULL when no topic config has it. */
const struct topic_config_def *topic_config_by_synonym(const char *synonym);
const char *topic_config_name(enum topic_config_id i);

/* Checks value for topic config name: KAFKA_ERROR_NONE (0) with msg "",
 * or KAFKA_ERROR_INVALID_CONFIG (40) with Kafka's message in msg:
 *   "Unknown topic config name: x"
 *   "Invalid value two for configuration min.insync.replicas: Not a number
 *    of type INT"
 *   "Invalid value 0 for configuration min.insync.replicas: Value must be
 *    at least 1"
 *   "Invalid value foo for configuration cleanup.policy: String must be
 *    one of: compact, delete" (a list names its first bad item)
 *   "Invalid value yes for configuration preallocate: Expected value to be
 *    either true or false"
 * and, for a value longer than META_CONFIG_VALUE_BYTES_MAX, "Invalid value
 * for configuration x: longer than 1023 bytes". */
int16_t topic_config_check(const char *name, const char *value,
                           char msg[TOPIC_CONFIG_MESSAGE_BYTES]);

/* The same check of value against d itself, under the name `name` (d's
 * own, or its synonym's with synonym true, which takes synonym_min for
 * its lower bound). d need not be from the table: callers check configs
 * of their own (say a broker's throttle rate) with it too. */
int16_t topic_config_check_def(const struct topic_config_def *d,
                               const char *name, bool synonym,
                               const char *value,
                               char msg[TOPIC_CONFIG_MESSAGE_BYTES]);

/* Kafka's defaults of every field (from the table's default_value). */
void topic_config_values_default(struct topic_config_values *out);

/* Checks value (as topic_config_check_def(d, .., synonym)) and stores it
 * in d's field of v, if d has one: NONE, or INVALID_CONFIG with msg and v
 * unchanged. */
int16_t topic_config_set(struct topic_config_values *v,
                         const struct topic_config_def *d, bool synonym,
                         const char *value,
                         char msg[TOPIC_CONFIG_MESSAGE_BYTES]);

/* The text of d's field in v ("%lld", "true", "0.5", "compact,delete",
 * "LogAppendTime") in buf; false when d has no field. */
bool topic_config_format(const struct topic_config_values *v,
                         const struct topic_config_def *d, char *buf,
                         size_t len);

/* A value that cannot be applied: d, the text, and Kafka's reason. */
typedef void (*topic_config_bad_cb)(void *arg,
                                    const struct topic_config_def *d,
                                    const char *value, const char *why);

/* Topic t's effective settings on broker broker_id, field by field with
 * Kafka's precedence: what the topic sets, else this broker's dynamic
 * config of the synonym, else the cluster-wide dynamic default (img may
 * be NULL: neither), else base (the broker's config file). A value that
 * does not pass its check (only an old metadata log holds one) is
 * reported to bad_cb (may be NULL) and base's value used. */
void topic_config_resolve(const struct meta_image *img, int32_t broker_id,
                          const struct meta_topic *t,
                          const struct topic_config_values *base,
                          struct topic_config_values *out,
                          topic_config_bad_cb bad_cb, void *arg);

/* The text that sets d for topic t on broker broker_id, by the same
 * precedence, and where it came from; NULL (source unchanged) when
 * nothing sets it. */
enum topic_config_origin {
    TOPIC_CONFIG_FROM_TOPIC,
    TOPIC_CONFIG_FROM_BROKER,
    TOPIC_CONFIG_FROM_DEFAULT_BROKER
};
const char *topic_config_value_of(const struct meta_image *img,
                                  int32_t broker_id,
                                  const struct meta_topic *t,
                                  const struct topic_config_def *d,
                                  enum topic_config_origin *origin);

#endif
