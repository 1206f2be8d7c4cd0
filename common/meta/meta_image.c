/* Cluster metadata image (common/meta/meta.h): uuids, replica sets, the image's
 * lifetime (init, free, deep copy), lookups, and one-line descriptions of
 * records for logs. meta_apply() lives in common/meta/meta_apply.c and the
 * protobuf-c encoding in common/meta/meta_codec.c. Pure: no I/O, no clock, no
 * globals. Runs on the thread of whoever owns the image (the loop thread
 * of a controller or broker).
 *
 * Image invariants kept by apply and decode: brokers strictly sorted by id;
 * topic names and ids unique; a topic's partitions[i].id == i; its configs
 * strictly sorted by name, each with a value. */
#include "common/meta/meta.h"

#include "common/rc.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- Uuids and replica sets ---------------------------------------------- */

bool meta_uuid_eq(const struct meta_uuid *a, const struct meta_uuid *b)
{
    return memcmp(a->b, b->b, sizeof a->b) == 0;
}

bool meta_uuid_is_zero(const struct meta_uuid *u)
{
    static const struct meta_uuid zero;

    return meta_uuid_eq(u, &zero);
}

/* Kafka's Uuid.toString(): URL-safe base64 of the 16 bytes, no padding. */
void meta_uuid_format(const struct meta_uuid *u, char out[23])
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;

    for (size_t i = 0; i + 3 <= sizeof u->b; i += 3) {
        uint32_t v = ((uint32_t)u->b[i] << 16) |
                     ((uint32_t)u->b[i + 1] << 8) | u->b[i + 2];
        out[o++] = alphabet[(v >> 18) & 63];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = alphabet[(v >> 6) & 63];
        out[o++] = alphabet[v & 63];
    }
    /* 16 = 5 * 3 + 1: the last byte makes two characters. */
    out[o++] = alphabet[u->b[15] >> 2];
    out[o++] = alphabet[(u->b[15] & 3) << 4];
    ASSERT(o == 22);
    out[o] = '\0';
}

void meta_uuid_set_v4(struct meta_uuid *u)
{
    u->b[6] = (uint8_t)((u->b[6] & 0x0f) | 0x40); /* version 4 */
    u->b[8] = (uint8_t)((u->b[8] & 0x3f) | 0x80); /* variant 10 */
}

bool meta_uuid_ok_as_topic_id(const struct meta_uuid *u)
{
    struct meta_uuid metadata_topic = {{0}};
    metadata_topic.b[15] = 1;
    /* base64 index 62 is '-': the first six bits 111110. */
    return !meta_uuid_is_zero(u) && !meta_uuid_eq(u, &metadata_topic) &&
           (u->b[0] >> 2) != 62;
}

bool meta_replica_set_within(const struct meta_replica_set *a,
                             const struct meta_replica_set *b)
{
    for (int32_t i = 0; i < a->n && i < META_REPLICAS_MAX; i++) {
        if (!meta_replica_set_contains(b, a->ids[i])) {
            return false;
        }
    }
    return true;
}

bool meta_replica_set_contains(const struct meta_replica_set *s, int32_t id)
{
    /* A set from a record may be out of bounds; never read past ids[]. */
    for (int32_t i = 0; i < s->n && i < META_REPLICAS_MAX; i++) {
        if (s->ids[i] == id) {
            return true;
        }
    }
    return false;
}

/* --- Lifetime ------------------------------------------------------------ */

void meta_image_init(struct meta_image *img)
{
    memset(img, 0, sizeof *img);
}

void meta_topic_free(struct meta_topic *t)
{
    for (size_t i = 0; i < t->n_configs; i++) {
        free(t->configs[i].name);
        free(t->configs[i].value);
    }
    free(t->configs);
    free(t->partitions);
    t->configs = NULL;
    t->partitions = NULL;
    t->n_configs = 0;
    t->n_partitions = 0;
    t->cap_partitions = 0;
}

static void image_entries_free(struct meta_config_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(e[i].name);
        free(e[i].value);
    }
    free(e);
}

void meta_image_free(struct meta_image *img)
{
    meta_index_free(&img->topic_index);
    for (size_t i = 0; i < img->n_topics; i++) {
        meta_topic_free(&img->topics[i]);
    }
    for (size_t i = 0; i < img->n_broker_configs; i++) {
        image_entries_free(img->broker_configs[i].configs,
                           img->broker_configs[i].n_configs);
    }
    free(img->broker_configs);
    free(img->topics);
    free(img->brokers);
    meta_image_init(img);
}

/* Deep copy of src's partitions and configs into dst, whose scalar fields
 * are already copied and whose arrays are empty. On RC_NOMEM dst holds what
 * was copied so far, consistently, for meta_topic_free(). */
static int image_topic_copy(struct meta_topic *dst,
                            const struct meta_topic *src)
{
    dst->partitions = NULL;
    dst->n_partitions = 0;
    dst->cap_partitions = 0;
    dst->configs = NULL;
    dst->n_configs = 0;
    if (src->n_partitions > 0) {
        size_t n = (size_t)src->n_partitions;
        dst->partitions = malloc(n * sizeof *dst->partitions);
        if (dst->partitions == NULL) {
            return RC_NOMEM;
        }
        memcpy(dst->partitions, src->partitions, n * sizeof *dst->partitions);
        dst->n_partitions = src->n_partitions;
        dst->cap_partitions = src->n_partitions;
    }
    if (src->n_configs > 0) {
        dst->configs = calloc(src->n_configs, sizeof *dst->configs);
        if (dst->configs == NULL) {
            return RC_NOMEM;
        }
        for (size_t i = 0; i < src->n_configs; i++) {
            struct meta_config_entry *e = &dst->configs[i];
            e->name = strdup(src->configs[i].name);
            e->value = strdup(src->configs[i].value);
            dst->n_configs = i + 1; /* free both, even if one failed */
            if (e->name == NULL || e->value == NULL) {
                return RC_NOMEM;
            }
        }
    }
    return RC_OK;
}

/* Deep copy of n entries at src into *dst (NULL for none). */
static int image_entries_copy(struct meta_config_entry **dst,
                              const struct meta_config_entry *src, size_t n)
{
    *dst = NULL;
    if (n == 0) {
        return RC_OK;
    }
    struct meta_config_entry *e = calloc(n, sizeof *e);
    if (e == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        e[i].name = strdup(src[i].name);
        e[i].value = strdup(src[i].value);
        if (e[i].name == NULL || e[i].value == NULL) {
            image_entries_free(e, i + 1);
            return RC_NOMEM;
        }
    }
    *dst = e;
    return RC_OK;
}

static int image_broker_configs_copy(struct meta_image *dst,
                                     const struct meta_image *src)
{
    if (src->n_broker_configs == 0) {
        return RC_OK;
    }
    dst->broker_configs =
        calloc(src->n_broker_configs, sizeof *dst->broker_configs);
    if (dst->broker_configs == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < src->n_broker_configs; i++) {
        const struct meta_broker_configs *s = &src->broker_configs[i];
        struct meta_broker_configs *d = &dst->broker_configs[i];
        d->broker = s->broker;
        if (image_entries_copy(&d->configs, s->configs, s->n_configs) !=
            RC_OK) {
            return RC_NOMEM;
        }
        d->n_configs = s->n_configs;
        dst->n_broker_configs = i + 1;
    }
    return RC_OK;
}

int meta_image_copy(struct meta_image *dst, const struct meta_image *src)
{
    int rv = RC_NOMEM;

    ASSERT(dst != src);
    ASSERT(dst->n_brokers == 0 && dst->brokers == NULL);
    ASSERT(dst->n_topics == 0 && dst->topics == NULL);
    dst->offset = src->offset;
    dst->next_producer_id = src->next_producer_id;
    if (src->n_brokers > 0) {
        dst->brokers = malloc(src->n_brokers * sizeof *dst->brokers);
        if (dst->brokers == NULL) {
            goto err;
        }
        memcpy(dst->brokers, src->brokers,
               src->n_brokers * sizeof *dst->brokers);
        dst->n_brokers = src->n_brokers;
        dst->cap_brokers = src->n_brokers;
    }
    if (src->n_topics > 0) {
        dst->topics = malloc(src->n_topics * sizeof *dst->topics);
        if (dst->topics == NULL) {
            goto err;
        }
        dst->cap_topics = src->n_topics;
        for (size_t i = 0; i < src->n_topics; i++) {
            dst->topics[i] = src->topics[i];
            dst->n_topics = i + 1;
            rv = image_topic_copy(&dst->topics[i], &src->topics[i]);
            if (rv != RC_OK) {
                goto err;
            }
        }
    }
    if (image_broker_configs_copy(dst, src) != RC_OK) {
        goto err;
    }
    meta_image_reindex(dst);
    return RC_OK;
err:
    meta_image_free(dst);
    return RC_NOMEM;
}

/* --- Changes ------------------------------------------------------------- */

void meta_changes_init(struct meta_changes *c)
{
    memset(c, 0, sizeof *c);
}

void meta_changes_free(struct meta_changes *c)
{
    free(c->items);
    meta_changes_init(c);
}

void meta_changes_clear(struct meta_changes *c)
{
    c->n = 0;
    c->hosted = false;
    c->all = false;
}

void meta_changes_note(struct meta_changes *c, const struct meta_uuid *topic,
                       int32_t partition)
{
    if (c->all) {
        return;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap == 0 ? 64 : c->cap * 2;
        void *items = cap > META_CHANGES_MAX
                          ? NULL
                          : realloc(c->items, cap * sizeof c->items[0]);
        if (items == NULL) {
            c->all = true; /* too many to visit one by one */
            return;
        }
        c->items = items;
        c->cap = cap;
    }
    c->items[c->n++] = (struct meta_change){.topic_id = *topic,
                                            .partition = partition};
}

/* --- Topic index --------------------------------------------------------- */

static void *pos_value(size_t i)
{
    return (void *)(uintptr_t)(i + 1);
}

void meta_image_index_topic(struct meta_image *img, size_t i)
{
    ASSERT(i < img->n_topics);
    if (i == 0) {
        meta_index_clear(&img->topic_index);
        img->topics_indexed = true;
    }
    if (!img->topics_indexed) {
        return;
    }
    const struct meta_topic *t = &img->topics[i];
    struct meta_uuid name = meta_index_name_key(t->name);
    if (meta_index_put(&img->topic_index, &t->id, META_INDEX_TOPIC,
                       pos_value(i)) != RC_OK ||
        meta_index_put(&img->topic_index, &name, META_INDEX_NAME,
                       pos_value(i)) != RC_OK) {
        img->topics_indexed = false; /* scans, until the next reindex */
    }
}

void meta_image_reindex(struct meta_image *img)
{
    meta_index_clear(&img->topic_index);
    img->topics_indexed = true;
    for (size_t i = 0; i < img->n_topics && img->topics_indexed; i++) {
        meta_image_index_topic(img, i);
    }
}

/* The topic the index says, NULL when it says none; *sure false when the
 * index cannot say (not indexed). */
static const struct meta_topic *index_lookup(const struct meta_image *img,
                                             const struct meta_uuid *key,
                                             int32_t kind, bool *sure)
{
    *sure = img->topics_indexed;
    if (!*sure) {
        return NULL;
    }
    uintptr_t v = (uintptr_t)meta_index_get(&img->topic_index, key, kind);
    if (v == 0) {
        return NULL;
    }
    ASSERT(v - 1 < img->n_topics);
    return &img->topics[v - 1];
}

/* --- Lookups ------------------------------------------------------------- */

const struct meta_broker *meta_image_broker(const struct meta_image *img,
                                            int32_t id)
{
    size_t lo = 0;
    size_t hi = img->n_brokers;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (img->brokers[mid].id < id) {
            lo = mid + 1;
        } else if (img->brokers[mid].id > id) {
            hi = mid;
        } else {
            return &img->brokers[mid];
        }
    }
    return NULL;
}

/* Both topic lookups scan newest first: records about a topic (its
 * partitions and configs) follow its creation. */
const struct meta_topic *meta_image_topic(const struct meta_image *img,
                                          const char *name)
{
    bool sure;
    struct meta_uuid key = meta_index_name_key(name);
    const struct meta_topic *t = index_lookup(img, &key, META_INDEX_NAME,
                                              &sure);
    if (sure && (t == NULL || strcmp(t->name, name) == 0)) {
        return t; /* else two names with one key: scan */
    }
    for (size_t i = img->n_topics; i > 0; i--) {
        if (strcmp(img->topics[i - 1].name, name) == 0) {
            return &img->topics[i - 1];
        }
    }
    return NULL;
}

const struct meta_topic *meta_image_topic_by_id(const struct meta_image *img,
                                                const struct meta_uuid *id)
{
    bool sure;
    const struct meta_topic *t = index_lookup(img, id, META_INDEX_TOPIC,
                                              &sure);
    if (sure) {
        return t;
    }
    for (size_t i = img->n_topics; i > 0; i--) {
        if (meta_uuid_eq(&img->topics[i - 1].id, id)) {
            return &img->topics[i - 1];
        }
    }
    return NULL;
}

const struct meta_partition *
meta_image_partition(const struct meta_image *img,
                     const struct meta_uuid *topic_id, int32_t partition)
{
    const struct meta_topic *t = meta_image_topic_by_id(img, topic_id);

    if (t == NULL || partition < 0 || partition >= t->n_partitions) {
        return NULL;
    }
    return &t->partitions[partition];
}

static const char *image_entry(const struct meta_config_entry *e, size_t n,
                               const char *name)
{
    size_t lo = 0;
    size_t hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(e[mid].name, name);
        if (c < 0) {
            lo = mid + 1;
        } else if (c > 0) {
            hi = mid;
        } else {
            return e[mid].value;
        }
    }
    return NULL;
}

const char *meta_broker_config(const struct meta_image *img, int32_t broker,
                               const char *name)
{
    for (size_t i = 0; i < img->n_broker_configs; i++) {
        const struct meta_broker_configs *s = &img->broker_configs[i];
        if (s->broker == broker) {
            return image_entry(s->configs, s->n_configs, name);
        }
    }
    return NULL;
}

bool meta_broker_resource(const char *name, int32_t *broker)
{
    if (name[0] == '\0') {
        *broker = META_BROKER_DEFAULT;
        return true;
    }
    int64_t v = 0;
    for (size_t i = 0; name[i] != '\0'; i++) {
        if (name[i] < '0' || name[i] > '9' || i >= 10 ||
            (i == 0 && name[i] == '0' && name[1] != '\0')) {
            return false;
        }
        v = v * 10 + (name[i] - '0');
    }
    if (v > INT32_MAX) {
        return false;
    }
    *broker = (int32_t)v;
    return true;
}

const char *meta_topic_config(const struct meta_topic *t, const char *name)
{
    size_t lo = 0;
    size_t hi = t->n_configs;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(t->configs[mid].name, name);
        if (c < 0) {
            lo = mid + 1;
        } else if (c > 0) {
            hi = mid;
        } else {
            return t->configs[mid].value;
        }
    }
    return NULL;
}

/* --- Descriptions -------------------------------------------------------- */

/* Output that is cut at cap, never overflowed. */
struct image_out {
    char *buf;
    size_t cap;
    size_t len;
};

__attribute__((format(printf, 2, 3))) static void
image_outf(struct image_out *o, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (o->len + 1 >= o->cap) {
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    o->len += (size_t)n;
    if (o->len >= o->cap) {
        o->len = o->cap - 1;
    }
}

/* A record's string, which may lack its NUL: print at most its array. */
#define IMAGE_STR(field) (int)strnlen((field), sizeof(field)), (field)

/* "1,2,3" (nothing for an empty or bad set). */
static void image_out_ids(struct image_out *o,
                          const struct meta_replica_set *s)
{
    int32_t n = s->n < 0 ? 0 : s->n;

    if (n > META_REPLICAS_MAX) {
        n = META_REPLICAS_MAX;
    }
    for (int32_t i = 0; i < n; i++) {
        image_outf(o, "%s%" PRId32, i > 0 ? "," : "", s->ids[i]);
    }
}

static void image_out_set(struct image_out *o, const char *key,
                          const struct meta_replica_set *s)
{
    image_outf(o, " %s=[", key);
    image_out_ids(o, s);
    image_outf(o, "]");
}

/* "orders-3" when img knows the topic, else "<uuid>-3". */
static void image_out_partition(struct image_out *o,
                                const struct meta_image *img,
                                const struct meta_uuid *id, int32_t partition)
{
    const struct meta_topic *t = NULL;
    char u[23];

    if (img != NULL) {
        t = meta_image_topic_by_id(img, id);
    }
    if (t != NULL) {
        image_outf(o, "%s-%" PRId32, t->name, partition);
    } else {
        meta_uuid_format(id, u);
        image_outf(o, "%s-%" PRId32, u, partition);
    }
}

static void image_describe_broker(struct image_out *o,
                                  const struct meta_record *rec)
{
    const struct meta_rec_register_broker *r = &rec->u.register_broker;
    const struct meta_rec_broker_change *c = &rec->u.broker_change;
    char u[23];

    if (rec->type == META_REC_REGISTER_BROKER) {
        meta_uuid_format(&r->incarnation, u);
        image_outf(o, "register-broker id=%" PRId32 " endpoint=%.*s:%" PRId32
                   " rack=%.*s incarnation=%s", r->broker_id,
                   IMAGE_STR(r->host), r->port, IMAGE_STR(r->rack), u);
    } else {
        image_outf(o, "broker-change id=%" PRId32 " epoch=%" PRId64
                   " fenced=%d shutdown=%d", c->broker_id, c->broker_epoch,
                   c->fenced, c->in_controlled_shutdown);
    }
}

static void image_describe_partition(struct image_out *o,
                                     const struct meta_image *img,
                                     const struct meta_record *rec)
{
    const struct meta_rec_partition *p = &rec->u.partition;
    const struct meta_rec_partition_change *c = &rec->u.partition_change;

    if (rec->type == META_REC_PARTITION) {
        image_outf(o, "partition ");
        image_out_partition(o, img, &p->topic_id, p->partition);
        image_out_set(o, "replicas", &p->replicas);
        image_out_set(o, "isr", &p->isr);
        image_outf(o, " leader=%" PRId32 " epoch=%" PRId32
                   " partition_epoch=%" PRId32, p->leader, p->leader_epoch,
                   p->partition_epoch);
        return;
    }
    image_outf(o, "partition-change ");
    image_out_partition(o, img, &c->topic_id, c->partition);
    if (c->isr_changed) {
        image_out_set(o, "isr", &c->isr);
    }
    if (c->leader != META_LEADER_UNCHANGED) {
        image_outf(o, " leader=%" PRId32, c->leader);
    }
    if (!c->isr_changed && c->leader == META_LEADER_UNCHANGED) {
        image_outf(o, " (epoch only)");
    }
}

static void image_describe_topic(struct image_out *o,
                                 const struct meta_image *img,
                                 const struct meta_record *rec)
{
    const struct meta_topic *t = NULL;
    char u[23];

    if (rec->type == META_REC_TOPIC) {
        meta_uuid_format(&rec->u.topic.id, u);
        image_outf(o, "topic %.*s id=%s", IMAGE_STR(rec->u.topic.name), u);
        return;
    }
    meta_uuid_format(&rec->u.remove_topic.topic_id, u);
    if (img != NULL) {
        t = meta_image_topic_by_id(img, &rec->u.remove_topic.topic_id);
    }
    image_outf(o, "remove-topic %s id=%s", t != NULL ? t->name : "?", u);
}

static void image_describe_config(struct image_out *o,
                                  const struct meta_rec_config *c)
{
    const char *kind = c->resource_type == META_RESOURCE_TOPIC    ? "topic"
                       : c->resource_type == META_RESOURCE_BROKER ? "broker"
                                                                  : "?";

    image_outf(o, "config %s(%d) %.*s %.*s", kind, c->resource_type,
               IMAGE_STR(c->resource_name), IMAGE_STR(c->name));
    if (c->has_value) {
        image_outf(o, "=%.*s", IMAGE_STR(c->value));
    } else {
        image_outf(o, " deleted");
    }
}

void meta_record_describe(const struct meta_image *img,
                          const struct meta_record *rec, char *out,
                          size_t cap)
{
    struct image_out o = {out, cap, 0};
    const struct meta_rec_producer_ids *pid = &rec->u.producer_ids;

    if (cap == 0) {
        return;
    }
    out[0] = '\0';
    switch (rec->type) {
    case META_REC_REGISTER_BROKER:
    case META_REC_BROKER_CHANGE:
        image_describe_broker(&o, rec);
        break;
    case META_REC_TOPIC:
    case META_REC_REMOVE_TOPIC:
        image_describe_topic(&o, img, rec);
        break;
    case META_REC_PARTITION:
    case META_REC_PARTITION_CHANGE:
        image_describe_partition(&o, img, rec);
        break;
    case META_REC_CONFIG:
        image_describe_config(&o, &rec->u.config);
        break;
    case META_REC_PRODUCER_IDS:
        image_outf(&o, "producer-ids broker=%" PRId32 " epoch=%" PRId64
                   " next=%" PRId64, pid->broker_id, pid->broker_epoch,
                   pid->next_producer_id);
        break;
    case META_REC_UNREGISTER_BROKER:
        image_outf(&o, "unregister-broker id=%" PRId32 " epoch=%" PRId64,
                   rec->u.unregister_broker.broker_id,
                   rec->u.unregister_broker.broker_epoch);
        break;
    default:
        image_outf(&o, "unknown-record type=%d", (int)rec->type);
        break;
    }
}

/* --- Events (meta.h: meta_record_event) ---------------------------------- */

void meta_replica_set_format(const struct meta_replica_set *s, char *out,
                             size_t cap)
{
    struct image_out o = {out, cap, 0};
    if (cap == 0) {
        return;
    }
    out[0] = '\0';
    if (s->n <= 0) {
        image_outf(&o, "-");
    }
    image_out_ids(&o, s);
}

void meta_leader_format(int32_t leader, char out[16])
{
    if (leader == META_NO_LEADER) {
        snprintf(out, 16, "none");
    } else {
        snprintf(out, 16, "%" PRId32, leader);
    }
}

/* A reassignment starting, completing or cancelled (KIP-455). */
static void reassign_event(struct image_out *o, const struct meta_partition *p,
                           const struct meta_rec_partition_change *c)
{
    char from[META_REPLICAS_MAX * 12], to[META_REPLICAS_MAX * 12];
    meta_replica_set_format(&p->replicas, from, sizeof from);
    meta_replica_set_format(&c->replicas, to, sizeof to);
    if (c->adding.n > 0 || c->removing.n > 0) {
        char add[META_REPLICAS_MAX * 12], rm[META_REPLICAS_MAX * 12];
        meta_replica_set_format(&c->adding, add, sizeof add);
        meta_replica_set_format(&c->removing, rm, sizeof rm);
        image_outf(o, " reassignment started: replicas %s -> %s (adding %s, "
                   "removing %s)", from, to, add, rm);
    } else if (p->adding.n > 0 || p->removing.n > 0) {
        bool back = c->replicas.n == p->replicas.n - p->adding.n;
        for (int32_t i = 0; back && i < p->adding.n; i++) {
            back = !meta_replica_set_contains(&c->replicas, p->adding.ids[i]);
        }
        image_outf(o, " reassignment %s: replicas %s -> %s",
                   back && p->adding.n > 0 ? "cancelled" : "completed", from,
                   to);
    } else {
        image_outf(o, " replicas %s -> %s", from, to);
    }
}

static bool partition_event(struct image_out *o, const struct meta_image *img,
                            const struct meta_rec_partition_change *c)
{
    const struct meta_topic *t = meta_image_topic_by_id(img, &c->topic_id);
    if (t == NULL || c->partition < 0 || c->partition >= t->n_partitions) {
        return false;
    }
    const struct meta_partition *p = &t->partitions[c->partition];
    bool leader = c->leader != META_LEADER_UNCHANGED;
    bool isr = c->isr_changed &&
               (c->isr.n != p->isr.n ||
                memcmp(c->isr.ids, p->isr.ids,
                       (size_t)(c->isr.n < 0 ? 0 : c->isr.n) *
                           sizeof c->isr.ids[0]) != 0);
    if (!leader && !isr && !c->replicas_changed) {
        return false;
    }
    image_outf(o, "%s-%" PRId32, t->name, c->partition);
    if (c->replicas_changed) {
        reassign_event(o, p, c);
        if (leader || isr) {
            image_outf(o, ",");
        }
    }
    if (leader) {
        char from[16], to[16];
        meta_leader_format(p->leader, from);
        meta_leader_format(c->leader, to);
        image_outf(o, " leader %s -> %s epoch %" PRId32 " -> %" PRId32, from,
                   to, p->leader_epoch, p->leader_epoch + 1);
    }
    if (isr) {
        char from[META_REPLICAS_MAX * 12], to[META_REPLICAS_MAX * 12];
        meta_replica_set_format(&p->isr, from, sizeof from);
        meta_replica_set_format(&c->isr, to, sizeof to);
        image_outf(o, "%s isr %s -> %s", leader ? "," : "", from, to);
    }
    if (leader && c->leader == META_NO_LEADER) {
        image_outf(o, ", offline: no live replica in the ISR");
    } else if (leader && c->leader >= 0 &&
               !meta_replica_set_contains(&p->isr, c->leader)) {
        char was[META_REPLICAS_MAX * 12];
        meta_replica_set_format(&p->isr, was, sizeof was);
        image_outf(o, ", unclean: %" PRId32 " was not in the ISR %s, so "
                   "what only the ISR had is lost", c->leader, was);
    }
    return true;
}

static bool broker_event(struct image_out *o, const struct meta_image *img,
                         const struct meta_rec_broker_change *c)
{
    const struct meta_broker *b = meta_image_broker(img, c->broker_id);
    bool fence = c->fenced > 0 && (b == NULL || !b->fenced);
    bool unfence = c->fenced < 0 && (b == NULL || b->fenced);
    bool shutdown = c->in_controlled_shutdown > 0 &&
                    (b == NULL || !b->in_controlled_shutdown);
    if (!fence && !unfence && !shutdown) {
        return false;
    }
    image_outf(o, "broker %" PRId32, c->broker_id);
    if (shutdown) {
        image_outf(o, " in controlled shutdown");
    }
    if (fence || unfence) {
        image_outf(o, "%s %s", shutdown ? "," : "",
                   fence ? "fenced" : "unfenced");
    }
    return true;
}

/* A partition added to a topic that exists (CreatePartitions); those of
 * a topic being created are told by its "created" line. */
static bool partition_added_event(struct image_out *o,
                                  const struct meta_image *img,
                                  const struct meta_rec_partition *r)
{
    const struct meta_topic *t = meta_image_topic_by_id(img, &r->topic_id);
    if (t == NULL || r->partition < t->n_partitions) {
        return false;
    }
    char replicas[META_REPLICAS_MAX * 12];
    meta_replica_set_format(&r->replicas, replicas, sizeof replicas);
    image_outf(o, "%s-%" PRId32 " added, replicas %s, leader %" PRId32,
               t->name, r->partition, replicas, r->leader);
    return true;
}

bool meta_record_event(const struct meta_image *img,
                       const struct meta_record *rec, char *out, size_t cap)
{
    struct image_out o = {out, cap, 0};
    if (cap == 0) {
        return false;
    }
    out[0] = '\0';
    bool event = false;
    switch (rec->type) {
    case META_REC_PARTITION_CHANGE:
        event = partition_event(&o, img, &rec->u.partition_change);
        break;
    case META_REC_BROKER_CHANGE:
        event = broker_event(&o, img, &rec->u.broker_change);
        break;
    case META_REC_REGISTER_BROKER:
        image_outf(&o, "broker %" PRId32 " registered at %.*s:%" PRId32
                   " (fenced until caught up)",
                   rec->u.register_broker.broker_id,
                   (int)sizeof rec->u.register_broker.host,
                   rec->u.register_broker.host, rec->u.register_broker.port);
        event = true;
        break;
    case META_REC_TOPIC:
        image_outf(&o, "topic %.*s created", (int)sizeof rec->u.topic.name,
                   rec->u.topic.name);
        event = true;
        break;
    case META_REC_PARTITION:
        event = partition_added_event(&o, img, &rec->u.partition);
        break;
    case META_REC_UNREGISTER_BROKER:
        image_outf(&o, "broker %" PRId32 " unregistered (decommissioned)",
                   rec->u.unregister_broker.broker_id);
        event = true;
        break;
    case META_REC_REMOVE_TOPIC: {
        const struct meta_topic *t =
            meta_image_topic_by_id(img, &rec->u.remove_topic.topic_id);
        if (t != NULL) {
            image_outf(&o, "topic %s deleted", t->name);
            event = true;
        }
        break;
    }
    default:
        break;
    }
    if (!event) {
        out[0] = '\0';
    }
    return event;
}
