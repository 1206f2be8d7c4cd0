/* A guard around libraft's own disk I/O (raft_uv). libraft writes the
 * metadata log outside the I/O seam, and when a write fails (EIO, a full
 * disk) it goes on without it: measured here, a follower controller whose
 * disk is full stays up with its applied index frozen and says nothing
 * above DEBUG. The guard sits between raft and raft_uv, sees every append,
 * snapshot, truncation and term or vote write fail, and reports the first
 * failure once: the controller then stops, as a broker does when its log
 * dir fails (a controller that cannot write is one vote short, silently;
 * gone, it is one the operator sees and replaces).
 *
 * The seam's fault rules (common/io.h) hit these writes too, by the
 * metadata dir's path: a write or sync rule fails the next append (or
 * snapshot, or term/vote write), which is how tests inject a controller
 * disk failure. Loop thread only. */
#ifndef CAIRN_CONTROLLER_RAFT_IO_GUARD_H
#define CAIRN_CONTROLLER_RAFT_IO_GUARD_H

#include <raft.h>
#include <stdbool.h>

struct raft_io_guard__call; /* an append or snapshot in flight */

struct raft_io_guard {
    struct raft_io io;      /* what raft is given */
    struct raft_io *inner;  /* raft_uv's, borrowed */
    const char *dir;        /* the metadata dir, borrowed */
    void (*failed)(void *arg, const char *what, int status);
    void *arg;
    struct raft_io_guard__call *calls;
    bool reported;
};

/* Wraps inner (set up by raft_uv_init); give raft &g->io. failed is
 * called once, with what failed and raft's status code. */
void raft_io_guard_init(struct raft_io_guard *g, struct raft_io *inner,
                        const char *dir,
                        void (*failed)(void *arg, const char *what,
                                       int status),
                        void *arg);

/* After raft_init(): raft_uv calls raft back with its own io, which needs
 * the raft that raft_init() gave the guard's. */
void raft_io_guard_bind(struct raft_io_guard *g);

#endif
