/* Repair of a damaged partition log from its peers. A batch that fails its
 * CRC check, found by a Fetch answer being built (broker/kafka/
 * kafka_fetch.c), by the start-up check of the log (broker/log/
 * log_startup.h) or by the background scrub below, is reported with
 * repair_log_corrupt(); what follows depends on this replica's role:
 *
 *   follower  truncates its log to just before the bad batch (below its
 *             high watermark if need be: the leader holds the data) and
 *             fetches the rest again from the leader;
 *   leader    asks the active controller to move leadership away and drop
 *             it from the ISR of that partition (the hook log_corrupt,
 *             broker/main.c), at most once per REPAIR_ASK_EVERY_MS; the
 *             controller does so only if another ISR member exists. Until
 *             then reads of the damaged range are answered with
 *             KAFKA_STORAGE_ERROR; once it follows, it truncates as above.
 *
 * The scrub (repair_scrub, from the replica manager's periodic timer)
 * reads every hosted log in turn, a bounded number of bytes per call,
 * and checks each batch (broker/log/log_verify.h), so a follower finds
 * damage no reader would have shown it. Loop thread only. */
#ifndef CAIRN_BROKER_REPAIR_H
#define CAIRN_BROKER_REPAIR_H

#include <stdint.h>

struct partition;
struct replica_manager;

/* A leader asks the controller again no sooner than this. */
#define REPAIR_ASK_EVERY_MS 1000

/* The batches of p's log from offset on cannot be trusted (offset is the
 * one after the last intact batch before the bad one). */
void repair_log_corrupt(struct replica_manager *ps, struct partition *p,
                        int64_t offset);

/* p's leadership changed (the replica manager applied metadata): a former
 * leader that found damage truncates now that it follows. */
void repair_after_metadata(struct replica_manager *ps, struct partition *p);

/* Checks up to budget_bytes of the hosted logs, continuing where the last
 * call stopped. */
void repair_scrub(struct replica_manager *ps, int64_t budget_bytes);

#endif
