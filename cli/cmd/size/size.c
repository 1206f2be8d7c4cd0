/* See cli/cmd/size/size.h. */
#include "cli/cmd/size/size.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "cli/util/opts.h"
#include "cli/cmd/size/size_topic.h"
#include "common/assert.h"

void size_usage(FILE *out)
{
    fputs("  size --message-bytes B --rate N --retention DURATION\n"
          "       [--replication-factor R] [--brokers N] [--headroom PCT]\n"
          "  size --message-bytes B --topic T [--sample-ms MS] [...]\n"
          "      Disk for a topic: B-byte messages at N per second kept\n"
          "      DURATION (e.g. 3d, 72h, 45m, 600s, 250ms), R copies:\n"
          "      across the cluster, per broker, and per broker with PCT%\n"
          "      free. Defaults: R 3, 3 brokers, headroom 30. --topic\n"
          "      fills in what the cluster knows: T's replication factor\n"
          "      and retention.ms (else Kafka's 7 days), the brokers, and\n"
          "      the rate T grows at over --sample-ms (default 5000);\n"
          "      options given win.\n",
          out);
}

static const struct opts_cmd size_cmd = {"size", size_usage};

/* 2332800000000 -> "2,332,800,000,000". */
static void with_commas(uint64_t v, char out[32])
{
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%" PRIu64, v);
    int o = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0) {
            out[o++] = ',';
        }
        out[o++] = digits[i];
    }
    out[o] = '\0';
}

/* "2.33 TB" (powers of 1000, as disks are sold). */
static void human(uint64_t v, char out[32])
{
    static const char *const units[] = {"B",  "kB", "MB", "GB",
                                        "TB", "PB", "EB"};
    double d = (double)v;
    size_t u = 0;
    while (d >= 1000.0 && u + 1 < ARRAY_LEN(units)) {
        d /= 1000.0;
        u++;
    }
    snprintf(out, 32, u == 0 ? "%.0f %s" : "%.2f %s", d, units[u]);
}

static void print_line(const char *label, uint64_t bytes, const char *tail)
{
    char c[32], h[32];
    with_commas(bytes, c);
    human(bytes, h);
    printf("%-20s %s bytes (%s)%s\n", label, c, h, tail);
}

/* Fills what --topic learns and the command line did not give. 0, or
 * the exit code. */
static int from_topic(const char *controllers, const char *topic,
                      int64_t sample_ms, int64_t *rate, uint64_t *ms,
                      bool have_ms, int32_t *rf, int32_t *brokers)
{
    struct size_topic st;
    if (size_topic_measure(controllers, topic, sample_ms, &st) != 0) {
        return 1;
    }
    if (*rf == 0) {
        *rf = st.replication_factor;
    }
    if (*brokers == 0) {
        *brokers = st.brokers;
    }
    if (!have_ms) {
        if (st.retention_ms < 0) {
            cli_error("size: %s keeps its records forever (retention.ms=-1): "
                      "give --retention",
                      topic);
            return 1;
        }
        *ms = (uint64_t)st.retention_ms;
    }
    printf("%s: replication factor %d, %d brokers, retention %" PRId64
           " ms (%s); %" PRId64 " records in %" PRId64 " ms: %.1f/s\n",
           topic, (int)st.replication_factor, (int)st.brokers,
           st.retention_ms,
           st.retention_set ? "the topic's retention.ms"
                            : "Kafka's default, 7 days",
           st.records, st.window_ms, st.rate);
    if (*rate == 0) {
        *rate = (int64_t)(st.rate + 0.5);
        if (*rate == 0) {
            cli_error("size: nothing was written to %s in %" PRId64 " ms: "
                      "give --rate, or a longer --sample-ms",
                      topic, st.window_ms);
            return 1;
        }
    }
    return 0;
}

/* bytes = size x rate x ms x rf / 1000 across the cluster, per broker
 * and with headroom% free, printed. 0, or the exit code. */
static int print_sizes(int64_t message_bytes, int64_t rate, uint64_t ms,
                       const char *retention, int32_t rf, int32_t brokers,
                       int32_t headroom)
{
    /* Every product is checked for overflow. */
    uint64_t per_s = 0, copies = 0, total_ms = 0;
    if (__builtin_mul_overflow((uint64_t)message_bytes, (uint64_t)rate,
                               &per_s) ||
        __builtin_mul_overflow(per_s, (uint64_t)rf, &copies) ||
        __builtin_mul_overflow(copies, ms, &total_ms)) {
        cli_error("size: %" PRId64 " bytes x %" PRId64 "/s x %s x RF %d "
                  "does not fit in 64 bits",
                  message_bytes, rate, retention, (int)rf);
        return 1;
    }
    uint64_t total = total_ms / 1000;
    uint64_t per_broker = (total + (uint64_t)brokers - 1) / (uint64_t)brokers;
    /* per_broker / (1 - headroom): what leaves headroom% free. */
    uint64_t with_room = 0;
    if (__builtin_mul_overflow(per_broker, (uint64_t)100, &with_room)) {
        cli_error("size: the per-broker figure does not fit in 64 bits "
                  "with headroom");
        return 1;
    }
    with_room = (with_room + (uint64_t)(100 - headroom) - 1) /
                (uint64_t)(100 - headroom);
    printf("%" PRId64 "-byte messages at %" PRId64 "/s kept %s (%" PRIu64
           " s) at replication factor %d:\n",
           message_bytes, rate, retention, ms / 1000, (int)rf);
    print_line("across the cluster", total, "");
    char tail[64];
    snprintf(tail, sizeof tail, " on each of %d brokers", (int)brokers);
    print_line("per broker", per_broker, tail);
    snprintf(tail, sizeof tail, " per broker, %d%% left free", (int)headroom);
    print_line("with headroom", with_room, tail);
    return 0;
}

int size_main(int argc, char **argv, const char *controllers)
{
    int64_t message_bytes = 0, rate = 0, sample_ms = 5000;
    int32_t rf = 0, brokers = 0, headroom = 30;
    const char *retention = NULL;
    const char *topic = NULL;
    const struct opts_spec specs[] = {
        {"--message-bytes", OPTS_INT64, &message_bytes, 1, INT64_MAX},
        {"--rate", OPTS_INT64, &rate, 1, INT64_MAX},
        {"--retention", OPTS_STRING, &retention, 0, 0},
        {"--replication-factor", OPTS_INT32, &rf, 1, 1000},
        {"--brokers", OPTS_INT32, &brokers, 1, 100000},
        {"--headroom", OPTS_INT32, &headroom, 0, 99},
        {"--topic", OPTS_STRING, &topic, 0, 0},
        {"--sample-ms", OPTS_INT64, &sample_ms, 100, 3600000},
    };
    int n_pos = 0;
    int rc =
        opts_parse(&size_cmd, argc, argv, 1, specs, ARRAY_LEN(specs), &n_pos);
    if (rc >= 0) {
        return rc;
    }
    if (n_pos > 0) {
        return opts_usage_error(&size_cmd, "unexpected argument '%s'",
                                argv[1]);
    }
    if (message_bytes == 0 ||
        (topic == NULL && (rate == 0 || retention == NULL))) {
        return opts_usage_error(&size_cmd,
                                "--message-bytes, and --rate and "
                                "--retention (or --topic), are needed");
    }
    uint64_t ms = 0;
    if (retention != NULL && !opts_parse_duration_ms(retention, &ms)) {
        return opts_usage_error(&size_cmd,
                                "--retention %s: expected a "
                                "duration like 3d, 72h, 45m, 600s or 250ms",
                                retention);
    }
    if (topic != NULL) {
        int rc2 = from_topic(controllers, topic, sample_ms, &rate, &ms,
                             retention != NULL, &rf, &brokers);
        if (rc2 != 0) {
            return rc2;
        }
    }
    rf = rf == 0 ? 3 : rf;
    brokers = brokers == 0 ? 3 : brokers;
    char retention_text[32];
    if (retention == NULL) {
        snprintf(retention_text, sizeof retention_text, "%" PRIu64 " ms", ms);
        retention = retention_text;
    }
    return print_sizes(message_bytes, rate, ms, retention, rf, brokers,
                       headroom);
}
