/* The guard around libraft's disk I/O (controller/raft_io_guard.h). */
#include "controller/raft_io_guard.h"

#include <stdlib.h>

#include "common/assert.h"
#include "common/io.h"

/* An append or a snapshot in flight: raft's request and its callback (the
 * request's data is raft's, so the guard keeps the callback here). */
struct raft_io_guard__call {
    struct raft_io_guard__call *next;
    void *req;
    raft_io_append_cb append_cb;         /* one of the two */
    raft_io_snapshot_put_cb snapshot_cb;
};

/* A request's callback finds the guard here: one controller per process. */
static struct raft_io_guard *current;

static struct raft_io_guard *guard_of(struct raft_io *io)
{
    return (struct raft_io_guard *)(void *)io; /* io is the first member */
}

/* A seam rule for a write or a sync of the metadata dir hits this one. */
static bool injected(const struct raft_io_guard *g)
{
    int err = 0;
    return io_fault_check(IO_OP_WRITE, g->dir, &err) ||
           io_fault_check(IO_OP_SYNC, g->dir, &err);
}

/* status, reported if it is the first failure (a write raft cancels
 * while it closes is none). */
static int checked(struct raft_io_guard *g, int status, const char *what)
{
    if (status != 0 && status != RAFT_CANCELED && !g->reported) {
        g->reported = true;
        g->failed(g->arg, what, status);
    }
    return status;
}

/* A completed write's status, or RAFT_IOERR when a rule hits it. */
static int completed(struct raft_io_guard *g, int status, const char *what)
{
    return checked(g, status == 0 && injected(g) ? RAFT_IOERR : status,
                   what);
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

/* Takes the call of req off the list. */
static struct raft_io_guard__call take(struct raft_io_guard *g, void *req)
{
    for (struct raft_io_guard__call **p = &g->calls; *p != NULL;
         p = &(*p)->next) {
        if ((*p)->req == req) {
            struct raft_io_guard__call *c = *p;
            struct raft_io_guard__call copy = *c;
            *p = c->next;
            free(c);
            return copy;
        }
    }
    ASSERT(!"a request the guard did not send");
    return (struct raft_io_guard__call){0};
}

static void append_cb(struct raft_io_append *req, int status)
{
    struct raft_io_guard__call c = take(current, req);
    c.append_cb(req, completed(current, status, "appending to the Raft log"));
}

static void snapshot_cb(struct raft_io_snapshot_put *req, int status)
{
    struct raft_io_guard__call c = take(current, req);
    c.snapshot_cb(req, completed(current, status, "storing a snapshot"));
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
        (void)take(g, req);
    }
    return checked(g, rv, "appending to the Raft log");
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
        (void)take(g, req);
    }
    return checked(g, rv, "storing a snapshot");
}

static int truncate_log(struct raft_io *io, raft_index index)
{
    struct raft_io_guard *g = guard_of(io);
    int rv = injected(g) ? RAFT_IOERR : g->inner->truncate(g->inner, index);
    return checked(g, rv, "truncating the Raft log");
}

static int set_term(struct raft_io *io, raft_term term)
{
    struct raft_io_guard *g = guard_of(io);
    int rv = injected(g) ? RAFT_IOERR : g->inner->set_term(g->inner, term);
    return checked(g, rv, "writing the term");
}

static int set_vote(struct raft_io *io, raft_id id)
{
    struct raft_io_guard *g = guard_of(io);
    int rv = injected(g) ? RAFT_IOERR : g->inner->set_vote(g->inner, id);
    return checked(g, rv, "writing the vote");
}

void raft_io_guard_init(struct raft_io_guard *g, struct raft_io *inner,
                        const char *dir,
                        void (*failed)(void *arg, const char *what,
                                       int status),
                        void *arg)
{
    /* raft_uv's calls find their state through io->impl, so the rest of
     * its table serves the guard's io as it is. */
    *g = (struct raft_io_guard){.io = *inner, .inner = inner, .dir = dir,
                                .failed = failed, .arg = arg};
    g->io.append = append;
    g->io.truncate = truncate_log;
    g->io.snapshot_put = snapshot_put;
    g->io.set_term = set_term;
    g->io.set_vote = set_vote;
    current = g;
}

void raft_io_guard_bind(struct raft_io_guard *g)
{
    g->inner->data = g->io.data;
}
