/* Log compaction (broker/log/log_cleaner.c) on a real log in a temporary
 * directory: the latest record per key stays with its offset, superseded
 * ones go, tombstones go on a later pass once older than
 * delete.retention.ms, the swap survives a reopen, and a crash at each
 * step of the swap leaves a whole log. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/log/log.h"
#include "broker/log/log_cleaner.h"
#include "common/kafka/record_filter.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/log_fixture.h"

#define T0 1700000000000LL

static struct log_fixture f;

static void setup(void)
{
    log_fixture_setup(&f);
}

static void teardown(void)
{
    log_fixture_teardown(&f);
}

TestSuite(log_cleaner, .init = setup, .fini = teardown, .timeout = 60);

/* One batch of records "key=value" ("key=" alone: a tombstone), from
 * idempotent producer pid (with base sequence seq), or -1. */
static void append_as(const char *const *kv, int n, int64_t ts, int64_t pid,
                      int32_t seq)
{
    struct writer w;
    writer_init(&w, 1 << 20);
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(kv[i], '=');
        int kl = (int)(eq - kv[i]);
        int vl = (int)strlen(eq + 1);
        struct batch_record r = {
            .offset_delta = i, .timestamp_delta = i, .key = kv[i],
            .key_len = kl, .value = eq + 1, .value_len = vl == 0 ? -1 : vl};
        batch_write_record(&w, &r);
    }
    struct batch_spec spec = {.record_count = n, .base_timestamp = ts,
                              .max_timestamp = ts + n - 1,
                              .producer_id = pid, .base_sequence = seq};
    struct built_batch b = batch_wrap(w.data, w.len, &spec);
    struct log_append_info info;
    cr_assert_eq(log_append(f.log, b.bytes, b.len, 0, ts, &info), RC_OK);
    cr_assert_eq(log_fixture_wait_durable(&f, info.last_offset + 1), RC_OK);
    built_batch_free(&b);
    writer_free(&w);
}

static void append(const char *const *kv, int n, int64_t ts)
{
    append_as(kv, n, ts, -1, -1);
}

/* Offsets 0-4 k0..k4=a, 5-9 k0..k4=b, 10 k0=c, 11 k1 tombstone, each
 * batch its own closed segment, and 12 k2=d in the active one. */
static void keyed_log(void)
{
    log_fixture_open(&f);
    const char *a[] = {"k0=a", "k1=a", "k2=a", "k3=a", "k4=a"};
    const char *b[] = {"k0=b", "k1=b", "k2=b", "k3=b", "k4=b"};
    const char *c[] = {"k0=c", "k1="};
    const char *d[] = {"k2=d"};
    append(a, 5, T0);
    cr_assert_eq(log_roll(f.log), RC_OK);
    append(b, 5, T0 + 1000);
    cr_assert_eq(log_roll(f.log), RC_OK);
    append(c, 2, T0 + 2000);
    cr_assert_eq(log_roll(f.log), RC_OK);
    append(d, 1, T0 + 3000);
}

static struct log_clean_config config(void)
{
    return (struct log_clean_config){.min_dirty_ratio = 0.5,
                                     .delete_retention_ms = 86400000,
                                     .min_lag_ms = 0,
                                     .max_lag_ms = INT64_MAX,
                                     .map_bytes = 1 << 20};
}

static bool done;
static struct log_clean_result result;

static void clean_cb(void *arg, const struct log_clean_result *r)
{
    (void)arg;
    result = *r;
    done = true;
}

/* Runs the loop until the pass started ends (bounded). */
static void wait_done(void)
{
    for (int i = 0; i < 10000 && !done; i++) {
        uv_run(&f.loop, UV_RUN_ONCE);
    }
    cr_assert(done, "the pass ended");
}

/* Starts a pass (the callback sets done and result); its rc. */
static int start_pass(int64_t now_ms, int64_t hw, struct log_clean_config c,
                      const int64_t *producer_last, size_t n_producer_last)
{
    done = false;
    return log_clean_start(f.log, &c, now_ms, hw, producer_last,
                           n_producer_last, clean_cb, NULL);
}

/* One pass, run to its end. */
static struct log_clean_result clean(int64_t now_ms, int64_t hw,
                                     struct log_clean_config c)
{
    cr_assert_eq(start_pass(now_ms, hw, c, NULL, 0), RC_OK);
    wait_done();
    return result;
}

/* Every record the log holds, as "offset:key=value" lines. */
struct dump {
    char text[4096];
};

static bool dump_record(void *arg, const struct record_view *r)
{
    struct dump *d = arg;
    size_t at = strlen(d->text);
    snprintf(d->text + at, sizeof d->text - at, "%lld:%.*s%s ",
             (long long)r->offset, (int)r->key.len, (const char *)r->key.ptr,
             r->null_value ? "=" : "");
    return true;
}

static void dump_log(struct dump *d)
{
    memset(d, 0, sizeof *d);
    struct record_inflate *z = NULL;
    cr_assert_eq(record_inflate_new(&z), RC_OK);
    struct writer scratch;
    writer_init(&scratch, 1 << 20);
    int64_t off = log_start_offset(f.log);
    while (off < log_end_offset(f.log)) {
        struct log_span span;
        cr_assert_eq(log_read(f.log, off, 1 << 20, INT64_MAX, &span), RC_OK);
        size_t len = 0;
        uint8_t *bytes = log_fixture_span_bytes(&span, &len);
        log_span_release(&span);
        if (len == 0) {
            free(bytes);
            break;
        }
        size_t pos = 0;
        while (pos < len) {
            struct record_batch_header h;
            cr_assert_eq(record_batch_parse(bytes + pos, len - pos, &h),
                         RC_OK);
            size_t size = (size_t)record_batch_size(&h);
            cr_assert(record_batch_crc_ok(bytes + pos, &h));
            int32_t kept = 0;
            cr_assert_eq(record_filter(z, &scratch, bytes + pos, size, &h,
                                       dump_record, d, false, NULL, &kept),
                         RC_OK);
            off = record_batch_last_offset(&h) + 1;
            pos += size;
        }
        free(bytes);
    }
    record_inflate_free(z);
    writer_free(&scratch);
}

Test(log_cleaner, the_latest_record_per_key_stays_with_its_offset)
{
    keyed_log();
    double ratio = 0;
    struct log_clean_config c = config();
    cr_assert(log_clean_due(f.log, &c, T0 + 10000, 13, &ratio));
    cr_assert_float_eq(ratio, 1.0, 1e-9, "nothing was clean yet");
    struct log_clean_result r = clean(T0 + 10000, 13, c);
    cr_assert_eq(r.rc, RC_OK);
    cr_assert_eq(r.segments, 3);
    cr_assert_eq(r.to, 12, "the checkpoint: the active segment's base");
    cr_assert_eq(r.keys, 5);
    cr_assert_lt(r.bytes_after, r.bytes_before);
    cr_assert_eq(log_clean_checkpoint(f.log), 12);
    struct dump d;
    dump_log(&d);
    /* k2 at 7 stays: its newer record (12) is in the active segment,
     * which a pass never reads; the tombstone stays on its first pass. */
    cr_assert_str_eq(d.text, "7:k2 8:k3 9:k4 10:k0 11:k1= 12:k2 ");
    cr_assert_eq(log_start_offset(f.log), 0);
    cr_assert_eq(log_end_offset(f.log), 13);
    /* reopened: the same */
    log_fixture_close(&f);
    log_fixture_open(&f);
    dump_log(&d);
    cr_assert_str_eq(d.text, "7:k2 8:k3 9:k4 10:k0 11:k1= 12:k2 ");
    cr_assert_eq(log_clean_checkpoint(f.log), 12);
    cr_assert_eq(start_pass(T0 + 10000, 13, c, NULL, 0), RC_NOT_FOUND,
                 "nothing dirty is left");
}

/* An idempotent producer's newest batch keeps its last record (its
 * sequence must survive); its older batches are cleaned like any. */
Test(log_cleaner, only_a_producers_newest_batch_keeps_a_superseded_record)
{
    log_fixture_open(&f);
    const char *a[] = {"k0=a", "k1=a"};
    const char *b[] = {"k0=b", "k1=b"};
    const char *c[] = {"k0=c", "k1=c"};
    const char *z[] = {"k9=z"};
    append_as(a, 2, T0, 7, 0);
    cr_assert_eq(log_roll(f.log), RC_OK);
    append_as(b, 2, T0 + 1000, 7, 2);
    cr_assert_eq(log_roll(f.log), RC_OK);
    append(c, 2, T0 + 2000);
    cr_assert_eq(log_roll(f.log), RC_OK);
    append(z, 1, T0 + 3000);
    int64_t newest = 3; /* producer 7's newest batch ends at offset 3 */
    cr_assert_eq(start_pass(T0 + 10000, 7, config(), &newest, 1), RC_OK);
    wait_done();
    cr_assert_eq(result.rc, RC_OK);
    struct dump d;
    dump_log(&d);
    cr_assert_str_eq(d.text, "3:k1 4:k0 5:k1 6:k9 ",
                     "the older batch of producer 7 is gone whole");
}

Test(log_cleaner, only_below_the_high_watermark_and_past_the_lag)
{
    keyed_log();
    struct log_clean_config c = config();
    /* HW 5: only segment 0 is wholly below it */
    struct log_clean_result r = clean(T0 + 10000, 5, c);
    cr_assert_eq(r.segments, 1);
    cr_assert_eq(r.to, 5);
    struct dump d;
    dump_log(&d);
    cr_assert_str_eq(d.text, "0:k0 1:k1 2:k2 3:k3 4:k4 5:k0 6:k1 7:k2 8:k3 "
                             "9:k4 10:k0 11:k1= 12:k2 ",
                     "segment 0 alone supersedes nothing of itself");
    /* min.compaction.lag.ms: segments newer than the lag wait */
    c.min_lag_ms = 5000;
    cr_assert_not(log_clean_due(f.log, &c, T0 + 3000, 13, NULL));
    cr_assert(log_clean_due(f.log, &c, T0 + 8000, 13, NULL));
}

Test(log_cleaner, tombstones_go_once_clean_and_older_than_delete_retention)
{
    keyed_log();
    struct log_clean_config c = config();
    c.delete_retention_ms = 1000;
    clean(T0 + 10000, 13, c); /* first pass: the tombstone stays */
    cr_assert_eq(log_roll(f.log), RC_OK);
    const char *e[] = {"k9=e"};
    append(e, 1, T0 + 20000); /* 13, in a new active segment */
    c.min_dirty_ratio = 0.0;
    struct log_clean_result r = clean(T0 + 30000, 14, c);
    cr_assert_eq(r.rc, RC_OK);
    cr_assert_eq(r.tombstones_dropped, 1);
    struct dump d;
    dump_log(&d);
    /* and k2 at 7 went too: 12 was in a dirty segment this time */
    cr_assert_str_eq(d.text, "8:k3 9:k4 10:k0 12:k2 13:k9 ");
}

/* Files of the partition directory ending in suffix. */
static int files_ending(const char *suffix)
{
    DIR *dir = opendir(f.dir);
    cr_assert_not_null(dir);
    int n = 0;
    struct dirent *e;
    size_t sl = strlen(suffix);
    while ((e = readdir(dir)) != NULL) {
        size_t l = strlen(e->d_name);
        n += l >= sl && strcmp(e->d_name + l - sl, suffix) == 0;
    }
    closedir(dir);
    return n;
}

Test(log_cleaner, a_crash_before_the_swap_leaves_the_old_segments)
{
    keyed_log();
    log_fixture_close_unclean(&f);
    /* A rewrite left behind, never renamed: garbage at the .cleaned name */
    char path[4300];
    snprintf(path, sizeof path, "%s/%020d.log.cleaned", f.dir, 0);
    FILE *g = fopen(path, "w");
    cr_assert_not_null(g);
    fputs("half a rewrite", g);
    cr_assert_eq(fclose(g), 0);
    log_fixture_open(&f);
    cr_assert_eq(files_ending(".cleaned"), 0, "removed at open");
    struct dump d;
    dump_log(&d);
    cr_assert_str_eq(d.text, "0:k0 1:k1 2:k2 3:k3 4:k4 5:k0 6:k1 7:k2 8:k3 "
                             "9:k4 10:k0 11:k1= 12:k2 ");
}

Test(log_cleaner, a_crash_between_the_steps_of_the_swap_leaves_a_whole_log)
{
    keyed_log();
    /* After the index files went, before the rename: the old .log without
     * its index, which an open rebuilds. */
    log_fixture_close_unclean(&f);
    char idx[4300];
    log_fixture_file(&f, 5, "index", idx, sizeof idx);
    unlink(idx);
    log_fixture_file(&f, 5, "timeindex", idx, sizeof idx);
    unlink(idx);
    log_fixture_open(&f);
    struct dump d;
    dump_log(&d);
    cr_assert_str_eq(d.text, "0:k0 1:k1 2:k2 3:k3 4:k4 5:k0 6:k1 7:k2 8:k3 "
                             "9:k4 10:k0 11:k1= 12:k2 ");
    /* After the renames, before the checkpoint: the new segments with the
     * old checkpoint; the next pass cleans them again, to the same. */
    clean(T0 + 10000, 13, config());
    log_fixture_close_unclean(&f);
    char cp[4300];
    snprintf(cp, sizeof cp, "%s/cleaner-offset-checkpoint", f.dir);
    cr_assert_eq(unlink(cp), 0);
    log_fixture_open(&f);
    cr_assert_eq(log_clean_checkpoint(f.log), 0);
    struct log_clean_config c = config();
    c.min_dirty_ratio = 0.0;
    struct log_clean_result r = clean(T0 + 10000, 13, c);
    cr_assert_eq(r.rc, RC_OK);
    cr_assert_eq(r.records_dropped, 0);
    dump_log(&d);
    cr_assert_str_eq(d.text, "7:k2 8:k3 9:k4 10:k0 11:k1= 12:k2 ");
}

Test(log_cleaner, a_truncation_during_a_pass_cancels_its_swap)
{
    keyed_log();
    cr_assert_eq(start_pass(T0 + 10000, 13, config(), NULL, 0), RC_OK);
    cr_assert_eq(start_pass(T0 + 10000, 13, config(), NULL, 0), RC_FULL,
                 "one pass at a time");
    cr_assert_eq(log_truncate_to(f.log, 11), RC_OK);
    wait_done();
    cr_assert_eq(result.rc, RC_BUSY);
    cr_assert_eq(result.segments, 0);
    cr_assert_eq(files_ending(".cleaned"), 0);
    struct dump d;
    dump_log(&d);
    /* a cut is whole batches: 10-11 went with 11 */
    cr_assert_str_eq(d.text, "0:k0 1:k1 2:k2 3:k3 4:k4 5:k0 6:k1 7:k2 8:k3 "
                             "9:k4 ");
    cr_assert_eq(log_clean_checkpoint(f.log), 0);
}

Test(log_cleaner, a_log_closed_during_a_pass_closes_cleanly)
{
    keyed_log();
    cr_assert_eq(start_pass(T0 + 10000, 13, config(), NULL, 0), RC_OK);
    log_fixture_close(&f);
    cr_assert_not(done, "no callback once the log is closing");
    cr_assert_eq(files_ending(".cleaned"), 0);
    log_fixture_open(&f);
    cr_assert(f.opened_clean);
    cr_assert_eq(log_end_offset(f.log), 13);
}

/* A batch that loses its record with the largest time (a later value of
 * its key) is rewritten with its kept records' largest time, as Kafka's
 * is, so the segment's largest time and MAX_TIMESTAMP (ListOffsets -3)
 * name a record that is still there; lookups by time skip the removed
 * one. */
Test(log_cleaner, max_timestamp_follows_the_kept_records)
{
    log_fixture_open(&f);
    const char *a[] = {"x=a", "y=a", "k0=a"}; /* T0+5000..5002 */
    const char *b[] = {"k0=b"};
    append(a, 3, T0 + 5000);
    cr_assert_eq(log_roll(f.log), RC_OK);
    append(b, 1, T0 + 1000);
    cr_assert_eq(log_roll(f.log), RC_OK);
    struct log_time_offset got;
    cr_assert_eq(log_offset_of_max_timestamp(f.log, &got), RC_OK);
    cr_assert_eq(got.offset, 2);
    cr_assert_eq(got.timestamp, T0 + 5002);
    struct log_clean_result r = clean(T0 + 10000, log_end_offset(f.log),
                                      config());
    cr_assert_eq(r.rc, RC_OK);
    struct dump d;
    dump_log(&d);
    cr_assert_str_eq(d.text, "0:x 1:y 3:k0 ");
    cr_assert_eq(log_offset_of_max_timestamp(f.log, &got), RC_OK);
    cr_assert_eq(got.offset, 1);
    cr_assert_eq(got.timestamp, T0 + 5001);
    cr_assert_eq(log_offset_for_timestamp(f.log, T0 + 5002, &got),
                 RC_NOT_FOUND);
    cr_assert_eq(log_offset_for_timestamp(f.log, T0 + 1001, &got), RC_OK);
    cr_assert_eq(got.offset, 0);
    log_fixture_close(&f);
    log_fixture_open(&f);
    cr_assert_eq(log_offset_of_max_timestamp(f.log, &got), RC_OK);
    cr_assert_eq(got.offset, 1);
}
