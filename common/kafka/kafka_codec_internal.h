/* The Kafka codec's private helpers, shared by common/kafka/kafka_codec*.c
 * only (the codec itself is common/kafka/kafka_codec.h). */
#ifndef CAIRN_COMMON_KAFKA_KAFKA_CODEC_INTERNAL_H
#define CAIRN_COMMON_KAFKA_KAFKA_CODEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kafka/kafka_codec.h"

/* Records rc in the reader unless an earlier failure did (first failure
 * wins), so later reads are no-ops. */
void kafka_codec__fail(struct reader *r, int rc);

/* --- Flexible versions (KIP-482) ---------------------------------------
 * A decoder or encoder of a flexible version turns its reader or writer
 * compact first: from then on strings, bytes (reader_string(),
 * writer_bytes() ...) and the arrays below take their compact forms, and
 * every struct of the schema ends in a tagged-field section,
 * kafka_codec__tags() on the way in (skipped: Cairn reads no tagged field
 * unless an API says so) and kafka_codec__write_tags() on the way out (an
 * empty one). Both are no-ops in a non-flexible version, so one field
 * list serves both. kafka_codec__finish() and kafka_codec__end() turn
 * compact off again. */
void kafka_codec__flexible(struct reader *r, bool flexible);
void kafka_codec__flexible_write(struct writer *w, bool flexible);
void kafka_codec__tags(struct reader *r);
void kafka_codec__write_tags(struct writer *w);

/* An encoder's last step: turns compact off and returns w->rc. */
MUST_CHECK int kafka_codec__end(struct writer *w);

/* A decoder's last step: turns compact off and returns r->rc. Bytes left
 * over after the last field are not an error (r->pos shows them), as
 * Kafka's generated readers ignore them (kafka_codec.h). */
MUST_CHECK int kafka_codec__finish(struct reader *r);

/* Reads an int32 array count and allocates that many elem_bytes elements
 * from the arena, after checking it: -1 is null (*n = -1, NULL) if
 * nullable and RC_MALFORMED otherwise, below -1 is RC_MALFORMED, more
 * elements than the bytes left could hold at wire_min_bytes (> 0) each is
 * RC_SHORT, above n_max is RC_TOO_LARGE; arena failures are recorded too.
 * Returns NULL with *n = 0 on any failure (or after an earlier one) and
 * NULL for an empty array. */
void *kafka_codec__array(struct reader *r, struct arena *a, int32_t *n,
                         size_t elem_bytes, size_t wire_min_bytes,
                         int32_t n_max, bool nullable);

/* [int32], [int64] and [string] arrays ([int32] and [string] nullable
 * if asked). */
const int32_t *kafka_codec__read_i32s(struct reader *r, struct arena *a,
                                      int32_t *n, bool nullable);
const int64_t *kafka_codec__read_i64s(struct reader *r, struct arena *a,
                                      int32_t *n);
const struct slice *kafka_codec__read_strings(struct reader *r,
                                              struct arena *a, int32_t *n,
                                              int32_t n_max, bool nullable);

/* Writes an array count, asserting it suits the field: n >= -1, -1 only
 * if nullable, elems non-NULL when n > 0. */
void kafka_codec__write_count(struct writer *w, int32_t n, const void *elems,
                              bool nullable);
void kafka_codec__write_i32s(struct writer *w, const int32_t *v, int32_t n,
                             bool nullable);
void kafka_codec__write_strings(struct writer *w, const struct slice *v,
                                int32_t n, bool nullable);

/* A UUID's 16 bytes. */
struct kafka_uuid kafka_codec__read_uuid(struct reader *r);
void kafka_codec__write_uuid(struct writer *w, const struct kafka_uuid *u);

/* Asserts that version lies in [min, max] (encoders: programmer error). */
void kafka_codec__check_version(int16_t version, int16_t min, int16_t max);

/* A non-null empty slice, for "" defaults. */
struct slice kafka_codec__empty_string(void);

#endif
