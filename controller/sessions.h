/* Broker sessions on the active controller: the last time each broker was
 * heard from (registration or heartbeat). Soft state, never in the
 * metadata log: a controller that becomes active starts every registered
 * broker's clock at "now" (sessions_reset), so a failover can delay
 * fencing by up to one session timeout, as in Kafka's
 * BrokerHeartbeatManager. Pure: time is always an argument (milliseconds
 * from any monotonic clock, e.g. uv_now()). Bounded by META_BROKERS_MAX
 * entries, as the image is. Loop thread of the active controller.
 *
 * A session has lapsed when more than timeout_ms passed since the last
 * contact: at exactly timeout_ms it is still alive (Kafka's
 * lastContactNs + sessionTimeoutNs >= now). */
#ifndef CAIRN_CONTROLLER_SESSIONS_H
#define CAIRN_CONTROLLER_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/limits.h"
#include "common/meta/meta.h"

struct sessions__entry {
    int32_t id;
    uint64_t last_ms;
};

struct sessions {
    uint64_t reset_ms; /* when the clocks were last started */
    size_t n;
    struct sessions__entry e[META_BROKERS_MAX]; /* sorted by id */
};

/* An empty table, as if reset at time 0. */
void sessions_init(struct sessions *s);

/* On becoming the active controller: forgets every session and starts one
 * for each registered broker at now_ms. Brokers registered later must be
 * touched (the glue does it when it answers their registration); until
 * then they count as heard from at now_ms. */
void sessions_reset(struct sessions *s, const struct meta_image *img,
                    uint64_t now_ms);

/* Broker id was heard from at now_ms. A clock going backwards never makes
 * a session older. RC_FULL when id is new and META_BROKERS_MAX sessions
 * exist (the broker's registration would fail anyway). */
MUST_CHECK int sessions_touch(struct sessions *s, int32_t id, uint64_t now_ms);

/* Whether id has a session that has not lapsed at now_ms. An id never
 * touched (nor reset) has none. Kafka also treats a fenced broker as
 * without a valid session; that check is the caller's (the image's). */
bool sessions_alive(const struct sessions *s, int32_t id, uint64_t now_ms,
                    uint64_t timeout_ms);

/* The broker to fence now: among brokers registered and unfenced in img
 * whose session lapsed, the one heard from longest ago (smallest id on a
 * tie), or -1. One at a time, as Kafka fences one broker per controller
 * event so that each fencing takes effect before the next: call again
 * after the fence records are applied. Brokers already fenced in the image
 * are never reported, whatever their session. */
int32_t sessions_next_expired(const struct sessions *s,
                              const struct meta_image *img, uint64_t now_ms,
                              uint64_t timeout_ms);

#endif
