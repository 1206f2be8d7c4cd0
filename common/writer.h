/* Growable byte writer for Kafka's wire encoding, the mirror of
 * common/reader.h: big-endian fixed-width integers, zigzag varints, int16-
 * and int32-prefixed strings and bytes, and the compact (flexible version)
 * forms. Encoders are straight-line code checked once:
 *
 *     size_t size_at = writer_reserve(w, 4);   length prefix, patched later
 *     writer_i32(w, CorrelationId);
 *     writer_string(w, id, id_len);
 *     writer_patch_i32(w, size_at, (int32_t)(w->len - size_at - 4));
 *     if (w->rc != RC_OK) ...                  first failure wins
 *
 * The buffer grows by doubling up to a hard maximum set at init. Going past
 * it sets RC_TOO_LARGE; a failed allocation sets RC_NOMEM; a value that
 * cannot be encoded (a string longer than an int16 length) sets
 * RC_TOO_LARGE. After the first error every write is a no-op, so len stops
 * where the error happened.
 *
 * The writer owns data (writer_free() releases it); pointer arguments are
 * borrowed for the call. Pure codec, no I/O. One thread at a time. */
#ifndef CAIRN_COMMON_WRITER_H
#define CAIRN_COMMON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/slice.h"

struct writer {
    uint8_t *data; /* len bytes written; NULL until the first write */
    size_t len;
    size_t cap;    /* allocated bytes, cap <= max */
    size_t max;    /* len never exceeds this */
    int rc;        /* RC_OK until the first failure */
    /* A flexible version's body (KIP-482): writer_string(), _bytes() and
     * their nullable and slice forms write the compact encodings instead.
     * Off after writer_init(); the Kafka codec turns it on and off. */
    bool compact;
};

/* An empty writer that will hold at most max_bytes; allocates nothing. */
void writer_init(struct writer *w, size_t max_bytes);

/* Frees the buffer; the writer is empty afterwards (cap 0), with the same
 * max, and may be used again. */
void writer_free(struct writer *w);

/* Forgets the contents and the error, keeping the allocation for reuse. */
void writer_reset(struct writer *w);

/* --- Fixed width (big-endian) -------------------------------------------- */

void writer_i8(struct writer *w, int8_t v);
void writer_i16(struct writer *w, int16_t v);
void writer_i32(struct writer *w, int32_t v);
void writer_i64(struct writer *w, int64_t v);
void writer_u32(struct writer *w, uint32_t v);
void writer_bool(struct writer *w, bool v); /* 01 or 00 */

/* --- Varints ------------------------------------------------------------- */

void writer_uvarint(struct writer *w, uint32_t v);  /* 1..5 bytes */
void writer_varint(struct writer *w, int32_t v);    /* zigzag, 1..5 */
void writer_varlong(struct writer *w, int64_t v);   /* zigzag, 1..10 */

/* Encoded sizes, for length fields computed before writing. */
size_t writer_uvarint_size(uint32_t v);
size_t writer_varint_size(int32_t v);
size_t writer_varlong_size(int64_t v);

/* --- Raw bytes, strings and bytes ---------------------------------------- */

/* n bytes as they are. p may be NULL only if n is 0. */
void writer_raw(struct writer *w, const void *p, size_t n);

/* STRING: int16 length then bytes. len > KAFKA_STRING_BYTES_MAX sets
 * RC_TOO_LARGE. s may be NULL only if len is 0 (writes an empty string). */
void writer_string(struct writer *w, const char *s, size_t len);

/* NULLABLE_STRING: s == NULL writes length -1 (null). */
void writer_nullable_string(struct writer *w, const char *s, size_t len);

/* BYTES: int32 length then bytes. len > INT32_MAX sets RC_TOO_LARGE. p may
 * be NULL only if len is 0. */
void writer_bytes(struct writer *w, const void *p, size_t len);

/* NULLABLE_BYTES: p == NULL writes length -1 (null). */
void writer_nullable_bytes(struct writer *w, const void *p, size_t len);

/* Slice forms, e.g. to echo a decoded field. The non-nullable ones must
 * not be given a null slice (programmer error). */
void writer_string_slice(struct writer *w, struct slice s);
void writer_nullable_string_slice(struct writer *w, struct slice s);
void writer_bytes_slice(struct writer *w, struct slice s);
void writer_nullable_bytes_slice(struct writer *w, struct slice s);

/* --- Flexible versions (KIP-482 compact encodings) ---------------------- */

/* COMPACT_STRING: uvarint len+1, then bytes; same bound as STRING. */
void writer_compact_string(struct writer *w, const char *s, size_t len);

/* COMPACT_NULLABLE_STRING: s == NULL writes uvarint 0. */
void writer_compact_nullable_string(struct writer *w, const char *s,
                                    size_t len);

/* COMPACT_BYTES: uvarint len+1, then bytes; len >= INT32_MAX sets
 * RC_TOO_LARGE. */
void writer_compact_bytes(struct writer *w, const void *p, size_t len);

/* COMPACT_NULLABLE_BYTES: p == NULL writes uvarint 0. */
void writer_compact_nullable_bytes(struct writer *w, const void *p,
                                   size_t len);

/* COMPACT_ARRAY count: uvarint n+1; n == -1 (null array) writes 0.
 * n < -1 is a programmer error. */
void writer_compact_array_len(struct writer *w, int32_t n);

/* An empty TAGGED_FIELDS section (uvarint 0). */
void writer_empty_tagged_fields(struct writer *w);

/* --- Patching ------------------------------------------------------------ */

/* Appends n zero bytes and returns their position, for a value known only
 * later (a size prefix). After an error the position is meaningless, and
 * writer_patch_i32() ignores it. */
size_t writer_reserve(struct writer *w, size_t n);

/* Overwrites 4 bytes at pos (from writer_reserve()) with v, big-endian.
 * A no-op after an error; pos must lie inside what was written. */
void writer_patch_i32(struct writer *w, size_t pos, int32_t v);

#endif
