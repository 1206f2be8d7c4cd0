/* The clamp on a follower's AppendEntries answers
 * (controller/raft_reply_clamp.h). */
#include "controller/raft_reply_clamp.h"

/* The I/O below calls back with its own io, whose data is the raft; the
 * raft's io is the clamp's. */
static struct raft_reply_clamp *clamp_of(struct raft_io *io)
{
    struct raft *r = io->data;
    return (struct raft_reply_clamp *)(void *)r->io;
}

static void recv_cb(struct raft_io *io, struct raft_message *m)
{
    struct raft_reply_clamp *c = clamp_of(io);
    if (m->type != RAFT_IO_APPEND_ENTRIES) {
        c->recv(io, m);
        return;
    }
    c->in_append = true;
    c->bound = m->append_entries.prev_log_index +
               m->append_entries.n_entries;
    c->recv(io, m); /* may free the entries */
    c->in_append = false;
}

static int start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                 raft_io_recv_cb recv)
{
    struct raft_reply_clamp *c = (struct raft_reply_clamp *)(void *)io;
    c->recv = recv;
    return c->inner->start(c->inner, msecs, tick, recv_cb);
}

static int send(struct raft_io *io, struct raft_io_send *req,
                const struct raft_message *m, raft_io_send_cb cb)
{
    struct raft_reply_clamp *c = (struct raft_reply_clamp *)(void *)io;
    if (c->in_append && m->type == RAFT_IO_APPEND_ENTRIES_RESULT &&
        m->append_entries_result.rejected == 0 &&
        m->append_entries_result.last_log_index > c->bound) {
        /* The I/O copies or encodes the message before it returns. */
        struct raft_message capped = *m;
        capped.append_entries_result.last_log_index = c->bound;
        c->n_clamped++;
        return c->inner->send(c->inner, req, &capped, cb);
    }
    return c->inner->send(c->inner, req, m, cb);
}

/* The disk calls go to the inner io itself: the controller's inner io is
 * the guard (controller/raft_io_guard.c), whose calls find the guard by
 * their io argument, so the guard's table copied under the clamp's io
 * would take the clamp for the guard. */
static struct raft_io *inner_of(struct raft_io *io)
{
    return ((struct raft_reply_clamp *)(void *)io)->inner;
}

static int append(struct raft_io *io, struct raft_io_append *req,
                  const struct raft_entry entries[], unsigned n,
                  raft_io_append_cb cb)
{
    struct raft_io *in = inner_of(io);
    return in->append(in, req, entries, n, cb);
}

static int truncate_log(struct raft_io *io, raft_index index)
{
    struct raft_io *in = inner_of(io);
    return in->truncate(in, index);
}

static int snapshot_put(struct raft_io *io, unsigned trailing,
                        struct raft_io_snapshot_put *req,
                        const struct raft_snapshot *snapshot,
                        raft_io_snapshot_put_cb cb)
{
    struct raft_io *in = inner_of(io);
    return in->snapshot_put(in, trailing, req, snapshot, cb);
}

static int set_term(struct raft_io *io, raft_term term)
{
    struct raft_io *in = inner_of(io);
    return in->set_term(in, term);
}

static int set_vote(struct raft_io *io, raft_id id)
{
    struct raft_io *in = inner_of(io);
    return in->set_vote(in, id);
}

void raft_reply_clamp_init(struct raft_reply_clamp *c, struct raft_io *inner)
{
    /* libraft's own I/O finds its state through io->impl, so the rest of
     * the table serves the clamp's io as it is. */
    *c = (struct raft_reply_clamp){.io = *inner, .inner = inner};
    c->io.start = start;
    c->io.send = send;
    c->io.append = append;
    c->io.truncate = truncate_log;
    c->io.snapshot_put = snapshot_put;
    c->io.set_term = set_term;
    c->io.set_vote = set_vote;
}

void raft_reply_clamp_bind(struct raft_reply_clamp *c)
{
    c->inner->data = c->io.data;
}

void raft_reply_clamp_install(struct raft_reply_clamp *c, struct raft *r)
{
    raft_reply_clamp_init(c, r->io);
    c->io.data = r;
    r->io = &c->io;
}
