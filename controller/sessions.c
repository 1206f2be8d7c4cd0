/* Broker sessions on the active controller (controller/sessions.h). Pure;
 * loop thread of the active controller. */
#include "controller/sessions.h"

#include <string.h>

#include "common/rc.h"

void sessions_init(struct sessions *s)
{
    s->reset_ms = 0;
    s->n = 0;
}

/* Index of id, or of where it would go, in the sorted table. */
static size_t sessions_find(const struct sessions *s, int32_t id, bool *found)
{
    size_t lo = 0;
    size_t hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->e[mid].id < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *found = lo < s->n && s->e[lo].id == id;
    return lo;
}

static bool sessions_lapsed(uint64_t last_ms, uint64_t now_ms,
                            uint64_t timeout_ms)
{
    return now_ms > last_ms && now_ms - last_ms > timeout_ms;
}

void sessions_reset(struct sessions *s, const struct meta_image *img,
                    uint64_t now_ms)
{
    ASSERT(img->n_brokers <= META_BROKERS_MAX);
    s->reset_ms = now_ms;
    s->n = 0;
    for (size_t i = 0; i < img->n_brokers; i++) {
        int32_t id = img->brokers[i].id;
        ASSERT(s->n == 0 || s->e[s->n - 1].id < id); /* image is sorted */
        s->e[s->n++] = (struct sessions__entry){id, now_ms};
    }
}

int sessions_touch(struct sessions *s, int32_t id, uint64_t now_ms)
{
    bool found;
    size_t at = sessions_find(s, id, &found);
    if (found) {
        if (now_ms > s->e[at].last_ms) {
            s->e[at].last_ms = now_ms;
        }
        return RC_OK;
    }
    if (s->n == META_BROKERS_MAX) {
        return RC_FULL;
    }
    memmove(&s->e[at + 1], &s->e[at], (s->n - at) * sizeof s->e[0]);
    s->e[at] = (struct sessions__entry){id, now_ms};
    s->n++;
    return RC_OK;
}

bool sessions_alive(const struct sessions *s, int32_t id, uint64_t now_ms,
                    uint64_t timeout_ms)
{
    bool found;
    size_t at = sessions_find(s, id, &found);
    return found && !sessions_lapsed(s->e[at].last_ms, now_ms, timeout_ms);
}

int32_t sessions_next_expired(const struct sessions *s,
                              const struct meta_image *img, uint64_t now_ms,
                              uint64_t timeout_ms)
{
    int32_t oldest = -1;
    uint64_t oldest_ms = 0;
    /* Brokers in id order, so the first of equally old ones wins. */
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct meta_broker *b = &img->brokers[i];
        if (b->fenced) {
            continue;
        }
        bool found;
        size_t at = sessions_find(s, b->id, &found);
        uint64_t last_ms = found ? s->e[at].last_ms : s->reset_ms;
        if (!sessions_lapsed(last_ms, now_ms, timeout_ms)) {
            continue;
        }
        if (oldest == -1 || last_ms < oldest_ms) {
            oldest = b->id;
            oldest_ms = last_ms;
        }
    }
    return oldest;
}
