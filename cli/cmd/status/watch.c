/* See cli/cmd/status/watch.h. */
#include "cli/cmd/status/watch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/util/cli.h"
#include "cli/client/cluster.h"
#include "cli/cmd/events.h"
#include "cli/client/health.h"
#include "common/meta/meta.h"
#include "common/rc.h"

/* One partition as last seen. */
struct watch_part {
    char name[META_TOPIC_NAME_BYTES_MAX + 16];
    int32_t leader;
    int32_t epoch;
    struct meta_replica_set isr;
    int64_t hw; /* -1 unknown */
};

struct watch_state {
    struct watch_part *parts;
    size_t n;
    int32_t brokers[META_BROKERS_MAX];
    bool fenced[META_BROKERS_MAX]; /* of brokers[i] */
    size_t n_brokers;
    int32_t active; /* controller id; -1 none */
    int64_t term;
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void stamp(char out[32])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    snprintf(out, 32, "%02d:%02d:%02d.%03d", tm.tm_hour % 24, tm.tm_min % 60,
             tm.tm_sec % 61, (int)(ts.tv_nsec / 1000000 % 1000));
}

/* An event line is shown as its topic would be; broker and controller
 * events always. */
static bool event_shown(const struct watch_opts *o,
                        const struct events_record *r)
{
    const char *text = r->text;
    if (o->topic != NULL) {
        size_t n = strlen(o->topic);
        return strncmp(text, "broker ", 7) == 0 ||
               strncmp(text, "controller ", 11) == 0 ||
               (strncmp(text, o->topic, n) == 0 && text[n] == '-' &&
                text[n + 1] >= '0' && text[n + 1] <= '9');
    }
    return o->internal || !events_is_routine(r);
}

/* The processes' new events, each with its own time, its source and its
 * cause; the first round only learns where their rings are. */
static void print_events(const struct watch_opts *o,
                         struct events_source *src, size_t n, bool first)
{
    struct events_batch b;
    if (n == 0 || events_collect(src, n, 0, &b) != RC_OK) {
        return;
    }
    for (size_t k = 0; !first && k < b.n; k++) {
        const struct events_record *r = &b.recs[k];
        if (!event_shown(o, r)) {
            continue;
        }
        time_t sec = (time_t)(r->time_ms / 1000);
        struct tm tm;
        localtime_r(&sec, &tm);
        printf("%02d:%02d:%02d.%03d %s: %s", tm.tm_hour, tm.tm_min, tm.tm_sec,
               (int)(r->time_ms % 1000), src[r->source].name, r->text);
        if (r->repeats > 0) {
            printf(" (and %" PRIu32 " more like it)", r->repeats);
        }
        putchar('\n');
    }
    fflush(stdout);
    events_batch_free(&b);
}

static bool shown(const struct watch_opts *o, const char *topic)
{
    if (o->topic != NULL) {
        return strcmp(o->topic, topic) == 0;
    }
    return o->internal || strncmp(topic, "__", 2) != 0;
}

/* The state of v (and h, if gathered) that o asks for. */
static int snapshot(const struct watch_opts *o, const struct cluster_view *v,
                    const struct health *h, struct watch_state *s)
{
    memset(s, 0, sizeof *s);
    s->active = -1;
    for (size_t i = 0; i < v->n_ctls; i++) {
        if (v->ctls[i].active) {
            s->active = v->ctls[i].id;
            s->term = v->ctls[i].term;
        }
    }
    const struct meta_image *img = &v->image;
    for (size_t i = 0; i < img->n_brokers && i < META_BROKERS_MAX; i++) {
        s->brokers[s->n_brokers] = img->brokers[i].id;
        s->fenced[s->n_brokers++] = img->brokers[i].fenced;
    }
    size_t total = 0;
    for (size_t t = 0; t < img->n_topics; t++) {
        total += (size_t)img->topics[t].n_partitions;
    }
    s->parts = calloc(total > 0 ? total : 1, sizeof *s->parts);
    if (s->parts == NULL) {
        return RC_NOMEM;
    }
    for (size_t t = 0; t < img->n_topics; t++) {
        const struct meta_topic *mt = &img->topics[t];
        if (!shown(o, mt->name)) {
            continue;
        }
        for (int32_t p = 0; p < mt->n_partitions; p++) {
            struct watch_part *w = &s->parts[s->n++];
            const struct meta_partition *mp = &mt->partitions[p];
            snprintf(w->name, sizeof w->name, "%s-%d", mt->name, (int)p);
            w->leader = mp->leader;
            w->epoch = mp->leader_epoch;
            w->isr = mp->isr;
            w->hw = h != NULL ? health_partition(h, mt, p)->hw : -1;
        }
    }
    return RC_OK;
}

static const struct watch_part *find_part(const struct watch_state *s,
                                          const char *name)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->parts[i].name, name) == 0) {
            return &s->parts[i];
        }
    }
    return NULL;
}

/* Prints what changed from a to b (a NULL: everything, as new). */
static void print_changes(const struct watch_state *a,
                          const struct watch_state *b)
{
    char ts[32];
    stamp(ts);
    if (a == NULL || a->active != b->active || a->term != b->term) {
        if (b->active >= 0) {
            printf("%s controller %" PRId32 " active (term %" PRId64 ")\n",
                   ts, b->active, b->term);
        } else {
            printf("%s no active controller\n", ts);
        }
    }
    for (size_t i = 0; i < b->n_brokers; i++) {
        bool was = false, known = false;
        for (size_t k = 0; a != NULL && k < a->n_brokers; k++) {
            if (a->brokers[k] == b->brokers[i]) {
                known = true;
                was = a->fenced[k];
            }
        }
        if (!known || was != b->fenced[i]) {
            printf("%s broker %" PRId32 " %s\n", ts, b->brokers[i],
                   b->fenced[i] ? "fenced" : "unfenced");
        }
    }
    for (size_t i = 0; i < b->n; i++) {
        const struct watch_part *n = &b->parts[i];
        const struct watch_part *o = a != NULL ? find_part(a, n->name) : NULL;
        char from[16], to[16];
        if (o == NULL || o->leader != n->leader || o->epoch != n->epoch) {
            meta_leader_format(o != NULL ? o->leader : -1, from);
            meta_leader_format(n->leader, to);
            if (o == NULL) {
                printf("%s %s leader %s epoch %" PRId32 "\n", ts, n->name, to,
                       n->epoch);
            } else {
                printf("%s %s leader %s -> %s epoch %" PRId32 " -> %" PRId32
                       "\n",
                       ts, n->name, from, to, o->epoch, n->epoch);
            }
        }
        char si[META_REPLICAS_MAX * 12], so[META_REPLICAS_MAX * 12];
        meta_replica_set_format(&n->isr, si, sizeof si);
        if (o == NULL) {
            printf("%s %s isr %s\n", ts, n->name, si);
        } else if (o->isr.n != n->isr.n ||
                   memcmp(o->isr.ids, n->isr.ids,
                          (size_t)n->isr.n * sizeof n->isr.ids[0]) != 0) {
            meta_replica_set_format(&o->isr, so, sizeof so);
            printf("%s %s isr %s -> %s\n", ts, n->name, so, si);
        }
        if (n->hw >= 0 && (o == NULL || o->hw != n->hw)) {
            if (o == NULL || o->hw < 0) {
                printf("%s %s hw %" PRId64 "\n", ts, n->name, n->hw);
            } else {
                printf("%s %s hw %" PRId64 " -> %" PRId64 "\n", ts, n->name,
                       o->hw, n->hw);
            }
        }
    }
    fflush(stdout);
}

int watch_run(struct ctl_client *cc, const struct watch_opts *o)
{
    uint64_t start = now_ms();
    struct watch_state prev = {0};
    bool have_prev = false;
    int exit_code = CLI_EXIT_OK;
    static struct events_source src[EVENTS_SOURCES_MAX];
    size_t n_src = 0;
    if (o->http != NULL && events_sources_parse(o->http, src, &n_src)) {
        events_sources_name(src, n_src);
    }
    for (bool first = true;; first = false) {
        uint64_t round = now_ms();
        struct cluster_view v;
        int rv = cluster_describe(cc, &v);
        if (rv == RC_OK) {
            struct health h;
            bool have_health = health_gather(&h, &v.image) == RC_OK;
            struct watch_state cur;
            rv = snapshot(o, &v, have_health ? &h : NULL, &cur);
            health_free(&h);
            if (rv == RC_OK) {
                print_changes(have_prev ? &prev : NULL, &cur);
                print_events(o, src, n_src, first);
                free(prev.parts);
                prev = cur;
                have_prev = true;
            }
        } else if (rv == RC_NOT_FOUND) {
            char ts[32];
            stamp(ts);
            printf("%s no controller sent cluster metadata\n", ts);
            fflush(stdout);
        }
        cluster_view_free(&v);
        if (rv == RC_NOMEM) {
            cli_error("status --watch: %s", rc_str(rv));
            exit_code = CLI_EXIT_FAILED;
            break;
        }
        uint64_t now = now_ms();
        if (o->for_ms > 0 && now - start >= (uint64_t)o->for_ms) {
            break;
        }
        uint64_t next = round + (uint64_t)o->interval_ms;
        if (next > now) {
            uint64_t wait = next - now;
            struct timespec ts = {(time_t)(wait / 1000),
                                  (long)(wait % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    free(prev.parts);
    return exit_code;
}
