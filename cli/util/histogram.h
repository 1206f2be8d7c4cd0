/* A latency histogram in fixed memory: log-linear buckets as in
 * HdrHistogram (128 sub-buckets per power of two), so every value from 0
 * to INT64_MAX is counted with a relative error under 1/128 and nothing
 * is allocated. Percentiles report a bucket's midpoint, except the
 * maximum, kept exactly. One thread. */
#ifndef CAIRN_CLI_HISTOGRAM_H
#define CAIRN_CLI_HISTOGRAM_H

#include <stdint.h>

#define HISTOGRAM_SUB_BITS 7
#define HISTOGRAM_SUB (1 << HISTOGRAM_SUB_BITS)

/* Values below HISTOGRAM_SUB have a bucket each; above, each power of two
 * from 2^HISTOGRAM_SUB_BITS to 2^63 has HISTOGRAM_SUB / 2. */
#define HISTOGRAM_BUCKETS                                                    \
    (HISTOGRAM_SUB + (64 - HISTOGRAM_SUB_BITS) * (HISTOGRAM_SUB / 2))

struct histogram {
    uint64_t counts[HISTOGRAM_BUCKETS];
    uint64_t total;
    int64_t max;
};

void histogram_init(struct histogram *h);

/* Counts value (negative values, a clock's hiccup, count as 0). */
void histogram_add(struct histogram *h, int64_t value);

/* The value at percentile p (0 < p <= 100): the smallest bucket that
 * holds at least p% of the values; the exact maximum for 100; 0 when
 * empty. */
int64_t histogram_percentile(const struct histogram *h, double p);

#endif
