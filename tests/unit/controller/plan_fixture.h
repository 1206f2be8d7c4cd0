/* The controller's planner tests' image builder (tests/unit/controller/
 * test_plan*.c): one image and one plan per test, brokers, topics,
 * partitions and configs made by applying records with meta_apply(), as
 * the controller's own records are applied after commit. Each test file
 * includes it once; setup() and teardown() are the plain fixture. */
#ifndef CAIRN_TESTS_UNIT_CONTROLLER_PLAN_FIXTURE_H
#define CAIRN_TESTS_UNIT_CONTROLLER_PLAN_FIXTURE_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/meta/meta.h"
#include "common/rc.h"
#include "controller/plan.h"

static struct meta_image img;
static struct plan_records out;

static inline void setup(void)
{
    meta_image_init(&img);
    plan_records_init(&out);
}

static inline void teardown(void)
{
    plan_records_free(&out);
    meta_image_free(&img);
}

/* --- Building images ----------------------------------------------------- */

static inline struct meta_replica_set set_of(const int32_t *ids, size_t n)
{
    struct meta_replica_set s;
    memset(&s, 0, sizeof s);
    cr_assert_leq(n, META_REPLICAS_MAX);
    for (size_t i = 0; i < n; i++) {
        s.ids[s.n++] = ids[i];
    }
    return s;
}

#define SET(...)                                                       \
    set_of((const int32_t[]){__VA_ARGS__},                             \
           sizeof((const int32_t[]){__VA_ARGS__}) / sizeof(int32_t))

static inline bool set_eq(const struct meta_replica_set *a,
                   const struct meta_replica_set b)
{
    if (a->n != b.n) {
        return false;
    }
    for (int32_t i = 0; i < a->n; i++) {
        if (a->ids[i] != b.ids[i]) {
            return false;
        }
    }
    return true;
}

static inline void apply(const struct meta_record *rec)
{
    cr_assert_eq(meta_apply(&img, rec), RC_OK, "record type %d refused",
                 (int)rec->type);
}

/* Applies the plan, as the glue would after commit, and empties it. */
static inline void apply_out(void)
{
    for (size_t i = 0; i < out.n; i++) {
        apply(&out.recs[i]);
    }
    plan_records_clear(&out);
}

static inline struct meta_uuid incarnation(int32_t id, uint8_t gen)
{
    struct meta_uuid u;
    memset(&u, 0, sizeof u);
    u.b[0] = 0xb0;
    u.b[1] = (uint8_t)id;
    u.b[2] = gen;
    return u;
}

static inline struct meta_rec_register_broker reg_req(int32_t id,
                                                      uint8_t gen)
{
    struct meta_rec_register_broker r;
    memset(&r, 0, sizeof r);
    r.broker_id = id;
    r.incarnation = incarnation(id, gen);
    snprintf(r.host, sizeof r.host, "localhost");
    r.port = 9092 + id;
    return r;
}

/* Registers broker id (fenced, as registration leaves it); its epoch. */
static inline int64_t reg_broker(int32_t id)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_REGISTER_BROKER;
    rec.u.register_broker = reg_req(id, 1);
    apply(&rec);
    return meta_image_broker(&img, id)->epoch;
}

static inline void broker_change(int32_t id, int8_t fenced,
                                 int8_t shutdown)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_BROKER_CHANGE;
    rec.u.broker_change.broker_id = id;
    rec.u.broker_change.broker_epoch = meta_image_broker(&img, id)->epoch;
    rec.u.broker_change.fenced = fenced;
    rec.u.broker_change.in_controlled_shutdown = shutdown;
    apply(&rec);
}

/* Brokers 1..n, registered and unfenced. */
static inline void live_brokers(int32_t n)
{
    for (int32_t id = 1; id <= n; id++) {
        reg_broker(id);
        broker_change(id, -1, 0);
    }
}

static inline struct meta_uuid tid(uint8_t n)
{
    struct meta_uuid u;
    memset(&u, 0, sizeof u);
    u.b[0] = 0x70;
    u.b[15] = n;
    return u;
}

static inline void add_topic(const char *name, uint8_t id)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_TOPIC;
    snprintf(rec.u.topic.name, sizeof rec.u.topic.name, "%s", name);
    rec.u.topic.id = tid(id);
    apply(&rec);
}

static inline void add_partition(uint8_t topic, int32_t p,
                          struct meta_replica_set replicas,
                          struct meta_replica_set isr, int32_t leader)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_PARTITION;
    rec.u.partition.topic_id = tid(topic);
    rec.u.partition.partition = p;
    rec.u.partition.replicas = replicas;
    rec.u.partition.isr = isr;
    rec.u.partition.leader = leader;
    apply(&rec);
}

static inline void topic_config(const char *topic, const char *name,
                         const char *value)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_CONFIG;
    rec.u.config.resource_type = META_RESOURCE_TOPIC;
    snprintf(rec.u.config.resource_name, sizeof rec.u.config.resource_name,
             "%s", topic);
    snprintf(rec.u.config.name, sizeof rec.u.config.name, "%s", name);
    rec.u.config.has_value = true;
    snprintf(rec.u.config.value, sizeof rec.u.config.value, "%s", value);
    apply(&rec);
}

static inline const struct meta_partition *part(uint8_t topic, int32_t p)
{
    struct meta_uuid id = tid(topic);
    const struct meta_partition *mp = meta_image_partition(&img, &id, p);
    cr_assert_not_null(mp);
    return mp;
}

static inline const struct meta_broker *broker(int32_t id)
{
    const struct meta_broker *b = meta_image_broker(&img, id);
    cr_assert_not_null(b);
    return b;
}

#endif
