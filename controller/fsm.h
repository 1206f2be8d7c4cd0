/* The metadata state machine behind the controllers' Raft log. Each
 * committed entry is a packed MetaBatch; apply decodes it and runs
 * meta_apply() on the image for every record, in order, on every
 * controller. It also keeps the most recent records, packed, so that any
 * controller can answer a broker's MetadataFetch from them (or with the
 * whole image when the broker is further behind). Snapshots hold the whole
 * image; restoring one replaces it and empties the ring.
 * Owned by the controller (controller/controller.c); loop thread only, as
 * canonical/raft calls it. */
#ifndef CAIRN_CONTROLLER_FSM_H
#define CAIRN_CONTROLLER_FSM_H

#include <raft.h>
#include <stddef.h>
#include <stdint.h>

#include "common/meta/meta.h"
#include "common/trace.h"

struct fsm_record {
    int64_t offset;  /* metadata offset of this record */
    uint8_t *bytes;  /* packed MetaRecord */
    size_t len;
};

/* What applying one entry did; handed to the proposer's raft_apply
 * callback (valid until the next entry is applied). */
struct fsm_result {
    int64_t first_offset; /* offset of the entry's first record */
    int64_t last_offset;  /* offset of its last record */
    size_t n_invalid;     /* records that did not fit the image */
};

struct meta_fsm {
    struct raft_fsm raft_fsm; /* handed to raft_init; data points here */
    struct meta_image image;
    struct fsm_record *ring;  /* circular, oldest at head */
    size_t ring_head;
    size_t ring_len;
    size_t ring_bytes;
    struct fsm_result last;
    uint64_t entries_applied;
    struct tracer *tracer;
};

/* Raft entries and snapshots are framed: canonical/raft's libuv storage
 * pads entries to 8 bytes on disk and reads them back padded, so each
 * buffer is an 8-byte header (payload length, big-endian u32, then four
 * zero bytes), the payload, and zeros up to a multiple of 8.
 *
 *   0  u32 payload length   4  u32 0   8  payload ...   zero padding
 */
#define META_FSM_FRAME_HEADER_BYTES 8

/* Encodes recs as a framed Raft entry in raft_malloc'd memory. */
MUST_CHECK int meta_fsm_encode_entry(const struct meta_record *recs,
                                     size_t n, struct raft_buffer *out);

MUST_CHECK int meta_fsm_init(struct meta_fsm *f, struct tracer *t);
void meta_fsm_close(struct meta_fsm *f);

/* Where the records with offsets after from_offset start in the ring
 * (*start) and how many follow, at most max (*n). RC_OUT_OF_RANGE when they
 * are no longer all kept (send the image instead); *n == 0 when the caller
 * is up to date. */
MUST_CHECK int meta_fsm_records_since(const struct meta_fsm *f,
                                      int64_t from_offset, size_t max,
                                      size_t *start, size_t *n);

/* The i-th record kept, oldest first; borrowed until the next apply. */
const struct fsm_record *meta_fsm_ring_at(const struct meta_fsm *f, size_t i);

#endif
