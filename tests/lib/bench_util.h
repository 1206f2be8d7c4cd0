/* Benchmark helper: what tests/bench/bench_{kafka,replication,groups,
 * controller}.c share. A failure exit that stops the running cluster,
 * a monotonic clock, medians, bounded environment overrides, fresh
 * topics on a tests/lib/cluster.h cluster, and child processes (`cairn
 * bench`, helper scripts) read with poll() against a budget, their
 * `RESULT key=value ...` lines parsed. Main thread only: bench_fail()
 * stops the cluster, which only main may touch. */
#ifndef CAIRN_TESTS_BENCH_UTIL_H
#define CAIRN_TESTS_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "tests/lib/cluster.h"

#define BENCH_READY_BUDGET_MS 30000  /* start until every broker unfenced */
#define BENCH_ARGS_MAX 40            /* of one `cairn` command line */
#define BENCH_OUTPUT_BYTES 65536     /* of one child's stdout */
#define BENCH_CAIRN_BUDGET_MS 240000 /* one `cairn bench`; more is a hang */

/* The cluster running now: bench_fail() stops it. Set by
 * bench_cluster_start(), cleared by bench_cluster_stop(). */
extern struct cluster *bench_cluster;

/* Names the program in bench_fail()'s messages ("bench_kafka"). */
void bench_set_name(const char *name);

/* A failed check means the numbers would be worthless: prints
 * "<name>: FAILED: <message>" to stderr, stops every process of
 * bench_cluster (cluster_destroy) and aborts. */
NORETURN void bench_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Monotonic milliseconds with microsecond resolution. */
double bench_clock_ms(void);

/* Sleeps ms; an early wake only shortens a poll. */
void bench_pause_ms(long ms);

/* Median of v[0..n), n > 0; the mean of the middle two when n is even.
 * Sorts v ascending. */
double bench_median(double *v, size_t n);

/* $name as an integer in [1, max]; def when unset or empty. Anything
 * else fails the bench. */
long bench_env_long(const char *name, long def, long max);

/* Sets bench_cluster to c, starts it (cluster_start) and waits up to
 * BENCH_READY_BUDGET_MS until every broker is unfenced; fails the bench
 * otherwise. */
void bench_cluster_start(struct cluster *c, int controllers, int brokers);

/* Clears bench_cluster (which must be c) and destroys c. */
void bench_cluster_stop(struct cluster *c);

/* Creates topic name on bench_cluster and waits until every replica has
 * logged that it leads or follows its partition (`cairn bench` creating
 * it itself fails now and then: brokers apply metadata up to ~100 ms
 * apart, and one that has not yet answers UNKNOWN_TOPIC_OR_PARTITION).
 * leaders[p] gets the port of partition p's leader; leaders may be
 * NULL. */
void bench_create_topic(const char *name, int32_t partitions, int32_t rf,
                        int *leaders);

/* Deletes topic name with `cairn --bootstrap-servers boot topics delete`
 * (which waits until every broker has dropped it), so that a run's
 * files, and the page cache behind them, do not weigh on the next run.
 * A failure fails the bench. */
void bench_delete_topic(const char *boot, const char *name);

/* The number after " name=" in line; 0 when it is not there, unless
 * required, which fails the bench. */
double bench_field(const char *line, const char *name, bool required);

/* Runs exe with argv to its end within budget_ms: its stdout into out
 * (cap bytes, NUL-terminated; more fails the bench), also copied line by
 * line to our stdout with echo; its stderr to log_path (appended), or
 * inherited when NULL. SIGKILLs it when the budget runs out. *status gets
 * its wait status; false when the budget ran out. */
bool bench_run_child(const char *exe, char *const argv[],
                     const char *log_path, bool echo, char *out, size_t cap,
                     double budget_ms, int *status);

/* Runs `<bench_cluster's bin>/cairn ARGS...` (args NULL-terminated, fewer
 * than BENCH_ARGS_MAX) within BENCH_CAIRN_BUDGET_MS, prints its RESULT
 * line as "run <label> <the rest>" and returns it, NUL-terminated at its
 * end, in a buffer valid until the next call. A failed or late child, or
 * no RESULT line, fails the bench. */
const char *bench_run_cairn(const char *label, const char *const *args);

#endif
