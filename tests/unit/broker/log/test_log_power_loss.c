/* The partition log on the simulated disk (common/io_sim.h), with its
 * group commit run by the test (log_set_sync_runner), under power loss:
 * each seed appends, waits for durability, completes syncs, truncates,
 * fails an fdatasync now and then, and loses power at random moments. After
 * every power loss the reopened log must hold every record whose
 * durability was confirmed, exactly as appended, and every other batch it
 * holds must be one appended at that offset: a truncation is made durable
 * by the next sync, as in Kafka, so until then a power loss may bring the
 * cut batches back (with their own epochs, which recovery reads back from
 * them; the follower then truncates again). A log that failed is also
 * reopened without a power loss, on a page cache that still shows what a
 * failed fdatasync never wrote: recovery must not believe it. Replay one seed with
 * SEED=<n>; LOG_POWER_LOSS_SEEDS=<n> runs n seeds. */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "broker/log/log.h"
#include "broker/log/log_open.h"
#include "common/io.h"
#include "common/io_sim.h"
#include "common/kafka/record_batch.h"
#include "common/rc.h"
#include "common/trace.h"
#include "tests/lib/batch_builder.h"

#define SEEDS 150
#define STEPS 400
#define BATCHES_MAX 1024 /* appended per seed: STEPS bounds it */
#define DIR "/sim/topic-0"

struct batch {
    int64_t base;
    int32_t n;
    size_t value_bytes;
    uint32_t seed;
};

struct run;

struct durable_wait {
    struct run *r;
    int64_t end;
};

struct run {
    uint64_t seed;
    uint64_t rng;
    uv_loop_t loop;
    struct io_sim *disk;
    struct log *log;
    struct log_config cfg;
    struct tracer tracer;
    struct log_sync_runner runner;
    bool submitted;
    struct batch b[BATCHES_MAX];   /* what the log holds, in order */
    size_t n;
    struct batch all[BATCHES_MAX]; /* every batch ever appended */
    size_t n_all;
    int64_t acked_end;   /* every offset below was confirmed durable */
    struct durable_wait waits[STEPS]; /* one per step at most, never
                                       * reused: a dead log's are not
                                       * called */
    size_t n_waits;
    int crashes;
    int sync_faults;
};

static uint64_t next_rand(struct run *r)
{
    r->rng ^= r->rng << 13;
    r->rng ^= r->rng >> 7;
    r->rng ^= r->rng << 17;
    return r->rng;
}

static bool chance(struct run *r, unsigned per_mille)
{
    return next_rand(r) % 1000 < per_mille;
}

static void quiet(struct tracer *t, enum trace_level level, const char *file,
                  int line, const char *msg)
{
    (void)t;
    (void)level;
    (void)file;
    (void)line;
    (void)msg;
}

static void submit(void *ctx, struct log *l)
{
    struct run *r = ctx;
    (void)l;
    r->submitted = true;
}

static void open_log(struct run *r)
{
    cr_assert_eq(log_open(&r->log, DIR, &r->cfg, &r->loop, &r->tracer),
                 RC_OK, "seed %" PRIu64 ": reopen after %d power losses",
                 r->rng, r->crashes);
    log_set_sync_runner(r->log, &r->runner);
}

static void durable_cb(void *arg, int rc)
{
    struct durable_wait *w = arg;
    if (rc == RC_OK && w->end > w->r->acked_end) {
        w->r->acked_end = w->end;
    }
}

static void append(struct run *r)
{
    if (r->n == BATCHES_MAX) {
        return;
    }
    struct batch *b = &r->b[r->n];
    b->n = (int32_t)(1 + next_rand(r) % 8);
    b->seed = (uint32_t)next_rand(r);
    b->value_bytes = 1 + next_rand(r) % 120;
    struct built_batch bb = batch_build(b->n, b->value_bytes, 1000, b->seed);
    struct log_append_info info;
    int rv = log_append(r->log, bb.bytes, bb.len, 1, 1000, &info);
    built_batch_free(&bb);
    if (rv == RC_OK) {
        b->base = info.base_offset;
        r->all[r->n_all++] = *b;
        r->n++;
    } else {
        cr_assert_neq(log_failure(r->log), RC_OK, "append: %s", rc_str(rv));
    }
}

static void wait_durable(struct run *r)
{
    struct durable_wait *w = &r->waits[r->n_waits++];
    *w = (struct durable_wait){r, log_end_offset(r->log)};
    int rv = log_wait_durable(r->log, w->end, durable_cb, w);
    cr_assert(rv == RC_OK || log_failure(r->log) != RC_OK,
              "wait_durable: %s", rc_str(rv));
}

static void truncate_some(struct run *r)
{
    if (r->n == 0) {
        return;
    }
    size_t keep = (size_t)(next_rand(r) % r->n);
    int64_t end = log_end_offset(r->log);
    int rv = log_truncate_to(r->log, r->b[keep].base);
    cr_assert(rv == RC_OK || log_failure(r->log) != RC_OK ||
                  log_end_offset(r->log) == end,
              "seed %" PRIu64 ": a truncation failed (%s) half done and "
              "the log goes on", r->seed, rc_str(rv));
    /* Cut on purpose: even when it fails, what was above is not owed. */
    r->n = keep;
    if (r->acked_end > r->b[keep].base) {
        r->acked_end = r->b[keep].base; /* cut on purpose, not lost */
    }
}

static bool same(const uint8_t *stored, const struct batch *b)
{
    struct built_batch bb = batch_build(b->n, b->value_bytes, 1000, b->seed);
    bool ok = batch_same_payload(stored, &bb);
    built_batch_free(&bb);
    return ok;
}

/* The batch the log holds at h (stored): below the confirmed end the one
 * the model holds there, above it any appended at that offset. */
static const struct batch *source_of(struct run *r, size_t i,
                                     const struct record_batch_header *h,
                                     const uint8_t *stored)
{
    if (h->base_offset < r->acked_end) {
        cr_assert(i < r->n && r->b[i].base == h->base_offset,
                  "a confirmed batch at %" PRId64 " is gone",
                  h->base_offset);
        cr_assert(same(stored, &r->b[i]), "the confirmed batch at %" PRId64
                  " differs from the one appended", h->base_offset);
        return &r->b[i];
    }
    for (size_t k = r->n_all; k-- > 0;) {
        if (r->all[k].base == h->base_offset && same(stored, &r->all[k])) {
            return &r->all[k];
        }
    }
    cr_assert_fail("a batch at %" PRId64 " nobody appended there",
                   h->base_offset);
    return NULL;
}

/* Checks what the reopened log holds (see the top) and makes it the
 * model's. */
static void verify(struct run *r)
{
    int64_t end = log_end_offset(r->log);
    cr_assert_geq(end, r->acked_end,
                  "seed %" PRIu64 ": power loss %d lost confirmed records: "
                  "end %" PRId64
                  " < %" PRId64, r->seed, r->crashes, end, r->acked_end);
    static struct batch held[BATCHES_MAX];
    size_t n_held = 0;
    size_t i = 0;
    int64_t at = log_start_offset(r->log);
    while (at < end) {
        struct log_span span;
        cr_assert_eq(log_read(r->log, at, 1 << 20, INT64_MAX, &span), RC_OK);
        cr_assert_gt(span.bytes, 0, "seed %" PRIu64 ": power loss %d: "
                     "nothing at %" PRId64 " of [%" PRId64 ", %" PRId64 ")",
                     r->seed, r->crashes, at, log_start_offset(r->log), end);
        uint8_t *buf = malloc((size_t)span.bytes);
        cr_assert_not_null(buf);
        cr_assert_eq(io_pread(span.fd, buf, (size_t)span.bytes,
                              (off_t)span.position), span.bytes);
        for (size_t pos = 0; pos < (size_t)span.bytes;) {
            struct record_batch_header h;
            cr_assert_eq(record_batch_parse(buf + pos,
                                            (size_t)span.bytes - pos, &h),
                         RC_OK);
            while (i < r->n && r->b[i].base < h.base_offset) {
                i++;
            }
            cr_assert_lt(n_held, BATCHES_MAX);
            held[n_held++] = *source_of(r, i, &h, buf + pos);
            pos += (size_t)record_batch_size(&h);
            at = record_batch_last_offset(&h) + 1;
        }
        free(buf);
        log_span_release(&span);
    }
    memcpy(r->b, held, n_held * sizeof *held);
    r->n = n_held;
}

/* The process dies; with power_loss the machine too (unsynced writes
 * go). A process that exits after a failed fdatasync restarts on a page
 * cache that still shows what the device never got. */
static void die(struct run *r, bool power)
{
    r->crashes++;
    r->submitted = false;
    log_abandon(r->log);
    r->log = NULL;
    cr_assert_eq(uv_run(&r->loop, UV_RUN_NOWAIT), 0);
    io_fault_clear();
    if (power) {
        io_sim_power_loss(r->disk, "");
    }
    open_log(r);
    verify(r);
}

static void power_loss(struct run *r)
{
    die(r, true);
}

static void fail_next_sync(struct run *r)
{
    struct io_fault f = {.op = IO_OP_SYNC, .kind = IO_FAULT_ERRNO,
                         .err = EIO, .times = 1};
    cr_assert_eq(io_fault_add(&f), RC_OK);
    r->sync_faults++;
}

static void step(struct run *r)
{
    unsigned roll = (unsigned)(next_rand(r) % 1000);
    if (log_failure(r->log) != RC_OK && roll < 300) {
        die(r, roll < 150); /* a failed log dir: the broker exits */
    } else if (roll < 450) {
        append(r);
    } else if (roll < 600) {
        wait_durable(r);
    } else if (roll < 780) {
        uv_run(&r->loop, UV_RUN_NOWAIT); /* the prepare submits a job */
    } else if (roll < 950) {
        if (r->submitted) {
            r->submitted = false;
            log_sync_run(r->log);
        }
    } else if (roll < 965) {
        truncate_some(r);
    } else if (roll < 990) {
        power_loss(r);
    } else if (chance(r, 300)) {
        fail_next_sync(r);
    }
}

static void run_seed(uint64_t seed, int *crashes, int *faults)
{
    struct run *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    r->seed = seed;
    r->rng = seed * 0x9e3779b97f4a7c15ULL | 1;
    cr_assert_eq(uv_loop_init(&r->loop), 0);
    cr_assert_eq(io_sim_new(&r->disk), RC_OK);
    io_sim_install(r->disk);
    log_config_default(&r->cfg);
    r->cfg.segment_bytes = 2048;
    r->cfg.segment_index_bytes = 4096;
    r->tracer = (struct tracer){.level = TRACE_LEVEL_ERROR, .emit = quiet};
    r->runner = (struct log_sync_runner){.ctx = r, .submit = submit};
    open_log(r);
    for (int i = 0; i < STEPS; i++) {
        step(r);
    }
    power_loss(r);
    *crashes += r->crashes;
    *faults += r->sync_faults;
    log_abandon(r->log);
    cr_assert_eq(uv_run(&r->loop, UV_RUN_NOWAIT), 0);
    cr_assert_eq(uv_loop_close(&r->loop), 0);
    io_fault_clear();
    io_sim_uninstall();
    io_sim_free(r->disk);
    free(r);
}

Test(log_power_loss, confirmed_records_survive_and_nothing_differs,
     .timeout = 120)
{
    const char *one = getenv("SEED");
    const char *many = getenv("LOG_POWER_LOSS_SEEDS");
    uint64_t from = one != NULL ? strtoull(one, NULL, 10) : 1;
    uint64_t n = many != NULL ? strtoull(many, NULL, 10) : SEEDS;
    uint64_t to = one != NULL ? from + 1 : from + n;
    int crashes = 0;
    int faults = 0;
    for (uint64_t s = from; s < to; s++) {
        run_seed(s, &crashes, &faults);
    }
    cr_assert_gt(crashes, (int)(to - from), "every seed lost power");
    cr_assert_gt(faults, 0);
}
