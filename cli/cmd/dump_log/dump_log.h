/* `cairn dump-log PATH...`: Cairn's kafka-dump-log.sh. Reads partition
 * directories (<log.dir>/<topic>-<partition>/) or single segment files
 * offline, with no cluster, and prints each segment batch by batch (file
 * position, offsets, record count, leader epoch, magic, attributes,
 * producer id, epoch and sequence, timestamps, size, CRC-32C check),
 * with --records each record (offset, timestamp, key, value; compressed
 * batches decompressed), then the partition's checkpoints: the
 * leader-epoch checkpoint, this partition's entry of the log dir's
 * high-watermark checkpoint, the producer-state snapshot and the index
 * files. --json prints one JSON document instead.
 *
 * Every byte read is untrusted: each length is checked before use, and a
 * damaged file (bad CRC, cut or undecodable tail, bad length, corrupt
 * checkpoint) is reported with its position, never trusted. The exit
 * status is 1 when anything was reported so. Blocking reads; one
 * thread. */
#ifndef CAIRN_CLI_DUMP_LOG_H
#define CAIRN_CLI_DUMP_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/assert.h"

#define DUMP_LOG_PATHS_MAX 64
/* Key and value bytes shown per record; longer ones end in "...". */
#define DUMP_LOG_SHOW_BYTES_DEFAULT 64
#define DUMP_LOG_SHOW_BYTES_MAX 4096

struct dump_log_opts {
    const char *paths[DUMP_LOG_PATHS_MAX];
    size_t n_paths;
    bool records; /* --records, --print-records */
    bool json;
    int32_t show_bytes; /* --max-bytes */
};

void dump_log_usage(FILE *out);

/* argv[0] is "dump-log". -1 to go on, else the exit code. */
MUST_CHECK int dump_log_parse(int argc, char **argv, struct dump_log_opts *o);

/* Dumps every path to out; diagnostics of paths that cannot be read at
 * all go to stderr too. Returns the exit code: 0 when everything read was
 * sound, 1 when something was damaged or could not be read. */
MUST_CHECK int dump_log_run(const struct dump_log_opts *o, FILE *out);

/* Parse, then run on stdout. */
int dump_log_main(int argc, char **argv);

#endif
