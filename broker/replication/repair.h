/* Repair of a damaged partition log from its peers. A batch that fails its
 * CRC check, found by a Fetch answer being built (broker/kafka/
 * kafka_fetch.c), by the start-up check of the log (broker/log/
 * log_startup.h) or by the background scrub below, is reported with
 * repair_log_corrupt(); what follows depends on this replica's role:
 *
 *   follower  first leaves the ISR (it asks the active controller through
 *             its host's leave_isr, at most once per
 *             REPAIR_ASK_EVERY_MS), so that it is never elected while it
 *             lacks records the ISR promised; it is not fetched for
 *             meanwhile. Its own image saying it is out is not enough:
 *             the image can lag behind a leader that took it back and
 *             an election that made it leader. It cuts only once the
 *             controller has answered that it is out (repair_left_isr()),
 *             at a partition epoch of its own (the controller bumps it,
 *             so a leader's ISR change computed on what it fetched before
 *             is refused, and the leader forgets that when it applies the
 *             new epoch, isr.h), and its image has reached that state.
 *             Then, with no fetch of it in flight, it truncates its log
 *             to just before the bad batch (below its high watermark if
 *             need be: the leader holds the data) and fetches the rest
 *             again, rejoining the ISR when caught up;
 *   leader    asks the same: the controller moves leadership to another
 *             ISR member and drops it from the ISR; with no other ISR
 *             member left, the partition goes offline (no leader) rather
 *             than serve the damage. Until then reads of the damaged
 *             range are answered with KAFKA_STORAGE_ERROR; once it
 *             follows, it repairs as a follower.
 *
 * The scrub (repair_scrub, from the replica manager's periodic timer)
 * reads every hosted log in turn, a bounded number of bytes per call,
 * and checks each batch (broker/log/log_verify.h), so a follower finds
 * damage no reader would have shown it.
 *
 * Every rule here takes one partition and reaches the world only through
 * its host (partition.h: self, clock, tracer, leave_isr), so the same
 * code runs in the broker and in the simulation (tests/simb). Loop
 * thread only. */
#ifndef CAIRN_BROKER_REPAIR_H
#define CAIRN_BROKER_REPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct log_span;
struct log_verify;
struct partition;
struct replica_manager;

/* A leader asks the controller again no sooner than this. */
#define REPAIR_ASK_EVERY_MS 1000

/* The batches of p's log from offset on cannot be trusted (offset is the
 * one after the last intact batch before the bad one). */
void repair_log_corrupt(struct partition *p, int64_t offset);

/* The fetcher is about to ask for p (no fetch of it is in flight): true
 * when p may be fetched, after truncating a damaged log once out of the
 * ISR; false while it waits to leave the ISR. */
bool repair_follower_ready(struct partition *p);

/* The controller answered p's LeaveLeadership: this replica is out of
 * the ISR in its state at leader epoch leader_epoch and partition epoch
 * partition_epoch (leader and partition epochs of the answer). */
void repair_left_isr(struct partition *p, int32_t leader_epoch,
                     int32_t partition_epoch);

/* A fetch answer was appended to p's log: a replica that cut its log to
 * repair and is in the ISR again while its log ends below the leader's
 * high watermark lacks records the ISR promised (it was taken back on a
 * fetch sent before the cut): it marks itself repairing up to that
 * offset and asks to leave the ISR. */
void repair_after_fetch(struct partition *p, int64_t leader_hw);

/* p's leadership or ISR changed (its owner applied metadata): damage
 * found earlier is reported again in p's new role. */
void repair_after_metadata(struct partition *p);

/* A read of p's log (span) about to leave the broker, checked by CRC
 * with buf (cap bytes) into *v: the intact bytes from the span's start
 * (all of it when v->rc is RC_OK), or -1 when not one whole batch is
 * intact. Damage is reported (repair_log_corrupt()); a read that failed
 * (v->rc RC_IO) is the owner's to take the dir offline. */
int64_t repair_check_read(struct partition *p, const struct log_span *span,
                          uint8_t *buf, size_t cap, struct log_verify *v);

/* Checks up to budget bytes of p's log from its scrub offset, with buf
 * (cap bytes) for decompressing; returns the bytes read. *pass_done when
 * this pass reached the log end (or found damage): the next call starts
 * a new pass. Damage found is reported (repair_log_corrupt()); a read
 * that failed sets *read_rc (else RC_OK), for the owner to take the dir
 * offline. */
int64_t repair_scrub_partition(struct partition *p, uint8_t *buf, size_t cap,
                               int64_t budget, bool *pass_done, int *read_rc);

/* Partitions one scrub call moves past at most: a broker of 100,000
 * idle replicas (nothing to read) walks them over many calls, not all
 * of them at each. */
#define REPAIR_SCRUB_VISITS_MAX 1024

/* Checks up to budget_bytes of the hosted logs, continuing where the last
 * call stopped. */
void repair_scrub(struct replica_manager *ps, int64_t budget_bytes);

#endif
