/* Back-off for partition logs that fail to open (broker/replication/
 * open_retry.h). Pure. */
#include "broker/replication/open_retry.h"

#include <stdlib.h>

#include "common/backoff.h"

static struct open_retry_entry *find(struct open_retry *r,
                                     const struct meta_uuid *topic_id,
                                     int32_t partition)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->e[i].partition == partition &&
            meta_uuid_eq(&r->e[i].topic_id, topic_id)) {
            return &r->e[i];
        }
    }
    return NULL;
}

void open_retry_init(struct open_retry *r)
{
    *r = (struct open_retry){0};
}

void open_retry_free(struct open_retry *r)
{
    free(r->e);
    *r = (struct open_retry){0};
}

bool open_retry_due(struct open_retry *r, const struct meta_uuid *topic_id,
                    int32_t partition, uint64_t now_ms)
{
    struct open_retry_entry *e = find(r, topic_id, partition);
    if (e == NULL) {
        return true;
    }
    e->seen = true;
    return now_ms >= e->at_ms;
}

unsigned open_retry_failed(struct open_retry *r,
                           const struct meta_uuid *topic_id,
                           int32_t partition, uint64_t now_ms,
                           uint64_t rand)
{
    struct open_retry_entry *e = find(r, topic_id, partition);
    if (e == NULL) {
        if (r->n == r->cap) {
            size_t cap = r->cap == 0 ? 16 : r->cap * 2;
            void *p = realloc(r->e, cap * sizeof *r->e);
            if (p == NULL) {
                return 1;
            }
            r->e = p;
            r->cap = cap;
        }
        e = &r->e[r->n++];
        *e = (struct open_retry_entry){.topic_id = *topic_id,
                                       .partition = partition,
                                       .backoff_ms = OPEN_RETRY_FIRST_MS};
    }
    e->seen = true;
    e->failures++;
    uint64_t b = e->backoff_ms;
    e->at_ms = now_ms + backoff_jitter(b, rand);
    e->backoff_ms = b * 2 > OPEN_RETRY_MAX_MS ? OPEN_RETRY_MAX_MS : b * 2;
    return e->failures;
}

void open_retry_clear(struct open_retry *r, const struct meta_uuid *topic_id,
                      int32_t partition)
{
    struct open_retry_entry *e = find(r, topic_id, partition);
    if (e != NULL) {
        *e = r->e[--r->n];
    }
}

void open_retry_unsee(struct open_retry *r)
{
    for (size_t i = 0; i < r->n; i++) {
        r->e[i].seen = false;
    }
}

void open_retry_prune(struct open_retry *r)
{
    for (size_t i = r->n; i > 0; i--) {
        if (!r->e[i - 1].seen) {
            r->e[i - 1] = r->e[--r->n];
        }
    }
}

uint64_t open_retry_next_ms(const struct open_retry *r)
{
    uint64_t next = OPEN_RETRY_NONE;
    for (size_t i = 0; i < r->n; i++) {
        if (r->e[i].at_ms < next) {
            next = r->e[i].at_ms;
        }
    }
    return next;
}
