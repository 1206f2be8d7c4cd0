/* Admin requests forwarded to the active controller
 * (broker/kafka/kafka_forward.h). */
#include "broker/kafka/kafka_forward.h"

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

static void forward_cb(void *arg, int rc, const uint8_t *payload, size_t len)
{
    struct kafka_forward *fw = arg;
    Cairn__Response *resp = rc == RC_OK
                                ? cairn__response__unpack(NULL, len, payload)
                                : NULL;
    fw->answer(fw, resp,
               resp != NULL ? (int16_t)resp->error_code
                            : KAFKA_ERROR_REQUEST_TIMED_OUT);
    membership_refresh(fw->b->membership);
    if (resp != NULL) {
        cairn__response__free_unpacked(resp, NULL);
    }
    kafka_forward_free(fw);
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
