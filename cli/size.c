/* See cli/size.h. */
#include "cli/size.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "common/assert.h"

void size_usage(FILE *out)
{
    fputs("  size --message-bytes B --rate N --retention DURATION\n"
          "       [--replication-factor R] [--brokers N] [--headroom PCT]\n"
          "      Disk for a topic: B-byte messages at N per second kept\n"
          "      DURATION (e.g. 3d, 72h, 45m, 600s, 250ms), R copies:\n"
          "      across the cluster, per broker, and per broker with PCT%\n"
          "      free. Defaults: R 3, 3 brokers, headroom 30.\n",
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
    static const char *const units[] = {"B", "kB", "MB", "GB", "TB", "PB",
                                        "EB"};
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

int size_main(int argc, char **argv)
{
    int64_t message_bytes = 0, rate = 0;
    int32_t rf = 3, brokers = 3, headroom = 30;
    const char *retention = NULL;
    const struct opts_spec specs[] = {
        {"--message-bytes", OPTS_INT64, &message_bytes, 1, INT64_MAX},
        {"--rate", OPTS_INT64, &rate, 1, INT64_MAX},
        {"--retention", OPTS_STRING, &retention, 0, 0},
        {"--replication-factor", OPTS_INT32, &rf, 1, 1000},
        {"--brokers", OPTS_INT32, &brokers, 1, 100000},
        {"--headroom", OPTS_INT32, &headroom, 0, 99},
    };
    int n_pos = 0;
    int rc = opts_parse(&size_cmd, argc, argv, 1, specs, ARRAY_LEN(specs),
                        &n_pos);
    if (rc >= 0) {
        return rc;
    }
    if (n_pos > 0) {
        return opts_usage_error(&size_cmd, "unexpected argument '%s'",
                                argv[1]);
    }
    if (message_bytes == 0 || rate == 0 || retention == NULL) {
        return opts_usage_error(&size_cmd, "--message-bytes, --rate and "
                                "--retention are needed");
    }
    uint64_t ms = 0;
    if (!opts_parse_duration_ms(retention, &ms)) {
        return opts_usage_error(&size_cmd, "--retention %s: expected a "
                                "duration like 3d, 72h, 45m, 600s or 250ms",
                                retention);
    }
    /* bytes = size x rate x ms x rf / 1000, every step checked. */
    uint64_t per_s = 0, copies = 0, total_ms = 0;
    if (__builtin_mul_overflow((uint64_t)message_bytes, (uint64_t)rate,
                               &per_s) ||
        __builtin_mul_overflow(per_s, (uint64_t)rf, &copies) ||
        __builtin_mul_overflow(copies, ms, &total_ms)) {
        cli_error("size: %" PRId64 " bytes x %" PRId64 "/s x %s x RF %d "
                  "does not fit in 64 bits", message_bytes, rate, retention,
                  (int)rf);
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
           " s) at replication factor %d:\n", message_bytes, rate, retention,
           ms / 1000, (int)rf);
    print_line("across the cluster", total, "");
    char tail[64];
    snprintf(tail, sizeof tail, " on each of %d brokers", (int)brokers);
    print_line("per broker", per_broker, tail);
    snprintf(tail, sizeof tail, " per broker, %d%% left free", (int)headroom);
    print_line("with headroom", with_room, tail);
    return 0;
}
