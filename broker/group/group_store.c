/* __consumer_offsets records (broker/group/group_store.h). */
#include "broker/group/group_store.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"
#include "common/kafka/record_batch.h"
#include "common/bytes.h"
#include "common/crc32c.h"
#include "common/rc.h"
#include "common/reader.h"

#define GROUP_STORE__KEY_OFFSET 1
#define GROUP_STORE__KEY_GROUP 2
#define GROUP_STORE__VALUE_OFFSET 3
#define GROUP_STORE__VALUE_GROUP 3

/* Next UTF-16 code unit count and value of the UTF-8 sequence at p;
 * invalid bytes count as one unit each (U+FFFD), as Java decodes them. */
static size_t utf8_next(const uint8_t *p, size_t len, uint32_t *cp)
{
    uint8_t b = p[0];
    size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3
                          : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || n > len) {
        *cp = 0xFFFD;
        return 1;
    }
    uint32_t c = n == 1 ? b : b & (0x7Fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        c = (c << 6) | (p[i] & 0x3Fu);
    }
    *cp = c;
    return n;
}

int32_t group_store_partition_for(const uint8_t *group, size_t len,
                                  int32_t n_partitions)
{
    ASSERT(n_partitions > 0);
    uint32_t h = 0; /* Java int arithmetic, wrapping */
    for (size_t i = 0; i < len;) {
        uint32_t cp = 0;
        i += utf8_next(group + i, len - i, &cp);
        if (cp >= 0x10000) { /* a surrogate pair */
            cp -= 0x10000;
            h = h * 31u + (0xD800u + (cp >> 10));
            h = h * 31u + (0xDC00u + (cp & 0x3FFu));
        } else {
            h = h * 31u + cp;
        }
    }
    int64_t v = (int32_t)h;
    v = v == INT32_MIN ? 0 : v < 0 ? -v : v;
    return (int32_t)(v % n_partitions);
}

/* --- Writing ------------------------------------------------------------- */

static void put_key(struct writer *w, struct slice group,
                    const struct group_store_offset *o)
{
    writer_i16(w, GROUP_STORE__KEY_OFFSET);
    writer_string_slice(w, group);
    writer_string_slice(w, o->topic);
    writer_i32(w, o->partition);
}

static void put_value(struct writer *w, const struct group_store_offset *o,
                      int64_t now_ms)
{
    writer_i16(w, GROUP_STORE__VALUE_OFFSET);
    writer_i64(w, o->offset);
    writer_i32(w, o->leader_epoch);
    writer_string(w, o->metadata.ptr != NULL ? (const char *)o->metadata.ptr
                                             : "",
                  o->metadata.ptr != NULL ? o->metadata.len : 0);
    writer_i64(w, now_ms);
}

/* A record batch being written: its header, then records. */
struct batch_at {
    size_t start;
    size_t len_at;
    size_t crc_at;
};

static struct batch_at batch_begin(struct writer *w, size_t n,
                                   int64_t now_ms)
{
    struct batch_at b = {.start = w->len};
    writer_i64(w, 0);                    /* baseOffset, set by the log */
    b.len_at = writer_reserve(w, 4);
    writer_i32(w, -1);                   /* partitionLeaderEpoch */
    writer_i8(w, RECORD_BATCH_MAGIC);
    b.crc_at = writer_reserve(w, 4);
    writer_i16(w, 0);                    /* attributes: none */
    writer_i32(w, (int32_t)n - 1);       /* lastOffsetDelta */
    writer_i64(w, now_ms);
    writer_i64(w, now_ms);
    writer_i64(w, -1);                   /* producerId */
    writer_i16(w, -1);
    writer_i32(w, -1);
    writer_i32(w, (int32_t)n);
    return b;
}

/* Record i of the batch: kv holds its key (key_len bytes) then its value
 * (none for a tombstone). */
static void batch_record(struct writer *w, const struct writer *kv,
                         int32_t i, size_t key_len, bool tombstone)
{
    size_t val_len = kv->len - key_len;
    int32_t vlen = tombstone ? -1 : (int32_t)val_len;
    int32_t body = (int32_t)(1 + writer_varlong_size(0) +
                             writer_varint_size(i) +
                             writer_varint_size((int32_t)key_len) + key_len +
                             writer_varint_size(vlen) + val_len +
                             writer_varint_size(0));
    writer_varint(w, body);
    writer_i8(w, 0);                     /* record attributes */
    writer_varlong(w, 0);                /* timestampDelta */
    writer_varint(w, i);                 /* offsetDelta */
    writer_varint(w, (int32_t)key_len);
    writer_raw(w, kv->data, key_len);
    writer_varint(w, vlen);
    writer_raw(w, kv->data + key_len, val_len);
    writer_varint(w, 0);                 /* headers */
}

static int batch_end(struct writer *w, struct batch_at b)
{
    if (w->rc != RC_OK) {
        return w->rc;
    }
    if (w->len - b.start - 12 > INT32_MAX) {
        return RC_TOO_LARGE;
    }
    writer_patch_i32(w, b.len_at, (int32_t)(w->len - b.start - 12));
    uint32_t crc = crc32c(w->data + b.crc_at + 4, w->len - b.crc_at - 4);
    bytes_put_be32(w->data + b.crc_at, crc);
    return RC_OK;
}

int group_store_encode(struct writer *w, struct slice group,
                       const struct group_store_offset *offs, size_t n,
                       int64_t now_ms)
{
    ASSERT(n >= 1 && n <= INT32_MAX);
    struct batch_at b = batch_begin(w, n, now_ms);
    struct writer kv;
    writer_init(&kv, w->max);
    for (size_t i = 0; i < n && w->rc == RC_OK; i++) {
        writer_reset(&kv);
        put_key(&kv, group, &offs[i]);
        size_t key_len = kv.len;
        if (!offs[i].tombstone) {
            put_value(&kv, &offs[i], now_ms);
        }
        if (kv.rc != RC_OK) {
            w->rc = kv.rc;
            break;
        }
        batch_record(w, &kv, (int32_t)i, key_len, offs[i].tombstone);
    }
    writer_free(&kv);
    return batch_end(w, b);
}

static void put_group_value(struct writer *w, const struct group *g,
                            int64_t state_ms)
{
    writer_i16(w, GROUP_STORE__VALUE_GROUP);
    struct slice type = group_summary_protocol_type(g);
    writer_string_slice(w, type);
    writer_i32(w, g->generation_id);
    bool members = g->state == GROUP_STATE_STABLE && g->n_members > 0;
    writer_nullable_string_slice(w, members ? g->protocol_name
                                            : slice_null());
    writer_nullable_string_slice(w, members ? g->leader->member_id
                                            : slice_null());
    writer_i64(w, state_ms);
    writer_i32(w, members ? (int32_t)g->n_members : 0);
    for (size_t i = 0; members && i < g->n_members; i++) {
        struct group_member_summary sm;
        group_summary_member(g, i, &sm);
        writer_string_slice(w, sm.member_id);
        writer_nullable_string_slice(w, sm.group_instance_id);
        writer_string_slice(w, sm.client_id);
        writer_string_slice(w, sm.client_host);
        writer_i32(w, g->members[i]->rebalance_timeout_ms);
        writer_i32(w, g->members[i]->session_timeout_ms);
        writer_bytes_slice(w, sm.metadata);
        writer_bytes_slice(w, sm.assignment);
    }
}

int group_store_encode_group(struct writer *w, const struct group *g,
                             bool gone, int64_t now_ms, int64_t state_ms)
{
    struct batch_at b = batch_begin(w, 1, now_ms);
    struct writer kv;
    writer_init(&kv, w->max);
    writer_i16(&kv, GROUP_STORE__KEY_GROUP);
    writer_string_slice(&kv, g->id);
    size_t key_len = kv.len;
    if (!gone) {
        put_group_value(&kv, g, state_ms);
    }
    if (kv.rc != RC_OK) {
        w->rc = kv.rc;
    } else {
        batch_record(w, &kv, 0, key_len, gone);
    }
    writer_free(&kv);
    return batch_end(w, b);
}

/* --- Reading ------------------------------------------------------------- */

/* Bytes of the smallest member of a GroupMetadataValue (v0: three empty
 * strings, one int32 and two empty bytes): bounds the count read before
 * allocating. */
#define GROUP_STORE__MEMBER_BYTES_MIN 18u

/* Decodes a GroupMetadataValue into m (members allocated into *out);
 * RC_MALFORMED, RC_NOT_FOUND for a version this does not read, RC_NOMEM. */
static int group_value_decode(struct slice value, struct group_load_meta *m,
                              struct group_load_member **out)
{
    struct reader r;
    reader_init(&r, value.ptr, value.len);
    int16_t ver = reader_i16(&r);
    if (r.rc == RC_OK && (ver < 0 || ver > 3)) {
        return RC_NOT_FOUND;
    }
    *m = (struct group_load_meta){.state_ms = -1};
    m->protocol_type = reader_string(&r);
    m->generation_id = reader_i32(&r);
    m->protocol_name = reader_nullable_string(&r);
    m->leader = reader_nullable_string(&r);
    if (ver >= 2) {
        m->state_ms = reader_i64(&r);
    }
    int32_t n = reader_i32(&r);
    if (r.rc != RC_OK || n < 0 ||
        (size_t)n > reader_remaining(&r) / GROUP_STORE__MEMBER_BYTES_MIN) {
        return RC_MALFORMED;
    }
    struct group_load_member *ms = n > 0 ? calloc((size_t)n, sizeof *ms)
                                         : NULL;
    if (n > 0 && ms == NULL) {
        return RC_NOMEM;
    }
    for (int32_t i = 0; i < n && r.rc == RC_OK; i++) {
        struct group_load_member *lm = &ms[i];
        lm->member_id = reader_string(&r);
        lm->group_instance_id = ver >= 3 ? reader_nullable_string(&r)
                                         : slice_null();
        lm->client_id = reader_string(&r);
        lm->client_host = reader_string(&r);
        lm->rebalance_timeout_ms = ver >= 1 ? reader_i32(&r) : -1;
        lm->session_timeout_ms = reader_i32(&r);
        if (ver == 0) {
            lm->rebalance_timeout_ms = lm->session_timeout_ms;
        }
        lm->subscription = reader_bytes(&r);
        lm->assignment = reader_bytes(&r);
    }
    if (r.rc != RC_OK) {
        free(ms);
        return RC_MALFORMED;
    }
    m->members = ms;
    m->n_members = (size_t)n;
    *out = ms;
    return RC_OK;
}

static void replay_group(struct group_store_record *rec, struct slice value,
                         group_store_record_cb cb, void *arg)
{
    struct group_load_meta m;
    struct group_load_member *ms = NULL;
    if (group_value_decode(value, &m, &ms) == RC_OK) {
        rec->meta = &m;
    }
    cb(arg, rec);
    free(ms);
}

static void replay_record(struct slice key, struct slice value, bool null_value,
                          group_store_record_cb cb, void *arg)
{
    struct reader k;
    reader_init(&k, key.ptr, key.len);
    int16_t kver = reader_i16(&k);
    struct group_store_record rec = {.tombstone = null_value};
    if (kver == 0 || kver == GROUP_STORE__KEY_OFFSET) {
        rec.is_offset = true;
        rec.group = reader_string(&k);
        rec.offset.topic = reader_string(&k);
        rec.offset.partition = reader_i32(&k);
        rec.offset.tombstone = null_value;
        rec.offset.leader_epoch = -1;
    } else if (kver == GROUP_STORE__KEY_GROUP) {
        rec.group = reader_string(&k);
        if (k.rc == RC_OK && reader_remaining(&k) == 0 && !null_value) {
            replay_group(&rec, value, cb, arg);
            return;
        }
    } else {
        return; /* a record kind this version does not know */
    }
    if (k.rc != RC_OK || reader_remaining(&k) != 0) {
        return;
    }
    if (rec.is_offset && !null_value) {
        struct reader v;
        reader_init(&v, value.ptr, value.len);
        int16_t vver = reader_i16(&v);
        rec.offset.offset = reader_i64(&v);
        if (vver >= 3) {
            rec.offset.leader_epoch = reader_i32(&v);
        }
        rec.offset.metadata = reader_string(&v);
        rec.commit_ms = reader_i64(&v);
        if (v.rc != RC_OK || vver < 0 || vver > 4) {
            return;
        }
    }
    cb(arg, &rec);
}

static int replay_batch(const uint8_t *p, size_t len,
                        const struct record_batch_header *h,
                        group_store_record_cb cb, void *arg)
{
    if ((h->attributes & RECORD_BATCH_ATTR_CODEC_MASK) != 0 ||
        (h->attributes & RECORD_BATCH_ATTR_CONTROL) != 0) {
        return RC_OK; /* never written by Cairn */
    }
    struct reader r;
    reader_init(&r, p + 61, len - 61);
    for (int32_t i = 0; i < h->record_count && r.rc == RC_OK; i++) {
        int32_t body = reader_varint(&r);
        if (body < 0 || (size_t)body > reader_remaining(&r)) {
            return RC_MALFORMED;
        }
        struct reader rec;
        struct slice all = reader_raw(&r, (size_t)body);
        reader_init(&rec, all.ptr, all.len);
        (void)reader_i8(&rec);
        (void)reader_varlong(&rec);
        (void)reader_varint(&rec);
        int32_t klen = reader_varint(&rec);
        struct slice key = klen >= 0 ? reader_raw(&rec, (size_t)klen)
                                     : (struct slice){0};
        int32_t vlen = reader_varint(&rec);
        struct slice value = vlen >= 0 ? reader_raw(&rec, (size_t)vlen)
                                       : (struct slice){0};
        if (rec.rc != RC_OK || klen < 0) {
            return RC_MALFORMED;
        }
        replay_record(key, value, vlen < 0, cb, arg);
    }
    return r.rc == RC_OK ? RC_OK : RC_MALFORMED;
}

int group_store_replay(const uint8_t *buf, size_t len,
                       group_store_record_cb cb, void *arg)
{
    size_t at = 0;
    while (at < len) {
        struct record_batch_header h;
        int rv = record_batch_parse(buf + at, len - at, &h);
        if (rv != RC_OK) {
            return rv == RC_SHORT ? RC_OK : rv; /* a partial batch at the end */
        }
        size_t size = (size_t)record_batch_size(&h);
        if (size > len - at) {
            return RC_OK;
        }
        rv = replay_batch(buf + at, size, &h, cb, arg);
        if (rv != RC_OK) {
            return rv;
        }
        at += size;
    }
    return RC_OK;
}

int group_store_load_step(struct log *l, int64_t *offset, int64_t end,
                          size_t max_bytes, group_store_record_cb cb,
                          void *arg, size_t *bytes)
{
    if (bytes != NULL) {
        *bytes = 0;
    }
    if (*offset < log_start_offset(l)) {
        *offset = log_start_offset(l); /* deleted below: nothing to read */
    }
    if (*offset >= end) {
        return RC_OK;
    }
    struct log_span span;
    int rv = log_read(l, *offset, (int64_t)max_bytes, end, &span);
    if (rv != RC_OK) {
        return rv;
    }
    if (span.bytes == 0) {
        log_span_release(&span);
        *offset = end; /* nothing readable below end */
        return RC_OK;
    }
    size_t want = (size_t)span.bytes;
    uint8_t *buf = malloc(want);
    if (buf == NULL) {
        log_span_release(&span);
        return RC_NOMEM;
    }
    ssize_t got = io_pread(span.fd, buf, want, span.position);
    log_span_release(&span);
    if (got < 0 || (size_t)got != want) {
        free(buf);
        return RC_IO;
    }
    /* Advance past the last whole batch of the span. */
    int64_t next = *offset;
    size_t whole = 0;
    while (whole < (size_t)got) {
        struct record_batch_header h;
        if (record_batch_parse(buf + whole, (size_t)got - whole, &h) !=
                RC_OK ||
            (size_t)record_batch_size(&h) > (size_t)got - whole) {
            break;
        }
        next = record_batch_last_offset(&h) + 1;
        whole += (size_t)record_batch_size(&h);
    }
    rv = group_store_replay(buf, whole, cb, arg);
    free(buf);
    if (rv == RC_OK && next <= *offset) {
        rv = RC_MALFORMED; /* not even one whole batch: a damaged log */
    }
    if (rv == RC_OK) {
        *offset = next;
        if (bytes != NULL) {
            *bytes = whole;
        }
    }
    return rv;
}
