/* See cli/cmd/reassign/reassign_plan.h. */
#include "cli/cmd/reassign/reassign_plan.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/rc.h"

void reassign_plan_free(struct reassign_plan *p)
{
    free(p->moves);
    p->moves = NULL;
    p->n = 0;
}

static void plan_err(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void plan_err(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

/* --- Computing ------------------------------------------------------------ */

struct plan_state {
    const int32_t *brokers;
    size_t n_brokers;
    int64_t load[REASSIGN_PLAN_BROKERS_MAX]; /* replicas, by index */
    struct reassign_move *all;               /* every selected partition */
    size_t n_all;
};

static int broker_index(const struct plan_state *s, int32_t id)
{
    for (size_t i = 0; i < s->n_brokers; i++) {
        if (s->brokers[i] == id) {
            return (int)i;
        }
    }
    return -1;
}

static bool topic_selected(const struct meta_topic *t,
                           const char *const *topics, size_t n_topics)
{
    if (n_topics == 0) {
        return true;
    }
    for (size_t i = 0; i < n_topics; i++) {
        if (strcmp(topics[i], t->name) == 0) {
            return true;
        }
    }
    return false;
}

/* The least-loaded broker of the set that m's target does not use yet
 * (ties: the lowest id); -1 if every one does. */
static int least_loaded_free(const struct plan_state *s,
                             const struct reassign_move *m)
{
    int best = -1;
    for (size_t i = 0; i < s->n_brokers; i++) {
        if (meta_replica_set_contains(&m->to, s->brokers[i])) {
            continue;
        }
        if (best < 0 || s->load[i] < s->load[best] ||
            (s->load[i] == s->load[best] &&
             s->brokers[i] < s->brokers[best])) {
            best = (int)i;
        }
    }
    return best;
}

/* Replicas on brokers outside the set move into it. */
static int plan_evacuate(struct plan_state *s, char *err, size_t cap)
{
    for (size_t k = 0; k < s->n_all; k++) {
        struct reassign_move *m = &s->all[k];
        for (int32_t r = 0; r < m->to.n; r++) {
            if (broker_index(s, m->to.ids[r]) >= 0) {
                continue;
            }
            int b = least_loaded_free(s, m);
            if (b < 0) {
                plan_err(err, cap,
                         "%s-%d has %d replicas but only %zu "
                         "brokers would be left",
                         m->topic, (int)m->partition, (int)m->to.n,
                         s->n_brokers);
                return RC_INVALID;
            }
            m->to.ids[r] = s->brokers[b];
            s->load[b]++;
        }
    }
    return RC_OK;
}

/* Moves one replica from broker index hi to lo, preferring a partition
 * hi does not lead (fewer leader changes); false if none can move. */
static bool plan_shift(struct plan_state *s, int hi, int lo)
{
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; k < s->n_all; k++) {
            struct reassign_move *m = &s->all[k];
            if (meta_replica_set_contains(&m->to, s->brokers[lo])) {
                continue;
            }
            for (int32_t r = pass == 0 ? 1 : 0; r < m->to.n; r++) {
                if (m->to.ids[r] == s->brokers[hi]) {
                    m->to.ids[r] = s->brokers[lo];
                    s->load[hi]--;
                    s->load[lo]++;
                    return true;
                }
            }
        }
    }
    return false;
}

static void plan_balance(struct plan_state *s, size_t n_replicas)
{
    for (size_t step = 0; step < n_replicas + 1; step++) {
        int hi = 0, lo = 0;
        for (size_t i = 1; i < s->n_brokers; i++) {
            if (s->load[i] > s->load[hi]) {
                hi = (int)i;
            }
            if (s->load[i] < s->load[lo]) {
                lo = (int)i;
            }
        }
        if (s->load[hi] - s->load[lo] <= 1 || !plan_shift(s, hi, lo)) {
            return;
        }
    }
}

/* Every selected partition, current replicas as the first target. */
static int plan_collect(struct plan_state *s, const struct meta_image *img,
                        const char *const *topics, size_t n_topics,
                        size_t *n_replicas)
{
    size_t n = 0;
    for (size_t t = 0; t < img->n_topics; t++) {
        if (topic_selected(&img->topics[t], topics, n_topics)) {
            n += (size_t)img->topics[t].n_partitions;
        }
    }
    s->all = calloc(n + 1, sizeof *s->all);
    if (s->all == NULL) {
        return RC_NOMEM;
    }
    *n_replicas = 0;
    for (size_t t = 0; t < img->n_topics; t++) {
        const struct meta_topic *topic = &img->topics[t];
        if (!topic_selected(topic, topics, n_topics)) {
            continue;
        }
        for (int32_t p = 0; p < topic->n_partitions; p++) {
            struct reassign_move *m = &s->all[s->n_all++];
            snprintf(m->topic, sizeof m->topic, "%s", topic->name);
            m->partition = p;
            /* A running move counts as its target. */
            const struct meta_partition *mp = &topic->partitions[p];
            memset(&m->from, 0, sizeof m->from);
            for (int32_t r = 0; r < mp->replicas.n; r++) {
                if (!meta_replica_set_contains(&mp->removing,
                                               mp->replicas.ids[r])) {
                    m->from.ids[m->from.n++] = mp->replicas.ids[r];
                }
            }
            m->to = m->from;
            for (int32_t r = 0; r < m->to.n; r++) {
                int b = broker_index(s, m->to.ids[r]);
                if (b >= 0) {
                    s->load[b]++;
                }
            }
            *n_replicas += (size_t)m->to.n;
        }
    }
    return RC_OK;
}

int reassign_plan_compute(const struct meta_image *img,
                          const int32_t *brokers, size_t n_brokers,
                          const char *const *topics, size_t n_topics,
                          struct reassign_plan *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    ASSERT(n_brokers <= REASSIGN_PLAN_BROKERS_MAX);
    for (size_t i = 0; i < n_topics; i++) {
        if (meta_image_topic(img, topics[i]) == NULL) {
            plan_err(err, cap, "no topic named '%s'", topics[i]);
            return RC_INVALID;
        }
    }
    if (n_brokers == 0) {
        plan_err(err, cap, "no broker left to hold the replicas");
        return RC_INVALID;
    }
    struct plan_state s = {.brokers = brokers, .n_brokers = n_brokers};
    size_t n_replicas = 0;
    int rv = plan_collect(&s, img, topics, n_topics, &n_replicas);
    if (rv == RC_OK) {
        rv = plan_evacuate(&s, err, cap);
    }
    if (rv == RC_OK) {
        plan_balance(&s, n_replicas);
        size_t k = 0;
        for (size_t i = 0; i < s.n_all; i++) {
            if (memcmp(&s.all[i].from, &s.all[i].to, sizeof s.all[i].to) !=
                0) {
                s.all[k++] = s.all[i];
            }
        }
        if (k > REASSIGN_PLAN_MOVES_MAX) {
            plan_err(err, cap,
                     "%zu partitions to move; at most %d per "
                     "plan (name fewer --topics)",
                     k, REASSIGN_PLAN_MOVES_MAX);
            rv = RC_INVALID;
        } else {
            out->moves = s.all;
            out->n = k;
            return RC_OK;
        }
    }
    free(s.all);
    return rv;
}

/* --- The plan file -------------------------------------------------------- */

void reassign_plan_write_json(FILE *out, const struct reassign_plan *p,
                              bool current)
{
    struct json j;
    json_init(&j, out);
    json_object_begin(&j);
    json_key(&j, "version");
    json_int(&j, 1);
    json_key(&j, "partitions");
    json_array_begin(&j);
    for (size_t i = 0; i < p->n; i++) {
        const struct reassign_move *m = &p->moves[i];
        const struct meta_replica_set *s = current ? &m->from : &m->to;
        json_object_begin(&j);
        json_key(&j, "topic");
        json_string(&j, m->topic);
        json_key(&j, "partition");
        json_int(&j, m->partition);
        json_key(&j, "replicas");
        json_array_begin(&j);
        for (int32_t r = 0; r < s->n; r++) {
            json_int(&j, s->ids[r]);
        }
        json_array_end(&j);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
}

/* A tiny reader for the plan's shape: strings without escapes beyond \"
 * and \\, integers, and any value skipped. */
struct scan {
    const char *p;
    const char *end;
    const char *start;
    bool bad;
    char *err;
    size_t cap;
};

static void scan_fail(struct scan *s, const char *what)
{
    if (!s->bad) {
        s->bad = true;
        plan_err(s->err, s->cap, "plan: %s at byte %zu", what,
                 (size_t)(s->p - s->start));
    }
}

static void scan_ws(struct scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\t' ||
                             *s->p == '\r')) {
        s->p++;
    }
}

static bool scan_char(struct scan *s, char c)
{
    scan_ws(s);
    if (!s->bad && s->p < s->end && *s->p == c) {
        s->p++;
        return true;
    }
    return false;
}

static void scan_expect(struct scan *s, char c)
{
    if (!scan_char(s, c)) {
        char what[32];
        snprintf(what, sizeof what, "expected '%c'", c);
        scan_fail(s, what);
    }
}

/* A string into out (cap bytes, cut short is an error). */
static void scan_string(struct scan *s, char *out, size_t cap)
{
    size_t n = 0;
    scan_expect(s, '"');
    while (!s->bad && s->p < s->end && *s->p != '"') {
        char c = *s->p++;
        if (c == '\\' && s->p < s->end) {
            c = *s->p++;
            if (c != '"' && c != '\\' && c != '/') {
                scan_fail(s, "unsupported escape in a string");
            }
        }
        if (n + 1 >= cap) {
            scan_fail(s, "string too long");
        } else {
            out[n++] = c;
        }
    }
    if (cap > 0) {
        out[n < cap ? n : cap - 1] = '\0';
    }
    scan_expect(s, '"');
}

static int64_t scan_int(struct scan *s)
{
    scan_ws(s);
    char *end = NULL;
    if (s->bad || s->p >= s->end) {
        scan_fail(s, "expected a number");
        return 0;
    }
    char buf[24];
    size_t n = 0;
    while (s->p + n < s->end && n < sizeof buf - 1 &&
           (s->p[n] == '-' || (s->p[n] >= '0' && s->p[n] <= '9'))) {
        buf[n] = s->p[n];
        n++;
    }
    buf[n] = '\0';
    long long v = strtoll(buf, &end, 10);
    if (n == 0 || end != buf + n || v < INT32_MIN || v > INT32_MAX) {
        scan_fail(s, "expected a whole number");
        return 0;
    }
    s->p += n;
    return v;
}

/* Skips one value of any kind (bounded by the text's length). */
static void scan_skip(struct scan *s, int depth)
{
    scan_ws(s);
    if (s->bad || s->p >= s->end || depth > 8) {
        scan_fail(s, "expected a value");
        return;
    }
    char c = *s->p;
    if (c == '"') {
        char tmp[256];
        scan_string(s, tmp, sizeof tmp);
    } else if (c == '[' || c == '{') {
        char close = c == '[' ? ']' : '}';
        s->p++;
        if (scan_char(s, close)) {
            return;
        }
        do {
            if (c == '{') {
                char key[256];
                scan_string(s, key, sizeof key);
                scan_expect(s, ':');
            }
            scan_skip(s, depth + 1);
        } while (!s->bad && scan_char(s, ','));
        scan_expect(s, close);
    } else {
        while (s->p < s->end && *s->p != ',' && *s->p != '}' &&
               *s->p != ']' && *s->p != ' ' && *s->p != '\n') {
            s->p++;
        }
    }
}

static void scan_replicas(struct scan *s, struct meta_replica_set *set)
{
    set->n = 0;
    scan_expect(s, '[');
    if (scan_char(s, ']')) {
        return;
    }
    do {
        int64_t v = scan_int(s);
        if (set->n >= META_REPLICAS_MAX) {
            scan_fail(s, "too many replicas");
            return;
        }
        set->ids[set->n++] = (int32_t)v;
    } while (!s->bad && scan_char(s, ','));
    scan_expect(s, ']');
}

static void scan_move(struct scan *s, struct reassign_move *m)
{
    memset(m, 0, sizeof *m);
    m->partition = -1;
    bool has_topic = false, has_replicas = false;
    scan_expect(s, '{');
    do {
        char key[64];
        scan_string(s, key, sizeof key);
        scan_expect(s, ':');
        if (strcmp(key, "topic") == 0) {
            scan_string(s, m->topic, sizeof m->topic);
            has_topic = true;
        } else if (strcmp(key, "partition") == 0) {
            m->partition = (int32_t)scan_int(s);
        } else if (strcmp(key, "replicas") == 0) {
            scan_replicas(s, &m->to);
            has_replicas = true;
        } else {
            scan_skip(s, 0);
        }
    } while (!s->bad && scan_char(s, ','));
    scan_expect(s, '}');
    if (!s->bad && (!has_topic || m->partition < 0 || !has_replicas)) {
        scan_fail(s, "a partition needs topic, partition and replicas");
    }
}

static int scan_partitions(struct scan *s, struct reassign_plan *out)
{
    scan_expect(s, '[');
    if (scan_char(s, ']')) {
        return RC_OK;
    }
    do {
        if (out->n >= REASSIGN_PLAN_MOVES_MAX) {
            scan_fail(s, "too many partitions");
            return RC_TOO_LARGE;
        }
        scan_move(s, &out->moves[out->n++]);
    } while (!s->bad && scan_char(s, ','));
    scan_expect(s, ']');
    return RC_OK;
}

int reassign_plan_parse(const char *text, size_t len,
                        struct reassign_plan *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    out->moves = calloc(REASSIGN_PLAN_MOVES_MAX, sizeof *out->moves);
    if (out->moves == NULL) {
        return RC_NOMEM;
    }
    struct scan s = {
        .p = text, .end = text + len, .start = text, .err = err, .cap = cap};
    int64_t version = -1;
    bool has_partitions = false;
    int rv = RC_OK;
    scan_expect(&s, '{');
    do {
        char key[64];
        scan_string(&s, key, sizeof key);
        scan_expect(&s, ':');
        if (strcmp(key, "version") == 0) {
            version = scan_int(&s);
        } else if (strcmp(key, "partitions") == 0) {
            rv = scan_partitions(&s, out);
            has_partitions = true;
        } else {
            scan_skip(&s, 0);
        }
    } while (!s.bad && scan_char(&s, ','));
    scan_expect(&s, '}');
    scan_ws(&s);
    if (!s.bad && s.p != s.end) {
        scan_fail(&s, "text after the plan");
    }
    if (!s.bad && (version != 1 || !has_partitions)) {
        scan_fail(&s, "expected \"version\": 1 and \"partitions\"");
    }
    if (s.bad) {
        reassign_plan_free(out);
        return rv == RC_OK ? RC_MALFORMED : rv;
    }
    return RC_OK;
}
