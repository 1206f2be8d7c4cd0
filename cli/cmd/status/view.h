/* Text tables and JSON of a metadata image's brokers and topics, shared by
 * `cairn status` and `cairn topics`. Topics are listed by name, partitions
 * by id, brokers by id. Text output makes every string printable (other
 * bytes become '?'); JSON escapes them instead. Images and outputs are
 * borrowed. One thread. */
#ifndef CAIRN_CLI_VIEW_H
#define CAIRN_CLI_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/client/health.h"
#include "common/json.h"
#include "common/assert.h"
#include "common/meta/meta.h"

/* "1,2,3": up to META_REPLICAS_MAX ids of up to 11 characters each. */
#define VIEW_IDS_BYTES (META_REPLICAS_MAX * 12 + 1)

/* Replica ids as "1,2,3" into out (cut at cap bytes). */
void view_format_ids(const int32_t *ids, int32_t n, char *out, size_t cap);

/* Replica ids as a JSON array. */
void view_ids_json(struct json *j, const int32_t *ids, int32_t n);

/* The topics of img sorted by name: a malloc'd array (*out, *n) of
 * pointers into img, valid while img is unchanged; the caller frees the
 * array. No topics: *out NULL, *n 0. RC_NOMEM. */
MUST_CHECK int view_topics_sorted(const struct meta_image *img,
                                  const struct meta_topic ***out, size_t *n);

/* "BROKERS" and an id, epoch, address, state table, or "(none)". */
void view_brokers_text(FILE *out, const struct meta_image *img);

/* Past this many partitions, `cairn status` lists only those that need
 * a look (view_partitions_text()). */
#define VIEW_PARTITIONS_LISTED_MAX 200

/* "PARTITIONS" and a topic, partition, leader, epoch, replicas, ISR
 * table of the given topics, or "(none)". With h (may be NULL; gathered
 * from the topics' image) also the HW, each replica's log end offset as
 * "id:offset,..." in replica order ("-" unknown) and the flags
 * (UNDER-REPLICATED, UNDER-MIN-ISR, AT-MIN-ISR, OFFLINE; empty when
 * healthy). Unless all, past VIEW_PARTITIONS_LISTED_MAX partitions only
 * those with a flag (or, without h, no leader or a short ISR) or being
 * reassigned are listed, after a line that counts the rest. */
void view_partitions_text(FILE *out, const struct meta_topic *const *topics,
                          size_t n, const struct health *h, bool all);

/* The array value of "brokers" and of "topics" in `status --json`. With
 * h (may be NULL), brokers also get "reachable" (null when not asked)
 * and, when set, "error"; partitions get "hw", "end_offsets" ([{"id",
 * "end_offset"}] in replica order; null unknown), "min_isr",
 * "under_replicated", "under_min_isr", "at_min_isr" and "offline". */
void view_brokers_json(struct json *j, const struct meta_image *img,
                       const struct health *h);
void view_topics_json(struct json *j, const struct meta_topic *const *topics,
                      size_t n, const struct health *h);

#endif
