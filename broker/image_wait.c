/* Answers held until the metadata image reaches an offset
 * (broker/image_wait.h). */
#include "broker/image_wait.h"

#include "common/rc.h"

/* The links agree, offsets never decrease, and n counts them. */
static bool sorted(const struct image_wait *l)
{
    size_t n = 0;
    for (const struct image_waiter *w = l->head; w != NULL; w = w->next) {
        if (!w->linked || (w->next != NULL && (w->next->offset < w->offset ||
                                               w->next->prev != w))) {
            return false;
        }
        n++;
    }
    return n == l->n;
}

static void check_invariants(const struct image_wait *l)
{
    ASSERT(l->n <= l->max);
    ASSERT((l->head == NULL) == (l->n == 0));
    ASSERT((l->tail == NULL) == (l->n == 0));
    DEBUG_ASSERT(sorted(l));
}

void image_wait_init(struct image_wait *l, size_t max, image_wait_cb cb)
{
    ASSERT(max > 0);
    *l = (struct image_wait){.max = max, .cb = cb};
}

int image_wait_add(struct image_wait *l, struct image_waiter *w,
                   int64_t offset, uint64_t deadline_ms, const void *owner)
{
    ASSERT(!w->linked);
    if (l->n >= l->max) {
        return RC_FULL;
    }
    w->offset = offset;
    w->deadline_ms = deadline_ms;
    w->owner = owner;
    /* From the tail: a newer change usually has the highest offset. */
    struct image_waiter *after = l->tail;
    while (after != NULL && after->offset > offset) {
        after = after->prev;
    }
    w->prev = after;
    w->next = after != NULL ? after->next : l->head;
    if (w->next != NULL) {
        w->next->prev = w;
    } else {
        l->tail = w;
    }
    if (after != NULL) {
        after->next = w;
    } else {
        l->head = w;
    }
    w->linked = true;
    l->n++;
    check_invariants(l);
    return RC_OK;
}

void image_wait_remove(struct image_wait *l, struct image_waiter *w)
{
    if (!w->linked) {
        return;
    }
    if (w->prev != NULL) {
        w->prev->next = w->next;
    } else {
        l->head = w->next;
    }
    if (w->next != NULL) {
        w->next->prev = w->prev;
    } else {
        l->tail = w->prev;
    }
    w->prev = w->next = NULL;
    w->linked = false;
    l->n--;
    check_invariants(l);
}

void image_wait_reached(struct image_wait *l, int64_t offset)
{
    while (l->head != NULL && l->head->offset <= offset) {
        struct image_waiter *w = l->head;
        image_wait_remove(l, w);
        l->cb(w, IMAGE_WAIT_REACHED);
    }
}

typedef bool (*match_fn)(const struct image_waiter *w, const void *key);

/* Unlinks every waiter that matches into a chain first, then hands each
 * back: a callback may then add or free waiters without breaking the
 * walk. */
static void hand_back(struct image_wait *l, match_fn match, const void *key,
                      enum image_wait_why why)
{
    struct image_waiter *chain = NULL;
    struct image_waiter **end = &chain;
    struct image_waiter *w = l->head;
    while (w != NULL) {
        struct image_waiter *next = w->next;
        if (match(w, key)) {
            image_wait_remove(l, w);
            *end = w;
            end = &w->next;
        }
        w = next;
    }
    while (chain != NULL) {
        w = chain;
        chain = w->next;
        w->next = NULL;
        l->cb(w, why);
    }
}

static bool match_expired(const struct image_waiter *w, const void *key)
{
    return w->deadline_ms <= *(const uint64_t *)key;
}

static bool match_owner(const struct image_waiter *w, const void *key)
{
    return w->owner == key;
}

static bool match_all(const struct image_waiter *w, const void *key)
{
    (void)w;
    (void)key;
    return true;
}

void image_wait_expire(struct image_wait *l, uint64_t now_ms)
{
    hand_back(l, match_expired, &now_ms, IMAGE_WAIT_TIMED_OUT);
}

void image_wait_close_owner(struct image_wait *l, const void *owner)
{
    hand_back(l, match_owner, owner, IMAGE_WAIT_CLOSED);
}

void image_wait_flush(struct image_wait *l)
{
    hand_back(l, match_all, NULL, IMAGE_WAIT_FLUSHED);
}

bool image_wait_next_deadline(const struct image_wait *l, uint64_t *out)
{
    if (l->head == NULL) {
        return false;
    }
    uint64_t first = UINT64_MAX;
    for (const struct image_waiter *w = l->head; w != NULL; w = w->next) {
        first = w->deadline_ms < first ? w->deadline_ms : first;
    }
    *out = first;
    return true;
}

size_t image_wait_count(const struct image_wait *l)
{
    return l->n;
}
