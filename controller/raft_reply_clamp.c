/* The clamp on a follower's AppendEntries answers
 * (controller/raft_reply_clamp.h). */
#include "controller/raft_reply_clamp.h"

#include <string.h>

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
    c->bound = m->append_entries.prev_log_index + m->append_entries.n_entries;
    c->recv(io, m); /* may free the entries */
    c->in_append = false;
}

static struct raft_io *inner_of(struct raft_io *io)
{
    return ((struct raft_reply_clamp *)(void *)io)->inner;
}

/* rv, with the I/O's message where raft reads it (raft_errmsg()). */
static int relay(struct raft_io *io, int rv)
{
    if (rv != 0) {
        memcpy(io->errmsg, inner_of(io)->errmsg, sizeof io->errmsg);
    }
    return rv;
}

static int start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                 raft_io_recv_cb recv)
{
    struct raft_reply_clamp *c = (struct raft_reply_clamp *)(void *)io;
    c->recv = recv;
    return relay(io, c->inner->start(c->inner, msecs, tick, recv_cb));
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
        return relay(io, c->inner->send(c->inner, req, &capped, cb));
    }
    return relay(io, c->inner->send(c->inner, req, m, cb));
}

/* Every other call goes to the I/O below with its own io: a wrapper
 * below (the disk guard) finds itself through it. */
static int init(struct raft_io *io, raft_id id, const char *address)
{
    return relay(io, inner_of(io)->init(inner_of(io), id, address));
}

static void close_io(struct raft_io *io, raft_io_close_cb cb)
{
    inner_of(io)->close(inner_of(io), cb);
}

static int load(struct raft_io *io, raft_term *term, raft_id *voted_for,
                struct raft_snapshot **snapshot, raft_index *start_index,
                struct raft_entry *entries[], size_t *n_entries)
{
    return relay(io,
                 inner_of(io)->load(inner_of(io), term, voted_for, snapshot,
                                    start_index, entries, n_entries));
}

static int bootstrap(struct raft_io *io,
                     const struct raft_configuration *conf)
{
    return relay(io, inner_of(io)->bootstrap(inner_of(io), conf));
}

static int recover(struct raft_io *io, const struct raft_configuration *conf)
{
    return relay(io, inner_of(io)->recover(inner_of(io), conf));
}

static int set_term(struct raft_io *io, raft_term term)
{
    return relay(io, inner_of(io)->set_term(inner_of(io), term));
}

static int set_vote(struct raft_io *io, raft_id id)
{
    return relay(io, inner_of(io)->set_vote(inner_of(io), id));
}

static int append(struct raft_io *io, struct raft_io_append *req,
                  const struct raft_entry entries[], unsigned n,
                  raft_io_append_cb cb)
{
    return relay(io, inner_of(io)->append(inner_of(io), req, entries, n, cb));
}

static int truncate_log(struct raft_io *io, raft_index index)
{
    return relay(io, inner_of(io)->truncate(inner_of(io), index));
}

static int snapshot_put(struct raft_io *io, unsigned trailing,
                        struct raft_io_snapshot_put *req,
                        const struct raft_snapshot *snapshot,
                        raft_io_snapshot_put_cb cb)
{
    return relay(io, inner_of(io)->snapshot_put(inner_of(io), trailing, req,
                                                snapshot, cb));
}

static int snapshot_get(struct raft_io *io, struct raft_io_snapshot_get *req,
                        raft_io_snapshot_get_cb cb)
{
    return relay(io, inner_of(io)->snapshot_get(inner_of(io), req, cb));
}

static raft_time time_now(struct raft_io *io)
{
    return inner_of(io)->time(inner_of(io));
}

static int random_in(struct raft_io *io, int min, int max)
{
    return inner_of(io)->random(inner_of(io), min, max);
}

static int async_work(struct raft_io *io, struct raft_io_async_work *req,
                      raft_io_async_work_cb cb)
{
    return relay(io, inner_of(io)->async_work(inner_of(io), req, cb));
}

void raft_reply_clamp_init(struct raft_reply_clamp *c, struct raft_io *inner)
{
    *c = (struct raft_reply_clamp){
        .io = {.version = inner->version,
               .impl = inner->impl, /* for whoever reads it (the fixture) */
               .init = init,
               .close = close_io,
               .load = load,
               .start = start,
               .bootstrap = bootstrap,
               .recover = recover,
               .set_term = set_term,
               .set_vote = set_vote,
               .send = send,
               .append = append,
               .truncate = truncate_log,
               .snapshot_put = snapshot_put,
               .snapshot_get = snapshot_get,
               .time = time_now,
               .random = random_in,
               .async_work = inner->async_work != NULL ? async_work : NULL},
        .inner = inner};
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
