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

void raft_reply_clamp_init(struct raft_reply_clamp *c, struct raft_io *inner)
{
    /* The I/O's calls find their state through io->impl, so the rest of
     * its table serves the clamp's io as it is. */
    *c = (struct raft_reply_clamp){.io = *inner, .inner = inner};
    c->io.start = start;
    c->io.send = send;
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
