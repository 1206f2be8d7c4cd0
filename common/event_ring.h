/* The last EVENT_RING_CAP events of a process, in memory, for the HTTP
 * endpoint `/events` (and through it `cairn events` and the cluster page).
 * An event is a state change told as one line of text (see DESIGN: "demo-0
 * isr 1,2,3 -> 2,3 (replica 1 not caught up ...)"), stamped with the wall
 * clock and a sequence number that only grows, so a reader asks for what
 * came after the last number it saw.
 *
 * Repeats collapse: a line identical to the newest one (and as routine),
 * within EVENT_REPEAT_WINDOW_MS of its first sighting, adds to that
 * record's repeat count instead of taking a slot.
 *
 * A routine event is the cluster's own housekeeping (a group coordinator
 * loading __consumer_offsets-N, an internal topic's leader moving): kept
 * and served like the others, flagged so that readers can leave it out
 * of their default views.
 *
 * Persistence (event_ring_persist()): the records also go to a file, so
 * that a restarted process still serves what it told before. The file is
 * a list of lines in the text form below, one per new record (and again
 * for a record whose repeat count grew, when the next one comes), written
 * with one write(2) each, no fsync: events are for people, and an OS crash
 * may cost the newest lines. Once it holds EVENT_FILE_LINES_MAX lines it
 * is rewritten from the ring (the last EVENT_RING_CAP records) to a
 * temporary file renamed over it. A write that fails stops the writing
 * (the ring goes on in memory) and is reported once by the push that met
 * it. The file is read back as untrusted input: lines that do not parse,
 * are too long or go back in sequence are skipped.
 *
 * Any thread: every call takes the ring's mutex; persisted pushes also
 * write to the file under it. */
#ifndef CAIRN_COMMON_EVENT_RING_H
#define CAIRN_COMMON_EVENT_RING_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/assert.h"

#define EVENT_RING_CAP 1024u
#define EVENT_TEXT_BYTES 480u /* with the NUL; longer lines are cut */
#define EVENT_REPEAT_WINDOW_MS 10000
#define EVENT_PATH_BYTES_MAX 1024u /* the persistence file's path, NUL */
/* Lines in the persistence file before it is rewritten: twice the ring,
 * so a rewrite (EVENT_RING_CAP lines) comes once per EVENT_RING_CAP
 * appends at most. */
#define EVENT_FILE_LINES_MAX (2u * EVENT_RING_CAP)
/* What a batch (event_ring_batch_begin()) holds for the file before it
 * writes. */
#define EVENT_BATCH_BYTES (64u * 1024)
/* One line of the text form: "SEQ TIME LAST REPEATS TEXT\n" and its NUL. */
#define EVENT_LINE_BYTES_MAX (EVENT_TEXT_BYTES + 96u)
/* What is read of the file at start, from its end. */
#define EVENT_FILE_BYTES_MAX (EVENT_FILE_LINES_MAX * EVENT_LINE_BYTES_MAX)

struct event_record {
    uint64_t seq;     /* 1, 2, ...; a collapsed repeat keeps its seq */
    int64_t unix_ms;  /* when it first happened */
    int64_t last_ms;  /* when it last repeated */
    uint32_t repeats; /* identical lines folded into it */
    bool routine;     /* housekeeping: out of readers' default views */
    char text[EVENT_TEXT_BYTES];
};

struct event_ring {
    pthread_mutex_t lock;
    uint64_t next_seq; /* of the next new record */
    struct event_record recs[EVENT_RING_CAP]; /* seq s at (s - 1) % CAP;
                                                 a slot whose seq is not
                                                 s holds no record */
    /* Persistence; fd -1 when off or after a failed write. */
    int fd;
    char path[EVENT_PATH_BYTES_MAX];
    uint32_t file_lines;     /* lines in the file now */
    uint32_t file_repeats;   /* the newest record's repeats in the file */
    /* Between event_ring_batch_begin() and _end(): lines for the file,
     * written when the buffer fills and at the end. */
    unsigned batch_depth;
    size_t batch_len;
    char batch[EVENT_BATCH_BYTES];
};

/* What a push did. */
struct event_push {
    bool collapsed;         /* folded into the newest record */
    uint32_t ended_repeats; /* a new record ended a run of repeats of the
                               one before it: how many (0: none) */
    int persist_errno;      /* writing the file failed at this push (and
                               stopped): errno; 0 otherwise, and after */
};

/* One line of the text form, parsed; text points into the line. */
struct event_line {
    uint64_t seq;
    int64_t time_ms;
    int64_t last_ms;
    uint32_t repeats;
    bool routine;
    const char *text;
};

/* What event_ring_persist() read back. */
struct event_load {
    size_t loaded;  /* lines taken (a repeat update counts too) */
    size_t skipped; /* lines that did not parse or went back */
    int error;      /* errno of what failed, when it returns RC_IO */
};

void event_ring_init(struct event_ring *r);
/* Writes the newest record's repeat count to the file if it grew, closes
 * the file, frees the mutex. */
void event_ring_destroy(struct event_ring *r);

/* The file's lines of the pushes (from any thread) between begin and
 * end go out EVENT_BATCH_BYTES to a write(2), the rest at the end: for a
 * burst of thousands of events (a controller moving 30,000 leaders),
 * which a write each made cost more than the work they tell of. Nests.
 * end returns 0, or the errno of a write that failed (writing stopped,
 * as for a push). */
void event_ring_batch_begin(struct event_ring *r);
int event_ring_batch_end(struct event_ring *r);
/* Writes what the batch holds now, the batch going on. */
void event_ring_batch_flush(struct event_ring *r);

/* Records text (cut to EVENT_TEXT_BYTES - 1) as happening at unix_ms. */
struct event_push event_ring_push(struct event_ring *r, int64_t unix_ms,
                                  const char *text);
/* The same, for a routine event. */
struct event_push event_ring_push_routine(struct event_ring *r,
                                          int64_t unix_ms, const char *text);

/* Loads the records of the file at path into r, which must be empty,
 * with next seq after the newest of them; rewrites the file from them
 * and appends every later push to it. A missing file loads nothing.
 * RC_OK, RC_TOO_LARGE (path too long) or RC_IO (out->error says why):
 * then r keeps what it loaded and goes on in memory only. */
MUST_CHECK int event_ring_persist(struct event_ring *r, const char *path,
                                  struct event_load *out);

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
 * TEXT", with every byte of TEXT below 0x20 or 0x7f written as '?'. A
 * routine record's REPEATS ends in 'r' ("0r"): readers from before the
 * flag, which want a space after the number, skip such lines, and so
 * leave routine events out as newer readers do by default. Returns the
 * number of records written. */
size_t event_ring_text(struct event_ring *r, uint64_t since, FILE *out);

/* Parses one line of the text form (without its newline) strictly:
 * decimal fields, TIME <= LAST, a TEXT of at most EVENT_TEXT_BYTES - 1
 * bytes with no control byte. False if it is not such a line. */
MUST_CHECK bool event_ring_parse_line(const char *line, size_t len,
                                      struct event_line *out);

#endif
