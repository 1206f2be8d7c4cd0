/* Log-linear latency histogram (cli/util/histogram.h). */
#include "cli/util/histogram.h"

#include <string.h>

#include "common/assert.h"

#define HISTOGRAM__HALF (HISTOGRAM_SUB / 2)

_Static_assert(HISTOGRAM_BUCKETS < 4096, "the histogram stays small");

void histogram_init(struct histogram *h)
{
    memset(h, 0, sizeof *h);
}

/* Bucket of v: v itself below HISTOGRAM_SUB; above, the power of two
 * (shift e >= 1) and the top HISTOGRAM_SUB_BITS bits of v. */
static size_t bucket_of(uint64_t v)
{
    if (v < HISTOGRAM_SUB) {
        return (size_t)v;
    }
    int msb = 63 - __builtin_clzll(v);
    int e = msb - (HISTOGRAM_SUB_BITS - 1);
    ASSERT(e >= 1);
    uint64_t m = v >> e; /* in [HALF, SUB) */
    return (size_t)(HISTOGRAM_SUB + (e - 1) * HISTOGRAM__HALF) +
           (size_t)(m - HISTOGRAM__HALF);
}

/* The midpoint of bucket i's range. */
static int64_t bucket_value(size_t i)
{
    if (i < HISTOGRAM_SUB) {
        return (int64_t)i;
    }
    size_t e = (i - HISTOGRAM_SUB) / HISTOGRAM__HALF + 1;
    uint64_t m = (i - HISTOGRAM_SUB) % HISTOGRAM__HALF + HISTOGRAM__HALF;
    uint64_t low = m << e;
    return (int64_t)(low + ((1ull << e) - 1) / 2);
}

void histogram_add(struct histogram *h, int64_t value)
{
    uint64_t v = value > 0 ? (uint64_t)value : 0;
    size_t i = bucket_of(v);
    ASSERT(i < HISTOGRAM_BUCKETS);
    h->counts[i]++;
    h->total++;
    if ((int64_t)v > h->max) {
        h->max = (int64_t)v;
    }
}

int64_t histogram_percentile(const struct histogram *h, double p)
{
    ASSERT(p > 0 && p <= 100);
    if (h->total == 0) {
        return 0;
    }
    if (p >= 100) {
        return h->max;
    }
    double want = p / 100.0 * (double)h->total;
    uint64_t rank = (uint64_t)want;
    if ((double)rank < want || rank == 0) {
        rank++; /* ceil, without libm */
    }
    uint64_t seen = 0;
    for (size_t i = 0; i < HISTOGRAM_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            int64_t v = bucket_value(i);
            return v < h->max ? v : h->max;
        }
    }
    return h->max;
}
