/* IncrementalAlterConfigs and AlterConfigs planned against the image, and
 * CreateTopics' check of a new topic's configs (controller/plan_configs.h).
 * The definitions are Kafka 3.8's LogConfig: type, lower bound, allowed
 * strings; values parse by common/config.h's strict parsers, as brokers
 * read them. Every topic config is dynamic in Kafka, so every one may be
 * altered; brokers follow the change from the metadata image. Pure; loop
 * thread of the active controller. */
#include "controller/plan_configs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "controller/plan_internal.h"

enum plan_config_type {
    PLAN_T_LONG,
    PLAN_T_INT,
    PLAN_T_BOOL,
    PLAN_T_DOUBLE, /* in [0, 1] */
    PLAN_T_ENUM,   /* one of choices */
    PLAN_T_LIST,   /* comma-separated; of choices unless NULL */
};

struct plan_config_def {
    const char *name;
    enum plan_config_type type;
    int64_t min;
    const char *choices; /* "a, b, c" as Kafka prints them */
    const char *fallback; /* Kafka's default, for APPEND/SUBTRACT */
};

#define NOMIN INT64_MIN
static const struct plan_config_def plan_topic_defs[] = {
    {"cleanup.policy", PLAN_T_LIST, 0, "compact, delete", "delete"},
    {"compression.type", PLAN_T_ENUM, 0,
     "uncompressed, zstd, lz4, snappy, gzip, producer", "producer"},
    {"delete.retention.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"file.delete.delay.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"flush.messages", PLAN_T_LONG, 1, NULL, NULL},
    {"flush.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"follower.replication.throttled.replicas", PLAN_T_LIST, 0, NULL, ""},
    {"index.interval.bytes", PLAN_T_INT, 0, NULL, NULL},
    {"leader.replication.throttled.replicas", PLAN_T_LIST, 0, NULL, ""},
    {"local.retention.bytes", PLAN_T_LONG, -2, NULL, NULL},
    {"local.retention.ms", PLAN_T_LONG, -2, NULL, NULL},
    {"max.compaction.lag.ms", PLAN_T_LONG, 1, NULL, NULL},
    {"max.message.bytes", PLAN_T_INT, 0, NULL, NULL},
    {"message.downconversion.enable", PLAN_T_BOOL, 0, NULL, NULL},
    {"message.timestamp.after.max.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"message.timestamp.before.max.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"message.timestamp.difference.max.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"message.timestamp.type", PLAN_T_ENUM, 0, "CreateTime, LogAppendTime",
     NULL},
    {"min.cleanable.dirty.ratio", PLAN_T_DOUBLE, 0, NULL, NULL},
    {"min.compaction.lag.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"min.insync.replicas", PLAN_T_INT, 1, NULL, NULL},
    {"preallocate", PLAN_T_BOOL, 0, NULL, NULL},
    {"remote.storage.enable", PLAN_T_BOOL, 0, NULL, NULL},
    {"retention.bytes", PLAN_T_LONG, NOMIN, NULL, NULL},
    {"retention.ms", PLAN_T_LONG, -1, NULL, NULL},
    {"segment.bytes", PLAN_T_INT, 14, NULL, NULL},
    {"segment.index.bytes", PLAN_T_INT, 4, NULL, NULL},
    {"segment.jitter.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"segment.ms", PLAN_T_LONG, 1, NULL, NULL},
    {"unclean.leader.election.enable", PLAN_T_BOOL, 0, NULL, NULL},
};

/* The broker configs Kafka changes without a restart
 * (DynamicBrokerConfig, DynamicLogConfig, DynamicReplicationConfig) that
 * Cairn knows: the brokers' defaults of the topic configs, and the
 * replication throttles. */
static const struct plan_config_def plan_broker_defs[] = {
    {"compression.type", PLAN_T_ENUM, 0,
     "uncompressed, zstd, lz4, snappy, gzip, producer", "producer"},
    {"follower.replication.throttled.rate", PLAN_T_LONG, 0, NULL, NULL},
    {"leader.replication.throttled.rate", PLAN_T_LONG, 0, NULL, NULL},
    {"log.cleaner.delete.retention.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"log.cleaner.max.compaction.lag.ms", PLAN_T_LONG, 1, NULL, NULL},
    {"log.cleaner.min.cleanable.ratio", PLAN_T_DOUBLE, 0, NULL, NULL},
    {"log.cleaner.min.compaction.lag.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"log.cleanup.policy", PLAN_T_LIST, 0, "compact, delete", "delete"},
    {"log.flush.interval.messages", PLAN_T_LONG, 1, NULL, NULL},
    {"log.flush.interval.ms", PLAN_T_LONG, NOMIN, NULL, NULL},
    {"log.index.interval.bytes", PLAN_T_INT, 0, NULL, NULL},
    {"log.index.size.max.bytes", PLAN_T_INT, 4, NULL, NULL},
    {"log.message.timestamp.after.max.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"log.message.timestamp.before.max.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"log.message.timestamp.type", PLAN_T_ENUM, 0,
     "CreateTime, LogAppendTime", NULL},
    {"log.preallocate", PLAN_T_BOOL, 0, NULL, NULL},
    {"log.retention.bytes", PLAN_T_LONG, NOMIN, NULL, NULL},
    {"log.retention.ms", PLAN_T_LONG, NOMIN, NULL, NULL},
    {"log.roll.ms", PLAN_T_LONG, 1, NULL, NULL},
    {"log.segment.bytes", PLAN_T_INT, 14, NULL, NULL},
    {"log.segment.delete.delay.ms", PLAN_T_LONG, 0, NULL, NULL},
    {"message.max.bytes", PLAN_T_INT, 0, NULL, NULL},
    {"min.insync.replicas", PLAN_T_INT, 1, NULL, NULL},
    {"unclean.leader.election.enable", PLAN_T_BOOL, 0, NULL, NULL},
};

/* Broker configs Kafka knows but changes only with a restart. */
static const char *const plan_broker_static[] = {
    "auto.create.topics.enable", "broker.id", "controller.quorum.voters",
    "default.replication.factor", "listeners", "log.dir", "log.dirs",
    "log.retention.check.interval.ms", "log.retention.hours",
    "log.roll.hours", "node.id", "num.partitions",
    "offsets.retention.minutes", "offsets.topic.num.partitions",
    "offsets.topic.replication.factor", "process.roles",
    "replica.lag.time.max.ms",
};

static const struct plan_config_def *
plan_def_in(const struct plan_config_def *defs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(defs[i].name, name) == 0) {
            return &defs[i];
        }
    }
    return NULL;
}

static const struct plan_config_def *plan_topic_def(const char *name)
{
    return plan_def_in(plan_topic_defs, ARRAY_LEN(plan_topic_defs), name);
}

/* A reason that needs formatting: a bound, or the choices. */
#define PLAN__WHY_BYTES 96

/* Why v is no value of type d->type: Kafka's ConfigDef reason, or NULL
 * when it parses by the shared strict parsers (common/config.h); *x holds
 * an INT or LONG, *r a DOUBLE. */
static const char *plan_type_error(const struct plan_config_def *d,
                                   const char *v, int64_t *x, double *r)
{
    int32_t i = 0;
    bool b = false;
    switch (d->type) {
    case PLAN_T_LONG:
        return config_value_long(v, x) ? NULL : "Not a number of type LONG";
    case PLAN_T_INT:
        if (!config_value_int(v, &i)) {
            return "Not a number of type INT";
        }
        *x = i;
        return NULL;
    case PLAN_T_BOOL:
        return config_value_bool(v, &b)
                   ? NULL
                   : "Expected value to be either true or false";
    case PLAN_T_DOUBLE:
        return config_value_double(v, r) ? NULL
                                         : "Not a number of type DOUBLE";
    case PLAN_T_ENUM:
    case PLAN_T_LIST:
        return NULL;
    }
    return NULL;
}

/* Kafka's ConfigDef reason why v is no value of d (its type first, then
 * its bound or choices), in buf if it needs one; NULL when v is fine. */
static const char *plan_value_error(const struct plan_config_def *d,
                                    const char *v, char buf[PLAN__WHY_BYTES])
{
    int64_t x = 0;
    double r = 0.0;
    const char *why = plan_type_error(d, v, &x, &r);
    if (why != NULL) {
        return why;
    }
    if ((d->type == PLAN_T_LONG || d->type == PLAN_T_INT) &&
        d->min != NOMIN && x < d->min) {
        snprintf(buf, PLAN__WHY_BYTES, "Value must be at least %lld",
                 (long long)d->min);
        return buf;
    }
    if (d->type == PLAN_T_DOUBLE && (r < 0.0 || r > 1.0)) {
        return r < 0.0 ? "Value must be at least 0.0"
                       : "Value must be no more than 1.0";
    }
    if ((d->type == PLAN_T_ENUM &&
         !config_value_one_of(v, strlen(v), d->choices)) ||
        (d->type == PLAN_T_LIST && d->choices != NULL &&
         !config_value_list_of(v, d->choices))) {
        snprintf(buf, PLAN__WHY_BYTES, "String must be one of: %s",
                 d->choices);
        return buf;
    }
    return NULL;
}

/* Kafka's ConfigException message for one bad value. */
static int16_t plan_check_value(const struct plan_config_def *d,
                                const char *v, char *msg)
{
    char buf[PLAN__WHY_BYTES];
    const char *why = plan_value_error(d, v, buf);
    if (why == NULL) {
        return KAFKA_ERROR_NONE;
    }
    snprintf(msg, PLAN_CONFIG_MESSAGE_BYTES,
             "Invalid value %.64s for configuration %s: %s", v, d->name, why);
    return KAFKA_ERROR_INVALID_CONFIG;
}

static int16_t plan_config_check(const struct plan_config_def *d,
                                 const char *value,
                                 char msg[PLAN_CONFIG_MESSAGE_BYTES])
{
    const char *name = d->name;
    msg[0] = '\0';
    if (strlen(value) > META_CONFIG_VALUE_BYTES_MAX) {
        snprintf(msg, PLAN_CONFIG_MESSAGE_BYTES,
                 "Invalid value for configuration %s: longer than %u bytes",
                 name, META_CONFIG_VALUE_BYTES_MAX);
        return KAFKA_ERROR_INVALID_CONFIG;
    }
    return plan_check_value(d, value, msg);
}

int16_t plan_topic_config_check(const char *name, const char *value,
                                char msg[PLAN_CONFIG_MESSAGE_BYTES])
{
    const struct plan_config_def *d = plan_topic_def(name);
    if (d == NULL) {
        snprintf(msg, PLAN_CONFIG_MESSAGE_BYTES,
                 "Unknown topic config name: %.128s", name);
        return KAFKA_ERROR_INVALID_CONFIG;
    }
    return plan_config_check(d, value, msg);
}

int16_t plan_topic_configs_check(const struct plan_config *configs,
                                 size_t n,
                                 char msg[PLAN_CONFIG_MESSAGE_BYTES])
{
    msg[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *name = configs[i].name != NULL ? configs[i].name : "";
        if (plan_topic_def(name) != NULL && configs[i].value == NULL) {
            snprintf(msg, PLAN_CONFIG_MESSAGE_BYTES,
                     "Null value not supported for topic configs: %s", name);
            return KAFKA_ERROR_INVALID_CONFIG;
        }
        int16_t err = plan_topic_config_check(
            name, configs[i].value != NULL ? configs[i].value : "", msg);
        if (err != KAFKA_ERROR_NONE) {
            return err;
        }
        /* Past as many entries as there are names, all known and none
         * repeated so far, this one is a repeat: the loop stays short. */
        bool repeat = i >= ARRAY_LEN(plan_topic_defs);
        for (size_t j = 0; !repeat && j < i; j++) {
            repeat = strcmp(configs[j].name, name) == 0;
        }
        if (repeat) {
            snprintf(msg, PLAN_CONFIG_MESSAGE_BYTES, "%s",
                     "Error due to duplicate config keys");
            return KAFKA_ERROR_INVALID_CONFIG;
        }
    }
    return KAFKA_ERROR_NONE;
}

/* --- Planning ------------------------------------------------------------ */

#define PLAN_DEFS_MAX 32
_Static_assert(ARRAY_LEN(plan_topic_defs) <= PLAN_DEFS_MAX, "topic defs");
_Static_assert(ARRAY_LEN(plan_broker_defs) <= PLAN_DEFS_MAX, "broker defs");

/* The resource being altered: a topic, or a broker config set. */
struct plan_target {
    const struct meta_image *img;
    const struct meta_topic *t;     /* NULL for a broker resource */
    int32_t broker;                 /* or META_BROKER_DEFAULT */
    const char *name;               /* resource name, for records */
    const struct plan_config_def *defs;
    size_t n_defs;
    const struct meta_config_entry *entries; /* what it sets now */
    size_t n_entries;
};

/* A resource's configs after the request, one slot per definition. */
struct plan_config_state {
    const char *want[PLAN_DEFS_MAX]; /* NULL: not set */
    char lists[PLAN_DEFS_MAX][META_CONFIG_VALUE_BYTES_MAX + 1];
};

static const char *plan_current(const struct plan_target *x,
                                const char *name)
{
    return x->t != NULL ? meta_topic_config(x->t, name)
                        : meta_broker_config(x->img, x->broker, name);
}

__attribute__((format(printf, 3, 4)))
static int16_t plan_fail(struct plan_config_result *r, int16_t error,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r->error = error;
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
    return error;
}

/* Does list (comma-separated) hold item? */
static bool plan_list_has(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");
        if (len == n && memcmp(p, item, n) == 0) {
            return true;
        }
        p += len + (p[len] == ',');
    }
    return false;
}

/* APPEND or SUBTRACT the items of value to or from base into out. */
static bool plan_list_edit(const char *base, const char *value, bool append,
                           char *out)
{
    size_t cap = META_CONFIG_VALUE_BYTES_MAX + 1;
    size_t len = 0;
    out[0] = '\0';
    for (int pass = 0; pass < 2; pass++) {
        const char *src = pass == 0 ? base : value;
        if (pass == 1 && !append) {
            break;
        }
        for (const char *p = src; *p != '\0';) {
            size_t n = strcspn(p, ",");
            char item[META_CONFIG_VALUE_BYTES_MAX + 1];
            memcpy(item, p, n);
            item[n] = '\0';
            p += n + (p[n] == ',');
            if (n == 0 || plan_list_has(out, item) ||
                (!append && plan_list_has(value, item))) {
                continue;
            }
            if (len + n + 2 > cap) {
                return false;
            }
            len += (size_t)snprintf(out + len, cap - len, "%s%s",
                                    len > 0 ? "," : "", item);
        }
    }
    return true;
}

static int16_t plan_apply_op(const struct plan_target *x,
                             const struct plan_config_op *op, size_t d,
                             struct plan_config_state *st,
                             struct plan_config_result *r)
{
    const struct plan_config_def *def = &x->defs[d];
    if (op->op == PLAN_CONFIG_DELETE) {
        st->want[d] = NULL;
        return KAFKA_ERROR_NONE;
    }
    if (op->value == NULL) {
        return plan_fail(r, KAFKA_ERROR_INVALID_REQUEST,
                         "Null value not supported for : %s", def->name);
    }
    if (op->op == PLAN_CONFIG_SET) {
        st->want[d] = op->value;
        r->error = plan_config_check(def, op->value, r->message);
        return r->error;
    }
    if (def->type != PLAN_T_LIST) {
        return plan_fail(r, KAFKA_ERROR_INVALID_CONFIG,
                         "Can't %s to key %s because its type is not LIST.",
                         op->op == PLAN_CONFIG_APPEND ? "APPEND" : "SUBTRACT",
                         def->name);
    }
    const char *cur = plan_current(x, def->name);
    const char *base = cur != NULL ? cur : def->fallback;
    if (!plan_list_edit(base, op->value, op->op == PLAN_CONFIG_APPEND,
                        st->lists[d])) {
        return plan_fail(r, KAFKA_ERROR_INVALID_CONFIG,
                         "Invalid value for configuration %s: too long",
                         def->name);
    }
    st->want[d] = st->lists[d];
    r->error = plan_config_check(def, st->want[d], r->message);
    return r->error;
}

static bool plan_ops_repeat(const struct plan_config_resource *res)
{
    for (size_t i = 0; i < res->n_ops; i++) {
        for (size_t j = 0; j < i; j++) {
            const char *a = res->ops[i].name ? res->ops[i].name : "";
            const char *b = res->ops[j].name ? res->ops[j].name : "";
            if (strcmp(a, b) == 0) {
                return true;
            }
        }
    }
    return false;
}

static bool plan_broker_static_name(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(plan_broker_static); i++) {
        if (strcmp(plan_broker_static[i], name) == 0) {
            return true;
        }
    }
    return false;
}

/* Kafka checks a broker resource's keys before anything else: one it
 * cannot change at runtime refuses the whole resource. */
static int16_t plan_broker_keys(const struct plan_config_resource *res,
                                struct plan_config_result *r)
{
    for (size_t i = 0; i < res->n_ops; i++) {
        const char *name = res->ops[i].name ? res->ops[i].name : "";
        if (plan_broker_static_name(name)) {
            return plan_fail(r, KAFKA_ERROR_INVALID_REQUEST,
                             "Cannot update these configs dynamically: "
                             "Set(%.128s)",
                             name);
        }
    }
    return KAFKA_ERROR_NONE;
}

/* Fills st from the request; the error (and message) in r. */
static int16_t plan_state(const struct plan_target *x,
                          const struct plan_config_resource *res,
                          bool replace, struct plan_config_state *st,
                          struct plan_config_result *r)
{
    for (size_t d = 0; d < x->n_defs; d++) {
        st->want[d] = replace ? NULL : plan_current(x, x->defs[d].name);
    }
    if (plan_ops_repeat(res)) {
        return plan_fail(r, KAFKA_ERROR_INVALID_REQUEST, "%s",
                         "Error due to duplicate config keys");
    }
    if (x->t == NULL && plan_broker_keys(res, r) != KAFKA_ERROR_NONE) {
        return r->error;
    }
    for (size_t i = 0; i < res->n_ops; i++) {
        const struct plan_config_op *op = &res->ops[i];
        const char *name = op->name != NULL ? op->name : "";
        if (op->op < PLAN_CONFIG_SET || op->op > PLAN_CONFIG_SUBTRACT ||
            (replace && op->op != PLAN_CONFIG_SET)) {
            return plan_fail(r, KAFKA_ERROR_INVALID_REQUEST,
                             "Unknown operation for config %.128s", name);
        }
        const struct plan_config_def *def =
            plan_def_in(x->defs, x->n_defs, name);
        if (def == NULL) {
            return plan_fail(r, KAFKA_ERROR_INVALID_CONFIG,
                             "Unknown %s config name: %.128s",
                             x->t != NULL ? "topic" : "broker", name);
        }
        if (plan_apply_op(x, op, (size_t)(def - x->defs), st, r) !=
            KAFKA_ERROR_NONE) {
            return r->error;
        }
    }
    return KAFKA_ERROR_NONE;
}

static int plan_push_config(struct plan_records *out,
                            const struct plan_target *x, const char *name,
                            const char *value)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_CONFIG;
    rec.u.config.resource_type =
        x->t != NULL ? META_RESOURCE_TOPIC : META_RESOURCE_BROKER;
    snprintf(rec.u.config.resource_name, sizeof rec.u.config.resource_name,
             "%s", x->name);
    snprintf(rec.u.config.name, sizeof rec.u.config.name, "%s", name);
    rec.u.config.has_value = value != NULL;
    if (value != NULL) {
        snprintf(rec.u.config.value, sizeof rec.u.config.value, "%s", value);
    }
    return plan_records_push(out, &rec);
}

static bool plan_same(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* The records taking x to st: one per changed key, and in replace mode a
 * delete of any key outside the definitions. */
static int plan_records_of(const struct plan_target *x,
                           const struct plan_config_state *st, bool replace,
                           struct plan_records *out,
                           struct plan_config_result *r)
{
    size_t need = 0;
    for (size_t d = 0; d < x->n_defs; d++) {
        need += !plan_same(st->want[d], plan_current(x, x->defs[d].name));
    }
    for (size_t i = 0; replace && i < x->n_entries; i++) {
        need += plan_def_in(x->defs, x->n_defs, x->entries[i].name) == NULL;
    }
    if (need > plan_room(out)) {
        plan_fail(r, KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED, "%s",
                  "Too many config changes in one request; retry");
        return RC_OK;
    }
    int rv = RC_OK;
    for (size_t d = 0; rv == RC_OK && d < x->n_defs; d++) {
        const char *name = x->defs[d].name;
        if (!plan_same(st->want[d], plan_current(x, name))) {
            rv = plan_push_config(out, x, name, st->want[d]);
        }
    }
    for (size_t i = 0; rv == RC_OK && replace && i < x->n_entries; i++) {
        if (plan_def_in(x->defs, x->n_defs, x->entries[i].name) == NULL) {
            rv = plan_push_config(out, x, x->entries[i].name, NULL);
        }
    }
    return rv;
}

/* Resolves res[i] into x; false (r says why) when it names nothing. */
static bool plan_target_of(const struct meta_image *img,
                           const struct plan_config_resource *res,
                           struct plan_target *x,
                           struct plan_config_result *r)
{
    const char *name = res->name != NULL ? res->name : "";
    *x = (struct plan_target){.img = img, .name = name};
    if (res->type == META_RESOURCE_TOPIC) {
        x->t = meta_image_topic(img, name);
        if (x->t == NULL) {
            plan_fail(r, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION,
                      "The topic '%.128s' does not exist.", name);
            return false;
        }
        x->defs = plan_topic_defs;
        x->n_defs = ARRAY_LEN(plan_topic_defs);
        x->entries = x->t->configs;
        x->n_entries = x->t->n_configs;
        return true;
    }
    if (res->type != META_RESOURCE_BROKER) {
        plan_fail(r, KAFKA_ERROR_INVALID_REQUEST,
                  "Unexpected resource type for %.128s", name);
        return false;
    }
    if (!meta_broker_resource(name, &x->broker)) {
        plan_fail(r, KAFKA_ERROR_INVALID_REQUEST,
                  "Invalid broker name '%.128s'", name);
        return false;
    }
    x->defs = plan_broker_defs;
    x->n_defs = ARRAY_LEN(plan_broker_defs);
    for (size_t i = 0; i < img->n_broker_configs; i++) {
        if (img->broker_configs[i].broker == x->broker) {
            x->entries = img->broker_configs[i].configs;
            x->n_entries = img->broker_configs[i].n_configs;
        }
    }
    return true;
}

/* Does the resource of res[i] appear elsewhere in res[0..n)? */
static bool plan_resource_repeats(const struct plan_config_resource *res,
                                  size_t n, size_t i)
{
    const char *a = res[i].name != NULL ? res[i].name : "";
    for (size_t j = 0; j < n; j++) {
        const char *b = res[j].name != NULL ? res[j].name : "";
        if (j != i && res[j].type == res[i].type && strcmp(a, b) == 0) {
            return true;
        }
    }
    return false;
}

int plan_alter_configs(const struct meta_image *img,
                       const struct plan_config_resource *res, size_t n,
                       bool replace, bool validate_only,
                       struct plan_records *out,
                       struct plan_config_result *results)
{
    size_t n0 = out->n;
    bool more0 = out->more;
    struct plan_config_state *st = malloc(sizeof *st);
    if (st == NULL) {
        return RC_NOMEM;
    }
    int rv = RC_OK;
    for (size_t i = 0; rv == RC_OK && i < n; i++) {
        struct plan_config_result *r = &results[i];
        memset(r, 0, sizeof *r);
        struct plan_target x;
        if (plan_resource_repeats(res, n, i)) {
            plan_fail(r, KAFKA_ERROR_INVALID_REQUEST, "%s",
                      "Each resource must appear at most once.");
            continue;
        }
        if (!plan_target_of(img, &res[i], &x, r) ||
            plan_state(&x, &res[i], replace, st, r) != KAFKA_ERROR_NONE ||
            validate_only) {
            continue;
        }
        rv = plan_records_of(&x, st, replace, out, r);
    }
    free(st);
    return plan_undo_on_error(out, rv, n0, more0);
}
