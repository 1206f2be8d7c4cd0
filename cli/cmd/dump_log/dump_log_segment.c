/* `cairn dump-log`: one segment file, batch by batch
 * (cli/cmd/dump_log/dump_log_internal.h). Reads a header, checks its
 * length against the file before reading the batch, checks the CRC-32C
 * before walking the records; the first bytes that do not frame a batch
 * end the walk, reported with their position. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd/dump_log/dump_log_internal.h"
#include "common/kafka/record_batch.h"
#include "common/kafka/record_filter.h"
#include "common/kafka/record_inflate.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/writer.h"

/* A segment being read. */
struct seg {
    struct dump_log *d;
    int fd;
    int64_t size;
    uint8_t *buf; /* one batch */
    size_t cap;
    struct record_inflate *z; /* with --records, created on first use */
    struct writer scratch;    /* decompressed records */
    int64_t n_batches;
    int64_t n_records;
    int64_t next_offset; /* after the last batch, -1 before the first */
    int64_t tail_pos;    /* where the walk ended early, -1 if it did not */
    const char *tail_problem;
    char tail_detail[160];
};

static const char *codec_name(int codec)
{
    static const char *const names[] = {"none", "gzip", "snappy", "lz4",
                                        "zstd"};
    return codec >= 0 && codec <= RECORD_CODEC_ZSTD ? names[codec]
                                                    : "unknown";
}

/* Reads len bytes at pos whole; false on a short read or an error. */
static bool read_at(int fd, void *buf, size_t len, int64_t pos)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, (uint8_t *)buf + done, len - done,
                          (off_t)pos + (off_t)done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        done += (size_t)n;
    }
    return true;
}

/* The bytes at pos end the walk: noted, and shown after the batches. */
static void report_tail(struct seg *s, int64_t pos, const char *problem,
                        const char *detail)
{
    dump_log_problem(s->d);
    s->tail_pos = pos;
    s->tail_problem = problem;
    snprintf(s->tail_detail, sizeof s->tail_detail, "%s", detail);
}

static void batch_json(struct json *j, int64_t pos,
                       const struct record_batch_header *h, bool crc_ok)
{
    json_key(j, "position");
    json_int(j, pos);
    json_key(j, "base_offset");
    json_int(j, h->base_offset);
    json_key(j, "last_offset");
    json_int(j, record_batch_last_offset(h));
    json_key(j, "count");
    json_int(j, h->record_count);
    json_key(j, "leader_epoch");
    json_int(j, h->partition_leader_epoch);
    json_key(j, "magic");
    json_int(j, h->magic);
    json_key(j, "attributes");
    json_int(j, h->attributes);
    json_key(j, "codec");
    json_string(j, codec_name(h->attributes & RECORD_BATCH_ATTR_CODEC_MASK));
    json_key(j, "log_append_time");
    json_bool(j, (h->attributes & RECORD_BATCH_ATTR_LOG_APPEND_TIME) != 0);
    json_key(j, "transactional");
    json_bool(j, (h->attributes & RECORD_BATCH_ATTR_TRANSACTIONAL) != 0);
    json_key(j, "control");
    json_bool(j, (h->attributes & RECORD_BATCH_ATTR_CONTROL) != 0);
    json_key(j, "producer_id");
    json_int(j, h->producer_id);
    json_key(j, "producer_epoch");
    json_int(j, h->producer_epoch);
    json_key(j, "base_sequence");
    json_int(j, h->base_sequence);
    json_key(j, "first_timestamp");
    json_int(j, h->base_timestamp);
    json_key(j, "max_timestamp");
    json_int(j, h->max_timestamp);
    json_key(j, "size");
    json_int(j, record_batch_size(h));
    json_key(j, "crc_valid");
    json_bool(j, crc_ok);
}

static void batch_text(FILE *out, int64_t pos,
                       const struct record_batch_header *h, bool crc_ok)
{
    int a = h->attributes;
    fprintf(out,
            "  position=%" PRId64 " base_offset=%" PRId64
            " last_offset=%" PRId64 " count=%" PRId32 " leader_epoch=%" PRId32
            " magic=%d codec=%s timestamp_type=%s transactional=%s"
            " control=%s producer_id=%" PRId64 " producer_epoch=%d"
            " base_sequence=%" PRId32 " first_timestamp=%" PRId64
            " max_timestamp=%" PRId64 " size=%" PRId64 " %s\n",
            pos, h->base_offset, record_batch_last_offset(h), h->record_count,
            h->partition_leader_epoch, h->magic,
            codec_name(a & RECORD_BATCH_ATTR_CODEC_MASK),
            (a & RECORD_BATCH_ATTR_LOG_APPEND_TIME) ? "log_append" : "create",
            (a & RECORD_BATCH_ATTR_TRANSACTIONAL) ? "true" : "false",
            (a & RECORD_BATCH_ATTR_CONTROL) ? "true" : "false",
            h->producer_id, h->producer_epoch, h->base_sequence,
            h->base_timestamp, h->max_timestamp, record_batch_size(h),
            crc_ok ? "crc valid" : "CRC MISMATCH");
}

/* One record: a line, or an object of the batch's "records". */
static bool record_cb(void *arg, const struct record_view *r)
{
    struct seg *s = arg;
    struct dump_log *d = s->d;
    size_t show = (size_t)d->opts->show_bytes;
    char key[DUMP_LOG_SHOW_BYTES_MAX + 4];
    char value[DUMP_LOG_SHOW_BYTES_MAX + 4];
    dump_log_printable(r->key.ptr, r->key.len, show, key, sizeof key);
    dump_log_printable(r->value.ptr, r->value.len, show, value, sizeof value);
    s->n_records++;
    if (!d->opts->json) {
        fprintf(d->out,
                "    | offset=%" PRId64 " timestamp=%" PRId64
                " key_size=%zu value_size=%zu key=%s%s%s value=%s%s%s\n",
                r->offset, r->timestamp, r->key.len, r->value.len,
                r->null_key ? "" : "\"", r->null_key ? "null" : key,
                r->null_key ? "" : "\"", r->null_value ? "" : "\"",
                r->null_value ? "null" : value, r->null_value ? "" : "\"");
        return true;
    }
    json_object_begin(&d->json);
    json_key(&d->json, "offset");
    json_int(&d->json, r->offset);
    json_key(&d->json, "timestamp");
    json_int(&d->json, r->timestamp);
    json_key(&d->json, "key");
    if (r->null_key) {
        json_null(&d->json);
    } else {
        json_string(&d->json, key);
    }
    json_key(&d->json, "value");
    if (r->null_value) {
        json_null(&d->json);
    } else {
        json_string(&d->json, value);
    }
    json_object_end(&d->json);
    return true;
}

/* The records of a batch whose CRC is good, decompressed if need be. */
static void batch_records(struct seg *s, const struct record_batch_header *h)
{
    struct dump_log *d = s->d;
    int rv = s->z == NULL ? record_inflate_new(&s->z) : RC_OK;
    if (d->opts->json) {
        json_key(&d->json, "records");
        json_array_begin(&d->json);
    }
    int32_t kept = 0;
    if (rv == RC_OK) {
        rv = record_filter(s->z, &s->scratch, s->buf,
                           (size_t)record_batch_size(h), h, record_cb, s,
                           false /* keep_last */, NULL, &kept);
    }
    if (d->opts->json) {
        json_array_end(&d->json);
    }
    if (rv == RC_OK) {
        return;
    }
    dump_log_problem(d);
    if (d->opts->json) {
        json_key(&d->json, "records_error");
        json_string(&d->json, rc_str(rv));
        return;
    }
    fprintf(d->out, "    RECORDS UNREADABLE after %" PRId32 ": %s\n", kept,
            rc_str(rv));
}

/* The batch of h at pos, read whole into s->buf. */
static void batch_dump(struct seg *s, int64_t pos,
                       const struct record_batch_header *h)
{
    struct dump_log *d = s->d;
    bool crc_ok = record_batch_crc_ok(s->buf, h);
    bool counts_ok = record_batch_check_counts(h, false) == RC_OK;
    bool backwards = s->next_offset >= 0 && h->base_offset < s->next_offset;
    if (!crc_ok || !counts_ok || backwards) {
        dump_log_problem(d);
    }
    if (d->opts->json) {
        json_object_begin(&d->json);
        batch_json(&d->json, pos, h, crc_ok);
        json_key(&d->json, "counts_valid");
        json_bool(&d->json, counts_ok);
        json_key(&d->json, "offsets_backwards");
        json_bool(&d->json, backwards);
    } else {
        batch_text(d->out, pos, h, crc_ok);
        if (!counts_ok) {
            fputs("    BAD COUNTS: recordCount and lastOffsetDelta "
                  "disagree\n",
                  d->out);
        }
        if (backwards) {
            fprintf(d->out,
                    "    OFFSETS BACKWARDS: the previous batch ended "
                    "before %" PRId64 "\n",
                    s->next_offset);
        }
    }
    if (d->opts->records && crc_ok) {
        batch_records(s, h);
    } else if (d->opts->records && !d->opts->json) {
        fputs("    (records not shown: the CRC does not match)\n", d->out);
    }
    if (d->opts->json) {
        json_object_end(&d->json);
    }
    s->n_batches++;
    s->next_offset = record_batch_last_offset(h) + 1;
}

/* Why the header at pos does not frame a batch. */
static void bad_header(struct seg *s, int64_t pos,
                       const struct record_batch_header *h)
{
    char detail[160];
    if (record_batch_size(h) < (int64_t)BATCH_HEADER_BYTES ||
        record_batch_size(h) > (int64_t)BATCH_BYTES_MAX) {
        snprintf(detail, sizeof detail,
                 "batchLength %" PRId32 " is outside %u..%u", h->batch_length,
                 (unsigned)(BATCH_HEADER_BYTES - RECORD_BATCH_LOG_OVERHEAD),
                 (unsigned)(BATCH_BYTES_MAX - RECORD_BATCH_LOG_OVERHEAD));
        report_tail(s, pos, "BAD LENGTH", detail);
        return;
    }
    snprintf(detail, sizeof detail, "magic %d, expected %d", h->magic,
             RECORD_BATCH_MAGIC);
    report_tail(s, pos, "BAD MAGIC", detail);
}

/* s->buf with room for size bytes (at most BATCH_BYTES_MAX). */
static bool reserve(struct seg *s, int64_t size)
{
    if ((size_t)size <= s->cap) {
        return true;
    }
    uint8_t *p = realloc(s->buf, (size_t)size);
    if (p == NULL) {
        return false;
    }
    s->buf = p;
    s->cap = (size_t)size;
    return true;
}

/* Reads and shows the batch at pos: its size, or 0 when the walk ends
 * there. */
static int64_t next_batch(struct seg *s, int64_t pos)
{
    char detail[160];
    int64_t left = s->size - pos;
    if (left < (int64_t)BATCH_HEADER_BYTES) {
        snprintf(detail, sizeof detail,
                 "%" PRId64 " bytes left, less than a batch header (%u)",
                 left, (unsigned)BATCH_HEADER_BYTES);
        report_tail(s, pos, "TRUNCATED", detail);
        return 0;
    }
    if (!read_at(s->fd, s->buf, BATCH_HEADER_BYTES, pos)) {
        report_tail(s, pos, "READ ERROR", strerror(errno));
        return 0;
    }
    struct record_batch_header h;
    if (record_batch_parse(s->buf, BATCH_HEADER_BYTES, &h) != RC_OK) {
        bad_header(s, pos, &h);
        return 0;
    }
    int64_t size = record_batch_size(&h); /* <= BATCH_BYTES_MAX */
    if (size > left) {
        snprintf(detail, sizeof detail,
                 "a batch of %" PRId64 " bytes, %" PRId64 " bytes left", size,
                 left);
        report_tail(s, pos, "TRUNCATED", detail);
        return 0;
    }
    if (!reserve(s, size)) {
        report_tail(s, pos, "OUT OF MEMORY", "for the batch");
        return 0;
    }
    if (!read_at(s->fd, s->buf + BATCH_HEADER_BYTES,
                 (size_t)size - BATCH_HEADER_BYTES,
                 pos + (int64_t)BATCH_HEADER_BYTES)) {
        report_tail(s, pos, "READ ERROR", strerror(errno));
        return 0;
    }
    batch_dump(s, pos, &h);
    return size;
}

static void segment_begin(struct dump_log *d, const char *path, int64_t base,
                          int64_t size)
{
    if (d->opts->json) {
        json_key(&d->json, "file");
        json_string(&d->json, path);
        json_key(&d->json, "base_offset");
        json_int_or_null(&d->json, base >= 0, base);
        json_key(&d->json, "bytes");
        json_int(&d->json, size);
        json_key(&d->json, "batches");
        json_array_begin(&d->json);
        return;
    }
    fprintf(d->out, "segment %s", path);
    if (base >= 0) {
        fprintf(d->out, " base_offset=%" PRId64, base);
    }
    fprintf(d->out, " bytes=%" PRId64 "\n", size);
}

/* The end of the walk: the tail if any, a summary; --json: closes the
 * batches and adds "tail" and the counts. */
static void segment_end(struct seg *s)
{
    struct dump_log *d = s->d;
    if (!d->opts->json) {
        if (s->tail_pos >= 0) {
            fprintf(d->out, "  position=%" PRId64 " %s: %s\n", s->tail_pos,
                    s->tail_problem, s->tail_detail);
        }
        fprintf(d->out, "  batches=%" PRId64, s->n_batches);
        if (d->opts->records) {
            fprintf(d->out, " records=%" PRId64, s->n_records);
        }
        fprintf(d->out, " next_offset=%" PRId64 "\n", s->next_offset);
        return;
    }
    json_array_end(&d->json);
    json_key(&d->json, "tail");
    if (s->tail_pos < 0) {
        json_null(&d->json);
    } else {
        json_object_begin(&d->json);
        json_key(&d->json, "position");
        json_int(&d->json, s->tail_pos);
        json_key(&d->json, "problem");
        json_string(&d->json, s->tail_problem);
        json_key(&d->json, "detail");
        json_string(&d->json, s->tail_detail);
        json_object_end(&d->json);
    }
    json_key(&d->json, "next_offset");
    json_int(&d->json, s->next_offset);
}

/* Opens path: RC_OK with s->fd and s->size, or the problem reported. */
static int segment_open(struct seg *s, const char *path)
{
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (s->fd >= 0 && fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode)) {
        s->size = (int64_t)st.st_size;
        return RC_OK;
    }
    int err = s->fd < 0 ? errno : EISDIR;
    dump_log_problem(s->d);
    if (s->fd >= 0) {
        close(s->fd);
    }
    if (s->d->opts->json) {
        json_key(&s->d->json, "file");
        json_string(&s->d->json, path);
        json_key(&s->d->json, "error");
        json_string(&s->d->json, strerror(err));
    } else {
        fprintf(s->d->out, "segment %s: CANNOT READ: %s\n", path,
                strerror(err));
    }
    return RC_IO;
}

void dump_log_segment(struct dump_log *d, const char *path, const char *dir,
                      int64_t base)
{
    struct seg s = {.d = d, .next_offset = -1, .tail_pos = -1};
    if (d->opts->json) {
        json_object_begin(&d->json);
    }
    if (segment_open(&s, path) == RC_OK) {
        s.cap = BATCH_HEADER_BYTES;
        s.buf = malloc(s.cap);
        writer_init(&s.scratch, RECORD_INFLATED_BYTES_MAX);
        segment_begin(d, path, base, s.size);
        int64_t pos = 0;
        int64_t n = 1;
        if (s.buf == NULL) {
            report_tail(&s, 0, "OUT OF MEMORY", "for a batch header");
            n = 0;
        }
        while (n > 0 && pos < s.size) {
            n = next_batch(&s, pos);
            pos += n;
        }
        segment_end(&s);
        if (dir != NULL && base >= 0) {
            dump_log_indexes(d, dir, base);
        }
        free(s.buf);
        writer_free(&s.scratch);
        record_inflate_free(s.z);
        close(s.fd);
    }
    if (d->opts->json) {
        json_object_end(&d->json);
    }
}
