/* A fix, between raft and its I/O, for a flaw of libraft 0.15's
 * followers (src/replication.c, replicationAppend). A follower that
 * accepts an AppendEntries without new entries (a heartbeat, or entries
 * it already holds) answers with last_log_index = its whole stored log,
 * not prev_log_index + the entries it was sent. When its log has a tail
 * left from a leader that lost (entries of an older term past the new
 * leader's end at the time), the leader takes that tail as matched if it
 * has appended as far in the meantime (it caps the answer only at its own
 * last index). Then:
 *  - the leader counts the follower towards committing entries the
 *    follower does not hold: a committed entry can be lost if the leader
 *    dies and the follower, whose tail ends in a newer term than the
 *    others', is elected;
 *  - the follower never catches up: each heartbeat fails its log check
 *    at the stale entry, and the leader ignores the refusal because it
 *    is at or below the follower's "match".
 * Found by the broker simulation (seed 4030876: a controller stuck one
 * entry behind for good after three controller kills).
 *
 * The clamp sees each AppendEntries as it arrives and the answer raft
 * sends while handling it (the synchronous case: nothing to write), and
 * caps an accepting answer at prev_log_index + n_entries, what the
 * Raft paper's receiver promises. Answers sent after a write pass as
 * they are: the write replaced any conflicting tail. Loop thread only. */
#ifndef CAIRN_CONTROLLER_RAFT_REPLY_CLAMP_H
#define CAIRN_CONTROLLER_RAFT_REPLY_CLAMP_H

#include <raft.h>
#include <stdbool.h>

struct raft_reply_clamp {
    struct raft_io io;     /* what raft is given; first member */
    struct raft_io *inner; /* borrowed */
    raft_io_recv_cb recv;  /* raft's */
    bool in_append;        /* handling an AppendEntries */
    raft_index bound;      /* its prev_log_index + n_entries */
    unsigned long long n_clamped;
};

/* Wraps inner; give raft &c->io. */
void raft_reply_clamp_init(struct raft_reply_clamp *c, struct raft_io *inner);

/* After raft_init() (which set c->io.data): the I/O below calls raft
 * back with its own io, which must lead to the raft too. */
void raft_reply_clamp_bind(struct raft_reply_clamp *c);

/* For a raft already initialized on its io (libraft's test fixture):
 * puts the clamp between them. Before raft_start(). */
void raft_reply_clamp_install(struct raft_reply_clamp *c, struct raft *r);

#endif
