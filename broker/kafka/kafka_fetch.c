/* Fetch (broker/broker.h): whole batches from the one holding each fetch
 * offset, only below the high watermark for consumers and up to the log
 * end for followers (ReplicaId >= 0, whose fetch offsets the leader
 * records for the high watermark and the ISR), record bytes spliced in from
 * the segment files (sent with sendfile(2) by the listener). A fetch that finds
 * fewer than MinBytes is parked until a high watermark it reads moves or
 * MaxWaitMs passes, so caught-up consumers do not spin. From v13 topics
 * come as ids, mapped to names through the metadata image once, when the
 * request arrives; an id the image does not hold is answered with
 * UNKNOWN_TOPIC_ID per partition, as Kafka does. From v7 a client may
 * keep an incremental fetch session (KIP-227,
 * broker/kafka/kafka_fetch_session.c): then only what changed travels,
 * each way. */
#include "broker/broker.h"
#include "broker/kafka/kafka_fetch_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "broker/log/log_verify.h"
#include "broker/replication/repair.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"

/* Parked long polls on one broker; beyond it a fetch answers at once. */
#define FETCH__WAITS_MAX 4096


static void unlink_wait(struct fetch_wait *w)
{
    if (!w->parked) {
        return;
    }
    struct broker *b = w->b;
    if (w->prev != NULL) {
        w->prev->next = w->next;
    } else {
        b->fetch_waits = w->next;
    }
    if (w->next != NULL) {
        w->next->prev = w->prev;
    }
    w->parked = false;
    b->n_fetch_waits--;
}

static void wait_closed_cb(uv_handle_t *h)
{
    struct fetch_wait *w = h->data;
    arena_free(&w->arena);
    free(w);
}

static size_t n_partitions(const struct fetch_wait *w)
{
    size_t n = 0;
    for (int32_t i = 0; i < w->rq.TopicsCnt; i++) {
        n += (size_t)w->rq.Topics[i].PartitionsCnt;
    }
    return n;
}

static void release_spans(struct fetch_wait *w)
{
    size_t n = n_partitions(w);
    for (size_t i = 0; i < n; i++) {
        log_span_release(&w->spans[i]);
    }
}

/* Whether a follower's fetch of p counts against
 * leader.replication.throttled.rate. */
static bool fetch_throttled(struct broker *b, const struct partition *p,
                            int32_t replica)
{
    return throttle_on(&b->leader_throttle) &&
           replica_manager_move_throttled(&b->partitions, p, replica);
}

/* Checks the batches of span by CRC-32C before they are sent: a bad one
 * and everything after it stay here; with none intact before it the
 * partition is answered with KAFKA_STORAGE_ERROR (clients then refresh
 * their metadata and retry, by when leadership may have moved). */
static void verify(struct fetch_wait *w, struct partition *p,
                   struct log_span *span,
                   struct kafka_FetchablePartitionResponse *out)
{
    struct broker *b = w->b;
    if (!b->fetch_verify_crc || span->bytes == 0) {
        return;
    }
    struct log_verify v;
    int64_t intact = repair_check_read(p, span, b->fetch_verify_buf,
                                       sizeof b->fetch_verify_buf, &v);
    if (v.rc == RC_OK) {
        return;
    }
    b->fetch_corrupt_batches++;
    TRACE_ERROR(&b->tracer, "partition=%s-%d offset=%" PRId64 " segment=%s/"
                "%020" PRId64 ".log position=%" PRId64 " batch not served: "
                "%s; %" PRId64 " intact bytes before it go to %s %d",
                p->topic, p->id, v.stop_offset, v.dir, v.segment_base,
                v.bad_position, rc_str(v.rc), v.intact_bytes,
                w->rq.ReplicaId >= 0 ? "replica" : "consumer",
                w->rq.ReplicaId);
    if (v.rc == RC_IO) {
        replica_manager_io_failed(&b->partitions, p, v.rc, "a read");
    }
    if (intact < 0) {
        log_span_release(span);
        out->ErrorCode = KAFKA_ERROR_KAFKA_STORAGE_ERROR;
        return;
    }
    span->bytes = intact;
}

/* The partition led here that in asks to read, in *out, or the
 * ErrorCode that says why it may not be read. */
static int16_t fetch_partition(struct fetch_wait *w,
                               const struct fetch_target *t,
                               const struct kafka_FetchPartition *in,
                               struct partition **out)
{
    if (slice_is_null(t->name)) {
        return KAFKA_ERROR_UNKNOWN_TOPIC_ID;
    }
    struct partition *p =
        meta_uuid_is_zero(&t->id)
            ? NULL
            : replica_manager_find_id(&w->b->partitions, &t->id,
                                      in->PartitionIndex);
    if (p == NULL || !partition_is_leader(p)) {
        return broker_not_leader_error(w->b, t->name, in->PartitionIndex);
    }
    if (w->b->partitions.dir_failed) { /* the broker is on its way out */
        return KAFKA_ERROR_KAFKA_STORAGE_ERROR;
    }
    int16_t error = partition_check_reader(p, in->CurrentLeaderEpoch,
                                           w->rq.ReplicaId);
    if (error == KAFKA_ERROR_NONE) {
        *out = p;
    }
    return error;
}

void fetch_one(struct fetch_wait *w, const struct fetch_target *target,
               const struct kafka_FetchPartition *in, int64_t budget,
               bool first, struct kafka_FetchablePartitionResponse *out,
               struct log_span *span)
{
    *out = (struct kafka_FetchablePartitionResponse){
        .PartitionIndex = in->PartitionIndex, .HighWatermark = -1,
        .LastStableOffset = -1, .LogStartOffset = -1,
        .AbortedTransactionsCnt = -1, .PreferredReadReplica = -1,
        .RecordsBytes = 0}; /* errors carry an empty record set, as
                             * Kafka's do: librdkafka refuses null */
    struct partition *p = NULL;
    out->ErrorCode = fetch_partition(w, target, in, &p);
    if (out->ErrorCode != KAFKA_ERROR_NONE) {
        return;
    }
    bool replica = w->rq.ReplicaId >= 0;
    out->HighWatermark = p->hw;
    out->LastStableOffset = p->hw;
    out->LogStartOffset = log_start_offset(p->log);
    int64_t max = in->PartitionMaxBytes < budget ? in->PartitionMaxBytes
                                                 : budget;
    if (max <= 0 && !first) {
        out->RecordsBytes = 0; /* the response's MaxBytes is spent */
        return;
    }
    if (max <= 0) {
        max = 1; /* the first batch still goes whole (KIP-74) */
    }
    bool throttled = replica && fetch_throttled(w->b, p, w->rq.ReplicaId);
    if (throttled &&
        !throttle_allows(&w->b->leader_throttle, uv_now(w->b->loop))) {
        out->RecordsBytes = 0; /* over the rate: nothing this round */
        return;
    }
    if (throttled && throttle_available(&w->b->leader_throttle) < max) {
        max = throttle_available(&w->b->leader_throttle);
    }
    int rv = partition_read(p, replica, in->FetchOffset, max, span);
    if (rv == RC_IO) {
        replica_manager_io_failed(&w->b->partitions, p, rv, "a read");
    }
    if (rv != RC_OK) {
        out->ErrorCode = kafka_error_from_rc(rv);
        return;
    }
    verify(w, p, span, out);
    if (throttled) {
        throttle_record(&w->b->leader_throttle,
                        span->bytes > 0 ? (uint64_t)span->bytes : 0);
    }
    out->RecordsBytes = (int32_t)span->bytes;
    if (span->bytes == 0) {
        log_span_release(span);
    }
}

/* Reads every partition of the request; returns the record bytes found
 * and whether any partition answered with an error. */
static int64_t evaluate_request(struct fetch_wait *w, bool *error)
{
    int64_t total = 0;
    int64_t budget = w->rq.MaxBytes > 0 ? w->rq.MaxBytes : INT32_MAX;
    *error = false;
    size_t flat = 0;
    for (int32_t i = 0; i < w->rq.TopicsCnt; i++) {
        const struct kafka_FetchableTopic *t = &w->rq.Topics[i];
        struct kafka_FetchableTopicResponse *tr = &w->topics[i];
        for (int32_t k = 0; k < t->PartitionsCnt; k++, flat++) {
            struct kafka_FetchablePartitionResponse *out =
                (struct kafka_FetchablePartitionResponse *)&tr->Partitions[k];
            struct log_span *span = &w->spans[flat];
            log_span_release(span);
            struct fetch_target target = {w->names[i], w->ids[i]};
            fetch_one(w, &target, &t->Partitions[k], budget - total,
                      total == 0, out, span);
            if (out->RecordsBytes > 0) {
                out->records_arg = span;
                total += out->RecordsBytes;
            }
            *error |= out->ErrorCode != KAFKA_ERROR_NONE;
        }
    }
    return total;
}

/* Whether the answer goes now: MinBytes reached, an error, or, for a
 * follower in a fetch session, a high watermark it has not been told
 * (a new session's first answer tells every one). Kafka's leader waits
 * for MinBytes; here a follower learns a high watermark about one round
 * trip after it moves, not MaxWaitMs later, so a follower elected
 * leader soon after has the high watermark its leader had. */
static bool ready(const struct fetch_wait *w, int64_t bytes, bool error)
{
    bool follower = w->rq.ReplicaId >= 0;
    return error || bytes >= w->rq.MinBytes ||
           (follower && w->mode == FETCH_SESSION_FULL) ||
           (follower && w->mode == FETCH_SESSION_INCREMENTAL && w->hw_news);
}

/* Reads what the answer may carry: the request's partitions, or those of
 * its session that may have news. */
static int64_t evaluate(struct fetch_wait *w, bool *error)
{
    if (w->mode == FETCH_SESSION_INCREMENTAL) {
        return fetch_session_evaluate(w, error);
    }
    if (w->mode == FETCH_SESSION_ERROR) {
        *error = true;
        return 0;
    }
    return evaluate_request(w, error);
}

static int splice_cb(void *arg, struct writer *wr,
                     const struct kafka_FetchablePartitionResponse *p,
                     size_t at)
{
    struct kafka_response *resp = arg;
    (void)wr;
    (void)at;
    struct kafka_FetchablePartitionResponse *mp =
        (struct kafka_FetchablePartitionResponse *)(uintptr_t)p;
    struct log_span *span = mp->records_arg;
    mp->records_arg = NULL;
    int rv = kafka_response_splice(resp, span);
    *span = (struct log_span){.fd = -1}; /* the response owns it now */
    return rv;
}

void fetch_answer(struct fetch_wait *w)
{
    unlink_wait(w);
    uv_timer_stop(&w->timer);
    struct kafka_FetchResponse resp = {.Responses = w->topics,
                                       .ResponsesCnt = w->rq.TopicsCnt};
    struct kafka_response out;
    kafka_response_init(&out);
    int rv = w->mode == FETCH_SESSION_SESSIONLESS
                 ? RC_OK
                 : fetch_session_answer(w, &resp);
    if (rv == RC_OK) {
        rv = kafka_fetch_response_encode(&out.body, w->req->api_version,
                                         &resp, splice_cb, &out);
    }
    release_spans(w);
    fetch_session_release(w);
    if (rv != RC_OK || out.body.rc != RC_OK) {
        kafka_response_free(&out);
        kafka_close_conn(w->req, "Fetch response could not be encoded");
    } else {
        kafka_reply(w->req, &out);
    }
    uv_close((uv_handle_t *)&w->timer, wait_closed_cb);
}

static void expired_cb(uv_timer_t *t)
{
    struct fetch_wait *w = t->data;
    bool error = false;
    evaluate(w, &error);
    fetch_answer(w);
}

void fetch_answer_soon(struct fetch_wait *w)
{
    uv_timer_start(&w->timer, expired_cb, 0, 0);
}

static void park(struct fetch_wait *w)
{
    struct broker *b = w->b;
    w->next = b->fetch_waits;
    w->prev = NULL;
    if (b->fetch_waits != NULL) {
        b->fetch_waits->prev = w;
    }
    b->fetch_waits = w;
    b->n_fetch_waits++;
    w->parked = true;
    if (w->session != NULL) {
        w->session->parked = w;
    }
    uv_timer_start(&w->timer, expired_cb, (uint64_t)w->rq.MaxWaitMs, 0);
}

/* Whether w reads p (and, in a session, p has news for w). */
static bool reads(struct fetch_wait *w, const struct partition *p)
{
    if (w->mode == FETCH_SESSION_INCREMENTAL) {
        return fetch_session_reads(w, p);
    }
    for (int32_t i = 0; i < w->rq.TopicsCnt; i++) {
        const struct kafka_FetchableTopic *t = &w->rq.Topics[i];
        if (slice_is_null(w->names[i]) ||
            !meta_uuid_eq(&w->ids[i], &p->topic_id)) {
            continue;
        }
        for (int32_t k = 0; k < t->PartitionsCnt; k++) {
            if (t->Partitions[k].PartitionIndex == p->id) {
                return true;
            }
        }
    }
    return false;
}

void kafka_fetch_hw_moved(void *arg, struct partition *p)
{
    struct broker *b = arg;
    struct fetch_wait *w = b->fetch_waits;
    while (w != NULL) {
        struct fetch_wait *next = w->next;
        if (reads(w, p)) {
            bool error = false;
            int64_t bytes = evaluate(w, &error);
            if (ready(w, bytes, error)) {
                fetch_answer(w);
            } else {
                release_spans(w);
                fetch_session_drop_spans(w);
            }
        }
        w = next;
    }
}

void kafka_fetch_flush(struct broker *b)
{
    while (b->fetch_waits != NULL) {
        struct fetch_wait *w = b->fetch_waits;
        bool error = false;
        evaluate(w, &error);
        fetch_answer(w);
    }
}

/* A follower's fetch offsets are its log end offsets: the leader records
 * them (high watermark, ISR) when the request arrives. */
static void record_replica(struct fetch_wait *w)
{
    int64_t now = (int64_t)uv_now(w->b->loop);
    for (int32_t i = 0; i < w->rq.TopicsCnt; i++) {
        const struct kafka_FetchableTopic *t = &w->rq.Topics[i];
        for (int32_t k = 0; k < t->PartitionsCnt; k++) {
            const struct kafka_FetchPartition *in = &t->Partitions[k];
            struct partition *p =
                meta_uuid_is_zero(&w->ids[i])
                    ? NULL
                    : replica_manager_find_id(&w->b->partitions, &w->ids[i],
                                              in->PartitionIndex);
            if (p == NULL || (in->CurrentLeaderEpoch >= 0 &&
                              in->CurrentLeaderEpoch != p->leader_epoch)) {
                continue; /* answered with an error by fetch_one() */
            }
            /* Not leading, not a replica, an offset beyond the log end:
             * nothing recorded, and fetch_one() answers the error. */
            if (partition_replica_fetch(p, w->rq.ReplicaId, in->FetchOffset,
                                        now) != RC_OK) {
                continue;
            }
        }
    }
}

/* The name a request topic's partitions are found by (w->names). */
static int topic_name(struct fetch_wait *w,
                      const struct kafka_FetchableTopic *t,
                      struct slice *out, struct meta_uuid *id_out)
{
    const struct meta_image *img = membership_image(w->b->membership);
    *id_out = (struct meta_uuid){0};
    if (w->req->api_version < 13) { /* topic ids from v13 (KIP-516) */
        *out = t->Name; /* borrowed from the frame, kept till the answer */
        char buf[META_TOPIC_NAME_BYTES_MAX + 1];
        const char *name = broker_topic_name(t->Name, buf);
        const struct meta_topic *mt =
            name != NULL ? meta_image_topic(img, name) : NULL;
        if (mt != NULL) {
            *id_out = mt->id;
        }
        return RC_OK;
    }
    struct meta_uuid id;
    _Static_assert(sizeof id.b == sizeof t->TopicId.bytes, "a UUID");
    memcpy(id.b, t->TopicId.bytes, sizeof id.b);
    const struct meta_topic *mt = meta_image_topic_by_id(img, &id);
    if (mt == NULL) {
        *out = slice_null(); /* UNKNOWN_TOPIC_ID */
        return RC_OK;
    }
    *id_out = id;
    size_t len = strlen(mt->name);
    uint8_t *copy = NULL;
    int rv = arena_alloc(&w->arena, len > 0 ? len : 1, 1, (void **)&copy);
    if (rv != RC_OK) {
        return rv;
    }
    memcpy(copy, mt->name, len);
    *out = (struct slice){copy, len};
    return RC_OK;
}

static int prepare(struct fetch_wait *w)
{
    size_t n = n_partitions(w);
    int rv = arena_alloc(&w->arena, n, sizeof *w->spans,
                         (void **)&w->spans);
    for (size_t i = 0; rv == RC_OK && i < n; i++) {
        w->spans[i] = (struct log_span){.fd = -1};
    }
    if (rv == RC_OK) {
        rv = arena_alloc(&w->arena, (size_t)w->rq.TopicsCnt,
                         sizeof *w->topics, (void **)&w->topics);
    }
    if (rv == RC_OK) {
        rv = arena_alloc(&w->arena, (size_t)w->rq.TopicsCnt,
                         sizeof *w->names, (void **)&w->names);
    }
    if (rv == RC_OK) {
        rv = arena_alloc(&w->arena, (size_t)w->rq.TopicsCnt,
                         sizeof *w->ids, (void **)&w->ids);
    }
    for (int32_t i = 0; rv == RC_OK && i < w->rq.TopicsCnt; i++) {
        rv = topic_name(w, &w->rq.Topics[i], &w->names[i], &w->ids[i]);
    }
    for (int32_t i = 0; rv == RC_OK && i < w->rq.TopicsCnt; i++) {
        const struct kafka_FetchableTopic *t = &w->rq.Topics[i];
        struct kafka_FetchablePartitionResponse *ps = NULL;
        rv = arena_alloc(&w->arena, (size_t)t->PartitionsCnt, sizeof *ps,
                         (void **)&ps);
        if (ps != NULL) {
            memset(ps, 0, (size_t)t->PartitionsCnt * sizeof *ps);
        }
        w->topics[i] = (struct kafka_FetchableTopicResponse){
            .Topic = t->Name, .TopicId = t->TopicId, .Partitions = ps,
            .PartitionsCnt = t->PartitionsCnt};
    }
    return rv;
}

void kafka_handle_fetch(struct broker *b, struct kafka_request *req)
{
    struct fetch_wait *w = calloc(1, sizeof *w);
    if (w == NULL) {
        kafka_close_conn(req, "out of memory");
        return;
    }
    w->b = b;
    w->req = req;
    arena_init(&w->arena, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    int rv = kafka_fetch_request_decode(&r, req->api_version, &w->arena,
                                        &w->rq);
    if (rv == RC_OK) {
        rv = prepare(w);
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "malformed Fetch request");
        arena_free(&w->arena);
        free(w);
        return;
    }
    uv_timer_init(b->loop, &w->timer);
    w->timer.data = w;
    if (!fetch_session_start(w)) {
        return; /* answered: a session error */
    }
    if (w->rq.ReplicaId >= 0 && w->mode == FETCH_SESSION_INCREMENTAL) {
        fetch_session_record_replica(w);
    } else if (w->rq.ReplicaId >= 0) {
        record_replica(w);
    }
    bool error = false;
    int64_t bytes = evaluate(w, &error);
    if (ready(w, bytes, error) || w->rq.MaxWaitMs <= 0 ||
        b->n_fetch_waits >= FETCH__WAITS_MAX || b->stopping) {
        fetch_answer(w);
        return;
    }
    release_spans(w);
    fetch_session_drop_spans(w);
    park(w);
}
