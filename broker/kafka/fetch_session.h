/* Incremental fetch sessions (KIP-227), as Kafka's FetchSession.scala has
 * them: the broker remembers, per session, the partitions a client fetches
 * with their request parameters (fetch offset, max bytes, leader epoch)
 * and what it last told the client (high watermark, log start offset). A
 * client then sends only the partitions whose parameters changed, and the
 * broker answers only the partitions with news: records, a moved high
 * watermark or log start offset, or an error. An idle follower's round
 * carries no partitions either way.
 *
 * Session rules (SessionId, SessionEpoch of the request):
 *   - epoch -1 (FINAL): a full request without a session; a session it
 *     names is closed. Answered with SessionId 0.
 *   - epoch 0 (INITIAL): a full request that asks for a session; one it
 *     names is closed first. If a slot is free, or one can be evicted,
 *     the answer carries the new session's id (positive, random, unique)
 *     and the next request must carry epoch 1; else SessionId 0.
 *   - epoch > 0: incremental. An unknown id is FETCH_SESSION_ID_NOT_FOUND,
 *     another epoch than expected INVALID_FETCH_SESSION_EPOCH (the answer
 *     carries no partitions; the client starts over with a full request).
 *     The request's partitions are added or updated, its forgotten ones
 *     removed; a session left empty is closed and the request answered
 *     as sessionless. The epoch expected next is epoch + 1 (wrapping from
 *     INT32_MAX to 1).
 *   - A session that switches between topic names (v12-) and topic ids
 *     (v13+) is answered FETCH_SESSION_TOPIC_ID_ERROR and closed.
 * Eviction (max.incremental.fetch.session.cache.slots sessions at most):
 * a new session may take the slot of one unused for more than
 * FETCH_SESSION_EVICTION_MS; else of the least valuable evictable one, by
 * (privileged, partitions, id), when the new one is worth at least as
 * much. Followers' sessions are privileged: they may evict any consumer's
 * session, and their own are protected for FETCH_SESSION_EVICTION_MS
 * after creation. A consumer's session is evictable by anyone only once
 * that long after its creation. (Which sessions are evictable is judged
 * when each was last used, as Kafka does.)
 *
 * Pure: no I/O, no clock (time comes in), no libuv; allocates as sessions
 * grow. Loop thread only. */
#ifndef CAIRN_BROKER_FETCH_SESSION_H
#define CAIRN_BROKER_FETCH_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/meta/meta.h"
#include "common/meta/meta_index.h"

#define FETCH_SESSION_ID_NONE 0
#define FETCH_SESSION_EPOCH_INITIAL 0
#define FETCH_SESSION_EPOCH_FINAL (-1)
/* Kafka's: a session unused this long may be evicted by any other. */
#define FETCH_SESSION_EVICTION_MS 120000
/* max.incremental.fetch.session.cache.slots, Kafka's default. */
#define FETCH_SESSION_SLOTS_DEFAULT 1000

/* One partition of a session. */
struct fetch_session_entry {
    struct meta_uuid key;     /* the topic's id (v13+) or name key (v12-) */
    int32_t partition;
    uint32_t topic;           /* index into the session's topics */
    int64_t fetch_offset;
    int64_t log_start_offset; /* the fetcher's own (followers) */
    int32_t max_bytes;
    int32_t leader_epoch;     /* CurrentLeaderEpoch, -1: none */
    /* What the last answer that carried this partition said; -1 until
     * one did, and again after an error, so it is answered again. */
    int64_t sent_hw;
    int64_t sent_log_start;
    bool pending;             /* answered last time: look again */
    uint32_t eval_gen;        /* the glue's mark: looked at by request gen */
};

/* A topic of a session: its name and, from v13, its id. */
struct fetch_session_topic {
    struct meta_uuid key;
    struct meta_uuid id;
    char *name;
    uint32_t refs;            /* entries naming it */
};

struct fetch_session {
    int32_t id;
    int32_t epoch;            /* the one the next request must carry */
    bool privileged;          /* a follower's */
    bool uses_ids;            /* topic ids (v13+), not names */
    int32_t replica_id;       /* -1: a consumer's */
    int64_t created_ms;
    int64_t last_used_ms;
    bool evictable_all;       /* judged when last used */
    bool evictable_privileged;
    struct fetch_session_entry *entries;
    size_t n;
    size_t cap;
    struct meta_index index;  /* (key, partition) -> entry index + 1 */
    struct fetch_session_topic *topics;
    size_t n_topics;
    size_t cap_topics;
    struct meta_index topic_index; /* (key, META_INDEX_TOPIC) -> index + 1 */
    uint32_t *pending;        /* entries with pending set */
    size_t n_pending;
    size_t cap_pending;
    /* For the glue: the change sequence and removal count it has looked
     * at, and the request parked on this session (or NULL). */
    uint64_t seen_seq;
    uint64_t seen_removals;
    void *parked;
    uint32_t gen;             /* requests served (eval_gen's marks) */
};

struct fetch_session_cache {
    struct fetch_session **sessions;
    size_t n;
    size_t slots;             /* max.incremental.fetch.session.cache.slots */
    uint64_t rng;             /* xorshift state for session ids */
    uint64_t evictions;
    uint64_t partitions;      /* entries over every session */
    /* Called with each session about to be closed or evicted (it is
     * still whole); may be NULL. */
    void (*on_remove)(void *arg, struct fetch_session *s);
    void *arg;
};

/* How a request is served (fetch_session_begin()). */
enum fetch_session_mode {
    FETCH_SESSION_SESSIONLESS, /* full request, full answer, SessionId 0 */
    FETCH_SESSION_FULL,        /* full request, then try to create one */
    FETCH_SESSION_INCREMENTAL, /* apply the request to *s, answer news */
    FETCH_SESSION_ERROR,       /* answer *error, no partitions */
};

void fetch_session_cache_init(struct fetch_session_cache *c, size_t slots,
                              uint64_t seed);
void fetch_session_cache_free(struct fetch_session_cache *c);

/* What to do with a request carrying session id and epoch at now_ms.
 * INCREMENTAL sets *s to the session, already touched and with its next
 * epoch expected; ERROR sets *error. A full request's named session is
 * closed here. */
enum fetch_session_mode fetch_session_begin(struct fetch_session_cache *c,
                                            int32_t id, int32_t epoch,
                                            int64_t now_ms,
                                            struct fetch_session **s,
                                            int16_t *error);

/* A new session for a full request's partitions (then added with
 * fetch_session_put()), or NULL when no slot is free and none may be
 * evicted (or memory ran out): the answer then has SessionId 0. size is
 * the number of partitions it will hold. */
struct fetch_session *fetch_session_create(struct fetch_session_cache *c,
                                           bool privileged,
                                           int32_t replica_id,
                                           bool uses_ids, size_t size,
                                           int64_t now_ms);

/* The session with id, or NULL. */
struct fetch_session *fetch_session_get(const struct fetch_session_cache *c,
                                        int32_t id);

/* Closes s (its memory is freed). */
void fetch_session_remove(struct fetch_session_cache *c,
                          struct fetch_session *s);

/* Marks s used at now_ms (after partitions were added or removed, so
 * that its size counts). */
void fetch_session_touch(struct fetch_session *s, int64_t now_ms);

/* The epoch after epoch: +1, INT32_MAX -> 1, negative stays FINAL. */
int32_t fetch_session_next_epoch(int32_t epoch);

/* The key a session files a topic under: its id from v13, else a hash of
 * its name (meta_index_name_key()). */
struct meta_uuid fetch_session_key(bool uses_ids, const struct meta_uuid *id,
                                   const char *name, size_t name_len);

/* The entry for (key, partition), or NULL. */
struct fetch_session_entry *fetch_session_find(const struct fetch_session *s,
                                               const struct meta_uuid *key,
                                               int32_t partition);

/* Adds or updates (key, partition) with a request's parameters; name
 * (name_len bytes) and id name its topic. *out: the entry. RC_NOMEM
 * leaves the session as it was. */
struct fetch_session_params {
    int64_t fetch_offset;
    int64_t log_start_offset;
    int32_t max_bytes;
    int32_t leader_epoch;
};
MUST_CHECK int fetch_session_put(struct fetch_session_cache *c,
                                 struct fetch_session *s,
                                 const struct meta_uuid *key,
                                 const struct meta_uuid *id,
                                 const char *name, size_t name_len,
                                 int32_t partition,
                                 const struct fetch_session_params *params,
                                 struct fetch_session_entry **out);

/* Removes (key, partition); false when the session did not hold it.
 * Entry pointers and indexes taken before may then be stale. */
bool fetch_session_forget(struct fetch_session_cache *c,
                          struct fetch_session *s,
                          const struct meta_uuid *key, int32_t partition);

/* Whether an answer must carry e, given what the partition says now
 * (hw, log_start, records bytes, error), Kafka's rule; when it must and
 * commit is set, e remembers what was said (an error forgets the high
 * watermark, so the partition is answered again once it clears). */
bool fetch_session_must_answer(struct fetch_session_entry *e, int64_t hw,
                               int64_t log_start, int64_t records,
                               int16_t error, bool commit);

/* Sets the pending entries to exactly those of idx[0..n) (indexes into
 * s->entries): the ones the last answer carried, looked at again by the
 * next request whatever it names. Never allocates: the list has room
 * for every entry. */
void fetch_session_set_pending(struct fetch_session *s, const uint32_t *idx,
                               size_t n);

#endif
