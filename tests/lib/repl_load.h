/* Test helper: the load producer of tests/integration/clients/repl_load.py
 * (an idempotent acks=all confluent-kafka producer) as a child process
 * against a cluster of tests/lib/cluster.h, its acknowledgements counted
 * as it writes them, and its verify mode run at the end. Files live in the
 * cluster's directory. Returns statuses; the caller asserts. */
#ifndef CAIRN_TESTS_REPL_LOAD_H
#define CAIRN_TESTS_REPL_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tests/lib/cluster.h"

#define REPL_LOAD_PARTITIONS_MAX 64
#define REPL_LOAD_PATH_BYTES 4200

struct repl_load {
    pid_t pid;                      /* 0 when not running */
    char topic[META_TOPIC_NAME_BYTES_MAX + 1];
    char script[REPL_LOAD_PATH_BYTES];
    char out[REPL_LOAD_PATH_BYTES];  /* "partition offset value" lines */
    char stop[REPL_LOAD_PATH_BYTES]; /* created to stop it */
    char log[REPL_LOAD_PATH_BYTES];
    long pos;                        /* of the out file, read so far */
    long acked;
    long failed;
    /* Highest acknowledged offset per partition; -1 for none. */
    int64_t acked_max[REPL_LOAD_PARTITIONS_MAX];
};

/* Starts the producer on c's brokers for topic at rate records/s; false
 * when the script is not found (l->script says where it looked) or the
 * fork failed. */
bool repl_load_start(struct repl_load *l, const struct cluster *c,
                     const char *topic, int rate);

/* Reads the acknowledgements written since the last call; the count so
 * far, or -1 on a line the producer never writes. */
long repl_load_acked(struct repl_load *l);

/* True when the producer has exited (its status then lost). */
bool repl_load_exited(struct repl_load *l);

/* The last cap - 1 bytes of the producer's log (its stderr), for a
 * failed test to say why it exited; "" when there is none. */
void repl_load_log_tail(const struct repl_load *l, char *out, size_t cap);

/* Creates the stop file and waits for the producer's flush until
 * deadline_ms; its wait status, -1 if it had to be killed. */
int repl_load_stop(struct repl_load *l, uint64_t deadline_ms);

/* Runs verify against c until deadline_ms: its wait status (-1: killed),
 * its output in text (cap bytes, NUL-terminated). */
int repl_load_verify(const struct repl_load *l, const struct cluster *c,
                     uint64_t deadline_ms, char *text, size_t cap);

/* Kills a running producer (a test's teardown). */
void repl_load_kill(struct repl_load *l);

#endif
