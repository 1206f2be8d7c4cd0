/* Tests for controller/raft_reply_clamp.c on libraft's own test fixture:
 * a follower whose log ends in a tail left by a leader that lost must not
 * be counted for the new leader's entries, and must catch up. */
#include <criterion/criterion.h>
#include <raft.h>
#include <raft/fixture.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "controller/raft_io_guard.h"
#include "controller/raft_reply_clamp.h"

#define N 3
#define MAX_INDEX 64
#define BUDGET_MS 10000

/* A state machine that keeps the values it applied, in order. */
struct applied {
    struct raft_fsm fsm;
    uint64_t value[MAX_INDEX];
    raft_index last;
};

static struct {
    struct raft_fixture f;
    struct applied fsms[N];
    struct raft_reply_clamp clamps[N];
    struct raft_apply reqs[8];
    unsigned n_reqs;
} fx;

static int apply(struct raft_fsm *fsm, const struct raft_buffer *buf,
                 void **result)
{
    struct applied *a = fsm->data;
    uint64_t v = 0;
    memcpy(&v, buf->base, sizeof v < buf->len ? sizeof v : buf->len);
    cr_assert_lt(a->last + 1, MAX_INDEX);
    a->value[++a->last] = v;
    *result = NULL;
    return 0;
}

static int snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                    unsigned *n)
{
    (void)fsm, (void)bufs, (void)n;
    return RAFT_NOTFOUND; /* the test never reaches a threshold */
}

static int restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    (void)fsm, (void)buf;
    return RAFT_NOTFOUND;
}

static void setup(void)
{
    memset(&fx, 0, sizeof fx);
    cr_assert_eq(raft_fixture_initialize(&fx.f), 0);
    for (unsigned i = 0; i < N; i++) {
        fx.fsms[i].fsm = (struct raft_fsm){.version = 1,
                                           .data = &fx.fsms[i],
                                           .apply = apply,
                                           .snapshot = snapshot,
                                           .restore = restore};
        cr_assert_eq(raft_fixture_grow(&fx.f, &fx.fsms[i].fsm), 0);
        raft_reply_clamp_install(&fx.clamps[i], raft_fixture_get(&fx.f, i));
    }
    struct raft_configuration conf;
    cr_assert_eq(raft_fixture_configuration(&fx.f, N, &conf), 0);
    cr_assert_eq(raft_fixture_bootstrap(&fx.f, &conf), 0);
    raft_configuration_close(&conf);
    cr_assert_eq(raft_fixture_start(&fx.f), 0);
}

static void teardown(void)
{
    raft_fixture_close(&fx.f);
}

static struct raft *server(unsigned i)
{
    return raft_fixture_get(&fx.f, i);
}

/* The term of the entry at index in r's log, 0 if it has none. */
static raft_term term_at(struct raft *r, raft_index index)
{
    const struct raft_log *l = &r->log;
    size_t n = l->back >= l->front ? l->back - l->front
                                   : l->size - l->front + l->back;
    if (index <= l->offset || index > l->offset + n) {
        return 0;
    }
    size_t at = (l->front + (size_t)(index - l->offset - 1)) % l->size;
    return l->entries[at].term;
}

static void applied_cb(struct raft_apply *req, int status, void *result)
{
    (void)req, (void)status, (void)result;
}

static void propose(unsigned i, uint64_t v)
{
    cr_assert_lt(fx.n_reqs, 8);
    struct raft_buffer buf = {.base = raft_malloc(sizeof v), .len = sizeof v};
    cr_assert_not_null(buf.base);
    memcpy(buf.base, &v, sizeof v);
    cr_assert_eq(
        raft_apply(server(i), &fx.reqs[fx.n_reqs++], &buf, 1, applied_cb), 0);
}

static void cut(unsigned i, unsigned j)
{
    raft_fixture_saturate(&fx.f, i, j);
    raft_fixture_saturate(&fx.f, j, i);
}

static void mend(unsigned i, unsigned j)
{
    raft_fixture_desaturate(&fx.f, i, j);
    raft_fixture_desaturate(&fx.f, j, i);
}

static bool stored(struct raft_fixture *f, void *arg)
{
    const raft_index *want = arg;
    return raft_fixture_get(f, 1)->last_stored >= *want;
}

static bool other_leads(struct raft_fixture *f, void *arg)
{
    (void)arg;
    return raft_state(raft_fixture_get(f, 0)) == RAFT_LEADER ||
           raft_state(raft_fixture_get(f, 2)) == RAFT_LEADER;
}

TestSuite(raft_reply_clamp, .init = setup, .fini = teardown);

/* Server 2 (index 1) leads, stores an entry alone and loses; the new
 * leader, cut from the third server, has only server 2 to commit with.
 * Its first heartbeat (prev = its last index) leaves before it appends
 * its own entry there, and server 2's accepting answer comes back after.
 * Without the clamp libraft takes server 2's whole log as matched:
 * the leader commits its entry with server 2 holding the stale one, and
 * server 2 never catches up. */
Test(raft_reply_clamp, a_stale_tail_is_not_counted_and_is_replaced)
{
    raft_fixture_elect(&fx.f, 1);
    propose(1, 100);
    raft_index n = server(1)->last_stored + 1;
    cr_assert(raft_fixture_step_until_applied(&fx.f, N, n, BUDGET_MS));

    cut(1, 0);
    cut(1, 2);
    propose(1, 666); /* the stale entry, at n + 1 */
    raft_index stale = n + 1;
    cr_assert(raft_fixture_step_until(&fx.f, stored, &stale, BUDGET_MS));
    raft_term stale_term = term_at(server(1), stale);
    cr_assert(raft_fixture_step_until(&fx.f, other_leads, NULL, BUDGET_MS));
    unsigned l = raft_state(server(0)) == RAFT_LEADER ? 0 : 2;
    unsigned o = 2 - l;
    cr_assert_eq(raft_last_index(server(l)), n);

    /* Only server 2 can make a quorum with the leader now. The leader's
     * first heartbeat (prev = n) is on its way to server 2 when the
     * leader appends at n + 1, as a new controller leader does with its
     * barrier. */
    cut(l, o);
    mend(1, l);
    propose(l, 200);
    raft_time end = raft_fixture_time(&fx.f) + BUDGET_MS;
    while (raft_last_applied(server(1)) < stale &&
           raft_fixture_time(&fx.f) < end) {
        raft_fixture_step(&fx.f);
        cr_assert_eq(raft_state(server(l)), RAFT_LEADER);
        if (server(l)->commit_index >= stale) {
            cr_assert_neq(term_at(server(1), stale), stale_term,
                          "the leader committed index %llu counting a "
                          "follower that holds another entry there",
                          (unsigned long long)stale);
        }
    }
    cr_assert_eq(raft_last_applied(server(1)), stale,
                 "server 2 did not catch up");
    for (unsigned i = 0; i < N; i++) {
        if (i != o) {
            cr_assert_eq(fx.fsms[i].last, 2);
            cr_assert_eq(fx.fsms[i].value[1], 100);
            cr_assert_eq(fx.fsms[i].value[2], 200, "server %u", i + 1);
        }
    }
    cr_assert_gt(fx.clamps[1].n_clamped, 0);
}

/* Answers that are already right pass as they are. */
Test(raft_reply_clamp, a_healthy_cluster_is_not_clamped)
{
    raft_fixture_elect(&fx.f, 0);
    for (uint64_t v = 1; v <= 5; v++) {
        propose(0, v);
        raft_index want = raft_last_index(server(0));
        cr_assert(raft_fixture_step_until_applied(&fx.f, N, want, BUDGET_MS));
    }
    raft_fixture_step_until_elapsed(&fx.f, 1000);
    for (unsigned i = 0; i < N; i++) {
        cr_assert_eq(fx.clamps[i].n_clamped, 0);
        cr_assert_eq(fx.fsms[i].value[fx.fsms[i].last], 5);
    }
}

/* --- Calls pass to the I/O below with its own io ------------------------- */

static struct {
    struct raft_io io;
    unsigned calls;
    unsigned wrong;
} below;

static void seen(struct raft_io *io)
{
    below.calls++;
    below.wrong += io != &below.io;
}

static int below_append(struct raft_io *io, struct raft_io_append *req,
                        const struct raft_entry entries[], unsigned n,
                        raft_io_append_cb cb)
{
    (void)req, (void)entries, (void)n, (void)cb;
    seen(io);
    return 0;
}

static int below_truncate(struct raft_io *io, raft_index index)
{
    (void)index;
    seen(io);
    return 0;
}

static int below_set_term(struct raft_io *io, raft_term term)
{
    (void)term;
    seen(io);
    snprintf(io->errmsg, sizeof io->errmsg, "no space left on device");
    return RAFT_IOERR;
}

static raft_time below_time(struct raft_io *io)
{
    seen(io);
    return 42;
}

/* A wrapper below the clamp (the controller's disk guard) finds itself
 * through the io it is called with, and raft reads a failure's message
 * from its own io. */
Test(raft_reply_clamp_io, calls_reach_the_io_below_as_its_own)
{
    memset(&below, 0, sizeof below);
    below.io.version = 1;
    below.io.append = below_append;
    below.io.truncate = below_truncate;
    below.io.set_term = below_set_term;
    below.io.time = below_time;
    struct raft_reply_clamp c;
    raft_reply_clamp_init(&c, &below.io);
    cr_assert_eq(c.io.append(&c.io, NULL, NULL, 0, NULL), 0);
    cr_assert_eq(c.io.truncate(&c.io, 3), 0);
    cr_assert_eq(c.io.time(&c.io), 42);
    cr_assert_eq(c.io.set_term(&c.io, 2), RAFT_IOERR);
    cr_assert_str_eq(c.io.errmsg, "no space left on device");
    cr_assert_eq(below.calls, 4);
    cr_assert_eq(below.wrong, 0);
    cr_assert_null(c.io.async_work, "below has none");
}

/* --- Over the disk guard, as the controller stacks them ------------------ */

/* The I/O under the guard: an append completes at once. */
static unsigned n_inner_appends;
static unsigned n_raft_append_cbs;
static int raft_append_status = -1;

static int inner_append(struct raft_io *io, struct raft_io_append *req,
                        const struct raft_entry entries[], unsigned n,
                        raft_io_append_cb cb)
{
    (void)io;
    (void)entries;
    (void)n;
    n_inner_appends++;
    cb(req, 0);
    return 0;
}

static void raft_append_cb(struct raft_io_append *req, int status)
{
    (void)req;
    n_raft_append_cbs++;
    raft_append_status = status;
}

static void guard_failed(void *arg, const char *what, int status)
{
    (void)arg;
    cr_assert_fail("the guard reported %s failing (%d)", what, status);
}

/* raft -> clamp -> guard -> libraft's I/O (controller.c, start_raft): a
 * write through the clamp reaches the guard as the guard, once. Before,
 * the clamp's copy of the guard's table made the guard take the clamp
 * for itself, and the append's completion aborted ("a request the guard
 * did not send"). */
Test(raft_reply_clamp, passes_appends_to_the_guard_below_it)
{
    struct raft_io inner = {.version = 1, .append = inner_append};
    struct raft_io_guard guard;
    struct raft_reply_clamp clamp;
    raft_io_guard_init(&guard, &inner, "/nonexistent-metadata-dir",
                       guard_failed, NULL);
    raft_reply_clamp_init(&clamp, &guard.io);
    struct raft_io_append req;
    struct raft_entry entry = {.term = 1, .type = RAFT_COMMAND};
    cr_assert_eq(clamp.io.append(&clamp.io, &req, &entry, 1, raft_append_cb),
                 0);
    cr_assert_eq(n_inner_appends, 1);
    cr_assert_eq(n_raft_append_cbs, 1);
    cr_assert_eq(raft_append_status, 0);
}
