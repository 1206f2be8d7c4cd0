/* Opening the logs of a replica manager's partitions
 * (broker/replication/replica_open.c). Loop thread only. */
#ifndef CAIRN_BROKER_REPLICA_OPEN_H
#define CAIRN_BROKER_REPLICA_OPEN_H

#include <stdint.h>

#include "broker/replication/replica_manager.h"

/* Opens the queued logs (ps->pending): a turn's budget of them on the
 * loop, or, when there are many, in jobs on the threadpool; each then
 * takes the role the image gives it. */
void replica_open_pending(struct replica_manager *ps);

/* Arms the retry timer for the next log whose back-off ends. */
void replica_open_retry_arm(struct replica_manager *ps, uint64_t now);

#endif
