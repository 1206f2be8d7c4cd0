/* Byte reader for Kafka's wire encoding, with a sticky error so decoders
 * are straight-line code checked once at the end:
 *
 *     req->GroupId = reader_string(r);     borrows from the frame
 *     req->GenerationId = reader_i32(r);
 *     return r->rc;                        first failure wins
 *
 * Fixed-width integers are big-endian. Varints are protobuf-style base-128,
 * least significant group first; signed ones are zigzag encoded:
 *
 *     zigzag:  0 -> 0, -1 -> 1, 1 -> 2, -2 -> 3, ...
 *     300 -> zigzag 600 -> d8 04
 *
 * Errors: input that ends early sets RC_SHORT, a bad encoding sets
 * RC_MALFORMED. The first failure wins and is kept in r->rc; a failing read
 * consumes nothing, and every read after it returns 0 (or an empty,
 * non-null slice) and consumes nothing.
 *
 * Slices borrow from the buffer given to reader_init(); the reader owns
 * nothing. Pure codec: no I/O, no allocation. A reader belongs to one
 * thread at a time. */
#ifndef CAIRN_COMMON_READER_H
#define CAIRN_COMMON_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/slice.h"

struct reader {
    const uint8_t *p; /* never NULL after reader_init() */
    size_t len;
    size_t pos;       /* pos <= len always */
    int rc;           /* RC_OK until the first failure */
    /* A flexible version's body (KIP-482): reader_string(), _bytes() and
     * their nullable forms read the compact encodings instead. Off after
     * reader_init(); the Kafka codec turns it on for flexible versions. */
    bool compact;
};

/* Reads len bytes at p, borrowed for the reader's lifetime. p may be NULL
 * only when len is 0. */
void reader_init(struct reader *r, const void *p, size_t len);

/* --- Fixed width (big-endian) -------------------------------------------- */

int8_t reader_i8(struct reader *r);
int16_t reader_i16(struct reader *r);
int32_t reader_i32(struct reader *r);
int64_t reader_i64(struct reader *r);
uint32_t reader_u32(struct reader *r);

/* Kafka BOOLEAN: one byte, any non-zero value is true. */
bool reader_bool(struct reader *r);

/* --- Varints ------------------------------------------------------------- */

/* Unsigned varint, at most 5 bytes. A 5th byte with its continuation bit
 * set (overlong) or with bits above 2^32 (overflow) is RC_MALFORMED.
 * Non-minimal encodings within 5 bytes (80 00 for 0) are accepted, as
 * Kafka's ByteUtils accepts them. */
uint32_t reader_uvarint(struct reader *r);

/* Zigzag int32 over an unsigned varint (same 5-byte rules). */
int32_t reader_varint(struct reader *r);

/* Zigzag int64, at most 10 bytes; the 10th byte may only be 00 or 01. */
int64_t reader_varlong(struct reader *r);

/* --- Strings and bytes (classic, fixed-width length prefix) ------------- */

/* STRING: int16 length then bytes; a negative length is RC_MALFORMED. */
struct slice reader_string(struct reader *r);

/* NULLABLE_STRING: length -1 gives the null slice; below -1 is
 * RC_MALFORMED. */
struct slice reader_nullable_string(struct reader *r);

/* BYTES: int32 length then bytes; a negative length is RC_MALFORMED. */
struct slice reader_bytes(struct reader *r);

/* NULLABLE_BYTES: length -1 gives the null slice; below -1 is
 * RC_MALFORMED. */
struct slice reader_nullable_bytes(struct reader *r);

/* The next n bytes, borrowed; RC_SHORT if fewer are left. */
struct slice reader_raw(struct reader *r, size_t n);

/* ARRAY count (int32). Returns -1 for a null array, without error.
 * Returns 0 and sets RC_MALFORMED for a count below -1, above
 * KAFKA_ARRAY_COUNT_MAX, or larger than the bytes left could hold at
 * elem_min_bytes (> 0) per element; so a caller may size an allocation
 * from a non-negative result. */
int32_t reader_array_len(struct reader *r, size_t elem_min_bytes);

/* --- Flexible versions (KIP-482 compact encodings) ---------------------- */

/* COMPACT_STRING: uvarint length+1. 0 (null) is RC_MALFORMED here, as is a
 * length above KAFKA_STRING_BYTES_MAX. */
struct slice reader_compact_string(struct reader *r);

/* COMPACT_NULLABLE_STRING: uvarint 0 gives the null slice. */
struct slice reader_compact_nullable_string(struct reader *r);

/* COMPACT_BYTES: uvarint length+1; 0 (null) is RC_MALFORMED. */
struct slice reader_compact_bytes(struct reader *r);

/* COMPACT_NULLABLE_BYTES: uvarint 0 gives the null slice. */
struct slice reader_compact_nullable_bytes(struct reader *r);

/* COMPACT_ARRAY count: uvarint count+1; 0 gives -1 (null array). Same
 * bounds as reader_array_len(). */
int32_t reader_compact_array_len(struct reader *r, size_t elem_min_bytes);

/* Skips a TAGGED_FIELDS section: uvarint count, then per field uvarint
 * tag, uvarint size and size bytes. */
void reader_skip_tagged_fields(struct reader *r);

/* --- State --------------------------------------------------------------- */

/* Bytes not yet consumed. */
size_t reader_remaining(const struct reader *r);

/* True if there was no error and every byte was consumed: a decoder's
 * final check that a frame held nothing extra. */
bool reader_done(const struct reader *r);

#endif
