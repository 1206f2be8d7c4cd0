/* A Kafka admin request the broker forwards to the active controller
 * (CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders,
 * AlterConfigs, the reassignment APIs): the decoded request and what is
 * built from it live in one arena until the controller's answer has been
 * turned back into Kafka's layout. One loop thread; the handler's own
 * context embeds struct kafka_forward as its first member:
 *
 *     struct elect_ctx { struct kafka_forward fw; ... };
 *     struct elect_ctx *ctx = kafka_forward_new(b, req, sizeof *ctx);
 *     ... decode into ctx->fw.arena, build the Cairn__Request ...
 *     kafka_forward_call(&ctx->fw, &cr, timeout_ms, elect_answer);
 *
 * The answer function is called exactly once, with the controller's
 * response (NULL when there was none: unreachable, timed out, or the call
 * could not start) and error: REQUEST_TIMED_OUT without a response, else
 * the response's request-level error_code (NONE when it carries the
 * results). The broker then fetches the metadata the controller changed,
 * and the context is freed.
 *
 * Read your own writes: a handler that calls kafka_forward_visible()
 * first has an answer reporting a change held until this broker's own
 * metadata image holds it (the response's metadata_offset), so that the
 * client's next request here (DescribeConfigs after AlterConfigs,
 * Metadata after CreateTopics) sees it. Held answers wait in one list
 * (broker/image_wait.h), woken as the image moves
 * (kafka_forward_image_moved()); one timer bounds them; a connection's
 * are let go when it closes, and all are answered at shutdown. */
#ifndef CAIRN_BROKER_KAFKA_KAFKA_FORWARD_H
#define CAIRN_BROKER_KAFKA_KAFKA_FORWARD_H

#include <stddef.h>
#include <stdint.h>

#include "broker/broker.h"
#include "broker/image_wait.h"
#include "common/arena.h"
#include "common/slice.h"
#include "rpc.pb-c.h"

/* The wait for the controller when the request sets none shorter (Kafka's
 * request.timeout.ms default). */
#define KAFKA_FORWARD_TIMEOUT_MS 30000

/* How long a change may wait to show in this broker's image when its
 * request sets no timeout (AlterConfigs has none): it normally takes one
 * metadata fetch, tens of milliseconds. */
#define KAFKA_FORWARD_VISIBLE_WAIT_MS 5000

struct kafka_forward;
typedef void (*kafka_forward_answer_fn)(struct kafka_forward *fw,
                                        const Cairn__Response *resp,
                                        int16_t error);

struct kafka_forward {
    struct broker *b;
    struct kafka_request *req;
    struct arena arena;
    kafka_forward_answer_fn answer;
    uint64_t visible_by_ms;      /* kafka_forward_visible(); 0: not asked */
    struct image_waiter waiter;  /* in b->forward_waits while held */
    Cairn__Response *held;       /* the controller's answer, while held */
};

/* A zeroed context of size bytes (at least sizeof(struct kafka_forward),
 * which it starts with) for req; NULL when out of memory. */
void *kafka_forward_new(struct broker *b, struct kafka_request *req,
                        size_t size);

/* Frees fw's arena and the context it starts. */
void kafka_forward_free(struct kafka_forward *fw);

/* A request that cannot go on (malformed, or out of memory): closes
 * req's connection with why and frees ctx, the context from
 * kafka_forward_new() or NULL. */
void kafka_forward_refuse(void *ctx, struct kafka_request *req,
                          const char *why);

/* Asks kafka_forward_call() to hold an answer that reports a change (no
 * request-level error, at least one result without one) until this
 * broker's metadata image holds it, for at most timeout_ms from now: the
 * request's own TimeoutMs, capped at KAFKA_FORWARD_TIMEOUT_MS, or
 * KAFKA_FORWARD_VISIBLE_WAIT_MS when it sets none (<= 0). Not for
 * validateOnly requests: they change nothing. */
void kafka_forward_visible(struct kafka_forward *fw, int32_t timeout_ms);

/* Sends rq to the active controller and answers through answer as above;
 * fw is consumed either way. */
void kafka_forward_call(struct kafka_forward *fw, const Cairn__Request *rq,
                        uint64_t timeout_ms, kafka_forward_answer_fn answer);

/* The broker's held answers: the list and its timer set up (after the
 * Kafka listener started, whose closing connections it follows); the
 * answers whose change the image now holds (offset: the image's) sent;
 * at shutdown, every held answer sent as it is and the timer closed. */
void kafka_forward_start(struct broker *b);
void kafka_forward_image_moved(struct broker *b, int64_t offset);
void kafka_forward_close(struct broker *b);

/* The error for a result the controller's answer lacks: error itself
 * when it is one, else UNKNOWN_SERVER_ERROR. */
int16_t kafka_forward_missing(int16_t error);

/* A NUL-terminated copy of a wire string in fw's arena ("" for a null
 * one); with topic_rule, bytes that break the topic-name rule become ""
 * (unknown to the controller), so a NUL never cuts a name into another.
 * Without it, a NUL byte inside becomes '?', so that "2\0x" reaches the
 * controller as a value it refuses, not as "2". NULL when the arena is
 * exhausted. */
char *kafka_forward_str(struct arena *a, struct slice s, bool topic_rule);

#endif
