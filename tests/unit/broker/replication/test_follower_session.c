/* Tests for broker/replication/follower_session.c: the follower's pure
 * session with one leader (connect, one request in flight, durability
 * before the next fetch, back-off, connect and request timeouts) and the
 * adaptive fetch size. */
#include <criterion/criterion.h>

#include "broker/replication/follower_session.h"

#define BACKOFF 200
#define RECONNECT_MAX 1000
/* A pause after a lost connection: backoff (doubled per loss in a row)
 * within a quarter either way. */
#define LOSS_LO(b) ((b) * 3 / 4)
#define LOSS_HI(b) ((b) * 5 / 4)
#define CONNECT_TIMEOUT 10000
#define REQUEST_TIMEOUT 30500
#define PART_MAX (1 << 20)
#define RESP_MAX (10 << 20)

static struct follower_session s;

static void setup(void)
{
    struct follower_session_config cfg = {
        .backoff_ms = BACKOFF,
        .reconnect_max_ms = RECONNECT_MAX,
        .jitter_seed = 42,
        .connect_timeout_ms = CONNECT_TIMEOUT,
        .request_timeout_ms = REQUEST_TIMEOUT,
        .partition_max_bytes = PART_MAX,
        .response_max_bytes = RESP_MAX,
    };
    follower_session_init(&s, &cfg);
}

TestSuite(follower_session, .init = setup);

/* Connects at t0 and is ready to send. */
static void connect_at(int64_t t0)
{
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, t0),
                 FOLLOWER_STEP_CONNECT);
    cr_assert_eq(follower_session_deadline(&s), t0 + CONNECT_TIMEOUT);
    follower_session_connected(&s);
    cr_assert_eq(s.state, FOLLOWER_SESSION_IDLE);
    cr_assert_eq(follower_session_deadline(&s), FOLLOWER_SESSION_NO_DEADLINE);
}

Test(follower_session, nothing_wanted_does_nothing)
{
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_NOTHING, 0),
                 FOLLOWER_STEP_NONE);
    cr_assert_eq(s.state, FOLLOWER_SESSION_IDLE);
    cr_assert_eq(follower_session_deadline(&s), FOLLOWER_SESSION_NO_DEADLINE);
}

Test(follower_session, epochs_go_before_fetches_one_request_at_a_time)
{
    connect_at(0);
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_EPOCHS, 1),
                 FOLLOWER_STEP_SEND_EPOCHS);
    cr_assert_eq(follower_session_deadline(&s), 1 + REQUEST_TIMEOUT);
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, 2),
                 FOLLOWER_STEP_NONE, "one request in flight");
    follower_session_answered(&s, false, 0, 0, false, 3);
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, 3),
                 FOLLOWER_STEP_SEND_FETCH);
}

Test(follower_session, the_next_fetch_waits_for_durability)
{
    connect_at(0);
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, 1),
                 FOLLOWER_STEP_SEND_FETCH);
    follower_session_answered(&s, false, 2, 100, true, 5);
    cr_assert_eq(s.state, FOLLOWER_SESSION_SYNCING);
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, 6),
                 FOLLOWER_STEP_NONE);
    follower_session_synced(&s, 1, false, 7);
    cr_assert_eq(s.state, FOLLOWER_SESSION_SYNCING, "one sync left");
    follower_session_synced(&s, 0, false, 8);
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, 8),
                 FOLLOWER_STEP_SEND_FETCH);
}

Test(follower_session, errors_pause_for_the_backoff)
{
    connect_at(0);
    follower_session_next(&s, FOLLOWER_WANT_FETCH, 1);
    follower_session_answered(&s, true, 0, 0, true, 10);
    cr_assert_eq(s.state, FOLLOWER_SESSION_BACKOFF);
    cr_assert_eq(follower_session_deadline(&s), 10 + BACKOFF);
    cr_assert_eq(follower_session_tick(&s, 10 + BACKOFF - 1),
                 FOLLOWER_STEP_NONE);
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, 100),
                 FOLLOWER_STEP_NONE);
    cr_assert_eq(follower_session_tick(&s, 10 + BACKOFF), FOLLOWER_STEP_NONE);
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, 10 + BACKOFF),
                 FOLLOWER_STEP_SEND_FETCH, "still connected");
}

/* A leader that accepts the request and never answers. */
Test(follower_session, an_unanswered_request_times_out_and_reconnects)
{
    connect_at(0);
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, 1),
                 FOLLOWER_STEP_SEND_FETCH);
    cr_assert_eq(follower_session_tick(&s, REQUEST_TIMEOUT),
                 FOLLOWER_STEP_NONE);
    cr_assert_eq(follower_session_tick(&s, 1 + REQUEST_TIMEOUT),
                 FOLLOWER_STEP_DISCONNECT);
    cr_assert_eq(s.state, FOLLOWER_SESSION_BACKOFF);
    cr_assert_not(s.connected);
    int64_t until = follower_session_deadline(&s);
    cr_assert_geq(until, 1 + REQUEST_TIMEOUT + LOSS_LO(BACKOFF));
    cr_assert_leq(until, 1 + REQUEST_TIMEOUT + LOSS_HI(BACKOFF));
    /* The glue's close of the dropped connection changes nothing. */
    follower_session_closed(&s, 1 + REQUEST_TIMEOUT);
    cr_assert_eq(follower_session_deadline(&s), until);
    /* A late answer is not taken. */
    follower_session_answered(&s, false, 0, 0, true, 1 + REQUEST_TIMEOUT);
    cr_assert_eq(s.state, FOLLOWER_SESSION_BACKOFF);
    int64_t t = until;
    follower_session_tick(&s, t);
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, t),
                 FOLLOWER_STEP_CONNECT, "a new connection");
}

Test(follower_session, a_hanging_connect_times_out)
{
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, 0),
                 FOLLOWER_STEP_CONNECT);
    cr_assert_eq(follower_session_tick(&s, CONNECT_TIMEOUT),
                 FOLLOWER_STEP_DISCONNECT);
    cr_assert_eq(s.state, FOLLOWER_SESSION_BACKOFF);
    follower_session_connected(&s); /* too late: ignored */
    cr_assert_not(s.connected);
    follower_session_tick(&s, CONNECT_TIMEOUT + LOSS_HI(BACKOFF));
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH,
                                       CONNECT_TIMEOUT + LOSS_HI(BACKOFF)),
                 FOLLOWER_STEP_CONNECT);
}

Test(follower_session, a_closed_connection_backs_off_then_reconnects)
{
    connect_at(0);
    follower_session_next(&s, FOLLOWER_WANT_FETCH, 1);
    follower_session_closed(&s, 50);
    cr_assert_eq(s.state, FOLLOWER_SESSION_BACKOFF);
    cr_assert_geq(follower_session_deadline(&s), 50 + LOSS_LO(BACKOFF));
    cr_assert_leq(follower_session_deadline(&s), 50 + LOSS_HI(BACKOFF));
    follower_session_tick(&s, 50 + LOSS_HI(BACKOFF));
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH,
                                       50 + LOSS_HI(BACKOFF)),
                 FOLLOWER_STEP_CONNECT);
}

Test(follower_session, a_close_while_syncing_waits_for_the_syncs)
{
    connect_at(0);
    follower_session_next(&s, FOLLOWER_WANT_FETCH, 1);
    follower_session_answered(&s, false, 1, 0, true, 2);
    follower_session_closed(&s, 3);
    cr_assert_eq(s.state, FOLLOWER_SESSION_SYNCING);
    follower_session_synced(&s, 0, false, 4);
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, 4),
                 FOLLOWER_STEP_CONNECT);
}

Test(follower_session, a_moved_leader_reconnects_at_once)
{
    connect_at(0);
    follower_session_next(&s, FOLLOWER_WANT_FETCH, 1);
    follower_session_reset(&s);
    cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, 2),
                 FOLLOWER_STEP_CONNECT);
}

Test(follower_session, full_answers_grow_the_fetch_size)
{
    connect_at(0);
    int32_t seen[6];
    for (int i = 0; i < 6; i++) {
        follower_session_next(&s, FOLLOWER_WANT_FETCH, i);
        follower_session_answered(&s, false, 0,
                                  (size_t)s.partition_max_bytes, true, i);
        seen[i] = s.partition_max_bytes;
    }
    cr_expect_eq(seen[0], 2 << 20);
    cr_expect_eq(seen[2], 8 << 20);
    cr_expect_eq(seen[3], RESP_MAX, "capped at the response's maximum");
    cr_expect_eq(seen[5], RESP_MAX);
    follower_session_next(&s, FOLLOWER_WANT_EPOCHS, 7);
    follower_session_answered(&s, false, 0, 0, false, 7);
    cr_expect_eq(s.partition_max_bytes, RESP_MAX, "epochs do not steer it");
}

Test(follower_session, sizing_halves_back_and_keeps_in_between)
{
    cr_expect_eq(follower_next_partition_max(8 << 20, 100, PART_MAX,
                                             RESP_MAX),
                 4 << 20);
    cr_expect_eq(follower_next_partition_max(PART_MAX, 0, PART_MAX,
                                             RESP_MAX),
                 PART_MAX, "never below replica.fetch.max.bytes");
    cr_expect_eq(follower_next_partition_max(4 << 20, 1 << 20, PART_MAX,
                                             RESP_MAX),
                 4 << 20);
    cr_expect_eq(follower_next_partition_max(4 << 20, 2 << 20, PART_MAX,
                                             RESP_MAX),
                 8 << 20);
    cr_expect_eq(follower_next_partition_max(PART_MAX, PART_MAX, PART_MAX,
                                             1024),
                 PART_MAX, "a response max below the partition max");
}

/* Connects refused in a row: each pause about doubles (reconnect.backoff
 * style) up to the cap; an answer on a working connection starts over. */
Test(follower_session, lost_connections_in_a_row_back_off_longer)
{
    int64_t t = 0;
    int64_t expect = BACKOFF;
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(follower_session_next(&s, FOLLOWER_WANT_FETCH, t),
                     FOLLOWER_STEP_CONNECT);
        follower_session_closed(&s, t); /* refused */
        int64_t pause = follower_session_deadline(&s) - t;
        cr_assert_geq(pause, LOSS_LO(expect), "loss %d: %lld", i,
                      (long long)pause);
        cr_assert_leq(pause, LOSS_HI(expect), "loss %d: %lld", i,
                      (long long)pause);
        t += pause;
        follower_session_tick(&s, t);
        expect = expect * 2 > RECONNECT_MAX ? RECONNECT_MAX : expect * 2;
    }
    cr_assert_eq(expect, RECONNECT_MAX, "the cap was reached");
    connect_at(t);
    follower_session_next(&s, FOLLOWER_WANT_FETCH, t);
    follower_session_answered(&s, false, 0, 0, true, t);
    follower_session_next(&s, FOLLOWER_WANT_FETCH, t);
    follower_session_closed(&s, t);
    cr_assert_leq(follower_session_deadline(&s) - t, LOSS_HI(BACKOFF),
                  "an answer starts the back-off over");
}
