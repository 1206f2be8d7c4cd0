/* See cli/cmd/events.h. */
#include "cli/cmd/events.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/util/cli.h"
#include "cli/client/http_get.h"
#include "cli/util/opts.h"
#include "common/assert.h"
#include "common/event_ring.h"
#include "common/rc.h"

#define EVENTS_TIMEOUT_MS 2000u
#define EVENTS_FOLLOW_MS 500

void events_usage(FILE *out)
{
    fputs("  events [--since DURATION] [--follow] [--for-ms MS] [--all]\n"
          "         [--http HOST:PORT,...]\n"
          "      The controllers' and brokers' events (leader moves,\n"
          "      ISR changes, fencing, HW stalls, truncations, elections,\n"
          "      each with its cause) as one timeline, from each\n"
          "      process's /events (its last 1,024, kept across restarts\n"
          "      in its data dir's events.log). --since: only the last\n"
          "      DURATION (e.g. 10m, 30s). --follow: keep printing new\n"
          "      ones until killed or --for-ms has passed. Routine events\n"
          "      (group coordinators moving and loading their offsets,\n"
          "      internal topics' leaders) are counted on a last line and\n"
          "      shown only with --all (--internal is its older name).\n"
          "      --http:\n"
          "      the processes' metrics listeners; default the local\n"
          "      cluster's (brokers base+94..96, controllers\n"
          "      base+104..106, base from $CAIRN_BASE_PORT).\n",
          out);
}

static const struct opts_cmd events_cmd = {"events", events_usage};

bool events_sources_parse(const char *list, struct events_source *out,
                          size_t *n)
{
    *n = 0;
    const char *p = list;
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        const char *colon = NULL;
        for (const char *q = p; q < p + len; q++) {
            if (*q == ':') {
                colon = q;
            }
        }
        if (*n == EVENTS_SOURCES_MAX || colon == NULL || colon == p ||
            (size_t)(colon - p) >= sizeof out->host) {
            return false;
        }
        struct events_source *s = &out[(*n)++];
        memset(s, 0, sizeof *s);
        memcpy(s->host, p, (size_t)(colon - p));
        char *end = NULL;
        long port = strtol(colon + 1, &end, 10);
        if (end != p + len || port < 1 || port > 65535) {
            return false;
        }
        s->port = (int)port;
        snprintf(s->name, sizeof s->name, "%.255s:%d", s->host, s->port);
        p += len;
        if (*p == ',') {
            p++;
        }
    }
    return *n > 0;
}

/* One line of the text form (common/event_ring.h). */
static bool parse_line(const char *line, size_t len, struct events_record *r)
{
    struct event_line l;
    if (!event_ring_parse_line(line, len, &l)) {
        return false;
    }
    *r = (struct events_record){.time_ms = l.time_ms,
                                .last_ms = l.last_ms,
                                .repeats = l.repeats,
                                .seq = l.seq,
                                .routine = l.routine,
                                .text = l.text};
    return true;
}

static int by_time(const void *a, const void *b)
{
    const struct events_record *x = a;
    const struct events_record *y = b;
    if (x->time_ms != y->time_ms) {
        return x->time_ms < y->time_ms ? -1 : 1;
    }
    if (x->source != y->source) {
        return x->source < y->source ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void format_time(int64_t ms, char *out, size_t cap, bool date)
{
    time_t sec = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    /* strftime for the fields: snprintf of them trips gcc's -O2
     * -Wformat-truncation, which cannot see that they are in range. */
    size_t n =
        strftime(out, cap, date ? "%Y-%m-%dT%H:%M:%S" : "%H:%M:%S", &tm);
    unsigned milli = (unsigned)((ms % 1000 + 1000) % 1000);
    snprintf(out + n, cap - n, date ? ".%03uZ" : ".%03u", milli);
}

int events_collect(struct events_source *src, size_t n_src, int64_t since_ms,
                   struct events_batch *b)
{
    memset(b, 0, sizeof *b);
    size_t cap_recs = 0;
    for (size_t i = 0; i < n_src; i++) {
        char path[96];
        size_t len = 0;
        snprintf(path, sizeof path, "/events?format=text&since=%" PRIu64,
                 src[i].seen);
        int rc =
            http_get(src[i].host, src[i].port, path, EVENTS_TIMEOUT_MS,
                     &b->bodies[i], &len, src[i].error, sizeof src[i].error);
        src[i].reachable = rc == RC_OK;
        if (rc != RC_OK) {
            continue;
        }
        src[i].error[0] = '\0';
        uint64_t seen = src[i].seen;
        for (char *line = b->bodies[i]; line != NULL && *line != '\0';) {
            char *nl = strchr(line, '\n');
            if (nl != NULL) {
                *nl = '\0';
            }
            struct events_record r;
            if (parse_line(line,
                           nl != NULL ? (size_t)(nl - line) : strlen(line),
                           &r) &&
                r.seq > seen) {
                if (r.seq > src[i].seen) {
                    src[i].seen = r.seq;
                }
                if (r.last_ms < since_ms) {
                    line = nl != NULL ? nl + 1 : NULL;
                    continue;
                }
                if (b->n == cap_recs) {
                    cap_recs = cap_recs == 0 ? 256 : cap_recs * 2;
                    struct events_record *g =
                        realloc(b->recs, cap_recs * sizeof *g);
                    if (g == NULL) {
                        events_batch_free(b);
                        return RC_NOMEM;
                    }
                    b->recs = g;
                }
                r.source = i;
                b->recs[b->n++] = r;
            }
            line = nl != NULL ? nl + 1 : NULL;
        }
    }
    if (b->n > 0) {
        qsort(b->recs, b->n, sizeof *b->recs, by_time);
    }
    return RC_OK;
}

void events_batch_free(struct events_batch *b)
{
    free(b->recs);
    for (size_t i = 0; i < EVENTS_SOURCES_MAX; i++) {
        free(b->bodies[i]);
    }
    memset(b, 0, sizeof *b);
}

bool events_is_routine(const struct events_record *r)
{
    return r->routine || strncmp(r->text, "__", 2) == 0;
}

/* One round: every source's new records, merged and printed (routine ones
 * only with all, else counted in *hidden); sources that do not answer
 * are named on stderr when they stop answering. Returns how many
 * answered. */
static size_t round_once(struct events_source *src, size_t n_src,
                         int64_t since_ms, bool all, bool *warned,
                         size_t *hidden)
{
    struct events_batch b;
    if (events_collect(src, n_src, since_ms, &b) != RC_OK) {
        cli_error("events: out of memory");
        return 0;
    }
    size_t answered = 0;
    for (size_t i = 0; i < n_src; i++) {
        if (src[i].reachable) {
            answered++;
            warned[i] = false;
        } else if (!warned[i]) {
            cli_error("events: %s not read: %s", src[i].name, src[i].error);
            warned[i] = true;
        }
    }
    for (size_t k = 0; k < b.n; k++) {
        const struct events_record *r = &b.recs[k];
        if (!all && events_is_routine(r)) {
            (*hidden)++; /* __consumer_offsets-N: 50 lines a broker */
            continue;
        }
        char when[32];
        format_time(r->time_ms, when, sizeof when, true);
        printf("%s %-14s %s", when, src[r->source].name, r->text);
        if (r->repeats > 0) {
            char until[16];
            format_time(r->last_ms, until, sizeof until, false);
            printf(" (and %" PRIu32 " more like it until %s)", r->repeats,
                   until);
        }
        putchar('\n');
    }
    fflush(stdout);
    events_batch_free(&b);
    return answered;
}

/* The source's name ("broker-1") from its JSON form's "source". */
void events_sources_name(struct events_source *src, size_t n_src)
{
    for (size_t i = 0; i < n_src; i++) {
        char *body = NULL;
        size_t len = 0;
        char err[HTTP_GET_ERROR_BYTES];
        /* since the largest seq: the name without the records */
        if (http_get(src[i].host, src[i].port,
                     "/events?since=18446744073709551615", EVENTS_TIMEOUT_MS,
                     &body, &len, err, sizeof err) != RC_OK) {
            continue;
        }
        const char *k = strstr(body, "\"source\":\"");
        if (k != NULL) {
            k += 10;
            size_t n = strcspn(k, "\"\\");
            if (n > 0 && n < sizeof src[i].name) {
                memcpy(src[i].name, k, n);
                src[i].name[n] = '\0';
            }
        }
        free(body);
    }
}

static void print_hidden(size_t hidden)
{
    if (hidden > 0) {
        printf("(%zu routine event%s hidden: coordinator moves and offset "
               "loads, internal topics' leaders; --all shows them)\n",
               hidden, hidden == 1 ? "" : "s");
    }
}

int events_main(int argc, char **argv, const char *http_default)
{
    const char *since = NULL;
    const char *http = NULL;
    bool follow = false;
    bool all = false;
    bool internal = false;
    int64_t for_ms = 0;
    const struct opts_spec specs[] = {
        {"--since", OPTS_STRING, &since, 0, 0},
        {"--http", OPTS_STRING, &http, 0, 0},
        {"--follow", OPTS_FLAG, &follow, 0, 0},
        {"--all", OPTS_FLAG, &all, 0, 0},
        {"--internal", OPTS_FLAG, &internal, 0, 0},
        {"--for-ms", OPTS_INT64, &for_ms, 1, INT64_MAX / 2},
    };
    int n_pos = 0;
    int rc = opts_parse(&events_cmd, argc, argv, 1, specs, ARRAY_LEN(specs),
                        &n_pos);
    if (rc >= 0) {
        return rc;
    }
    if (n_pos > 0) {
        return opts_usage_error(&events_cmd, "unexpected argument '%s'",
                                argv[1]);
    }
    uint64_t since_ms = 0;
    if (since != NULL && !opts_parse_duration_ms(since, &since_ms)) {
        return opts_usage_error(&events_cmd,
                                "--since: expected a duration "
                                "such as 10m or 30s, got '%s'",
                                since);
    }
    struct events_source src[EVENTS_SOURCES_MAX];
    size_t n_src = 0;
    const char *list = http != NULL ? http : http_default;
    if (!events_sources_parse(list, src, &n_src)) {
        return opts_usage_error(&events_cmd,
                                "--http: expected "
                                "HOST:PORT,... (at most %d), got '%s'",
                                EVENTS_SOURCES_MAX, list);
    }
    events_sources_name(src, n_src);
    int64_t start = cli_wall_ms();
    int64_t from = since != NULL && since_ms < (uint64_t)start
                       ? start - (int64_t)since_ms
                       : INT64_MIN;
    all |= internal; /* the older name, from when only __ lines hid */
    bool warned[EVENTS_SOURCES_MAX] = {0};
    size_t hidden = 0;
    size_t answered = round_once(src, n_src, from, all, warned, &hidden);
    if (!follow) {
        if (answered == 0) {
            cli_error("events: no process answered (is the cluster up? "
                      "deploy/cluster.sh up)");
            return 1;
        }
        print_hidden(hidden);
        return 0;
    }
    while (for_ms == 0 || cli_wall_ms() - start < for_ms) {
        usleep(EVENTS_FOLLOW_MS * 1000);
        round_once(src, n_src, from, all, warned, &hidden);
    }
    print_hidden(hidden);
    return 0;
}
