/* Test helper: expected bytes built by hand, without the writer under
 * test, as Kafka lays them out (big-endian integers, int16-length
 * strings). A struct bb starts as {.n = 0}; overflowing its buffer is a
 * test's own bug and fails an ASSERT. Plain C (no Criterion) so the
 * benchmarks can link it too. */
#ifndef CAIRN_TESTS_BYTE_BUILDER_H
#define CAIRN_TESTS_BYTE_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#define BB_BYTES_MAX 8192u

struct bb {
    uint8_t b[BB_BYTES_MAX];
    size_t n;
};

void bb_u8(struct bb *x, uint8_t v);
/* The low `bytes` bytes of v, most significant first. */
void bb_be(struct bb *x, uint64_t v, int bytes);
void bb_i8(struct bb *x, int8_t v);
void bb_i16(struct bb *x, int16_t v);
void bb_i32(struct bb *x, int32_t v);
void bb_i64(struct bb *x, int64_t v);
void bb_raw(struct bb *x, const uint8_t *p, size_t n);
/* int16 length then the bytes; NULL is the null string, length -1. */
void bb_str(struct bb *x, const char *s);

#endif
