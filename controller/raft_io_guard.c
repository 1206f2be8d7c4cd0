/* The guard around libraft's disk I/O (controller/raft_io_guard.h). */
#include "controller/raft_io_guard.h"

#include <stdlib.h>

#include "common/assert.h"
#include "common/io.h"

struct raft_io_guard__call {
    struct raft_io_guard__call *next;
    void *req;                       /* raft's request */
    raft_io_append_cb append_cb;     /* one of the two */
    raft_io_snapshot_put_cb snapshot_cb;
};

static struct raft_io_guard *guard_of(struct raft_io *io)
{
    return (struct raft_io_guard *)(void *)io; /* io is the first member */
}

static void report(struct raft_io_guard *g, const char *what, int status)
{
    if (!g->reported) {
        g->reported = true;
        g->failed(g->arg, what, status);
    }
}

/* A seam rule for a write or a sync of the metadata dir hits this one. */
static bool injected(const struct raft_io_guard *g)
{
    int err = 0;
    return io_fault_check(IO_OP_WRITE, g->dir, &err) ||
           io_fault_check(IO_OP_SYNC, g->dir, &err);
}

/* Takes the call of req off the list; NULL if unknown. */
static struct raft_io_guard__call *take(struct raft_io_guard *g, void *req)
{
    for (struct raft_io_guard__call **p = &g->calls; *p != NULL;
         p = &(*p)->next) {
        if ((*p)->req == req) {
            struct raft_io_guard__call *c = *p;
            *p = c->next;
            return c;
        }
    }
    return NULL;
}

static struct raft_io_guard__call *push(struct raft_io_guard *g, void *req)
{
    struct raft_io_guard__call *c = calloc(1, sizeof *c);
    if (c != NULL) {
        c->req = req;
        c->next = g->calls;
        g->calls = c;
    }
    return c;
}

/* A request's data is raft's, so its callback finds the guard here: one
 * controller per process. */
static struct raft_io_guard *current;

static void append_cb(struct raft_io_append *req, int status)
{
    struct raft_io_guard *g = current;
    struct raft_io_guard__call *c = take(g, req);
    ASSERT(c != NULL);
    if (status == 0 && injected(g)) {
        status = RAFT_IOERR;
    }
    if (status != 0 && status != RAFT_CANCELED) { /* not: closing */
        report(g, "appending to the Raft log", status);
    }
    raft_io_append_cb cb = c->append_cb;
    free(c);
    cb(req, status);
}

static void snapshot_cb(struct raft_io_snapshot_put *req, int status)
{
    struct raft_io_guard *g = current;
    struct raft_io_guard__call *c = take(g, req);
    ASSERT(c != NULL);
    if (status == 0 && injected(g)) {
        status = RAFT_IOERR;
    }
    if (status != 0 && status != RAFT_CANCELED) {
        report(g, "storing a snapshot", status);
    }
    raft_io_snapshot_put_cb cb = c->snapshot_cb;
    free(c);
    cb(req, status);
}

static int append(struct raft_io *io, struct raft_io_append *req,
                  const struct raft_entry entries[], unsigned n,
                  raft_io_append_cb cb)
{
    struct raft_io_guard *g = guard_of(io);
    struct raft_io_guard__call *c = push(g, req);
    if (c == NULL) {
        return RAFT_NOMEM;
    }
    c->append_cb = cb;
    int rv = g->inner->append(g->inner, req, entries, n, append_cb);
    if (rv != 0) {
        take(g, req);
        free(c);
        report(g, "appending to the Raft log", rv);
    }
    return rv;
}

static int snapshot_put(struct raft_io *io, unsigned trailing,
                        struct raft_io_snapshot_put *req,
                        const struct raft_snapshot *snapshot,
                        raft_io_snapshot_put_cb cb)
{
    struct raft_io_guard *g = guard_of(io);
    struct raft_io_guard__call *c = push(g, req);
    if (c == NULL) {
        return RAFT_NOMEM;
    }
    c->snapshot_cb = cb;
    int rv = g->inner->snapshot_put(g->inner, trailing, req, snapshot,
                                    snapshot_cb);
    if (rv != 0) {
        take(g, req);
        free(c);
        report(g, "storing a snapshot", rv);
    }
    return rv;
}

static int truncate_log(struct raft_io *io, raft_index index)
{
    struct raft_io_guard *g = guard_of(io);
    int rv = injected(g) ? RAFT_IOERR : g->inner->truncate(g->inner, index);
    if (rv != 0) {
        report(g, "truncating the Raft log", rv);
    }
    return rv;
}

static int set_term(struct raft_io *io, raft_term term)
{
    struct raft_io_guard *g = guard_of(io);
    int rv = injected(g) ? RAFT_IOERR : g->inner->set_term(g->inner, term);
    if (rv != 0) {
        report(g, "writing the term", rv);
    }
    return rv;
}

static int set_vote(struct raft_io *io, raft_id id)
{
    struct raft_io_guard *g = guard_of(io);
    int rv = injected(g) ? RAFT_IOERR : g->inner->set_vote(g->inner, id);
    if (rv != 0) {
        report(g, "writing the vote", rv);
    }
    return rv;
}

/* The rest go straight through, with the inner io. */
static int init(struct raft_io *io, raft_id id, const char *address)
{
    struct raft_io_guard *g = guard_of(io);
    return g->inner->init(g->inner, id, address);
}

static void close_io(struct raft_io *io, raft_io_close_cb cb)
{
    struct raft_io_guard *g = guard_of(io);
    g->inner->close(g->inner, cb);
}

static int load(struct raft_io *io, raft_term *term, raft_id *voted_for,
                struct raft_snapshot **snapshot, raft_index *start_index,
                struct raft_entry *entries[], size_t *n_entries)
{
    struct raft_io_guard *g = guard_of(io);
    return g->inner->load(g->inner, term, voted_for, snapshot, start_index,
                          entries, n_entries);
}

static int start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                 raft_io_recv_cb recv)
{
    struct raft_io_guard *g = guard_of(io);
    return g->inner->start(g->inner, msecs, tick, recv);
}

static int bootstrap(struct raft_io *io,
                     const struct raft_configuration *conf)
{
    struct raft_io_guard *g = guard_of(io);
    return g->inner->bootstrap(g->inner, conf);
}

static int recover(struct raft_io *io, const struct raft_configuration *conf)
{
    struct raft_io_guard *g = guard_of(io);
    return g->inner->recover(g->inner, conf);
}

static int send_msg(struct raft_io *io, struct raft_io_send *req,
                    const struct raft_message *message, raft_io_send_cb cb)
{
    struct raft_io_guard *g = guard_of(io);
    return g->inner->send(g->inner, req, message, cb);
}

static int snapshot_get(struct raft_io *io, struct raft_io_snapshot_get *req,
                        raft_io_snapshot_get_cb cb)
{
    struct raft_io_guard *g = guard_of(io);
    return g->inner->snapshot_get(g->inner, req, cb);
}

static raft_time time_now(struct raft_io *io)
{
    struct raft_io_guard *g = guard_of(io);
    return g->inner->time(g->inner);
}

static int random_in(struct raft_io *io, int min, int max)
{
    struct raft_io_guard *g = guard_of(io);
    return g->inner->random(g->inner, min, max);
}

static int async_work(struct raft_io *io, struct raft_io_async_work *req,
                      raft_io_async_work_cb cb)
{
    struct raft_io_guard *g = guard_of(io);
    return g->inner->async_work(g->inner, req, cb);
}

void raft_io_guard_init(struct raft_io_guard *g, struct raft_io *inner,
                        const char *dir,
                        void (*failed)(void *arg, const char *what,
                                       int status),
                        void *arg)
{
    *g = (struct raft_io_guard){.inner = inner, .dir = dir,
                                .failed = failed, .arg = arg};
    g->io.version = inner->version;
    g->io.impl = inner->impl;
    g->io.init = init;
    g->io.close = close_io;
    g->io.load = load;
    g->io.start = start;
    g->io.bootstrap = bootstrap;
    g->io.recover = recover;
    g->io.set_term = set_term;
    g->io.set_vote = set_vote;
    g->io.send = send_msg;
    g->io.append = append;
    g->io.truncate = truncate_log;
    g->io.snapshot_put = snapshot_put;
    g->io.snapshot_get = snapshot_get;
    g->io.time = time_now;
    g->io.random = random_in;
    g->io.async_work = inner->version >= 2 ? async_work : NULL;
    current = g;
}

void raft_io_guard_bind(struct raft_io_guard *g)
{
    g->inner->data = g->io.data;
}
