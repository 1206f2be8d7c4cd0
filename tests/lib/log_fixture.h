/* Test helper: a partition log in a temporary directory with its own libuv
 * loop and a tracer that records warnings, plus bounded helpers to append,
 * wait for durability and read spans back. Every wait has a deadline. */
#ifndef CAIRN_TESTS_LOG_FIXTURE_H
#define CAIRN_TESTS_LOG_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "broker/log/log.h"
#include "broker/log/log_startup.h"
#include "common/trace.h"
#include "tests/lib/batch_builder.h"

#define LOG_FIXTURE_WAIT_MS 10000

struct log_fixture {
    char dir[4096];
    uv_loop_t loop;
    struct log *log;
    struct log_config cfg;
    struct tracer tracer;
    int n_warnings;
    char last_warning[1024];
    char warnings[8192]; /* every WARN and ERROR line, each ending "\n" */
    bool opened_clean;
    struct log_startup startup; /* run by log_fixture_check() */
};

void log_fixture_setup(struct log_fixture *f);
void log_fixture_teardown(struct log_fixture *f);
/* Opens f->dir with f->cfg; asserts success. */
void log_fixture_open(struct log_fixture *f);
/* Clean close, running the loop until the log is freed. */
void log_fixture_close(struct log_fixture *f);
/* Clean close, then removes the clean-shutdown marker, so the next open
 * recovers as after a crash. */
void log_fixture_close_unclean(struct log_fixture *f);
/* Runs the start-up check of f->log to its end (running the loop,
 * bounded); asserts it ended. */
void log_fixture_check(struct log_fixture *f);
/* Appends a built batch at now_ms = its timestamp; asserts success. */
struct log_append_info log_fixture_append(struct log_fixture *f,
                                          int32_t n_records,
                                          size_t value_bytes, int64_t ts,
                                          uint32_t seed);
/* Waits (running the loop, bounded) until offset is durable; returns the
 * callback's rc. */
int log_fixture_wait_durable(struct log_fixture *f, int64_t offset);
/* Reads a span into a fresh buffer (caller frees); *len_out its size. */
uint8_t *log_fixture_span_bytes(const struct log_span *span,
                                size_t *len_out);
/* Path of dir/<20-digit base>.<ext>. */
void log_fixture_file(const struct log_fixture *f, int64_t base,
                      const char *ext, char *out, size_t cap);
int64_t log_fixture_file_size(const char *path);
/* Flips the bits of mask in the byte at position of the segment file
 * based at base (bit rot, behind the log's back); false if it cannot. */
bool log_fixture_flip(const struct log_fixture *f, int64_t base,
                      int64_t position, uint8_t mask);
/* True when a WARN or ERROR line since setup contains every one of the
 * strings a and b (b may be NULL). */
bool log_fixture_warned(const struct log_fixture *f, const char *a,
                        const char *b);

#endif
