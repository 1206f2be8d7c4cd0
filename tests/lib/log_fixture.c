/* Test helper: partition log fixture (tests/lib/log_fixture.h). */
#include "tests/lib/log_fixture.h"
#include "broker/log/log_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/assert.h"
#include "common/limits.h"
#include "common/rc.h"
#include "tests/lib/tmpdir.h"

static void record_cb(struct tracer *t, enum trace_level level,
                      const char *file, int line, const char *msg)
{
    struct log_fixture *f = t->data;
    (void)file;
    (void)line;
    if (level >= TRACE_LEVEL_WARN) {
        f->n_warnings++;
        snprintf(f->last_warning, sizeof f->last_warning, "%s", msg);
        size_t used = strlen(f->warnings);
        snprintf(f->warnings + used, sizeof f->warnings - used, "%s\n", msg);
    }
    if (strstr(msg, "opened log") != NULL) {
        f->opened_clean = strstr(msg, "(clean)") != NULL;
    }
}

void log_fixture_setup(struct log_fixture *f)
{
    memset(f, 0, sizeof *f);
    tmpdir_make(f->dir, sizeof f->dir);
    ASSERT(uv_loop_init(&f->loop) == 0);
    log_config_default(&f->cfg);
    f->tracer = (struct tracer){.level = TRACE_LEVEL_DEBUG,
                                .emit = record_cb, .data = f};
    ASSERT(log_startup_init(&f->startup, &f->loop, LOG_STARTUP_CHUNK_BYTES,
                            &f->tracer) == RC_OK);
}

void log_fixture_open(struct log_fixture *f)
{
    ASSERT(f->log == NULL);
    int rv = log_open(&f->log, f->dir, &f->cfg, &f->loop, &f->tracer);
    if (rv != RC_OK) {
        fprintf(stderr, "log_open: %s\n", rc_str(rv));
    }
    ASSERT(rv == RC_OK);
}

void log_fixture_close(struct log_fixture *f)
{
    ASSERT(f->log != NULL);
    log_close(f->log);
    f->log = NULL;
    ASSERT(uv_run(&f->loop, UV_RUN_DEFAULT) == 0);
}

void log_fixture_close_unclean(struct log_fixture *f)
{
    char path[4200];
    log_fixture_close(f);
    snprintf(path, sizeof path, "%s/.clean-shutdown", f->dir);
    /* A log that never held a record leaves none. */
    ASSERT(unlink(path) == 0 || errno == ENOENT);
}

void log_fixture_teardown(struct log_fixture *f)
{
    if (f->log != NULL) {
        log_fixture_close(f);
    }
    log_startup_close(&f->startup);
    ASSERT(uv_loop_close(&f->loop) == 0);
    tmpdir_remove(f->dir);
}

struct log_append_info log_fixture_append(struct log_fixture *f,
                                          int32_t n_records,
                                          size_t value_bytes, int64_t ts,
                                          uint32_t seed)
{
    struct built_batch b = batch_build(n_records, value_bytes, ts, seed);
    struct log_append_info info;
    int rv = log_append(f->log, b.bytes, b.len, 0,
                        ts + n_records - 1, &info);
    if (rv != RC_OK) {
        fprintf(stderr, "log_append: %s\n", rc_str(rv));
    }
    ASSERT(rv == RC_OK);
    built_batch_free(&b);
    return info;
}

struct wait_state {
    bool done;
    int rc;
};

static void durable_cb(void *arg, int rc)
{
    struct wait_state *w = arg;
    w->done = true;
    w->rc = rc;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void log_fixture_check(struct log_fixture *f)
{
    log_startup_add(&f->startup, f->log);
    uint64_t deadline = now_ms() + LOG_FIXTURE_WAIT_MS;
    while (log_startup_verify_pending(f->log) && now_ms() < deadline) {
        uv_run(&f->loop, UV_RUN_ONCE);
    }
    ASSERT(!log_startup_verify_pending(f->log));
}

int log_fixture_wait_durable(struct log_fixture *f, int64_t offset)
{
    struct wait_state w = {0};
    ASSERT(log_wait_durable(f->log, offset, durable_cb, &w) == RC_OK);
    uint64_t deadline = now_ms() + LOG_FIXTURE_WAIT_MS;
    while (!w.done && now_ms() < deadline) {
        uv_run(&f->loop, UV_RUN_ONCE);
    }
    ASSERT(w.done);
    return w.rc;
}

uint8_t *log_fixture_span_bytes(const struct log_span *span,
                                size_t *len_out)
{
    size_t len = (size_t)span->bytes;
    uint8_t *buf = malloc(len == 0 ? 1 : len);
    ASSERT(buf != NULL);
    if (len > 0) {
        ASSERT(pread(span->fd, buf, len, (off_t)span->position) ==
               (ssize_t)len);
    }
    *len_out = len;
    return buf;
}

void log_fixture_file(const struct log_fixture *f, int64_t base,
                      const char *ext, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/%020lld.%s", f->dir, (long long)base, ext);
    ASSERT(n > 0 && (size_t)n < cap);
}

bool log_fixture_flip(const struct log_fixture *f, int64_t base,
                      int64_t position, uint8_t mask)
{
    char path[4200];
    log_fixture_file(f, base, "log", path, sizeof path);
    int fd = open(path, O_RDWR);
    if (fd < 0) {
        return false;
    }
    uint8_t b = 0;
    bool ok = pread(fd, &b, 1, (off_t)position) == 1;
    b ^= mask;
    ok = ok && pwrite(fd, &b, 1, (off_t)position) == 1;
    close(fd);
    return ok;
}

int64_t log_fixture_file_size(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        return -1;
    }
    return st.st_size;
}

bool log_fixture_warned(const struct log_fixture *f, const char *a,
                        const char *b)
{
    const char *line = f->warnings;
    while (*line != '\0') {
        const char *nl = strchr(line, '\n');
        size_t n = nl == NULL ? strlen(line) : (size_t)(nl - line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)n, line);
        if (strstr(buf, a) != NULL && (b == NULL || strstr(buf, b) != NULL)) {
            return true;
        }
        line += n + (nl != NULL);
    }
    return false;
}
