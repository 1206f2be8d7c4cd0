/* What broker/replication/follower.c (the fetchers: connections, the
 * epochs round, the drive) and broker/replication/follower_fetch.c (the
 * Fetch round in a fetch session, KIP-227) share. Loop thread only. */
#ifndef CAIRN_BROKER_FOLLOWER_INTERNAL_H
#define CAIRN_BROKER_FOLLOWER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "broker/replication/follower.h"
#include "broker/replication/follower_session.h"
#include "broker/replication/sent_list.h"
#include "common/kafka/kafka_codec.h"
#include "common/meta/meta_index.h"
#include "common/writer.h"

/* v13: topics by id (KIP-516), and fetch sessions (KIP-227, from v7). */
#define FETCHER__VERSION_FETCH 13
#define FETCHER__VERSION_EPOCH 3
/* Every partition is looked at again this often even in an incremental
 * session, whatever changed meanwhile: a safety net, as every change the
 * fetcher must see (an answer, a sync, a leadership change, damage the
 * start-up check found) says so itself. A walk of every partition: at
 * 100,000 of them, every 5 s was a third of an idle broker's time. */
#define FETCHER__RESCAN_MS 60000
/* Plans (a walk of every partition) are this far apart at least. */
#define FOLLOWER__PLAN_INTERVAL_MS 200

/* A partition in the fetch session (KIP-227): what the leader holds for
 * it, i.e. what the last request that named it said. */
struct member {
    struct meta_uuid topic_id;
    int32_t id;
    int32_t leader_epoch;
    int64_t fetch_offset;
    int64_t log_start_offset;
    int32_t max_bytes;
    bool throttled;
    uint32_t mark;      /* the scan that last found it followed */
};

/* A partition to look at in the next request. */
struct part_key {
    struct meta_uuid topic_id;
    int32_t id;
};

struct fetcher {
    struct fetcher *next;
    struct follower *rf;
    int32_t leader;
    char host[META_HOST_BYTES_MAX + 1];
    int32_t port;
    struct follower_session session; /* the pure state machine */
    bool dead;          /* closing for good */
    int refs;           /* connection, timer, pending syncs */
    struct frame_conn *conn; /* open or connecting; NULL otherwise */
    uv_timer_t timer;
    int32_t correlation;
    int16_t api;        /* of the request in flight */
    struct sent_list sent; /* the OffsetForLeaderEpoch request in flight */
    size_t n_sent;      /* partitions the request in flight names */
    int pending_syncs;
    bool errors;        /* in the last answer: pause before the next */
    size_t round_records_max; /* the largest partition answer this round */
    size_t n_held;      /* left out of the last fetch by the throttle */
    /* The fetch session with the leader: its id (0: none) and the epoch
     * the next request carries (0: a full request, which starts one). */
    int32_t session_id;
    int32_t session_epoch;
    struct member *members;
    size_t n_members;
    size_t cap_members;
    struct meta_index member_index; /* (topic id, partition) -> index + 1 */
    uint32_t scan;      /* marks of the current full look */
    bool rescan;        /* look at every partition in the next request */
    bool maybe_truncating; /* some partition may wait for its epochs */
    int64_t scanned_ms; /* when every partition was last looked at */
    struct part_key *dirty; /* to look at in the next request */
    size_t n_dirty;
    size_t cap_dirty;
};

struct follower {
    uv_loop_t *loop;
    struct replica_manager *ps;
    struct follower_config cfg;
    struct tracer *tracer;
    struct fetcher *list;
    char client_id[32];
    uv_timer_t plan_timer;  /* the plan held back (follower_plan()) */
    uint64_t planned_ms;    /* when the last plan ran; 0: never */
    bool plan_due;          /* a plan waits for plan_timer */
};

/* follower.c: the loop's time; waits for p's log end to be durable
 * (then drives f again); whether p's fetch offset may be reported;
 * whether p counts against the follower throttle (*held: not this
 * round). */
int64_t fetcher_now_ms(const struct fetcher *f);
void fetcher_wait_durable(struct fetcher *f, struct partition *p);
bool fetcher_offset_durable(const struct partition *p);
bool fetcher_throttled(struct fetcher *f, const struct partition *p,
                       bool *held);

/* follower_fetch.c. */

/* The session's state at start, and freed. */
void fetcher_session_init(struct fetcher *f);
void fetcher_session_free(struct fetcher *f);
/* The next request starts the session over with a full request (closing
 * the old one at the leader), looking at every partition. */
void fetcher_session_restart(struct fetcher *f);
/* The Fetch request body for the session, in w; RC_OK with f->n_sent 0
 * when there is nothing to ask. */
int fetcher_build_fetch(struct fetcher *f, struct writer *w);
/* An answer's session fields, then each of its topics. */
void fetcher_session_answered(struct fetcher *f,
                              const struct kafka_FetchResponse *resp);
void fetcher_fetched_topic(struct fetcher *f,
                           const struct kafka_FetchableTopicResponse *t);

#endif
