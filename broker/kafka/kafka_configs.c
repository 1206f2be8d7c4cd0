/* DescribeConfigs and InitProducerId (broker/broker.h), and the configs
 * CreateTopics v5+ lists for a new topic. Topic configs come from the
 * metadata image (or, for a new topic, its CreateTopics configs) with
 * Kafka's precedence: what the topic sets (DYNAMIC_TOPIC_CONFIG), this
 * broker's dynamic broker config (DYNAMIC_BROKER_CONFIG), the
 * cluster-wide dynamic default (DYNAMIC_DEFAULT_BROKER_CONFIG), the
 * broker's config file (STATIC_BROKER_CONFIG), Kafka's default
 * (DEFAULT_CONFIG); with IncludeSynonyms (v1+) each config lists that
 * chain as Kafka does. A broker resource (this broker's id, or "" for
 * the cluster-wide default) lists its replication settings and dynamic
 * configs. Names, defaults, synonyms and flags are the topic config
 * registry's (common/topic_config.h); the broker's config-file settings
 * are its replica manager's topic_defaults. Producer ids come from
 * blocks the active controller allocates. */
#include "broker/broker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/topic_config.h"

/* Kafka's ConfigSource values. */
#define CONFIG_SOURCE_DYNAMIC_TOPIC 1
#define CONFIG_SOURCE_DYNAMIC_BROKER 2
#define CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER 3
#define CONFIG_SOURCE_STATIC_BROKER 4
#define CONFIG_SOURCE_DEFAULT 5

/* A default's text: a number, a boolean, a choice or two. */
#define CONFIGS__DEFAULT_TEXT_BYTES 32

static int enc_describe(struct writer *w, int16_t v, const void *r)
{
    return kafka_describe_configs_response_encode(w, v, r);
}

static bool wanted(const struct kafka_DescribeConfigsResource *res,
                   const char *name)
{
    if (res->ConfigurationKeysCnt < 0) {
        return true;
    }
    for (int32_t i = 0; i < res->ConfigurationKeysCnt; i++) {
        if (slice_eq_str(res->ConfigurationKeys[i], name)) {
            return true;
        }
    }
    return false;
}

/* Topic config d where neither the topic nor a dynamic broker config
 * sets it: the broker's config-file setting when it differs from Kafka's
 * default (STATIC_BROKER_CONFIG, its text in a), else Kafka's default;
 * *source is its ConfigSource. */
static struct slice default_value(const struct broker *b,
                                  const struct topic_config_def *d,
                                  struct arena *a, int8_t *source)
{
    *source = CONFIG_SOURCE_DEFAULT;
    char *text = NULL;
    if (arena_alloc(a, CONFIGS__DEFAULT_TEXT_BYTES, 1, (void **)&text) !=
            RC_OK ||
        !topic_config_format(&b->partitions.topic_defaults, d, text,
                             CONFIGS__DEFAULT_TEXT_BYTES) ||
        strcmp(text, d->default_value) == 0) {
        return slice_from_str(d->default_value);
    }
    *source = CONFIG_SOURCE_STATIC_BROKER;
    return slice_from_str(text);
}

static int created_config_cmp(const void *pa, const void *pb)
{
    const struct kafka_CreatableTopicConfigs *x = pa;
    const struct kafka_CreatableTopicConfigs *y = pb;
    size_t n = x->Name.len < y->Name.len ? x->Name.len : y->Name.len;
    int c = n > 0 ? memcmp(x->Name.ptr, y->Name.ptr, n) : 0;
    if (c != 0) {
        return c;
    }
    return x->Name.len < y->Name.len ? -1 : x->Name.len > y->Name.len;
}

static bool created_sets(const struct kafka_CreatableTopic *t,
                         const char *name)
{
    for (int32_t i = 0; i < t->ConfigsCnt; i++) {
        if (!slice_is_null(t->Configs[i].Value) &&
            slice_eq_str(t->Configs[i].Name, name)) {
            return true;
        }
    }
    return false;
}

int kafka_configs_of_new_topic(const struct broker *b,
                               const struct kafka_CreatableTopic *t,
                               struct arena *a,
                               const struct kafka_CreatableTopicConfigs **out,
                               int32_t *n_out)
{
    size_t cap = (size_t)t->ConfigsCnt + TOPIC_CONFIG_COUNT;
    struct kafka_CreatableTopicConfigs *cs = NULL;
    int rv = arena_alloc(a, cap, sizeof *cs, (void **)&cs);
    if (rv != RC_OK) {
        return rv;
    }
    size_t n = 0;
    for (int32_t i = 0; i < t->ConfigsCnt; i++) {
        if (slice_is_null(t->Configs[i].Value)) {
            continue; /* a null value sets nothing */
        }
        cs[n++] = (struct kafka_CreatableTopicConfigs){
            .Name = t->Configs[i].Name, .Value = t->Configs[i].Value,
            .ConfigSource = CONFIG_SOURCE_DYNAMIC_TOPIC};
    }
    for (int i = 0; i < TOPIC_CONFIG_COUNT; i++) {
        const struct topic_config_def *d = topic_config_at(i);
        if (!d->listed || created_sets(t, d->name)) {
            continue;
        }
        int8_t source;
        struct slice v = default_value(b, d, a, &source);
        cs[n++] = (struct kafka_CreatableTopicConfigs){
            .Name = slice_from_str(d->name), .Value = v,
            .ConfigSource = source, .ReadOnly = d->read_only,
            .IsSensitive = d->sensitive};
    }
    qsort(cs, n, sizeof *cs, created_config_cmp);
    *out = cs;
    *n_out = (int32_t)n;
    return RC_OK;
}

/* The chain of sources of topic config d (or of its broker synonym
 * alone when t is NULL): at most five links, strongest first. */
struct chain {
    int32_t n;
    struct kafka_DescribeConfigsSynonym links[5];
};

static void chain_add(struct chain *c, const char *name, const char *value,
                      int8_t source)
{
    if (value != NULL) {
        c->links[c->n++] = (struct kafka_DescribeConfigsSynonym){
            slice_from_str(name), slice_from_str(value), source};
    }
}

static void chain_of(const struct broker *b, const struct meta_image *img,
                     const struct meta_topic *t,
                     const struct topic_config_def *d, bool with_own,
                     struct arena *a, struct chain *c)
{
    const char *bname = d->synonym;
    ASSERT(bname != NULL); /* every listed config has a synonym */
    c->n = 0;
    if (t != NULL) {
        chain_add(c, d->name, meta_topic_config(t, d->name),
                  CONFIG_SOURCE_DYNAMIC_TOPIC);
    }
    if (with_own) {
        chain_add(c, bname, meta_broker_config(img, b->id, bname),
                  CONFIG_SOURCE_DYNAMIC_BROKER);
    }
    chain_add(c, bname, meta_broker_config(img, META_BROKER_DEFAULT, bname),
              CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER);
    int8_t source;
    struct slice v = default_value(b, d, a, &source);
    c->links[c->n++] = (struct kafka_DescribeConfigsSynonym){
        slice_from_str(bname), v, source};
}

/* One described config from its chain (copied into the arena). */
static int describe_entry(struct arena *a, const char *name,
                          const struct topic_config_def *d,
                          const struct chain *c, bool synonyms,
                          struct kafka_DescribeConfigsResourceResult *out)
{
    *out = (struct kafka_DescribeConfigsResourceResult){
        .Name = slice_from_str(name), .Value = c->links[0].Value,
        .ConfigSource = c->links[0].Source,
        .IsDefault = c->links[0].Source == CONFIG_SOURCE_DEFAULT,
        .ReadOnly = d != NULL && d->read_only,
        .IsSensitive = d != NULL && d->sensitive};
    if (!synonyms) {
        return RC_OK;
    }
    struct kafka_DescribeConfigsSynonym *syn = NULL;
    int rv = arena_alloc(a, (size_t)c->n, sizeof *syn, (void **)&syn);
    if (rv == RC_OK) {
        memcpy(syn, c->links, (size_t)c->n * sizeof *syn);
        out->Synonyms = syn;
        out->SynonymsCnt = c->n;
    }
    return rv;
}

static int topic_configs(const struct broker *b, const struct meta_image *img,
                         const struct meta_topic *t,
                         const struct kafka_DescribeConfigsResource *res,
                         bool synonyms, struct arena *a,
                         struct kafka_DescribeConfigsResult *out)
{
    size_t cap = t->n_configs + TOPIC_CONFIG_COUNT;
    struct kafka_DescribeConfigsResourceResult *cs = NULL;
    int rv = arena_alloc(a, cap, sizeof *cs, (void **)&cs);
    int32_t n = 0;
    /* Keys the topic sets that are not listed unasked: as the topic has
     * them. */
    for (size_t i = 0; rv == RC_OK && i < t->n_configs; i++) {
        const char *name = t->configs[i].name;
        const struct topic_config_def *d = topic_config_lookup(name);
        if ((d == NULL || !d->listed) && wanted(res, name)) {
            struct chain c = {0};
            chain_add(&c, name, t->configs[i].value,
                      CONFIG_SOURCE_DYNAMIC_TOPIC);
            rv = describe_entry(a, name, d, &c, synonyms, &cs[n++]);
        }
    }
    for (int i = 0; rv == RC_OK && i < TOPIC_CONFIG_COUNT; i++) {
        const struct topic_config_def *d = topic_config_at(i);
        if (!d->listed || !wanted(res, d->name)) {
            continue;
        }
        struct chain c;
        chain_of(b, img, t, d, true /* own */, a, &c);
        rv = describe_entry(a, d->name, d, &c, synonyms, &cs[n++]);
    }
    out->Configs = cs;
    out->ConfigsCnt = n;
    return rv;
}

/* A broker resource: this broker's id, or "" for the cluster-wide
 * default (its dynamic configs only, as Kafka lists them). Each broker
 * synonym of a topic config with its chain, then the replication
 * settings of the config file. */
/* The replication throttles as this broker applies them (vals: two
 * 32-byte slots); the number of entries written to cs. */
static int32_t throttle_entries(const struct broker *b,
                                const struct meta_image *img,
                                const struct kafka_DescribeConfigsResource *res,
                                char *vals,
                                struct kafka_DescribeConfigsResourceResult *cs)
{
    static const char *const names[] = {"leader.replication.throttled.rate",
                                        "follower.replication.throttled.rate"};
    const struct throttle *ts[] = {&b->leader_throttle, &b->follower_throttle};
    const int64_t statics[] = {b->leader_throttle_static,
                               b->follower_throttle_static};
    int32_t n = 0;
    for (int i = 0; i < 2; i++) {
        if (!wanted(res, names[i])) {
            continue;
        }
        int8_t source = meta_broker_config(img, b->id, names[i]) != NULL
                            ? CONFIG_SOURCE_DYNAMIC_BROKER
                        : meta_broker_config(img, META_BROKER_DEFAULT,
                                             names[i]) != NULL
                            ? CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER
                        : statics[i] != THROTTLE_RATE_UNLIMITED
                            ? CONFIG_SOURCE_STATIC_BROKER
                            : CONFIG_SOURCE_DEFAULT;
        snprintf(vals + 32 * i, 32, "%lld", (long long)ts[i]->rate);
        cs[n++] = (struct kafka_DescribeConfigsResourceResult){
            .Name = slice_from_str(names[i]),
            .Value = slice_from_str(vals + 32 * i),
            .ConfigSource = source};
    }
    return n;
}

static int broker_configs(const struct broker *b, const struct meta_image *img,
                          const struct kafka_DescribeConfigsResource *res,
                          bool synonyms, struct arena *a,
                          struct kafka_DescribeConfigsResult *out)
{
    char id[16];
    snprintf(id, sizeof id, "%d", b->id);
    bool own = slice_eq_str(res->ResourceName, id);
    if (!own && res->ResourceName.len != 0) {
        out->ErrorCode = KAFKA_ERROR_INVALID_REQUEST;
        return RC_OK;
    }
    size_t cap = TOPIC_CONFIG_COUNT + 4;
    char *vals = NULL;
    struct kafka_DescribeConfigsResourceResult *cs = NULL;
    int rv = arena_alloc(a, 4, 32, (void **)&vals);
    if (rv == RC_OK) {
        rv = arena_alloc(a, cap, sizeof *cs, (void **)&cs);
    }
    const struct topic_config_def *min_insync =
        topic_config_at(TOPIC_CONFIG_MIN_INSYNC_REPLICAS);
    int32_t n = 0;
    for (int i = 0; rv == RC_OK && i < TOPIC_CONFIG_COUNT; i++) {
        const struct topic_config_def *d = topic_config_at(i);
        if (!d->listed) {
            continue;
        }
        struct chain c;
        chain_of(b, img, NULL, d, own, a, &c);
        bool dynamic = c.links[0].Source != CONFIG_SOURCE_STATIC_BROKER &&
                       c.links[0].Source != CONFIG_SOURCE_DEFAULT;
        /* This broker's min.insync.replicas is listed whatever its
         * source. */
        bool always = own && d == min_insync;
        if ((dynamic || always) && wanted(res, d->synonym)) {
            rv = describe_entry(a, d->synonym, NULL, &c, synonyms, &cs[n++]);
        }
    }
    if (rv != RC_OK || !own) {
        out->Configs = cs;
        out->ConfigsCnt = n;
        return rv;
    }
    n += throttle_entries(b, img, res, vals + 64, cs + n);
    snprintf(vals, 32, "%lld", (long long)b->partitions.lag_max_ms);
    snprintf(vals + 32, 32, "%s",
             b->partitions.sync_before_ack ? "true" : "false");
    static const char *const names[] = {"replica.lag.time.max.ms",
                                        "log.sync.before.ack"};
    for (int i = 0; i < 2; i++) {
        if (wanted(res, names[i])) {
            cs[n++] = (struct kafka_DescribeConfigsResourceResult){
                .Name = slice_from_str(names[i]),
                .Value = slice_from_str(vals + 32 * i),
                .ReadOnly = true,
                .ConfigSource = CONFIG_SOURCE_STATIC_BROKER};
        }
    }
    out->Configs = cs;
    out->ConfigsCnt = n;
    return RC_OK;
}

void kafka_handle_describe_configs(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    struct kafka_DescribeConfigsRequest rq;
    int rv = kafka_describe_configs_request_decode(&r, req->api_version, &a,
                                                   &rq);
    struct kafka_DescribeConfigsResult *out = NULL;
    if (rv == RC_OK) {
        rv = arena_alloc(&a, (size_t)rq.ResourcesCnt, sizeof *out,
                         (void **)&out);
    }
    const struct meta_image *img = membership_image(b->membership);
    for (int32_t i = 0; rv == RC_OK && i < rq.ResourcesCnt; i++) {
        const struct kafka_DescribeConfigsResource *res = &rq.Resources[i];
        out[i] = (struct kafka_DescribeConfigsResult){
            .ResourceType = res->ResourceType,
            .ResourceName = res->ResourceName};
        if (res->ResourceType == META_RESOURCE_BROKER) {
            rv = broker_configs(b, img, res, rq.IncludeSynonyms, &a,
                                &out[i]);
            continue;
        }
        if (res->ResourceType != META_RESOURCE_TOPIC) {
            continue;
        }
        char buf[META_TOPIC_NAME_BYTES_MAX + 1];
        const char *name = broker_topic_name(res->ResourceName, buf);
        const struct meta_topic *t =
            name != NULL ? meta_image_topic(img, name) : NULL;
        if (t == NULL) {
            out[i].ErrorCode = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
            continue;
        }
        rv = topic_configs(b, img, t, res, rq.IncludeSynonyms, &a, &out[i]);
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "malformed DescribeConfigs request");
    } else {
        struct kafka_DescribeConfigsResponse resp = {
            .Results = out, .ResultsCnt = rq.ResourcesCnt};
        kafka_send(req, enc_describe, &resp);
    }
    arena_free(&a);
}

/* --- InitProducerId ------------------------------------------------------ */

static int enc_init_pid(struct writer *w, int16_t v, const void *r)
{
    return kafka_init_producer_id_response_encode(w, v, r);
}

static void answer_pid(struct broker *b, struct kafka_request *req,
                       int16_t error)
{
    struct kafka_InitProducerIdResponse resp = {.ErrorCode = error,
                                                .ProducerId = -1,
                                                .ProducerEpoch = -1};
    if (error == KAFKA_ERROR_NONE) {
        resp.ProducerId = b->producer_id_next++;
        resp.ProducerEpoch = 0;
    }
    kafka_send(req, enc_init_pid, &resp);
}

struct pid_wait {
    struct broker *b;
    struct kafka_request *req;
};

static void block_cb(void *arg, int rc, const uint8_t *payload, size_t len)
{
    struct pid_wait *pw = arg;
    struct broker *b = pw->b;
    int64_t start = 0, n = 0;
    if (rc == RC_OK &&
        membership_producer_ids_granted(payload, len, &start, &n)) {
        if (b->producer_id_next >= b->producer_id_end) {
            b->producer_id_next = start;
            b->producer_id_end = start + n;
        }
        answer_pid(b, pw->req, KAFKA_ERROR_NONE);
    } else {
        /* Retriable: the producer asks again. */
        answer_pid(b, pw->req, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE);
    }
    free(pw);
}

void kafka_handle_init_producer_id(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    struct kafka_InitProducerIdRequest rq;
    int rv = kafka_init_producer_id_request_decode(&r, req->api_version, &a,
                                                   &rq);
    arena_free(&a);
    if (rv != RC_OK) {
        kafka_close_conn(req, "malformed InitProducerId request");
        return;
    }
    /* v3+ carries the producer's id and epoch. Kafka's KafkaApis answers
     * INVALID_REQUEST when only one of them is -1; otherwise, for a null
     * TransactionalId (idempotence only), TransactionCoordinator.
     * handleInitProducerId does not look at them: a new producer id is
     * handed out whatever was sent. */
    if ((rq.ProducerId == -1) != (rq.ProducerEpoch == -1)) {
        answer_pid(b, req, KAFKA_ERROR_INVALID_REQUEST);
        return;
    }
    if (!slice_is_null(rq.TransactionalId)) {
        /* Transactions are not supported: a clear, final error. */
        answer_pid(b, req, KAFKA_ERROR_INVALID_REQUEST);
        return;
    }
    if (b->producer_id_next < b->producer_id_end) {
        answer_pid(b, req, KAFKA_ERROR_NONE);
        return;
    }
    uint8_t buf[64];
    size_t len = membership_producer_ids_request(
        b->id, membership_epoch(b->membership), buf, sizeof buf);
    struct pid_wait *pw = malloc(sizeof *pw);
    if (pw == NULL) {
        answer_pid(b, req, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    *pw = (struct pid_wait){.b = b, .req = req};
    if (membership_call_active(b->membership, buf, len, 10000, block_cb,
                               pw) != RC_OK) {
        free(pw);
        answer_pid(b, req, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE);
    }
}
