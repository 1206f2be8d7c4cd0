/* The last EVENT_RING_CAP events of a process, in memory, for the HTTP
 * endpoint `/events` (and through it `cairn events` and the cluster page).
 * An event is a state change told as one line of text (see DESIGN: "demo-0
 * isr 1,2,3 -> 2,3 (replica 1 not caught up ...)"), stamped with the wall
 * clock and a sequence number that only grows, so a reader asks for what
 * came after the last number it saw.
 *
 * Repeats collapse: a line identical to the newest one, within
 * EVENT_REPEAT_WINDOW_MS of its first sighting, adds to that record's
 * repeat count instead of taking a slot.
 *
 * Any thread: every call takes the ring's mutex. */
#ifndef CAIRN_COMMON_EVENT_RING_H
#define CAIRN_COMMON_EVENT_RING_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define EVENT_RING_CAP 1024u
#define EVENT_TEXT_BYTES 480u /* with the NUL; longer lines are cut */
#define EVENT_REPEAT_WINDOW_MS 10000

struct event_record {
    uint64_t seq;     /* 1, 2, ...; a collapsed repeat keeps its seq */
    int64_t unix_ms;  /* when it first happened */
    int64_t last_ms;  /* when it last repeated */
    uint32_t repeats; /* identical lines folded into it */
    char text[EVENT_TEXT_BYTES];
};

struct event_ring {
    pthread_mutex_t lock;
    uint64_t next_seq; /* of the next new record */
    struct event_record recs[EVENT_RING_CAP]; /* seq s at (s - 1) % CAP */
};

/* What a push did. */
struct event_push {
    bool collapsed;         /* folded into the newest record */
    uint32_t ended_repeats; /* a new record ended a run of repeats of the
                               one before it: how many (0: none) */
};

void event_ring_init(struct event_ring *r);
void event_ring_destroy(struct event_ring *r);

/* Records text (cut to EVENT_TEXT_BYTES - 1) as happening at unix_ms. */
struct event_push event_ring_push(struct event_ring *r, int64_t unix_ms,
                                  const char *text);

/* The records with seq > since still held, oldest first, as a JSON
 * document:
 *   {"source":SOURCE,"next":N,"events":[{"seq","time_ms","last_ms",
 *    "repeats","text"},...]}
 * "next" is the seq the next record will get: since=next-1 asks for newer
 * ones only; since=next-2 also rereads the newest, whose repeat count may
 * have grown. Returns the number of records written. */
size_t event_ring_json(struct event_ring *r, const char *source,
                       uint64_t since, FILE *out);

/* The same records as text, for readers without a JSON parser: a first
 * line "next N", then one line per record, "SEQ TIME_MS LAST_MS REPEATS
 * TEXT", with every byte of TEXT below 0x20 or 0x7f written as '?'.
 * Returns the number of records written. */
size_t event_ring_text(struct event_ring *r, uint64_t since, FILE *out);

#endif
