/* The broker's side of cluster membership: it registers with the active
 * controller (getting a broker epoch), heartbeats every
 * broker.heartbeat.interval.ms, and pulls metadata records
 * (MetadataFetch from its applied offset, or the whole image when it is
 * too far behind) into a local image, calling back after every change.
 * NOT_CONTROLLER answers redirect it to the active controller; transport
 * errors move it to the next controller. A controlled shutdown sends
 * WantShutDown until the controller has moved leadership away and answers
 * ShouldShutDown. Loop thread only. */
#ifndef CAIRN_BROKER_MEMBERSHIP_H
#define CAIRN_BROKER_MEMBERSHIP_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/net/addr.h"
#include "common/assert.h"
#include "common/meta/meta.h"
#include "common/trace.h"

struct membership_config {
    int32_t broker_id;
    struct addr endpoint;            /* the Kafka listener it advertises */
    char rack[META_RACK_BYTES_MAX + 1];
    struct addr_voter controllers[CONTROLLER_VOTERS_MAX];
    size_t n_controllers;
    int64_t heartbeat_interval_ms;
    int64_t session_timeout_ms;
};

/* The image changed (records applied or a new image). */
typedef void (*membership_image_cb)(void *arg, const struct meta_image *img);
/* The controlled shutdown is complete: the broker may exit. */
typedef void (*membership_done_cb)(void *arg);

struct membership;

MUST_CHECK int membership_start(struct membership **out, uv_loop_t *loop,
                                const struct membership_config *cfg,
                                struct tracer *tracer,
                                membership_image_cb image_cb,
                                membership_done_cb done_cb, void *arg);

/* Starts a controlled shutdown; done_cb runs when the controller agrees,
 * or after the session timeout if no controller answers. */
void membership_shutdown(struct membership *m);

/* The broker's only log dir failed: heartbeats name it offline (KIP-858)
 * and ask to be fenced and shut down, so the controller drops this
 * broker from every ISR and moves its leaderships at once rather than
 * after the session times out. done_cb runs once the controller has
 * fenced it, or after the session timeout if no controller answers. */
void membership_log_dir_offline(struct membership *m, const char *dir);

/* Stops timers and connections; memory is freed as the loop runs. */
void membership_close(struct membership *m);

/* Sends a packed Request to the active controller, following
 * NOT_CONTROLLER redirects and moving on after transport errors, until
 * timeout_ms has passed since it was first sent. Calls beyond a bound
 * out at once (half the RPC table, so heartbeats always have room) wait
 * their turn, in order, and their wait is not counted. cb gets RC_OK with
 * the packed Response (borrowed for the call), or RC_TIMEOUT /
 * RC_CLOSED. Always called back later. */
typedef void (*membership_call_cb)(void *arg, int rc, const uint8_t *resp,
                                   size_t len);
MUST_CHECK int membership_call_active(struct membership *m,
                                      const uint8_t *req, size_t len,
                                      uint64_t timeout_ms,
                                      membership_call_cb cb, void *arg);

/* Fetches metadata on the next tick instead of waiting for the interval
 * (after this broker forwarded a change to the controller); with a fetch
 * already out, once more as soon as it is answered, since that one may
 * have left before the change was made. */
void membership_refresh(struct membership *m);

const struct meta_image *membership_image(const struct membership *m);
/* The AllocateProducerIds request of broker broker_id at broker_epoch,
 * packed into buf (cap bytes, which it must fit) for
 * membership_call_active(); returns its length. */
size_t membership_producer_ids_request(int32_t broker_id,
                                       int64_t broker_epoch, uint8_t *buf,
                                       size_t cap);
/* The block of producer ids [*start, *start + *n) that resp, a packed
 * answer to that request, grants; false when it grants none (an error,
 * an empty block, or bytes that do not parse). */
bool membership_producer_ids_granted(const uint8_t *resp, size_t len,
                                     int64_t *start, int64_t *n);

/* True once this incarnation is registered and a metadata fetch reached
 * both its registration record and the controller's end of the log, as
 * a KRaft broker waits to catch up before it serves: the image then
 * holds whatever the controller did about an earlier incarnation (fenced
 * it, moved its leaderships to new epochs). */
bool membership_caught_up(const struct membership *m);
int64_t membership_epoch(const struct membership *m);

#endif
