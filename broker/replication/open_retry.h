/* Partitions whose log failed to open, each with its back-off: the next
 * try waits OPEN_RETRY_FIRST_MS, then twice as long each time up to
 * OPEN_RETRY_MAX_MS, jittered by up to a quarter either way, so that a
 * broker out of file descriptors (or with a sick disk) tries a few times
 * a minute instead of on every loop turn. Pure: no I/O, no clock (time
 * and randomness are arguments). Loop thread only. */
#ifndef CAIRN_BROKER_OPEN_RETRY_H
#define CAIRN_BROKER_OPEN_RETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/meta/meta.h"

#define OPEN_RETRY_FIRST_MS 100u
#define OPEN_RETRY_MAX_MS 30000u
#define OPEN_RETRY_NONE UINT64_MAX

struct open_retry_entry {
    struct meta_uuid topic_id;
    int32_t partition;
    uint64_t at_ms;       /* not before */
    uint64_t backoff_ms;  /* the pause after the next failure */
    unsigned failures;    /* in a row */
    bool seen;            /* still hosted (open_retry_prune) */
};

struct open_retry {
    struct open_retry_entry *e;
    size_t n;
    size_t cap;
};

void open_retry_init(struct open_retry *r);
void open_retry_free(struct open_retry *r);

/* May the partition be opened at now_ms? True unless it failed and its
 * back-off has not run out. Marks it seen. */
bool open_retry_due(struct open_retry *r, const struct meta_uuid *topic_id,
                    int32_t partition, uint64_t now_ms);

/* The open failed at now_ms: returns the failures in a row (1 the first
 * time). rand is any 64-bit random value (the jitter). RC_NOMEM is not
 * reported: without room the partition is simply retried next time. */
unsigned open_retry_failed(struct open_retry *r,
                           const struct meta_uuid *topic_id,
                           int32_t partition, uint64_t now_ms,
                           uint64_t rand);

/* The open worked: the partition's back-off is forgotten. */
void open_retry_clear(struct open_retry *r, const struct meta_uuid *topic_id,
                      int32_t partition);

/* Call before a pass over the hosted partitions (clears the seen marks),
 * then open_retry_due() for each, then this: forgets partitions no longer
 * hosted. */
void open_retry_unsee(struct open_retry *r);
void open_retry_prune(struct open_retry *r);

/* The earliest at_ms, or OPEN_RETRY_NONE. */
uint64_t open_retry_next_ms(const struct open_retry *r);

#endif
