/* The follower's session with one leader (broker/replication/
 * follower_session.h). Pure; loop thread only. */
#include "broker/replication/follower_session.h"

#include "common/assert.h"
#include "common/backoff.h"

static void check_invariants(const struct follower_session *s)
{
    ASSERT(s->partition_max_bytes >= s->cfg.partition_max_bytes);
    bool timed = s->state == FOLLOWER_SESSION_CONNECTING ||
                 s->state == FOLLOWER_SESSION_IN_FLIGHT ||
                 s->state == FOLLOWER_SESSION_BACKOFF;
    ASSERT(timed == (s->deadline_ms != FOLLOWER_SESSION_NO_DEADLINE));
    if (s->state == FOLLOWER_SESSION_IN_FLIGHT) {
        ASSERT(s->connected);
    }
    if (s->state == FOLLOWER_SESSION_CONNECTING) {
        ASSERT(!s->connected);
    }
}

void follower_session_init(struct follower_session *s,
                           const struct follower_session_config *cfg)
{
    ASSERT(cfg->backoff_ms > 0);
    ASSERT(cfg->connect_timeout_ms > 0);
    ASSERT(cfg->request_timeout_ms > 0);
    ASSERT(cfg->partition_max_bytes > 0);
    ASSERT(cfg->reconnect_max_ms >= cfg->backoff_ms);
    *s = (struct follower_session){
        .cfg = *cfg,
        .jitter = cfg->jitter_seed | 1,
        .state = FOLLOWER_SESSION_IDLE,
        .deadline_ms = FOLLOWER_SESSION_NO_DEADLINE,
        .partition_max_bytes = cfg->partition_max_bytes,
    };
    check_invariants(s);
}

static void enter(struct follower_session *s,
                  enum follower_session_state state, int64_t deadline_ms)
{
    s->state = state;
    s->deadline_ms = deadline_ms;
    check_invariants(s);
}

/* The connection is gone: the pause grows with each loss in a row (no
 * answer in between), backoff_ms doubling up to reconnect_backoff_max_ms,
 * by a quarter either way at random, so followers of a dead leader do
 * not knock in step. */
static void back_off(struct follower_session *s, int64_t now_ms)
{
    s->connected = false;
    int64_t pause = s->cfg.backoff_ms;
    for (unsigned i = 0; i < s->losses && pause < s->cfg.reconnect_max_ms;
         i++) {
        pause *= 2;
    }
    if (pause > s->cfg.reconnect_max_ms) {
        pause = s->cfg.reconnect_max_ms;
    }
    pause = (int64_t)backoff_jitter((uint64_t)pause,
                                    backoff_random(&s->jitter));
    s->losses++;
    enter(s, FOLLOWER_SESSION_BACKOFF, now_ms + pause);
}

enum follower_step follower_session_next(struct follower_session *s,
                                         enum follower_want want,
                                         int64_t now_ms)
{
    if (s->state != FOLLOWER_SESSION_IDLE || want == FOLLOWER_WANT_NOTHING) {
        return FOLLOWER_STEP_NONE;
    }
    if (!s->connected) {
        enter(s, FOLLOWER_SESSION_CONNECTING,
              now_ms + s->cfg.connect_timeout_ms);
        return FOLLOWER_STEP_CONNECT;
    }
    enter(s, FOLLOWER_SESSION_IN_FLIGHT, now_ms + s->cfg.request_timeout_ms);
    return want == FOLLOWER_WANT_EPOCHS ? FOLLOWER_STEP_SEND_EPOCHS
                                        : FOLLOWER_STEP_SEND_FETCH;
}

void follower_session_connected(struct follower_session *s)
{
    if (s->state != FOLLOWER_SESSION_CONNECTING) {
        return; /* a late connect after a timeout: the glue dropped it */
    }
    s->connected = true;
    enter(s, FOLLOWER_SESSION_IDLE, FOLLOWER_SESSION_NO_DEADLINE);
}

void follower_session_closed(struct follower_session *s, int64_t now_ms)
{
    if (s->state == FOLLOWER_SESSION_BACKOFF) {
        s->connected = false;
        return; /* already backing off: keep the deadline */
    }
    if (s->state == FOLLOWER_SESSION_SYNCING) {
        s->connected = false; /* the syncs finish; then reconnect */
        check_invariants(s);
        return;
    }
    back_off(s, now_ms);
}

void follower_session_reset(struct follower_session *s)
{
    s->connected = false;
    if (s->state != FOLLOWER_SESSION_SYNCING) {
        enter(s, FOLLOWER_SESSION_IDLE, FOLLOWER_SESSION_NO_DEADLINE);
    }
    check_invariants(s);
}

/* After an answer or a sync: wait for durability, pause, or go on. */
static void settle(struct follower_session *s, bool errors,
                   int pending_syncs, int64_t now_ms)
{
    if (pending_syncs > 0) {
        enter(s, FOLLOWER_SESSION_SYNCING, FOLLOWER_SESSION_NO_DEADLINE);
    } else if (errors) {
        enter(s, FOLLOWER_SESSION_BACKOFF, now_ms + s->cfg.backoff_ms);
    } else {
        enter(s, FOLLOWER_SESSION_IDLE, FOLLOWER_SESSION_NO_DEADLINE);
    }
}

void follower_session_answered(struct follower_session *s, bool errors,
                               int pending_syncs, size_t largest_records,
                               bool was_fetch, int64_t now_ms)
{
    ASSERT(pending_syncs >= 0);
    if (s->state != FOLLOWER_SESSION_IN_FLIGHT) {
        return; /* nothing was asked: the glue drops such a frame */
    }
    s->losses = 0; /* the connection works */
    if (was_fetch) {
        s->partition_max_bytes = follower_next_partition_max(
            s->partition_max_bytes, largest_records,
            s->cfg.partition_max_bytes, s->cfg.response_max_bytes);
    }
    settle(s, errors, pending_syncs, now_ms);
}

void follower_session_synced(struct follower_session *s, int pending_syncs,
                             bool errors, int64_t now_ms)
{
    ASSERT(pending_syncs >= 0);
    if (s->state != FOLLOWER_SESSION_SYNCING || pending_syncs > 0) {
        return;
    }
    settle(s, errors, 0, now_ms);
}

enum follower_step follower_session_tick(struct follower_session *s,
                                         int64_t now_ms)
{
    if (s->deadline_ms == FOLLOWER_SESSION_NO_DEADLINE ||
        now_ms < s->deadline_ms) {
        return FOLLOWER_STEP_NONE;
    }
    switch (s->state) {
    case FOLLOWER_SESSION_CONNECTING:
    case FOLLOWER_SESSION_IN_FLIGHT:
        back_off(s, now_ms);
        return FOLLOWER_STEP_DISCONNECT;
    case FOLLOWER_SESSION_BACKOFF:
        enter(s, FOLLOWER_SESSION_IDLE, FOLLOWER_SESSION_NO_DEADLINE);
        return FOLLOWER_STEP_NONE;
    default:
        ASSERT(false); /* IDLE and SYNCING hold no deadline */
        return FOLLOWER_STEP_NONE;
    }
}

int64_t follower_session_deadline(const struct follower_session *s)
{
    return s->deadline_ms;
}

int32_t follower_next_partition_max(int32_t current, size_t largest,
                                    int32_t partition_max_bytes,
                                    int32_t response_max_bytes)
{
    int32_t lo = partition_max_bytes;
    int32_t hi = response_max_bytes > lo ? response_max_bytes : lo;
    ASSERT(current >= lo);
    ASSERT(current <= hi);
    if (largest >= (size_t)current / 2) {
        return current <= hi / 2 ? current * 2 : hi;
    }
    if (largest < (size_t)current / 8) {
        return current / 2 >= lo ? current / 2 : lo;
    }
    return current;
}
