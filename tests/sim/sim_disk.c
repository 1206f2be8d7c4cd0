/* The brokers' files on the simulated disk (tests/sim/sim.h): one log file
 * per broker of checksummed frames, written, synced, read and cut through
 * the I/O seam (common/io.h) over common/io_sim.c, and the disk faults a
 * seed injects through the seam's own fault rules. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "common/crc32c.h"
#include "common/io.h"
#include "common/rc.h"
#include "tests/sim/sim.h"

#define SIM_DISK__MAGIC 0x4341524eu /* a zeroed frame is never valid */

/* A frame: magic, epoch, value, then the CRC-32C of those 16 bytes; no
 * byte of it is outside the check. */
static void encode(const struct sim_record *r, uint8_t out[SIM_FRAME_BYTES])
{
    uint32_t magic = SIM_DISK__MAGIC;
    memset(out, 0, SIM_FRAME_BYTES);
    memcpy(out, &magic, 4);
    memcpy(out + 4, &r->epoch, 4);
    memcpy(out + 8, &r->value, 8);
    uint32_t crc = crc32c(out, 16);
    memcpy(out + 16, &crc, 4);
}

static bool decode(const uint8_t in[SIM_FRAME_BYTES], bool check,
                   struct sim_record *out)
{
    uint32_t magic = 0;
    uint32_t crc = 0;
    memcpy(&magic, in, 4);
    memcpy(&out->epoch, in + 4, 4);
    memcpy(&out->value, in + 8, 8);
    memcpy(&crc, in + 16, 4);
    return !check || (magic == SIM_DISK__MAGIC && crc == crc32c(in, 16));
}

static void node_dir(const struct sim_node *n, char *buf, size_t cap)
{
    snprintf(buf, cap, "n%d", n->id);
}

static void node_file(const struct sim_node *n, char *buf, size_t cap)
{
    snprintf(buf, cap, "n%d/00000000000000000000.log", n->id);
}

void sim_disk_open(struct sim_world *w, struct sim_node *n)
{
    (void)w;
    char path[64];
    node_file(n, path, sizeof path);
    n->fd = io_open(path, O_RDWR | O_CREAT, 0644);
    ASSERT(n->fd >= 0); /* no fault rule hits opens */
    char dir[32];
    node_dir(n, dir, sizeof dir);
    int dfd = io_open(dir, O_RDONLY | O_DIRECTORY, 0);
    ASSERT(dfd >= 0);
    ASSERT(io_fsync(dfd) == 0); /* no fault is armed at start */
    ASSERT(io_close(dfd) == 0);
}

bool sim_disk_write(struct sim_world *w, struct sim_node *n, int64_t offset,
                    const struct sim_record *r)
{
    (void)w;
    uint8_t frame[SIM_FRAME_BYTES];
    encode(r, frame);
    return io_pwrite(n->fd, frame, sizeof frame,
                     (off_t)(offset * SIM_FRAME_BYTES)) ==
           (ssize_t)sizeof frame;
}

int sim_disk_sync(struct sim_node *n)
{
    return io_fdatasync(n->fd);
}

/* The cut is synced at once. (The real log lowers its recovery point
 * instead and syncs with its next group commit, so a crash in between can
 * bring cut records back, for the epoch rules to cut again; the model
 * leaves that window out.) */
bool sim_disk_truncate(struct sim_node *n, int64_t end)
{
    return io_ftruncate(n->fd, (off_t)(end * SIM_FRAME_BYTES)) == 0 &&
           io_fdatasync(n->fd) == 0;
}

/* The frame of record offset: RC_OK, RC_CORRUPT (framing or CRC bad,
 * when check), RC_SHORT (the file ends there or inside it), RC_IO. */
static int read_frame(struct sim_node *n, int64_t offset, bool check,
                      struct sim_record *out)
{
    uint8_t frame[SIM_FRAME_BYTES];
    ssize_t got = io_pread(n->fd, frame, sizeof frame,
                           (off_t)(offset * SIM_FRAME_BYTES));
    if (got < 0) {
        return RC_IO;
    }
    if (got != (ssize_t)sizeof frame) {
        return RC_SHORT;
    }
    return decode(frame, check, out) ? RC_OK : RC_CORRUPT;
}

int sim_disk_read(struct sim_world *w, struct sim_node *n, int64_t offset,
                  struct sim_record *out)
{
    int rv = read_frame(n, offset, !w->opt.no_crc, out);
    return rv == RC_SHORT ? RC_CORRUPT : rv; /* it ends inside the log */
}

bool sim_disk_recover(struct sim_world *w, struct sim_node *n)
{
    char path[64];
    node_file(n, path, sizeof path);
    n->fd = io_open(path, O_RDWR | O_CREAT, 0644);
    ASSERT(n->fd >= 0);
    n->corrupt_offset = -1;
    int64_t kept = 0;
    for (;; kept++) {
        struct sim_record r;
        int rv = read_frame(n, kept, true, &r);
        if (rv == RC_IO) {
            return false;
        }
        if (rv == RC_SHORT || (rv == RC_CORRUPT &&
                               kept >= n->recovery_point)) {
            break; /* a torn tail: cut below */
        }
        if (rv == RC_CORRUPT) {
            if (n->corrupt_offset < 0) {
                n->corrupt_offset = kept;
                w->n_corrupt_found++;
                sim_disk_explain(w, n, kept);
                sim_trace(w, "node %d: corrupt frame at %lld below the "
                          "recovery point %lld, kept", n->id,
                          (long long)kept, (long long)n->recovery_point);
            }
            continue;
        }
        if (kept >= n->n || r.epoch != n->log[kept].epoch ||
            r.value != n->log[kept].value) {
            sim_fail(w, "model: node %d recovered frame %lld (epoch %d "
                     "value %lld) that it never wrote", n->id,
                     (long long)kept, r.epoch, (long long)r.value);
            return true;
        }
    }
    if (!sim_disk_truncate(n, kept)) {
        return false;
    }
    sim_node_truncate(w, n, kept);
    n->durable = kept;
    return true;
}

/* --- Faults -------------------------------------------------------------- */

/* The seam rule armed last has hit (or none is armed): room for another. */
static bool fault_spent(struct sim_world *w)
{
    if (w->disk_fault_armed && io_fault_hits(0) == 0) {
        return false;
    }
    io_fault_clear();
    w->disk_fault_armed = false;
    return true;
}

static void arm(struct sim_world *w, struct sim_node *n, enum io_op op,
                enum io_fault_kind kind, int err, const char *what)
{
    struct io_fault f = {.op = op, .kind = kind, .err = err, .times = 1};
    snprintf(f.path, sizeof f.path, "n%d/", n->id);
    ASSERT(io_fault_add(&f) == RC_OK);
    w->disk_fault_armed = true;
    w->n_disk_faults++;
    sim_trace(w, "disk fault on node %d: the next %s", n->id, what);
}

/* Bit rot in a durable frame of n, while every replica is in the ISR and
 * no other copy is damaged: one fault at a time, as in Ganesan et al.
 * (FAST 2017), so an acknowledged record always has an intact in-sync
 * copy. */
static void rot(struct sim_world *w, struct sim_node *n)
{
    if (w->ctl.meta.part.isr.n != SIM_NODES || n->durable == 0) {
        return;
    }
    for (int i = 0; i < SIM_NODES; i++) {
        if (w->damaged_from[i] >= 0) {
            return;
        }
    }
    int64_t offset = sim_rand_range(w, 0, n->durable - 1);
    int64_t pos = offset * SIM_FRAME_BYTES +
                  sim_rand_range(w, 0, SIM_FRAME_BYTES - 1);
    uint8_t mask = (uint8_t)(1u << sim_rand_range(w, 0, 7));
    char path[64];
    node_file(n, path, sizeof path);
    ASSERT(io_sim_rot(w->disk, path, pos, mask) == RC_OK);
    w->damaged_from[n->idx] = offset;
    w->n_rot++;
    w->n_disk_faults++;
    sim_trace(w, "disk fault on node %d: bit rot in frame %lld", n->id,
              (long long)offset);
}

void sim_disk_fault_tick(struct sim_world *w)
{
    int per_mille = w->opt.unsafe_fsync ? 60 : w->disk_per_mille;
    if (!sim_chance(w, per_mille) || !fault_spent(w)) {
        return;
    }
    struct sim_node *n = &w->nodes[sim_rand_range(w, 0, SIM_NODES - 1)];
    if (!n->up || n->dir_failed ||
        (w->opt.unsafe_fsync && n->id == w->ctl.meta.part.leader)) {
        return; /* the control lies on a follower, for the leader to trust */
    }
    int64_t kind = sim_rand_range(w, 0, 99);
    if (w->opt.unsafe_fsync) {
        kind = 0; /* its control: the fault it switches the handling of */
    }
    if (kind < 30) {
        arm(w, n, IO_OP_SYNC, IO_FAULT_ERRNO, EIO, "fdatasync fails (EIO)");
    } else if (kind < 45) {
        arm(w, n, IO_OP_WRITE, IO_FAULT_ERRNO, ENOSPC,
            "write finds the disk full");
    } else if (kind < 55) {
        arm(w, n, IO_OP_WRITE, IO_FAULT_SHORT, ENOSPC,
            "write is torn (half lands)");
    } else if (kind < 65) {
        arm(w, n, IO_OP_READ, IO_FAULT_ERRNO, EIO, "read fails (EIO)");
    } else {
        rot(w, n);
    }
}

void sim_disk_lied(struct sim_world *w, struct sim_node *n)
{
    /* After the fetch that names the lost records has reached the leader,
     * most likely before the next sync. */
    struct sim_event ev = {.type = SIM_EV_CRASH, .node = n->idx,
                           .at_ms = w->now_ms + sim_rand_range(w, 20, 200)};
    sim_schedule(w, &ev);
    int32_t leader = w->ctl.meta.part.leader;
    if (leader != META_NO_LEADER && leader != n->id) {
        ev.node = leader - 1;
        ev.at_ms++;
        sim_schedule(w, &ev);
    }
}

/* --- Checks -------------------------------------------------------------- */

void sim_disk_explain(struct sim_world *w, const struct sim_node *n,
                      int64_t offset)
{
    if (w->damaged_from[n->idx] != offset) {
        sim_fail(w, "node %d found a corrupt frame at offset %lld that no "
                 "injected fault damaged (rot at %lld): a write it counted "
                 "durable did not last", n->id, (long long)offset,
                 (long long)w->damaged_from[n->idx]);
    }
}

/* No damage outlives the quiet tail on a live replica: the scrub reads
 * every log through, busy or not, and the damaged copy repairs. */
static void check_no_rot_left(struct sim_world *w)
{
    for (int i = 0; i < SIM_NODES && !w->failed; i++) {
        struct sim_node *n = &w->nodes[i];
        if (!n->up || n->dir_failed || w->damaged_from[i] < 0 ||
            w->ctl.offline_damaged) {
            continue;
        }
        sim_fail(w, "node %d still holds the rot injected at offset %lld "
                 "after the quiet tail", n->id,
                 (long long)w->damaged_from[i]);
    }
}

void sim_disk_check_end(struct sim_world *w)
{
    check_no_rot_left(w);
    int32_t id = w->ctl.meta.part.leader;
    if (w->failed || id == META_NO_LEADER) {
        return;
    }
    struct sim_node *l = &w->nodes[id - 1];
    for (int64_t o = 0; o <= w->max_acked_offset && o < l->n; o++) {
        if (w->acked_at[o] == -1) {
            continue;
        }
        struct sim_record r;
        int rv = sim_disk_read(w, l, o, &r);
        if (rv != RC_OK || r.value != w->acked_at[o]) {
            sim_fail(w, "acknowledged value %lld at offset %lld does not "
                     "read back from leader %d's file: %s",
                     (long long)w->acked_at[o], (long long)o, l->id,
                     rv != RC_OK ? rc_str(rv) : "another value");
            return;
        }
    }
}
