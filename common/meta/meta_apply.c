/* meta_apply(): one metadata record applied to the image, with Kafka's
 * replay rules (ClusterControlManager, ReplicationControlManager,
 * PartitionRegistration.merge, ConfigurationControlManager and
 * ProducerIdControlManager in apache/kafka). Pure and deterministic: the
 * result depends only on the image and the record, never on the clock,
 * addresses or allocation, so every controller and broker that applies the
 * same records in the same order ends with the same image. Runs on the
 * thread that owns the image (a controller's or broker's loop thread).
 *
 * Records are not trusted even after the codec checked them: every bound
 * and string terminator is checked again here, and a record that does not
 * fit is RC_INVALID with nothing but the offset changed.
 *
 * Decisions:
 *   - RC_NOMEM leaves the image, offset included, unchanged: every apply
 *     allocates before it mutates. The FSM aborts on it anyway.
 *   - Broker configs (resource type 4) are kept per resource: "" the
 *     cluster-wide default, "N" broker N (meta_broker_resource()); a set
 *     left empty is removed. Other resource types are RC_INVALID.
 *   - Topic names must be legal Kafka names ([a-zA-Z0-9._-]{1,249}, not
 *     "." or ".."): brokers build directory names from them.
 *   - Replica sets hold 0..META_REPLICAS_MAX distinct ids >= 0; leaders are
 *     >= -1; epochs are >= 0 and an epoch bump past INT32_MAX is invalid.
 *   - Deleting a config key that is not set is RC_OK (Kafka's replay does
 *     the same). */
#include "common/meta/meta.h"

#include "common/rc.h"

#include <stdlib.h>
#include <string.h>

/* --- Checks on untrusted record fields ----------------------------------- */

/* True if s ends with a NUL inside its array of cap bytes. */
static bool apply_str_ok(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

bool meta_topic_name_bytes_valid(const char *p, size_t n)
{
    if (p == NULL || n == 0 || n > META_TOPIC_NAME_BYTES_MAX) {
        return false;
    }
    if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                  c == '-';
        if (!ok) {
            return false; /* NUL included: no name is cut short */
        }
    }
    return true;
}

bool meta_topic_name_valid(const char *name)
{
    return name != NULL &&
           meta_topic_name_bytes_valid(
               name, strnlen(name, META_TOPIC_NAME_BYTES_MAX + 1));
}

static bool apply_topic_name_ok(const char *name, size_t cap)
{
    return apply_str_ok(name, cap) && meta_topic_name_valid(name);
}

/* Copies the n ids of a checked set, zeroing the rest, so that what lies
 * beyond n in a record never reaches the image. */
static void apply_set_copy(struct meta_replica_set *dst,
                           const struct meta_replica_set *src)
{
    memset(dst, 0, sizeof *dst);
    dst->n = src->n;
    memcpy(dst->ids, src->ids, (size_t)src->n * sizeof dst->ids[0]);
}

/* Copies a checked string; the rest of dst stays zero. */
static void apply_str_copy(char *dst, const char *src)
{
    memcpy(dst, src, strlen(src) + 1);
}

static bool apply_set_ok(const struct meta_replica_set *s)
{
    if (s->n < 0 || s->n > META_REPLICAS_MAX) {
        return false;
    }
    for (int32_t i = 0; i < s->n; i++) {
        if (s->ids[i] < 0) {
            return false;
        }
        for (int32_t j = 0; j < i; j++) {
            if (s->ids[j] == s->ids[i]) {
                return false;
            }
        }
    }
    return true;
}

/* --- Finding things, mutably --------------------------------------------- */

/* Index of broker id, or where it would be inserted; *found says which. */
static size_t apply_broker_index(const struct meta_image *img, int32_t id,
                                 bool *found)
{
    size_t lo = 0;
    size_t hi = img->n_brokers;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (img->brokers[mid].id < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *found = lo < img->n_brokers && img->brokers[lo].id == id;
    return lo;
}

/* The image's lookups, for changing what they find. */
static struct meta_topic *apply_topic_by_id(struct meta_image *img,
                                            const struct meta_uuid *id)
{
    const struct meta_topic *t = meta_image_topic_by_id(img, id);
    return t == NULL ? NULL : &img->topics[t - img->topics];
}

static struct meta_topic *apply_topic_by_name(struct meta_image *img,
                                              const char *name)
{
    const struct meta_topic *t = meta_image_topic(img, name);
    return t == NULL ? NULL : &img->topics[t - img->topics];
}

/* A sorted array of config entries: a topic's or a broker resource's. */
struct apply_configs {
    struct meta_config_entry **configs;
    size_t *n;
    size_t max;
};

/* Index of config name in c, or where it would be inserted. */
static size_t apply_config_index(const struct apply_configs *c,
                                 const char *name, bool *found)
{
    size_t lo = 0;
    size_t hi = *c->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp((*c->configs)[mid].name, name) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *found = lo < *c->n && strcmp((*c->configs)[lo].name, name) == 0;
    return lo;
}

/* Makes room for need elements of elem bytes in *arr (capacity *cap),
 * doubling. Changes nothing on RC_NOMEM. */
static int apply_reserve(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t new_cap;
    void *p;

    if (need <= *cap) {
        return RC_OK;
    }
    new_cap = *cap < 4 ? 4 : *cap * 2;
    if (new_cap < need) {
        new_cap = need;
    }
    ASSERT(new_cap <= SIZE_MAX / elem);
    p = realloc(*arr, new_cap * elem);
    if (p == NULL) {
        return RC_NOMEM;
    }
    *arr = p;
    *cap = new_cap;
    return RC_OK;
}

/* --- Brokers ------------------------------------------------------------- */

static int apply_register_broker(struct meta_image *img,
                                 const struct meta_rec_register_broker *r,
                                 int64_t epoch)
{
    struct meta_broker *b;
    bool found;
    size_t i;

    if (r->broker_id < 0 || r->port < 0 || r->port > 65535 ||
        !apply_str_ok(r->host, sizeof r->host) ||
        !apply_str_ok(r->rack, sizeof r->rack)) {
        return RC_INVALID;
    }
    i = apply_broker_index(img, r->broker_id, &found);
    if (!found) {
        void *arr = img->brokers;
        int rv;
        if (img->n_brokers >= META_BROKERS_MAX) {
            return RC_INVALID;
        }
        rv = apply_reserve(&arr, &img->cap_brokers, img->n_brokers + 1,
                           sizeof *img->brokers);
        if (rv != RC_OK) {
            return rv;
        }
        img->brokers = arr;
        memmove(&img->brokers[i + 1], &img->brokers[i],
                (img->n_brokers - i) * sizeof *img->brokers);
        img->n_brokers++;
    }
    b = &img->brokers[i];
    memset(b, 0, sizeof *b);
    b->id = r->broker_id;
    b->epoch = epoch;
    b->incarnation = r->incarnation;
    apply_str_copy(b->host, r->host);
    b->port = r->port;
    apply_str_copy(b->rack, r->rack);
    b->fenced = true;
    b->in_controlled_shutdown = false;
    return RC_OK;
}

static bool apply_tristate_ok(int8_t v)
{
    return v >= -1 && v <= 1;
}

/* Whether any partition names broker id among its replicas. */
static bool apply_broker_hosts(const struct meta_image *img, int32_t id)
{
    for (size_t t = 0; t < img->n_topics; t++) {
        const struct meta_topic *topic = &img->topics[t];
        for (int32_t p = 0; p < topic->n_partitions; p++) {
            if (meta_replica_set_contains(&topic->partitions[p].replicas,
                                          id)) {
                return true;
            }
        }
    }
    return false;
}

static int apply_unregister_broker(struct meta_image *img,
                                   const struct meta_rec_unregister_broker *r)
{
    bool found;
    size_t i = apply_broker_index(img, r->broker_id, &found);
    if (!found || img->brokers[i].epoch != r->broker_epoch ||
        apply_broker_hosts(img, r->broker_id)) {
        return RC_INVALID;
    }
    memmove(&img->brokers[i], &img->brokers[i + 1],
            (img->n_brokers - i - 1) * sizeof *img->brokers);
    img->n_brokers--;
    return RC_OK;
}

static int apply_broker_change(struct meta_image *img,
                               const struct meta_rec_broker_change *c)
{
    struct meta_broker *b;
    bool found;
    size_t i;

    if (!apply_tristate_ok(c->fenced) ||
        !apply_tristate_ok(c->in_controlled_shutdown)) {
        return RC_INVALID;
    }
    i = apply_broker_index(img, c->broker_id, &found);
    if (!found || img->brokers[i].epoch != c->broker_epoch) {
        return RC_INVALID; /* unknown broker or stale epoch */
    }
    b = &img->brokers[i];
    if (c->fenced != 0) {
        b->fenced = c->fenced > 0;
    }
    if (c->in_controlled_shutdown != 0) {
        b->in_controlled_shutdown = c->in_controlled_shutdown > 0;
    }
    return RC_OK;
}

/* --- Topics and partitions ----------------------------------------------- */

static int apply_topic(struct meta_image *img, const struct meta_rec_topic *r)
{
    struct meta_topic *t;
    void *arr = img->topics;
    int rv;

    if (!apply_topic_name_ok(r->name, sizeof r->name) ||
        meta_uuid_is_zero(&r->id)) {
        return RC_INVALID;
    }
    if (apply_topic_by_name(img, r->name) != NULL ||
        apply_topic_by_id(img, &r->id) != NULL ||
        img->n_topics >= META_TOPICS_MAX) {
        return RC_INVALID;
    }
    rv = apply_reserve(&arr, &img->cap_topics, img->n_topics + 1,
                       sizeof *img->topics);
    if (rv != RC_OK) {
        return rv;
    }
    img->topics = arr;
    t = &img->topics[img->n_topics++];
    memset(t, 0, sizeof *t);
    apply_str_copy(t->name, r->name);
    t->id = r->id;
    meta_image_index_topic(img, img->n_topics - 1);
    return RC_OK;
}

/* Room for one more partition; changes nothing on RC_NOMEM. */
static int apply_partition_reserve(struct meta_topic *t)
{
    int32_t cap;
    struct meta_partition *p;

    if (t->n_partitions < t->cap_partitions) {
        return RC_OK;
    }
    cap = t->cap_partitions < 4 ? 4 : t->cap_partitions * 2;
    if (cap > META_PARTITIONS_MAX) {
        cap = META_PARTITIONS_MAX;
    }
    ASSERT(cap > t->n_partitions);
    p = realloc(t->partitions, (size_t)cap * sizeof *p);
    if (p == NULL) {
        return RC_NOMEM;
    }
    t->partitions = p;
    t->cap_partitions = cap;
    return RC_OK;
}

/* A reassignment's adding and removing sets: valid sets, disjoint, both
 * within replicas. */
static bool apply_reassignment_ok(const struct meta_replica_set *replicas,
                                  const struct meta_replica_set *adding,
                                  const struct meta_replica_set *removing)
{
    if (!apply_set_ok(adding) || !apply_set_ok(removing)) {
        return false;
    }
    for (int32_t i = 0; i < adding->n; i++) {
        if (!meta_replica_set_contains(replicas, adding->ids[i]) ||
            meta_replica_set_contains(removing, adding->ids[i])) {
            return false;
        }
    }
    for (int32_t i = 0; i < removing->n; i++) {
        if (!meta_replica_set_contains(replicas, removing->ids[i])) {
            return false;
        }
    }
    return true;
}

static int apply_partition(struct meta_image *img,
                           const struct meta_rec_partition *r)
{
    struct meta_topic *t = apply_topic_by_id(img, &r->topic_id);
    struct meta_partition *p;

    if (t == NULL || r->partition < 0 || r->partition > t->n_partitions) {
        return RC_INVALID;
    }
    if (!apply_set_ok(&r->replicas) || !apply_set_ok(&r->isr) ||
        !apply_reassignment_ok(&r->replicas, &r->adding, &r->removing) ||
        r->leader < META_NO_LEADER || r->leader_epoch < 0 ||
        r->partition_epoch < 0) {
        return RC_INVALID;
    }
    if (r->partition == t->n_partitions) {
        int rv;
        if (t->n_partitions >= META_PARTITIONS_MAX) {
            return RC_INVALID;
        }
        rv = apply_partition_reserve(t);
        if (rv != RC_OK) {
            return rv;
        }
        t->n_partitions++;
    }
    p = &t->partitions[r->partition];
    memset(p, 0, sizeof *p);
    p->id = r->partition;
    apply_set_copy(&p->replicas, &r->replicas);
    apply_set_copy(&p->isr, &r->isr);
    apply_set_copy(&p->adding, &r->adding);
    apply_set_copy(&p->removing, &r->removing);
    p->leader = r->leader;
    p->leader_epoch = r->leader_epoch;
    p->partition_epoch = r->partition_epoch;
    return RC_OK;
}

static int apply_partition_change(struct meta_image *img,
                                  const struct meta_rec_partition_change *c)
{
    struct meta_topic *t = apply_topic_by_id(img, &c->topic_id);
    struct meta_partition *p;
    bool set_leader = c->leader != META_LEADER_UNCHANGED;

    if (t == NULL || c->partition < 0 || c->partition >= t->n_partitions) {
        return RC_INVALID;
    }
    p = &t->partitions[c->partition];
    if (c->isr_changed && !apply_set_ok(&c->isr)) {
        return RC_INVALID;
    }
    if (c->replicas_changed &&
        (!apply_set_ok(&c->replicas) || c->replicas.n == 0 ||
         !apply_reassignment_ok(&c->replicas, &c->adding, &c->removing))) {
        return RC_INVALID;
    }
    if (set_leader &&
        (c->leader < META_NO_LEADER || p->leader_epoch == INT32_MAX)) {
        return RC_INVALID;
    }
    if (p->partition_epoch == INT32_MAX) {
        return RC_INVALID;
    }
    if (c->isr_changed) {
        apply_set_copy(&p->isr, &c->isr);
    }
    if (c->replicas_changed) {
        apply_set_copy(&p->replicas, &c->replicas);
        apply_set_copy(&p->adding, &c->adding);
        apply_set_copy(&p->removing, &c->removing);
    }
    if (set_leader) {
        p->leader = c->leader;
        p->leader_epoch++;
    }
    p->partition_epoch++;
    return RC_OK;
}

static int apply_remove_topic(struct meta_image *img,
                              const struct meta_rec_remove_topic *r)
{
    struct meta_topic *t = apply_topic_by_id(img, &r->topic_id);
    size_t i;

    if (t == NULL) {
        return RC_INVALID;
    }
    i = (size_t)(t - img->topics);
    meta_topic_free(t);
    memmove(&img->topics[i], &img->topics[i + 1],
            (img->n_topics - i - 1) * sizeof *img->topics);
    img->n_topics--;
    meta_image_reindex(img); /* the later topics moved down */
    return RC_OK;
}

/* --- Configs and producer ids -------------------------------------------- */

static void apply_config_delete(const struct apply_configs *c, size_t i)
{
    struct meta_config_entry *arr = *c->configs;
    free(arr[i].name);
    free(arr[i].value);
    memmove(&arr[i], &arr[i + 1], (*c->n - i - 1) * sizeof *arr);
    (*c->n)--;
    if (*c->n == 0) {
        free(arr);
        *c->configs = NULL;
    }
}

/* Sets name=value in c; allocates everything before changing anything. */
static int apply_config_set(const struct apply_configs *c, const char *name,
                            const char *value)
{
    struct meta_config_entry *arr;
    char *v;
    char *k;
    bool found;
    size_t i = apply_config_index(c, name, &found);

    if (!found && *c->n >= c->max) {
        return RC_INVALID;
    }
    v = strdup(value);
    if (v == NULL) {
        return RC_NOMEM;
    }
    if (found) {
        free((*c->configs)[i].value);
        (*c->configs)[i].value = v;
        return RC_OK;
    }
    /* A successful realloc only adds room: the image is unchanged. */
    arr = realloc(*c->configs, (*c->n + 1) * sizeof *arr);
    if (arr == NULL) {
        free(v);
        return RC_NOMEM;
    }
    *c->configs = arr;
    k = strdup(name);
    if (k == NULL) {
        free(v);
        return RC_NOMEM;
    }
    memmove(&arr[i + 1], &arr[i], (*c->n - i) * sizeof *arr);
    arr[i].name = k;
    arr[i].value = v;
    (*c->n)++;
    return RC_OK;
}

static int apply_config_change(const struct apply_configs *c,
                               const struct meta_rec_config *r)
{
    bool found;
    size_t i;

    if (r->has_value) {
        return apply_config_set(c, r->name, r->value);
    }
    i = apply_config_index(c, r->name, &found);
    if (found) {
        apply_config_delete(c, i);
    }
    return RC_OK;
}

/* The set of broker (created empty if need be; NULL: no memory or no
 * room, *rv says which). */
static struct meta_broker_configs *
apply_broker_set(struct meta_image *img, int32_t broker, bool create,
                 int *rv)
{
    size_t lo = 0;
    size_t hi = img->n_broker_configs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (img->broker_configs[mid].broker < broker) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < img->n_broker_configs &&
        img->broker_configs[lo].broker == broker) {
        return &img->broker_configs[lo];
    }
    if (!create) {
        return NULL;
    }
    if (img->n_broker_configs >= META_BROKER_CONFIG_SETS_MAX) {
        *rv = RC_INVALID;
        return NULL;
    }
    struct meta_broker_configs *arr = realloc(
        img->broker_configs, (img->n_broker_configs + 1) * sizeof *arr);
    if (arr == NULL) {
        *rv = RC_NOMEM;
        return NULL;
    }
    img->broker_configs = arr;
    memmove(&arr[lo + 1], &arr[lo],
            (img->n_broker_configs - lo) * sizeof *arr);
    arr[lo] = (struct meta_broker_configs){.broker = broker};
    img->n_broker_configs++;
    return &arr[lo];
}

static int apply_broker_config(struct meta_image *img,
                               const struct meta_rec_config *c)
{
    int32_t broker;
    int rv = RC_OK;

    if (!meta_broker_resource(c->resource_name, &broker)) {
        return RC_INVALID;
    }
    struct meta_broker_configs *set =
        apply_broker_set(img, broker, c->has_value, &rv);
    if (set == NULL) {
        return rv; /* RC_OK: deleting from a set that has nothing */
    }
    struct apply_configs ac = {&set->configs, &set->n_configs,
                               META_BROKER_CONFIGS_MAX};
    rv = apply_config_change(&ac, c);
    if (set->n_configs == 0) { /* also after a failed first set */
        size_t i = (size_t)(set - img->broker_configs);
        memmove(set, set + 1,
                (img->n_broker_configs - i - 1) * sizeof *set);
        img->n_broker_configs--;
    }
    return rv;
}

static int apply_config(struct meta_image *img, const struct meta_rec_config *c)
{
    struct meta_topic *t;

    if (!apply_str_ok(c->resource_name, sizeof c->resource_name) ||
        !apply_str_ok(c->name, sizeof c->name) || c->name[0] == '\0' ||
        (c->has_value && !apply_str_ok(c->value, sizeof c->value))) {
        return RC_INVALID;
    }
    if (c->resource_type == META_RESOURCE_BROKER) {
        return apply_broker_config(img, c);
    }
    if (c->resource_type != META_RESOURCE_TOPIC) {
        return RC_INVALID;
    }
    t = apply_topic_by_name(img, c->resource_name);
    if (t == NULL) {
        return RC_INVALID;
    }
    struct apply_configs ac = {&t->configs, &t->n_configs,
                               META_TOPIC_CONFIGS_MAX};
    return apply_config_change(&ac, c);
}

static int apply_producer_ids(struct meta_image *img,
                              const struct meta_rec_producer_ids *r)
{
    if (r->next_producer_id <= img->next_producer_id) {
        return RC_INVALID;
    }
    img->next_producer_id = r->next_producer_id;
    return RC_OK;
}

/* --- Entry point --------------------------------------------------------- */

static void apply_check_invariants(const struct meta_image *img)
{
    ASSERT(img->offset >= 0);
    ASSERT(img->n_brokers <= img->cap_brokers);
    ASSERT(img->n_brokers <= META_BROKERS_MAX);
    ASSERT(img->n_topics <= img->cap_topics);
    ASSERT(img->n_topics <= META_TOPICS_MAX);
    ASSERT(img->next_producer_id >= 0);
    for (size_t i = 1; i < img->n_brokers; i++) {
        DEBUG_ASSERT(img->brokers[i - 1].id < img->brokers[i].id);
    }
}

/* Notes what rec changed in img->changes. */
static void apply_note(struct meta_image *img, const struct meta_record *rec)
{
    struct meta_changes *c = img->changes;
    const struct meta_topic *t;
    switch (rec->type) {
    case META_REC_PARTITION:
        meta_changes_note(c, &rec->u.partition.topic_id,
                          rec->u.partition.partition);
        break;
    case META_REC_PARTITION_CHANGE:
        meta_changes_note(c, &rec->u.partition_change.topic_id,
                          rec->u.partition_change.partition);
        break;
    case META_REC_CONFIG:
        t = rec->u.config.resource_type == META_RESOURCE_TOPIC
                ? meta_image_topic(img, rec->u.config.resource_name)
                : NULL;
        if (t != NULL) {
            meta_changes_note(c, &t->id, META_INDEX_TOPIC);
        } else {
            c->hosted = true; /* a broker's config: every topic's default */
        }
        break;
    case META_REC_REGISTER_BROKER:
    case META_REC_BROKER_CHANGE:
    case META_REC_UNREGISTER_BROKER:
    case META_REC_REMOVE_TOPIC:
        c->hosted = true;
        break;
    default:
        break; /* a new topic has no partitions yet; producer ids */
    }
}

int meta_apply(struct meta_image *img, const struct meta_record *rec)
{
    int rv;

    ASSERT(img->offset < INT64_MAX);
    switch (rec->type) {
    case META_REC_REGISTER_BROKER:
        /* The broker epoch is this record's own offset. */
        rv = apply_register_broker(img, &rec->u.register_broker,
                                   img->offset + 1);
        break;
    case META_REC_BROKER_CHANGE:
        rv = apply_broker_change(img, &rec->u.broker_change);
        break;
    case META_REC_TOPIC:
        rv = apply_topic(img, &rec->u.topic);
        break;
    case META_REC_PARTITION:
        rv = apply_partition(img, &rec->u.partition);
        break;
    case META_REC_PARTITION_CHANGE:
        rv = apply_partition_change(img, &rec->u.partition_change);
        break;
    case META_REC_REMOVE_TOPIC:
        rv = apply_remove_topic(img, &rec->u.remove_topic);
        break;
    case META_REC_CONFIG:
        rv = apply_config(img, &rec->u.config);
        break;
    case META_REC_PRODUCER_IDS:
        rv = apply_producer_ids(img, &rec->u.producer_ids);
        break;
    case META_REC_UNREGISTER_BROKER:
        rv = apply_unregister_broker(img, &rec->u.unregister_broker);
        break;
    default:
        rv = RC_INVALID; /* a type this build does not know */
        break;
    }
    if (rv != RC_NOMEM) {
        img->offset++;
    }
    if (rv == RC_OK && img->changes != NULL) {
        apply_note(img, rec);
    }
    apply_check_invariants(img);
    return rv;
}
