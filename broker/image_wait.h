/* Answers held until the broker's metadata image reaches an offset: one
 * list sorted by that offset (first come first among equals), woken from
 * where the broker applies metadata (image_wait_reached()); each waiter
 * also has a deadline (image_wait_expire(), from one timer the caller
 * arms for image_wait_next_deadline()) and an owner, the client
 * connection, whose closing drops it (image_wait_close_owner()).
 *
 * A pure core: no clock, no I/O; time comes in as now_ms. The caller owns
 * each waiter's memory; the list only links it and hands it back exactly
 * once through the list's callback, already unlinked, so the callback may
 * free it or add new waiters. Owned by the broker (broker/broker.h); loop
 * thread only. */
#ifndef CAIRN_BROKER_IMAGE_WAIT_H
#define CAIRN_BROKER_IMAGE_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"

/* Why a waiter is handed back. */
enum image_wait_why {
    IMAGE_WAIT_REACHED,   /* the image holds its offset */
    IMAGE_WAIT_TIMED_OUT, /* its deadline passed first */
    IMAGE_WAIT_CLOSED,    /* its owner closed */
    IMAGE_WAIT_FLUSHED,   /* the broker is stopping */
};

struct image_waiter;
typedef void (*image_wait_cb)(struct image_waiter *w,
                              enum image_wait_why why);

struct image_waiter {
    int64_t offset;            /* handed back once the image reaches it */
    uint64_t deadline_ms;      /* or once now_ms reaches this */
    const void *owner;         /* image_wait_close_owner() matches it */
    struct image_waiter *prev; /* in offset order */
    struct image_waiter *next;
    bool linked;
};

struct image_wait {
    struct image_waiter *head; /* lowest offset */
    struct image_waiter *tail; /* highest offset, latest among equals */
    size_t n;
    size_t max;
    image_wait_cb cb;
};

/* An empty list of at most max waiters, handing them back through cb. */
void image_wait_init(struct image_wait *l, size_t max, image_wait_cb cb);

/* Links w (not linked yet) to be handed back once the image reaches
 * offset, by deadline_ms at the latest, or when owner closes. RC_FULL
 * with max waiters already linked (w is then untouched: answer now). */
MUST_CHECK int image_wait_add(struct image_wait *l, struct image_waiter *w,
                              int64_t offset, uint64_t deadline_ms,
                              const void *owner);

/* Unlinks w without handing it back; harmless when it is not linked. */
void image_wait_remove(struct image_wait *l, struct image_waiter *w);

/* The image reached offset: every waiter at or below it, lowest offset
 * first, is handed back with IMAGE_WAIT_REACHED. */
void image_wait_reached(struct image_wait *l, int64_t offset);

/* Every waiter whose deadline is at or before now_ms, in offset order,
 * is handed back with IMAGE_WAIT_TIMED_OUT. */
void image_wait_expire(struct image_wait *l, uint64_t now_ms);

/* Every waiter of owner is handed back with IMAGE_WAIT_CLOSED. */
void image_wait_close_owner(struct image_wait *l, const void *owner);

/* Every waiter is handed back with IMAGE_WAIT_FLUSHED. */
void image_wait_flush(struct image_wait *l);

/* The earliest deadline in *out; false when the list is empty. */
bool image_wait_next_deadline(const struct image_wait *l, uint64_t *out);

size_t image_wait_count(const struct image_wait *l);

#endif
