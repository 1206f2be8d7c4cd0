/* See broker/replication/throttle.h. */
#include "broker/replication/throttle.h"

#include "common/assert.h"

void throttle_init(struct throttle *t, int64_t rate, uint64_t now_ms)
{
    ASSERT(rate >= 0);
    *t = (struct throttle){.rate = rate, .tokens = rate, .last_ms = now_ms};
}

void throttle_set_rate(struct throttle *t, int64_t rate, uint64_t now_ms)
{
    ASSERT(rate >= 0);
    if (rate == t->rate) {
        return;
    }
    if (!throttle_on(t)) {
        uint64_t taken = t->throttled_bytes;
        throttle_init(t, rate, now_ms);
        t->throttled_bytes = taken;
        return;
    }
    (void)throttle_allows(t, now_ms);
    t->rate = rate;
    if (t->tokens > rate) {
        t->tokens = rate;
    }
}

bool throttle_on(const struct throttle *t)
{
    return t->rate != THROTTLE_RATE_UNLIMITED;
}

bool throttle_allows(struct throttle *t, uint64_t now_ms)
{
    if (!throttle_on(t)) {
        return true;
    }
    if (now_ms > t->last_ms) {
        uint64_t ms = now_ms - t->last_ms;
        /* rate * ms / 1000 without overflow: a second or more refills
         * the whole bucket, and below it the product is split. */
        int64_t m = (int64_t)ms;
        int64_t add = ms >= 1000 ? t->rate
                                 : t->rate / 1000 * m +
                                       t->rate % 1000 * m / 1000;
        t->tokens = t->tokens > t->rate - add ? t->rate : t->tokens + add;
        t->last_ms = now_ms;
    }
    return t->tokens > 0;
}

int64_t throttle_available(const struct throttle *t)
{
    if (!throttle_on(t)) {
        return INT64_MAX;
    }
    return t->tokens > 0 ? t->tokens : 0;
}

void throttle_record(struct throttle *t, uint64_t bytes)
{
    if (!throttle_on(t)) {
        return;
    }
    t->throttled_bytes += bytes;
    int64_t b = bytes > (uint64_t)INT64_MAX / 2 ? INT64_MAX / 2
                                                : (int64_t)bytes;
    t->tokens = t->tokens < INT64_MIN / 2 + b ? INT64_MIN / 2
                                              : t->tokens - b;
}
