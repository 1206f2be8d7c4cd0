/* The Fetch round of a follower's fetcher in a fetch session with its
 * leader (KIP-227; broker/replication/follower.h has the whole picture).
 *
 * The fetcher keeps what the leader's session holds for each partition
 * (its members): the fetch offset and leader epoch the last request that
 * named it said. A full request (epoch 0) names every partition fetched
 * from that leader and starts the session; then a request names only the
 * partitions whose offset or epoch moved, found among those an answer
 * carried or a sync freed (the dirty ones), and forgets those no longer
 * fetched there. Every partition is looked at again after a leadership
 * change, while some are held back, and every FETCHER__RESCAN_MS. An
 * idle follower's round thus names nothing and walks nothing. */
#include "broker/replication/follower_internal.h"

#include <stdlib.h>
#include <string.h>

#include "broker/replication/repair.h"
#include "common/arena.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"

/* --- The fetch session's partitions -------------------------------------- */

static struct member *member_find(const struct fetcher *f,
                                  const struct meta_uuid *topic_id, int32_t id)
{
    uintptr_t at = (uintptr_t)meta_index_get(&f->member_index, topic_id, id);
    return at == 0 ? NULL : &f->members[at - 1];
}

static struct member *member_add(struct fetcher *f,
                                 const struct meta_uuid *topic_id, int32_t id)
{
    if (f->n_members == f->cap_members) {
        size_t cap = f->cap_members == 0 ? 16 : f->cap_members * 2;
        void *grown = realloc(f->members, cap * sizeof *f->members);
        if (grown == NULL) {
            return NULL;
        }
        f->members = grown;
        f->cap_members = cap;
    }
    if (meta_index_put(&f->member_index, topic_id, id,
                       (void *)(uintptr_t)(f->n_members + 1)) != RC_OK) {
        return NULL;
    }
    struct member *m = &f->members[f->n_members++];
    *m = (struct member){.topic_id = *topic_id, .id = id};
    return m;
}

static void member_remove(struct fetcher *f, struct member *m)
{
    size_t i = (size_t)(m - f->members);
    size_t last = f->n_members - 1;
    (void)meta_index_remove(&f->member_index, &m->topic_id, m->id);
    if (i != last) {
        f->members[i] = f->members[last];
        /* The key is there: replacing its value never grows. */
        int rv = meta_index_put(&f->member_index, &f->members[i].topic_id,
                                f->members[i].id, (void *)(uintptr_t)(i + 1));
        ASSERT(rv == RC_OK);
    }
    f->n_members--;
}

void fetcher_session_restart(struct fetcher *f)
{
    f->session_epoch = 0;
    f->rescan = true;
}

/* p is looked at in the next request (its fetch offset may move). */
static void mark_dirty(struct fetcher *f, const struct partition *p)
{
    if (f->n_dirty == f->cap_dirty) {
        size_t cap = f->cap_dirty == 0 ? 16 : f->cap_dirty * 2;
        void *grown = realloc(f->dirty, cap * sizeof *f->dirty);
        if (grown == NULL) {
            f->rescan = true; /* looked at anyway */
            return;
        }
        f->dirty = grown;
        f->cap_dirty = cap;
    }
    f->dirty[f->n_dirty++] = (struct part_key){p->topic_id, p->id};
}

static struct meta_uuid uuid_of(const struct kafka_uuid *u)
{
    struct meta_uuid id;
    _Static_assert(sizeof id.b == sizeof u->bytes, "a UUID");
    memcpy(id.b, u->bytes, sizeof id.b);
    return id;
}

/* One partition of a Fetch answer: the session's member says at which
 * offset and epoch the leader read it. */
static void fetched_one(struct fetcher *f, const struct meta_uuid *topic_id,
                        const struct kafka_FetchablePartitionResponse *r)
{
    const struct member *m = member_find(f, topic_id, r->PartitionIndex);
    struct partition *p =
        m == NULL ? NULL
                  : replica_manager_find_id(f->rf->ps, topic_id,
                                            r->PartitionIndex);
    if (p == NULL || p->closing || p->follow != PARTITION_FOLLOW_FETCH ||
        p->leader != f->leader || p->leader_epoch != m->leader_epoch) {
        return; /* leadership moved meanwhile: drop the answer */
    }
    mark_dirty(f, p); /* its fetch offset may move: said next time */
    if (r->Records.ptr != NULL && r->Records.len > f->round_records_max) {
        f->round_records_max = r->Records.len;
    }
    if (m->throttled && r->Records.ptr != NULL) {
        throttle_record(f->rf->cfg.throttle, r->Records.len);
    }
    enum partition_fetched got = partition_follower_fetched(
        p, r->ErrorCode, m->fetch_offset, r->Records.ptr, r->Records.len,
        r->HighWatermark, r->LogStartOffset);
    if (got == PARTITION_FETCHED_APPENDED) {
        repair_after_fetch(p, r->HighWatermark);
    }
    if (got == PARTITION_FETCHED_FAILED || got == PARTITION_FETCHED_PAUSE) {
        f->errors = true;
    }
    if (got == PARTITION_FETCHED_APPENDED ||
        got == PARTITION_FETCHED_DIVERGED ||
        got == PARTITION_FETCHED_FAILED) {
        fetcher_wait_durable(f, p);
    }
    if (p->follow == PARTITION_FOLLOW_TRUNCATE) {
        f->maybe_truncating = true; /* the logs diverged */
    }
}

/* The session after an answer: a full request's answer names the new
 * session (0: none was made, the next request is full again); an
 * incremental one moves the epoch; a session error starts over. */
void fetcher_fetched_topic(struct fetcher *f,
                           const struct kafka_FetchableTopicResponse *t)
{
    struct meta_uuid topic_id = uuid_of(&t->TopicId);
    for (int32_t k = 0; k < t->PartitionsCnt; k++) {
        fetched_one(f, &topic_id, &t->Partitions[k]);
    }
}

void fetcher_session_answered(struct fetcher *f,
                              const struct kafka_FetchResponse *resp)
{
    if (resp->ErrorCode == KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND ||
        resp->ErrorCode == KAFKA_ERROR_INVALID_FETCH_SESSION_EPOCH ||
        resp->ErrorCode == KAFKA_ERROR_FETCH_SESSION_TOPIC_ID_ERROR) {
        TRACE_INFO(f->rf->tracer, "fetch session %d with broker %d: %s; "
                   "starting over", f->session_id, f->leader,
                   kafka_error_name(resp->ErrorCode));
        f->session_id = 0;
        fetcher_session_restart(f);
        return;
    }
    if (resp->ErrorCode != KAFKA_ERROR_NONE) {
        fetcher_session_restart(f);
        return;
    }
    if (f->session_epoch == 0) {
        f->session_id = resp->SessionId;
        f->session_epoch = resp->SessionId != 0 ? 1 : 0;
        return;
    }
    f->session_epoch = f->session_epoch == INT32_MAX ? 1
                                                     : f->session_epoch + 1;
}

/* --- Fetch in a session ------------------------------------------------- */

/* A Fetch request being built: the partitions it names (with what it
 * asks of each) and those it tells the leader to forget. */
struct fetch_build {
    struct member *named;
    size_t n_named;
    struct part_key *forgotten;
    size_t n_forgotten;
    size_t cap;       /* of both arrays */
    bool full;
};

static int build_room(struct fetch_build *fb)
{
    if (fb->n_named < fb->cap && fb->n_forgotten < fb->cap) {
        return RC_OK;
    }
    size_t cap = fb->cap == 0 ? 64 : fb->cap * 2;
    void *a = realloc(fb->named, cap * sizeof *fb->named);
    if (a == NULL) {
        return RC_NOMEM;
    }
    fb->named = a;
    void *b = realloc(fb->forgotten, cap * sizeof *fb->forgotten);
    if (b == NULL) {
        return RC_NOMEM;
    }
    fb->forgotten = b;
    fb->cap = cap;
    return RC_OK;
}

static int forget(struct fetcher *f, struct fetch_build *fb, struct member *m)
{
    int rv = build_room(fb);
    if (rv == RC_OK) {
        fb->forgotten[fb->n_forgotten++] =
            (struct part_key){m->topic_id, m->id};
        member_remove(f, m);
    }
    return rv;
}

/* What p's fetch asks now, in *out; false when p is left out of this
 * request (held back, or its log end not yet durable: asked for once
 * it is, the sync's callback driving the fetcher again). */
static bool ask_for(struct fetcher *f, struct partition *p, struct member *out)
{
    if (!repair_follower_ready(p)) {
        f->n_held++; /* damaged, still in the ISR: asked again later */
        return false;
    }
    if (!fetcher_offset_durable(p)) {
        fetcher_wait_durable(f, p);
        mark_dirty(f, p);
        return false;
    }
    bool held = false;
    bool throttled = fetcher_throttled(f, p, &held);
    if (held) {
        f->n_held++;
        return false;
    }
    int32_t max = f->session.partition_max_bytes;
    if (throttled && throttle_available(f->rf->cfg.throttle) < (int64_t)max) {
        max = (int32_t)throttle_available(f->rf->cfg.throttle);
    }
    *out = (struct member){.topic_id = p->topic_id,
                           .id = p->id,
                           .leader_epoch = p->leader_epoch,
                           .fetch_offset = log_end_offset(p->log),
                           .log_start_offset = log_start_offset(p->log),
                           .max_bytes = max,
                           .throttled = throttled};
    return true;
}

/* Puts p in the request if what it asks differs from what the session
 * holds (always, in a full request); forgets it when it is no longer
 * fetched from this leader. */
static int consider(struct fetcher *f, struct fetch_build *fb,
                    struct partition *p)
{
    struct member *m = member_find(f, &p->topic_id, p->id);
    struct member ask;
    if (!partition_follows(p, f->leader, PARTITION_FOLLOW_FETCH) ||
        !ask_for(f, p, &ask)) {
        return m != NULL ? forget(f, fb, m) : RC_OK;
    }
    bool same = m != NULL && m->leader_epoch == ask.leader_epoch &&
                m->fetch_offset == ask.fetch_offset &&
                m->throttled == ask.throttled;
    if (m == NULL) {
        m = member_add(f, &p->topic_id, p->id);
        if (m == NULL) {
            return RC_NOMEM;
        }
    }
    ask.mark = f->scan;
    if (same && !fb->full) {
        m->mark = f->scan; /* the leader holds it as it is */
        return RC_OK;
    }
    int rv = build_room(fb);
    if (rv == RC_OK) {
        *m = ask;
        fb->named[fb->n_named++] = ask;
    }
    return rv;
}

/* Every partition followed from this leader; session members no longer
 * among them are forgotten. */
static int consider_all(struct fetcher *f, struct fetch_build *fb)
{
    struct replica_manager *ps = f->rf->ps;
    f->scan++;
    f->rescan = false;
    f->scanned_ms = fetcher_now_ms(f);
    f->n_dirty = 0; /* every one is looked at now */
    int rv = RC_OK;
    for (size_t i = 0; rv == RC_OK && i < ps->n; i++) {
        /* One not fetched from this leader is left to the sweep below,
         * which forgets it if the session holds it: no lookup for the
         * partitions other leaders hold. */
        if (partition_follows(ps->parts[i], f->leader,
                              PARTITION_FOLLOW_FETCH)) {
            rv = consider(f, fb, ps->parts[i]);
        }
    }
    for (size_t i = f->n_members; rv == RC_OK && i > 0; i--) {
        struct member *m = &f->members[i - 1];
        if (m->mark != f->scan) {
            rv = forget(f, fb, m);
        }
    }
    return rv;
}

/* Only the partitions marked since the last request. */
static int consider_dirty(struct fetcher *f, struct fetch_build *fb)
{
    struct part_key *list = f->dirty;
    size_t n = f->n_dirty;
    f->dirty = NULL; /* marks made meanwhile go to a new list */
    f->n_dirty = f->cap_dirty = 0;
    int rv = RC_OK;
    for (size_t k = 0; rv == RC_OK && k < n; k++) {
        struct partition *p = replica_manager_find_id(
            f->rf->ps, &list[k].topic_id, list[k].id);
        struct member *m = member_find(f, &list[k].topic_id, list[k].id);
        if (p != NULL) {
            rv = consider(f, fb, p);
        } else if (m != NULL) {
            rv = forget(f, fb, m); /* no longer hosted here */
        }
    }
    free(list);
    return rv;
}

static int by_key(const void *a, const void *b)
{
    const struct part_key *x = a;
    const struct part_key *y = b;
    int c = memcmp(x->topic_id.b, y->topic_id.b, sizeof x->topic_id.b);
    return c != 0 ? c : (x->id > y->id) - (x->id < y->id);
}

static int by_member(const void *a, const void *b)
{
    const struct member *x = a;
    const struct member *y = b;
    int c = memcmp(x->topic_id.b, y->topic_id.b, sizeof x->topic_id.b);
    return c != 0 ? c : (x->id > y->id) - (x->id < y->id);
}

/* The named partitions, grouped by topic, as the request's topics. */
static int named_topics(const struct fetch_build *fb, struct arena *a,
                        struct kafka_FetchableTopic **out, int32_t *n_out)
{
    struct kafka_FetchableTopic *topics = NULL;
    struct kafka_FetchPartition *parts = NULL;
    int rv = arena_alloc(a, fb->n_named + 1, sizeof *topics, (void **)&topics);
    if (rv == RC_OK) {
        rv = arena_alloc(a, fb->n_named + 1, sizeof *parts, (void **)&parts);
    }
    if (rv != RC_OK) {
        return rv;
    }
    int32_t n = 0;
    for (size_t k = 0; k < fb->n_named; k++) {
        const struct member *m = &fb->named[k];
        if (k == 0 || !meta_uuid_eq(&m->topic_id, &fb->named[k - 1].topic_id)) {
            topics[n] = (struct kafka_FetchableTopic){.Partitions = parts + k};
            memcpy(topics[n].TopicId.bytes, m->topic_id.b, sizeof m->topic_id.b);
            n++;
        }
        parts[k] = (struct kafka_FetchPartition){
            .PartitionIndex = m->id,
            .CurrentLeaderEpoch = m->leader_epoch,
            .FetchOffset = m->fetch_offset,
            .LastFetchedEpoch = -1, /* Cairn's leaders send no diverging
                                     * epoch; truncation asks first */
            .LogStartOffset = m->log_start_offset,
            .PartitionMaxBytes = m->max_bytes};
        topics[n - 1].PartitionsCnt++;
    }
    *out = topics;
    *n_out = n;
    return RC_OK;
}

/* The forgotten partitions, grouped by topic. */
static int forgotten_topics(const struct fetch_build *fb, struct arena *a,
                            struct kafka_ForgottenTopic **out, int32_t *n_out)
{
    struct kafka_ForgottenTopic *topics = NULL;
    int32_t *ids = NULL;
    int rv = arena_alloc(a, fb->n_forgotten + 1, sizeof *topics,
                         (void **)&topics);
    if (rv == RC_OK) {
        rv = arena_alloc(a, fb->n_forgotten + 1, sizeof *ids, (void **)&ids);
    }
    if (rv != RC_OK) {
        return rv;
    }
    int32_t n = 0;
    for (size_t k = 0; k < fb->n_forgotten; k++) {
        const struct part_key *g = &fb->forgotten[k];
        if (k == 0 ||
            !meta_uuid_eq(&g->topic_id, &fb->forgotten[k - 1].topic_id)) {
            topics[n] = (struct kafka_ForgottenTopic){
                .ForgottenPartitionIndexes = ids + k};
            memcpy(topics[n].TopicId.bytes, g->topic_id.b,
                   sizeof g->topic_id.b);
            n++;
        }
        ids[k] = g->id;
        topics[n - 1].ForgottenPartitionIndexesCnt++;
    }
    *out = topics;
    *n_out = n;
    return RC_OK;
}

static int encode_fetch(struct fetcher *f, struct fetch_build *fb,
                        struct writer *w)
{
    qsort(fb->named, fb->n_named, sizeof *fb->named, by_member);
    qsort(fb->forgotten, fb->n_forgotten, sizeof *fb->forgotten, by_key);
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_FetchRequest rq = {
        .ReplicaId = f->rf->cfg.self,
        .MaxWaitMs = f->rf->cfg.wait_max_ms,
        .MinBytes = 1,
        .MaxBytes = f->rf->cfg.response_max_bytes,
        .IsolationLevel = 0,
        .SessionId = f->session_id,
        .SessionEpoch = f->session_epoch,
        .RackId = slice_from_str(""),
        .ReplicaEpoch = -1}; /* v15+ only */
    int rv = named_topics(fb, &a, (struct kafka_FetchableTopic **)&rq.Topics,
                          &rq.TopicsCnt);
    if (rv == RC_OK) {
        rv = forgotten_topics(
            fb, &a, (struct kafka_ForgottenTopic **)&rq.ForgottenTopicsData,
            &rq.ForgottenTopicsDataCnt);
    }
    if (rv == RC_OK) {
        rv = kafka_fetch_request_encode(w, FETCHER__VERSION_FETCH, &rq);
    }
    arena_free(&a);
    return rv;
}

/* A Fetch (v13, a long poll with the follower's own replica id) in the
 * session with the leader: a full one names every partition fetched
 * from it and starts the session over; an incremental one names only
 * those whose fetch offset or epoch moved, and forgets those no longer
 * fetched from it. RC_OK with f->n_sent 0 when there is nothing to
 * ask. */
int fetcher_build_fetch(struct fetcher *f, struct writer *w)
{
    struct fetch_build fb = {.full = f->session_epoch == 0};
    f->n_held = 0;
    if (fb.full) {
        f->n_members = 0;
        meta_index_clear(&f->member_index);
    }
    bool all = fb.full || f->rescan ||
               fetcher_now_ms(f) - f->scanned_ms >= FETCHER__RESCAN_MS;
    int rv = all ? consider_all(f, &fb) : consider_dirty(f, &fb);
    if (f->n_held > 0) {
        f->rescan = true; /* held back: looked at again next time */
    }
    bool ask = fb.full ? fb.n_named > 0
                       : f->n_members > 0 || fb.n_forgotten > 0;
    f->n_sent = 0;
    if (rv == RC_OK && ask) {
        rv = encode_fetch(f, &fb, w);
        f->n_sent = 1;
    }
    free(fb.named);
    free(fb.forgotten);
    return rv;
}


void fetcher_session_init(struct fetcher *f)
{
    meta_index_init(&f->member_index);
    fetcher_session_restart(f);
}

void fetcher_session_free(struct fetcher *f)
{
    free(f->members);
    free(f->dirty);
    meta_index_free(&f->member_index);
}
