/* Tests for common/meta/meta_codec.c: round trips of every record type with
 * edge values, of batches and of images built by meta_apply(); truncation at
 * every length; seeded garbage and mutations; and hand-built protobuf bytes
 * (this file does not see metadata.pb-c.h) with wrong uuid lengths, oversized
 * strings, arrays and counts, NUL bytes, unknown fields and broken image
 * invariants. Inputs live in heap buffers of their exact length so that `make
 * asan` catches any read past the end. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/limits.h"
#include "common/meta/meta.h"
#include "common/meta/meta_codec.h"
#include "common/rc.h"

/* Criterion reports every assertion; in loops only failures should cost. */
#define CHECK(cond, ...)                                               \
    do {                                                               \
        if (!(cond)) {                                                 \
            cr_assert_fail(__VA_ARGS__);                               \
        }                                                              \
    } while (0)

/* --- Exact buffers and a seeded PRNG ------------------------------------- */

/* A heap copy of exactly n bytes (one byte allocated for n == 0). */
static uint8_t *exact_copy(const void *p, size_t n)
{
    uint8_t *buf = malloc(n > 0 ? n : 1);

    cr_assert_not_null(buf);
    if (n > 0) {
        memcpy(buf, p, n);
    }
    return buf;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* --- Records ------------------------------------------------------------- */

static struct meta_uuid uuid_n(uint8_t n)
{
    struct meta_uuid u;

    memset(&u, 0, sizeof u);
    u.b[0] = 0xab;
    u.b[15] = n;
    return u;
}

static struct meta_record rec_new(enum meta_record_type type)
{
    struct meta_record r;

    memset(&r, 0, sizeof r); /* records compare with memcmp */
    r.type = type;
    return r;
}

static void fill(char *dst, char c, size_t n)
{
    memset(dst, c, n);
    dst[n] = '\0';
}

#define PUSH(rec)                                                      \
    do {                                                               \
        cr_assert_lt(*n, cap);                                         \
        out[(*n)++] = (rec);                                           \
    } while (0)

/* Broker and topic records with edge values, appended at out[*n]. */
static void edge_broker_records(struct meta_record *out, size_t cap,
                                size_t *n)
{
    struct meta_record r;

    r = rec_new(META_REC_REGISTER_BROKER);
    r.u.register_broker.broker_id = INT32_MAX;
    memset(r.u.register_broker.incarnation.b, 0xff, 16);
    fill(r.u.register_broker.host, 'h', META_HOST_BYTES_MAX);
    r.u.register_broker.port = INT32_MIN;
    fill(r.u.register_broker.rack, 'r', META_RACK_BYTES_MAX);
    PUSH(r);
    r = rec_new(META_REC_REGISTER_BROKER); /* zeros, empty strings */
    PUSH(r);
    r = rec_new(META_REC_BROKER_CHANGE);
    r.u.broker_change.broker_id = -1;
    r.u.broker_change.broker_epoch = INT64_MIN;
    r.u.broker_change.fenced = INT8_MIN;
    r.u.broker_change.in_controlled_shutdown = INT8_MAX;
    PUSH(r);
    r = rec_new(META_REC_BROKER_CHANGE);
    r.u.broker_change.broker_epoch = INT64_MAX;
    r.u.broker_change.fenced = -1;
    PUSH(r);
    r = rec_new(META_REC_TOPIC);
    fill(r.u.topic.name, 'n', META_TOPIC_NAME_BYTES_MAX);
    r.u.topic.id = uuid_n(1);
    PUSH(r);
    r = rec_new(META_REC_TOPIC); /* empty name, zero id */
    PUSH(r);
    r = rec_new(META_REC_REMOVE_TOPIC);
    memset(r.u.remove_topic.topic_id.b, 0x5a, 16);
    PUSH(r);
    r = rec_new(META_REC_PRODUCER_IDS);
    r.u.producer_ids.broker_id = INT32_MIN;
    r.u.producer_ids.broker_epoch = INT64_MAX;
    r.u.producer_ids.next_producer_id = INT64_MIN;
    PUSH(r);
}

/* Partition records with edge values, appended at out[*n]. */
static void edge_partition_records(struct meta_record *out, size_t cap,
                                   size_t *n)
{
    struct meta_record r;

    r = rec_new(META_REC_PARTITION);
    r.u.partition.topic_id = uuid_n(2);
    r.u.partition.partition = INT32_MAX;
    r.u.partition.replicas.n = META_REPLICAS_MAX;
    for (int32_t i = 0; i < META_REPLICAS_MAX; i++) {
        r.u.partition.replicas.ids[i] = i % 2 ? INT32_MIN : INT32_MAX - i;
    }
    r.u.partition.isr = r.u.partition.replicas;
    r.u.partition.leader = META_NO_LEADER;
    r.u.partition.leader_epoch = INT32_MAX;
    r.u.partition.partition_epoch = INT32_MIN;
    PUSH(r);
    r = rec_new(META_REC_PARTITION); /* empty sets */
    r.u.partition.topic_id = uuid_n(2);
    PUSH(r);
    r = rec_new(META_REC_PARTITION_CHANGE);
    r.u.partition_change.topic_id = uuid_n(3);
    r.u.partition_change.partition = 7;
    r.u.partition_change.isr_changed = true;
    r.u.partition_change.isr.n = 2;
    r.u.partition_change.isr.ids[0] = 4;
    r.u.partition_change.isr.ids[1] = 0;
    r.u.partition_change.leader = META_NO_LEADER;
    PUSH(r);
    r = rec_new(META_REC_PARTITION_CHANGE); /* nothing changes */
    r.u.partition_change.topic_id = uuid_n(3);
    r.u.partition_change.leader = META_LEADER_UNCHANGED;
    PUSH(r);
    r = rec_new(META_REC_PARTITION_CHANGE); /* ISR changed to empty */
    r.u.partition_change.topic_id = uuid_n(3);
    r.u.partition_change.isr_changed = true;
    r.u.partition_change.leader = INT32_MAX;
    PUSH(r);
    r = rec_new(META_REC_PARTITION_CHANGE); /* a reassignment starts */
    r.u.partition_change.topic_id = uuid_n(3);
    r.u.partition_change.leader = META_LEADER_UNCHANGED;
    r.u.partition_change.replicas_changed = true;
    r.u.partition_change.replicas.n = 4;
    r.u.partition_change.replicas.ids[0] = 4;
    r.u.partition_change.replicas.ids[1] = 2;
    r.u.partition_change.replicas.ids[2] = 3;
    r.u.partition_change.replicas.ids[3] = 1;
    r.u.partition_change.adding.n = 1;
    r.u.partition_change.adding.ids[0] = 4;
    r.u.partition_change.removing.n = 1;
    r.u.partition_change.removing.ids[0] = 1;
    PUSH(r);
    r = rec_new(META_REC_PARTITION); /* a partition being moved */
    r.u.partition.topic_id = uuid_n(3);
    r.u.partition.replicas.n = 2;
    r.u.partition.replicas.ids[0] = 2;
    r.u.partition.replicas.ids[1] = 1;
    r.u.partition.adding.n = 1;
    r.u.partition.adding.ids[0] = 2;
    r.u.partition.removing.n = 1;
    r.u.partition.removing.ids[0] = 1;
    PUSH(r);
    r = rec_new(META_REC_UNREGISTER_BROKER);
    r.u.unregister_broker.broker_id = INT32_MAX;
    r.u.unregister_broker.broker_epoch = INT64_MAX;
    PUSH(r);
}

/* Config records with edge values, appended at out[*n]. */
static void edge_config_records(struct meta_record *out, size_t cap,
                                size_t *n)
{
    struct meta_record r;

    r = rec_new(META_REC_CONFIG);
    r.u.config.resource_type = META_RESOURCE_TOPIC;
    fill(r.u.config.resource_name, 't', META_TOPIC_NAME_BYTES_MAX);
    fill(r.u.config.name, 'k', META_CONFIG_NAME_BYTES_MAX);
    r.u.config.has_value = true;
    fill(r.u.config.value, 'v', META_CONFIG_VALUE_BYTES_MAX);
    PUSH(r);
    r = rec_new(META_REC_CONFIG); /* a delete */
    r.u.config.resource_type = INT8_MIN;
    snprintf(r.u.config.name, sizeof r.u.config.name, "retention.ms");
    PUSH(r);
    r = rec_new(META_REC_CONFIG); /* an empty value is not a delete */
    r.u.config.resource_type = META_RESOURCE_BROKER;
    r.u.config.has_value = true;
    PUSH(r);
}

#undef PUSH

/* Every record type, with edge values; n_out receives the count. */
static void edge_records(struct meta_record *out, size_t cap, size_t *n_out)
{
    *n_out = 0;
    edge_broker_records(out, cap, n_out);
    edge_partition_records(out, cap, n_out);
    edge_config_records(out, cap, n_out);
}

#define EDGE_MAX 32

static void assert_records_eq(const struct meta_record *a,
                              const struct meta_record *b)
{
    char da[512];
    char db[512];

    if (memcmp(a, b, sizeof *a) != 0) {
        meta_record_describe(NULL, a, da, sizeof da);
        meta_record_describe(NULL, b, db, sizeof db);
        cr_assert_fail("records differ:\n  %s\n  %s", da, db);
    }
}

static int decode_record_exact(const uint8_t *p, size_t len,
                               struct meta_record *rec)
{
    uint8_t *copy = exact_copy(p, len);
    int rv = meta_codec_decode_record(copy, len, rec);

    free(copy);
    return rv;
}

Test(meta_codec, every_record_type_round_trips_with_edge_values)
{
    struct meta_record recs[EDGE_MAX];
    size_t n;

    edge_records(recs, EDGE_MAX, &n);
    for (size_t i = 0; i < n; i++) {
        struct meta_record back;
        uint8_t *buf;
        size_t len;
        cr_assert_eq(meta_codec_encode_record(&recs[i], &buf, &len), RC_OK);
        cr_assert_leq(len, META_RECORD_BYTES_MAX);
        cr_assert_eq(decode_record_exact(buf, len, &back), RC_OK,
                     "record %zu", i);
        assert_records_eq(&recs[i], &back);
        free(buf);
    }
}

Test(meta_codec, bytes_beyond_a_set_or_string_are_not_encoded)
{
    struct meta_record r = rec_new(META_REC_PARTITION_CHANGE);
    struct meta_record back;
    uint8_t *buf;
    size_t len;

    r.u.partition_change.isr_changed = false;
    r.u.partition_change.isr.n = 99;        /* ignored: not a change */
    r.u.partition_change.isr.ids[0] = 5;
    r.u.partition_change.leader = 3;
    cr_assert_eq(meta_codec_encode_record(&r, &buf, &len), RC_OK);
    cr_assert_eq(decode_record_exact(buf, len, &back), RC_OK);
    free(buf);
    cr_assert_not(back.u.partition_change.isr_changed);
    cr_assert_eq(back.u.partition_change.isr.n, 0);
    cr_assert_eq(back.u.partition_change.leader, 3);
    r = rec_new(META_REC_TOPIC);
    memset(r.u.topic.name, 'x', sizeof r.u.topic.name);
    r.u.topic.name[2] = '\0';
    cr_assert_eq(meta_codec_encode_record(&r, &buf, &len), RC_OK);
    cr_assert_eq(decode_record_exact(buf, len, &back), RC_OK);
    free(buf);
    cr_assert_str_eq(back.u.topic.name, "xx");
}

Test(meta_codec, encoding_refuses_records_the_decoder_would_refuse)
{
    struct meta_record r = rec_new(META_REC_PARTITION);
    uint8_t *buf = (uint8_t *)&r;
    size_t len = 1;

    r.u.partition.replicas.n = META_REPLICAS_MAX + 1;
    cr_assert_eq(meta_codec_encode_record(&r, &buf, &len), RC_INVALID);
    cr_assert_null(buf);
    cr_assert_eq(len, 0);
    r.u.partition.replicas.n = -1;
    cr_assert_eq(meta_codec_encode_record(&r, &buf, &len), RC_INVALID);
    r = rec_new(META_REC_PARTITION_CHANGE);
    r.u.partition_change.isr_changed = true;
    r.u.partition_change.isr.n = META_REPLICAS_MAX + 1;
    cr_assert_eq(meta_codec_encode_record(&r, &buf, &len), RC_INVALID);
    r = rec_new(META_REC_TOPIC);
    memset(r.u.topic.name, 'x', sizeof r.u.topic.name);
    cr_assert_eq(meta_codec_encode_record(&r, &buf, &len), RC_INVALID);
    r = rec_new(META_REC_CONFIG);
    r.u.config.has_value = true;
    memset(r.u.config.value, 'v', sizeof r.u.config.value);
    cr_assert_eq(meta_codec_encode_record(&r, &buf, &len), RC_INVALID);
    r.u.config.has_value = false; /* the value is then not looked at */
    cr_assert_eq(meta_codec_encode_record(&r, &buf, &len), RC_OK);
    free(buf);
    r = rec_new((enum meta_record_type)0);
    cr_assert_eq(meta_codec_encode_record(&r, &buf, &len), RC_INVALID);
    cr_assert_eq(meta_codec_encode_batch(&r, 1, NULL, &buf, &len),
                 RC_INVALID);
}

/* --- Batches ------------------------------------------------------------- */

static size_t n_test_allocs;

static void *test_alloc(size_t n)
{
    n_test_allocs++;
    return malloc(n);
}

static int decode_batch_exact(const uint8_t *p, size_t len,
                              struct meta_record **recs, size_t *n)
{
    uint8_t *copy = exact_copy(p, len);
    int rv = meta_codec_decode_batch(copy, len, recs, n);

    free(copy);
    return rv;
}

Test(meta_codec, batches_round_trip)
{
    struct meta_record recs[EDGE_MAX];
    struct meta_record *back;
    size_t n;
    size_t n_back;
    uint8_t *buf;
    size_t len;

    edge_records(recs, EDGE_MAX, &n);
    n_test_allocs = 0;
    cr_assert_eq(meta_codec_encode_batch(recs, n, test_alloc, &buf, &len),
                 RC_OK);
    cr_assert_eq(n_test_allocs, 1);
    cr_assert_eq(decode_batch_exact(buf, len, &back, &n_back), RC_OK);
    cr_assert_eq(n_back, n);
    for (size_t i = 0; i < n; i++) {
        assert_records_eq(&recs[i], &back[i]);
    }
    free(back);
    free(buf);
    /* The empty batch. */
    cr_assert_eq(meta_codec_encode_batch(NULL, 0, NULL, &buf, &len), RC_OK);
    cr_assert_not_null(buf);
    cr_assert_eq(len, 0);
    cr_assert_eq(meta_codec_decode_batch(buf, len, &back, &n_back), RC_OK);
    cr_assert_null(back);
    cr_assert_eq(n_back, 0);
    free(buf);
}

Test(meta_codec, batch_record_count_is_bounded)
{
    size_t n = META_BATCH_RECORDS_MAX + 1;
    struct meta_record *recs = calloc(n, sizeof *recs);
    struct meta_record *back;
    size_t n_back;
    uint8_t *buf;
    size_t len;

    cr_assert_not_null(recs);
    for (size_t i = 0; i < n; i++) {
        recs[i].type = META_REC_PRODUCER_IDS;
        recs[i].u.producer_ids.next_producer_id = (int64_t)i;
    }
    cr_assert_eq(meta_codec_encode_batch(recs, n, NULL, &buf, &len),
                 RC_TOO_LARGE);
    cr_assert_eq(meta_codec_encode_batch(recs, n - 1, NULL, &buf, &len),
                 RC_OK);
    cr_assert_eq(decode_batch_exact(buf, len, &back, &n_back), RC_OK);
    cr_assert_eq(n_back, META_BATCH_RECORDS_MAX);
    free(back);
    free(buf);
    /* One more record, hand-appended to the bytes, is refused. */
    cr_assert_eq(meta_codec_encode_batch(recs, 1, NULL, &buf, &len), RC_OK);
    {
        uint8_t *one = buf;
        size_t one_len = len;
        uint8_t *many = malloc(one_len * n);
        cr_assert_not_null(many);
        for (size_t i = 0; i < n; i++) {
            memcpy(many + i * one_len, one, one_len);
        }
        cr_assert_eq(decode_batch_exact(many, one_len * n, &back, &n_back),
                     RC_MALFORMED);
        cr_assert_null(back);
        cr_assert_eq(n_back, 0);
        free(many);
        free(one);
    }
    free(recs);
}

/* --- Images -------------------------------------------------------------- */

static void apply_ok(struct meta_image *img, struct meta_record r)
{
    cr_assert_eq(meta_apply(img, &r), RC_OK);
}

static struct meta_record r_register(int32_t id)
{
    struct meta_record r = rec_new(META_REC_REGISTER_BROKER);

    r.u.register_broker.broker_id = id;
    r.u.register_broker.incarnation = uuid_n((uint8_t)(100 + id));
    snprintf(r.u.register_broker.host, sizeof r.u.register_broker.host,
             "broker-%d.example", (int)id);
    r.u.register_broker.port = 9092 + id;
    if (id % 2 == 0) {
        snprintf(r.u.register_broker.rack, sizeof r.u.register_broker.rack,
                 "az-%d", (int)id);
    }
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

static struct meta_record r_partition(uint8_t topic, int32_t p, int32_t n)
{
    struct meta_record r = rec_new(META_REC_PARTITION);

    r.u.partition.topic_id = uuid_n(topic);
    r.u.partition.partition = p;
    r.u.partition.replicas.n = n;
    for (int32_t i = 0; i < n; i++) {
        r.u.partition.replicas.ids[i] = (p + i) % 16;
    }
    r.u.partition.isr = r.u.partition.replicas;
    r.u.partition.leader = n > 0 ? r.u.partition.replicas.ids[0] : -1;
    return r;
}

static struct meta_record r_config(const char *topic, const char *key,
                                   const char *value)
{
    struct meta_record r = rec_new(META_REC_CONFIG);

    r.u.config.resource_type = META_RESOURCE_TOPIC;
    snprintf(r.u.config.resource_name, sizeof r.u.config.resource_name,
             "%s", topic);
    snprintf(r.u.config.name, sizeof r.u.config.name, "%s", key);
    r.u.config.has_value = true;
    snprintf(r.u.config.value, sizeof r.u.config.value, "%s", value);
    return r;
}

/* Brokers 0..4 in mixed states; topics with 0..16 replicas, configs, one
 * removed topic, leader changes, producer ids. */
static void build_image(struct meta_image *img)
{
    struct meta_record r;

    meta_image_init(img);
    for (int32_t b = 4; b >= 0; b--) {
        apply_ok(img, r_register(b));
    }
    apply_ok(img, r_change(1, meta_image_broker(img, 1)->epoch, -1, 0));
    apply_ok(img, r_change(2, meta_image_broker(img, 2)->epoch, -1, 1));
    apply_ok(img, r_topic("gone", 9));
    apply_ok(img, r_topic("orders", 1));
    apply_ok(img, r_topic("empty", 2));
    apply_ok(img, r_topic("wide", 3));
    for (int32_t p = 0; p < 40; p++) {
        apply_ok(img, r_partition(1, p, p % 4));
        apply_ok(img, r_partition(9, p, 1));
    }
    apply_ok(img, r_partition(3, 0, META_REPLICAS_MAX));
    apply_ok(img, r_config("orders", "retention.ms", "604800000"));
    apply_ok(img, r_config("orders", "cleanup.policy", "compact,delete"));
    apply_ok(img, r_config("wide", "min.insync.replicas", "2"));
    r = rec_new(META_REC_REMOVE_TOPIC);
    r.u.remove_topic.topic_id = uuid_n(9);
    apply_ok(img, r);
    r = rec_new(META_REC_PARTITION_CHANGE);
    r.u.partition_change.topic_id = uuid_n(1);
    r.u.partition_change.partition = 5;
    r.u.partition_change.leader = META_NO_LEADER;
    apply_ok(img, r);
    r = rec_new(META_REC_PRODUCER_IDS);
    r.u.producer_ids.next_producer_id = 5000;
    apply_ok(img, r);
}

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
    cr_assert_str_eq(a->name, b->name);
    cr_assert(meta_uuid_eq(&a->id, &b->id), "topic %s id", a->name);
    cr_assert_eq(a->n_partitions, b->n_partitions, "topic %s", a->name);
    for (int32_t i = 0; i < a->n_partitions; i++) {
        const struct meta_partition *p = &a->partitions[i];
        const struct meta_partition *q = &b->partitions[i];
        CHECK(p->id == q->id, "%s-%d id", a->name, i);
        CHECK(p->leader == q->leader, "%s-%d leader", a->name, i);
        CHECK(p->leader_epoch == q->leader_epoch, "%s-%d le", a->name, i);
        CHECK(p->partition_epoch == q->partition_epoch, "%s-%d pe", a->name,
              i);
        assert_sets_eq(&p->replicas, &q->replicas);
        assert_sets_eq(&p->isr, &q->isr);
    }
    cr_assert_eq(a->n_configs, b->n_configs, "topic %s configs", a->name);
    for (size_t i = 0; i < a->n_configs; i++) {
        cr_assert_str_eq(a->configs[i].name, b->configs[i].name);
        cr_assert_str_eq(a->configs[i].value, b->configs[i].value);
    }
}

static void assert_images_eq(const struct meta_image *a,
                             const struct meta_image *b)
{
    cr_assert_eq(a->offset, b->offset);
    cr_assert_eq(a->next_producer_id, b->next_producer_id);
    cr_assert_eq(a->n_brokers, b->n_brokers);
    for (size_t i = 0; i < a->n_brokers; i++) {
        const struct meta_broker *x = &a->brokers[i];
        const struct meta_broker *y = &b->brokers[i];
        cr_assert_eq(x->id, y->id);
        cr_assert_eq(x->epoch, y->epoch, "broker %d epoch", x->id);
        cr_assert(meta_uuid_eq(&x->incarnation, &y->incarnation));
        cr_assert_str_eq(x->host, y->host);
        cr_assert_eq(x->port, y->port);
        cr_assert_str_eq(x->rack, y->rack);
        cr_assert_eq(x->fenced, y->fenced, "broker %d fenced", x->id);
        cr_assert_eq(x->in_controlled_shutdown, y->in_controlled_shutdown);
    }
    cr_assert_eq(a->n_topics, b->n_topics);
    for (size_t i = 0; i < a->n_topics; i++) {
        assert_topics_eq(&a->topics[i], &b->topics[i]);
    }
}

static int decode_image_exact(const uint8_t *p, size_t len,
                              struct meta_image *img)
{
    uint8_t *copy = exact_copy(p, len);
    int rv = meta_codec_decode_image(copy, len, img);

    free(copy);
    return rv;
}

static void assert_image_empty(const struct meta_image *img)
{
    CHECK(img->offset == 0 && img->next_producer_id == 0 &&
              img->n_brokers == 0 && img->brokers == NULL &&
              img->n_topics == 0 && img->topics == NULL,
          "image not left empty");
}

Test(meta_codec, images_round_trip_field_by_field)
{
    struct meta_image img;
    struct meta_image back;
    uint8_t *buf;
    uint8_t *again;
    size_t len;
    size_t len_again;

    build_image(&img);
    cr_assert_eq(img.n_brokers, 5);
    cr_assert_eq(img.n_topics, 3);
    n_test_allocs = 0;
    cr_assert_eq(meta_codec_encode_image(&img, test_alloc, &buf, &len),
                 RC_OK);
    cr_assert_eq(n_test_allocs, 1);
    meta_image_init(&back);
    cr_assert_eq(decode_image_exact(buf, len, &back), RC_OK);
    assert_images_eq(&img, &back);
    /* The decoded image encodes to the same bytes and keeps working. */
    cr_assert_eq(meta_codec_encode_image(&back, NULL, &again, &len_again),
                 RC_OK);
    cr_assert_eq(len_again, len);
    cr_assert_arr_eq(again, buf, len);
    apply_ok(&back, r_partition(2, 0, 3));
    apply_ok(&back, r_config("orders", "a", "b"));
    apply_ok(&back, r_register(7));
    cr_assert_str_eq(meta_topic_config(meta_image_topic(&back, "orders"),
                                       "retention.ms"),
                     "604800000");
    free(again);
    free(buf);
    meta_image_free(&back);
    meta_image_free(&img);
}

Test(meta_codec, the_empty_image_round_trips)
{
    struct meta_image img;
    struct meta_image back;
    uint8_t *buf;
    size_t len;

    meta_image_init(&img);
    cr_assert_eq(meta_codec_encode_image(&img, NULL, &buf, &len), RC_OK);
    meta_image_init(&back);
    cr_assert_eq(decode_image_exact(buf, len, &back), RC_OK);
    assert_images_eq(&img, &back);
    free(buf);
    meta_image_free(&back);
}

/* --- Truncation and garbage ---------------------------------------------- */

Test(meta_codec, truncated_records_are_malformed_at_every_length)
{
    struct meta_record recs[EDGE_MAX];
    size_t n;

    edge_records(recs, EDGE_MAX, &n);
    for (size_t i = 0; i < n; i++) {
        uint8_t *buf;
        size_t len;
        cr_assert_eq(meta_codec_encode_record(&recs[i], &buf, &len), RC_OK);
        for (size_t cut = 0; cut < len; cut++) {
            struct meta_record back;
            int rv = decode_record_exact(buf, cut, &back);
            CHECK(rv == RC_MALFORMED, "record %zu cut at %zu: %d", i, cut,
                  rv);
        }
        free(buf);
    }
}

Test(meta_codec, truncated_batches_fail_or_hold_a_prefix)
{
    struct meta_record recs[EDGE_MAX];
    size_t n;
    uint8_t *buf;
    size_t len;
    size_t n_ok = 0;

    edge_records(recs, EDGE_MAX, &n);
    cr_assert_eq(meta_codec_encode_batch(recs, n, NULL, &buf, &len), RC_OK);
    for (size_t cut = 0; cut < len; cut++) {
        struct meta_record *back;
        size_t n_back;
        int rv = decode_batch_exact(buf, cut, &back, &n_back);
        CHECK(rv == RC_OK || rv == RC_MALFORMED, "cut %zu: %d", cut, rv);
        if (rv != RC_OK) {
            CHECK(back == NULL && n_back == 0, "cut %zu: output", cut);
            continue;
        }
        n_ok++;
        CHECK(n_back < n, "cut %zu: %zu records", cut, n_back);
        for (size_t i = 0; i < n_back; i++) {
            CHECK(memcmp(&back[i], &recs[i], sizeof recs[i]) == 0,
                  "cut %zu: record %zu", cut, i);
        }
        free(back);
    }
    cr_assert_eq(n_ok, n); /* exactly the cuts at record boundaries */
    free(buf);
}

Test(meta_codec, truncated_images_fail_cleanly_at_every_length)
{
    struct meta_image img;
    uint8_t *buf;
    size_t len;

    build_image(&img);
    cr_assert_eq(meta_codec_encode_image(&img, NULL, &buf, &len), RC_OK);
    for (size_t cut = 0; cut < len; cut++) {
        struct meta_image back;
        int rv;
        meta_image_init(&back);
        rv = decode_image_exact(buf, cut, &back);
        CHECK(rv == RC_OK || rv == RC_MALFORMED, "cut %zu: %d", cut, rv);
        if (rv != RC_OK) {
            assert_image_empty(&back);
        }
        meta_image_free(&back);
    }
    free(buf);
    meta_image_free(&img);
}

/* Decodes p[0..len) as all three kinds; only OK or MALFORMED may come
 * back, and a record that decodes must encode to something equal. */
static void decode_all_ways(const uint8_t *p, size_t len)
{
    struct meta_record rec;
    struct meta_record again;
    struct meta_record *recs;
    struct meta_image img;
    size_t n;
    int rv;

    rv = decode_record_exact(p, len, &rec);
    CHECK(rv == RC_OK || rv == RC_MALFORMED, "record: %d", rv);
    if (rv == RC_OK) {
        uint8_t *buf;
        size_t blen;
        CHECK(meta_codec_encode_record(&rec, &buf, &blen) == RC_OK, "enc");
        CHECK(decode_record_exact(buf, blen, &again) == RC_OK, "dec");
        CHECK(memcmp(&rec, &again, sizeof rec) == 0, "re-decode differs");
        free(buf);
    }
    rv = decode_batch_exact(p, len, &recs, &n);
    CHECK(rv == RC_OK || rv == RC_MALFORMED, "batch: %d", rv);
    free(recs);
    meta_image_init(&img);
    rv = decode_image_exact(p, len, &img);
    CHECK(rv == RC_OK || rv == RC_MALFORMED, "image: %d", rv);
    if (rv != RC_OK) {
        assert_image_empty(&img);
    }
    meta_image_free(&img);
}

Test(meta_codec, random_garbage_never_crashes)
{
    uint64_t seed = 0xc0ffee;
    uint8_t buf[512];

    for (int i = 0; i < 5000; i++) {
        size_t len = (size_t)(rng_next(&seed) % sizeof buf);
        for (size_t j = 0; j < len; j++) {
            buf[j] = (uint8_t)rng_next(&seed);
        }
        decode_all_ways(buf, len);
    }
}

Test(meta_codec, mutated_encodings_never_crash)
{
    struct meta_record recs[EDGE_MAX];
    struct meta_image img;
    uint8_t *enc[EDGE_MAX + 2];
    size_t lens[EDGE_MAX + 2];
    size_t n;
    uint64_t seed = 42;

    edge_records(recs, EDGE_MAX, &n);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(meta_codec_encode_record(&recs[i], &enc[i], &lens[i]),
                     RC_OK);
    }
    cr_assert_eq(meta_codec_encode_batch(recs, n, NULL, &enc[n], &lens[n]),
                 RC_OK);
    build_image(&img);
    cr_assert_eq(meta_codec_encode_image(&img, NULL, &enc[n + 1],
                                         &lens[n + 1]),
                 RC_OK);
    meta_image_free(&img);
    for (int i = 0; i < 3000; i++) {
        size_t k = (size_t)(rng_next(&seed) % (n + 2));
        uint8_t *m = exact_copy(enc[k], lens[k]);
        int flips = 1 + (int)(rng_next(&seed) % 4);
        for (int f = 0; f < flips && lens[k] > 0; f++) {
            m[rng_next(&seed) % lens[k]] = (uint8_t)rng_next(&seed);
        }
        decode_all_ways(m, lens[k]);
        free(m);
    }
    for (size_t i = 0; i < n + 2; i++) {
        free(enc[i]);
    }
}

/* --- Hand-built protobuf ------------------------------------------------- */

struct pb {
    uint8_t *p;
    size_t len;
    size_t cap;
};

static void pb_put(struct pb *b, const void *src, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap < 64 ? 64 : b->cap;
        while (cap < b->len + n) {
            cap *= 2;
        }
        b->p = realloc(b->p, cap);
        cr_assert_not_null(b->p);
        b->cap = cap;
    }
    if (n > 0) {
        memcpy(b->p + b->len, src, n);
        b->len += n;
    }
}

static void pb_varint(struct pb *b, uint64_t v)
{
    uint8_t byte;

    do {
        byte = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v != 0) {
            byte |= 0x80;
        }
        pb_put(b, &byte, 1);
    } while (v != 0);
}

static void pb_int(struct pb *b, uint32_t field, int64_t v)
{
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, (uint64_t)v);
}

static void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n)
{
    pb_varint(b, ((uint64_t)field << 3) | 2);
    pb_varint(b, n);
    pb_put(b, p, n);
}

static void pb_str(struct pb *b, uint32_t field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

/* A string of n copies of c. */
static void pb_fill(struct pb *b, uint32_t field, char c, size_t n)
{
    char *s = malloc(n + 1);

    cr_assert_not_null(s);
    memset(s, c, n);
    pb_bytes(b, field, s, n);
    free(s);
}

static void pb_uuid(struct pb *b, uint32_t field, size_t n)
{
    uint8_t id[32];

    memset(id, 0x11, sizeof id);
    pb_bytes(b, field, id, n);
}

/* Appends inner as message field and frees inner. */
static void pb_msg(struct pb *b, uint32_t field, struct pb *inner)
{
    pb_bytes(b, field, inner->p, inner->len);
    free(inner->p);
    memset(inner, 0, sizeof *inner);
}

/* Wraps inner as MetaRecord field `kind`, decodes it, frees everything. */
static int decode_wrapped(uint32_t kind, struct pb *inner)
{
    struct pb outer = {0};
    struct meta_record rec;
    int rv;

    pb_msg(&outer, kind, inner);
    rv = decode_record_exact(outer.p, outer.len, &rec);
    free(outer.p);
    return rv;
}

enum {
    F_REGISTER = 1, F_CHANGE, F_TOPIC, F_PARTITION, F_PCHANGE, F_REMOVE,
    F_CONFIG, F_PIDS
};

static int topic_with(size_t uuid_len, char name_c, size_t name_len)
{
    struct pb t = {0};

    pb_fill(&t, 1, name_c, name_len);
    pb_uuid(&t, 2, uuid_len);
    return decode_wrapped(F_TOPIC, &t);
}

static int register_with(size_t uuid_len, size_t host_len, size_t rack_len)
{
    struct pb r = {0};
    struct pb e = {0};

    pb_int(&r, 1, 3);
    pb_uuid(&r, 2, uuid_len);
    pb_fill(&e, 1, 'h', host_len);
    pb_int(&e, 2, 9092);
    pb_msg(&r, 3, &e);
    pb_fill(&r, 4, 'r', rack_len);
    return decode_wrapped(F_REGISTER, &r);
}

/* A PartitionRecord (or, if change, a PartitionChangeRecord changing the
 * ISR) with n_ids replicas and ISR entries, packed or not. */
static int partition_with(bool change, size_t uuid_len, size_t n_ids,
                          bool packed)
{
    struct pb r = {0};
    struct pb ids = {0};

    pb_uuid(&r, 1, uuid_len);
    pb_int(&r, 2, 0);
    for (size_t i = 0; i < n_ids; i++) {
        pb_varint(&ids, i);
    }
    for (uint32_t field = change ? 4 : 3; field <= 4; field++) {
        if (packed) {
            pb_bytes(&r, field, ids.p, ids.len);
        } else {
            for (size_t i = 0; i < n_ids; i++) {
                pb_int(&r, field, (int64_t)i);
            }
        }
    }
    free(ids.p);
    if (change) {
        pb_int(&r, 3, 1);
    } else {
        pb_int(&r, 5, 0);
        pb_int(&r, 6, 0);
        pb_int(&r, 7, 0);
    }
    return decode_wrapped(change ? F_PCHANGE : F_PARTITION, &r);
}

static int remove_with(size_t uuid_len)
{
    struct pb r = {0};

    pb_uuid(&r, 1, uuid_len);
    return decode_wrapped(F_REMOVE, &r);
}

Test(meta_codec, uuids_must_be_exactly_sixteen_bytes)
{
    size_t lens[] = {0, 1, 15, 17, 32};

    cr_assert_eq(topic_with(16, 't', 1), RC_OK);
    cr_assert_eq(register_with(16, 1, 1), RC_OK);
    cr_assert_eq(partition_with(false, 16, 1, false), RC_OK);
    cr_assert_eq(partition_with(true, 16, 1, false), RC_OK);
    cr_assert_eq(remove_with(16), RC_OK);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t n = lens[i];
        cr_assert_eq(topic_with(n, 't', 1), RC_MALFORMED, "%zu", n);
        cr_assert_eq(register_with(n, 1, 1), RC_MALFORMED, "%zu", n);
        cr_assert_eq(partition_with(false, n, 1, false), RC_MALFORMED);
        cr_assert_eq(partition_with(true, n, 1, false), RC_MALFORMED);
        cr_assert_eq(remove_with(n), RC_MALFORMED, "%zu", n);
    }
}

Test(meta_codec, replica_arrays_above_sixteen_are_malformed)
{
    for (int packed = 0; packed < 2; packed++) {
        cr_assert_eq(partition_with(false, 16, 16, packed), RC_OK);
        cr_assert_eq(partition_with(true, 16, 16, packed), RC_OK);
        cr_assert_eq(partition_with(false, 16, 17, packed), RC_MALFORMED);
        cr_assert_eq(partition_with(true, 16, 17, packed), RC_MALFORMED);
        cr_assert_eq(partition_with(false, 16, 1000, packed), RC_MALFORMED);
    }
}

static int config_with(size_t res_len, size_t name_len, size_t value_len)
{
    struct pb c = {0};

    pb_int(&c, 1, META_RESOURCE_TOPIC);
    pb_fill(&c, 2, 't', res_len);
    pb_fill(&c, 3, 'k', name_len);
    pb_fill(&c, 4, 'v', value_len);
    return decode_wrapped(F_CONFIG, &c);
}

Test(meta_codec, strings_longer_than_their_bound_are_malformed)
{
    cr_assert_eq(topic_with(16, 't', META_TOPIC_NAME_BYTES_MAX), RC_OK);
    cr_assert_eq(topic_with(16, 't', META_TOPIC_NAME_BYTES_MAX + 1),
                 RC_MALFORMED);
    cr_assert_eq(register_with(16, META_HOST_BYTES_MAX, META_RACK_BYTES_MAX),
                 RC_OK);
    cr_assert_eq(register_with(16, META_HOST_BYTES_MAX + 1, 1), RC_MALFORMED);
    cr_assert_eq(register_with(16, 1, META_RACK_BYTES_MAX + 1), RC_MALFORMED);
    cr_assert_eq(config_with(META_TOPIC_NAME_BYTES_MAX,
                             META_CONFIG_NAME_BYTES_MAX,
                             META_CONFIG_VALUE_BYTES_MAX),
                 RC_OK);
    cr_assert_eq(config_with(META_TOPIC_NAME_BYTES_MAX + 1, 1, 1),
                 RC_MALFORMED);
    cr_assert_eq(config_with(1, META_CONFIG_NAME_BYTES_MAX + 1, 1),
                 RC_MALFORMED);
    cr_assert_eq(config_with(1, 1, META_CONFIG_VALUE_BYTES_MAX + 1),
                 RC_MALFORMED);
    cr_assert_eq(topic_with(16, 't', 60000), RC_MALFORMED);
}

Test(meta_codec, strings_holding_a_nul_byte_are_malformed)
{
    struct pb t = {0};
    struct pb c = {0};

    pb_bytes(&t, 1, "ab\0cd", 5);
    pb_uuid(&t, 2, 16);
    cr_assert_eq(decode_wrapped(F_TOPIC, &t), RC_MALFORMED);
    pb_int(&c, 1, META_RESOURCE_TOPIC);
    pb_str(&c, 2, "t");
    pb_str(&c, 3, "k");
    pb_bytes(&c, 4, "v\0", 2);
    cr_assert_eq(decode_wrapped(F_CONFIG, &c), RC_MALFORMED);
    /* The same NUL hidden behind a duplicated, merged submessage. */
    {
        struct pb r = {0};
        struct pb e1 = {0};
        struct pb e2 = {0};
        pb_int(&r, 1, 3);
        pb_uuid(&r, 2, 16);
        pb_bytes(&e1, 1, "h\0st", 4);
        pb_msg(&r, 3, &e1);
        pb_int(&e2, 2, 9092);
        pb_msg(&r, 3, &e2);
        cr_assert_eq(decode_wrapped(F_REGISTER, &r), RC_MALFORMED);
    }
}

Test(meta_codec, unknown_fields_and_empty_records_are_malformed)
{
    struct pb t = {0};
    struct pb outer = {0};
    struct pb inner = {0};
    struct meta_record rec;
    struct meta_record *recs;
    size_t n;

    cr_assert_eq(decode_record_exact(NULL, 0, &rec), RC_MALFORMED);
    pb_str(&t, 1, "t");
    pb_uuid(&t, 2, 16);
    pb_int(&t, 9, 1); /* unknown to TopicRecord */
    cr_assert_eq(decode_wrapped(F_TOPIC, &t), RC_MALFORMED);
    pb_str(&t, 1, "t");
    pb_uuid(&t, 2, 16);
    pb_msg(&outer, F_TOPIC, &t);
    pb_int(&outer, 20, 1); /* unknown to MetaRecord */
    cr_assert_eq(decode_record_exact(outer.p, outer.len, &rec),
                 RC_MALFORMED);
    free(outer.p);
    memset(&outer, 0, sizeof outer);
    pb_msg(&outer, 1, &inner); /* a batch holding one empty record */
    cr_assert_eq(decode_batch_exact(outer.p, outer.len, &recs, &n),
                 RC_MALFORMED);
    pb_int(&outer, 2, 1); /* unknown to MetaBatch */
    cr_assert_eq(decode_batch_exact(outer.p, outer.len, &recs, &n),
                 RC_MALFORMED);
    free(outer.p);
}

Test(meta_codec, missing_or_out_of_range_fields_are_malformed)
{
    struct pb r = {0};

    pb_str(&r, 1, "t"); /* a topic without an id */
    cr_assert_eq(decode_wrapped(F_TOPIC, &r), RC_MALFORMED);
    pb_int(&r, 1, 1); /* a broker change without an epoch */
    cr_assert_eq(decode_wrapped(F_CHANGE, &r), RC_MALFORMED);
    pb_int(&r, 1, 1);
    pb_int(&r, 2, 5);
    pb_int(&r, 3, 128); /* fenced is an int8 */
    cr_assert_eq(decode_wrapped(F_CHANGE, &r), RC_MALFORMED);
    pb_int(&r, 1, 1);
    pb_int(&r, 2, 5);
    pb_int(&r, 4, -129);
    cr_assert_eq(decode_wrapped(F_CHANGE, &r), RC_MALFORMED);
    pb_int(&r, 1, 1);
    pb_int(&r, 2, 5);
    cr_assert_eq(decode_wrapped(F_CHANGE, &r), RC_OK); /* 0 = unchanged */
    pb_int(&r, 1, 1);
    pb_int(&r, 2, 5);
    cr_assert_eq(decode_wrapped(F_PIDS, &r), RC_MALFORMED);
    pb_uuid(&r, 1, 16); /* an ISR without has_isr_change */
    pb_int(&r, 2, 0);
    pb_int(&r, 4, 1);
    cr_assert_eq(decode_wrapped(F_PCHANGE, &r), RC_MALFORMED);
    pb_int(&r, 1, 3); /* a registration without endpoint */
    pb_uuid(&r, 2, 16);
    cr_assert_eq(decode_wrapped(F_REGISTER, &r), RC_MALFORMED);
    pb_int(&r, 1, 300); /* resource type beyond int8 */
    pb_str(&r, 2, "t");
    pb_str(&r, 3, "k");
    cr_assert_eq(decode_wrapped(F_CONFIG, &r), RC_MALFORMED);
}

Test(meta_codec, inputs_above_their_byte_bound_are_too_large)
{
    size_t big = META_IMAGE_BYTES_MAX + 1;
    uint8_t *zeros = calloc(big, 1);
    struct meta_record rec;
    struct meta_record *recs;
    struct meta_image img;
    size_t n;

    cr_assert_not_null(zeros);
    cr_assert_eq(meta_codec_decode_record(zeros, META_RECORD_BYTES_MAX + 1,
                                          &rec),
                 RC_TOO_LARGE);
    cr_assert_eq(meta_codec_decode_batch(zeros, META_BATCH_BYTES_MAX + 1,
                                         &recs, &n),
                 RC_TOO_LARGE);
    cr_assert_null(recs);
    meta_image_init(&img);
    cr_assert_eq(meta_codec_decode_image(zeros, big, &img), RC_TOO_LARGE);
    assert_image_empty(&img);
    free(zeros);
}

/* --- Hand-built images --------------------------------------------------- */

static void pb_broker(struct pb *img, int64_t id)
{
    struct pb b = {0};
    struct pb e = {0};

    pb_int(&b, 1, id);
    pb_int(&b, 2, 1);
    pb_uuid(&b, 3, 16);
    pb_str(&e, 1, "h");
    pb_int(&e, 2, 9092);
    pb_msg(&b, 4, &e);
    pb_int(&b, 6, 1);
    pb_int(&b, 7, 0);
    pb_msg(img, 2, &b);
}

static void pb_partition(struct pb *topic, int64_t id)
{
    struct pb p = {0};

    pb_int(&p, 2, id);
    pb_int(&p, 3, 1);
    pb_int(&p, 4, 1);
    pb_int(&p, 5, 1);
    pb_int(&p, 6, 0);
    pb_int(&p, 7, 0);
    pb_msg(topic, 3, &p);
}

static void pb_config(struct pb *topic, const char *key, const char *value)
{
    struct pb c = {0};

    pb_str(&c, 3, key);
    if (value != NULL) {
        pb_str(&c, 4, value);
    }
    pb_msg(topic, 4, &c);
}

/* A topic named name with id byte id and n partitions. */
static void pb_topic_start(struct pb *t, const char *name, uint8_t id,
                           int64_t n)
{
    uint8_t uuid[16] = {0};

    uuid[0] = 0xab;
    uuid[15] = id;
    pb_str(t, 1, name);
    pb_bytes(t, 2, uuid, sizeof uuid);
    for (int64_t i = 0; i < n; i++) {
        pb_partition(t, i);
    }
}

static void pb_image_start(struct pb *img)
{
    pb_int(img, 1, 10);
    pb_int(img, 4, 0);
}

static int decode_pb_image(struct pb *b)
{
    struct meta_image img;
    int rv;

    meta_image_init(&img);
    rv = decode_image_exact(b->p, b->len, &img);
    if (rv != RC_OK) {
        assert_image_empty(&img);
    }
    meta_image_free(&img);
    free(b->p);
    memset(b, 0, sizeof *b);
    return rv;
}

Test(meta_codec, image_counts_above_their_bounds_are_malformed)
{
    struct pb img = {0};
    struct pb t = {0};
    char name[16];

    pb_image_start(&img);
    for (int64_t i = 0; i < (int64_t)META_BROKERS_MAX; i++) {
        pb_broker(&img, i);
    }
    cr_assert_eq(decode_pb_image(&img), RC_OK);
    pb_image_start(&img);
    for (int64_t i = 0; i <= (int64_t)META_BROKERS_MAX; i++) {
        pb_broker(&img, i);
    }
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_image_start(&img);
    pb_topic_start(&t, "t", 1, META_PARTITIONS_MAX);
    pb_msg(&img, 3, &t);
    cr_assert_eq(decode_pb_image(&img), RC_OK);
    pb_image_start(&img);
    pb_topic_start(&t, "t", 1, META_PARTITIONS_MAX + 1);
    pb_msg(&img, 3, &t);
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_image_start(&img);
    pb_topic_start(&t, "t", 1, 0);
    for (unsigned i = 0; i <= META_TOPIC_CONFIGS_MAX; i++) {
        snprintf(name, sizeof name, "k%05u", i);
        pb_config(&t, name, "v");
    }
    pb_msg(&img, 3, &t);
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_image_start(&img);
    for (unsigned i = 0; i <= META_TOPICS_MAX; i++) {
        snprintf(name, sizeof name, "t%u", i);
        pb_topic_start(&t, name, (uint8_t)i, 0);
        pb_msg(&img, 3, &t);
    }
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
}

Test(meta_codec, images_breaking_invariants_are_malformed)
{
    struct pb img = {0};
    struct pb t = {0};
    struct pb u = {0};

    pb_image_start(&img); /* brokers out of order */
    pb_broker(&img, 2);
    pb_broker(&img, 1);
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_image_start(&img); /* the same broker twice */
    pb_broker(&img, 1);
    pb_broker(&img, 1);
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_image_start(&img); /* two topics with one name */
    pb_topic_start(&t, "t", 1, 1);
    pb_msg(&img, 3, &t);
    pb_topic_start(&t, "t", 2, 1);
    pb_msg(&img, 3, &t);
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_image_start(&img); /* two topics with one id */
    pb_topic_start(&t, "a", 1, 1);
    pb_msg(&img, 3, &t);
    pb_topic_start(&t, "b", 1, 1);
    pb_msg(&img, 3, &t);
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_image_start(&img); /* partition 1 where 0 belongs */
    pb_topic_start(&t, "a", 1, 0);
    pb_partition(&t, 1);
    pb_msg(&img, 3, &t);
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_image_start(&img); /* configs out of order */
    pb_topic_start(&t, "a", 1, 0);
    pb_config(&t, "b", "1");
    pb_config(&t, "a", "1");
    pb_msg(&img, 3, &t);
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_image_start(&img); /* a config without a value */
    pb_topic_start(&t, "a", 1, 0);
    pb_config(&t, "a", NULL);
    pb_msg(&img, 3, &t);
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_image_start(&img); /* a nested partition naming a topic id */
    pb_topic_start(&t, "a", 1, 0);
    pb_uuid(&u, 1, 16);
    pb_int(&u, 2, 0);
    pb_int(&u, 5, 1);
    pb_int(&u, 6, 0);
    pb_int(&u, 7, 0);
    pb_msg(&t, 3, &u);
    pb_msg(&img, 3, &t);
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_int(&img, 1, -1); /* a negative offset */
    pb_int(&img, 4, 0);
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_image_start(&img);
    pb_int(&img, 9, 0); /* unknown to MetaImage */
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
    pb_int(&img, 4, 0); /* no offset */
    cr_assert_eq(decode_pb_image(&img), RC_MALFORMED);
}
