/* The client's reason (KIP-800: JoinGroup v8+, LeaveGroup v5+) in the
 * group's state-change events (broker/group/group.h, io->event), and
 * events without one unchanged. The membership rules themselves are in
 * test_group.c. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "broker/group/group.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"

#define T0 1000000
#define EVENTS_MAX 16

static struct groups gs;
static struct group_io io;
static char events[EVENTS_MAX][512];
static size_t n_events;
static char member_id[128]; /* the last JoinGroup answer's */
static int16_t join_error;

static int32_t partition_for(struct group_io *i, struct slice id)
{
    (void)i, (void)id;
    return 0;
}

static void join_done(struct group_io *i, void *req,
                      const struct group_join_result *res)
{
    (void)i, (void)req;
    join_error = res->error_code;
    snprintf(member_id, sizeof member_id, "%.*s", (int)res->member_id.len,
             (const char *)res->member_id.ptr);
}

static void sync_done(struct group_io *i, void *req,
                      const struct group_sync_result *res)
{
    (void)i, (void)req, (void)res;
}

static void event(struct group_io *i, const char *text)
{
    (void)i;
    if (n_events < EVENTS_MAX) {
        snprintf(events[n_events++], sizeof events[0], "%s", text);
    }
}

static void setup(void)
{
    io = (struct group_io){.partition_for = partition_for,
                           .join_done = join_done,
                           .sync_done = sync_done,
                           .event = event};
    struct group_config cfg;
    group_config_default(&cfg);
    cfg.initial_rebalance_delay_ms = 0;
    group_init(&gs, &io, &cfg);
    n_events = 0;
}

static void teardown(void)
{
    group_free(&gs);
}

TestSuite(group_reason, .init = setup, .fini = teardown);

static bool any_event(const char *want)
{
    for (size_t k = 0; k < n_events; k++) {
        if (strstr(events[k], want) != NULL) {
            return true;
        }
    }
    return false;
}

/* JoinGroup v0..3 rules (no member-id round) with reason (NULL: none). */
static void join(const char *reason)
{
    struct group_protocol p = {slice_from_str("range"), slice_from_str("")};
    struct group_join_request r = {
        .group_id = slice_from_str("g"), .member_id = slice_from_str(""),
        .group_instance_id = slice_null(), .client_id = slice_from_str("c"),
        .client_host = slice_from_str("/127.0.0.1"),
        .client_software = slice_from_str(""),
        .protocol_type = slice_from_str("consumer"), .protocols = &p,
        .n_protocols = 1, .session_timeout_ms = 10000,
        .rebalance_timeout_ms = 10000, .require_known_member_id = false,
        .reason = reason != NULL ? slice_from_str(reason) : slice_null()};
    cr_assert_eq(group_join(&gs, (void *)1, &r, T0), RC_OK);
    group_tick(&gs, T0);
    cr_assert_eq(join_error, KAFKA_ERROR_NONE);
}

Test(group_reason, join_reason_is_in_the_rebalance_event)
{
    join("rebalance failed due to MemberIdRequiredException");
    cr_assert(any_event("joined; client reason: rebalance failed due to "
                        "MemberIdRequiredException)"),
              "event: %s", n_events > 0 ? events[0] : "(none)");
}

Test(group_reason, a_long_reason_is_cut)
{
    char reason[200];
    memset(reason, 'x', sizeof reason - 1);
    reason[sizeof reason - 1] = '\0';
    join(reason);
    char want[128];
    snprintf(want, sizeof want, "client reason: %.64s...)", reason);
    cr_assert(any_event(want), "event: %s", events[0]);
}

Test(group_reason, leave_reason_is_in_the_event_and_none_adds_nothing)
{
    join(NULL);
    cr_assert(any_event("(member c-"), "event: %s", events[0]);
    cr_assert_not(any_event("client reason"));
    struct group_leave_member m = {
        .member_id = slice_from_str(member_id),
        .group_instance_id = slice_null(),
        .reason = slice_from_str("the consumer is being closed")};
    cr_assert_eq(group_leave(&gs, slice_from_str("g"), &m, 1, T0 + 1),
                 KAFKA_ERROR_NONE);
    cr_assert_eq(m.error_code, KAFKA_ERROR_NONE);
    cr_assert(any_event("left (LeaveGroup); client reason: the consumer is "
                        "being closed)"),
              "events: %zu, last: %s", n_events, events[n_events - 1]);
}
