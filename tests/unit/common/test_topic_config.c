/* Unit tests for common/topic_config.c: the table itself (every default
 * passes its own check, names and synonyms are unique), every type's
 * check with Kafka's ConfigDef messages, bounds and choices, the typed
 * values and their text, and the resolution of a topic's settings with
 * Kafka's precedence (topic, this broker, cluster default, base). */
#include "common/topic_config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kafka/kafka_error.h"

static char msg[TOPIC_CONFIG_MESSAGE_BYTES];

/* The check of name=value: its error, its message in msg. */
static int16_t check(const char *name, const char *value)
{
    return topic_config_check(name, value, msg);
}

static void expect_bad(const char *name, const char *value,
                       const char *message)
{
    cr_expect_eq(check(name, value), KAFKA_ERROR_INVALID_CONFIG, "%s=%s",
                 name, value);
    cr_expect_str_eq(msg, message, "%s=%s", name, value);
}

static void expect_good(const char *name, const char *value)
{
    cr_expect_eq(check(name, value), KAFKA_ERROR_NONE, "%s=%s: %s", name,
                 value, msg);
    cr_expect_str_eq(msg, "", "%s=%s", name, value);
}

Test(topic_config, every_default_passes_its_own_check)
{
    for (int i = 0; i < TOPIC_CONFIG_COUNT; i++) {
        const struct topic_config_def *d = topic_config_at(i);
        expect_good(d->name, d->default_value);
        cr_expect_eq(topic_config_lookup(d->name), d, "%s", d->name);
        cr_expect_str_eq(topic_config_name(i), d->name);
        cr_expect(!d->read_only && !d->sensitive, "%s", d->name);
        if (d->synonym != NULL) {
            cr_expect_eq(topic_config_check_def(d, d->synonym, true,
                                                d->default_value, msg),
                         KAFKA_ERROR_NONE, "%s: %s", d->synonym, msg);
        }
    }
}

Test(topic_config, names_and_synonyms_are_unique_and_in_order)
{
    for (int i = 1; i < TOPIC_CONFIG_COUNT; i++) {
        cr_expect_lt(strcmp(topic_config_name(i - 1), topic_config_name(i)),
                     0, "%s", topic_config_name(i));
    }
    for (int i = 0; i < TOPIC_CONFIG_COUNT; i++) {
        const char *s = topic_config_at(i)->synonym;
        if (s != NULL) {
            cr_expect_eq(topic_config_by_synonym(s), topic_config_at(i),
                         "%s", s);
        }
    }
    cr_expect_str_eq(topic_config_at(TOPIC_CONFIG_RETENTION_MS)->synonym,
                     "log.retention.ms");
    cr_expect_str_eq(
        topic_config_at(TOPIC_CONFIG_MIN_INSYNC_REPLICAS)->synonym,
        "min.insync.replicas");
    cr_expect_null(topic_config_by_synonym("retention.ms"));
}

Test(topic_config, unknown_name_is_invalid_config)
{
    expect_bad("no.such.config", "1",
               "Unknown topic config name: no.such.config");
    expect_bad("log.retention.ms", "1",
               "Unknown topic config name: log.retention.ms");
    expect_bad("", "1", "Unknown topic config name: ");
    cr_expect_null(topic_config_lookup("Retention.ms"));
}

Test(topic_config, int_values_bounds_and_messages)
{
    expect_good("min.insync.replicas", "1");
    expect_good("min.insync.replicas", "2147483647");
    expect_bad("min.insync.replicas", "two",
               "Invalid value two for configuration min.insync.replicas: "
               "Not a number of type INT");
    expect_bad("min.insync.replicas", "0",
               "Invalid value 0 for configuration min.insync.replicas: "
               "Value must be at least 1");
    expect_bad("min.insync.replicas", "2147483648",
               "Invalid value 2147483648 for configuration "
               "min.insync.replicas: Not a number of type INT");
    expect_bad("min.insync.replicas", " 2",
               "Invalid value  2 for configuration min.insync.replicas: "
               "Not a number of type INT");
    expect_bad("min.insync.replicas", "",
               "Invalid value  for configuration min.insync.replicas: "
               "Not a number of type INT");
    expect_good("segment.bytes", "14");
    expect_bad("segment.bytes", "13",
               "Invalid value 13 for configuration segment.bytes: Value "
               "must be at least 14");
    expect_good("max.message.bytes", "0");
    expect_bad("max.message.bytes", "-1",
               "Invalid value -1 for configuration max.message.bytes: "
               "Value must be at least 0");
    expect_bad("segment.index.bytes", "3",
               "Invalid value 3 for configuration segment.index.bytes: "
               "Value must be at least 4");
}

Test(topic_config, long_values_bounds_and_messages)
{
    expect_good("retention.ms", "-1");
    expect_good("retention.ms", "9223372036854775807");
    expect_bad("retention.ms", "-2",
               "Invalid value -2 for configuration retention.ms: Value must "
               "be at least -1");
    expect_bad("retention.ms", "9223372036854775808",
               "Invalid value 9223372036854775808 for configuration "
               "retention.ms: Not a number of type LONG");
    expect_bad("retention.ms", "1.5",
               "Invalid value 1.5 for configuration retention.ms: Not a "
               "number of type LONG");
    expect_good("retention.bytes", "-9223372036854775808");
    expect_bad("segment.ms", "0",
               "Invalid value 0 for configuration segment.ms: Value must be "
               "at least 1");
    expect_bad("local.retention.ms", "-3",
               "Invalid value -3 for configuration local.retention.ms: "
               "Value must be at least -2");
    expect_bad("max.compaction.lag.ms", "0",
               "Invalid value 0 for configuration max.compaction.lag.ms: "
               "Value must be at least 1");
}

Test(topic_config, boolean_values)
{
    expect_good("unclean.leader.election.enable", "true");
    expect_good("unclean.leader.election.enable", "FALSE");
    expect_good("preallocate", "True");
    expect_bad("unclean.leader.election.enable", "yes",
               "Invalid value yes for configuration "
               "unclean.leader.election.enable: Expected value to be either "
               "true or false");
    expect_bad("remote.storage.enable", "1",
               "Invalid value 1 for configuration remote.storage.enable: "
               "Expected value to be either true or false");
}

Test(topic_config, double_values_within_zero_and_one)
{
    expect_good("min.cleanable.dirty.ratio", "0");
    expect_good("min.cleanable.dirty.ratio", "1");
    expect_good("min.cleanable.dirty.ratio", "0.25");
    expect_bad("min.cleanable.dirty.ratio", "1.5",
               "Invalid value 1.5 for configuration "
               "min.cleanable.dirty.ratio: Value must be no more than 1");
    expect_bad("min.cleanable.dirty.ratio", "-0.1",
               "Invalid value -0.1 for configuration "
               "min.cleanable.dirty.ratio: Value must be at least 0");
    expect_bad("min.cleanable.dirty.ratio", "nan",
               "Invalid value nan for configuration "
               "min.cleanable.dirty.ratio: Not a number of type DOUBLE");
    expect_bad("min.cleanable.dirty.ratio", "half",
               "Invalid value half for configuration "
               "min.cleanable.dirty.ratio: Not a number of type DOUBLE");
}

Test(topic_config, enum_values_match_one_choice_exactly)
{
    expect_good("message.timestamp.type", "LogAppendTime");
    expect_good("compression.type", "zstd");
    expect_bad("message.timestamp.type", "logappendtime",
               "Invalid value logappendtime for configuration "
               "message.timestamp.type: String must be one of: CreateTime, "
               "LogAppendTime");
    expect_bad("compression.type", "brotli",
               "Invalid value brotli for configuration compression.type: "
               "String must be one of: uncompressed, zstd, lz4, snappy, "
               "gzip, producer");
    expect_bad("message.timestamp.type", "CreateTime,LogAppendTime",
               "Invalid value CreateTime,LogAppendTime for configuration "
               "message.timestamp.type: String must be one of: CreateTime, "
               "LogAppendTime");
}

Test(topic_config, list_values_name_their_first_bad_item)
{
    expect_good("cleanup.policy", "compact");
    expect_good("cleanup.policy", "compact,delete");
    expect_good("cleanup.policy", "delete , compact");
    expect_good("cleanup.policy", "");
    expect_bad("cleanup.policy", "foo",
               "Invalid value foo for configuration cleanup.policy: String "
               "must be one of: compact, delete");
    expect_bad("cleanup.policy", "delete,forever",
               "Invalid value forever for configuration cleanup.policy: "
               "String must be one of: compact, delete");
    expect_bad("cleanup.policy", "delete,",
               "Invalid value  for configuration cleanup.policy: String "
               "must be one of: compact, delete");
    /* Without choices, any list. */
    expect_good("leader.replication.throttled.replicas", "0:1,1:2");
    expect_good("follower.replication.throttled.replicas", "*");
}

Test(topic_config, value_longer_than_a_record_holds_is_refused)
{
    char v[META_CONFIG_VALUE_BYTES_MAX + 2];
    memset(v, '1', sizeof v - 1);
    v[sizeof v - 1] = '\0';
    expect_bad("retention.ms", v,
               "Invalid value for configuration retention.ms: longer than "
               "1023 bytes");
    v[META_CONFIG_VALUE_BYTES_MAX] = '\0';
    expect_good("leader.replication.throttled.replicas", v);
}

Test(topic_config, synonym_checks_name_the_synonym_with_its_own_bound)
{
    const struct topic_config_def *d = topic_config_by_synonym(
        "log.retention.ms");
    cr_assert_not_null(d);
    /* log.retention.ms has no lower bound in Kafka; retention.ms has -1. */
    cr_expect_eq(topic_config_check_def(d, d->synonym, true, "-5", msg),
                 KAFKA_ERROR_NONE);
    cr_expect_eq(topic_config_check_def(d, d->name, false, "-5", msg),
                 KAFKA_ERROR_INVALID_CONFIG);
    d = topic_config_by_synonym("log.cleaner.min.cleanable.ratio");
    cr_assert_not_null(d);
    cr_expect_eq(topic_config_check_def(d, d->synonym, true, "2", msg),
                 KAFKA_ERROR_INVALID_CONFIG);
    cr_expect_str_eq(msg, "Invalid value 2 for configuration "
                          "log.cleaner.min.cleanable.ratio: Value must be "
                          "no more than 1");
}

Test(topic_config, defaults_are_kafkas_typed)
{
    struct topic_config_values v;
    topic_config_values_default(&v);
    cr_expect_eq(v.cleanup_policy, TOPIC_CONFIG_CLEANUP_DELETE);
    cr_expect_eq(v.min_insync_replicas, 1);
    cr_expect_eq(v.retention_ms, 604800000);
    cr_expect_eq(v.retention_bytes, -1);
    cr_expect_eq(v.segment_bytes, 1073741824);
    cr_expect_eq(v.max_message_bytes, 1048588);
    cr_expect_eq(v.timestamp_type, TOPIC_CONFIG_TIMESTAMP_CREATE_TIME);
    cr_expect_eq(v.max_compaction_lag_ms, INT64_MAX);
    cr_expect_float_eq(v.min_cleanable_dirty_ratio, 0.5, 1e-12);
    cr_expect(!v.unclean_leader_election_enable);
}

Test(topic_config, set_stores_a_good_value_and_keeps_a_bad_one_out)
{
    struct topic_config_values v;
    topic_config_values_default(&v);
    const struct topic_config_def *d =
        topic_config_at(TOPIC_CONFIG_CLEANUP_POLICY);
    cr_expect_eq(topic_config_set(&v, d, false, "compact,delete", msg),
                 KAFKA_ERROR_NONE);
    cr_expect_eq(v.cleanup_policy,
                 TOPIC_CONFIG_CLEANUP_COMPACT | TOPIC_CONFIG_CLEANUP_DELETE);
    d = topic_config_at(TOPIC_CONFIG_MIN_INSYNC_REPLICAS);
    cr_expect_eq(topic_config_set(&v, d, true, "0", msg),
                 KAFKA_ERROR_INVALID_CONFIG);
    cr_expect_str_eq(msg, "Invalid value 0 for configuration "
                          "min.insync.replicas: Value must be at least 1");
    cr_expect_eq(v.min_insync_replicas, 1);
    d = topic_config_at(TOPIC_CONFIG_TIMESTAMP_TYPE);
    cr_expect_eq(topic_config_set(&v, d, true, "LogAppendTime", msg),
                 KAFKA_ERROR_NONE);
    cr_expect_eq(v.timestamp_type, TOPIC_CONFIG_TIMESTAMP_LOG_APPEND_TIME);
    d = topic_config_by_synonym("log.segment.bytes");
    cr_expect_eq(topic_config_set(&v, d, true, "x", msg),
                 KAFKA_ERROR_INVALID_CONFIG);
    cr_expect_str_eq(msg, "Invalid value x for configuration "
                          "log.segment.bytes: Not a number of type INT");
}

Test(topic_config, format_gives_the_text_of_each_field)
{
    struct topic_config_values v;
    topic_config_values_default(&v);
    char buf[64];
    for (int i = 0; i < TOPIC_CONFIG_COUNT; i++) {
        const struct topic_config_def *d = topic_config_at(i);
        if (topic_config_format(&v, d, buf, sizeof buf)) {
            cr_expect_str_eq(buf, d->default_value, "%s", d->name);
        } else {
            cr_expect(!d->field.present, "%s", d->name);
        }
    }
    v.cleanup_policy = TOPIC_CONFIG_CLEANUP_COMPACT |
                       TOPIC_CONFIG_CLEANUP_DELETE;
    cr_assert(topic_config_format(
        &v, topic_config_at(TOPIC_CONFIG_CLEANUP_POLICY), buf, sizeof buf));
    cr_expect_str_eq(buf, "compact,delete");
    v.timestamp_type = TOPIC_CONFIG_TIMESTAMP_LOG_APPEND_TIME;
    cr_assert(topic_config_format(
        &v, topic_config_at(TOPIC_CONFIG_TIMESTAMP_TYPE), buf, sizeof buf));
    cr_expect_str_eq(buf, "LogAppendTime");
}

/* --- Resolving ----------------------------------------------------------- */

struct bad_seen {
    int n;
    const struct topic_config_def *d;
    char value[64];
    char why[96];
};

static void bad_cb(void *arg, const struct topic_config_def *d,
                   const char *value, const char *why)
{
    struct bad_seen *s = arg;
    s->n++;
    s->d = d;
    snprintf(s->value, sizeof s->value, "%s", value);
    snprintf(s->why, sizeof s->why, "%s", why);
}

Test(topic_config, resolve_takes_topic_then_broker_then_default_then_base)
{
    struct meta_config_entry topic_cfg[] = {
        {"min.insync.replicas", "2"},
        {"retention.ms", "1000"},
    };
    struct meta_topic t = {.name = "t", .configs = topic_cfg,
                           .n_configs = 2};
    struct meta_config_entry b1[] = {{"log.retention.bytes", "777"},
                                     {"log.retention.ms", "5"}};
    struct meta_config_entry dflt[] = {{"log.retention.bytes", "888"},
                                       {"log.roll.ms", "99"}};
    struct meta_broker_configs bcs[] = {{META_BROKER_DEFAULT, 2, dflt},
                                        {1, 2, b1}};
    struct meta_image img = {.broker_configs = bcs, .n_broker_configs = 2};
    struct topic_config_values base, v;
    topic_config_values_default(&base);
    base.segment_bytes = 4096;
    struct bad_seen seen = {0};
    topic_config_resolve(&img, 1, &t, &base, &v, bad_cb, &seen);
    cr_expect_eq(seen.n, 0);
    cr_expect_eq(v.min_insync_replicas, 2);  /* topic */
    cr_expect_eq(v.retention_ms, 1000);      /* topic beats broker */
    cr_expect_eq(v.retention_bytes, 777);    /* broker beats default */
    cr_expect_eq(v.segment_ms, 99);          /* cluster-wide default */
    cr_expect_eq(v.segment_bytes, 4096);     /* base */
    topic_config_resolve(&img, 2, &t, &base, &v, bad_cb, &seen);
    cr_expect_eq(v.retention_bytes, 888);
    topic_config_resolve(NULL, 1, &t, &base, &v, bad_cb, &seen);
    cr_expect_eq(v.retention_bytes, -1);
    cr_expect_eq(v.segment_ms, base.segment_ms);
}

Test(topic_config, resolve_reports_a_bad_value_and_keeps_the_base)
{
    struct meta_config_entry topic_cfg[] = {
        {"cleanup.policy", "compact,forever"},
        {"min.insync.replicas", "two"},
    };
    struct meta_topic t = {.name = "t", .configs = topic_cfg,
                           .n_configs = 2};
    struct topic_config_values base, v;
    topic_config_values_default(&base);
    base.min_insync_replicas = 3;
    struct bad_seen seen = {0};
    topic_config_resolve(NULL, 1, &t, &base, &v, bad_cb, &seen);
    cr_expect_eq(seen.n, 2);
    cr_expect_eq(seen.d, topic_config_at(TOPIC_CONFIG_MIN_INSYNC_REPLICAS));
    cr_expect_str_eq(seen.value, "two");
    cr_expect_str_eq(seen.why, "Not a number of type INT");
    cr_expect_eq(v.min_insync_replicas, 3);
    cr_expect_eq(v.cleanup_policy, TOPIC_CONFIG_CLEANUP_DELETE);
    enum topic_config_origin origin = TOPIC_CONFIG_FROM_BROKER;
    cr_expect_str_eq(topic_config_value_of(NULL, 1, &t,
                                           topic_config_at(
                                               TOPIC_CONFIG_CLEANUP_POLICY),
                                           &origin),
                     "compact,forever");
    cr_expect_eq(origin, TOPIC_CONFIG_FROM_TOPIC);
}
