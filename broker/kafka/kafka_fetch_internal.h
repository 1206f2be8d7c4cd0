/* What broker/kafka/kafka_fetch.c (Fetch itself) and
 * broker/kafka/kafka_fetch_session.c (its incremental sessions, KIP-227)
 * share: a request while it is served or parked. Loop thread only. */
#ifndef CAIRN_BROKER_KAFKA_FETCH_INTERNAL_H
#define CAIRN_BROKER_KAFKA_FETCH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "broker/broker.h"
#include "broker/kafka/fetch_session.h"
#include "common/arena.h"
#include "common/kafka/kafka_codec.h"

/* A topic as a partition is looked up by: its name (null: an id the
 * image does not know, UNKNOWN_TOPIC_ID) and its id in the image (zero:
 * the image has no such topic). */
struct fetch_target {
    struct slice name;
    struct meta_uuid id;
};

struct fetch_wait {
    struct fetch_wait *next;
    struct fetch_wait *prev;
    struct broker *b;
    struct kafka_request *req;
    struct arena arena;
    struct kafka_FetchRequest rq;
    /* Per request topic, the name partitions are looked up by: the one
     * sent (v12-) or the id's (v13+, copied: the image changes while a
     * fetch is parked); null for an unknown id. */
    struct slice *names;
    /* Per request topic, its id in the image when the request came
     * (zero: none), so each partition is found by one hash lookup. */
    struct meta_uuid *ids;
    struct kafka_FetchableTopicResponse *topics;
    struct log_span *spans;   /* one per partition, in request order */
    uv_timer_t timer;
    bool parked;
    /* How the session part of the request is served. */
    enum fetch_session_mode mode;
    int16_t session_error;         /* ERROR: the answer's ErrorCode */
    struct fetch_session *session; /* INCREMENTAL: the session */
    uint64_t seen_seq;             /* changes known when it came */
    uint64_t seen_removals;
    /* INCREMENTAL: the session's entries looked at (indexes), with their
     * answers and spans, in the order found. */
    uint32_t *eval;
    struct kafka_FetchablePartitionResponse *eval_out;
    struct log_span *eval_spans;
    size_t n_eval;
    size_t cap_eval;
    bool hw_news;             /* the last evaluation found a high
                               * watermark the session has not sent */
};

/* kafka_fetch.c: one partition's answer for target (in's parameters);
 * the span it reads goes in *span. Only the first partition with data
 * (first) may exceed the budget. */
void fetch_one(struct fetch_wait *w, const struct fetch_target *target,
               const struct kafka_FetchPartition *in, int64_t budget,
               bool first, struct kafka_FetchablePartitionResponse *out,
               struct log_span *span);

/* kafka_fetch_session.c. */

/* Starts serving w's request as its session says (w->mode); false when
 * w was answered already (a session error, or no memory). */
bool fetch_session_start(struct fetch_wait *w);
/* INCREMENTAL: reads every entry looked at; the record bytes found, and
 * whether an answer carries an error. */
int64_t fetch_session_evaluate(struct fetch_wait *w, bool *error);
/* INCREMENTAL: a follower's fetch covers its whole session, at the
 * offsets the session holds (as Kafka's leader takes it); recorded for
 * every entry looked at: those named, those with news, those that
 * erred last time (a partition whose leadership arrived here after the
 * follower named it is recorded once it does). */
void fetch_session_record_replica(struct fetch_wait *w);
/* INCREMENTAL: whether p changed an entry of w's session not looked at
 * yet (added then). */
bool fetch_session_reads(struct fetch_wait *w, const struct partition *p);
/* Fills resp with what the answer carries (and, for FULL, creates the
 * session it names); RC_NOMEM when it cannot. */
int fetch_session_answer(struct fetch_wait *w, struct kafka_FetchResponse *resp);
/* Releases the spans the last evaluation read (w stays parked). */
void fetch_session_drop_spans(struct fetch_wait *w);
/* Releases what the session part of w holds (spans, arrays), once w is
 * answered. */
void fetch_session_release(struct fetch_wait *w);
/* The cache's on_remove: a parked request on the session is answered
 * FETCH_SESSION_ID_NOT_FOUND. */
void fetch_session_removed(void *arg, struct fetch_session *s);

/* kafka_fetch.c: answers w now (then frees it). */
void fetch_answer(struct fetch_wait *w);
/* kafka_fetch.c: answers w on the next loop turn (a timer of 0). */
void fetch_answer_soon(struct fetch_wait *w);

#endif
