/* Unit tests for controller/sessions.c with a fake clock (plain numbers):
 * expiry exactly at the timeout boundary, clocks restarted on activation,
 * one expired broker at a time, oldest first, and fenced brokers never
 * reported. Images are built with meta_apply(). */
#include "common/limits.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "controller/sessions.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#define TIMEOUT_MS 9000u

static struct meta_image img;
static struct sessions s;

static void setup(void)
{
    meta_image_init(&img);
    sessions_init(&s);
}

static void teardown(void)
{
    meta_image_free(&img);
}

static void apply(const struct meta_record *rec)
{
    cr_assert_eq(meta_apply(&img, rec), RC_OK);
}

static void set_fenced(int32_t id, int8_t fenced)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_BROKER_CHANGE;
    rec.u.broker_change.broker_id = id;
    rec.u.broker_change.broker_epoch = meta_image_broker(&img, id)->epoch;
    rec.u.broker_change.fenced = fenced;
    apply(&rec);
}

/* Registers and unfences broker id. */
static void live_broker(int32_t id)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_REGISTER_BROKER;
    rec.u.register_broker.broker_id = id;
    rec.u.register_broker.incarnation.b[0] = (uint8_t)id;
    rec.u.register_broker.incarnation.b[1] = 1;
    snprintf(rec.u.register_broker.host, sizeof rec.u.register_broker.host,
             "localhost");
    rec.u.register_broker.port = 9092;
    apply(&rec);
    set_fenced(id, -1);
}

Test(sessions, lapse_exactly_after_the_timeout, .init = setup,
     .fini = teardown)
{
    live_broker(1);
    cr_assert_eq(sessions_touch(&s, 1, 1000), RC_OK);
    cr_assert(sessions_alive(&s, 1, 1000, TIMEOUT_MS));
    cr_assert(sessions_alive(&s, 1, 1000 + TIMEOUT_MS, TIMEOUT_MS));
    cr_assert_eq(sessions_next_expired(&s, &img, 1000 + TIMEOUT_MS,
                                       TIMEOUT_MS),
                 -1);
    cr_assert_not(sessions_alive(&s, 1, 1001 + TIMEOUT_MS, TIMEOUT_MS));
    cr_assert_eq(sessions_next_expired(&s, &img, 1001 + TIMEOUT_MS,
                                       TIMEOUT_MS),
                 1);
}

Test(sessions, touch_extends_and_clock_never_goes_back, .init = setup,
     .fini = teardown)
{
    live_broker(1);
    cr_assert_eq(sessions_touch(&s, 1, 1000), RC_OK);
    cr_assert_eq(sessions_touch(&s, 1, 5000), RC_OK);
    cr_assert(sessions_alive(&s, 1, 5000 + TIMEOUT_MS, TIMEOUT_MS));
    cr_assert_eq(sessions_touch(&s, 1, 2000), RC_OK); /* stale timestamp */
    cr_assert(sessions_alive(&s, 1, 5000 + TIMEOUT_MS, TIMEOUT_MS));
    /* A "now" before the last contact is not a lapse. */
    cr_assert(sessions_alive(&s, 1, 10, TIMEOUT_MS));
}

Test(sessions, unknown_broker_has_no_session, .init = setup,
     .fini = teardown)
{
    cr_assert_not(sessions_alive(&s, 3, 0, TIMEOUT_MS));
    cr_assert_eq(sessions_next_expired(&s, &img, 1u << 30, TIMEOUT_MS), -1);
}

Test(sessions, reset_starts_every_clock_at_activation, .init = setup,
     .fini = teardown)
{
    live_broker(1);
    live_broker(2);
    cr_assert_eq(sessions_touch(&s, 1, 10), RC_OK); /* long ago */
    sessions_reset(&s, &img, 50000);
    cr_assert(sessions_alive(&s, 1, 50000 + TIMEOUT_MS, TIMEOUT_MS));
    cr_assert(sessions_alive(&s, 2, 50000 + TIMEOUT_MS, TIMEOUT_MS));
    cr_assert_eq(sessions_next_expired(&s, &img, 50000 + TIMEOUT_MS,
                                       TIMEOUT_MS),
                 -1);
    cr_assert_eq(sessions_next_expired(&s, &img, 50001 + TIMEOUT_MS,
                                       TIMEOUT_MS),
                 1, "equally old: lowest id first");
}

Test(sessions, reset_forgets_brokers_not_in_the_image, .init = setup,
     .fini = teardown)
{
    cr_assert_eq(sessions_touch(&s, 7, 100), RC_OK);
    sessions_reset(&s, &img, 200);
    cr_assert_not(sessions_alive(&s, 7, 200, TIMEOUT_MS));
}

Test(sessions, broker_registered_after_reset_counts_from_reset,
     .init = setup, .fini = teardown)
{
    sessions_reset(&s, &img, 1000);
    live_broker(4); /* never touched */
    cr_assert_not(sessions_alive(&s, 4, 1000, TIMEOUT_MS));
    cr_assert_eq(sessions_next_expired(&s, &img, 1000 + TIMEOUT_MS,
                                       TIMEOUT_MS),
                 -1);
    cr_assert_eq(sessions_next_expired(&s, &img, 1001 + TIMEOUT_MS,
                                       TIMEOUT_MS),
                 4);
}

Test(sessions, expired_brokers_come_one_at_a_time_oldest_first,
     .init = setup, .fini = teardown)
{
    live_broker(1);
    live_broker(2);
    live_broker(3);
    cr_assert_eq(sessions_touch(&s, 1, 3000), RC_OK);
    cr_assert_eq(sessions_touch(&s, 2, 1000), RC_OK);
    cr_assert_eq(sessions_touch(&s, 3, 2000), RC_OK);
    uint64_t now = 100000;
    cr_assert_eq(sessions_next_expired(&s, &img, now, TIMEOUT_MS), 2);
    /* Asking again before the fence is applied gives the same broker. */
    cr_assert_eq(sessions_next_expired(&s, &img, now, TIMEOUT_MS), 2);
    set_fenced(2, 1);
    cr_assert_eq(sessions_next_expired(&s, &img, now, TIMEOUT_MS), 3);
    set_fenced(3, 1);
    cr_assert_eq(sessions_next_expired(&s, &img, now, TIMEOUT_MS), 1);
    set_fenced(1, 1);
    cr_assert_eq(sessions_next_expired(&s, &img, now, TIMEOUT_MS), -1);
}

Test(sessions, fenced_brokers_are_never_reported, .init = setup,
     .fini = teardown)
{
    live_broker(1);
    live_broker(2);
    sessions_reset(&s, &img, 0);
    set_fenced(1, 1);
    cr_assert_eq(sessions_next_expired(&s, &img, 1u << 20, TIMEOUT_MS), 2);
    set_fenced(2, 1);
    cr_assert_eq(sessions_next_expired(&s, &img, 1u << 20, TIMEOUT_MS), -1);
    /* Unfenced again (after a heartbeat) it is watched again. */
    cr_assert_eq(sessions_touch(&s, 1, 1u << 20), RC_OK);
    set_fenced(1, -1);
    cr_assert_eq(sessions_next_expired(&s, &img, 1u << 20, TIMEOUT_MS), -1);
    cr_assert_eq(sessions_next_expired(&s, &img, (1u << 20) + TIMEOUT_MS + 1,
                                       TIMEOUT_MS),
                 1);
}

Test(sessions, table_is_bounded, .init = setup, .fini = teardown)
{
    /* Inserted out of order: the table stays sorted by id. */
    for (int32_t i = 0; i < (int32_t)META_BROKERS_MAX; i++) {
        int32_t id = (i * 7) % (int32_t)META_BROKERS_MAX;
        cr_assert_eq(sessions_touch(&s, id, (uint64_t)i), RC_OK);
    }
    cr_assert_eq(sessions_touch(&s, 5000, 1), RC_FULL);
    cr_assert_eq(sessions_touch(&s, 14, 1), RC_OK, "known ids still work");
    for (int32_t id = 0; id < (int32_t)META_BROKERS_MAX; id++) {
        cr_assert(sessions_alive(&s, id, 2000, TIMEOUT_MS));
    }
    cr_assert_not(sessions_alive(&s, 5000, 2000, TIMEOUT_MS));
}
