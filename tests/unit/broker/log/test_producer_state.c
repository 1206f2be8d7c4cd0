/* Idempotent-producer state: sequence and epoch checks, the duplicate
 * window, eviction, truncation, snapshots and rebuild by replay
 * (broker/log/producer_state.h). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/log/producer_state.h"
#include "common/bytes.h"
#include "common/crc32c.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "common/writer.h"
#include "tests/lib/tmpdir.h"

static struct producer_state ps;
static int64_t next_offset; /* the log end of the simulated partition */
static char dir[4096];

static void setup(void)
{
    producer_state_init(&ps);
    next_offset = 0;
    tmpdir_make(dir, sizeof dir);
}

static void teardown(void)
{
    producer_state_free(&ps);
    tmpdir_remove(dir);
}

TestSuite(producer_state, .init = setup, .fini = teardown, .timeout = 60);

/* A parsed client batch header of n records, not yet given offsets. */
static struct record_batch_header hdr(int64_t pid, int16_t epoch,
                                      int32_t seq, int32_t n)
{
    return (struct record_batch_header){
        .base_offset = 0, .batch_length = 49, .partition_leader_epoch = -1,
        .magic = 2, .last_offset_delta = n - 1, .producer_id = pid,
        .producer_epoch = epoch, .base_sequence = seq, .record_count = n};
}

static enum producer_verdict check(struct record_batch_header h,
                                   struct producer_check *out)
{
    return producer_state_check(&ps, &h, out);
}

/* What partition_append does: check, "append" at the log end, record.
 * Returns the assigned base offset. */
static int64_t append_into(struct producer_state *s,
                           struct record_batch_header h)
{
    struct producer_check c;
    cr_assert_eq(producer_state_check(s, &h, &c), PRODUCER_OK,
                 "pid=%lld epoch=%d seq=%d", (long long)h.producer_id,
                 h.producer_epoch, h.base_sequence);
    cr_assert_eq(c.error_code, KAFKA_ERROR_NONE);
    h.base_offset = next_offset;
    next_offset += h.last_offset_delta + 1;
    producer_state_record(s, &h);
    return h.base_offset;
}

static int64_t append(struct record_batch_header h)
{
    return append_into(&ps, h);
}

static void expect(struct record_batch_header h, enum producer_verdict v,
                   int16_t error_code)
{
    struct producer_check c;
    cr_assert_eq(check(h, &c), v, "pid=%lld epoch=%d seq=%d n=%d",
                 (long long)h.producer_id, h.producer_epoch,
                 h.base_sequence, h.last_offset_delta + 1);
    cr_assert_eq(c.error_code, error_code);
}

Test(producer_state, in_order_sequences_accepted)
{
    int32_t seq = 0;
    for (int i = 0; i < 20; i++) {
        int32_t n = 1 + i % 4;
        append(hdr(7, 0, seq, n));
        seq += n;
    }
    const struct producer_entry *e = producer_state_find(&ps, 7);
    cr_assert_not_null(e);
    cr_assert_eq(e->epoch, 0);
    cr_assert_eq(e->n_batches, PRODUCER_BATCHES_MAX);
    cr_assert_eq(e->batches[PRODUCER_BATCHES_MAX - 1].last_seq, seq - 1);
    cr_assert_eq(e->batches[PRODUCER_BATCHES_MAX - 1].last_offset,
                 next_offset - 1);
    cr_assert_eq(producer_state_count(&ps), 1);
}

Test(producer_state, non_idempotent_batches_always_accepted_never_kept)
{
    /* kafkajs: producer id -1 with epoch 0 and sequence 0, every time. */
    for (int i = 0; i < 3; i++) {
        append(hdr(-1, 0, 0, 2));
    }
    cr_assert_eq(producer_state_count(&ps), 0);
}

Test(producer_state, retry_of_each_of_last_five_is_duplicate)
{
    int64_t base[8];
    int32_t first[8];
    int32_t seq = 0;
    for (int i = 0; i < 8; i++) {
        first[i] = seq;
        base[i] = append(hdr(3, 1, seq, 3));
        seq += 3;
    }
    for (int i = 8 - (int)PRODUCER_BATCHES_MAX; i < 8; i++) {
        struct producer_check c;
        cr_assert_eq(check(hdr(3, 1, first[i], 3), &c), PRODUCER_DUPLICATE,
                     "batch %d", i);
        cr_assert_eq(c.error_code, KAFKA_ERROR_NONE);
        cr_assert_eq(c.base_offset, base[i]);
        cr_assert_eq(c.last_offset, base[i] + 2);
    }
    /* The 6th-newest has left the window: its retry is out of order. */
    expect(hdr(3, 1, first[8 - PRODUCER_BATCHES_MAX - 1], 3),
           PRODUCER_OUT_OF_ORDER, KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    /* Same first sequence, other last sequence: not the same batch. */
    expect(hdr(3, 1, first[7], 2), PRODUCER_OUT_OF_ORDER,
           KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    /* Checking is pure: the window still expects the next sequence. */
    append(hdr(3, 1, seq, 1));
}

Test(producer_state, sequence_gap_is_out_of_order)
{
    append(hdr(5, 0, 0, 4));
    expect(hdr(5, 0, 5, 1), PRODUCER_OUT_OF_ORDER,
           KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(hdr(5, 0, 3, 2), PRODUCER_OUT_OF_ORDER,
           KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(hdr(5, 0, 4, 1), PRODUCER_OK, KAFKA_ERROR_NONE);
}

Test(producer_state, lower_epoch_is_invalid_producer_epoch)
{
    append(hdr(5, 3, 0, 1));
    expect(hdr(5, 2, 1, 1), PRODUCER_INVALID_EPOCH,
           KAFKA_ERROR_INVALID_PRODUCER_EPOCH);
    /* Even a retry of the old epoch's batch is fenced. */
    expect(hdr(5, 2, 0, 1), PRODUCER_INVALID_EPOCH,
           KAFKA_ERROR_INVALID_PRODUCER_EPOCH);
}

Test(producer_state, new_epoch_must_start_at_zero)
{
    append(hdr(9, 0, 0, 5));
    append(hdr(9, 0, 5, 5));
    expect(hdr(9, 1, 10, 1), PRODUCER_OUT_OF_ORDER,
           KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(hdr(9, 1, 1, 1), PRODUCER_OUT_OF_ORDER,
           KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    int64_t base = append(hdr(9, 1, 0, 2));
    const struct producer_entry *e = producer_state_find(&ps, 9);
    cr_assert_eq(e->epoch, 1);
    cr_assert_eq(e->n_batches, 1, "a new epoch starts a new window");
    struct producer_check c;
    cr_assert_eq(check(hdr(9, 1, 0, 2), &c), PRODUCER_DUPLICATE);
    cr_assert_eq(c.base_offset, base);
    expect(hdr(9, 0, 0, 5), PRODUCER_INVALID_EPOCH,
           KAFKA_ERROR_INVALID_PRODUCER_EPOCH);
    expect(hdr(9, 1, 2, 1), PRODUCER_OK, KAFKA_ERROR_NONE);
}

Test(producer_state, sequence_wraps_after_int32_max)
{
    append(hdr(1, 0, INT32_MAX - 2, 3)); /* ends exactly at INT32_MAX */
    cr_assert_eq(producer_state_find(&ps, 1)->batches[0].last_seq,
                 INT32_MAX);
    expect(hdr(1, 0, 1, 1), PRODUCER_OUT_OF_ORDER,
           KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    append(hdr(1, 0, 0, 1));
    /* A batch straddling the wrap: INT32_MAX - 1, INT32_MAX, 0, 1. */
    append(hdr(2, 0, INT32_MAX - 1, 4));
    const struct producer_entry *e = producer_state_find(&ps, 2);
    cr_assert_eq(e->batches[0].first_seq, INT32_MAX - 1);
    cr_assert_eq(e->batches[0].last_seq, 1);
    struct producer_check c;
    cr_assert_eq(check(hdr(2, 0, INT32_MAX - 1, 4), &c), PRODUCER_DUPLICATE);
    append(hdr(2, 0, 2, 1));
}

Test(producer_state, unknown_producer_accepted_with_any_sequence)
{
    /* New (or evicted, or expired) producers: Kafka accepts any sequence
     * and epoch, so a producer whose state is gone is not killed by 45. */
    append(hdr(11, 4, 12345, 2));
    append(hdr(11, 4, 12347, 1));
    append(hdr(12, 0, 0, 1));
    expect(hdr(13, 7, INT32_MAX, 1), PRODUCER_OK, KAFKA_ERROR_NONE);
}

Test(producer_state, least_recently_used_producer_evicted_when_full)
{
    for (int64_t pid = 0; pid < (int64_t)PRODUCERS_MAX; pid++) {
        append(hdr(pid * 2, 0, 0, 1));
    }
    cr_assert_eq(producer_state_count(&ps), PRODUCERS_MAX);
    append(hdr(0, 0, 1, 1)); /* producer 0 is now the most recent */
    append(hdr(1, 0, 0, 1)); /* new: evicts producer 2, the oldest */
    cr_assert_eq(producer_state_count(&ps), PRODUCERS_MAX);
    cr_assert_eq(ps.evictions, 1);
    cr_assert_null(producer_state_find(&ps, 2));
    cr_assert_not_null(producer_state_find(&ps, 0));
    cr_assert_not_null(producer_state_find(&ps, 1));
    cr_assert_not_null(producer_state_find(&ps, 4));
    /* The evicted producer is unknown: its next batch goes through. */
    expect(hdr(2, 0, 1, 1), PRODUCER_OK, KAFKA_ERROR_NONE);
    expect(hdr(2, 0, 7, 1), PRODUCER_OK, KAFKA_ERROR_NONE);
    /* A known one is still checked. */
    expect(hdr(4, 0, 7, 1), PRODUCER_OUT_OF_ORDER,
           KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    cr_assert_leq(ps.cap, PRODUCERS_MAX);
}

Test(producer_state, truncate_drops_cached_batches_at_or_after_end)
{
    int64_t a0 = append(hdr(1, 0, 0, 2)); /* offsets 0-1 */
    append(hdr(2, 0, 0, 1));              /* 2 */
    int64_t a1 = append(hdr(1, 0, 2, 3)); /* 3-5 */
    append(hdr(3, 0, 0, 1));              /* 6 */
    append(hdr(1, 0, 5, 1));              /* 7 */
    cr_assert_eq(a0, 0);
    cr_assert_eq(a1, 3);
    /* Cut inside producer 1's batch at 3-5: it goes whole, as in
     * log_truncate_to(), and so do producer 3 and the batch at 7. */
    producer_state_truncate(&ps, 4);
    next_offset = 3;
    const struct producer_entry *e = producer_state_find(&ps, 1);
    cr_assert_eq(e->n_batches, 1);
    cr_assert_eq(e->batches[0].last_offset, 1);
    cr_assert_null(producer_state_find(&ps, 3), "no batch left: unknown");
    cr_assert_not_null(producer_state_find(&ps, 2));
    /* The retry of a truncated batch is a new batch again. */
    int64_t again = append(hdr(1, 0, 2, 3));
    cr_assert_eq(again, 3);
    producer_state_truncate(&ps, 0);
    cr_assert_eq(producer_state_count(&ps), 0);
}

Test(producer_state, clear_forgets_everything)
{
    append(hdr(1, 0, 0, 1));
    append(hdr(2, 0, 0, 1));
    producer_state_clear(&ps);
    cr_assert_eq(producer_state_count(&ps), 0);
    expect(hdr(1, 0, 9, 1), PRODUCER_OK, KAFKA_ERROR_NONE);
}

Test(producer_state, follower_record_adopts_the_logs_epoch)
{
    append(hdr(4, 5, 0, 1));
    /* Replicated from a leader that had forgotten the producer: the log is
     * the truth, so the lower epoch becomes current. */
    struct record_batch_header h = hdr(4, 2, 0, 1);
    h.base_offset = next_offset++;
    producer_state_record(&ps, &h);
    cr_assert_eq(producer_state_find(&ps, 4)->epoch, 2);
    cr_assert_eq(producer_state_find(&ps, 4)->n_batches, 1);
    /* Not idempotent, or invalid: ignored. */
    h = hdr(4, 2, -1, 1);
    h.base_offset = next_offset++;
    producer_state_record(&ps, &h);
    cr_assert_eq(producer_state_find(&ps, 4)->n_batches, 1);
}

/* A workload of several producers with retries' worth of variety: epoch
 * bumps, wraps, a producer that stops. Headers get their offsets. */
static size_t workload(struct record_batch_header *out, size_t cap)
{
    int32_t seq[6] = {0, 0, 0, INT32_MAX - 40, 0, 0};
    int16_t epoch[6] = {0, 0, 3, 0, 0, 0};
    size_t n = 0;
    uint32_t x = 12345;
    while (n < cap) {
        x = x * 1103515245u + 12345u;
        int64_t pid = (int64_t)((x >> 16) % 6);
        int32_t count = (int32_t)(1 + (x >> 8) % 7);
        if ((x >> 4) % 29 == 0) {
            epoch[pid]++;
            seq[pid] = 0;
        }
        struct record_batch_header h = hdr(pid * 1000, epoch[pid], seq[pid],
                                           count);
        if (pid == 5) {
            h = hdr(-1, 0, 0, count);
        }
        seq[pid] = seq[pid] > INT32_MAX - count
                       ? count - (INT32_MAX - seq[pid]) - 1
                       : seq[pid] + count;
        out[n++] = h;
    }
    return n;
}

Test(producer_state, rebuild_by_replaying_headers_matches_live)
{
    static struct record_batch_header log[400];
    size_t n = workload(log, ARRAY_LEN(log));
    for (size_t i = 0; i < n; i++) {
        struct record_batch_header h = log[i];
        struct producer_check c;
        cr_assert_eq(check(h, &c), PRODUCER_OK, "batch %zu", i);
        h.base_offset = next_offset;
        next_offset += h.last_offset_delta + 1;
        log[i] = h;
        producer_state_record(&ps, &h);
    }
    struct producer_state rebuilt;
    producer_state_init(&rebuilt);
    append_into(&rebuilt, hdr(77, 0, 0, 1)); /* stale, cleared below */
    producer_state_clear(&rebuilt);
    for (size_t i = 0; i < n; i++) {
        producer_state_record(&rebuilt, &log[i]);
    }
    cr_assert(producer_state_equal(&ps, &rebuilt));
    cr_assert_eq(producer_state_count(&ps), 5);

    /* A snapshot in the middle plus the rest of the log: the same too. */
    producer_state_clear(&rebuilt);
    for (size_t i = 0; i < n / 2; i++) {
        producer_state_record(&rebuilt, &log[i]);
    }
    cr_assert_eq(producer_state_save(&rebuilt, dir, log[n / 2].base_offset),
                 RC_OK);
    int64_t from = -1;
    cr_assert_eq(producer_state_load(&rebuilt, dir, &from), RC_OK);
    cr_assert_eq(from, log[n / 2].base_offset);
    for (size_t i = n / 2; i < n; i++) {
        producer_state_record(&rebuilt, &log[i]);
    }
    cr_assert(producer_state_equal(&ps, &rebuilt));
    producer_state_free(&rebuilt);
}

static bool dir_has_tmp(void)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    bool found = false;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        found |= strstr(e->d_name, ".tmp") != NULL;
    }
    closedir(d);
    return found;
}

Test(producer_state, save_load_round_trip)
{
    for (int64_t pid = 0; pid < 50; pid++) {
        for (int32_t k = 0; k < (int32_t)(pid % 8); k++) {
            append(hdr(pid * 7919, (int16_t)(pid % 3), k * 2, 2));
        }
    }
    int64_t saved_end = next_offset;
    cr_assert_eq(producer_state_save(&ps, dir, saved_end), RC_OK);
    cr_assert(!dir_has_tmp());
    struct producer_state loaded;
    producer_state_init(&loaded);
    append_into(&loaded, hdr(1, 0, 0, 1)); /* replaced by the load */
    int64_t end = -1;
    cr_assert_eq(producer_state_load(&loaded, dir, &end), RC_OK);
    cr_assert_eq(end, saved_end);
    cr_assert(producer_state_equal(&ps, &loaded));
    /* Loaded state behaves: a retry is a duplicate, the next is in order. */
    struct producer_check c;
    struct record_batch_header retry = hdr(7 * 7919, 1, 12, 2);
    cr_assert_eq(producer_state_check(&loaded, &retry, &c),
                 PRODUCER_DUPLICATE);
    retry = hdr(7 * 7919, 1, 14, 1);
    cr_assert_eq(producer_state_check(&loaded, &retry, &c), PRODUCER_OK);
    /* Saving again replaces the file. */
    producer_state_clear(&ps);
    cr_assert_eq(producer_state_save(&ps, dir, 3), RC_OK);
    cr_assert_eq(producer_state_load(&loaded, dir, &end), RC_OK);
    cr_assert_eq(end, 3);
    cr_assert_eq(producer_state_count(&loaded), 0);
    producer_state_free(&loaded);
}

Test(producer_state, missing_snapshot_is_not_found)
{
    int64_t end = -1;
    cr_assert_eq(producer_state_load(&ps, dir, &end), RC_NOT_FOUND);
    cr_assert_eq(producer_state_delete_snapshot(dir), RC_OK);
    cr_assert_eq(producer_state_save(&ps, dir, 0), RC_OK);
    cr_assert_eq(producer_state_delete_snapshot(dir), RC_OK);
    cr_assert_eq(producer_state_load(&ps, dir, &end), RC_NOT_FOUND);
}

static void encode(const struct producer_state *s, int64_t end,
                   struct writer *w)
{
    writer_init(w, PRODUCER_SNAPSHOT_BYTES_MAX);
    producer_state_encode(s, end, w);
    cr_assert_eq(w->rc, RC_OK);
}

Test(producer_state, every_flipped_byte_is_detected)
{
    append(hdr(1, 0, 0, 3));
    append(hdr(2, 4, 100, 1));
    append(hdr(1, 0, 3, 2));
    struct writer w;
    encode(&ps, next_offset, &w);
    struct producer_state out;
    producer_state_init(&out);
    int64_t end = -1;
    for (size_t i = 0; i < w.len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            w.data[i] ^= (uint8_t)(1u << bit);
            cr_assert_eq(producer_state_decode(&out, w.data, w.len, &end),
                         RC_CORRUPT, "byte %zu bit %d", i, bit);
            cr_assert_eq(producer_state_count(&out), 0);
            w.data[i] ^= (uint8_t)(1u << bit);
        }
    }
    for (size_t len = 0; len < w.len; len++) {
        cr_assert_eq(producer_state_decode(&out, w.data, len, &end),
                     RC_CORRUPT, "cut at %zu", len);
    }
    cr_assert_eq(producer_state_decode(&out, w.data, w.len, &end), RC_OK);
    cr_assert(producer_state_equal(&ps, &out));
    producer_state_free(&out);
    writer_free(&w);
}

Test(producer_state, flipped_byte_in_snapshot_file_is_corrupt)
{
    append(hdr(1, 0, 0, 3));
    cr_assert_eq(producer_state_save(&ps, dir, next_offset), RC_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, PRODUCER_STATE_SNAPSHOT_FILE);
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    cr_assert_eq(fseek(f, 20, SEEK_SET), 0);
    int b = fgetc(f);
    cr_assert_eq(fseek(f, 20, SEEK_SET), 0);
    fputc(b ^ 0x40, f);
    fclose(f);
    int64_t end = -1;
    cr_assert_eq(producer_state_load(&ps, dir, &end), RC_CORRUPT);
    cr_assert_eq(producer_state_count(&ps), 0, "failed load leaves it empty");
}

Test(producer_state, oversized_snapshot_file_is_corrupt)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, PRODUCER_STATE_SNAPSHOT_FILE);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    for (size_t i = 0; i < PRODUCER_SNAPSHOT_BYTES_MAX + 10; i++) {
        fputc(0, f);
    }
    fclose(f);
    int64_t end = -1;
    cr_assert_eq(producer_state_load(&ps, dir, &end), RC_CORRUPT);
}

/* Re-seals body bytes with a fresh CRC, to reach the content checks. */
static void reseal(struct writer *w)
{
    size_t body = w->len - 4;
    bytes_put_be32(w->data + body, crc32c(w->data, body));
}

Test(producer_state, snapshot_with_sealed_bad_content_is_corrupt)
{
    append(hdr(1, 0, 0, 3)); /* offsets 0-2 */
    append(hdr(2, 0, 0, 1)); /* 3 */
    struct producer_state out;
    producer_state_init(&out);
    int64_t end = -1;
    struct writer w;
    /* A cached batch at or after the snapshot's end offset. */
    encode(&ps, next_offset, &w);
    bytes_put_be64(w.data + 4, 3);
    reseal(&w);
    cr_assert_eq(producer_state_decode(&out, w.data, w.len, &end), RC_CORRUPT);
    writer_free(&w);
    /* Producers out of order (ids swapped). */
    encode(&ps, next_offset, &w);
    size_t second = 16 + 11 + 24;
    bytes_put_be64(w.data + 16, 2);
    bytes_put_be64(w.data + second, 1);
    reseal(&w);
    cr_assert_eq(producer_state_decode(&out, w.data, w.len, &end), RC_CORRUPT);
    writer_free(&w);
    /* A batch count of zero, a negative sequence, a wrong magic. */
    size_t at[3] = {16 + 10, 16 + 11, 0};
    for (size_t k = 0; k < 3; k++) {
        encode(&ps, next_offset, &w);
        w.data[at[k]] = k == 0 ? 0 : 0x80;
        reseal(&w);
        cr_assert_eq(producer_state_decode(&out, w.data, w.len, &end),
                     RC_CORRUPT, "case %zu", k);
        writer_free(&w);
    }
    /* A count larger than what follows. */
    encode(&ps, next_offset, &w);
    bytes_put_be32(w.data + 12, 3);
    reseal(&w);
    cr_assert_eq(producer_state_decode(&out, w.data, w.len, &end), RC_CORRUPT);
    writer_free(&w);
    producer_state_free(&out);
}
