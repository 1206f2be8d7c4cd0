/* The topic config registry (common/topic_config.h): the one table of
 * topic configs, their checks with Kafka's ConfigDef messages, and the
 * typed settings resolved from a topic's configs. Pure; any thread. */
#include "common/topic_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/assert.h"
#include "common/config.h"
#include "common/kafka/kafka_error.h"

#define FIELD(f)                                                          \
    {true, offsetof(struct topic_config_values, f)}
#define NO_FIELD {false, 0}
#define LONG_MAX_TEXT "9223372036854775807"

/* Kafka 3.8's LogConfig, in name order. Kafka's bounds throughout, but
 * for the synonyms Kafka leaves unbounded (log.retention.ms,
 * log.flush.interval.ms). live: the broker follows a change from the
 * metadata image (broker/replication/replica_manager.c), or the
 * controller at its next election (unclean.leader.election.enable).
 * listed: what DescribeConfigs lists unasked, as before this table. */
static const struct topic_config_def topic_config_defs[] = {
    [TOPIC_CONFIG_CLEANUP_POLICY] = {
        .name = "cleanup.policy", .type = TOPIC_CONFIG_LIST,
        .choices = "compact, delete", .default_value = "delete",
        .synonym = "log.cleanup.policy", .synonym_dynamic = true,
        .live = true, .listed = true, .field = FIELD(cleanup_policy)},
    [TOPIC_CONFIG_COMPRESSION_TYPE] = {
        .name = "compression.type", .type = TOPIC_CONFIG_STRING,
        .choices = "uncompressed, zstd, lz4, snappy, gzip, producer",
        .default_value = "producer", .synonym = "compression.type",
        .synonym_dynamic = true, .listed = true, .field = NO_FIELD},
    [TOPIC_CONFIG_DELETE_RETENTION_MS] = {
        .name = "delete.retention.ms", .type = TOPIC_CONFIG_LONG, .min = 0,
        .default_value = "86400000",
        .synonym = "log.cleaner.delete.retention.ms", .synonym_min = 0,
        .synonym_dynamic = true, .live = true, .listed = true,
        .field = FIELD(delete_retention_ms)},
    [TOPIC_CONFIG_FILE_DELETE_DELAY_MS] = {
        .name = "file.delete.delay.ms", .type = TOPIC_CONFIG_LONG, .min = 0,
        .default_value = "60000", .synonym = "log.segment.delete.delay.ms",
        .synonym_min = 0, .synonym_dynamic = true, .listed = true,
        .field = NO_FIELD},
    [TOPIC_CONFIG_FLUSH_MESSAGES] = {
        .name = "flush.messages", .type = TOPIC_CONFIG_LONG, .min = 1,
        .default_value = LONG_MAX_TEXT,
        .synonym = "log.flush.interval.messages", .synonym_min = 1,
        .synonym_dynamic = true, .listed = true, .field = NO_FIELD},
    [TOPIC_CONFIG_FLUSH_MS] = {
        .name = "flush.ms", .type = TOPIC_CONFIG_LONG, .min = 0,
        .default_value = LONG_MAX_TEXT, .synonym = "log.flush.interval.ms",
        .synonym_min = TOPIC_CONFIG_NO_MIN, .synonym_dynamic = true,
        .listed = true, .field = NO_FIELD},
    [TOPIC_CONFIG_FOLLOWER_THROTTLED_REPLICAS] = {
        .name = "follower.replication.throttled.replicas",
        .type = TOPIC_CONFIG_LIST, .default_value = "", .field = NO_FIELD},
    [TOPIC_CONFIG_INDEX_INTERVAL_BYTES] = {
        .name = "index.interval.bytes", .type = TOPIC_CONFIG_INT, .min = 0,
        .default_value = "4096", .synonym = "log.index.interval.bytes",
        .synonym_min = 0, .synonym_dynamic = true, .live = true,
        .listed = true, .field = FIELD(index_interval_bytes)},
    [TOPIC_CONFIG_LEADER_THROTTLED_REPLICAS] = {
        .name = "leader.replication.throttled.replicas",
        .type = TOPIC_CONFIG_LIST, .default_value = "", .field = NO_FIELD},
    [TOPIC_CONFIG_LOCAL_RETENTION_BYTES] = {
        .name = "local.retention.bytes", .type = TOPIC_CONFIG_LONG,
        .min = -2, .default_value = "-2",
        .synonym = "log.local.retention.bytes", .synonym_min = -2,
        .field = NO_FIELD},
    [TOPIC_CONFIG_LOCAL_RETENTION_MS] = {
        .name = "local.retention.ms", .type = TOPIC_CONFIG_LONG, .min = -2,
        .default_value = "-2", .synonym = "log.local.retention.ms",
        .synonym_min = -2, .field = NO_FIELD},
    [TOPIC_CONFIG_MAX_COMPACTION_LAG_MS] = {
        .name = "max.compaction.lag.ms", .type = TOPIC_CONFIG_LONG, .min = 1,
        .default_value = LONG_MAX_TEXT,
        .synonym = "log.cleaner.max.compaction.lag.ms", .synonym_min = 1,
        .synonym_dynamic = true, .live = true, .listed = true,
        .field = FIELD(max_compaction_lag_ms)},
    [TOPIC_CONFIG_MAX_MESSAGE_BYTES] = {
        .name = "max.message.bytes", .type = TOPIC_CONFIG_INT, .min = 0,
        .default_value = "1048588", .synonym = "message.max.bytes",
        .synonym_min = 0, .synonym_dynamic = true, .live = true,
        .listed = true, .field = FIELD(max_message_bytes)},
    [TOPIC_CONFIG_MESSAGE_DOWNCONVERSION_ENABLE] = {
        .name = "message.downconversion.enable",
        .type = TOPIC_CONFIG_BOOLEAN, .default_value = "true",
        .synonym = "log.message.downconversion.enable", .field = NO_FIELD},
    /* Kafka 3.8's default is unbounded; Cairn's broker has Kafka 4.0's
     * one hour (KIP-937), so that is what a topic gets. */
    [TOPIC_CONFIG_TIMESTAMP_AFTER_MAX_MS] = {
        .name = "message.timestamp.after.max.ms", .type = TOPIC_CONFIG_LONG,
        .min = 0, .default_value = "3600000",
        .synonym = "log.message.timestamp.after.max.ms", .synonym_min = 0,
        .synonym_dynamic = true, .live = true,
        .field = FIELD(timestamp_after_max_ms)},
    [TOPIC_CONFIG_TIMESTAMP_BEFORE_MAX_MS] = {
        .name = "message.timestamp.before.max.ms",
        .type = TOPIC_CONFIG_LONG, .min = 0, .default_value = LONG_MAX_TEXT,
        .synonym = "log.message.timestamp.before.max.ms", .synonym_min = 0,
        .synonym_dynamic = true, .live = true,
        .field = FIELD(timestamp_before_max_ms)},
    [TOPIC_CONFIG_TIMESTAMP_DIFFERENCE_MAX_MS] = {
        .name = "message.timestamp.difference.max.ms",
        .type = TOPIC_CONFIG_LONG, .min = 0, .default_value = LONG_MAX_TEXT,
        .synonym = "log.message.timestamp.difference.max.ms",
        .synonym_min = 0, .field = NO_FIELD},
    [TOPIC_CONFIG_TIMESTAMP_TYPE] = {
        .name = "message.timestamp.type", .type = TOPIC_CONFIG_STRING,
        .choices = "CreateTime, LogAppendTime", .default_value = "CreateTime",
        .synonym = "log.message.timestamp.type", .synonym_dynamic = true,
        .live = true, .listed = true, .field = FIELD(timestamp_type)},
    [TOPIC_CONFIG_MIN_CLEANABLE_DIRTY_RATIO] = {
        .name = "min.cleanable.dirty.ratio", .type = TOPIC_CONFIG_DOUBLE,
        .min = 0, .max = 1, .default_value = "0.5",
        .synonym = "log.cleaner.min.cleanable.ratio", .synonym_min = 0,
        .synonym_dynamic = true, .live = true, .listed = true,
        .field = FIELD(min_cleanable_dirty_ratio)},
    [TOPIC_CONFIG_MIN_COMPACTION_LAG_MS] = {
        .name = "min.compaction.lag.ms", .type = TOPIC_CONFIG_LONG, .min = 0,
        .default_value = "0", .synonym = "log.cleaner.min.compaction.lag.ms",
        .synonym_min = 0, .synonym_dynamic = true, .live = true,
        .listed = true, .field = FIELD(min_compaction_lag_ms)},
    [TOPIC_CONFIG_MIN_INSYNC_REPLICAS] = {
        .name = "min.insync.replicas", .type = TOPIC_CONFIG_INT, .min = 1,
        .default_value = "1", .synonym = "min.insync.replicas",
        .synonym_min = 1, .synonym_dynamic = true, .live = true,
        .listed = true, .field = FIELD(min_insync_replicas)},
    [TOPIC_CONFIG_PREALLOCATE] = {
        .name = "preallocate", .type = TOPIC_CONFIG_BOOLEAN,
        .default_value = "false", .synonym = "log.preallocate",
        .synonym_dynamic = true, .field = NO_FIELD},
    [TOPIC_CONFIG_REMOTE_STORAGE_ENABLE] = {
        .name = "remote.storage.enable", .type = TOPIC_CONFIG_BOOLEAN,
        .default_value = "false", .field = NO_FIELD},
    [TOPIC_CONFIG_RETENTION_BYTES] = {
        .name = "retention.bytes", .type = TOPIC_CONFIG_LONG,
        .min = TOPIC_CONFIG_NO_MIN, .default_value = "-1",
        .synonym = "log.retention.bytes",
        .synonym_min = TOPIC_CONFIG_NO_MIN, .synonym_dynamic = true,
        .live = true, .listed = true, .field = FIELD(retention_bytes)},
    [TOPIC_CONFIG_RETENTION_MS] = {
        .name = "retention.ms", .type = TOPIC_CONFIG_LONG, .min = -1,
        .default_value = "604800000", .synonym = "log.retention.ms",
        .synonym_min = TOPIC_CONFIG_NO_MIN, .synonym_dynamic = true,
        .live = true, .listed = true, .field = FIELD(retention_ms)},
    [TOPIC_CONFIG_SEGMENT_BYTES] = {
        .name = "segment.bytes", .type = TOPIC_CONFIG_INT,
        .min = LOG_SEGMENT_BYTES_MIN, .default_value = "1073741824",
        .synonym = "log.segment.bytes", .synonym_min = LOG_SEGMENT_BYTES_MIN,
        .synonym_dynamic = true, .live = true, .listed = true,
        .field = FIELD(segment_bytes)},
    [TOPIC_CONFIG_SEGMENT_INDEX_BYTES] = {
        .name = "segment.index.bytes", .type = TOPIC_CONFIG_INT, .min = 4,
        .default_value = "10485760", .synonym = "log.index.size.max.bytes",
        .synonym_min = 4, .synonym_dynamic = true, .listed = true,
        .field = NO_FIELD},
    [TOPIC_CONFIG_SEGMENT_JITTER_MS] = {
        .name = "segment.jitter.ms", .type = TOPIC_CONFIG_LONG, .min = 0,
        .default_value = "0", .synonym = "log.roll.jitter.ms",
        .synonym_min = 0, .field = NO_FIELD},
    [TOPIC_CONFIG_SEGMENT_MS] = {
        .name = "segment.ms", .type = TOPIC_CONFIG_LONG, .min = 1,
        .default_value = "604800000", .synonym = "log.roll.ms",
        .synonym_min = 1, .synonym_dynamic = true, .live = true,
        .listed = true, .field = FIELD(segment_ms)},
    [TOPIC_CONFIG_UNCLEAN_LEADER_ELECTION_ENABLE] = {
        .name = "unclean.leader.election.enable",
        .type = TOPIC_CONFIG_BOOLEAN, .default_value = "false",
        .synonym = "unclean.leader.election.enable",
        .synonym_dynamic = true, .live = true, .listed = true,
        .field = FIELD(unclean_leader_election_enable)},
};
_Static_assert(ARRAY_LEN(topic_config_defs) == TOPIC_CONFIG_COUNT,
               "one definition per topic_config_id");
_Static_assert(LOG_SEGMENT_BYTES_MIN == 14,
               "segment.bytes takes Kafka 3.8's lower bound");

const struct topic_config_def *topic_config_at(enum topic_config_id i)
{
    ASSERT((size_t)i < ARRAY_LEN(topic_config_defs));
    return &topic_config_defs[i];
}

const char *topic_config_name(enum topic_config_id i)
{
    return topic_config_at(i)->name;
}

const struct topic_config_def *topic_config_lookup(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(topic_config_defs); i++) {
        if (strcmp(topic_config_defs[i].name, name) == 0) {
            return &topic_config_defs[i];
        }
    }
    return NULL;
}

const struct topic_config_def *topic_config_by_synonym(const char *synonym)
{
    for (size_t i = 0; i < ARRAY_LEN(topic_config_defs); i++) {
        const char *s = topic_config_defs[i].synonym;
        if (s != NULL && strcmp(s, synonym) == 0) {
            return &topic_config_defs[i];
        }
    }
    return NULL;
}

/* --- Checking ------------------------------------------------------------ */

/* A reason that needs formatting: a bound, or the choices. */
#define TOPIC_CONFIG__WHY_BYTES 96

static bool topic_config_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\f' || c == '\r' || c == '\n';
}

/* The index of the len bytes at item among choices ("a, b"), or -1. */
static int topic_config_choice(const char *choices, const char *item,
                               size_t len)
{
    int i = 0;
    for (const char *p = choices; *p != '\0'; i++) {
        size_t n = strcspn(p, ",");
        if (n == len && memcmp(p, item, len) == 0) {
            return i;
        }
        p += n;
        while (*p == ',' || *p == ' ') {
            p++;
        }
    }
    return -1;
}

/* A parsed value: what the field holds. */
union topic_config_parsed {
    bool b;
    int32_t i;
    int64_t l;
    double d;
    uint32_t bits;
};

/* Kafka's Range reasons: x below min, or above max (max 0: none). */
static const char *topic_config_below(int64_t min,
                                      char why[TOPIC_CONFIG__WHY_BYTES])
{
    snprintf(why, TOPIC_CONFIG__WHY_BYTES, "Value must be at least %" PRId64,
             min);
    return why;
}

static const char *topic_config_above(int64_t max,
                                      char why[TOPIC_CONFIG__WHY_BYTES])
{
    snprintf(why, TOPIC_CONFIG__WHY_BYTES,
             "Value must be no more than %" PRId64, max);
    return why;
}

static const char *topic_config_bound(int64_t x, int64_t min, int64_t max,
                                      char why[TOPIC_CONFIG__WHY_BYTES])
{
    if (min != TOPIC_CONFIG_NO_MIN && x < min) {
        return topic_config_below(min, why);
    }
    return max != 0 && x > max ? topic_config_above(max, why) : NULL;
}

/* The items of list v (split at commas, each trimmed of blanks, as
 * Kafka's LIST splits "a , b"; "" is the empty list) by d's choices:
 * *bits, or the first bad item's reason with *bad and *bad_len pointing
 * at it. Without choices any list passes. */
static const char *topic_config_list(const struct topic_config_def *d,
                                     const char *v, uint32_t *bits,
                                     const char **bad, size_t *bad_len,
                                     char why[TOPIC_CONFIG__WHY_BYTES])
{
    *bits = 0;
    if (d->choices == NULL || *v == '\0') {
        return NULL;
    }
    for (const char *p = v;;) {
        size_t n = strcspn(p, ",");
        const char *item = p;
        size_t len = n;
        while (len > 0 && topic_config_blank(*item)) {
            item++;
            len--;
        }
        while (len > 0 && topic_config_blank(item[len - 1])) {
            len--;
        }
        int k = topic_config_choice(d->choices, item, len);
        if (k < 0) {
            *bad = item;
            *bad_len = len;
            snprintf(why, TOPIC_CONFIG__WHY_BYTES, "String must be one of: %s",
                     d->choices);
            return why;
        }
        *bits |= 1u << k;
        if (p[n] == '\0') {
            return NULL;
        }
        p += n + 1;
    }
}

/* Kafka's ConfigDef reason why v is no value of d (its type, then its
 * bound or choices), or NULL with *out parsed. A list's bad item is
 * *bad (else v itself). */
static const char *topic_config_reason(const struct topic_config_def *d,
                                       bool synonym, const char *v,
                                       union topic_config_parsed *out,
                                       const char **bad, size_t *bad_len,
                                       char why[TOPIC_CONFIG__WHY_BYTES])
{
    int64_t min = synonym ? d->synonym_min : d->min;
    *bad = v;
    *bad_len = strlen(v);
    switch (d->type) {
    case TOPIC_CONFIG_BOOLEAN:
        return config_value_bool(v, &out->b)
                   ? NULL
                   : "Expected value to be either true or false";
    case TOPIC_CONFIG_INT:
        if (!config_value_int(v, &out->i)) {
            return "Not a number of type INT";
        }
        return topic_config_bound(out->i, min, d->max, why);
    case TOPIC_CONFIG_LONG:
        if (!config_value_long(v, &out->l)) {
            return "Not a number of type LONG";
        }
        return topic_config_bound(out->l, min, d->max, why);
    case TOPIC_CONFIG_DOUBLE:
        if (!config_value_double(v, &out->d)) {
            return "Not a number of type DOUBLE";
        }
        if (min != TOPIC_CONFIG_NO_MIN && out->d < (double)min) {
            return topic_config_below(min, why);
        }
        return d->max != 0 && out->d > (double)d->max
                   ? topic_config_above(d->max, why)
                   : NULL;
    case TOPIC_CONFIG_STRING:
        out->i = d->choices != NULL
                     ? topic_config_choice(d->choices, v, strlen(v))
                     : 0;
        if (out->i < 0) {
            snprintf(why, TOPIC_CONFIG__WHY_BYTES, "String must be one of: %s",
                     d->choices);
            return why;
        }
        return NULL;
    case TOPIC_CONFIG_LIST:
        return topic_config_list(d, v, &out->bits, bad, bad_len, why);
    }
    ASSERT(false);
    return NULL;
}

static int16_t topic_config_check_parsed(const struct topic_config_def *d,
                                         const char *name, bool synonym,
                                         const char *value,
                                         union topic_config_parsed *out,
                                         char *msg)
{
    msg[0] = '\0';
    if (strlen(value) > META_CONFIG_VALUE_BYTES_MAX) {
        snprintf(msg, TOPIC_CONFIG_MESSAGE_BYTES,
                 "Invalid value for configuration %s: longer than %u bytes",
                 name, META_CONFIG_VALUE_BYTES_MAX);
        return KAFKA_ERROR_INVALID_CONFIG;
    }
    char buf[TOPIC_CONFIG__WHY_BYTES];
    const char *bad = NULL;
    size_t bad_len = 0;
    const char *why = topic_config_reason(d, synonym, value, out, &bad,
                                          &bad_len, buf);
    if (why == NULL) {
        return KAFKA_ERROR_NONE;
    }
    int shown = bad_len < 64 ? (int)bad_len : 64;
    snprintf(msg, TOPIC_CONFIG_MESSAGE_BYTES,
             "Invalid value %.*s for configuration %s: %s", shown, bad, name,
             why);
    return KAFKA_ERROR_INVALID_CONFIG;
}

int16_t topic_config_check_def(const struct topic_config_def *d,
                               const char *name, bool synonym,
                               const char *value,
                               char msg[TOPIC_CONFIG_MESSAGE_BYTES])
{
    union topic_config_parsed x = {0};
    return topic_config_check_parsed(d, name, synonym, value, &x, msg);
}

int16_t topic_config_check(const char *name, const char *value,
                           char msg[TOPIC_CONFIG_MESSAGE_BYTES])
{
    const struct topic_config_def *d = topic_config_lookup(name);
    if (d == NULL) {
        snprintf(msg, TOPIC_CONFIG_MESSAGE_BYTES,
                 "Unknown topic config name: %.128s", name);
        return KAFKA_ERROR_INVALID_CONFIG;
    }
    return topic_config_check_def(d, d->name, false /* synonym */, value,
                                  msg);
}

/* --- Typed values -------------------------------------------------------- */

static void topic_config_store(struct topic_config_values *v,
                               const struct topic_config_def *d,
                               const union topic_config_parsed *x)
{
    ASSERT(d->field.present);
    char *f = (char *)v + d->field.offset;
    switch (d->type) {
    case TOPIC_CONFIG_BOOLEAN:
        memcpy(f, &x->b, sizeof x->b);
        return;
    case TOPIC_CONFIG_INT:
    case TOPIC_CONFIG_STRING:
        memcpy(f, &x->i, sizeof x->i);
        return;
    case TOPIC_CONFIG_LONG:
        memcpy(f, &x->l, sizeof x->l);
        return;
    case TOPIC_CONFIG_DOUBLE:
        memcpy(f, &x->d, sizeof x->d);
        return;
    case TOPIC_CONFIG_LIST:
        ASSERT(d->choices != NULL);
        memcpy(f, &x->bits, sizeof x->bits);
        return;
    }
}

int16_t topic_config_set(struct topic_config_values *v,
                         const struct topic_config_def *d, bool synonym,
                         const char *value,
                         char msg[TOPIC_CONFIG_MESSAGE_BYTES])
{
    union topic_config_parsed x = {0};
    const char *name = synonym ? d->synonym : d->name;
    ASSERT(name != NULL);
    int16_t err = topic_config_check_parsed(d, name, synonym, value, &x, msg);
    if (err == KAFKA_ERROR_NONE && d->field.present) {
        topic_config_store(v, d, &x);
    }
    return err;
}

void topic_config_values_default(struct topic_config_values *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < ARRAY_LEN(topic_config_defs); i++) {
        const struct topic_config_def *d = &topic_config_defs[i];
        char msg[TOPIC_CONFIG_MESSAGE_BYTES];
        int16_t err = topic_config_set(out, d, false /* synonym */,
                                       d->default_value, msg);
        ASSERT(err == KAFKA_ERROR_NONE); /* the table is wrong */
    }
}

/* The text of bits: the choices whose bits are set, joined by ",". */
static void topic_config_format_list(const char *choices, uint32_t bits,
                                     char *buf, size_t len)
{
    size_t used = 0;
    int i = 0;
    buf[0] = '\0';
    for (const char *p = choices; *p != '\0'; i++) {
        size_t n = strcspn(p, ",");
        if ((bits & (1u << i)) != 0 && used < len) {
            int w = snprintf(buf + used, len - used, "%s%.*s",
                             used > 0 ? "," : "", (int)n, p);
            used += w > 0 ? (size_t)w : 0;
        }
        p += n;
        while (*p == ',' || *p == ' ') {
            p++;
        }
    }
}

/* The text of choice k of choices into buf. */
static void topic_config_format_choice(const char *choices, int32_t k,
                                       char *buf, size_t len)
{
    topic_config_format_list(choices, 1u << k, buf, len);
}

bool topic_config_format(const struct topic_config_values *v,
                         const struct topic_config_def *d, char *buf,
                         size_t len)
{
    if (!d->field.present) {
        return false;
    }
    const char *f = (const char *)v + d->field.offset;
    union topic_config_parsed x = {0};
    switch (d->type) {
    case TOPIC_CONFIG_BOOLEAN:
        memcpy(&x.b, f, sizeof x.b);
        snprintf(buf, len, "%s", x.b ? "true" : "false");
        break;
    case TOPIC_CONFIG_INT:
        memcpy(&x.i, f, sizeof x.i);
        snprintf(buf, len, "%" PRId32, x.i);
        break;
    case TOPIC_CONFIG_LONG:
        memcpy(&x.l, f, sizeof x.l);
        snprintf(buf, len, "%" PRId64, x.l);
        break;
    case TOPIC_CONFIG_DOUBLE:
        memcpy(&x.d, f, sizeof x.d);
        snprintf(buf, len, "%g", x.d);
        break;
    case TOPIC_CONFIG_STRING:
        memcpy(&x.i, f, sizeof x.i);
        topic_config_format_choice(d->choices, x.i, buf, len);
        break;
    case TOPIC_CONFIG_LIST:
        memcpy(&x.bits, f, sizeof x.bits);
        topic_config_format_list(d->choices, x.bits, buf, len);
        break;
    }
    return true;
}

/* --- Resolving a topic's settings ---------------------------------------- */

const char *topic_config_value_of(const struct meta_image *img,
                                  int32_t broker_id,
                                  const struct meta_topic *t,
                                  const struct topic_config_def *d,
                                  enum topic_config_origin *origin)
{
    const char *v = t != NULL ? meta_topic_config(t, d->name) : NULL;
    if (v != NULL) {
        *origin = TOPIC_CONFIG_FROM_TOPIC;
        return v;
    }
    if (img == NULL || d->synonym == NULL) {
        return NULL;
    }
    v = meta_broker_config(img, broker_id, d->synonym);
    if (v != NULL) {
        *origin = TOPIC_CONFIG_FROM_BROKER;
        return v;
    }
    v = meta_broker_config(img, META_BROKER_DEFAULT, d->synonym);
    if (v != NULL) {
        *origin = TOPIC_CONFIG_FROM_DEFAULT_BROKER;
    }
    return v;
}

void topic_config_resolve(const struct meta_image *img, int32_t broker_id,
                          const struct meta_topic *t,
                          const struct topic_config_values *base,
                          struct topic_config_values *out,
                          topic_config_bad_cb bad_cb, void *arg)
{
    *out = *base;
    for (size_t i = 0; i < ARRAY_LEN(topic_config_defs); i++) {
        const struct topic_config_def *d = &topic_config_defs[i];
        enum topic_config_origin origin = TOPIC_CONFIG_FROM_TOPIC;
        const char *v = d->field.present
                            ? topic_config_value_of(img, broker_id, t, d,
                                                    &origin)
                            : NULL;
        if (v == NULL) {
            continue;
        }
        union topic_config_parsed x = {0};
        char buf[TOPIC_CONFIG__WHY_BYTES];
        const char *bad = NULL;
        size_t bad_len = 0;
        const char *why = strlen(v) > META_CONFIG_VALUE_BYTES_MAX
                              ? "is too long"
                              : topic_config_reason(
                                    d, origin != TOPIC_CONFIG_FROM_TOPIC, v,
                                    &x, &bad, &bad_len, buf);
        if (why == NULL) {
            topic_config_store(out, d, &x);
        } else if (bad_cb != NULL) {
            bad_cb(arg, d, v, why);
        }
    }
}
