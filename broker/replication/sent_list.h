/* The partitions a follower's OffsetForLeaderEpoch request names, with
 * what it asked for each (broker/replication/follower.c). The request
 * names them grouped by topic (sent_list_group()), and the leader's answer
 * keeps that order, so sent_list_find() finds each answered partition at
 * its cursor: one probe each, however many partitions and topics. It once
 * looked in the order they were collected, which is not the request's,
 * and a broker following 66,000 partitions of ten topics stood still for
 * 27 s on one answer. Pure: no I/O, no clock. */
#ifndef CAIRN_BROKER_REPLICATION_SENT_LIST_H
#define CAIRN_BROKER_REPLICATION_SENT_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/assert.h"
#include "common/limits.h"
#include "common/slice.h"

struct sent_part {
    char topic[META_TOPIC_NAME_BYTES_MAX + 1];
    int32_t id;
    int32_t leader_epoch;
    int64_t fetch_offset;
};

struct sent_list {
    struct sent_part *parts; /* in the order they were added */
    size_t *order;           /* parts indices in the request's order */
    size_t n;
    size_t cap;
    size_t next;             /* where sent_list_find() looks first */
    uint64_t probes;         /* entries sent_list_find() looked at */
};

/* The parts grouped by topic for a request: topic t is names[t], its
 * partitions parts[order[start[t] .. start[t] + counts[t])] in the order
 * they were added. order is the list's; the rest live in the arena. */
struct sent_groups {
    const char **names;
    int32_t *counts;
    size_t *start;
    const size_t *order;
    size_t n_topics;
};

void sent_list_free(struct sent_list *l);
/* Empties the list (keeps its memory). */
void sent_list_clear(struct sent_list *l);
MUST_CHECK int sent_list_add(struct sent_list *l, const char *topic,
                             int32_t id, int32_t leader_epoch,
                             int64_t fetch_offset);
/* Groups the parts by topic into g, in time linear in the parts (topics
 * are hashed), and makes that the order sent_list_find() follows.
 * RC_NOMEM when the arena is out of room. */
MUST_CHECK int sent_list_group(struct sent_list *l, struct arena *a,
                               struct sent_groups *g);
/* The part named so, looked for from the cursor on; NULL if none. */
const struct sent_part *sent_list_find(struct sent_list *l,
                                       struct slice topic, int32_t id);

#endif
