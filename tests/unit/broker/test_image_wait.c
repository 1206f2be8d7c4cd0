/* Unit tests for broker/image_wait.c: waiters come back in offset order
 * (first come first among equal offsets) once the image reaches theirs,
 * at their deadline if it does not, when their owner closes, or all at
 * once on a flush; each exactly once and unlinked, so the callback may
 * free or re-add it; the list refuses waiters beyond its bound. */
#include "broker/image_wait.h"

#include <criterion/criterion.h>
#include <string.h>

#include "common/rc.h"

#define WAITERS 8

/* The record of what came back: waiter indexes and why, in order. */
static struct image_waiter ws[WAITERS];
static int got[64];
static enum image_wait_why whys[64];
static size_t n_got;
static struct image_wait *readd_to;   /* re-add each waiter handed back */

static void back_cb(struct image_waiter *w, enum image_wait_why why)
{
    cr_assert(!w->linked, "handed back while still linked");
    cr_assert_lt(n_got, 64);
    got[n_got] = (int)(w - ws);
    whys[n_got] = why;
    n_got++;
    if (readd_to != NULL && why == IMAGE_WAIT_REACHED) {
        cr_assert_eq(image_wait_add(readd_to, w, w->offset + 100,
                                    w->deadline_ms, w->owner),
                     RC_OK);
    }
}

static void setup(void)
{
    memset(ws, 0, sizeof ws);
    n_got = 0;
    readd_to = NULL;
}

TestSuite(image_wait, .init = setup);

static void add(struct image_wait *l, int i, int64_t offset,
                uint64_t deadline_ms, const void *owner)
{
    cr_assert_eq(image_wait_add(l, &ws[i], offset, deadline_ms, owner),
                 RC_OK);
}

Test(image_wait, wakes_in_offset_order_up_to_the_applied_offset)
{
    struct image_wait l;
    image_wait_init(&l, WAITERS, back_cb);
    add(&l, 0, 30, 1000, NULL);
    add(&l, 1, 10, 1000, NULL);
    add(&l, 2, 20, 1000, NULL);
    add(&l, 3, 10, 1000, NULL); /* after 1: same offset, later */
    add(&l, 4, 40, 1000, NULL);
    image_wait_reached(&l, 9);
    cr_assert_eq(n_got, 0, "nothing below its offset");
    image_wait_reached(&l, 20);
    cr_assert_eq(n_got, 3);
    cr_assert_eq(got[0], 1);
    cr_assert_eq(got[1], 3);
    cr_assert_eq(got[2], 2);
    cr_assert_eq(whys[0], IMAGE_WAIT_REACHED);
    cr_assert_eq(image_wait_count(&l), 2);
    image_wait_reached(&l, 35);
    cr_assert_eq(n_got, 4);
    cr_assert_eq(got[3], 0);
    image_wait_reached(&l, 35);
    cr_assert_eq(n_got, 4, "each comes back once");
    image_wait_reached(&l, 1000);
    cr_assert_eq(n_got, 5);
    cr_assert_eq(got[4], 4);
    cr_assert_eq(image_wait_count(&l), 0);
}

Test(image_wait, deadline_hands_back_only_the_expired)
{
    struct image_wait l;
    image_wait_init(&l, WAITERS, back_cb);
    add(&l, 0, 10, 500, NULL);
    add(&l, 1, 20, 100, NULL);
    add(&l, 2, 30, 300, NULL);
    uint64_t next = 0;
    cr_assert(image_wait_next_deadline(&l, &next));
    cr_assert_eq(next, 100);
    image_wait_expire(&l, 99);
    cr_assert_eq(n_got, 0);
    image_wait_expire(&l, 300);
    cr_assert_eq(n_got, 2);
    cr_assert_eq(got[0], 1, "expired ones come in offset order");
    cr_assert_eq(got[1], 2);
    cr_assert_eq(whys[0], IMAGE_WAIT_TIMED_OUT);
    cr_assert_eq(whys[1], IMAGE_WAIT_TIMED_OUT);
    cr_assert(image_wait_next_deadline(&l, &next));
    cr_assert_eq(next, 500);
    image_wait_reached(&l, 10);
    cr_assert_eq(n_got, 3);
    cr_assert_eq(whys[2], IMAGE_WAIT_REACHED);
    cr_assert(!image_wait_next_deadline(&l, &next), "empty: no deadline");
}

Test(image_wait, closing_an_owner_drops_only_its_waiters)
{
    struct image_wait l;
    image_wait_init(&l, WAITERS, back_cb);
    int conn_a = 0;
    int conn_b = 0;
    add(&l, 0, 10, 1000, &conn_a);
    add(&l, 1, 20, 1000, &conn_b);
    add(&l, 2, 30, 1000, &conn_a);
    image_wait_close_owner(&l, &conn_a);
    cr_assert_eq(n_got, 2);
    cr_assert_eq(got[0], 0);
    cr_assert_eq(got[1], 2);
    cr_assert_eq(whys[0], IMAGE_WAIT_CLOSED);
    cr_assert_eq(image_wait_count(&l), 1);
    image_wait_reached(&l, 100);
    cr_assert_eq(n_got, 3);
    cr_assert_eq(got[2], 1);
}

Test(image_wait, flush_hands_back_everything)
{
    struct image_wait l;
    image_wait_init(&l, WAITERS, back_cb);
    for (int i = 0; i < 4; i++) {
        add(&l, i, 100 - i, 1000, NULL);
    }
    image_wait_flush(&l);
    cr_assert_eq(n_got, 4);
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(whys[i], IMAGE_WAIT_FLUSHED);
        cr_assert(!ws[got[i]].linked);
    }
    cr_assert_eq(got[0], 3, "lowest offset first");
    cr_assert_eq(image_wait_count(&l), 0);
}

Test(image_wait, refuses_beyond_its_bound)
{
    struct image_wait l;
    image_wait_init(&l, 2, back_cb);
    add(&l, 0, 10, 1000, NULL);
    add(&l, 1, 10, 1000, NULL);
    cr_assert_eq(image_wait_add(&l, &ws[2], 5, 1000, NULL), RC_FULL);
    cr_assert(!ws[2].linked);
    cr_assert_eq(image_wait_count(&l), 2);
    image_wait_reached(&l, 10);
    cr_assert_eq(n_got, 2);
    add(&l, 2, 5, 1000, NULL);
}

Test(image_wait, remove_unlinks_without_handing_back)
{
    struct image_wait l;
    image_wait_init(&l, WAITERS, back_cb);
    add(&l, 0, 10, 1000, NULL);
    add(&l, 1, 20, 1000, NULL);
    add(&l, 2, 30, 1000, NULL);
    image_wait_remove(&l, &ws[1]);
    image_wait_remove(&l, &ws[1]); /* harmless twice */
    cr_assert_eq(image_wait_count(&l), 2);
    image_wait_reached(&l, 100);
    cr_assert_eq(n_got, 2);
    cr_assert_eq(got[0], 0);
    cr_assert_eq(got[1], 2);
}

Test(image_wait, callback_may_add_again)
{
    struct image_wait l;
    image_wait_init(&l, WAITERS, back_cb);
    add(&l, 0, 10, 1000, NULL);
    add(&l, 1, 20, 1000, NULL);
    readd_to = &l;
    image_wait_reached(&l, 20);
    cr_assert_eq(n_got, 2);
    cr_assert_eq(image_wait_count(&l), 2, "both back at offset + 100");
    readd_to = NULL;
    image_wait_reached(&l, 110);
    cr_assert_eq(n_got, 3);
    cr_assert_eq(got[2], 0);
    image_wait_expire(&l, 1000);
    cr_assert_eq(n_got, 4);
    cr_assert_eq(got[3], 1);
    cr_assert_eq(whys[3], IMAGE_WAIT_TIMED_OUT);
}
