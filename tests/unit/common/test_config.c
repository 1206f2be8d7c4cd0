/* Unit tests for common/config.c: Java properties syntax as Kafka reads it,
 * typed values against a schema, unknown keys reported through a capturing
 * tracer, overrides, bounds, and garbage input from a fixed-seed PRNG. */
#include "common/config.h"
#include "common/limits.h"
#include "common/rc.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ERR_BYTES 256

/* --- A tracer that records lines ----------------------------------------- */

#define CAPTURE_LINES_MAX 16

struct capture {
    size_t n_calls;
    enum trace_level level[CAPTURE_LINES_MAX];
    char msg[CAPTURE_LINES_MAX][TRACE_LINE_BYTES_MAX];
};

static struct capture cap;

static void capture_emit_cb(struct tracer *t, enum trace_level level,
                            const char *file, int line, const char *msg)
{
    struct capture *c = t->data;
    size_t i = c->n_calls++;

    (void)file;
    (void)line;
    if (i < CAPTURE_LINES_MAX) {
        c->level[i] = level;
        snprintf(c->msg[i], sizeof c->msg[i], "%s", msg);
    }
}

static struct tracer tracer = {TRACE_LEVEL_DEBUG, "test", capture_emit_cb,
                               &cap, NULL};

/* --- Schemas ------------------------------------------------------------- */

/* A broker-like schema with one key of every type. */
static const struct config_def broker_defs[] = {
    {"node.id", CONFIG_INT, NULL, 0, 1000, "Broker id."},
    {"log.segment.bytes", CONFIG_INT, "1073741824", 14, INT32_MAX,
     "Segment size."},
    {"num.partitions", CONFIG_INT, "1", 0, 0, "Unbounded int."},
    {"log.retention.ms", CONFIG_LONG, "604800000", -1, INT64_MAX,
     "Retention."},
    {"offset.any", CONFIG_LONG, "0", 0, 0, "Unbounded long."},
    {"unclean.leader.election.enable", CONFIG_BOOL, "false", 0, 0,
     "Unclean election."},
    {"log.dirs", CONFIG_LIST, "/tmp/cairn-logs", 0, 0, "Log dirs."},
    {"listeners", CONFIG_STRING, "PLAINTEXT://:9092", 0, 0, "Listeners."},
    {"log.cleaner.min.cleanable.ratio", CONFIG_DOUBLE, "0.5", 0, 0,
     "Ratio."},
};

/* String keys only, for syntax tests. */
static const struct config_def syntax_defs[] = {
    {"a", CONFIG_STRING, "", 0, 0, ""},
    {"b", CONFIG_STRING, "", 0, 0, ""},
    {"c", CONFIG_STRING, "", 0, 0, ""},
    {"k", CONFIG_STRING, "", 0, 0, ""},
    {"key=with:seps", CONFIG_STRING, "", 0, 0, ""},
    {"key with space", CONFIG_STRING, "", 0, 0, ""},
};

static char err[ERR_BYTES];

static int load_with(struct config **c, const char *text,
                     const struct config_def *defs, size_t n_defs)
{
    memset(&cap, 0, sizeof cap);
    memset(err, 0, sizeof err);
    return config_load_string(c, text, strlen(text), defs, n_defs, &tracer,
                              err, sizeof err);
}

static struct config *load_syntax(const char *text)
{
    struct config *c = NULL;
    int rv = load_with(&c, text, syntax_defs, ARRAY_LEN(syntax_defs));

    cr_assert_eq(rv, RC_OK, "rv=%d err=%s", rv, err);
    cr_assert_neq(c, NULL);
    return c;
}

static struct config *load_broker(const char *text)
{
    struct config *c = NULL;
    int rv = load_with(&c, text, broker_defs, ARRAY_LEN(broker_defs));

    cr_assert_eq(rv, RC_OK, "rv=%d err=%s", rv, err);
    return c;
}

/* Loads text that must fail; returns err. */
static const char *load_broker_fails(const char *text)
{
    struct config *c = (struct config *)&c; /* must be reset to NULL */
    int rv = load_with(&c, text, broker_defs, ARRAY_LEN(broker_defs));

    cr_assert_eq(rv, RC_CONFIG, "text '%s' err=%s", text, err);
    cr_assert_eq(c, NULL);
    cr_assert_neq(err[0], '\0');
    return err;
}

/* --- Syntax -------------------------------------------------------------- */

Test(config, equals_colon_and_blank_separate_key_and_value)
{
    struct config *c = load_syntax("a=1\nb:2\nc 3\n");

    cr_assert_str_eq(config_string(c, "a"), "1");
    cr_assert_str_eq(config_string(c, "b"), "2");
    cr_assert_str_eq(config_string(c, "c"), "3");
    config_free(c);
}

Test(config, blanks_around_key_and_separator_are_skipped)
{
    struct config *c = load_syntax("  a = 1\n\tb\t:\t2\n\fc   3\nk\t=v\n");

    cr_assert_str_eq(config_string(c, "a"), "1");
    cr_assert_str_eq(config_string(c, "b"), "2");
    cr_assert_str_eq(config_string(c, "c"), "3");
    cr_assert_str_eq(config_string(c, "k"), "v");
    cr_assert_eq(config_unknown_count(c), 0);
    config_free(c);
}

Test(config, only_one_separator_after_the_key_is_skipped)
{
    struct config *c = load_syntax("a = = 1\nb==2\nc : x:y\nk=v=w\n");

    cr_assert_str_eq(config_string(c, "a"), "= 1");
    cr_assert_str_eq(config_string(c, "b"), "=2");
    cr_assert_str_eq(config_string(c, "c"), "x:y");
    cr_assert_str_eq(config_string(c, "k"), "v=w");
    config_free(c);
}

Test(config, hash_and_bang_start_comment_lines)
{
    struct config *c =
        load_syntax("# a=1\n! b=2\n   # c=3\n\t!k=4\nk=v # not a comment\n");

    cr_assert_not(config_is_set(c, "a"));
    cr_assert_not(config_is_set(c, "b"));
    cr_assert_not(config_is_set(c, "c"));
    cr_assert_str_eq(config_string(c, "k"), "v # not a comment");
    cr_assert_eq(config_unknown_count(c), 0);
    config_free(c);
}

Test(config, comment_line_ending_in_backslash_does_not_continue)
{
    struct config *c = load_syntax("# comment \\\na=1\n");

    cr_assert_str_eq(config_string(c, "a"), "1");
    config_free(c);
}

Test(config, blank_lines_are_ignored)
{
    struct config *c = load_syntax("\n\n   \n\t\f\n\r\na=1\n\n\n");

    cr_assert_str_eq(config_string(c, "a"), "1");
    cr_assert_eq(config_unknown_count(c), 0);
    config_free(c);
}

Test(config, crlf_and_cr_end_lines)
{
    struct config *c = load_syntax("a=1\r\nb=2\rc=3\r\n\rk=4");

    cr_assert_str_eq(config_string(c, "a"), "1");
    cr_assert_str_eq(config_string(c, "b"), "2");
    cr_assert_str_eq(config_string(c, "c"), "3");
    cr_assert_str_eq(config_string(c, "k"), "4");
    config_free(c);
}

Test(config, backslash_continues_line_and_skips_leading_blanks)
{
    struct config *c = load_syntax("a=one \\\n     two\\\n\t three\n"
                                   "b=x\\\n# not a comment\n"
                                   "c\\\n  =joined key\r\n");

    cr_assert_str_eq(config_string(c, "a"), "one twothree");
    cr_assert_str_eq(config_string(c, "b"), "x# not a comment");
    cr_assert_str_eq(config_string(c, "c"), "joined key");
    config_free(c);
}

Test(config, even_backslashes_do_not_continue)
{
    struct config *c = load_syntax("a=x\\\\\nb=2\n");

    cr_assert_str_eq(config_string(c, "a"), "x\\");
    cr_assert_str_eq(config_string(c, "b"), "2");
    config_free(c);
}

Test(config, continuation_then_blank_line_ends_the_value)
{
    struct config *c = load_syntax("a=x\\\n\nb=2\n");

    cr_assert_str_eq(config_string(c, "a"), "x");
    cr_assert_str_eq(config_string(c, "b"), "2");
    config_free(c);
}

Test(config, trailing_backslash_at_end_of_text_is_dropped)
{
    struct config *c = load_syntax("a=x\\");

    cr_assert_str_eq(config_string(c, "a"), "x");
    config_free(c);
}

Test(config, escapes_are_decoded)
{
    struct config *c =
        load_syntax("a=tab\\there\\nnl\\\\bs\\=eq\\:colon\\qq\\ sp\\#\\!\n"
                    "b=\\r\\fend\n");

    cr_assert_str_eq(config_string(c, "a"),
                     "tab\there\nnl\\bs=eq:colonqq sp#!");
    cr_assert_str_eq(config_string(c, "b"), "end"); /* \r\f trimmed */
    config_free(c);
}

Test(config, escaped_separators_and_blanks_stay_in_the_key)
{
    struct config *c =
        load_syntax("key\\=with\\:seps=v1\nkey\\ with\\ space = v2\n");

    cr_assert_str_eq(config_string(c, "key=with:seps"), "v1");
    cr_assert_str_eq(config_string(c, "key with space"), "v2");
    cr_assert_eq(config_unknown_count(c), 0);
    config_free(c);
}

Test(config, unicode_escapes_become_utf8)
{
    struct config *c =
        load_syntax("a=\\u00e9\\u20AC\\uD83D\\uDE00\\u0041\n\\u0062=bee\n");

    cr_assert_str_eq(config_string(c, "a"),
                     "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" "A");
    cr_assert_str_eq(config_string(c, "b"), "bee");
    config_free(c);
}

Test(config, malformed_unicode_escape_names_the_line)
{
    static const char *const bad[] = {
        "\na=\\u12\n", "\na=\\u12g4\n", "\na=\\uD800\n", "\na=\\uDC00x\n",
        "\na=\\uD83D\\\\uDE00\n", "\na=\\u0000\n",
    };
    struct config *c;
    size_t i;

    for (i = 0; i < ARRAY_LEN(bad); i++) {
        cr_assert_eq(load_with(&c, bad[i], syntax_defs,
                               ARRAY_LEN(syntax_defs)),
                     RC_CONFIG, "%s", bad[i]);
        cr_assert(strstr(err, "line 2") != NULL, "%s", err);
        cr_assert(strstr(err, "\\u") != NULL, "%s", err);
    }
}

Test(config, later_duplicate_wins)
{
    struct config *c = load_syntax("a=1\nb=x\na=2\n");

    cr_assert_str_eq(config_string(c, "a"), "2");
    cr_assert(config_is_set(c, "a"));
    config_free(c);
}

Test(config, key_alone_has_empty_value)
{
    struct config *c = load_syntax("a\nb   \nc=\n");

    cr_assert_str_eq(config_string(c, "a"), "");
    cr_assert_str_eq(config_string(c, "b"), "");
    cr_assert_str_eq(config_string(c, "c"), "");
    cr_assert(config_is_set(c, "a"));
    cr_assert(config_is_set(c, "c"));
    config_free(c);
}

Test(config, values_are_trimmed_as_kafka_does)
{
    struct config *c = load_syntax("a=   spaced out   \t\n");

    cr_assert_str_eq(config_string(c, "a"), "spaced out");
    config_free(c);
}

Test(config, nul_byte_is_an_error_naming_the_line)
{
    static const char text[] = "a=1\nb=x\0y\n";
    struct config *c;
    int rv;

    rv = config_load_string(&c, text, sizeof text - 1, syntax_defs,
                            ARRAY_LEN(syntax_defs), NULL, err, sizeof err);
    cr_assert_eq(rv, RC_CONFIG);
    cr_assert(strstr(err, "line 2") != NULL, "%s", err);
}

Test(config, nul_byte_in_comment_is_ignored)
{
    static const char text[] = "# x\0y\na=1\n";
    struct config *c;

    cr_assert_eq(config_load_string(&c, text, sizeof text - 1, syntax_defs,
                                    ARRAY_LEN(syntax_defs), NULL, err,
                                    sizeof err),
                 RC_OK, "%s", err);
    cr_assert_str_eq(config_string(c, "a"), "1");
    config_free(c);
}

Test(config, empty_text_gives_defaults)
{
    struct config *c = NULL;

    cr_assert_eq(config_load_string(&c, NULL, 0, syntax_defs,
                                    ARRAY_LEN(syntax_defs), NULL, NULL, 0),
                 RC_OK);
    cr_assert_str_eq(config_string(c, "a"), "");
    config_free(c);
}

/* --- Types and defaults -------------------------------------------------- */

Test(config, defaults_apply_when_keys_are_absent)
{
    struct config *c = load_broker("node.id=1\n");

    cr_assert_eq(config_int(c, "node.id"), 1);
    cr_assert(config_is_set(c, "node.id"));
    cr_assert_eq(config_int(c, "log.segment.bytes"), 1073741824);
    cr_assert_not(config_is_set(c, "log.segment.bytes"));
    cr_assert_eq(config_long(c, "log.retention.ms"), 604800000);
    cr_assert_eq(config_bool(c, "unclean.leader.election.enable"), false);
    cr_assert_str_eq(config_list(c, "log.dirs"), "/tmp/cairn-logs");
    cr_assert_str_eq(config_string(c, "listeners"), "PLAINTEXT://:9092");
    cr_assert_float_eq(
        config_double(c, "log.cleaner.min.cleanable.ratio"), 0.5, 1e-12);
    config_free(c);
}

Test(config, every_type_parses_from_the_file)
{
    struct config *c = load_broker(
        "node.id = 7\nlog.segment.bytes=14\nnum.partitions=-3\n"
        "log.retention.ms=-1\noffset.any=+9223372036854775807\n"
        "unclean.leader.election.enable=TRUE\n"
        "log.dirs=/data/a, /data/b\nlisteners=PLAINTEXT://0.0.0.0:9092\n"
        "log.cleaner.min.cleanable.ratio=1e-1\n");

    cr_assert_eq(config_int(c, "node.id"), 7);
    cr_assert_eq(config_int(c, "log.segment.bytes"), 14);
    cr_assert_eq(config_int(c, "num.partitions"), -3);
    cr_assert_eq(config_long(c, "log.retention.ms"), -1);
    cr_assert_eq(config_long(c, "offset.any"), INT64_MAX);
    cr_assert(config_bool(c, "unclean.leader.election.enable"));
    cr_assert_str_eq(config_list(c, "log.dirs"), "/data/a, /data/b");
    cr_assert_str_eq(config_string(c, "listeners"),
                     "PLAINTEXT://0.0.0.0:9092");
    cr_assert_float_eq(
        config_double(c, "log.cleaner.min.cleanable.ratio"), 0.1, 1e-12);
    config_free(c);
}

Test(config, required_key_missing_names_it)
{
    const char *e = load_broker_fails("log.segment.bytes=100\n");

    cr_assert(strstr(e, "node.id") != NULL, "%s", e);
    cr_assert(strstr(e, "required") != NULL, "%s", e);
}

Test(config, bad_integer_names_key_value_and_range)
{
    cr_assert_str_eq(load_broker_fails("node.id=1\nlog.segment.bytes=abc\n"),
                     "log.segment.bytes: expected an integer in [14, "
                     "2147483647], got 'abc'");
}

Test(config, integer_garbage_is_refused)
{
    static const char *const bad[] = {
        "12x", "1.5", "0x10", "", "   ", "- 5", "5 5", "1e3", "++1",
    };
    char text[128];
    size_t i;

    for (i = 0; i < ARRAY_LEN(bad); i++) {
        snprintf(text, sizeof text, "node.id=1\nnum.partitions=%s\n", bad[i]);
        cr_assert(strstr(load_broker_fails(text), "num.partitions: ") ==
                      err,
                  "%s", err);
    }
}

Test(config, integer_out_of_range_is_refused)
{
    cr_assert_str_eq(load_broker_fails("node.id=1\nlog.segment.bytes=13\n"),
                     "log.segment.bytes: expected an integer in [14, "
                     "2147483647], got '13'");
    cr_assert(strstr(load_broker_fails("node.id=1001\n"), "[0, 1000]") !=
              NULL);
    cr_assert(strstr(load_broker_fails("node.id=-1\n"), "node.id") != NULL);
}

Test(config, integer_overflow_is_refused)
{
    cr_assert_str_eq(load_broker_fails("node.id=1\n"
                                       "num.partitions=2147483648\n"),
                     "num.partitions: expected an integer in "
                     "[-2147483648, 2147483647], got '2147483648'");
    cr_assert(strstr(load_broker_fails("node.id=1\n"
                                       "offset.any=9223372036854775808\n"),
                     "offset.any") != NULL);
    cr_assert(strstr(load_broker_fails("node.id=1\n"
                                       "offset.any=-9223372036854775809\n"),
                     "offset.any") != NULL);
    cr_assert(strstr(load_broker_fails(
                         "node.id=1\n"
                         "offset.any=99999999999999999999999999\n"),
                     "got '99999999999999999999999999'") != NULL);
}

Test(config, long_limits_are_accepted)
{
    struct config *c = load_broker("node.id=0\n"
                                   "offset.any=-9223372036854775808\n"
                                   "num.partitions=-2147483648\n");

    cr_assert_eq(config_long(c, "offset.any"), INT64_MIN);
    cr_assert_eq(config_int(c, "num.partitions"), INT32_MIN);
    config_free(c);
}

Test(config, booleans_ignore_case)
{
    struct config *c =
        load_broker("node.id=1\nunclean.leader.election.enable=tRuE\n");

    cr_assert(config_bool(c, "unclean.leader.election.enable"));
    config_free(c);
    c = load_broker("node.id=1\nunclean.leader.election.enable= False \n");
    cr_assert_not(config_bool(c, "unclean.leader.election.enable"));
    config_free(c);
}

Test(config, bad_boolean_names_key_and_value)
{
    cr_assert_str_eq(
        load_broker_fails("node.id=1\nunclean.leader.election.enable=yes\n"),
        "unclean.leader.election.enable: expected true or false, got 'yes'");
    load_broker_fails("node.id=1\nunclean.leader.election.enable=1\n");
    load_broker_fails("node.id=1\nunclean.leader.election.enable=\n");
    load_broker_fails("node.id=1\nunclean.leader.election.enable=truex\n");
}

Test(config, bad_double_names_key_and_value)
{
    static const char *const bad[] = {"abc", "nan", "inf", "1e999", "0.5x",
                                      ""};
    char text[128];
    size_t i;

    for (i = 0; i < ARRAY_LEN(bad); i++) {
        snprintf(text, sizeof text,
                 "node.id=1\nlog.cleaner.min.cleanable.ratio=%s\n", bad[i]);
        load_broker_fails(text);
        cr_assert(strstr(err, "log.cleaner.min.cleanable.ratio: expected a "
                              "number, got '") == err,
                  "%s", err);
    }
}

Test(config, bad_value_in_message_is_made_printable)
{
    load_broker_fails("node.id=1\nnum.partitions=1\\t2\\n\n");
    cr_assert_str_eq(err, "num.partitions: expected an integer in "
                          "[-2147483648, 2147483647], got '1?2'");
}

Test(config, list_items_are_split_and_trimmed)
{
    struct config *c = load_broker("node.id=1\nlog.dirs= /a , /b,,/c d ,\n");
    const char *pos = config_list(c, "log.dirs");
    const char *item;
    size_t len;

    cr_assert(config_list_next(&pos, &item, &len));
    cr_assert_eq(len, 2);
    cr_assert_eq(strncmp(item, "/a", len), 0);
    cr_assert(config_list_next(&pos, &item, &len));
    cr_assert_eq(strncmp(item, "/b", len), 0);
    cr_assert(config_list_next(&pos, &item, &len));
    cr_assert_eq(len, 4);
    cr_assert_eq(strncmp(item, "/c d", len), 0);
    cr_assert_not(config_list_next(&pos, &item, &len));
    cr_assert_not(config_list_next(&pos, &item, &len));
    config_free(c);
}

Test(config, empty_list_has_no_items)
{
    struct config *c = load_broker("node.id=1\nlog.dirs= , \n");
    const char *pos = config_list(c, "log.dirs");
    const char *item;
    size_t len;

    cr_assert_not(config_list_next(&pos, &item, &len));
    config_free(c);
}

/* --- One value, strictly ------------------------------------------------ */

Test(config, value_long_takes_whole_decimals_only)
{
    static const struct {
        const char *s;
        int64_t want;
    } good[] = {{"0", 0}, {"2", 2}, {"-1", -1}, {"+7", 7}, {"007", 7},
                {"9223372036854775807", INT64_MAX},
                {"-9223372036854775808", INT64_MIN}};
    static const char *const bad[] = {
        "", " ", "two", "2x", "2 ", " 2", "\t2", "2\n", "+", "-", "+-2",
        "0x10", "1e3", "1.0", "1_000", "99999999999999999999",
        "9223372036854775808", "-9223372036854775809"};
    for (size_t i = 0; i < ARRAY_LEN(good); i++) {
        int64_t v = 0;
        cr_assert(config_value_long(good[i].s, &v), "'%s'", good[i].s);
        cr_assert_eq(v, good[i].want, "'%s'", good[i].s);
    }
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        int64_t v = 42;
        cr_assert_not(config_value_long(bad[i], &v), "'%s'", bad[i]);
        cr_assert_eq(v, 42, "'%s' changed the output", bad[i]);
    }
}

Test(config, value_int_refuses_what_int32_cannot_hold)
{
    int32_t v = 0;

    cr_assert(config_value_int("2147483647", &v));
    cr_assert_eq(v, INT32_MAX);
    cr_assert(config_value_int("-2147483648", &v));
    cr_assert_eq(v, INT32_MIN);
    v = 5;
    cr_assert_not(config_value_int("2147483648", &v));
    cr_assert_not(config_value_int("-2147483649", &v));
    cr_assert_not(config_value_int("99999999999999999999", &v));
    cr_assert_not(config_value_int("two", &v));
    cr_assert_eq(v, 5);
}

Test(config, value_bool_is_true_or_false_in_any_case)
{
    bool v = false;

    cr_assert(config_value_bool("TRUE", &v));
    cr_assert(v);
    cr_assert(config_value_bool("False", &v));
    cr_assert_not(v);
    static const char *const bad[] = {"", "yes", "no", "1", "0", "t",
                                      " true", "true ", "truex", "on"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        v = true;
        cr_assert_not(config_value_bool(bad[i], &v), "'%s'", bad[i]);
        cr_assert(v, "'%s' changed the output", bad[i]);
    }
}

Test(config, value_double_is_finite_and_whole)
{
    double v = 0.0;

    cr_assert(config_value_double("0.5", &v));
    cr_assert_float_eq(v, 0.5, 1e-12);
    cr_assert(config_value_double(".25", &v));
    cr_assert(config_value_double("-1e-3", &v));
    cr_assert_float_eq(v, -0.001, 1e-12);
    static const char *const bad[] = {"", " 0.5", "0.5 ", "half", "0.5x",
                                      "nan", "NaN", "inf", "-inf",
                                      "infinity", "1e999"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        cr_assert_not(config_value_double(bad[i], &v), "'%s'", bad[i]);
    }
}

Test(config, value_one_of_and_list_of_match_kafkas_choices)
{
    static const char choices[] = "compact, delete";

    cr_assert(config_value_one_of("delete", 6, choices));
    cr_assert(config_value_one_of("compact", 7, choices));
    cr_assert_not(config_value_one_of("Delete", 6, choices));
    cr_assert_not(config_value_one_of("delet", 5, choices));
    cr_assert_not(config_value_one_of("", 0, choices));
    cr_assert(config_value_list_of("", choices));
    cr_assert(config_value_list_of("delete", choices));
    cr_assert(config_value_list_of("compact,delete", choices));
    cr_assert(config_value_list_of("compact, delete", choices));
    cr_assert(config_value_list_of("delete , compact", choices));
    static const char *const bad[] = {"bogus", "delete,bogus", "delete,",
                                      ",delete", "delete,,compact", " ",
                                      "delete;compact", "DELETE"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        cr_assert_not(config_value_list_of(bad[i], choices), "'%s'", bad[i]);
    }
}

/* --- Unknown keys -------------------------------------------------------- */

Test(config, unknown_key_is_reported_not_fatal)
{
    struct config *c = load_broker("node.id=1\nlog.segmnt.bytes=5\n"
                                   "foo=bar\nfoo=baz\n");

    cr_assert_eq(config_unknown_count(c), 2);
    cr_assert_str_eq(config_unknown_key(c, 0), "log.segmnt.bytes");
    cr_assert_str_eq(config_unknown_key(c, 1), "foo");
    cr_assert_eq(cap.n_calls, 2);
    cr_assert_eq(cap.level[0], TRACE_LEVEL_WARN);
    cr_assert(strstr(cap.msg[0], "key=log.segmnt.bytes") != NULL, "%s",
              cap.msg[0]);
    cr_assert(strstr(cap.msg[0], "isn't a known config") != NULL);
    cr_assert(strstr(cap.msg[1], "key=foo") != NULL);
    cr_assert_eq(config_int(c, "log.segment.bytes"), 1073741824);
    config_free(c);
}

Test(config, unknown_keys_without_tracer_are_still_listed)
{
    struct config *c = NULL;
    static const char text[] = "node.id=1\nx.y=1\n";

    cr_assert_eq(config_load_string(&c, text, sizeof text - 1, broker_defs,
                                    ARRAY_LEN(broker_defs), NULL, err,
                                    sizeof err),
                 RC_OK);
    cr_assert_eq(config_unknown_count(c), 1);
    cr_assert_str_eq(config_unknown_key(c, 0), "x.y");
    config_free(c);
}

Test(config, unknown_key_with_control_bytes_is_logged_printable)
{
    struct config *c = load_broker("node.id=1\nbad\\nkey=1\n");

    cr_assert_str_eq(config_unknown_key(c, 0), "bad\nkey");
    cr_assert_eq(cap.n_calls, 1);
    cr_assert(strstr(cap.msg[0], "key=bad?key") != NULL, "%s", cap.msg[0]);
    config_free(c);
}

/* --- Overrides ----------------------------------------------------------- */

Test(config, set_overrides_a_file_value)
{
    struct config *c = load_broker("node.id=1\n");

    cr_assert_eq(config_set(c, "log.segment.bytes", " 1048576 ", err,
                            sizeof err),
                 RC_OK);
    cr_assert_eq(config_int(c, "log.segment.bytes"), 1048576);
    cr_assert(config_is_set(c, "log.segment.bytes"));
    cr_assert_eq(config_set(c, "node.id", "2", err, sizeof err), RC_OK);
    cr_assert_eq(config_int(c, "node.id"), 2);
    cr_assert_eq(config_set(c, "listeners", "PLAINTEXT://:19092", err,
                            sizeof err),
                 RC_OK);
    cr_assert_str_eq(config_string(c, "listeners"), "PLAINTEXT://:19092");
    config_free(c);
}

Test(config, set_with_bad_value_fails_and_changes_nothing)
{
    struct config *c = load_broker("node.id=1\n");

    cr_assert_eq(config_set(c, "log.segment.bytes", "abc", err, sizeof err),
                 RC_CONFIG);
    cr_assert_str_eq(err, "log.segment.bytes: expected an integer in [14, "
                          "2147483647], got 'abc'");
    cr_assert_eq(config_int(c, "log.segment.bytes"), 1073741824);
    cr_assert_not(config_is_set(c, "log.segment.bytes"));
    cr_assert_eq(config_set(c, "unclean.leader.election.enable", "maybe",
                            err, sizeof err),
                 RC_CONFIG);
    cr_assert_not(config_bool(c, "unclean.leader.election.enable"));
    config_free(c);
}

Test(config, set_unknown_key_is_listed_and_warned_once)
{
    struct config *c = load_broker("node.id=1\n");

    cr_assert_eq(config_set(c, "made.up", "1", err, sizeof err), RC_OK);
    cr_assert_eq(config_set(c, "made.up", "2", err, sizeof err), RC_OK);
    cr_assert_eq(config_unknown_count(c), 1);
    cr_assert_str_eq(config_unknown_key(c, 0), "made.up");
    cr_assert_eq(cap.n_calls, 1);
    cr_assert(strstr(cap.msg[0], "key=made.up") != NULL);
    config_free(c);
}

Test(config, short_err_buffer_is_cut_and_nul_ended)
{
    struct config *c = load_broker("node.id=1\n");
    char small[8];

    memset(small, 'z', sizeof small);
    cr_assert_eq(config_set(c, "node.id", "x", small, sizeof small),
                 RC_CONFIG);
    cr_assert_str_eq(small, "node.id");
    cr_assert_eq(config_set(c, "node.id", "x", NULL, 0), RC_CONFIG);
    config_free(c);
}

/* --- Files and bounds ---------------------------------------------------- */

static void write_temp(char *path, const char *data, size_t len)
{
    int fd;

    strcpy(path, "/tmp/cairn-test-config-XXXXXX");
    fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, data, len), (ssize_t)len);
    close(fd);
}

Test(config, file_is_loaded)
{
    static const char text[] = "# broker\nnode.id=3\nlog.dirs=/x\n";
    char path[64];
    struct config *c = NULL;
    int rv;

    write_temp(path, text, sizeof text - 1);
    rv = config_load_file(&c, path, broker_defs, ARRAY_LEN(broker_defs),
                          &tracer, err, sizeof err);
    unlink(path);
    cr_assert_eq(rv, RC_OK, "%s", err);
    cr_assert_eq(config_int(c, "node.id"), 3);
    cr_assert_str_eq(config_list(c, "log.dirs"), "/x");
    config_free(c);
}

Test(config, missing_file_error_names_the_path)
{
    struct config *c = (struct config *)&c;

    cr_assert_eq(config_load_file(&c, "/nonexistent/cairn/broker.properties",
                                  broker_defs, ARRAY_LEN(broker_defs),
                                  &tracer, err, sizeof err),
                 RC_CONFIG);
    cr_assert_eq(c, NULL);
    cr_assert(strstr(err, "/nonexistent/cairn/broker.properties") != NULL,
              "%s", err);
    cr_assert(strstr(err, "No such file") != NULL, "%s", err);
}

Test(config, directory_is_not_a_config_file)
{
    struct config *c;

    cr_assert_eq(config_load_file(&c, "/tmp", broker_defs,
                                  ARRAY_LEN(broker_defs), &tracer, err,
                                  sizeof err),
                 RC_CONFIG);
    cr_assert(strstr(err, "/tmp") != NULL, "%s", err);
}

Test(config, file_errors_in_lines_name_the_path)
{
    static const char text[] = "node.id=1\n\na=\\uZZZZ\n";
    char path[64];
    struct config *c;
    int rv;

    write_temp(path, text, sizeof text - 1);
    rv = config_load_file(&c, path, broker_defs, ARRAY_LEN(broker_defs),
                          &tracer, err, sizeof err);
    unlink(path);
    cr_assert_eq(rv, RC_CONFIG);
    cr_assert(strstr(err, path) == err, "%s", err);
    cr_assert(strstr(err, "line 3") != NULL, "%s", err);
}

Test(config, oversized_file_is_refused_naming_the_path)
{
    size_t len = CONFIG_FILE_BYTES_MAX + 1;
    char *data = malloc(len);
    char path[64];
    struct config *c;
    int rv;

    cr_assert_neq(data, NULL);
    memset(data, '#', len);
    write_temp(path, data, len);
    rv = config_load_file(&c, path, broker_defs, ARRAY_LEN(broker_defs),
                          &tracer, err, sizeof err);
    unlink(path);
    cr_assert_eq(rv, RC_CONFIG);
    cr_assert(strstr(err, path) != NULL, "%s", err);
    cr_assert(strstr(err, "larger") != NULL, "%s", err);
    rv = config_load_string(&c, data, len, broker_defs,
                            ARRAY_LEN(broker_defs), &tracer, err, sizeof err);
    cr_assert_eq(rv, RC_CONFIG);
    free(data);
}

Test(config, file_at_size_limit_is_accepted)
{
    size_t len = CONFIG_FILE_BYTES_MAX;
    char *data = malloc(len);
    struct config *c;

    cr_assert_neq(data, NULL);
    memset(data, '#', len);
    memcpy(data, "a=1\n", 4);
    cr_assert_eq(config_load_string(&c, data, len, syntax_defs,
                                    ARRAY_LEN(syntax_defs), &tracer, err,
                                    sizeof err),
                 RC_OK, "%s", err);
    cr_assert_str_eq(config_string(c, "a"), "1");
    config_free(c);
    free(data);
}

/* "\n\na=xxx...": a logical line of line_bytes bytes on line 3, split
 * over two natural lines by a continuation. */
static char *long_line(size_t line_bytes, size_t *len)
{
    char *text = malloc(line_bytes + 16);
    size_t n = 0;

    cr_assert_neq(text, NULL);
    memcpy(text, "\n\na=", 4);
    n = 4;
    memset(text + n, 'x', line_bytes - 2);
    n += line_bytes - 2;
    memmove(text + 100 + 2, text + 100, n - 100);
    memcpy(text + 100, "\\\n", 2); /* continuation adds no bytes */
    n += 2;
    text[n++] = '\n';
    *len = n;
    return text;
}

Test(config, oversized_line_is_refused_naming_the_line)
{
    size_t len;
    char *text = long_line(CONFIG_LINE_BYTES_MAX + 1, &len);
    struct config *c;

    cr_assert_eq(config_load_string(&c, text, len, syntax_defs,
                                    ARRAY_LEN(syntax_defs), &tracer, err,
                                    sizeof err),
                 RC_CONFIG);
    cr_assert(strstr(err, "line 3") != NULL, "%s", err);
    cr_assert(strstr(err, "longer") != NULL, "%s", err);
    free(text);
}

Test(config, line_at_limit_is_accepted)
{
    size_t len;
    char *text = long_line(CONFIG_LINE_BYTES_MAX, &len);
    struct config *c;

    cr_assert_eq(config_load_string(&c, text, len, syntax_defs,
                                    ARRAY_LEN(syntax_defs), &tracer, err,
                                    sizeof err),
                 RC_OK, "%s", err);
    cr_assert_eq(strlen(config_string(c, "a")), CONFIG_LINE_BYTES_MAX - 2);
    config_free(c);
    free(text);
}

/* node.id plus n_unknown distinct unknown keys. */
static char *many_keys(size_t n_unknown, size_t *len)
{
    size_t cap_bytes = 16 + n_unknown * 16;
    char *text = malloc(cap_bytes);
    size_t n, i;

    cr_assert_neq(text, NULL);
    n = (size_t)snprintf(text, cap_bytes, "node.id=1\n");
    for (i = 0; i < n_unknown; i++) {
        n += (size_t)snprintf(text + n, cap_bytes - n, "k%zu=v\n", i);
    }
    *len = n;
    return text;
}

Test(config, keys_up_to_the_limit_are_accepted)
{
    size_t len;
    char *text = many_keys(CONFIG_KEYS_MAX - 1, &len);
    struct config *c;

    cr_assert_eq(config_load_string(&c, text, len, broker_defs,
                                    ARRAY_LEN(broker_defs), NULL, err,
                                    sizeof err),
                 RC_OK, "%s", err);
    cr_assert_eq(config_unknown_count(c), CONFIG_KEYS_MAX - 1);
    cr_assert_eq(config_set(c, "one.more", "x", err, sizeof err), RC_CONFIG);
    cr_assert(strstr(err, "distinct keys") != NULL, "%s", err);
    config_free(c);
    free(text);
}

Test(config, too_many_keys_is_refused)
{
    size_t len;
    char *text = many_keys(CONFIG_KEYS_MAX, &len);
    struct config *c;

    cr_assert_eq(config_load_string(&c, text, len, broker_defs,
                                    ARRAY_LEN(broker_defs), NULL, err,
                                    sizeof err),
                 RC_CONFIG);
    cr_assert(strstr(err, "more than 1024 distinct keys") != NULL, "%s",
              err);
    free(text);
}

/* --- Garbage -------------------------------------------------------------- */

static const struct config_def garbage_defs[] = {
    {"a", CONFIG_INT, "0", 0, 0, ""},    {"b", CONFIG_BOOL, "true", 0, 0, ""},
    {"c", CONFIG_DOUBLE, "1", 0, 0, ""}, {"d", CONFIG_LIST, "", 0, 0, ""},
    {"e", CONFIG_STRING, "", 0, 0, ""},  {"f", CONFIG_LONG, "0", 0, 0, ""},
};

static uint64_t xorshift64(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Mostly characters that matter to the parser, some raw bytes. */
static char garbage_byte(uint64_t *seed)
{
    static const char alphabet[] = "abcdef=: \t\\\n\r#!u0123456789DEF-+.,";
    uint64_t r = xorshift64(seed);

    if (r % 4 == 0) {
        return (char)(r >> 8 & 0xff);
    }
    return alphabet[(r >> 8) % (sizeof alphabet - 1)];
}

static void check_garbage_result(int rv, struct config *c)
{
    const char *pos, *item;
    size_t i, len;

    cr_assert(rv == RC_OK || rv == RC_CONFIG, "rv=%d", rv);
    if (rv != RC_OK) {
        cr_assert_eq(c, NULL);
        cr_assert_lt(strlen(err), sizeof err);
        return;
    }
    (void)config_int(c, "a");
    (void)config_bool(c, "b");
    (void)config_double(c, "c");
    (void)config_string(c, "e");
    (void)config_long(c, "f");
    pos = config_list(c, "d");
    while (config_list_next(&pos, &item, &len)) {
        cr_assert_gt(len, 0);
    }
    for (i = 0; i < config_unknown_count(c); i++) {
        (void)strlen(config_unknown_key(c, i));
    }
    config_free(c);
}

Test(config, garbage_bytes_never_crash)
{
    static char text[4096];
    uint64_t seed = 0x9e3779b97f4a7c15u;
    struct config *c;
    size_t round, i, len;
    int rv;

    for (round = 0; round < 3000; round++) {
        len = (size_t)(xorshift64(&seed) % sizeof text);
        for (i = 0; i < len; i++) {
            text[i] = garbage_byte(&seed);
        }
        memset(&cap, 0, sizeof cap);
        rv = config_load_string(&c, text, len, garbage_defs,
                                ARRAY_LEN(garbage_defs), &tracer, err,
                                sizeof err);
        check_garbage_result(rv, c);
    }
}

Test(config, garbage_bytes_as_overrides_never_crash)
{
    static const char *const keys[] = {"a", "b", "c", "d", "e", "f", "zz"};
    char value[64];
    uint64_t seed = 42;
    struct config *c = NULL;
    size_t round, i, len;
    int rv;

    cr_assert_eq(config_load_string(&c, "", 0, garbage_defs,
                                    ARRAY_LEN(garbage_defs), NULL, err,
                                    sizeof err),
                 RC_OK);
    for (round = 0; round < 2000; round++) {
        len = (size_t)(xorshift64(&seed) % sizeof value);
        for (i = 0; i < len; i++) {
            value[i] = garbage_byte(&seed);
            value[i] = value[i] == '\0' ? '0' : value[i];
        }
        value[len] = '\0';
        i = (size_t)(xorshift64(&seed) % ARRAY_LEN(keys));
        rv = config_set(c, keys[i], value, err, sizeof err);
        cr_assert(rv == RC_OK || rv == RC_CONFIG, "rv=%d", rv);
    }
    check_garbage_result(RC_OK, c);
}

/* --- Programmer errors ---------------------------------------------------- */

Test(config, getter_for_name_not_in_schema_asserts, .signal = SIGABRT,
     .init = cr_redirect_stderr)
{
    struct config *c = load_broker("node.id=1\n");

    (void)config_int(c, "no.such.key");
}

Test(config, getter_of_wrong_type_asserts, .signal = SIGABRT,
     .init = cr_redirect_stderr)
{
    struct config *c = load_broker("node.id=1\n");

    (void)config_long(c, "node.id");
}

Test(config, bad_default_in_schema_asserts, .signal = SIGABRT,
     .init = cr_redirect_stderr)
{
    static const struct config_def bad[] = {
        {"x", CONFIG_INT, "not a number", 0, 0, ""},
    };
    struct config *c;
    int rv;

    rv = config_load_string(&c, "", 0, bad, 1, NULL, err, sizeof err);
    cr_assert(false, "returned rv=%d", rv);
}

Test(config, duplicate_name_in_schema_asserts, .signal = SIGABRT,
     .init = cr_redirect_stderr)
{
    static const struct config_def bad[] = {
        {"x", CONFIG_INT, "1", 0, 0, ""},
        {"x", CONFIG_LONG, "1", 0, 0, ""},
    };
    struct config *c;
    int rv;

    rv = config_load_string(&c, "", 0, bad, 2, NULL, err, sizeof err);
    cr_assert(false, "returned rv=%d", rv);
}
