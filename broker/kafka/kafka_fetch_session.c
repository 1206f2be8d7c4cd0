/* Fetch's incremental sessions (KIP-227; the rules are
 * broker/kafka/fetch_session.h's): what a request in a session looks at,
 * and what its answer carries.
 *
 * An incremental request looks only at the session's partitions that may
 * have news: those it names, those the last answer carried (pending),
 * and those changed since the session last looked, found on the replica
 * manager's list of changes (replica_manager_changed_since()); after a
 * partition was dropped here, at every one once. An idle session's round
 * thus costs the same at 100 and at 100,000 partitions. While it is
 * parked, a change to one of its partitions adds that one. */
#include "broker/kafka/kafka_fetch_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"

static int64_t now_ms(const struct fetch_wait *w)
{
    return (int64_t)uv_now(w->b->loop);
}

static struct meta_uuid uuid_of(const struct kafka_uuid *u)
{
    struct meta_uuid id;
    _Static_assert(sizeof id.b == sizeof u->bytes, "a UUID");
    memcpy(id.b, u->bytes, sizeof id.b);
    return id;
}

/* The key a request's topic (name or id) is filed under in a session. */
static struct meta_uuid request_key(bool uses_ids, struct slice name,
                                    const struct kafka_uuid *id)
{
    struct meta_uuid u = uuid_of(id);
    return fetch_session_key(uses_ids, &u, (const char *)name.ptr,
                             name.len);
}

/* The key partition p's topic is filed under in s. */
static struct meta_uuid partition_key(const struct fetch_session *s,
                                      const struct partition *p)
{
    return fetch_session_key(s->uses_ids, &p->topic_id, p->topic,
                             strlen(p->topic));
}

/* --- Looking at entries -------------------------------------------------- */

/* Adds entry i of w's session to what w looks at, once. */
static int look_at(struct fetch_wait *w, uint32_t i)
{
    struct fetch_session *s = w->session;
    struct fetch_session_entry *e = &s->entries[i];
    if (e->eval_gen == s->gen) {
        return RC_OK;
    }
    if (w->n_eval == w->cap_eval) {
        size_t cap = w->cap_eval == 0 ? 16 : w->cap_eval * 2;
        void *a = realloc(w->eval, cap * sizeof *w->eval);
        if (a != NULL) {
            w->eval = a;
        }
        void *b = realloc(w->eval_out, cap * sizeof *w->eval_out);
        if (b != NULL) {
            w->eval_out = b;
        }
        void *c = realloc(w->eval_spans, cap * sizeof *w->eval_spans);
        if (c != NULL) {
            w->eval_spans = c;
        }
        if (a == NULL || b == NULL || c == NULL) {
            return RC_NOMEM; /* what grew stays, at the old count */
        }
        w->cap_eval = cap;
    }
    e->eval_gen = s->gen;
    w->eval[w->n_eval] = i;
    w->eval_spans[w->n_eval] = (struct log_span){.fd = -1};
    w->n_eval++;
    return RC_OK;
}

/* Everything w's incremental request must look at (see the top). */
static int look_at_news(struct fetch_wait *w)
{
    struct fetch_session *s = w->session;
    bool uses_ids = s->uses_ids;
    int rv = RC_OK;
    for (int32_t i = 0; rv == RC_OK && i < w->rq.TopicsCnt; i++) {
        const struct kafka_FetchableTopic *t = &w->rq.Topics[i];
        struct meta_uuid key = request_key(uses_ids, t->Name, &t->TopicId);
        for (int32_t k = 0; rv == RC_OK && k < t->PartitionsCnt; k++) {
            const struct fetch_session_entry *e = fetch_session_find(
                s, &key, t->Partitions[k].PartitionIndex);
            if (e != NULL) { /* else forgotten by the same request */
                rv = look_at(w, (uint32_t)(e - s->entries));
            }
        }
    }
    for (size_t k = 0; rv == RC_OK && k < s->n_pending; k++) {
        rv = look_at(w, s->pending[k]);
    }
    const struct replica_manager *ps = &w->b->partitions;
    if (s->seen_removals != w->seen_removals) {
        for (size_t k = 0; rv == RC_OK && k < s->n; k++) {
            rv = look_at(w, (uint32_t)k); /* a partition went: all of it */
        }
    }
    for (const struct partition *p = replica_manager_changed_since(
             ps, s->seen_seq);
         rv == RC_OK && p != NULL;
         p = replica_manager_changed_next(p, s->seen_seq)) {
        struct meta_uuid key = partition_key(s, p);
        const struct fetch_session_entry *e = fetch_session_find(s, &key,
                                                                 p->id);
        if (e != NULL) {
            rv = look_at(w, (uint32_t)(e - s->entries));
        }
    }
    s->seen_seq = w->seen_seq;
    s->seen_removals = w->seen_removals;
    return rv;
}

/* --- Starting ------------------------------------------------------------ */

/* The request's partitions added or updated in s, its forgotten ones
 * removed (in Kafka's order: a partition both named and forgotten goes). */
static int apply_request(struct fetch_wait *w, struct fetch_session *s)
{
    struct fetch_session_cache *c = &w->b->fetch_sessions;
    for (int32_t i = 0; i < w->rq.TopicsCnt; i++) {
        const struct kafka_FetchableTopic *t = &w->rq.Topics[i];
        struct slice name = s->uses_ids ? w->names[i] : t->Name;
        if (slice_is_null(name)) {
            name = slice_from_str(""); /* an id the image does not know */
        }
        struct meta_uuid key = request_key(s->uses_ids, t->Name, &t->TopicId);
        struct meta_uuid id = uuid_of(&t->TopicId);
        for (int32_t k = 0; k < t->PartitionsCnt; k++) {
            const struct kafka_FetchPartition *in = &t->Partitions[k];
            struct fetch_session_params params = {
                .fetch_offset = in->FetchOffset,
                .log_start_offset = in->LogStartOffset,
                .max_bytes = in->PartitionMaxBytes,
                .leader_epoch = in->CurrentLeaderEpoch};
            struct fetch_session_entry *e = NULL;
            int rv = fetch_session_put(c, s, &key, &id, (const char *)name.ptr,
                                       name.len, in->PartitionIndex, &params,
                                       &e);
            if (rv != RC_OK) {
                return rv;
            }
        }
    }
    for (int32_t i = 0; i < w->rq.ForgottenTopicsDataCnt; i++) {
        const struct kafka_ForgottenTopic *t = &w->rq.ForgottenTopicsData[i];
        struct meta_uuid key = request_key(s->uses_ids, t->Name, &t->TopicId);
        for (int32_t k = 0; k < t->ForgottenPartitionIndexesCnt; k++) {
            fetch_session_forget(c, s, &key, t->ForgottenPartitionIndexes[k]);
        }
    }
    return RC_OK;
}

/* The request is answered at once with error and no partitions. */
static bool session_error(struct fetch_wait *w, int16_t error)
{
    w->mode = FETCH_SESSION_ERROR;
    w->session_error = error;
    w->session = NULL;
    fetch_answer(w);
    return false;
}

bool fetch_session_start(struct fetch_wait *w)
{
    struct broker *b = w->b;
    struct fetch_session_cache *c = &b->fetch_sessions;
    w->mode = FETCH_SESSION_SESSIONLESS;
    if (w->req->api_version < 7) { /* sessions came with v7 */
        return true;
    }
    w->seen_seq = b->partitions.change_seq;
    w->seen_removals = b->partitions.removals;
    struct fetch_session *s = NULL;
    int16_t error = KAFKA_ERROR_NONE;
    w->mode = fetch_session_begin(c, w->rq.SessionId, w->rq.SessionEpoch,
                                  now_ms(w), &s, &error);
    if (w->mode == FETCH_SESSION_ERROR) {
        return session_error(w, error);
    }
    if (w->mode != FETCH_SESSION_INCREMENTAL) {
        return true;
    }
    if (s->uses_ids != (w->req->api_version >= 13)) {
        fetch_session_remove(c, s);
        return session_error(w, KAFKA_ERROR_FETCH_SESSION_TOPIC_ID_ERROR);
    }
    if (apply_request(w, s) != RC_OK) {
        fetch_session_remove(c, s); /* the client starts over */
        return session_error(w, KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND);
    }
    if (s->n == 0) { /* nothing left: closed, answered without one */
        fetch_session_remove(c, s);
        w->mode = FETCH_SESSION_SESSIONLESS;
        return true;
    }
    w->session = s;
    s->gen++;
    if (look_at_news(w) != RC_OK) {
        fetch_session_remove(c, s);
        return session_error(w, KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND);
    }
    return true;
}

/* --- Reading ------------------------------------------------------------- */

/* The topic of e as fetch_one() finds it in the image now. */
static struct fetch_target target_of(const struct fetch_wait *w,
                                     const struct fetch_session_entry *e)
{
    const struct fetch_session *s = w->session;
    const struct fetch_session_topic *t = &s->topics[e->topic];
    const struct meta_image *img = membership_image(w->b->membership);
    const struct meta_topic *mt =
        img == NULL ? NULL
        : s->uses_ids ? meta_image_topic_by_id(img, &t->id)
                      : meta_image_topic(img, t->name);
    struct fetch_target out = {slice_from_str(t->name), {{0}}};
    if (mt != NULL) {
        out.id = mt->id;
    } else if (s->uses_ids) {
        out.name = slice_null(); /* UNKNOWN_TOPIC_ID */
    }
    return out;
}

int64_t fetch_session_evaluate(struct fetch_wait *w, bool *error)
{
    struct fetch_session *s = w->session;
    int64_t total = 0;
    int64_t budget = w->rq.MaxBytes > 0 ? w->rq.MaxBytes : INT32_MAX;
    *error = false;
    w->hw_news = false;
    for (size_t k = 0; s != NULL && k < w->n_eval; k++) {
        const struct fetch_session_entry *e = &s->entries[w->eval[k]];
        struct fetch_target target = target_of(w, e);
        struct kafka_FetchPartition in = {
            .PartitionIndex = e->partition,
            .CurrentLeaderEpoch = e->leader_epoch,
            .FetchOffset = e->fetch_offset,
            .LastFetchedEpoch = -1,
            .LogStartOffset = e->log_start_offset,
            .PartitionMaxBytes = e->max_bytes};
        struct kafka_FetchablePartitionResponse *out = &w->eval_out[k];
        log_span_release(&w->eval_spans[k]);
        fetch_one(w, &target, &in, budget - total, total == 0, out,
                  &w->eval_spans[k]);
        if (out->RecordsBytes > 0) {
            out->records_arg = &w->eval_spans[k];
            total += out->RecordsBytes;
        }
        *error |= out->ErrorCode != KAFKA_ERROR_NONE;
        w->hw_news |= out->ErrorCode == KAFKA_ERROR_NONE &&
                      out->HighWatermark != e->sent_hw;
    }
    return total;
}

void fetch_session_record_replica(struct fetch_wait *w)
{
    struct fetch_session *s = w->session;
    int64_t now = now_ms(w);
    for (size_t k = 0; s != NULL && k < w->n_eval; k++) {
        const struct fetch_session_entry *e = &s->entries[w->eval[k]];
        struct fetch_target target = target_of(w, e);
        struct partition *p =
            slice_is_null(target.name) || meta_uuid_is_zero(&target.id)
                ? NULL
                : replica_manager_find_id(&w->b->partitions, &target.id,
                                          e->partition);
        if (p == NULL ||
            (e->leader_epoch >= 0 && e->leader_epoch != p->leader_epoch)) {
            continue; /* answered with an error */
        }
        if (partition_replica_fetch(p, w->rq.ReplicaId, e->fetch_offset,
                                    now) != RC_OK) {
            continue; /* not leading, not a replica: answered the error */
        }
    }
}

bool fetch_session_reads(struct fetch_wait *w, const struct partition *p)
{
    struct fetch_session *s = w->session;
    if (s == NULL) {
        return false;
    }
    struct meta_uuid key = partition_key(s, p);
    const struct fetch_session_entry *e = fetch_session_find(s, &key, p->id);
    return e != NULL && look_at(w, (uint32_t)(e - s->entries)) == RC_OK;
}

void fetch_session_drop_spans(struct fetch_wait *w)
{
    for (size_t k = 0; k < w->n_eval; k++) {
        log_span_release(&w->eval_spans[k]);
    }
}

void fetch_session_release(struct fetch_wait *w)
{
    fetch_session_drop_spans(w);
    free(w->eval);
    free(w->eval_out);
    free(w->eval_spans);
    w->eval = NULL;
    w->eval_out = NULL;
    w->eval_spans = NULL;
    w->n_eval = w->cap_eval = 0;
    if (w->session != NULL && w->session->parked == w) {
        w->session->parked = NULL;
    }
}

/* --- Answering ----------------------------------------------------------- */

/* FULL: a session with the request's partitions and what the answer
 * says of each, or none (SessionId 0) when no slot is free. */
static int32_t create_session(struct fetch_wait *w)
{
    struct fetch_session_cache *c = &w->b->fetch_sessions;
    size_t n = 0;
    for (int32_t i = 0; i < w->rq.TopicsCnt; i++) {
        n += (size_t)w->rq.Topics[i].PartitionsCnt;
    }
    bool uses_ids = w->req->api_version >= 13;
    struct fetch_session *s =
        n == 0 ? NULL
               : fetch_session_create(c, w->rq.ReplicaId >= 0,
                                      w->rq.ReplicaId, uses_ids, n,
                                      now_ms(w));
    if (s == NULL) {
        return FETCH_SESSION_ID_NONE;
    }
    int rv = apply_request(w, s);
    uint32_t *again = NULL; /* answered with records or an error */
    if (rv == RC_OK) {
        rv = arena_alloc(&w->arena, n, sizeof *again, (void **)&again);
    }
    size_t n_again = 0;
    for (int32_t i = 0; rv == RC_OK && i < w->rq.TopicsCnt; i++) {
        const struct kafka_FetchableTopic *t = &w->rq.Topics[i];
        struct meta_uuid key = request_key(uses_ids, t->Name, &t->TopicId);
        for (int32_t k = 0; k < t->PartitionsCnt; k++) {
            const struct kafka_FetchablePartitionResponse *r =
                &w->topics[i].Partitions[k];
            struct fetch_session_entry *e = fetch_session_find(
                s, &key, t->Partitions[k].PartitionIndex);
            if (e != NULL && fetch_session_must_answer(
                                 e, r->HighWatermark, r->LogStartOffset,
                                 r->RecordsBytes, r->ErrorCode, true) &&
                (r->RecordsBytes > 0 || r->ErrorCode != KAFKA_ERROR_NONE)) {
                again[n_again++] = (uint32_t)(e - s->entries);
            }
        }
    }
    if (rv != RC_OK) {
        fetch_session_remove(c, s);
        return FETCH_SESSION_ID_NONE;
    }
    fetch_session_set_pending(s, again, n_again);
    s->seen_seq = w->seen_seq;
    s->seen_removals = w->seen_removals;
    fetch_session_touch(s, now_ms(w));
    return s->id;
}

/* Orders positions in w->eval by their entries' topics. */
static int by_topic(const void *a, const void *b, void *arg)
{
    const struct fetch_wait *w = arg;
    const struct fetch_session_entry *e = w->session->entries;
    uint32_t ta = e[w->eval[*(const uint32_t *)a]].topic;
    uint32_t tb = e[w->eval[*(const uint32_t *)b]].topic;
    return ta < tb ? -1 : ta > tb ? 1 : 0;
}

/* The answers at positions keep[0..n) of w->eval, grouped by topic into
 * resp (arrays in w's arena; record spans stay w's until spliced). */
static int group_news(struct fetch_wait *w, uint32_t *keep, size_t n,
                      struct kafka_FetchResponse *resp)
{
    const struct fetch_session *s = w->session;
    qsort_r(keep, n, sizeof *keep, by_topic, w);
    size_t n_topics = 0;
    for (size_t j = 0; j < n; j++) {
        uint32_t t = s->entries[w->eval[keep[j]]].topic;
        if (j == 0 || t != s->entries[w->eval[keep[j - 1]]].topic) {
            n_topics++;
        }
    }
    struct kafka_FetchableTopicResponse *topics = NULL;
    struct kafka_FetchablePartitionResponse *parts = NULL;
    int rv = arena_alloc(&w->arena, n_topics + 1, sizeof *topics,
                         (void **)&topics);
    if (rv == RC_OK) {
        rv = arena_alloc(&w->arena, n + 1, sizeof *parts, (void **)&parts);
    }
    if (rv != RC_OK) {
        return rv;
    }
    size_t at = 0;
    for (size_t j = 0; j < n; j++) {
        parts[j] = w->eval_out[keep[j]];
        const struct fetch_session_topic *t =
            &s->topics[s->entries[w->eval[keep[j]]].topic];
        if (j == 0 || s->entries[w->eval[keep[j]]].topic !=
                          s->entries[w->eval[keep[j - 1]]].topic) {
            struct kafka_FetchableTopicResponse *tr = &topics[at++];
            *tr = (struct kafka_FetchableTopicResponse){
                .Topic = slice_from_str(t->name), .Partitions = parts + j};
            memcpy(tr->TopicId.bytes, t->id.b, sizeof tr->TopicId.bytes);
        }
        topics[at - 1].PartitionsCnt++;
    }
    resp->Responses = topics;
    resp->ResponsesCnt = (int32_t)n_topics;
    return RC_OK;
}

/* INCREMENTAL: the entries looked at that have news, grouped by topic
 * into resp; they are looked at again by the next request. */
static int answer_news(struct fetch_wait *w, struct kafka_FetchResponse *resp)
{
    struct fetch_session *s = w->session;
    uint32_t *keep = NULL; /* positions in w->eval */
    uint32_t *idx = NULL;  /* their entries */
    int rv = arena_alloc(&w->arena, w->n_eval + 1, sizeof *keep,
                         (void **)&keep);
    if (rv == RC_OK) {
        rv = arena_alloc(&w->arena, w->n_eval + 1, sizeof *idx,
                         (void **)&idx);
    }
    if (rv != RC_OK) {
        return rv;
    }
    size_t n = 0;
    for (size_t k = 0; k < w->n_eval; k++) {
        struct fetch_session_entry *e = &s->entries[w->eval[k]];
        const struct kafka_FetchablePartitionResponse *out = &w->eval_out[k];
        if (fetch_session_must_answer(e, out->HighWatermark,
                                      out->LogStartOffset, out->RecordsBytes,
                                      out->ErrorCode, true)) {
            keep[n] = (uint32_t)k;
            idx[n++] = w->eval[k];
        } else {
            log_span_release(&w->eval_spans[k]);
        }
    }
    fetch_session_set_pending(s, idx, n);
    return group_news(w, keep, n, resp);
}

int fetch_session_answer(struct fetch_wait *w, struct kafka_FetchResponse *resp)
{
    resp->ErrorCode = KAFKA_ERROR_NONE;
    resp->SessionId = FETCH_SESSION_ID_NONE;
    if (w->mode == FETCH_SESSION_ERROR) {
        resp->ErrorCode = w->session_error;
        resp->ResponsesCnt = 0;
        return RC_OK;
    }
    if (w->mode == FETCH_SESSION_FULL) {
        resp->SessionId = create_session(w);
        return RC_OK;
    }
    if (w->mode != FETCH_SESSION_INCREMENTAL || w->session == NULL) {
        return RC_OK;
    }
    resp->SessionId = w->session->id;
    return answer_news(w, resp);
}

/* --- The cache and the ISR ----------------------------------------------- */

void fetch_session_removed(void *arg, struct fetch_session *s)
{
    (void)arg;
    struct fetch_wait *w = s->parked;
    if (w == NULL) {
        return;
    }
    /* Answered on the next turn: this may run while another answer is
     * being made, or a walk of the parked requests is under way. */
    s->parked = NULL;
    fetch_session_drop_spans(w);
    w->mode = FETCH_SESSION_ERROR;
    w->session_error = KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND;
    w->session = NULL;
    fetch_answer_soon(w);
}

int64_t kafka_fetch_replica_seen(void *arg, const struct partition *p,
                                 int32_t replica, int64_t fetch_offset)
{
    const struct broker *b = arg;
    const struct fetch_session_cache *c = &b->fetch_sessions;
    const struct fetch_session *best = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const struct fetch_session *s = c->sessions[i];
        if (s->privileged && s->replica_id == replica &&
            (best == NULL || s->last_used_ms > best->last_used_ms)) {
            best = s;
        }
    }
    if (best == NULL) {
        return -1;
    }
    struct meta_uuid key = partition_key(best, p);
    const struct fetch_session_entry *e = fetch_session_find(best, &key,
                                                             p->id);
    bool holds = e != NULL && e->fetch_offset == fetch_offset &&
                 (e->leader_epoch < 0 || e->leader_epoch == p->leader_epoch);
    return holds ? best->last_used_ms : -1;
}

void kafka_fetch_sessions_init(struct broker *b, size_t slots)
{
    fetch_session_cache_init(&b->fetch_sessions, slots,
                             uv_hrtime() ^ (uint64_t)b->id);
    b->fetch_sessions.on_remove = fetch_session_removed;
    b->fetch_sessions.arg = b;
}

void kafka_fetch_sessions_close(struct broker *b)
{
    b->fetch_sessions.on_remove = NULL; /* parked fetches are answered */
    fetch_session_cache_free(&b->fetch_sessions);
}
