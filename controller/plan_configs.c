/* IncrementalAlterConfigs and AlterConfigs planned against the image, and
 * CreateTopics' check of a new topic's configs (controller/plan_configs.h).
 * The definitions and checks of topic configs and their broker synonyms
 * are the registry's (common/topic_config.h), which brokers read values
 * with too. Every topic config is dynamic in Kafka, so every one may be
 * altered; brokers follow the change from the metadata image. Pure; loop
 * thread of the active controller. */
#include "controller/plan_configs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/topic_config.h"
#include "common/assert.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "controller/plan_internal.h"

/* A key a resource may set: a topic config by its name, a topic
 * config's broker synonym, or a replication throttle rate. */
struct plan_key {
    const char *name;
    const struct topic_config_def *def; /* type, bounds, default */
    bool synonym;                       /* name is def's synonym */
};

/* The broker configs Kafka changes without a restart that are no topic
 * config's synonym: the replication throttles (KIP-73). */
static const struct topic_config_def plan_throttle_defs[] = {
    {.name = "follower.replication.throttled.rate",
     .type = TOPIC_CONFIG_LONG, .min = 0,
     .default_value = "9223372036854775807"},
    {.name = "leader.replication.throttled.rate", .type = TOPIC_CONFIG_LONG,
     .min = 0, .default_value = "9223372036854775807"},
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

#define PLAN_DEFS_MAX 32
_Static_assert(TOPIC_CONFIG_COUNT <= PLAN_DEFS_MAX, "topic keys");
_Static_assert(PLAN_CONFIG_MESSAGE_BYTES == TOPIC_CONFIG_MESSAGE_BYTES,
               "the registry writes messages into plan results");

static int plan_key_cmp(const void *a, const void *b)
{
    const struct plan_key *x = a;
    const struct plan_key *y = b;
    return strcmp(x->name, y->name);
}

/* The keys of a topic (every topic config, the registry's name order) or
 * of a broker resource (the synonyms Kafka alters at runtime and the
 * throttle rates, in name order); their number. */
static size_t plan_keys(bool broker, struct plan_key keys[PLAN_DEFS_MAX])
{
    size_t n = 0;
    for (int i = 0; i < TOPIC_CONFIG_COUNT; i++) {
        const struct topic_config_def *d = topic_config_at(i);
        if (!broker) {
            keys[n++] = (struct plan_key){d->name, d, false};
        } else if (d->synonym_dynamic) {
            ASSERT(n < PLAN_DEFS_MAX);
            keys[n++] = (struct plan_key){d->synonym, d, true};
        }
    }
    for (size_t i = 0; broker && i < ARRAY_LEN(plan_throttle_defs); i++) {
        ASSERT(n < PLAN_DEFS_MAX);
        keys[n++] = (struct plan_key){plan_throttle_defs[i].name,
                                      &plan_throttle_defs[i], false};
    }
    if (broker) {
        qsort(keys, n, sizeof *keys, plan_key_cmp);
    }
    return n;
}

static const struct plan_key *plan_key_in(const struct plan_key *keys,
                                          size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(keys[i].name, name) == 0) {
            return &keys[i];
        }
    }
    return NULL;
}

static int16_t plan_config_check(const struct plan_key *k, const char *value,
                                 char msg[PLAN_CONFIG_MESSAGE_BYTES])
{
    return topic_config_check_def(k->def, k->name, k->synonym, value, msg);
}

int16_t plan_topic_configs_check(const struct plan_config *configs,
                                 size_t n,
                                 char msg[PLAN_CONFIG_MESSAGE_BYTES])
{
    msg[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *name = configs[i].name != NULL ? configs[i].name : "";
        if (topic_config_lookup(name) != NULL && configs[i].value == NULL) {
            snprintf(msg, PLAN_CONFIG_MESSAGE_BYTES,
                     "Null value not supported for topic configs: %s", name);
            return KAFKA_ERROR_INVALID_CONFIG;
        }
        int16_t err = topic_config_check(
            name, configs[i].value != NULL ? configs[i].value : "", msg);
        if (err != KAFKA_ERROR_NONE) {
            return err;
        }
        /* Past as many entries as there are names, all known and none
         * repeated so far, this one is a repeat: the loop stays short. */
        bool repeat = i >= TOPIC_CONFIG_COUNT;
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

/* The resource being altered: a topic, or a broker config set. */
struct plan_target {
    const struct meta_image *img;
    const struct meta_topic *t;     /* NULL for a broker resource */
    int32_t broker;                 /* or META_BROKER_DEFAULT */
    const char *name;               /* resource name, for records */
    struct plan_key keys[PLAN_DEFS_MAX];
    size_t n_keys;
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
    const struct plan_key *key = &x->keys[d];
    const struct topic_config_def *def = key->def;
    if (op->op == PLAN_CONFIG_DELETE) {
        st->want[d] = NULL;
        return KAFKA_ERROR_NONE;
    }
    if (op->value == NULL) {
        return plan_fail(r, KAFKA_ERROR_INVALID_REQUEST,
                         "Null value not supported for : %s", key->name);
    }
    if (op->op == PLAN_CONFIG_SET) {
        st->want[d] = op->value;
        r->error = plan_config_check(key, op->value, r->message);
        return r->error;
    }
    if (def->type != TOPIC_CONFIG_LIST) {
        return plan_fail(r, KAFKA_ERROR_INVALID_CONFIG,
                         "Can't %s to key %s because its type is not LIST.",
                         op->op == PLAN_CONFIG_APPEND ? "APPEND" : "SUBTRACT",
                         key->name);
    }
    const char *cur = plan_current(x, key->name);
    const char *base = cur != NULL ? cur : def->default_value;
    if (!plan_list_edit(base, op->value, op->op == PLAN_CONFIG_APPEND,
                        st->lists[d])) {
        return plan_fail(r, KAFKA_ERROR_INVALID_CONFIG,
                         "Invalid value for configuration %s: too long",
                         key->name);
    }
    st->want[d] = st->lists[d];
    r->error = plan_config_check(key, st->want[d], r->message);
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
    for (size_t d = 0; d < x->n_keys; d++) {
        st->want[d] = replace ? NULL : plan_current(x, x->keys[d].name);
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
        const struct plan_key *key = plan_key_in(x->keys, x->n_keys, name);
        if (key == NULL) {
            return plan_fail(r, KAFKA_ERROR_INVALID_CONFIG,
                             "Unknown %s config name: %.128s",
                             x->t != NULL ? "topic" : "broker", name);
        }
        if (plan_apply_op(x, op, (size_t)(key - x->keys), st, r) !=
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
    for (size_t d = 0; d < x->n_keys; d++) {
        need += !plan_same(st->want[d], plan_current(x, x->keys[d].name));
    }
    for (size_t i = 0; replace && i < x->n_entries; i++) {
        need += plan_key_in(x->keys, x->n_keys, x->entries[i].name) == NULL;
    }
    if (need > plan_room(out)) {
        plan_fail(r, KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED, "%s",
                  "Too many config changes in one request; retry");
        return RC_OK;
    }
    int rv = RC_OK;
    for (size_t d = 0; rv == RC_OK && d < x->n_keys; d++) {
        const char *name = x->keys[d].name;
        if (!plan_same(st->want[d], plan_current(x, name))) {
            rv = plan_push_config(out, x, name, st->want[d]);
        }
    }
    for (size_t i = 0; rv == RC_OK && replace && i < x->n_entries; i++) {
        if (plan_key_in(x->keys, x->n_keys, x->entries[i].name) == NULL) {
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
        x->n_keys = plan_keys(false /* broker */, x->keys);
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
    x->n_keys = plan_keys(true /* broker */, x->keys);
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
