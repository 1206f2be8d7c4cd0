/* Three controllers in libraft's fixture (tests/lib/meta_quorum.h). */
#include "tests/lib/meta_quorum.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rc.h"

static uint64_t fnv(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211ULL;
    }
    return h | 1; /* never 0: 0 means "not applied" */
}

static void fail(struct meta_quorum *q, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(struct meta_quorum *q, const char *fmt, ...)
{
    if (!q->failed) {
        q->failed = true;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(q->why, sizeof q->why, fmt, ap);
        va_end(ap);
    }
}

static void note_applied(struct meta_quorum_ctl *c, raft_index index,
                         uint64_t h)
{
    struct meta_quorum *q = c->q;
    if (index >= c->cap_hash) {
        raft_index cap = c->cap_hash == 0 ? 1024 : c->cap_hash;
        while (cap <= index) {
            cap *= 2;
        }
        uint64_t *p = realloc(c->hash, cap * sizeof *p);
        if (p == NULL) {
            abort();
        }
        memset(p + c->cap_hash, 0, (cap - c->cap_hash) * sizeof *p);
        c->hash = p;
        c->cap_hash = cap;
    }
    if (c->hash[index] != 0) {
        fail(q, "index %llu applied twice by controller %u",
             (unsigned long long)index, c->index);
    }
    c->hash[index] = h;
    for (unsigned i = 0; i < META_QUORUM_N; i++) {
        const struct meta_quorum_ctl *o = &q->ctl[i];
        if (o != c && index < o->cap_hash && o->hash[index] != 0 &&
            o->hash[index] != h) {
            fail(q, "the metadata log differs at index %llu between "
                 "controllers %u and %u", (unsigned long long)index,
                 c->index, i);
        }
    }
}

static int wrap_apply(struct raft_fsm *fsm, const struct raft_buffer *buf,
                      void **result)
{
    struct meta_quorum_ctl *c = fsm->data;
    struct raft *r = raft_fixture_get(&c->q->raft, c->index);
    note_applied(c, raft_last_applied(r) + 1, fnv(buf->base, buf->len));
    return c->meta.raft_fsm.apply(&c->meta.raft_fsm, buf, result);
}

static int wrap_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                         unsigned *n_bufs)
{
    struct meta_quorum_ctl *c = fsm->data;
    return c->meta.raft_fsm.snapshot(&c->meta.raft_fsm, bufs, n_bufs);
}

static int wrap_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    struct meta_quorum_ctl *c = fsm->data;
    return c->meta.raft_fsm.restore(&c->meta.raft_fsm, buf);
}

int meta_quorum_init(struct meta_quorum *q, unsigned snapshot_every)
{
    memset(q, 0, sizeof *q);
    q->ready = -1;
    if (raft_fixture_initialize(&q->raft) != 0) {
        return RC_NOMEM;
    }
    for (unsigned i = 0; i < META_QUORUM_N; i++) {
        struct meta_quorum_ctl *c = &q->ctl[i];
        c->q = q;
        c->index = i;
        if (meta_fsm_init(&c->meta, NULL) != RC_OK) {
            return RC_NOMEM;
        }
        c->fsm = (struct raft_fsm){.version = c->meta.raft_fsm.version,
                                   .data = c,
                                   .apply = wrap_apply,
                                   .snapshot = wrap_snapshot,
                                   .restore = wrap_restore};
        if (raft_fixture_grow(&q->raft, &c->fsm) != 0) {
            return RC_NOMEM;
        }
        raft_reply_clamp_install(&c->clamp, raft_fixture_get(&q->raft, i));
    }
    struct raft_configuration conf;
    if (raft_fixture_configuration(&q->raft, META_QUORUM_N, &conf) != 0) {
        return RC_NOMEM;
    }
    int rv = raft_fixture_bootstrap(&q->raft, &conf);
    raft_configuration_close(&conf);
    for (unsigned i = 0; rv == 0 && snapshot_every > 0 && i < META_QUORUM_N;
         i++) {
        raft_set_snapshot_threshold(raft_fixture_get(&q->raft, i),
                                    snapshot_every);
        raft_set_snapshot_trailing(raft_fixture_get(&q->raft, i),
                                   snapshot_every);
    }
    return rv == 0 && raft_fixture_start(&q->raft) == 0 ? RC_OK : RC_IO;
}

void meta_quorum_close(struct meta_quorum *q)
{
    q->closing = true;
    raft_fixture_close(&q->raft);
    for (unsigned i = 0; i < META_QUORUM_N; i++) {
        meta_fsm_close(&q->ctl[i].meta);
        free(q->ctl[i].hash);
    }
}

static void barrier_cb(struct raft_barrier *req, int status)
{
    struct meta_quorum *q = req->data;
    q->barrier_out = false;
    if (status == 0) {
        q->ready = (int)q->barrier_leader;
        q->ready_term = q->barrier_term;
    }
}

int meta_quorum_leader(struct meta_quorum *q)
{
    unsigned i = raft_fixture_leader_index(&q->raft);
    if (i >= META_QUORUM_N || !raft_fixture_alive(&q->raft, i)) {
        return -1;
    }
    struct raft *r = raft_fixture_get(&q->raft, i);
    if (q->ready == (int)i && q->ready_term == r->current_term) {
        return (int)i;
    }
    if (!q->barrier_out && !q->closing) {
        q->barrier.data = q;
        q->barrier_leader = i;
        q->barrier_term = r->current_term;
        q->barrier_out = raft_barrier(r, &q->barrier, barrier_cb) == 0;
    }
    return -1;
}

const struct meta_image *meta_quorum_image(const struct meta_quorum *q,
                                           unsigned i)
{
    return &q->ctl[i].meta.image;
}

static void applied_cb(struct raft_apply *req, int status, void *result)
{
    struct meta_quorum *q = req->data;
    (void)result;
    q->in_flight = false;
    if (status != 0) {
        q->n_lost++;
    }
    if (q->cb != NULL) {
        q->cb(q->cb_arg, status, q->proposer);
    }
}

bool meta_quorum_propose(struct meta_quorum *q,
                         const struct plan_records *out, meta_quorum_cb cb,
                         void *arg)
{
    int l = meta_quorum_leader(q);
    if (l < 0 || q->in_flight || out->n == 0) {
        return false;
    }
    struct raft_buffer buf;
    if (meta_fsm_encode_entry(out->recs, out->n, &buf) != RC_OK) {
        return false;
    }
    q->apply.data = q;
    int rv = raft_apply(raft_fixture_get(&q->raft, (unsigned)l), &q->apply,
                        &buf, 1, applied_cb);
    if (rv != 0) {
        raft_free(buf.base);
        return false;
    }
    q->in_flight = true;
    q->proposer = (unsigned)l;
    q->cb = cb;
    q->cb_arg = arg;
    q->n_proposals++;
    return true;
}

int meta_quorum_unavailable(struct meta_quorum *q)
{
    for (unsigned i = 0; i < META_QUORUM_N; i++) {
        if (raft_fixture_alive(&q->raft, i) &&
            raft_state(raft_fixture_get(&q->raft, i)) == RAFT_UNAVAILABLE) {
            return (int)i;
        }
    }
    return -1;
}

bool meta_quorum_caught_up(struct meta_quorum *q)
{
    int l = meta_quorum_leader(q);
    if (l < 0) {
        return false;
    }
    raft_index applied =
        raft_last_applied(raft_fixture_get(&q->raft, (unsigned)l));
    for (unsigned i = 0; i < META_QUORUM_N; i++) {
        if (raft_last_applied(raft_fixture_get(&q->raft, i)) != applied) {
            return false;
        }
    }
    return true;
}

static bool same_buffers(const struct raft_buffer *a, unsigned na,
                         const struct raft_buffer *b, unsigned nb)
{
    bool same = na == nb;
    for (unsigned k = 0; same && k < na; k++) {
        same = a[k].len == b[k].len &&
               memcmp(a[k].base, b[k].base, a[k].len) == 0;
    }
    return same;
}

static void free_buffers(struct raft_buffer *bufs, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        raft_free(bufs[k].base);
    }
    raft_free(bufs);
}

bool meta_quorum_same_images(struct meta_quorum *q)
{
    struct raft_buffer *bufs[META_QUORUM_N] = {0};
    unsigned n[META_QUORUM_N] = {0};
    raft_index at[META_QUORUM_N];
    for (unsigned i = 0; i < META_QUORUM_N; i++) {
        struct meta_fsm *m = &q->ctl[i].meta;
        at[i] = raft_last_applied(raft_fixture_get(&q->raft, i));
        if (m->raft_fsm.snapshot(&m->raft_fsm, &bufs[i], &n[i]) != 0) {
            fail(q, "controller %u cannot take a snapshot", i);
        }
    }
    for (unsigned i = 1; !q->failed && i < META_QUORUM_N; i++) {
        if (at[i] == at[0] &&
            !same_buffers(bufs[0], n[0], bufs[i], n[i])) {
            fail(q, "at index %llu controllers 0 and %u hold different "
                 "images", (unsigned long long)at[0], i);
        }
    }
    for (unsigned i = 0; i < META_QUORUM_N; i++) {
        if (bufs[i] != NULL) {
            free_buffers(bufs[i], n[i]);
        }
    }
    return !q->failed;
}
