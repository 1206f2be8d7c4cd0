/* Idempotent-producer state of one partition (broker/log/producer_state.h):
 * a sorted array of producers, the append checks, recording, truncation and
 * the snapshot codec and file. */
#include "broker/log/producer_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "common/crc32c.h"
#include "common/io.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "common/reader.h"
#include "common/writer.h"

#define PRODUCER_STATE__MAGIC LOG_LAYOUT_PRODUCER_SNAPSHOT_MAGIC
#define PRODUCER_STATE__HEADER_BYTES LOG_LAYOUT_PRODUCER_SNAPSHOT_HEADER_BYTES
#define PRODUCER_STATE__CRC_BYTES LOG_LAYOUT_PRODUCER_SNAPSHOT_CRC_BYTES
#define PRODUCER_STATE__CAP_MIN 16u

_Static_assert(PRODUCER_STATE__HEADER_BYTES + PRODUCER_STATE__CRC_BYTES +
                       PRODUCERS_MAX * PRODUCER_SNAPSHOT_ENTRY_BYTES_MAX ==
                   PRODUCER_SNAPSHOT_BYTES_MAX,
               "the snapshot bound matches the layout");
_Static_assert(PRODUCER_STATE__CAP_MIN <= PRODUCERS_MAX,
               "the first allocation stays within the bound");

/* --- Sequences ----------------------------------------------------------- */

/* seq + n in Kafka's sequence space 0..INT32_MAX, where INT32_MAX is
 * followed by 0 (DefaultRecordBatch.incrementSequence). */
static int32_t seq_add(int32_t seq, int32_t n)
{
    ASSERT(seq >= 0);
    ASSERT(n >= 0);
    if (seq > INT32_MAX - n) {
        return n - (INT32_MAX - seq) - 1;
    }
    return seq + n;
}

static int32_t batch_last_seq(const struct record_batch_header *h)
{
    return seq_add(h->base_sequence, h->last_offset_delta);
}

/* --- Invariants ---------------------------------------------------------- */

static void check_entry(const struct producer_entry *e)
{
    ASSERT(e->producer_id >= 0);
    ASSERT(e->n_batches >= 1);
    ASSERT(e->n_batches <= PRODUCER_BATCHES_MAX);
    for (size_t i = 0; i < e->n_batches; i++) {
        const struct producer_batch *b = &e->batches[i];
        ASSERT(b->first_seq >= 0);
        ASSERT(b->last_seq >= 0);
        ASSERT(b->base_offset >= 0);
        ASSERT(b->base_offset <= b->last_offset);
        if (i > 0) {
            ASSERT(e->batches[i - 1].last_offset < b->base_offset);
        }
    }
}

/* Every entry, and the order. O(n) per event, so the walk runs in debug
 * builds only; release builds check the entry an event touched. */
static void check_invariants(const struct producer_state *ps)
{
    ASSERT(ps->n <= ps->cap);
    ASSERT(ps->cap <= PRODUCERS_MAX);
#ifndef NDEBUG
    for (size_t i = 0; i < ps->n; i++) {
        check_entry(&ps->entries[i]);
        if (i > 0) {
            ASSERT(ps->entries[i - 1].producer_id <
                   ps->entries[i].producer_id);
        }
    }
#endif
}

/* --- Table --------------------------------------------------------------- */

void producer_state_init(struct producer_state *ps)
{
    *ps = (struct producer_state){0};
}

void producer_state_free(struct producer_state *ps)
{
    free(ps->entries);
    producer_state_init(ps);
}

void producer_state_clear(struct producer_state *ps)
{
    ps->n = 0;
}

size_t producer_state_count(const struct producer_state *ps)
{
    return ps->n;
}

/* Index of producer_id, or of where it would be inserted. */
static size_t lower_bound(const struct producer_state *ps, int64_t id)
{
    size_t lo = 0;
    size_t hi = ps->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ps->entries[mid].producer_id < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

const struct producer_entry *
producer_state_find(const struct producer_state *ps, int64_t producer_id)
{
    size_t i = lower_bound(ps, producer_id);
    if (i < ps->n && ps->entries[i].producer_id == producer_id) {
        return &ps->entries[i];
    }
    return NULL;
}

static int64_t entry_newest_offset(const struct producer_entry *e)
{
    return e->batches[e->n_batches - 1].last_offset;
}

static void remove_at(struct producer_state *ps, size_t i)
{
    ASSERT(i < ps->n);
    memmove(&ps->entries[i], &ps->entries[i + 1],
            (ps->n - i - 1) * sizeof *ps->entries);
    ps->n--;
}

/* Forgets the least recently used producer: the one whose newest batch
 * has the lowest offset (offsets are unique, so there are no ties). */
static void evict_lru(struct producer_state *ps)
{
    ASSERT(ps->n > 0);
    size_t victim = 0;
    for (size_t i = 1; i < ps->n; i++) {
        if (entry_newest_offset(&ps->entries[i]) <
            entry_newest_offset(&ps->entries[victim])) {
            victim = i;
        }
    }
    remove_at(ps, victim);
    ps->evictions++;
}

/* Makes room for one more entry: grows, or evicts when full or when the
 * table cannot grow. False only when nothing can be stored at all. */
static bool make_room(struct producer_state *ps)
{
    if (ps->n < ps->cap) {
        return true;
    }
    if (ps->cap < PRODUCERS_MAX) {
        size_t cap = ps->cap == 0 ? PRODUCER_STATE__CAP_MIN : ps->cap * 2;
        if (cap > PRODUCERS_MAX) {
            cap = PRODUCERS_MAX;
        }
        void *p = realloc(ps->entries, cap * sizeof *ps->entries);
        if (p != NULL) {
            ps->entries = p;
            ps->cap = cap;
            return true;
        }
    }
    if (ps->n == 0) {
        ps->evictions++; /* the new producer itself goes unremembered */
        return false;
    }
    evict_lru(ps);
    return true;
}

/* --- Checks -------------------------------------------------------------- */

static bool find_duplicate(const struct producer_entry *e, int32_t first,
                           int32_t last, struct producer_check *out)
{
    for (size_t i = 0; i < e->n_batches; i++) {
        const struct producer_batch *b = &e->batches[i];
        if (b->first_seq == first && b->last_seq == last) {
            out->base_offset = b->base_offset;
            out->last_offset = b->last_offset;
            return true;
        }
    }
    return false;
}

enum producer_verdict producer_state_check(const struct producer_state *ps,
                                           const struct record_batch_header *h,
                                           struct producer_check *out)
{
    *out = (struct producer_check){.error_code = KAFKA_ERROR_NONE,
                                   .base_offset = -1, .last_offset = -1};
    if (h->producer_id < 0) {
        return PRODUCER_OK;
    }
    ASSERT(h->base_sequence >= 0);
    ASSERT(h->last_offset_delta >= 0);
    const struct producer_entry *e = producer_state_find(ps, h->producer_id);
    if (e == NULL) {
        return PRODUCER_OK; /* unknown: any epoch and sequence */
    }
    int32_t first = h->base_sequence;
    if (h->producer_epoch == e->epoch &&
        find_duplicate(e, first, batch_last_seq(h), out)) {
        return PRODUCER_DUPLICATE;
    }
    if (h->producer_epoch < e->epoch) {
        out->error_code = KAFKA_ERROR_INVALID_PRODUCER_EPOCH;
        return PRODUCER_INVALID_EPOCH;
    }
    int32_t expected = 0;
    if (h->producer_epoch == e->epoch) {
        expected = seq_add(e->batches[e->n_batches - 1].last_seq, 1);
    }
    if (first != expected) {
        out->error_code = KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER;
        return PRODUCER_OUT_OF_ORDER;
    }
    return PRODUCER_OK;
}

/* --- Recording ----------------------------------------------------------- */

static struct producer_batch batch_of(const struct record_batch_header *h)
{
    return (struct producer_batch){
        .first_seq = h->base_sequence,
        .last_seq = batch_last_seq(h),
        .base_offset = h->base_offset,
        .last_offset = record_batch_last_offset(h)};
}

static void entry_push(struct producer_entry *e, struct producer_batch b)
{
    ASSERT(entry_newest_offset(e) < b.base_offset);
    if (e->n_batches == PRODUCER_BATCHES_MAX) {
        memmove(&e->batches[0], &e->batches[1],
                (PRODUCER_BATCHES_MAX - 1) * sizeof e->batches[0]);
        e->n_batches--;
    }
    e->batches[e->n_batches++] = b;
}

static void insert_new(struct producer_state *ps,
                       const struct record_batch_header *h)
{
    if (!make_room(ps)) {
        return;
    }
    /* Eviction may have moved entries: find the slot afresh. */
    size_t i = lower_bound(ps, h->producer_id);
    memmove(&ps->entries[i + 1], &ps->entries[i],
            (ps->n - i) * sizeof *ps->entries);
    ps->n++;
    struct producer_entry *e = &ps->entries[i];
    *e = (struct producer_entry){.producer_id = h->producer_id,
                                 .epoch = h->producer_epoch,
                                 .n_batches = 1};
    e->batches[0] = batch_of(h);
}

void producer_state_record(struct producer_state *ps,
                           const struct record_batch_header *h)
{
    if (h->producer_id < 0 || h->base_sequence < 0 ||
        h->last_offset_delta < 0) {
        return;
    }
    ASSERT(h->base_offset >= 0);
    ASSERT(h->base_offset <= INT64_MAX - h->last_offset_delta);
    size_t i = lower_bound(ps, h->producer_id);
    if (i == ps->n || ps->entries[i].producer_id != h->producer_id) {
        insert_new(ps, h);
        check_invariants(ps);
        return;
    }
    struct producer_entry *e = &ps->entries[i];
    if (e->epoch != h->producer_epoch) {
        /* A new epoch starts a new window (ProducerStateEntry). */
        ASSERT(entry_newest_offset(e) < h->base_offset);
        e->epoch = h->producer_epoch;
        e->n_batches = 1;
        e->batches[0] = batch_of(h);
    } else {
        entry_push(e, batch_of(h));
    }
    check_entry(e);
    check_invariants(ps);
}

void producer_state_truncate(struct producer_state *ps, int64_t end_offset)
{
    size_t kept = 0;
    for (size_t i = 0; i < ps->n; i++) {
        struct producer_entry *e = &ps->entries[i];
        while (e->n_batches > 0 &&
               e->batches[e->n_batches - 1].last_offset >= end_offset) {
            e->n_batches--;
        }
        if (e->n_batches == 0) {
            continue;
        }
        if (kept != i) {
            ps->entries[kept] = *e;
        }
        kept++;
    }
    ps->n = kept;
    check_invariants(ps);
}

static bool entry_equal(const struct producer_entry *a,
                        const struct producer_entry *b)
{
    if (a->producer_id != b->producer_id || a->epoch != b->epoch ||
        a->n_batches != b->n_batches) {
        return false;
    }
    for (size_t i = 0; i < a->n_batches; i++) {
        const struct producer_batch *x = &a->batches[i];
        const struct producer_batch *y = &b->batches[i];
        if (x->first_seq != y->first_seq || x->last_seq != y->last_seq ||
            x->base_offset != y->base_offset ||
            x->last_offset != y->last_offset) {
            return false;
        }
    }
    return true;
}

bool producer_state_equal(const struct producer_state *a,
                          const struct producer_state *b)
{
    if (a->n != b->n) {
        return false;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (!entry_equal(&a->entries[i], &b->entries[i])) {
            return false;
        }
    }
    return true;
}

/* --- Snapshot codec ------------------------------------------------------ */

void producer_state_encode(const struct producer_state *ps,
                           int64_t end_offset, struct writer *w)
{
    ASSERT(end_offset >= 0);
    size_t start = w->len;
    writer_u32(w, PRODUCER_STATE__MAGIC);
    writer_i64(w, end_offset);
    writer_u32(w, (uint32_t)ps->n);
    for (size_t i = 0; i < ps->n; i++) {
        const struct producer_entry *e = &ps->entries[i];
        writer_i64(w, e->producer_id);
        writer_i16(w, e->epoch);
        writer_i8(w, (int8_t)e->n_batches);
        for (size_t j = 0; j < e->n_batches; j++) {
            const struct producer_batch *b = &e->batches[j];
            ASSERT(b->last_offset < end_offset);
            writer_i32(w, b->first_seq);
            writer_i32(w, b->last_seq);
            writer_i64(w, b->base_offset);
            writer_i64(w, b->last_offset);
        }
    }
    if (w->rc == RC_OK) {
        writer_u32(w, crc32c(w->data + start, w->len - start));
    }
}

/* One entry from r, checked against the previous one and end_offset. */
static bool decode_entry(struct reader *r, const struct producer_entry *prev,
                         int64_t end_offset, struct producer_entry *e)
{
    *e = (struct producer_entry){0};
    e->producer_id = reader_i64(r);
    e->epoch = reader_i16(r);
    int8_t n = reader_i8(r);
    if (r->rc != RC_OK || e->producer_id < 0 || n < 1 ||
        n > (int8_t)PRODUCER_BATCHES_MAX ||
        (prev != NULL && prev->producer_id >= e->producer_id)) {
        return false;
    }
    e->n_batches = (uint8_t)n;
    int64_t floor = 0; /* the next base offset must be at least this */
    for (size_t j = 0; j < e->n_batches; j++) {
        struct producer_batch *b = &e->batches[j];
        b->first_seq = reader_i32(r);
        b->last_seq = reader_i32(r);
        b->base_offset = reader_i64(r);
        b->last_offset = reader_i64(r);
        if (r->rc != RC_OK || b->first_seq < 0 || b->last_seq < 0 ||
            b->base_offset < floor || b->last_offset < b->base_offset ||
            b->last_offset >= end_offset) {
            return false;
        }
        floor = b->last_offset + 1;
    }
    return true;
}

/* Header and entries of a snapshot whose CRC is good, into ps. */
static int decode_body(struct producer_state *ps, struct reader *r,
                       int64_t *end_offset)
{
    uint32_t magic = reader_u32(r);
    int64_t end = reader_i64(r);
    uint32_t count = reader_u32(r);
    if (r->rc != RC_OK || magic != PRODUCER_STATE__MAGIC || end < 0 ||
        count > PRODUCERS_MAX) {
        return RC_CORRUPT;
    }
    if (count > 0) {
        size_t cap = count < PRODUCER_STATE__CAP_MIN ? PRODUCER_STATE__CAP_MIN
                                                     : count;
        ps->entries = malloc(cap * sizeof *ps->entries);
        if (ps->entries == NULL) {
            return RC_NOMEM;
        }
        ps->cap = cap;
    }
    for (uint32_t i = 0; i < count; i++) {
        const struct producer_entry *prev =
            i > 0 ? &ps->entries[i - 1] : NULL;
        if (!decode_entry(r, prev, end, &ps->entries[i])) {
            return RC_CORRUPT;
        }
        ps->n++;
    }
    if (r->pos != r->len) {
        return RC_CORRUPT; /* bytes between the entries and the CRC */
    }
    *end_offset = end;
    return RC_OK;
}

int producer_state_decode(struct producer_state *ps, const uint8_t *p,
                          size_t len, int64_t *end_offset)
{
    producer_state_free(ps);
    if (len < PRODUCER_STATE__HEADER_BYTES + PRODUCER_STATE__CRC_BYTES ||
        len > PRODUCER_SNAPSHOT_BYTES_MAX) {
        return RC_CORRUPT;
    }
    size_t body = len - PRODUCER_STATE__CRC_BYTES;
    struct reader crc_reader;
    reader_init(&crc_reader, p + body, PRODUCER_STATE__CRC_BYTES);
    if (reader_u32(&crc_reader) != crc32c(p, body)) {
        return RC_CORRUPT;
    }
    struct reader r;
    reader_init(&r, p, body);
    int rv = decode_body(ps, &r, end_offset);
    if (rv != RC_OK) {
        producer_state_free(ps);
        return rv;
    }
    check_invariants(ps);
    return RC_OK;
}

/* --- Snapshot file ------------------------------------------------------- */

int producer_state_save(const struct producer_state *ps, const char *dir,
                        int64_t end_offset)
{
    struct writer w;
    writer_init(&w, PRODUCER_SNAPSHOT_BYTES_MAX);
    producer_state_encode(ps, end_offset, &w);
    int rv = w.rc;
    if (rv == RC_OK) {
        rv = file_write_atomic(dir, PRODUCER_STATE_SNAPSHOT_FILE, w.data,
                               w.len);
    }
    writer_free(&w);
    return rv;
}

int producer_state_load(struct producer_state *ps, const char *dir,
                        int64_t *end_offset)
{
    producer_state_free(ps);
    /* One byte more than the bound, so an oversized file is seen. */
    size_t cap = PRODUCER_SNAPSHOT_BYTES_MAX + 2;
    char *buf = malloc(cap);
    if (buf == NULL) {
        return RC_NOMEM;
    }
    size_t len = 0;
    int rv = file_read_small(dir, PRODUCER_STATE_SNAPSHOT_FILE, buf, cap,
                             &len);
    if (rv == RC_TOO_LARGE) {
        rv = RC_CORRUPT;
    }
    if (rv == RC_OK) {
        rv = producer_state_decode(ps, (const uint8_t *)buf, len, end_offset);
    }
    free(buf);
    return rv;
}

int producer_state_delete_snapshot(const char *dir)
{
    char path[LOG_PATH_BYTES_MAX];
    int rv = file_path(path, dir, PRODUCER_STATE_SNAPSHOT_FILE);
    if (rv != RC_OK) {
        return rv;
    }
    if (io_unlink(path) != 0) {
        return errno == ENOENT ? RC_OK : RC_IO;
    }
    return file_sync_dir(dir);
}
