/* Records of a stored batch read and filtered for log compaction
 * (common/kafka/record_filter.h), in every codec. */
#include "common/kafka/record_filter.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rc.h"
#include "tests/lib/batch_builder.h"

#define NOW 1700000000000LL

static struct record_inflate *z;
static struct writer scratch;

static void setup(void)
{
    cr_assert_eq(record_inflate_new(&z), RC_OK);
    writer_init(&scratch, 256u << 20);
}

static void teardown(void)
{
    record_inflate_free(z);
    writer_free(&scratch);
}

TestSuite(record_filter, .init = setup, .fini = teardown);

static const struct {
    int codec;
    bool xerial;
} codecs[] = {{RECORD_CODEC_NONE, false}, {RECORD_CODEC_GZIP, false},
              {RECORD_CODEC_SNAPPY, false}, {RECORD_CODEC_SNAPPY, true},
              {RECORD_CODEC_LZ4, false},    {RECORD_CODEC_ZSTD, false}};

/* Ten records at offsets 100..109: key "k<i % 5>", value "v<i>", record 7
 * a tombstone, record 9 without a key. */
static struct built_batch ten(int codec, bool xerial, int64_t producer_id)
{
    struct writer w;
    writer_init(&w, 1 << 20);
    for (int32_t i = 0; i < 10; i++) {
        char key[8], value[8];
        int kl = snprintf(key, sizeof key, "k%d", i % 5);
        int vl = snprintf(value, sizeof value, "v%d", i);
        struct batch_record r = {
            .offset_delta = i, .timestamp_delta = i,
            .key = key, .key_len = i == 9 ? -1 : kl,
            .value = value, .value_len = i == 7 ? -1 : vl};
        batch_write_record(&w, &r);
    }
    struct batch_spec spec = {.codec = codec, .snappy_xerial = xerial,
                              .record_count = 10, .base_timestamp = NOW,
                              .max_timestamp = NOW + 9,
                              .producer_id = producer_id,
                              .base_sequence = producer_id >= 0 ? 0 : -1};
    struct built_batch b = batch_wrap(w.data, w.len, &spec);
    writer_free(&w);
    record_batch_set_base_offset(b.bytes, 100);
    return b;
}

struct seen {
    int n;
    int64_t offsets[16];
    char keys[16][8];
    bool tombstone[16];
    bool null_key[16];
    int64_t timestamps[16];
};

static bool keep_even(void *arg, const struct record_view *r)
{
    (void)arg;
    return r->offset % 2 == 0;
}

static bool keep_none(void *arg, const struct record_view *r)
{
    (void)arg;
    (void)r;
    return false;
}

static bool see_all(void *arg, const struct record_view *r)
{
    struct seen *s = arg;
    cr_assert_lt(s->n, 16);
    s->offsets[s->n] = r->offset;
    snprintf(s->keys[s->n], sizeof s->keys[0], "%.*s", (int)r->key.len,
             (const char *)r->key.ptr);
    s->tombstone[s->n] = r->null_value;
    s->null_key[s->n] = r->null_key;
    s->timestamps[s->n] = r->timestamp;
    s->n++;
    return true;
}

static struct record_batch_header header_of(const uint8_t *p, size_t len)
{
    struct record_batch_header h;
    cr_assert_eq(record_batch_validate(p, len, false, &h), RC_OK);
    return h;
}

Test(record_filter, reads_every_record_in_every_codec)
{
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        struct built_batch b = ten(codecs[c].codec, codecs[c].xerial, -1);
        struct record_batch_header h = header_of(b.bytes, b.len);
        struct seen s = {0};
        int32_t kept = 0;
        cr_assert_eq(record_filter(z, &scratch, b.bytes, b.len, &h, see_all,
                                   &s, false, NULL, &kept), RC_OK);
        cr_assert_eq(s.n, 10);
        cr_assert_eq(kept, 10);
        for (int i = 0; i < 10; i++) {
            cr_assert_eq(s.offsets[i], 100 + i);
            cr_assert_eq(s.timestamps[i], NOW + i);
        }
        cr_assert_str_eq(s.keys[3], "k3");
        cr_assert(s.tombstone[7] && !s.tombstone[6]);
        cr_assert(s.null_key[9] && !s.null_key[8]);
        built_batch_free(&b);
    }
}

Test(record_filter, kept_records_keep_their_offsets_in_a_valid_batch)
{
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        struct built_batch b = ten(codecs[c].codec, codecs[c].xerial, -1);
        struct record_batch_header h = header_of(b.bytes, b.len);
        struct writer out;
        writer_init(&out, 1 << 20);
        int32_t kept = 0;
        cr_assert_eq(record_filter(z, &scratch, b.bytes, b.len, &h,
                                   keep_even, NULL, false, &out, &kept),
                     RC_OK);
        cr_assert_eq(kept, 5);
        struct record_batch_header nh = header_of(out.data, out.len);
        cr_assert_eq(nh.record_count, 5);
        cr_assert_eq(nh.base_offset, 100);
        cr_assert_eq(nh.last_offset_delta, 9, "still spans 100..109");
        cr_assert_eq(nh.attributes & RECORD_BATCH_ATTR_CODEC_MASK, 0);
        cr_assert_eq(nh.max_timestamp, NOW + 8, "the kept records' largest");
        cr_assert_eq(nh.base_timestamp, NOW);
        cr_assert(record_batch_crc_ok(out.data, &nh));
        struct seen s = {0};
        cr_assert_eq(record_filter(z, &scratch, out.data, out.len, &nh,
                                   see_all, &s, false, NULL, &kept), RC_OK);
        cr_assert_eq(s.n, 5);
        for (int i = 0; i < 5; i++) {
            cr_assert_eq(s.offsets[i], 100 + 2 * i);
        }
        writer_free(&out);
        built_batch_free(&b);
    }
}

Test(record_filter, nothing_kept_writes_nothing_unless_the_last_must_stay)
{
    struct built_batch b = ten(RECORD_CODEC_LZ4, false, 42);
    struct record_batch_header h = header_of(b.bytes, b.len);
    struct writer out;
    writer_init(&out, 1 << 20);
    writer_raw(&out, "x", 1); /* what was there before stays */
    int32_t kept = 0;
    cr_assert_eq(record_filter(z, &scratch, b.bytes, b.len, &h, keep_none,
                               NULL, false, &out, &kept), RC_OK);
    cr_assert_eq(kept, 0);
    cr_assert_eq(out.len, 1);
    cr_assert_eq(record_filter(z, &scratch, b.bytes, b.len, &h, keep_none,
                               NULL, true, &out, &kept), RC_OK);
    cr_assert_eq(kept, 1, "an idempotent producer's last record stays");
    struct record_batch_header nh = header_of(out.data + 1, out.len - 1);
    cr_assert_eq(nh.producer_id, 42);
    cr_assert_eq(nh.base_sequence, 0);
    cr_assert_eq(nh.record_count, 1);
    struct seen s = {0};
    cr_assert_eq(record_filter(z, &scratch, out.data + 1, out.len - 1, &nh,
                               see_all, &s, false, NULL, &kept), RC_OK);
    cr_assert_eq(s.offsets[0], 109);
    writer_free(&out);
    built_batch_free(&b);
}

Test(record_filter, records_that_do_not_parse_are_refused)
{
    struct built_batch b = ten(RECORD_CODEC_NONE, false, -1);
    struct record_batch_header h = header_of(b.bytes, b.len);
    h.record_count = 11; /* one more than there is */
    int32_t kept = 0;
    struct writer out;
    writer_init(&out, 1 << 20);
    cr_assert_eq(record_filter(z, &scratch, b.bytes, b.len, &h, keep_even,
                               NULL, false, &out, &kept), RC_MALFORMED);
    cr_assert_eq(out.len, 0, "nothing written for a bad batch");
    h.record_count = 9; /* one left over */
    cr_assert_eq(record_filter(z, &scratch, b.bytes, b.len, &h, keep_even,
                               NULL, false, &out, &kept), RC_MALFORMED);
    writer_free(&out);
    built_batch_free(&b);
}

static bool keep_all(void *arg, const struct record_view *r)
{
    (void)arg, (void)r;
    return true;
}

/* A batch that keeps every record is written back as it was, compressed
 * if it was (Kafka keeps such a batch whole), not re-encoded. */
Test(record_filter, a_batch_keeping_every_record_stays_as_it_was)
{
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        struct built_batch b = ten(codecs[c].codec, codecs[c].xerial, -1);
        struct record_batch_header h = header_of(b.bytes, b.len);
        struct writer out;
        writer_init(&out, 1 << 20);
        writer_raw(&out, "x", 1); /* what came before stays */
        int32_t kept = 0;
        cr_assert_eq(record_filter(z, &scratch, b.bytes, b.len, &h, keep_all,
                                   NULL, false, &out, &kept),
                     RC_OK);
        cr_assert_eq(kept, 10);
        cr_assert_eq(out.len, 1 + b.len, "codec %d", codecs[c].codec);
        cr_assert_eq(memcmp(out.data + 1, b.bytes, b.len), 0,
                     "codec %d: the same bytes", codecs[c].codec);
        writer_free(&out);
        built_batch_free(&b);
    }
}
