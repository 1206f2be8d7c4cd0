/* Admin requests forwarded to the active controller
 * (broker/kafka/kafka_forward.h). */
#include "broker/kafka/kafka_forward.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "broker/membership.h"
#include "common/assert.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/meta/meta.h"
#include "common/rc.h"

void *kafka_forward_new(struct broker *b, struct kafka_request *req,
                        size_t size)
{
    ASSERT(size >= sizeof(struct kafka_forward));
    struct kafka_forward *fw = calloc(1, size);
    if (fw != NULL) {
        fw->b = b;
        fw->req = req;
        arena_init(&fw->arena, ARENA_BYTES_MAX);
    }
    return fw;
}

void kafka_forward_free(struct kafka_forward *fw)
{
    arena_free(&fw->arena);
    free(fw);
}

void kafka_forward_refuse(void *ctx, struct kafka_request *req,
                          const char *why)
{
    kafka_close_conn(req, why);
    if (ctx != NULL) {
        kafka_forward_free(ctx);
    }
}

/* --- Held answers -------------------------------------------------------- */

static void finish(struct kafka_forward *fw, Cairn__Response *resp,
                   int16_t error)
{
    fw->answer(fw, resp, error);
    if (resp != NULL) {
        cairn__response__free_unpacked(resp, NULL);
    }
    kafka_forward_free(fw);
}

static void timer_cb(uv_timer_t *t);

/* The timer runs for the earliest deadline held, and not at all when
 * nothing is: the image moving wakes answers, the timer only bounds
 * them. */
static void arm(struct broker *b)
{
    uint64_t deadline = 0;
    if (!image_wait_next_deadline(&b->forward_waits, &deadline)) {
        uv_timer_stop(&b->forward_timer);
        return;
    }
    uint64_t now = uv_now(b->loop);
    uv_timer_start(&b->forward_timer, timer_cb,
                   deadline > now ? deadline - now : 0, 0);
}

/* A held answer goes out: the image holds its change, its connection
 * closed (the answer is dropped), or the broker stops.
 *
 * Or the image did not reach the change in time. The answer goes out as
 * the controller gave it, a success: the change is committed to the
 * metadata log and every broker will show it shortly, so an error would
 * only make the client retry something already done (a second
 * CreateTopics fails with TOPIC_ALREADY_EXISTS), and Kafka's own KRaft
 * brokers answer a forwarded change once the controller has committed
 * it, without waiting for their metadata cache. Only the read that
 * follows may still miss it, as it could before. */
static void held_cb(struct image_waiter *w, enum image_wait_why why)
{
    struct kafka_forward *fw =
        (struct kafka_forward *)(void *)((char *)w -
                                         offsetof(struct kafka_forward,
                                                  waiter));
    if (why == IMAGE_WAIT_TIMED_OUT) {
        TRACE_WARN(&fw->b->tracer, "peer=%s api_key=%d answered before "
                   "this broker's metadata reached offset=%" PRId64
                   " (at %" PRId64 "); the change is committed",
                   kafka_request_peer(fw->req), fw->req->api_key,
                   w->offset, membership_image(fw->b->membership)->offset);
    }
    finish(fw, fw->held, KAFKA_ERROR_NONE);
}

static void timer_cb(uv_timer_t *t)
{
    struct broker *b = t->data;
    image_wait_expire(&b->forward_waits, uv_now(b->loop));
    arm(b);
}

static void conn_closed(void *arg, const struct kafka_conn *conn)
{
    struct broker *b = arg;
    if (b->forward_open) {
        image_wait_close_owner(&b->forward_waits, conn);
        arm(b);
    }
}

void kafka_forward_start(struct broker *b)
{
    image_wait_init(&b->forward_waits, IMAGE_WAITERS_MAX, held_cb);
    uv_timer_init(b->loop, &b->forward_timer);
    b->forward_timer.data = b;
    b->forward_open = true;
    kafka_server_on_conn_closed(b->kafka, conn_closed, b);
}

void kafka_forward_image_moved(struct broker *b, int64_t offset)
{
    if (b->forward_open) {
        image_wait_reached(&b->forward_waits, offset);
        arm(b);
    }
}

void kafka_forward_close(struct broker *b)
{
    if (!b->forward_open) {
        return;
    }
    image_wait_flush(&b->forward_waits);
    b->forward_open = false;
    uv_close((uv_handle_t *)&b->forward_timer, NULL);
}

/* True when resp reports a change: some result without an error. */
static bool changed(const Cairn__Response *resp)
{
    switch (resp->body_case) {
    case CAIRN__RESPONSE__BODY_CREATE_TOPICS:
        for (size_t i = 0; i < resp->create_topics->n_results; i++) {
            if (resp->create_topics->results[i]->error_code == 0) {
                return true;
            }
        }
        return false;
    case CAIRN__RESPONSE__BODY_CREATE_PARTITIONS:
        for (size_t i = 0; i < resp->create_partitions->n_results; i++) {
            if (resp->create_partitions->results[i]->error_code == 0) {
                return true;
            }
        }
        return false;
    case CAIRN__RESPONSE__BODY_ALTER_CONFIGS:
        for (size_t i = 0; i < resp->alter_configs->n_results; i++) {
            if (resp->alter_configs->results[i]->error_code == 0) {
                return true;
            }
        }
        return false;
    case CAIRN__RESPONSE__BODY_ALTER_REASSIGNMENTS:
        for (size_t i = 0; i < resp->alter_reassignments->n_results; i++) {
            if (resp->alter_reassignments->results[i]->error_code == 0) {
                return true;
            }
        }
        return false;
    default:
        return false;
    }
}

/* Holds resp (then owned by fw) when it reports a change this broker's
 * image does not hold yet and the handler asked for it; false when it is
 * to be answered now. */
static bool hold(struct kafka_forward *fw, Cairn__Response *resp,
                 int16_t error)
{
    struct broker *b = fw->b;
    if (fw->visible_by_ms == 0 || error != KAFKA_ERROR_NONE ||
        !resp->has_metadata_offset || !changed(resp) || !b->forward_open ||
        b->stopping || !kafka_conn_is_open(fw->req->conn) ||
        membership_image(b->membership)->offset >= resp->metadata_offset ||
        uv_now(b->loop) >= fw->visible_by_ms) {
        return false;
    }
    if (image_wait_add(&b->forward_waits, &fw->waiter, resp->metadata_offset,
                       fw->visible_by_ms, fw->req->conn) != RC_OK) {
        TRACE_WARN(&b->tracer, "peer=%s api_key=%d answered without "
                   "waiting for this broker's metadata: %u answers held",
                   kafka_request_peer(fw->req), fw->req->api_key,
                   IMAGE_WAITERS_MAX);
        return false;
    }
    fw->held = resp;
    arm(b);
    return true;
}

void kafka_forward_visible(struct kafka_forward *fw, int32_t timeout_ms)
{
    uint64_t wait_ms = KAFKA_FORWARD_VISIBLE_WAIT_MS;
    if (timeout_ms > 0) {
        wait_ms = (uint64_t)timeout_ms < KAFKA_FORWARD_TIMEOUT_MS
                      ? (uint64_t)timeout_ms
                      : KAFKA_FORWARD_TIMEOUT_MS;
    }
    fw->visible_by_ms = uv_now(fw->b->loop) + wait_ms;
}

/* --- Calls --------------------------------------------------------------- */

static void forward_cb(void *arg, int rc, const uint8_t *payload, size_t len)
{
    struct kafka_forward *fw = arg;
    Cairn__Response *resp = rc == RC_OK
                                ? cairn__response__unpack(NULL, len, payload)
                                : NULL;
    int16_t error = resp != NULL ? (int16_t)resp->error_code
                                 : KAFKA_ERROR_REQUEST_TIMED_OUT;
    membership_refresh(fw->b->membership);
    if (resp != NULL && hold(fw, resp, error)) {
        return;
    }
    finish(fw, resp, error);
}

void kafka_forward_call(struct kafka_forward *fw, const Cairn__Request *rq,
                        uint64_t timeout_ms, kafka_forward_answer_fn answer)
{
    fw->answer = answer;
    size_t len = cairn__request__get_packed_size(rq);
    uint8_t *buf = malloc(len == 0 ? 1 : len);
    int rv = RC_NOMEM;
    if (buf != NULL) {
        cairn__request__pack(rq, buf);
        rv = membership_call_active(fw->b->membership, buf, len, timeout_ms,
                                    forward_cb, fw);
        free(buf);
    }
    if (rv != RC_OK) {
        forward_cb(fw, rv, NULL, 0);
    }
}

int16_t kafka_forward_missing(int16_t error)
{
    return error != KAFKA_ERROR_NONE ? error
                                     : KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
}

char *kafka_forward_str(struct arena *a, struct slice s, bool topic_rule)
{
    if (slice_is_null(s) ||
        (topic_rule &&
         !meta_topic_name_bytes_valid((const char *)s.ptr, s.len))) {
        s = slice_from_str("");
    }
    char *out = NULL;
    if (arena_alloc(a, s.len + 1, 1, (void **)&out) != RC_OK) {
        return NULL;
    }
    if (s.len > 0) {
        memcpy(out, s.ptr, s.len);
    }
    for (size_t i = 0; i < s.len; i++) {
        out[i] = out[i] == '\0' ? '?' : out[i];
    }
    out[s.len] = '\0';
    return out;
}
