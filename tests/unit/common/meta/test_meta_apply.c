/* Tests for common/meta/meta_apply.c, common/meta/meta_image.c and
 * common/meta/meta_event.c: each of
 * Kafka's replay rules (broker epochs, fencing, topics, partitions, leader and
 * partition epochs, configs, producer ids), the offset counting every record,
 * untrusted bounds, deep copies, descriptions, and determinism: images fed the
 * same seeded random records end equal. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/limits.h"
#include "common/meta/meta.h"
#include "common/rc.h"

/* Criterion reports every assertion; in loops only failures should cost. */
#define CHECK(cond, ...)                                               \
    do {                                                               \
        if (!(cond)) {                                                 \
            cr_assert_fail(__VA_ARGS__);                               \
        }                                                              \
    } while (0)

/* --- Building records ---------------------------------------------------- */

static struct meta_uuid uuid_n(uint8_t n)
{
    struct meta_uuid u;

    memset(&u, 0, sizeof u);
    u.b[0] = 0xab;
    u.b[15] = n;
    return u;
}

static struct meta_replica_set set_of(const int32_t *ids, int32_t n)
{
    struct meta_replica_set s;

    memset(&s, 0, sizeof s);
    s.n = n;
    for (int32_t i = 0; i < n && i < META_REPLICAS_MAX; i++) {
        s.ids[i] = ids[i];
    }
    return s;
}

#define SET(...)                                                       \
    set_of((const int32_t[]){__VA_ARGS__},                             \
           (int32_t)(sizeof((const int32_t[]){__VA_ARGS__}) /          \
                     sizeof(int32_t)))
#define EMPTY_SET set_of(NULL, 0)

static struct meta_record rec_new(enum meta_record_type type)
{
    struct meta_record r;

    memset(&r, 0, sizeof r);
    r.type = type;
    return r;
}

static struct meta_record r_register(int32_t id, const char *host,
                                     int32_t port, uint8_t incarnation)
{
    struct meta_record r = rec_new(META_REC_REGISTER_BROKER);

    r.u.register_broker.broker_id = id;
    r.u.register_broker.incarnation = uuid_n(incarnation);
    snprintf(r.u.register_broker.host, sizeof r.u.register_broker.host, "%s",
             host);
    r.u.register_broker.port = port;
    snprintf(r.u.register_broker.rack, sizeof r.u.register_broker.rack,
             "rack-%d", (int)id);
    return r;
}

static struct meta_record r_change(int32_t id, int64_t epoch, int8_t fenced,
                                   int8_t shutdown)
{
    struct meta_record r = rec_new(META_REC_BROKER_CHANGE);

    r.u.broker_change.broker_id = id;
    r.u.broker_change.broker_epoch = epoch;
    r.u.broker_change.fenced = fenced;
    r.u.broker_change.in_controlled_shutdown = shutdown;
    return r;
}

static struct meta_record r_topic(const char *name, uint8_t id)
{
    struct meta_record r = rec_new(META_REC_TOPIC);

    snprintf(r.u.topic.name, sizeof r.u.topic.name, "%s", name);
    r.u.topic.id = uuid_n(id);
    return r;
}

static struct meta_record r_partition(uint8_t topic, int32_t p,
                                      struct meta_replica_set replicas,
                                      struct meta_replica_set isr,
                                      int32_t leader, int32_t leader_epoch,
                                      int32_t partition_epoch)
{
    struct meta_record r = rec_new(META_REC_PARTITION);

    r.u.partition.topic_id = uuid_n(topic);
    r.u.partition.partition = p;
    r.u.partition.replicas = replicas;
    r.u.partition.isr = isr;
    r.u.partition.leader = leader;
    r.u.partition.leader_epoch = leader_epoch;
    r.u.partition.partition_epoch = partition_epoch;
    return r;
}

/* isr NULL: unchanged. */
static struct meta_record r_pchange(uint8_t topic, int32_t p,
                                    const struct meta_replica_set *isr,
                                    int32_t leader)
{
    struct meta_record r = rec_new(META_REC_PARTITION_CHANGE);

    r.u.partition_change.topic_id = uuid_n(topic);
    r.u.partition_change.partition = p;
    if (isr != NULL) {
        r.u.partition_change.isr_changed = true;
        r.u.partition_change.isr = *isr;
    }
    r.u.partition_change.leader = leader;
    return r;
}

static struct meta_record r_remove(uint8_t topic)
{
    struct meta_record r = rec_new(META_REC_REMOVE_TOPIC);

    r.u.remove_topic.topic_id = uuid_n(topic);
    return r;
}

/* value NULL deletes the key. */
static struct meta_record r_config(int8_t type, const char *resource,
                                   const char *key, const char *value)
{
    struct meta_record r = rec_new(META_REC_CONFIG);
    struct meta_rec_config *c = &r.u.config;

    c->resource_type = type;
    snprintf(c->resource_name, sizeof c->resource_name, "%s", resource);
    snprintf(c->name, sizeof c->name, "%s", key);
    c->has_value = value != NULL;
    if (value != NULL) {
        snprintf(c->value, sizeof c->value, "%s", value);
    }
    return r;
}

static struct meta_record r_pids(int64_t next)
{
    struct meta_record r = rec_new(META_REC_PRODUCER_IDS);

    r.u.producer_ids.broker_id = 1;
    r.u.producer_ids.broker_epoch = 1;
    r.u.producer_ids.next_producer_id = next;
    return r;
}

static int apply(struct meta_image *img, struct meta_record rec)
{
    return meta_apply(img, &rec);
}

#define APPLY_OK(img, rec) cr_assert_eq(apply((img), (rec)), RC_OK)
#define APPLY_INVALID(img, rec) cr_assert_eq(apply((img), (rec)), RC_INVALID)

/* --- Comparing images ---------------------------------------------------- */

static void assert_sets_eq(const struct meta_replica_set *a,
                           const struct meta_replica_set *b)
{
    CHECK(a->n == b->n, "set sizes %d != %d", a->n, b->n);
    for (int32_t i = 0; i < a->n; i++) {
        CHECK(a->ids[i] == b->ids[i], "set[%d] differs", i);
    }
}

static void assert_topics_eq(const struct meta_topic *a,
                             const struct meta_topic *b)
{
    CHECK(strcmp(a->name, b->name) == 0, "topic %s != %s", a->name, b->name);
    CHECK(meta_uuid_eq(&a->id, &b->id), "topic %s: ids differ", a->name);
    CHECK(a->n_partitions == b->n_partitions, "topic %s: partitions",
          a->name);
    for (int32_t i = 0; i < a->n_partitions; i++) {
        const struct meta_partition *p = &a->partitions[i];
        const struct meta_partition *q = &b->partitions[i];
        CHECK(p->id == q->id && p->leader == q->leader &&
                  p->leader_epoch == q->leader_epoch &&
                  p->partition_epoch == q->partition_epoch,
              "%s-%d differs", a->name, i);
        assert_sets_eq(&p->replicas, &q->replicas);
        assert_sets_eq(&p->isr, &q->isr);
    }
    CHECK(a->n_configs == b->n_configs, "topic %s: configs", a->name);
    for (size_t i = 0; i < a->n_configs; i++) {
        CHECK(strcmp(a->configs[i].name, b->configs[i].name) == 0 &&
                  strcmp(a->configs[i].value, b->configs[i].value) == 0,
              "topic %s: config %zu differs", a->name, i);
    }
}

static void assert_images_eq(const struct meta_image *a,
                             const struct meta_image *b)
{
    CHECK(a->offset == b->offset, "offsets differ");
    CHECK(a->next_producer_id == b->next_producer_id, "producer ids");
    CHECK(a->n_brokers == b->n_brokers, "broker counts differ");
    for (size_t i = 0; i < a->n_brokers; i++) {
        const struct meta_broker *x = &a->brokers[i];
        const struct meta_broker *y = &b->brokers[i];
        CHECK(x->id == y->id && x->epoch == y->epoch &&
                  meta_uuid_eq(&x->incarnation, &y->incarnation) &&
                  strcmp(x->host, y->host) == 0 && x->port == y->port &&
                  strcmp(x->rack, y->rack) == 0 && x->fenced == y->fenced &&
                  x->in_controlled_shutdown == y->in_controlled_shutdown,
              "broker %d differs", x->id);
    }
    CHECK(a->n_topics == b->n_topics, "topic counts differ");
    for (size_t i = 0; i < a->n_topics; i++) {
        assert_topics_eq(&a->topics[i], &b->topics[i]);
    }
}

/* Asserts that only the offset moved (by one) since before. */
static void assert_only_offset_moved(const struct meta_image *before,
                                     const struct meta_image *after)
{
    struct meta_image tmp;

    meta_image_init(&tmp);
    cr_assert_eq(meta_image_copy(&tmp, before), RC_OK);
    tmp.offset++;
    assert_images_eq(&tmp, after);
    meta_image_free(&tmp);
}

static const struct meta_partition *part(const struct meta_image *img,
                                         uint8_t topic, int32_t p)
{
    struct meta_uuid id = uuid_n(topic);

    return meta_image_partition(img, &id, p);
}

/* An image with brokers 1..3 (unfenced), topic "orders" (id 1) with
 * partition 0 = replicas [1,2,3], isr [1,2,3], leader 1. */
static void build_orders(struct meta_image *img)
{
    meta_image_init(img);
    for (int32_t b = 1; b <= 3; b++) {
        APPLY_OK(img, r_register(b, "localhost", 9090 + b, (uint8_t)b));
        APPLY_OK(img, r_change(b, img->offset, -1, 0));
    }
    APPLY_OK(img, r_topic("orders", 1));
    APPLY_OK(img, r_partition(1, 0, SET(1, 2, 3), SET(1, 2, 3), 1, 0, 0));
}

/* --- Offsets ------------------------------------------------------------- */

Test(meta_apply, offset_counts_every_record_including_rejected)
{
    struct meta_image img;
    struct meta_record bogus = rec_new(META_REC_TOPIC);

    meta_image_init(&img);
    cr_assert_eq(img.offset, 0);
    APPLY_OK(&img, r_topic("a", 1));
    cr_assert_eq(img.offset, 1);
    APPLY_INVALID(&img, r_topic("a", 2));          /* duplicate name */
    cr_assert_eq(img.offset, 2);
    APPLY_INVALID(&img, r_change(7, 1, 1, 0));      /* unknown broker */
    cr_assert_eq(img.offset, 3);
    bogus.type = (enum meta_record_type)99;
    cr_assert_eq(meta_apply(&img, &bogus), RC_INVALID);
    cr_assert_eq(img.offset, 4);
    meta_image_free(&img);
}

/* --- Brokers ------------------------------------------------------------- */

Test(meta_apply, register_broker_is_fenced_with_its_offset_as_epoch)
{
    struct meta_image img;
    const struct meta_broker *b;

    meta_image_init(&img);
    APPLY_OK(&img, r_topic("x", 9));
    APPLY_OK(&img, r_register(5, "h5", 9092, 1));
    APPLY_OK(&img, r_register(2, "h2", 9093, 2));
    APPLY_OK(&img, r_register(9, "h9", 9094, 3));
    cr_assert_eq(img.n_brokers, 3);
    cr_assert_eq(img.brokers[0].id, 2); /* kept sorted by id */
    cr_assert_eq(img.brokers[1].id, 5);
    cr_assert_eq(img.brokers[2].id, 9);
    b = meta_image_broker(&img, 5);
    cr_assert_not_null(b);
    cr_assert_eq(b->epoch, 2);
    cr_assert(b->fenced);
    cr_assert_not(b->in_controlled_shutdown);
    cr_assert_str_eq(b->host, "h5");
    cr_assert_eq(b->port, 9092);
    cr_assert_str_eq(b->rack, "rack-5");
    cr_assert_eq(meta_image_broker(&img, 9)->epoch, 4);
    cr_assert_null(meta_image_broker(&img, 3));
    meta_image_free(&img);
}

Test(meta_apply, register_again_replaces_and_gets_a_new_epoch)
{
    struct meta_image img;
    const struct meta_broker *b;

    meta_image_init(&img);
    APPLY_OK(&img, r_register(1, "old", 9092, 1));
    APPLY_OK(&img, r_change(1, 1, -1, 1));
    b = meta_image_broker(&img, 1);
    cr_assert_not(b->fenced);
    cr_assert(b->in_controlled_shutdown);
    APPLY_OK(&img, r_register(1, "new", 9999, 2));
    cr_assert_eq(img.n_brokers, 1);
    b = meta_image_broker(&img, 1);
    cr_assert_eq(b->epoch, 3);
    cr_assert(b->fenced);
    cr_assert_not(b->in_controlled_shutdown);
    cr_assert_str_eq(b->host, "new");
    cr_assert_eq(b->port, 9999);
    cr_assert(meta_uuid_eq(&b->incarnation, &(struct meta_uuid){0}) == false);
    cr_assert_eq(b->incarnation.b[15], 2);
    meta_image_free(&img);
}

Test(meta_apply, broker_change_sets_and_clears_fencing_and_shutdown)
{
    struct meta_image img;
    const struct meta_broker *b;

    meta_image_init(&img);
    APPLY_OK(&img, r_register(1, "h", 9092, 1));
    b = meta_image_broker(&img, 1);
    APPLY_OK(&img, r_change(1, 1, -1, 0));
    cr_assert_not(b->fenced);
    cr_assert_not(b->in_controlled_shutdown);
    APPLY_OK(&img, r_change(1, 1, 0, 1));
    cr_assert_not(b->fenced); /* 0 leaves it */
    cr_assert(b->in_controlled_shutdown);
    APPLY_OK(&img, r_change(1, 1, 1, 0));
    cr_assert(b->fenced);
    cr_assert(b->in_controlled_shutdown);
    APPLY_OK(&img, r_change(1, 1, 0, -1));
    cr_assert(b->fenced);
    cr_assert_not(b->in_controlled_shutdown);
    APPLY_INVALID(&img, r_change(1, 1, 2, 0));
    APPLY_INVALID(&img, r_change(1, 1, 0, -2));
    cr_assert_eq(b->epoch, 1);
    meta_image_free(&img);
}

Test(meta_apply, broker_change_with_a_stale_epoch_changes_nothing)
{
    struct meta_image img;
    struct meta_image before;

    meta_image_init(&img);
    APPLY_OK(&img, r_register(1, "h", 9092, 1)); /* epoch 1 */
    APPLY_OK(&img, r_register(1, "h", 9092, 2)); /* epoch 2 */
    meta_image_init(&before);
    cr_assert_eq(meta_image_copy(&before, &img), RC_OK);
    APPLY_INVALID(&img, r_change(1, 1, -1, 1));
    assert_only_offset_moved(&before, &img);
    cr_assert(meta_image_broker(&img, 1)->fenced);
    APPLY_INVALID(&img, r_change(2, 2, -1, 0)); /* unknown broker */
    APPLY_OK(&img, r_change(1, 2, -1, 0));
    cr_assert_not(meta_image_broker(&img, 1)->fenced);
    meta_image_free(&before);
    meta_image_free(&img);
}

Test(meta_apply, register_broker_checks_its_fields_and_the_broker_bound)
{
    struct meta_image img;
    struct meta_record r = r_register(1, "h", 9092, 1);

    meta_image_init(&img);
    APPLY_INVALID(&img, r_register(-1, "h", 9092, 1));
    APPLY_INVALID(&img, r_register(1, "h", 65536, 1));
    APPLY_INVALID(&img, r_register(1, "h", -1, 1));
    memset(r.u.register_broker.host, 'h', sizeof r.u.register_broker.host);
    APPLY_INVALID(&img, r); /* no NUL */
    r = r_register(1, "h", 9092, 1);
    memset(r.u.register_broker.rack, 'r', sizeof r.u.register_broker.rack);
    APPLY_INVALID(&img, r);
    cr_assert_eq(img.n_brokers, 0);
    for (int32_t i = 0; i < (int32_t)META_BROKERS_MAX; i++) {
        CHECK(apply(&img, r_register(i, "h", 1, 1)) == RC_OK, "broker %d", i);
    }
    APPLY_INVALID(&img, r_register((int32_t)META_BROKERS_MAX, "h", 1, 1));
    APPLY_OK(&img, r_register(0, "again", 1, 1)); /* replacing still works */
    cr_assert_eq(img.n_brokers, META_BROKERS_MAX);
    meta_image_free(&img);
}

/* --- Topics -------------------------------------------------------------- */

Test(meta_apply, topic_is_added_unless_its_name_or_id_exists)
{
    struct meta_image img;
    const struct meta_topic *t;
    struct meta_uuid id2 = uuid_n(2);

    meta_image_init(&img);
    APPLY_OK(&img, r_topic("orders", 1));
    APPLY_OK(&img, r_topic("Pay_ments.v-2", 2));
    APPLY_INVALID(&img, r_topic("orders", 3));
    APPLY_INVALID(&img, r_topic("other", 2));
    cr_assert_eq(img.n_topics, 2);
    t = meta_image_topic(&img, "orders");
    cr_assert_not_null(t);
    cr_assert_eq(t->n_partitions, 0);
    cr_assert_eq(t->id.b[15], 1);
    cr_assert_eq(meta_image_topic_by_id(&img, &id2), &img.topics[1]);
    cr_assert_null(meta_image_topic(&img, "other"));
    meta_image_free(&img);
}

Test(meta_apply, topic_names_and_ids_must_be_legal)
{
    struct meta_image img;
    struct meta_record r = r_topic("t", 0);

    meta_image_init(&img);
    memset(&r.u.topic.id, 0, sizeof r.u.topic.id);
    APPLY_INVALID(&img, r); /* the zero uuid is reserved */
    APPLY_INVALID(&img, r_topic("", 1));
    APPLY_INVALID(&img, r_topic(".", 1));
    APPLY_INVALID(&img, r_topic("..", 1));
    APPLY_INVALID(&img, r_topic("../etc", 1));
    APPLY_INVALID(&img, r_topic("a b", 1));
    r = r_topic("t", 1);
    memset(r.u.topic.name, 'a', sizeof r.u.topic.name);
    APPLY_INVALID(&img, r); /* no NUL */
    r.u.topic.name[META_TOPIC_NAME_BYTES_MAX] = '\0';
    APPLY_OK(&img, r); /* 249 bytes is the longest */
    cr_assert_eq(img.n_topics, 1);
    meta_image_free(&img);
}

Test(meta_apply, remove_topic_drops_its_partitions_and_configs)
{
    struct meta_image img;
    struct meta_uuid id1 = uuid_n(1);

    build_orders(&img);
    APPLY_OK(&img, r_topic("later", 2));
    APPLY_OK(&img, r_config(META_RESOURCE_TOPIC, "orders", "retention.ms",
                            "1000"));
    APPLY_OK(&img, r_remove(1));
    cr_assert_eq(img.n_topics, 1);
    cr_assert_null(meta_image_topic(&img, "orders"));
    cr_assert_null(meta_image_topic_by_id(&img, &id1));
    cr_assert_null(part(&img, 1, 0));
    cr_assert_str_eq(img.topics[0].name, "later");
    APPLY_INVALID(&img, r_remove(1));
    APPLY_INVALID(&img, r_pchange(1, 0, NULL, 2));
    /* The name is free again, and nothing of the old topic comes back. */
    APPLY_OK(&img, r_topic("orders", 3));
    cr_assert_eq(meta_image_topic(&img, "orders")->n_partitions, 0);
    cr_assert_null(meta_topic_config(meta_image_topic(&img, "orders"),
                                     "retention.ms"));
    meta_image_free(&img);
}

/* --- Partitions ---------------------------------------------------------- */

Test(meta_apply, partition_records_append_in_order_or_replace)
{
    struct meta_image img;
    const struct meta_partition *p;

    meta_image_init(&img);
    APPLY_INVALID(&img, r_partition(1, 0, SET(1), SET(1), 1, 0, 0));
    APPLY_OK(&img, r_topic("t", 1));
    APPLY_INVALID(&img, r_partition(1, 1, SET(1), SET(1), 1, 0, 0)); /* gap */
    APPLY_INVALID(&img, r_partition(1, -1, SET(1), SET(1), 1, 0, 0));
    APPLY_OK(&img, r_partition(1, 0, SET(1, 2), SET(1), 1, 0, 0));
    APPLY_OK(&img, r_partition(1, 1, SET(2, 3), SET(2, 3), 2, 0, 0));
    APPLY_INVALID(&img, r_partition(1, 3, SET(1), SET(1), 1, 0, 0));
    APPLY_OK(&img, r_partition(1, 0, SET(3, 1), SET(3), 3, 7, 9));
    cr_assert_eq(meta_image_topic(&img, "t")->n_partitions, 2);
    p = part(&img, 1, 0);
    cr_assert_eq(p->id, 0);
    cr_assert_eq(p->replicas.n, 2);
    cr_assert_eq(p->replicas.ids[0], 3);
    cr_assert_eq(p->replicas.ids[1], 1);
    cr_assert_eq(p->isr.n, 1);
    cr_assert_eq(p->leader, 3);
    cr_assert_eq(p->leader_epoch, 7);
    cr_assert_eq(p->partition_epoch, 9);
    cr_assert_eq(part(&img, 1, 1)->id, 1);
    cr_assert_null(part(&img, 1, 2));
    cr_assert_null(part(&img, 2, 0));
    meta_image_free(&img);
}

Test(meta_apply, partition_record_bounds_are_checked)
{
    struct meta_image img;
    struct meta_record r;

    meta_image_init(&img);
    APPLY_OK(&img, r_topic("t", 1));
    r = r_partition(1, 0, SET(1), SET(1), 1, 0, 0);
    r.u.partition.replicas.n = META_REPLICAS_MAX + 1;
    APPLY_INVALID(&img, r);
    r.u.partition.replicas.n = -1;
    APPLY_INVALID(&img, r);
    r = r_partition(1, 0, SET(1), SET(1), 1, 0, 0);
    r.u.partition.isr.n = META_REPLICAS_MAX + 1;
    APPLY_INVALID(&img, r);
    APPLY_INVALID(&img, r_partition(1, 0, SET(1, 1), SET(1), 1, 0, 0));
    APPLY_INVALID(&img, r_partition(1, 0, SET(1, -4), SET(1), 1, 0, 0));
    APPLY_INVALID(&img, r_partition(1, 0, SET(1), SET(1), -2, 0, 0));
    APPLY_INVALID(&img, r_partition(1, 0, SET(1), SET(1), 1, -1, 0));
    APPLY_INVALID(&img, r_partition(1, 0, SET(1), SET(1), 1, 0, -1));
    cr_assert_eq(meta_image_topic(&img, "t")->n_partitions, 0);
    /* Sixteen replicas, an empty ISR and no leader are all fine. */
    r = r_partition(1, 0, EMPTY_SET, EMPTY_SET, META_NO_LEADER, 0, 0);
    for (int32_t i = 0; i < META_REPLICAS_MAX; i++) {
        r.u.partition.replicas.ids[i] = i;
    }
    r.u.partition.replicas.n = META_REPLICAS_MAX;
    APPLY_OK(&img, r);
    cr_assert_eq(part(&img, 1, 0)->replicas.n, META_REPLICAS_MAX);
    meta_image_free(&img);
}

Test(meta_apply, a_topic_holds_at_most_the_partition_bound)
{
    struct meta_image img;

    meta_image_init(&img);
    APPLY_OK(&img, r_topic("big", 1));
    for (int32_t p = 0; p < META_PARTITIONS_MAX; p++) {
        CHECK(apply(&img, r_partition(1, p, SET(1), SET(1), 1, 0, 0)) ==
                  RC_OK,
              "partition %d", p);
    }
    APPLY_INVALID(&img, r_partition(1, META_PARTITIONS_MAX, SET(1), SET(1),
                                    1, 0, 0));
    cr_assert_eq(meta_image_topic(&img, "big")->n_partitions,
                 META_PARTITIONS_MAX);
    for (int32_t p = 0; p < META_PARTITIONS_MAX; p++) {
        CHECK(part(&img, 1, p)->id == p, "id of %d", p);
    }
    meta_image_free(&img);
}

Test(meta_apply, setting_the_leader_bumps_both_epochs_even_to_the_same)
{
    struct meta_image img;
    const struct meta_partition *p;

    build_orders(&img);
    p = part(&img, 1, 0);
    APPLY_OK(&img, r_pchange(1, 0, NULL, 2));
    p = part(&img, 1, 0);
    cr_assert_eq(p->leader, 2);
    cr_assert_eq(p->leader_epoch, 1);
    cr_assert_eq(p->partition_epoch, 1);
    APPLY_OK(&img, r_pchange(1, 0, NULL, 2)); /* same leader */
    cr_assert_eq(p->leader, 2);
    cr_assert_eq(p->leader_epoch, 2);
    cr_assert_eq(p->partition_epoch, 2);
    APPLY_OK(&img, r_pchange(1, 0, NULL, META_NO_LEADER));
    cr_assert_eq(p->leader, META_NO_LEADER);
    cr_assert_eq(p->leader_epoch, 3);
    cr_assert_eq(p->isr.n, 3); /* untouched */
    meta_image_free(&img);
}

Test(meta_apply, isr_change_bumps_only_the_partition_epoch)
{
    struct meta_image img;
    const struct meta_partition *p;
    struct meta_replica_set isr = SET(1, 3);

    build_orders(&img);
    APPLY_OK(&img, r_pchange(1, 0, &isr, META_LEADER_UNCHANGED));
    p = part(&img, 1, 0);
    cr_assert_eq(p->isr.n, 2);
    cr_assert_eq(p->isr.ids[0], 1);
    cr_assert_eq(p->isr.ids[1], 3);
    cr_assert_eq(p->leader, 1);
    cr_assert_eq(p->leader_epoch, 0);
    cr_assert_eq(p->partition_epoch, 1);
    /* A change that changes nothing still counts. */
    APPLY_OK(&img, r_pchange(1, 0, NULL, META_LEADER_UNCHANGED));
    cr_assert_eq(p->leader_epoch, 0);
    cr_assert_eq(p->partition_epoch, 2);
    isr = SET(2);
    APPLY_OK(&img, r_pchange(1, 0, &isr, 2));
    cr_assert_eq(p->isr.n, 1);
    cr_assert_eq(p->leader, 2);
    cr_assert_eq(p->leader_epoch, 1);
    cr_assert_eq(p->partition_epoch, 3);
    meta_image_free(&img);
}

Test(meta_apply, partition_change_checks_its_target_and_bounds)
{
    struct meta_image img;
    struct meta_image before;
    struct meta_replica_set isr = SET(1);

    build_orders(&img);
    meta_image_init(&before);
    cr_assert_eq(meta_image_copy(&before, &img), RC_OK);
    APPLY_INVALID(&img, r_pchange(2, 0, NULL, 1)); /* unknown topic */
    APPLY_INVALID(&img, r_pchange(1, 1, NULL, 1)); /* unknown partition */
    APPLY_INVALID(&img, r_pchange(1, -1, NULL, 1));
    APPLY_INVALID(&img, r_pchange(1, 0, NULL, -3));
    isr.n = META_REPLICAS_MAX + 1;
    APPLY_INVALID(&img, r_pchange(1, 0, &isr, 1));
    isr = SET(2, 2);
    APPLY_INVALID(&img, r_pchange(1, 0, &isr, 1));
    cr_assert_eq(img.offset, before.offset + 6);
    img.offset = before.offset;
    assert_images_eq(&before, &img);
    meta_image_free(&before);
    meta_image_free(&img);
}

Test(meta_apply, epochs_do_not_wrap)
{
    struct meta_image img;

    meta_image_init(&img);
    APPLY_OK(&img, r_topic("t", 1));
    APPLY_OK(&img, r_partition(1, 0, SET(1), SET(1), 1, INT32_MAX, 0));
    APPLY_INVALID(&img, r_pchange(1, 0, NULL, 1));
    APPLY_OK(&img, r_pchange(1, 0, NULL, META_LEADER_UNCHANGED));
    APPLY_OK(&img, r_partition(1, 0, SET(1), SET(1), 1, 0, INT32_MAX));
    APPLY_INVALID(&img, r_pchange(1, 0, NULL, META_LEADER_UNCHANGED));
    cr_assert_eq(part(&img, 1, 0)->partition_epoch, INT32_MAX);
    meta_image_free(&img);
}

/* --- Configs and producer ids -------------------------------------------- */

Test(meta_apply, topic_configs_are_set_replaced_and_deleted)
{
    struct meta_image img;
    const struct meta_topic *t;

    build_orders(&img);
    t = meta_image_topic(&img, "orders");
    APPLY_OK(&img, r_config(META_RESOURCE_TOPIC, "orders", "retention.ms",
                            "1000"));
    APPLY_OK(&img, r_config(META_RESOURCE_TOPIC, "orders", "cleanup.policy",
                            "compact"));
    APPLY_OK(&img, r_config(META_RESOURCE_TOPIC, "orders", "x", ""));
    cr_assert_eq(t->n_configs, 3);
    cr_assert_str_eq(t->configs[0].name, "cleanup.policy"); /* sorted */
    cr_assert_str_eq(t->configs[1].name, "retention.ms");
    cr_assert_str_eq(meta_topic_config(t, "retention.ms"), "1000");
    cr_assert_str_eq(meta_topic_config(t, "x"), "");
    APPLY_OK(&img, r_config(META_RESOURCE_TOPIC, "orders", "retention.ms",
                            "2000"));
    cr_assert_str_eq(meta_topic_config(t, "retention.ms"), "2000");
    cr_assert_eq(t->n_configs, 3);
    APPLY_OK(&img, r_config(META_RESOURCE_TOPIC, "orders", "retention.ms",
                            NULL));
    cr_assert_null(meta_topic_config(t, "retention.ms"));
    cr_assert_eq(t->n_configs, 2);
    APPLY_OK(&img, r_config(META_RESOURCE_TOPIC, "orders", "absent", NULL));
    APPLY_OK(&img, r_config(META_RESOURCE_TOPIC, "orders", "x", NULL));
    APPLY_OK(&img, r_config(META_RESOURCE_TOPIC, "orders", "cleanup.policy",
                            NULL));
    cr_assert_eq(t->n_configs, 0);
    cr_assert_null(t->configs);
    meta_image_free(&img);
}

Test(meta_apply, other_config_resources_are_rejected)
{
    struct meta_image img;
    struct meta_image before;
    struct meta_record r;

    build_orders(&img);
    meta_image_init(&before);
    cr_assert_eq(meta_image_copy(&before, &img), RC_OK);
    APPLY_INVALID(&img, r_config(META_RESOURCE_BROKER, "x", "a", "b"));
    assert_only_offset_moved(&before, &img);
    APPLY_INVALID(&img, r_config(META_RESOURCE_TOPIC, "nope", "a", "b"));
    APPLY_INVALID(&img, r_config(3, "orders", "a", "b"));
    APPLY_INVALID(&img, r_config(META_RESOURCE_TOPIC, "orders", "", "b"));
    r = r_config(META_RESOURCE_TOPIC, "orders", "a", "b");
    memset(r.u.config.value, 'v', sizeof r.u.config.value);
    APPLY_INVALID(&img, r);
    r = r_config(META_RESOURCE_TOPIC, "orders", "a", "b");
    memset(r.u.config.name, 'n', sizeof r.u.config.name);
    APPLY_INVALID(&img, r);
    cr_assert_eq(meta_image_topic(&img, "orders")->n_configs, 0);
    meta_image_free(&before);
    meta_image_free(&img);
}

Test(meta_apply, a_topic_holds_at_most_the_config_bound)
{
    struct meta_image img;
    char key[32];

    meta_image_init(&img);
    APPLY_OK(&img, r_topic("t", 1));
    for (unsigned i = 0; i < META_TOPIC_CONFIGS_MAX; i++) {
        snprintf(key, sizeof key, "k%05u", i);
        CHECK(apply(&img, r_config(META_RESOURCE_TOPIC, "t", key, "v")) ==
                  RC_OK,
              "key %u", i);
    }
    APPLY_INVALID(&img, r_config(META_RESOURCE_TOPIC, "t", "zz", "v"));
    APPLY_OK(&img, r_config(META_RESOURCE_TOPIC, "t", "k00000", "new"));
    cr_assert_str_eq(meta_topic_config(&img.topics[0], "k00000"), "new");
    meta_image_free(&img);
}

Test(meta_apply, producer_ids_only_move_forward)
{
    struct meta_image img;

    meta_image_init(&img);
    APPLY_OK(&img, r_pids(1000));
    cr_assert_eq(img.next_producer_id, 1000);
    APPLY_INVALID(&img, r_pids(1000));
    APPLY_INVALID(&img, r_pids(999));
    APPLY_INVALID(&img, r_pids(-5));
    cr_assert_eq(img.next_producer_id, 1000);
    APPLY_OK(&img, r_pids(INT64_MAX));
    cr_assert_eq(img.next_producer_id, INT64_MAX);
    cr_assert_eq(img.offset, 5);
    meta_image_free(&img);
}

/* --- Copies -------------------------------------------------------------- */

Test(meta_apply, copy_equals_the_original_and_is_deep)
{
    struct meta_image img;
    struct meta_image copy;
    struct meta_image empty;
    struct meta_image empty_copy;

    build_orders(&img);
    APPLY_OK(&img, r_config(META_RESOURCE_TOPIC, "orders", "a", "1"));
    APPLY_OK(&img, r_topic("second", 2));
    APPLY_OK(&img, r_pids(77));
    meta_image_init(&copy);
    cr_assert_eq(meta_image_copy(&copy, &img), RC_OK);
    assert_images_eq(&img, &copy);
    cr_assert_neq(copy.topics, img.topics);
    cr_assert_neq(copy.topics[0].configs[0].name,
                  img.topics[0].configs[0].name);
    /* Changing the copy leaves the original alone. */
    APPLY_OK(&copy, r_config(META_RESOURCE_TOPIC, "orders", "a", "2"));
    APPLY_OK(&copy, r_pchange(1, 0, NULL, 3));
    APPLY_OK(&copy, r_remove(2));
    cr_assert_str_eq(meta_topic_config(&img.topics[0], "a"), "1");
    cr_assert_eq(part(&img, 1, 0)->leader, 1);
    cr_assert_eq(img.n_topics, 2);
    /* The copy keeps growing like any image. */
    APPLY_OK(&copy, r_partition(1, 1, SET(1), SET(1), 1, 0, 0));
    APPLY_OK(&copy, r_register(4, "h4", 1, 4));
    cr_assert_eq(copy.n_brokers, 4);
    meta_image_init(&empty);
    meta_image_init(&empty_copy);
    cr_assert_eq(meta_image_copy(&empty_copy, &empty), RC_OK);
    assert_images_eq(&empty, &empty_copy);
    meta_image_free(&empty_copy);
    meta_image_free(&copy);
    meta_image_free(&img);
}

/* --- Determinism --------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int32_t rng_below(uint64_t *s, int32_t n)
{
    return (int32_t)(rng_next(s) % (uint64_t)n);
}

static struct meta_replica_set random_set(uint64_t *s)
{
    struct meta_replica_set set = EMPTY_SET;
    int32_t want = rng_below(s, 5);

    for (int32_t id = 0; id < 6 && set.n < want; id++) {
        if (rng_below(s, 2) == 0) {
            set.ids[set.n++] = id;
        }
    }
    return set;
}

/* A record over a small space of ids, so that most of them apply; epochs
 * come from img (the first image) half of the time. */
static struct meta_record random_record(uint64_t *s,
                                        const struct meta_image *img)
{
    int32_t broker = rng_below(s, 6);
    uint8_t topic = (uint8_t)(1 + rng_below(s, 4));
    int32_t p = rng_below(s, 4);
    const struct meta_broker *b = meta_image_broker(img, broker);
    int64_t epoch = b != NULL && rng_below(s, 2) ? b->epoch : rng_below(s, 9);
    struct meta_replica_set isr = random_set(s);
    char name[8];
    char key[8];

    snprintf(name, sizeof name, "t%d", (int)rng_below(s, 4) + 1);
    snprintf(key, sizeof key, "k%d", (int)rng_below(s, 3));
    switch (rng_below(s, 9)) {
    case 0: return r_register(broker, "h", 9000 + broker, (uint8_t)p);
    case 1: return r_change(broker, epoch, (int8_t)(rng_below(s, 3) - 1),
                            (int8_t)(rng_below(s, 3) - 1));
    case 2: return r_topic(name, topic);
    case 3: return r_partition(topic, p, random_set(s), isr,
                               rng_below(s, 7) - 1, rng_below(s, 3),
                               rng_below(s, 3));
    case 4: return r_pchange(topic, p, rng_below(s, 2) ? &isr : NULL,
                             rng_below(s, 8) - 2);
    case 5: return r_remove(topic);
    case 6: return r_config(META_RESOURCE_TOPIC, name, key,
                            rng_below(s, 3) ? "v" : NULL);
    case 7: return r_pids(rng_below(s, 1000));
    default: return r_pchange(topic, p, NULL, META_LEADER_UNCHANGED);
    }
}

Test(meta_apply, same_records_give_equal_images)
{
    struct meta_image a;
    struct meta_image b;
    struct meta_image c;
    uint64_t seed = 20240611;
    int n_ok = 0;

    meta_image_init(&a);
    meta_image_init(&b);
    meta_image_init(&c);
    for (int i = 0; i < 20000; i++) {
        struct meta_record r = random_record(&seed, &a);
        int ra = meta_apply(&a, &r);
        int rb = meta_apply(&b, &r);
        CHECK(ra == rb, "record %d: %d vs %d", i, ra, rb);
        CHECK(ra == RC_OK || ra == RC_INVALID, "record %d: rc %d", i, ra);
        n_ok += ra == RC_OK;
        if (i == 10000) {
            cr_assert_eq(meta_image_copy(&c, &a), RC_OK);
        } else if (i > 10000) {
            CHECK(meta_apply(&c, &r) == ra, "copy differs at %d", i);
        }
    }
    cr_assert_gt(n_ok, 4000, "only %d records applied", n_ok);
    cr_assert_eq(a.offset, 20000);
    assert_images_eq(&a, &b);
    assert_images_eq(&a, &c);
    meta_image_free(&a);
    meta_image_free(&b);
    meta_image_free(&c);
}

/* --- Uuids and descriptions ---------------------------------------------- */

Test(meta_apply, uuids_print_as_kafka_does)
{
    struct meta_uuid u;
    char out[23];

    memset(&u, 0, sizeof u);
    cr_assert(meta_uuid_is_zero(&u));
    meta_uuid_format(&u, out);
    cr_assert_str_eq(out, "AAAAAAAAAAAAAAAAAAAAAA");
    for (int i = 0; i < 16; i++) {
        u.b[i] = (uint8_t)i;
    }
    cr_assert_not(meta_uuid_is_zero(&u));
    meta_uuid_format(&u, out);
    cr_assert_str_eq(out, "AAECAwQFBgcICQoLDA0ODw");
    memset(&u, 0xff, sizeof u);
    meta_uuid_format(&u, out);
    cr_assert_str_eq(out, "_____________________w");
}

Test(meta_apply, topic_ids_are_version_4_and_never_start_with_dash)
{
    struct meta_uuid u;
    char out[23];

    memset(&u, 0xff, sizeof u);
    meta_uuid_set_v4(&u);
    cr_assert_eq(u.b[6], 0x4f);
    cr_assert_eq(u.b[8], 0xbf);
    memset(&u, 0, sizeof u);
    meta_uuid_set_v4(&u);
    cr_assert_eq(u.b[6], 0x40);
    cr_assert_eq(u.b[8], 0x80);
    cr_assert(meta_uuid_ok_as_topic_id(&u));

    memset(&u, 0, sizeof u);
    cr_assert_not(meta_uuid_ok_as_topic_id(&u), "zero is reserved");
    u.b[15] = 1;
    cr_assert_not(meta_uuid_ok_as_topic_id(&u), "the metadata topic's");
    u.b[15] = 2;
    cr_assert(meta_uuid_ok_as_topic_id(&u));
    for (unsigned first = 0; first < 256; first++) {
        u.b[0] = (uint8_t)first;
        meta_uuid_format(&u, out);
        cr_assert_eq(meta_uuid_ok_as_topic_id(&u), out[0] != '-', "%s", out);
    }
}

Test(meta_apply, replica_set_contains_stays_in_bounds)
{
    struct meta_replica_set s = SET(4, 5);

    cr_assert(meta_replica_set_contains(&s, 5));
    cr_assert_not(meta_replica_set_contains(&s, 6));
    s.n = 1000;
    cr_assert_not(meta_replica_set_contains(&s, 99));
    s.n = -3;
    cr_assert_not(meta_replica_set_contains(&s, 4));
}

Test(meta_apply, records_describe_themselves_briefly)
{
    struct meta_image img;
    struct meta_record r = r_partition(1, 3, SET(1, 2, 3), SET(1, 2), 1, 4, 0);
    struct meta_replica_set isr = SET(2);
    char out[256];

    meta_image_init(&img);
    APPLY_OK(&img, r_topic("orders", 1));
    meta_record_describe(&img, &r, out, sizeof out);
    cr_assert_str_eq(out, "partition orders-3 replicas=[1,2,3] isr=[1,2] "
                          "leader=1 epoch=4 partition_epoch=0");
    meta_record_describe(NULL, &r, out, sizeof out);
    cr_assert(strstr(out, "partition qwAAAAAAAAAAAAAAAAAAAQ-3 ") == out,
              "%s", out);
    r = r_pchange(1, 0, &isr, 2);
    meta_record_describe(&img, &r, out, sizeof out);
    cr_assert_str_eq(out, "partition-change orders-0 isr=[2] leader=2");
    r = r_config(META_RESOURCE_TOPIC, "orders", "retention.ms", NULL);
    meta_record_describe(&img, &r, out, sizeof out);
    cr_assert_str_eq(out, "config topic(2) orders retention.ms deleted");
    r = r_change(1, 7, 1, 0);
    meta_record_describe(&img, &r, out, sizeof out);
    cr_assert_str_eq(out, "broker-change id=1 epoch=7 fenced=1 shutdown=0");
    r = r_remove(1);
    meta_record_describe(&img, &r, out, sizeof out);
    cr_assert(strncmp(out, "remove-topic orders id=", 23) == 0, "%s", out);
    meta_image_free(&img);
}

Test(meta_apply, descriptions_are_cut_to_fit_and_survive_bad_records)
{
    struct meta_record r = r_register(1, "host", 9092, 1);
    char out[300];
    char small[10];

    meta_record_describe(NULL, &r, small, sizeof small);
    cr_assert_eq(strlen(small), sizeof small - 1);
    cr_assert(strncmp(small, "register-", 9) == 0);
    meta_record_describe(NULL, &r, small, 1);
    cr_assert_str_eq(small, "");
    meta_record_describe(NULL, &r, small, 0); /* writes nothing */
    memset(r.u.register_broker.host, 'h', sizeof r.u.register_broker.host);
    memset(r.u.register_broker.rack, 'r', sizeof r.u.register_broker.rack);
    meta_record_describe(NULL, &r, out, sizeof out);
    cr_assert_eq(strlen(out), sizeof out - 1);
    r = r_topic("t", 1);
    memset(r.u.topic.name, 'n', sizeof r.u.topic.name);
    meta_record_describe(NULL, &r, out, sizeof out);
    cr_assert(strncmp(out, "topic nnn", 9) == 0);
    r = r_partition(1, 0, SET(1), SET(1), 1, 0, 0);
    r.u.partition.replicas.n = 1000;
    r.u.partition.isr.n = -1;
    meta_record_describe(NULL, &r, out, sizeof out);
    cr_assert(strstr(out, "isr=[]") != NULL, "%s", out);
    r.type = (enum meta_record_type)42;
    meta_record_describe(NULL, &r, out, sizeof out);
    cr_assert_str_eq(out, "unknown-record type=42");
}

Test(meta_apply, topic_name_rule_is_kafkas)
{
    char longest[META_TOPIC_NAME_BYTES_MAX + 2];
    memset(longest, 'a', sizeof longest);
    longest[META_TOPIC_NAME_BYTES_MAX] = '\0';
    cr_expect(meta_topic_name_valid(longest));
    longest[META_TOPIC_NAME_BYTES_MAX] = 'a';
    longest[META_TOPIC_NAME_BYTES_MAX + 1] = '\0';
    cr_expect_not(meta_topic_name_valid(longest), "one byte too long");
    cr_expect(meta_topic_name_valid("a.b_c-D9"));
    cr_expect(meta_topic_name_valid("..."));
    cr_expect_not(meta_topic_name_valid(""));
    cr_expect_not(meta_topic_name_valid("."));
    cr_expect_not(meta_topic_name_valid(".."));
    cr_expect_not(meta_topic_name_valid("a b"));
    cr_expect_not(meta_topic_name_valid("a/b"));
    cr_expect_not(meta_topic_name_valid(NULL));
}

/* --- Events (common/meta/meta_event.c) ----------------------------------- */

Test(meta_event, partition_changes_read_before_and_after)
{
    struct meta_image img;
    struct meta_replica_set two = SET(2, 3);
    char out[256];

    build_orders(&img);
    struct meta_record r = r_pchange(1, 0, &two, 2);
    cr_assert(meta_record_event(&img, &r, out, sizeof out));
    cr_assert_str_eq(out, "orders-0 leader 1 -> 2 epoch 0 -> 1, isr 1,2,3 "
                          "-> 2,3");
    APPLY_OK(&img, r);
    r = r_pchange(1, 0, NULL, META_NO_LEADER);
    cr_assert(meta_record_event(&img, &r, out, sizeof out));
    cr_assert_str_eq(out, "orders-0 leader 2 -> none epoch 1 -> 2, offline: "
                          "no live replica in the ISR");
    struct meta_replica_set same = SET(2, 3);
    r = r_pchange(1, 0, &same, META_LEADER_UNCHANGED);
    cr_assert_not(meta_record_event(&img, &r, out, sizeof out),
                  "an ISR that stays the same is no event: %s", out);
    cr_assert_str_eq(out, "");
    struct meta_replica_set none = EMPTY_SET;
    r = r_pchange(1, 0, &none, META_LEADER_UNCHANGED);
    cr_assert(meta_record_event(&img, &r, out, sizeof out));
    cr_assert_str_eq(out, "orders-0 isr 2,3 -> -");
    APPLY_OK(&img, r);
    struct meta_replica_set isr_two = SET(2);
    struct meta_replica_set only_two = SET(2, 3);
    r = r_pchange(1, 0, &only_two, META_LEADER_UNCHANGED);
    APPLY_OK(&img, r); /* ISR 2,3 again, leader 2 */
    struct meta_replica_set isr_one = SET(1);
    r = r_pchange(1, 0, &isr_one, 1); /* 1 was not in the ISR: unclean */
    cr_assert(meta_record_event(&img, &r, out, sizeof out));
    cr_assert_str_eq(out, "orders-0 leader 2 -> 1 epoch 1 -> 2, isr 2,3 "
                          "-> 1, unclean: 1 was not in the ISR 2,3, so what "
                          "only the ISR had is lost");
    r = r_pchange(1, 0, &isr_two, 3); /* 3 was: a clean election */
    cr_assert(meta_record_event(&img, &r, out, sizeof out));
    cr_assert_str_eq(out, "orders-0 leader 2 -> 3 epoch 1 -> 2, isr 2,3 "
                          "-> 2");
    r = r_pchange(9, 0, &none, 1); /* unknown topic */
    cr_assert_not(meta_record_event(&img, &r, out, sizeof out));
    meta_image_free(&img);
}

Test(meta_event, brokers_and_topics)
{
    struct meta_image img;
    char out[256];

    build_orders(&img);
    struct meta_record r = r_change(1, 1, 1, 0);
    cr_assert(meta_record_event(&img, &r, out, sizeof out));
    cr_assert_str_eq(out, "broker 1 fenced");
    r = r_change(2, 3, 0, 1);
    cr_assert(meta_record_event(&img, &r, out, sizeof out));
    cr_assert_str_eq(out, "broker 2 in controlled shutdown");
    r = r_change(3, 5, -1, 0); /* already unfenced: nothing changes */
    cr_assert_not(meta_record_event(&img, &r, out, sizeof out));
    r = r_register(4, "10.0.0.4", 9092, 4);
    cr_assert(meta_record_event(&img, &r, out, sizeof out));
    cr_assert_str_eq(out, "broker 4 registered at 10.0.0.4:9092 (fenced "
                          "until caught up)");
    APPLY_OK(&img, r);
    r = r_change(4, img.offset, -1, 0);
    cr_assert(meta_record_event(&img, &r, out, sizeof out));
    cr_assert_str_eq(out, "broker 4 unfenced");
    r = r_topic("demo", 2);
    cr_assert(meta_record_event(&img, &r, out, sizeof out));
    cr_assert_str_eq(out, "topic demo created");
    r = r_remove(1);
    cr_assert(meta_record_event(&img, &r, out, sizeof out));
    cr_assert_str_eq(out, "topic orders deleted");
    r = r_config(META_RESOURCE_TOPIC, "orders", "retention.ms", NULL);
    cr_assert_not(meta_record_event(&img, &r, out, sizeof out));
    r = r_partition(1, 0, SET(1, 2, 3), SET(1, 2, 3), 1, 0, 0);
    cr_assert_not(meta_record_event(&img, &r, out, sizeof out),
                  "a partition the topic has is no addition");
    r = r_partition(1, 1, SET(2, 3, 1), SET(2, 3, 1), 2, 0, 0);
    cr_assert(meta_record_event(&img, &r, out, sizeof out));
    cr_assert_str_eq(out, "orders-1 added, replicas 2,3,1, leader 2");
    r = r_partition(9, 0, SET(1), SET(1), 1, 0, 0);
    cr_assert_not(meta_record_event(&img, &r, out, sizeof out),
                  "a new topic's partitions are told by its creation");
    char small[8];
    r = r_change(1, 1, 1, 0);
    cr_assert(meta_record_event(&img, &r, small, sizeof small));
    cr_assert_str_eq(small, "broker ");
    meta_image_free(&img);
}

Test(meta_event, replica_sets_format_and_fit)
{
    char out[6];
    struct meta_replica_set s = SET(1, 2, 3, 44);
    meta_replica_set_format(&s, out, sizeof out);
    cr_assert_str_eq(out, "1,2,3");
    meta_replica_set_format(&s, out, 1);
    cr_assert_str_eq(out, "");
    struct meta_replica_set bad = {.n = -3};
    meta_replica_set_format(&bad, out, sizeof out);
    cr_assert_str_eq(out, "-");
}

/* --- Reassignment and unregistration ------------------------------------- */

static struct meta_record r_replicas(struct meta_replica_set replicas,
                                     struct meta_replica_set adding,
                                     struct meta_replica_set removing)
{
    struct meta_record r = r_pchange(1, 0, NULL, META_LEADER_UNCHANGED);
    r.u.partition_change.replicas_changed = true;
    r.u.partition_change.replicas = replicas;
    r.u.partition_change.adding = adding;
    r.u.partition_change.removing = removing;
    return r;
}

Test(meta_apply, replica_changes_need_consistent_sets)
{
    struct meta_image img;
    struct meta_replica_set none = {0};
    struct meta_replica_set want;

    build_orders(&img);
    APPLY_OK(&img, r_register(4, "h4", 9094, 4));
    /* adding outside replicas, adding and removing overlapping, removing
     * outside replicas, empty replicas, duplicates: refused. */
    APPLY_INVALID(&img, r_replicas(SET(1, 2, 3), SET(4), none));
    APPLY_INVALID(&img, r_replicas(SET(4, 2, 3, 1), SET(4), SET(4)));
    APPLY_INVALID(&img, r_replicas(SET(4, 2, 3), SET(4), SET(1)));
    APPLY_INVALID(&img, r_replicas(none, none, none));
    APPLY_INVALID(&img, r_replicas(SET(4, 4, 3, 1), SET(4), SET(1)));
    int32_t epoch = part(&img, 1, 0)->partition_epoch;
    APPLY_OK(&img, r_replicas(SET(4, 2, 3, 1), SET(4), SET(1)));
    const struct meta_partition *p = part(&img, 1, 0);
    want = SET(4, 2, 3, 1);
    assert_sets_eq(&p->replicas, &want);
    want = SET(4);
    assert_sets_eq(&p->adding, &want);
    want = SET(1);
    assert_sets_eq(&p->removing, &want);
    want = SET(1, 2, 3);
    assert_sets_eq(&p->isr, &want);
    cr_assert_eq(p->partition_epoch, epoch + 1);
    cr_assert_eq(p->leader_epoch, 0, "no leader change, same epoch");
    /* The unregistration of a broker a partition still names fails. */
    struct meta_record u = rec_new(META_REC_UNREGISTER_BROKER);
    u.u.unregister_broker.broker_id = 4;
    u.u.unregister_broker.broker_epoch = meta_image_broker(&img, 4)->epoch;
    APPLY_INVALID(&img, u);
    APPLY_OK(&img, r_replicas(SET(4, 2, 3), none, none));
    assert_sets_eq(&part(&img, 1, 0)->adding, &none);
    u.u.unregister_broker.broker_id = 1;
    u.u.unregister_broker.broker_epoch = meta_image_broker(&img, 1)->epoch +
                                         1;
    APPLY_INVALID(&img, u); /* stale epoch */
    u.u.unregister_broker.broker_epoch--;
    APPLY_OK(&img, u);
    cr_assert_null(meta_image_broker(&img, 1));
    cr_assert_eq(img.n_brokers, 3);
    APPLY_INVALID(&img, u); /* gone already */
    meta_image_free(&img);
}
