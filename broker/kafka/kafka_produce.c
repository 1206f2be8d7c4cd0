/* Produce (broker/broker.h): validate each partition's batch (its header
 * here and in the log, its records with Kafka's LogValidator in
 * partition_append_client(); a refused batch stores nothing and the other
 * partitions of the request go on), append it as leader, then wait:
 * acks=all until the partition's high watermark passes the batch's last
 * offset (every in-sync replica holds it, durably with
 * log.sync.before.ack); acks=1 until the write is durable here (at once
 * without log.sync.before.ack). acks=all is refused with
 * NOT_ENOUGH_REPLICAS before appending while the ISR is below
 * min.insync.replicas. acks=0 gets no response; an error then closes the
 * connection, as Kafka does. */
#include "broker/broker.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/record_batch.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"

struct produce_ctx;

struct produce_part {
    struct produce_ctx *ctx;
    struct kafka_PartitionProduceResponse *out;
    bool waiting;
    struct partition *p;  /* while waiting: its waiter keeps p open */
    int64_t last_offset;  /* while waiting: the batch's last offset */
};

struct produce_ctx {
    struct broker *b;
    struct kafka_request *req;
    struct arena arena;
    struct kafka_ProduceRequest rq;
    struct kafka_TopicProduceResponse *topics;
    struct produce_part *parts;
    size_t n_parts;
    int waiting;       /* partitions still waiting for their high watermark */
    int refs;          /* waiters plus the timer */
    bool answered;
    bool delayed;      /* counted in the broker's produce_waiting */
    uv_timer_t timer;
};

static int enc_produce(struct writer *w, int16_t v, const void *r)
{
    return kafka_produce_response_encode(w, v, r);
}

static void ctx_unref(struct produce_ctx *ctx)
{
    if (--ctx->refs > 0) {
        return;
    }
    arena_free(&ctx->arena);
    free(ctx);
}

static void timer_closed_cb(uv_handle_t *h)
{
    ctx_unref(h->data);
}

/* Each partition's answer into the broker's error counts. */
static void count_answers(struct produce_ctx *ctx)
{
    struct broker *b = ctx->b;
    for (size_t i = 0; i < ctx->n_parts; i++) {
        int16_t code = ctx->parts[i].out->ErrorCode;
        size_t slot = code >= -1 && code < BROKER_ERROR_SLOTS - 1
                          ? (size_t)(code + 1)
                          : 0;
        b->produce_errors[slot]++;
        b->produce_failed += code != KAFKA_ERROR_NONE;
    }
    if (ctx->delayed) {
        ASSERT(b->produce_waiting > 0);
        b->produce_waiting--;
        ctx->delayed = false;
    }
}

static void answer(struct produce_ctx *ctx)
{
    ASSERT(!ctx->answered);
    ctx->answered = true;
    count_answers(ctx);
    struct kafka_ProduceResponse resp = {.Responses = ctx->topics,
                                         .ResponsesCnt = ctx->rq.TopicsCnt};
    kafka_send(ctx->req, enc_produce, &resp);
    uv_close((uv_handle_t *)&ctx->timer, timer_closed_cb);
}

static void timeout_cb(uv_timer_t *t)
{
    struct produce_ctx *ctx = t->data;
    for (size_t i = 0; i < ctx->n_parts; i++) {
        struct produce_part *part = &ctx->parts[i];
        if (part->waiting) {
            part->out->ErrorCode = KAFKA_ERROR_REQUEST_TIMED_OUT;
            if (ctx->rq.Acks == -1) {
                partition_note_ack_timeout(part->p, part->last_offset,
                                           ctx->rq.TimeoutMs);
            }
        }
    }
    answer(ctx);
}

static void hw_cb(void *arg, int rc)
{
    struct produce_part *part = arg;
    struct produce_ctx *ctx = part->ctx;
    part->waiting = false;
    if (!ctx->answered) {
        if (rc == RC_NOT_LEADER || rc == RC_OUT_OF_RANGE) {
            /* Leadership went (and a truncation with it). */
            part->out->ErrorCode = KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
        } else if (rc != RC_OK) {
            part->out->ErrorCode = kafka_error_from_rc(rc);
        }
        if (--ctx->waiting == 0) {
            answer(ctx);
        }
    }
    ctx_unref(ctx);
}

/* Kafka's checks on a produced batch that the log does not make. */
static int16_t precheck(int16_t version, struct slice records,
                        int32_t max_message_bytes)
{
    struct record_batch_header h;
    if (records.ptr == NULL || records.len == 0) {
        return KAFKA_ERROR_INVALID_RECORD;
    }
    int rv = record_batch_parse(records.ptr, records.len, &h);
    if (rv != RC_OK) {
        return rv == RC_SHORT ? KAFKA_ERROR_CORRUPT_MESSAGE
                              : KAFKA_ERROR_INVALID_RECORD;
    }
    if (record_batch_size(&h) < (int64_t)records.len) {
        return KAFKA_ERROR_INVALID_RECORD; /* one batch per partition */
    }
    if (record_batch_size(&h) > max_message_bytes) {
        return KAFKA_ERROR_MESSAGE_TOO_LARGE;
    }
    int codec = h.attributes & RECORD_BATCH_ATTR_CODEC_MASK;
    if (codec > 4 || (codec == 4 && version < 7)) {
        return KAFKA_ERROR_UNSUPPORTED_COMPRESSION_TYPE;
    }
    return KAFKA_ERROR_NONE;
}

/* A batch the record walk refused: Produce v8+ carries why, and which
 * record (RecordErrors) when one is at fault. Static text, no copy. */
static void explain_refusal(struct produce_ctx *ctx,
                            const struct partition *p,
                            struct kafka_PartitionProduceResponse *out,
                            const struct record_validate_result *why)
{
    TRACE_INFO(&ctx->b->tracer, "partition=%s-%d produce refused (%s): %s "
               "record=%d", p->topic, p->id, kafka_error_name(out->ErrorCode),
               why->message, why->record_index);
    out->ErrorMessage = slice_from_str(why->message);
    struct kafka_BatchIndexAndErrorMessage *e = NULL;
    if (why->record_index < 0 ||
        arena_alloc(&ctx->arena, 1, sizeof *e, (void **)&e) != RC_OK) {
        return; /* the batch as a whole, or the code and message alone */
    }
    *e = (struct kafka_BatchIndexAndErrorMessage){
        .BatchIndex = why->record_index,
        .BatchIndexErrorMessage = slice_from_str(why->message)};
    out->RecordErrors = e;
    out->RecordErrorsCnt = 1;
}

/* Appends one partition's batch; true when it must wait for the HW. */
static bool produce_one(struct produce_ctx *ctx, struct slice topic,
                        const struct kafka_PartitionProduceData *in,
                        struct produce_part *part)
{
    struct kafka_PartitionProduceResponse *out = part->out;
    *out = (struct kafka_PartitionProduceResponse){
        .PartitionIndex = in->PartitionIndex, .BaseOffset = -1,
        .LogAppendTimeMs = -1, .LogStartOffset = -1};
    struct partition *p = broker_partition(ctx->b, topic, in->PartitionIndex);
    if (p == NULL || !partition_is_leader(p)) {
        out->ErrorCode = broker_not_leader_error(ctx->b, topic,
                                                 in->PartitionIndex);
        return false;
    }
    if (ctx->b->partitions.dir_failed) { /* the broker is on its way out */
        out->ErrorCode = KAFKA_ERROR_KAFKA_STORAGE_ERROR;
        return false;
    }
    out->ErrorCode = precheck(ctx->req->api_version, in->Records,
                              p->max_message_bytes);
    if (out->ErrorCode != KAFKA_ERROR_NONE) {
        return false;
    }
    struct log_append_info info;
    struct record_validate_result why;
    int rv = partition_append_client(p, (uint8_t *)(uintptr_t)in->Records.ptr,
                                     in->Records.len,
                                     (int64_t)uv_now(ctx->b->loop), clock_wall_ms(),
                                     ctx->rq.Acks, &info, &why);
    if (rv != RC_OK) {
        out->ErrorCode = kafka_error_from_rc(rv);
        if (why.message != NULL) {
            explain_refusal(ctx, p, out, &why);
        }
        return false;
    }
    ctx->b->bytes_in += in->Records.len;
    ctx->b->messages_in += (uint64_t)(info.last_offset - info.base_offset + 1);
    out->BaseOffset = info.base_offset;
    if (p->log_append_time && info.max_timestamp >= 0) {
        out->LogAppendTimeMs = info.max_timestamp;
    }
    out->LogStartOffset = log_start_offset(p->log);
    bool waiting = false;
    rv = partition_wait_acks(p, ctx->rq.Acks, info.last_offset, hw_cb, part,
                             &waiting);
    if (rv != RC_OK) {
        out->ErrorCode = kafka_error_from_rc(rv);
    }
    part->waiting = waiting;
    part->p = p;
    part->last_offset = info.last_offset;
    return waiting;
}

static int plan_parts(struct produce_ctx *ctx)
{
    size_t n = 0;
    for (int32_t i = 0; i < ctx->rq.TopicsCnt; i++) {
        n += (size_t)ctx->rq.Topics[i].PartitionsCnt;
    }
    int rv = arena_alloc(&ctx->arena, n, sizeof *ctx->parts,
                         (void **)&ctx->parts);
    if (rv == RC_OK) {
        rv = arena_alloc(&ctx->arena, (size_t)ctx->rq.TopicsCnt,
                         sizeof *ctx->topics, (void **)&ctx->topics);
    }
    size_t k = 0;
    for (int32_t i = 0; rv == RC_OK && i < ctx->rq.TopicsCnt; i++) {
        const struct kafka_TopicProduceData *t = &ctx->rq.Topics[i];
        struct kafka_PartitionProduceResponse *ps = NULL;
        rv = arena_alloc(&ctx->arena, (size_t)t->PartitionsCnt, sizeof *ps,
                         (void **)&ps);
        ctx->topics[i] = (struct kafka_TopicProduceResponse){
            .Name = t->Name, .Partitions = ps,
            .PartitionsCnt = t->PartitionsCnt};
        for (int32_t j = 0; rv == RC_OK && j < t->PartitionsCnt; j++) {
            ctx->parts[k++] = (struct produce_part){.ctx = ctx,
                                                    .out = &ps[j]};
            ps[j] = (struct kafka_PartitionProduceResponse){
                .PartitionIndex = t->Partitions[j].PartitionIndex,
                .BaseOffset = -1, .LogAppendTimeMs = -1,
                .LogStartOffset = -1};
        }
    }
    ctx->n_parts = n;
    return rv;
}

static bool acks_valid(int16_t acks)
{
    return acks == 0 || acks == 1 || acks == -1;
}

static void run(struct produce_ctx *ctx)
{
    bool any_error = false;
    size_t k = 0;
    if (!acks_valid(ctx->rq.Acks)) {
        for (size_t i = 0; i < ctx->n_parts; i++) {
            ctx->parts[i].out->ErrorCode = KAFKA_ERROR_INVALID_REQUIRED_ACKS;
        }
        answer(ctx);
        return;
    }
    for (int32_t i = 0; i < ctx->rq.TopicsCnt; i++) {
        const struct kafka_TopicProduceData *t = &ctx->rq.Topics[i];
        for (int32_t j = 0; j < t->PartitionsCnt; j++, k++) {
            if (produce_one(ctx, t->Name, &t->Partitions[j],
                            &ctx->parts[k])) {
                ctx->waiting++;
                ctx->refs++;
            }
            any_error |= ctx->parts[k].out->ErrorCode != KAFKA_ERROR_NONE;
        }
    }
    if (ctx->rq.Acks == 0) {
        ctx->answered = true;
        count_answers(ctx);
        if (any_error) {
            kafka_close_conn(ctx->req, "produce with acks=0 failed");
        } else {
            kafka_no_reply(ctx->req);
        }
        uv_close((uv_handle_t *)&ctx->timer, timer_closed_cb);
    } else if (ctx->waiting == 0) {
        answer(ctx);
    } else {
        uint64_t ms = ctx->rq.TimeoutMs > 0 ? (uint64_t)ctx->rq.TimeoutMs : 0;
        ctx->delayed = true;
        ctx->b->produce_waiting++;
        uv_timer_start(&ctx->timer, timeout_cb, ms, 0);
    }
}

void kafka_handle_produce(struct broker *b, struct kafka_request *req)
{
    struct produce_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        kafka_close_conn(req, "out of memory");
        return;
    }
    ctx->b = b;
    ctx->req = req;
    arena_init(&ctx->arena, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    int rv = kafka_produce_request_decode(&r, req->api_version, &ctx->arena,
                                          &ctx->rq);
    if (rv == RC_OK) {
        rv = plan_parts(ctx);
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "malformed Produce request");
        arena_free(&ctx->arena);
        free(ctx);
        return;
    }
    uv_timer_init(b->loop, &ctx->timer);
    ctx->timer.data = ctx;
    ctx->refs = 1; /* the timer */
    run(ctx);
}
