/* Shared by the files of `cairn dump-log` (cli/cmd/dump_log/dump_log.h):
 * the state of one run, and the dumps of a segment file and of a
 * partition's other files. One thread. */
#ifndef CAIRN_CLI_DUMP_LOG_INTERNAL_H
#define CAIRN_CLI_DUMP_LOG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/cmd/dump_log/dump_log.h"
#include "common/json.h"

struct dump_log {
    const struct dump_log_opts *opts;
    FILE *out;
    struct json json; /* with opts->json */
    int problems;     /* damage or unreadable files reported */
};

/* A problem found: counted for the exit status. */
void dump_log_problem(struct dump_log *d);

/* Dumps the segment file path (base offset base, from its name; -1 when
 * the name does not say) and, with a base, the indexes beside it in dir:
 * text lines, or with --json one object. */
void dump_log_segment(struct dump_log *d, const char *path, const char *dir,
                      int64_t base);

/* The checkpoints of the partition directory dir, topic-partition as its
 * name says (topic NULL when it does not); --json: keys of the open
 * partition object. */
void dump_log_checkpoints(struct dump_log *d, const char *dir,
                          const char *topic, int32_t partition);

/* The sanity of a segment's .index and .timeindex in dir (entries,
 * CRC-32C); --json: keys of the open segment object. */
void dump_log_indexes(struct dump_log *d, const char *dir, int64_t base);

/* s[0..len) shown printable into out (cap bytes): bytes outside
 * printable ASCII become '.', and more than show bytes end in "...". */
void dump_log_printable(const uint8_t *s, size_t len, size_t show, char *out,
                        size_t cap);

#endif
