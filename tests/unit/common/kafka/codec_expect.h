/* Shared by the Kafka codec tests (Criterion only, so not in tests/lib,
 * which the benchmarks also link): compare a writer's bytes with expected
 * bytes built by hand, and copy input into an exactly-sized buffer so that
 * ASan catches a decoder reading one byte past it. */
#ifndef CAIRN_TESTS_UNIT_BROKER_CODEC_EXPECT_H
#define CAIRN_TESTS_UNIT_BROKER_CODEC_EXPECT_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/rc.h"
#include "common/writer.h"
#include "tests/lib/byte_builder.h"

static inline void expect_bytes(const struct writer *w, const struct bb *x)
{
    cr_assert_eq(w->rc, RC_OK);
    size_t n = w->len < x->n ? w->len : x->n;
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(w->data[i], x->b[i],
                     "byte %zu: got %02x, want %02x", i, w->data[i],
                     x->b[i]);
    }
    cr_assert_eq(w->len, x->n, "length: got %zu, want %zu", w->len, x->n);
}

static inline uint8_t *exact_copy(const void *p, size_t n)
{
    uint8_t *buf = malloc(n > 0 ? n : 1);
    cr_assert_not_null(buf);
    if (n > 0) {
        memcpy(buf, p, n);
    }
    return buf;
}

#endif
