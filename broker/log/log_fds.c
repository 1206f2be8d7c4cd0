/* The descriptor budget of the partition logs (broker/log/log.h,
 * log_fds_set_max()): a list of the logs whose segment files are open,
 * most recently used first. Using a log (any call that reads or writes
 * its segments) opens its files again if it was parked, moves it first,
 * and, past the budget, parks the least recently used logs nobody holds:
 * their segment files are closed until they are used again. A log is
 * held while a read span, a sync, a cleaner pass or a running start-up
 * check points into it, or while it has unsynced bytes (a file opened
 * again would not report a writeback error of before: fsyncgate). A
 * start-up check waiting in its queue does not hold the log: its log is
 * used before its job goes to the threadpool. Loop thread only, but
 * for log_park_if_over_budget() on a log not yet attached. */
#include "broker/log/log_internal.h"

#include "common/rc.h"

/* Past the budget, at most this many logs that cannot be parked are
 * passed over by one trim (the budget is then exceeded until they are
 * let go, as they must stay open anyway). */
#define LOG_FDS__SKIP_MAX 64

static struct {
    struct log *head; /* open logs, most recently used first */
    struct log *tail;
    size_t max;       /* 0: no budget */
    uint64_t reopens;
    uint64_t parks;
} lf;

void log_fds_set_max(size_t max)
{
    lf.max = max;
}

size_t log_fds_open(void)
{
    return log_segment_fds_open();
}

uint64_t log_fds_reopens(void)
{
    return lf.reopens;
}

uint64_t log_fds_parks(void)
{
    return lf.parks;
}

static void unlink_log(struct log *l)
{
    if (!l->fds_listed) {
        return;
    }
    if (l->fds_prev != NULL) {
        l->fds_prev->fds_next = l->fds_next;
    } else {
        lf.head = l->fds_next;
    }
    if (l->fds_next != NULL) {
        l->fds_next->fds_prev = l->fds_prev;
    } else {
        lf.tail = l->fds_prev;
    }
    l->fds_prev = l->fds_next = NULL;
    l->fds_listed = false;
}

static void push_front(struct log *l)
{
    l->fds_prev = NULL;
    l->fds_next = lf.head;
    if (lf.head != NULL) {
        lf.head->fds_prev = l;
    }
    lf.head = l;
    if (lf.tail == NULL) {
        lf.tail = l;
    }
    l->fds_listed = true;
}

/* Whether the start-up check list still to run holds seg. */
static bool check_pinned(const struct log *l, const struct log_segment *seg)
{
    for (size_t i = l->checks_done; i < l->n_checks; i++) {
        if (l->checks[i] == seg) {
            return true;
        }
    }
    return false;
}

static bool parkable(const struct log *l)
{
    /* An unsynced directory entry does not matter here: the directory
     * is synced by name, whatever files are open. */
    if (l->parked || l->closing || log_busy(l) || l->cleaning != NULL) {
        return false;
    }
    for (size_t i = 0; i < l->n_segs; i++) {
        const struct log_segment *seg = l->segs[i];
        int held = seg->refs - 1 - (check_pinned(l, seg) ? 1 : 0);
        if (held > 0 || seg->dirty || seg->deleted) {
            return false;
        }
    }
    return true;
}

static void park(struct log *l)
{
    for (size_t i = 0; i < l->n_segs; i++) {
        log_segment_close_fd(l->segs[i]);
    }
    l->parked = true;
    lf.parks++;
    unlink_log(l); /* holds no descriptor: off the list until used */
}

/* Parks the least recently used logs until the budget holds again. */
static void trim(const struct log *keep)
{
    if (lf.max == 0) {
        return;
    }
    struct log *l = lf.tail;
    size_t skipped = 0;
    while (l != NULL && log_segment_fds_open() > lf.max &&
           skipped < LOG_FDS__SKIP_MAX) {
        struct log *prev = l->fds_prev;
        if (l != keep && parkable(l)) {
            park(l);
        } else {
            skipped++;
        }
        l = prev;
    }
}

bool log_park_if_over_budget(struct log *l)
{
    if (lf.max == 0 || log_segment_fds_open() <= lf.max || !parkable(l)) {
        return false;
    }
    for (size_t i = 0; i < l->n_segs; i++) {
        log_segment_close_fd(l->segs[i]);
    }
    l->parked = true;
    return true;
}

void log_fds_attach_parked(struct log *l)
{
    ASSERT(l->parked && !l->fds_listed);
    lf.parks++;
}

int log_fds_use(struct log *l)
{
    if (l->parked) {
        for (size_t i = 0; i < l->n_segs; i++) {
            int rv = log_segment_reopen(l->segs[i]);
            if (rv != RC_OK) {
                for (size_t k = 0; k < i; k++) {
                    log_segment_close_fd(l->segs[k]);
                }
                return rv;
            }
        }
        l->parked = false;
        lf.reopens++;
    }
    if (lf.head != l) {
        unlink_log(l);
        push_front(l);
    }
    trim(l);
    return RC_OK;
}

void log_fds_forget(struct log *l)
{
    unlink_log(l);
}
