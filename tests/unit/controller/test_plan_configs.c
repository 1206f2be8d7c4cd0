/* controller/plan_configs.c: IncrementalAlterConfigs and AlterConfigs
 * planned against an image: Kafka's validation and errors, the records
 * of SET, DELETE, APPEND and SUBTRACT, AlterConfigs replacing the whole
 * set, validate_only. */
#include "common/kafka/kafka_error.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "controller/plan_configs.h"
#include "tests/unit/controller/plan_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static struct plan_config_result results[4];

static void orders_setup(void)
{
    setup();
    add_topic("orders", 7);
}

static const struct meta_topic *orders(void)
{
    return meta_image_topic(&img, "orders");
}

/* Plans one topic resource with ops and applies the records. */
static int16_t alter(const struct plan_config_op *ops, size_t n,
                     bool replace)
{
    const struct plan_config_resource res = {META_RESOURCE_TOPIC, "orders",
                                             ops, n};
    cr_assert_eq(plan_alter_configs(&img, &res, 1, replace, false, &out,
                                    results),
                 RC_OK);
    apply_out();
    return results[0].error;
}

TestSuite(plan_configs, .init = orders_setup, .fini = teardown);

Test(plan_configs, set_then_delete_a_topic_config)
{
    const struct plan_config_op set[] = {{"retention.ms", 0, "1000"},
                                         {"segment.ms", 0, "600"}};
    cr_assert_eq(alter(set, 2, false), KAFKA_ERROR_NONE);
    cr_assert_str_eq(meta_topic_config(orders(), "retention.ms"), "1000");
    cr_assert_str_eq(meta_topic_config(orders(), "segment.ms"), "600");
    const struct plan_config_op del[] = {{"retention.ms", 1, NULL}};
    cr_assert_eq(alter(del, 1, false), KAFKA_ERROR_NONE);
    cr_assert_null(meta_topic_config(orders(), "retention.ms"));
    cr_assert_str_eq(meta_topic_config(orders(), "segment.ms"), "600");
}

Test(plan_configs, unchanged_values_propose_nothing)
{
    const struct plan_config_op set[] = {{"retention.ms", 0, "1000"}};
    cr_assert_eq(alter(set, 1, false), KAFKA_ERROR_NONE);
    const struct plan_config_resource res = {META_RESOURCE_TOPIC, "orders",
                                             set, 1};
    cr_assert_eq(plan_alter_configs(&img, &res, 1, false, false, &out,
                                    results),
                 RC_OK);
    cr_assert_eq(out.n, 0u);
    cr_assert_eq(results[0].error, KAFKA_ERROR_NONE);
}

Test(plan_configs, append_and_subtract_edit_a_list_from_its_default)
{
    const struct plan_config_op app[] = {{"cleanup.policy", 2, "compact"}};
    cr_assert_eq(alter(app, 1, false), KAFKA_ERROR_NONE);
    cr_assert_str_eq(meta_topic_config(orders(), "cleanup.policy"),
                     "delete,compact");
    cr_assert_eq(alter(app, 1, false), KAFKA_ERROR_NONE); /* no repeat */
    cr_assert_str_eq(meta_topic_config(orders(), "cleanup.policy"),
                     "delete,compact");
    const struct plan_config_op sub[] = {{"cleanup.policy", 3, "delete"}};
    cr_assert_eq(alter(sub, 1, false), KAFKA_ERROR_NONE);
    cr_assert_str_eq(meta_topic_config(orders(), "cleanup.policy"),
                     "compact");
}

Test(plan_configs, append_to_a_non_list_is_invalid_config)
{
    const struct plan_config_op app[] = {{"retention.ms", 2, "1"}};
    cr_assert_eq(alter(app, 1, false), KAFKA_ERROR_INVALID_CONFIG);
    cr_assert_str_eq(results[0].message, "Can't APPEND to key retention.ms "
                                         "because its type is not LIST.");
}

Test(plan_configs, replace_drops_every_key_not_given)
{
    const struct plan_config_op set[] = {{"retention.ms", 0, "1000"},
                                         {"segment.ms", 0, "600"}};
    cr_assert_eq(alter(set, 2, false), KAFKA_ERROR_NONE);
    const struct plan_config_op only[] = {{"max.message.bytes", 0, "2048"}};
    cr_assert_eq(alter(only, 1, true), KAFKA_ERROR_NONE);
    cr_assert_null(meta_topic_config(orders(), "retention.ms"));
    cr_assert_null(meta_topic_config(orders(), "segment.ms"));
    cr_assert_str_eq(meta_topic_config(orders(), "max.message.bytes"),
                     "2048");
}

Test(plan_configs, kafkas_errors_with_their_messages)
{
    static const struct {
        struct plan_config_op op;
        int16_t error;
        const char *message;
    } cases[] = {
        {{"no.such", 0, "1"}, KAFKA_ERROR_INVALID_CONFIG,
         "Unknown topic config name: no.such"},
        {{"retention.ms", 0, "soon"}, KAFKA_ERROR_INVALID_CONFIG,
         "Invalid value soon for configuration retention.ms: Not a number "
         "of type LONG"},
        {{"retention.ms", 0, "-2"}, KAFKA_ERROR_INVALID_CONFIG,
         "Invalid value -2 for configuration retention.ms: Value must be at "
         "least -1"},
        {{"min.insync.replicas", 0, "0"}, KAFKA_ERROR_INVALID_CONFIG,
         "Invalid value 0 for configuration min.insync.replicas: Value must "
         "be at least 1"},
        {{"segment.bytes", 0, "4294967296"}, KAFKA_ERROR_INVALID_CONFIG,
         "Invalid value 4294967296 for configuration segment.bytes: Not a "
         "number of type INT"},
        {{"unclean.leader.election.enable", 0, "yes"},
         KAFKA_ERROR_INVALID_CONFIG,
         "Invalid value yes for configuration unclean.leader.election."
         "enable: Expected value to be either true or false"},
        {{"min.cleanable.dirty.ratio", 0, "1.5"}, KAFKA_ERROR_INVALID_CONFIG,
         "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: "
         "Value must be no more than 1"},
        {{"message.timestamp.type", 0, "Now"}, KAFKA_ERROR_INVALID_CONFIG,
         "Invalid value Now for configuration message.timestamp.type: "
         "String must be one of: CreateTime, LogAppendTime"},
        {{"cleanup.policy", 0, "delete,forever"}, KAFKA_ERROR_INVALID_CONFIG,
         "Invalid value forever for configuration cleanup.policy: "
         "String must be one of: compact, delete"},
        {{"retention.ms", 0, NULL}, KAFKA_ERROR_INVALID_REQUEST,
         "Null value not supported for : retention.ms"},
        {{"retention.ms", 9, "1"}, KAFKA_ERROR_INVALID_REQUEST,
         "Unknown operation for config retention.ms"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(alter(&cases[i].op, 1, false), cases[i].error,
                     "case %zu", i);
        cr_assert_str_eq(results[0].message, cases[i].message);
        cr_assert_eq(orders()->n_configs, 0u, "case %zu changed the topic",
                     i);
    }
}

Test(plan_configs, values_parse_whole_on_alter_and_incremental_alter)
{
    static const struct {
        const char *name;
        const char *value;
        const char *message;
    } cases[] = {
        {"min.insync.replicas", "two",
         "Invalid value two for configuration min.insync.replicas: Not a "
         "number of type INT"},
        {"min.insync.replicas", "-1",
         "Invalid value -1 for configuration min.insync.replicas: Value "
         "must be at least 1"},
        {"min.insync.replicas", "99999999999999999999",
         "Invalid value 99999999999999999999 for configuration "
         "min.insync.replicas: Not a number of type INT"},
        {"min.insync.replicas", " 2",
         "Invalid value  2 for configuration min.insync.replicas: Not a "
         "number of type INT"},
        {"retention.ms", " 1000",
         "Invalid value  1000 for configuration retention.ms: Not a number "
         "of type LONG"},
        {"retention.ms", "abc",
         "Invalid value abc for configuration retention.ms: Not a number "
         "of type LONG"},
        {"unclean.leader.election.enable", "yes",
         "Invalid value yes for configuration "
         "unclean.leader.election.enable: Expected value to be either true "
         "or false"},
        {"cleanup.policy", "bogus",
         "Invalid value bogus for configuration cleanup.policy: String "
         "must be one of: compact, delete"},
        {"cleanup.policy", "delete,",
         "Invalid value  for configuration cleanup.policy: String "
         "must be one of: compact, delete"},
        {"min.cleanable.dirty.ratio", " 0.5",
         "Invalid value  0.5 for configuration min.cleanable.dirty.ratio: "
         "Not a number of type DOUBLE"},
        {"min.cleanable.dirty.ratio", "nan",
         "Invalid value nan for configuration min.cleanable.dirty.ratio: "
         "Not a number of type DOUBLE"},
    };
    const struct plan_config_op keep[] = {{"min.insync.replicas", 0, "2"}};
    cr_assert_eq(alter(keep, 1, false), KAFKA_ERROR_NONE);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct plan_config_op op = {cases[i].name, 0, cases[i].value};
        for (int replace = 0; replace <= 1; replace++) {
            cr_assert_eq(alter(&op, 1, replace), KAFKA_ERROR_INVALID_CONFIG,
                         "case %zu replace %d", i, replace);
            cr_assert_str_eq(results[0].message, cases[i].message,
                             "case %zu replace %d", i, replace);
            cr_assert_eq(orders()->n_configs, 1u, "case %zu", i);
            cr_assert_str_eq(meta_topic_config(orders(),
                                               "min.insync.replicas"),
                             "2");
        }
    }
}

Test(plan_configs, append_checks_the_list_it_makes)
{
    const struct plan_config_op app[] = {{"cleanup.policy", 2, "bogus"}};
    cr_assert_eq(alter(app, 1, false), KAFKA_ERROR_INVALID_CONFIG);
    cr_assert_str_eq(results[0].message,
                     "Invalid value bogus for configuration "
                     "cleanup.policy: String must be one of: compact, "
                     "delete");
    cr_assert_eq(orders()->n_configs, 0u);
}

Test(plan_configs, broker_values_parse_whole_too)
{
    const struct plan_config_op ops[] = {{"min.insync.replicas", 0, " 2"}};
    const struct plan_config_resource res = {META_RESOURCE_BROKER, "",
                                             ops, 1};
    cr_assert_eq(plan_alter_configs(&img, &res, 1, false, false, &out,
                                    results),
                 RC_OK);
    cr_assert_eq(results[0].error, KAFKA_ERROR_INVALID_CONFIG);
    cr_assert_str_eq(results[0].message,
                     "Invalid value  2 for configuration min.insync.replicas:"
                     " Not a number of type INT");
    cr_assert_eq(out.n, 0u);
}

Test(plan_configs, one_bad_key_refuses_the_whole_resource)
{
    const struct plan_config_op ops[] = {{"retention.ms", 0, "1000"},
                                         {"segment.ms", 0, "0"}};
    cr_assert_eq(alter(ops, 2, false), KAFKA_ERROR_INVALID_CONFIG);
    cr_assert_null(meta_topic_config(orders(), "retention.ms"));
}

Test(plan_configs, a_key_given_twice_is_invalid_request)
{
    const struct plan_config_op ops[] = {{"retention.ms", 0, "1000"},
                                         {"retention.ms", 1, NULL}};
    cr_assert_eq(alter(ops, 2, false), KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_str_eq(results[0].message,
                     "Error due to duplicate config keys");
}

Test(plan_configs, each_resource_is_answered_on_its_own)
{
    const struct plan_config_op good[] = {{"retention.ms", 0, "1000"}};
    const struct plan_config_resource res[] = {
        {META_RESOURCE_TOPIC, "missing", good, 1},
        {META_RESOURCE_TOPIC, "orders", good, 1},
        {7, "x", good, 1}};
    cr_assert_eq(plan_alter_configs(&img, res, 3, false, false, &out,
                                    results),
                 RC_OK);
    cr_assert_eq(results[0].error, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION);
    cr_assert_str_eq(results[0].message,
                     "The topic 'missing' does not exist.");
    cr_assert_eq(results[1].error, KAFKA_ERROR_NONE);
    cr_assert_eq(results[2].error, KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(out.n, 1u);
    cr_assert_eq(out.recs[0].type, META_REC_CONFIG);
    cr_assert_str_eq(out.recs[0].u.config.resource_name, "orders");
}

Test(plan_configs, validate_only_checks_and_proposes_nothing)
{
    const struct plan_config_op ok[] = {{"retention.ms", 0, "1000"}};
    const struct plan_config_op bad[] = {{"retention.ms", 0, "x"}};
    const struct plan_config_resource res[] = {
        {META_RESOURCE_TOPIC, "orders", ok, 1},
        {META_RESOURCE_BROKER, "", bad, 1}};
    cr_assert_eq(plan_alter_configs(&img, res, 2, false, true, &out,
                                    results),
                 RC_OK);
    cr_assert_eq(out.n, 0u);
    cr_assert_eq(results[0].error, KAFKA_ERROR_NONE);
    cr_assert_eq(results[1].error, KAFKA_ERROR_INVALID_CONFIG);
}

Test(plan_configs, a_resource_given_twice_is_refused_both_times)
{
    const struct plan_config_op ok[] = {{"retention.ms", 0, "1000"}};
    const struct plan_config_resource res[] = {
        {META_RESOURCE_TOPIC, "orders", ok, 1},
        {META_RESOURCE_BROKER, "orders", ok, 1},
        {META_RESOURCE_TOPIC, "orders", ok, 1}};
    cr_assert_eq(plan_alter_configs(&img, res, 3, false, false, &out,
                                    results),
                 RC_OK);
    cr_assert_eq(results[0].error, KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_str_eq(results[0].message,
                     "Each resource must appear at most once.");
    cr_assert_eq(results[1].error, KAFKA_ERROR_INVALID_REQUEST); /* name */
    cr_assert_eq(results[2].error, KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(out.n, 0u);
}

/* --- Broker resources ---------------------------------------------------- */

static int16_t alter_broker(const char *name,
                            const struct plan_config_op *ops, size_t n)
{
    const struct plan_config_resource res = {META_RESOURCE_BROKER, name,
                                             ops, n};
    cr_assert_eq(plan_alter_configs(&img, &res, 1, false, false, &out,
                                    results),
                 RC_OK);
    apply_out();
    return results[0].error;
}

Test(plan_configs, broker_default_and_one_broker_are_separate_resources)
{
    const struct plan_config_op set[] = {{"log.retention.ms", 0, "5000"},
                                         {"min.insync.replicas", 0, "2"}};
    cr_assert_eq(alter_broker("", set, 2), KAFKA_ERROR_NONE);
    const struct plan_config_op one[] = {{"log.retention.ms", 0, "9000"}};
    cr_assert_eq(alter_broker("2", one, 1), KAFKA_ERROR_NONE);
    cr_assert_str_eq(meta_broker_config(&img, META_BROKER_DEFAULT,
                                        "log.retention.ms"),
                     "5000");
    cr_assert_str_eq(meta_broker_config(&img, 2, "log.retention.ms"),
                     "9000");
    const struct plan_config_op del[] = {{"log.retention.ms", 1, NULL}};
    cr_assert_eq(alter_broker("2", del, 1), KAFKA_ERROR_NONE);
    cr_assert_null(meta_broker_config(&img, 2, "log.retention.ms"));
    cr_assert_str_eq(meta_broker_config(&img, META_BROKER_DEFAULT,
                                        "min.insync.replicas"),
                     "2");
}

Test(plan_configs, static_broker_configs_refuse_the_whole_resource)
{
    const struct plan_config_op ops[] = {{"log.retention.ms", 0, "5000"},
                                         {"log.dirs", 0, "/tmp/x"}};
    cr_assert_eq(alter_broker("1", ops, 2), KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_str_eq(results[0].message,
                     "Cannot update these configs dynamically: "
                     "Set(log.dirs)");
    cr_assert_null(meta_broker_config(&img, 1, "log.retention.ms"));
}

Test(plan_configs, broker_names_and_values_are_checked)
{
    const struct plan_config_op ok[] = {{"log.retention.ms", 0, "5000"}};
    cr_assert_eq(alter_broker("-1", ok, 1), KAFKA_ERROR_INVALID_REQUEST);
    cr_assert_eq(alter_broker("b1", ok, 1), KAFKA_ERROR_INVALID_REQUEST);
    const struct plan_config_op bad[] = {
        {"leader.replication.throttled.rate", 0, "-5"}};
    cr_assert_eq(alter_broker("1", bad, 1), KAFKA_ERROR_INVALID_CONFIG);
    cr_assert_str_eq(results[0].message,
                     "Invalid value -5 for configuration leader.replication."
                     "throttled.rate: Value must be at least 0");
    const struct plan_config_op unknown[] = {{"retention.ms", 0, "1"}};
    cr_assert_eq(alter_broker("1", unknown, 1), KAFKA_ERROR_INVALID_CONFIG);
    cr_assert_str_eq(results[0].message,
                     "Unknown broker config name: retention.ms");
    const struct plan_config_op rate[] = {
        {"follower.replication.throttled.rate", 0, "1048576"}};
    cr_assert_eq(alter_broker("1", rate, 1), KAFKA_ERROR_NONE);
    cr_assert_str_eq(meta_broker_config(&img, 1,
                                        "follower.replication.throttled.rate"),
                     "1048576");
}

Test(plan_configs, broker_synonyms_are_checked_by_their_own_bounds)
{
    /* log.retention.ms has no lower bound in Kafka, retention.ms -1. */
    const struct plan_config_op forever[] = {{"log.retention.ms", 0, "-5"}};
    cr_assert_eq(alter_broker("", forever, 1), KAFKA_ERROR_NONE);
    cr_assert_str_eq(meta_broker_config(&img, META_BROKER_DEFAULT,
                                        "log.retention.ms"),
                     "-5");
    const struct plan_config_op topic[] = {{"retention.ms", 0, "-5"}};
    cr_assert_eq(alter(topic, 1, false), KAFKA_ERROR_INVALID_CONFIG);
    cr_assert_str_eq(results[0].message,
                     "Invalid value -5 for configuration retention.ms: "
                     "Value must be at least -1");
    const struct plan_config_op ratio[] = {
        {"log.cleaner.min.cleanable.ratio", 0, "2"}};
    cr_assert_eq(alter_broker("1", ratio, 1), KAFKA_ERROR_INVALID_CONFIG);
    cr_assert_str_eq(results[0].message,
                     "Invalid value 2 for configuration "
                     "log.cleaner.min.cleanable.ratio: Value must be no "
                     "more than 1");
    const struct plan_config_op two[] = {{"min.insync.replicas", 0, "two"}};
    cr_assert_eq(alter_broker("1", two, 1), KAFKA_ERROR_INVALID_CONFIG);
    cr_assert_str_eq(results[0].message,
                     "Invalid value two for configuration "
                     "min.insync.replicas: Not a number of type INT");
    cr_assert_null(meta_broker_config(&img, 1, "min.insync.replicas"));
    /* A synonym Kafka changes only with a restart is no dynamic key. */
    const struct plan_config_op jitter[] = {{"log.roll.jitter.ms", 0, "1"}};
    cr_assert_eq(alter_broker("1", jitter, 1), KAFKA_ERROR_INVALID_CONFIG);
    cr_assert_str_eq(results[0].message,
                     "Unknown broker config name: log.roll.jitter.ms");
}
