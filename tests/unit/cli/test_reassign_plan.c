/* Unit tests for cli/cmd/reassign/reassign_plan.c: balanced plans for adding and
 * removing a broker (every replica of a removed broker moves, loads end
 * within one replica of each other, no partition gets a broker twice,
 * only needed moves), and the plan file in Kafka's JSON. */
#include "cli/cmd/reassign/reassign_plan.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/meta/meta.h"
#include "common/rc.h"

static struct meta_image img;
static struct reassign_plan plan;

static void apply(const struct meta_record *rec)
{
    cr_assert_eq(meta_apply(&img, rec), RC_OK);
}

/* Brokers 1..n_brokers; topic "t" (id 1) of n_parts partitions with RF 3
 * placed as CreateTopics does on brokers 1..3. */
static void build(int32_t n_brokers, int32_t n_parts)
{
    meta_image_init(&img);
    memset(&plan, 0, sizeof plan);
    struct meta_record rec;
    for (int32_t id = 1; id <= n_brokers; id++) {
        memset(&rec, 0, sizeof rec);
        rec.type = META_REC_REGISTER_BROKER;
        rec.u.register_broker.broker_id = id;
        rec.u.register_broker.incarnation.b[0] = (uint8_t)id;
        snprintf(rec.u.register_broker.host, 8, "h");
        rec.u.register_broker.port = 9000 + id;
        apply(&rec);
    }
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_TOPIC;
    snprintf(rec.u.topic.name, sizeof rec.u.topic.name, "t");
    rec.u.topic.id.b[15] = 1;
    apply(&rec);
    for (int32_t p = 0; p < n_parts; p++) {
        memset(&rec, 0, sizeof rec);
        rec.type = META_REC_PARTITION;
        rec.u.partition.topic_id.b[15] = 1;
        rec.u.partition.partition = p;
        for (int32_t k = 0; k < 3; k++) {
            rec.u.partition.replicas.ids[k] = 1 + (p + k) % 3;
        }
        rec.u.partition.replicas.n = 3;
        rec.u.partition.isr = rec.u.partition.replicas;
        rec.u.partition.leader = rec.u.partition.replicas.ids[0];
        apply(&rec);
    }
}

static void teardown(void)
{
    reassign_plan_free(&plan);
    meta_image_free(&img);
}

/* Replicas per broker (index = id) after the plan. */
static void loads_after(int64_t load[8])
{
    memset(load, 0, 8 * sizeof load[0]);
    const struct meta_topic *t = meta_image_topic(&img, "t");
    for (int32_t p = 0; p < t->n_partitions; p++) {
        const struct meta_replica_set *s = &t->partitions[p].replicas;
        for (size_t i = 0; i < plan.n; i++) {
            if (plan.moves[i].partition == p) {
                s = &plan.moves[i].to;
            }
        }
        for (int32_t k = 0; k < s->n; k++) {
            for (int32_t j = 0; j < k; j++) {
                cr_assert_neq(s->ids[j], s->ids[k], "t-%d twice on %d", p,
                              s->ids[k]);
            }
            load[s->ids[k]]++;
        }
    }
}

Test(reassign_plan, added_broker_gets_its_share_with_fewest_moves,
     .fini = teardown)
{
    build(4, 6);
    const int32_t brokers[] = {1, 2, 3, 4};
    char err[128];
    cr_assert_eq(reassign_plan_compute(&img, brokers, 4, NULL, 0, &plan, err,
                                       sizeof err),
                 RC_OK, "%s", err);
    int64_t load[8];
    loads_after(load);
    /* 18 replicas over 4 brokers: 4 or 5 each. */
    for (int32_t id = 1; id <= 4; id++) {
        cr_assert(load[id] == 4 || load[id] == 5, "broker %d holds %lld", id,
                  (long long)load[id]);
    }
    /* Each move puts one replica on broker 4: 4 moves at most. */
    cr_assert_leq(plan.n, 5);
    cr_assert_geq(plan.n, 4);
    for (size_t i = 0; i < plan.n; i++) {
        int changed = 0;
        for (int32_t k = 0; k < 3; k++) {
            changed += plan.moves[i].from.ids[k] != plan.moves[i].to.ids[k];
        }
        cr_assert_eq(changed, 1, "one replica per partition moves");
    }
}

Test(reassign_plan, removed_broker_loses_every_replica, .fini = teardown)
{
    build(4, 8);
    const int32_t brokers[] = {2, 3, 4};
    char err[128];
    cr_assert_eq(reassign_plan_compute(&img, brokers, 3, NULL, 0, &plan, err,
                                       sizeof err),
                 RC_OK, "%s", err);
    int64_t load[8];
    loads_after(load);
    cr_assert_eq(load[1], 0);
    cr_assert_eq(load[2] + load[3] + load[4], 24);
    /* With RF 3 on 3 brokers every one holds every partition. */
    cr_assert_eq(load[2], 8);
    cr_assert_eq(load[4], 8);
}

Test(reassign_plan, too_few_brokers_and_unknown_topics_refused,
     .fini = teardown)
{
    build(3, 2);
    const int32_t brokers[] = {2, 3};
    char err[128];
    cr_assert_eq(reassign_plan_compute(&img, brokers, 2, NULL, 0, &plan, err,
                                       sizeof err),
                 RC_INVALID);
    cr_assert(strstr(err, "3 replicas") != NULL, "%s", err);
    const char *topics[] = {"nope"};
    const int32_t all[] = {1, 2, 3};
    cr_assert_eq(reassign_plan_compute(&img, all, 3, topics, 1, &plan, err,
                                       sizeof err),
                 RC_INVALID);
    cr_assert_eq(reassign_plan_compute(&img, all, 3, NULL, 0, &plan, err,
                                       sizeof err),
                 RC_OK);
    cr_assert_eq(plan.n, 0, "a balanced cluster needs no move");
}

Test(reassign_plan, json_round_trip_and_kafka_files, .fini = teardown)
{
    build(4, 6);
    const int32_t brokers[] = {1, 2, 3, 4};
    char err[128];
    cr_assert_eq(reassign_plan_compute(&img, brokers, 4, NULL, 0, &plan, err,
                                       sizeof err),
                 RC_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    reassign_plan_write_json(f, &plan, false);
    fclose(f);
    struct reassign_plan back;
    cr_assert_eq(reassign_plan_parse(text, len, &back, err, sizeof err),
                 RC_OK, "%s: %s", err, text);
    cr_assert_eq(back.n, plan.n);
    for (size_t i = 0; i < plan.n; i++) {
        cr_assert_str_eq(back.moves[i].topic, plan.moves[i].topic);
        cr_assert_eq(back.moves[i].partition, plan.moves[i].partition);
        cr_assert_eq(memcmp(back.moves[i].to.ids, plan.moves[i].to.ids,
                            3 * sizeof(int32_t)),
                     0);
    }
    reassign_plan_free(&back);
    free(text);
    /* As kafka-reassign-partitions writes it, log_dirs included. */
    const char *kafka =
        "{\"version\":1,\"partitions\":[{\"topic\":\"t\",\"partition\":2,"
        "\"replicas\":[4,2,3],\"log_dirs\":[\"any\",\"any\",\"any\"]}]}\n";
    cr_assert_eq(reassign_plan_parse(kafka, strlen(kafka), &back, err,
                                     sizeof err),
                 RC_OK, "%s", err);
    cr_assert_eq(back.n, 1);
    cr_assert_eq(back.moves[0].to.ids[0], 4);
    reassign_plan_free(&back);
    const char *bad[] = {
        "", "{", "{\"version\":2,\"partitions\":[]}",
        "{\"version\":1}", "{\"version\":1,\"partitions\":[{\"topic\":\"t\"}]}",
        "{\"version\":1,\"partitions\":[]} x",
        "{\"version\":1,\"partitions\":[{\"topic\":\"t\",\"partition\":0,"
        "\"replicas\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_neq(reassign_plan_parse(bad[i], strlen(bad[i]), &back, err,
                                          sizeof err),
                      RC_OK, "accepted: %s", bad[i]);
    }
}
