/* The follower's session with one leader broker, as a pure state machine:
 * when to connect, which request to send next (OffsetForLeaderEpoch for
 * partitions that must truncate first, else Fetch), one request in
 * flight, waiting for appended data to be fdatasync'd before the next
 * fetch, back-off after errors, and deadlines for connecting and for an
 * answer, so a leader that accepts the connection but never answers (or a
 * connect that hangs) costs one timeout, not every partition followed
 * from it forever. The adaptive fetch size lives here too.
 *
 * No I/O, no clock: every event takes now_ms and the session answers
 * with what to do (struct follower_step); the libuv glue
 * (broker/replication/follower.c) carries bytes, keeps one timer at
 * follower_session_deadline() and calls follower_session_tick() when it
 * fires. Loop thread only; one session per leader.
 *
 *     IDLE --want--> CONNECTING --connected--> IDLE --want--> IN_FLIGHT
 *     IN_FLIGHT --answer--> SYNCING (appended, not yet durable)
 *                        \-> BACKOFF (errors)   \-> IDLE
 *     SYNCING --synced--> IDLE;   BACKOFF --deadline--> IDLE
 *     CONNECTING or IN_FLIGHT --deadline or closed--> BACKOFF (disconnect)
 */
#ifndef CAIRN_BROKER_FOLLOWER_SESSION_H
#define CAIRN_BROKER_FOLLOWER_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FOLLOWER_SESSION_NO_DEADLINE (-1)

enum follower_session_state {
    FOLLOWER_SESSION_IDLE,       /* connected or not; nothing out */
    FOLLOWER_SESSION_CONNECTING,
    FOLLOWER_SESSION_IN_FLIGHT,  /* a request is out */
    FOLLOWER_SESSION_SYNCING,    /* appended; waiting for durability */
    FOLLOWER_SESSION_BACKOFF,
};

/* What the glue does after an event. */
enum follower_step {
    FOLLOWER_STEP_NONE,
    FOLLOWER_STEP_CONNECT,       /* start connecting to the leader */
    FOLLOWER_STEP_SEND_EPOCHS,   /* send OffsetForLeaderEpoch */
    FOLLOWER_STEP_SEND_FETCH,    /* send Fetch */
    FOLLOWER_STEP_DISCONNECT,    /* drop the connection (then back off) */
};

/* The work waiting at the leader, as the glue sees its partitions. */
enum follower_want {
    FOLLOWER_WANT_NOTHING,
    FOLLOWER_WANT_EPOCHS,        /* some partition must truncate first */
    FOLLOWER_WANT_FETCH,
};

struct follower_session_config {
    int64_t backoff_ms;          /* replica.fetch.backoff.ms */
    /* reconnect.backoff.max.ms: after connections lost in a row the pause
     * doubles from backoff_ms up to this (jittered by a quarter). */
    int64_t reconnect_max_ms;
    uint64_t jitter_seed;        /* any value: the jitter's sequence */
    int64_t connect_timeout_ms;  /* socket.connection.setup.timeout.ms */
    int64_t request_timeout_ms;  /* replica.socket.timeout.ms */
    int32_t partition_max_bytes; /* replica.fetch.max.bytes */
    int32_t response_max_bytes;  /* replica.fetch.response.max.bytes */
};

struct follower_session {
    struct follower_session_config cfg;
    enum follower_session_state state;
    bool connected;
    int64_t deadline_ms;         /* FOLLOWER_SESSION_NO_DEADLINE: none */
    int32_t partition_max_bytes; /* bytes to ask per partition now */
    unsigned losses;             /* connections lost since an answer */
    uint64_t jitter;             /* xorshift state */
};

/* A fresh session, idle and disconnected. The config must satisfy
 * request_timeout_ms > 0, connect_timeout_ms > 0, backoff_ms > 0,
 * reconnect_max_ms >= backoff_ms and partition_max_bytes > 0. */
void follower_session_init(struct follower_session *s,
                           const struct follower_session_config *cfg);

/* What to do now for want: connect, send a request, or nothing (busy,
 * backing off, or nothing wanted). A send step moves to IN_FLIGHT with a
 * request deadline; a connect step to CONNECTING with a connect one. */
enum follower_step follower_session_next(struct follower_session *s,
                                         enum follower_want want,
                                         int64_t now_ms);

/* The connection is up (from CONNECTING): idle, ready to send. */
void follower_session_connected(struct follower_session *s);

/* The connection went away, or a request could not be sent: back off
 * (whatever was in flight is lost). */
void follower_session_closed(struct follower_session *s, int64_t now_ms);

/* The answer to the request in flight arrived and was applied. errors:
 * some partition (or the response) carried an error worth a pause.
 * pending_syncs: appends still waiting to be durable. largest_records:
 * the largest record set a partition came back with (Fetch only; it
 * steers the fetch size, follower_next_partition_max()). */
void follower_session_answered(struct follower_session *s, bool errors,
                               int pending_syncs, size_t largest_records,
                               bool was_fetch, int64_t now_ms);

/* Appended data became durable; pending_syncs are still outstanding. */
void follower_session_synced(struct follower_session *s, int pending_syncs,
                             bool errors, int64_t now_ms);

/* The leader moved (a new address): forget the connection without a
 * pause; a session waiting for syncs keeps waiting. */
void follower_session_reset(struct follower_session *s);

/* The deadline passed (or any time; nothing happens before it): a
 * connect or request that timed out says DISCONNECT (and the session
 * backs off), an ended back-off returns to IDLE (then call next). */
enum follower_step follower_session_tick(struct follower_session *s,
                                         int64_t now_ms);

/* When the glue's timer should fire next, or FOLLOWER_SESSION_NO_DEADLINE. */
int64_t follower_session_deadline(const struct follower_session *s);

/* The bytes to ask per partition in the next round, given this round's
 * ask (current) and the largest record set a partition answered with
 * (largest): doubled, up to response_max_bytes, when an answer reached
 * half of the ask (the leader has a backlog; every round costs an
 * fdatasync here, so a round must carry what the leader appended during
 * the last one); halved, down to partition_max_bytes, when every answer
 * stayed under an eighth; else unchanged. */
int32_t follower_next_partition_max(int32_t current, size_t largest,
                                    int32_t partition_max_bytes,
                                    int32_t response_max_bytes);

#endif
