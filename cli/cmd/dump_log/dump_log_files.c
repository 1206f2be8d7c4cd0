/* `cairn dump-log`: a partition's files other than segments
 * (cli/cmd/dump_log/dump_log_internal.h): the leader-epoch checkpoint,
 * the log dir's high-watermark checkpoint, the producer-state snapshot,
 * and the sanity of the index files. Each is read whole within a bound
 * and shown only once its checksum and format check out; otherwise it is
 * named as corrupt. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd/dump_log/dump_log_internal.h"
#include "common/bytes.h"
#include "common/checkpoint_text.h"
#include "common/crc32c.h"
#include "common/file.h"
#include "common/limits.h"
#include "common/log_layout.h"
#include "common/rc.h"
#include "common/reader.h"

/* Epoch checkpoint entries shown; the rest are counted. */
#define DUMP_LOG__EPOCHS_SHOWN_MAX 4096u
/* Largest text checkpoint read (a log dir's HW file lists every
 * partition of the dir; the epoch file at most LOG_EPOCH_ENTRIES_MAX). */
#define DUMP_LOG__TEXT_BYTES_MAX (64u * 1024 * 1024)

void dump_log_problem(struct dump_log *d)
{
    d->problems++;
}

void dump_log_printable(const uint8_t *s, size_t len, size_t show, char *out,
                        size_t cap)
{
    ASSERT(cap >= 4);
    size_t n = len < show ? len : show;
    if (n > cap - 4) {
        n = cap - 4;
    }
    for (size_t i = 0; i < n; i++) {
        out[i] =
            s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' ? (char)s[i] : '.';
    }
    out[n] = '\0';
    if (n < len) {
        memcpy(out + n, "...", 4);
    }
}

/* Reads dir/name, a checked text file, into a fresh *text (freed by the
 * caller): RC_OK, RC_NOT_FOUND, RC_CORRUPT (checksum, cut, too large),
 * RC_IO, RC_NOMEM. */
static int read_text(const char *dir, const char *name, char **text)
{
    *text = NULL;
    for (size_t size = 64u * 1024;; size *= 4) {
        char *buf = malloc(size);
        if (buf == NULL) {
            return RC_NOMEM;
        }
        size_t len = 0;
        bool unchecked = false;
        int rv = file_read_checked(dir, name, buf, size, &len, &unchecked);
        if (rv == RC_TOO_LARGE && size < DUMP_LOG__TEXT_BYTES_MAX) {
            free(buf);
            continue;
        }
        if (rv != RC_OK) {
            free(buf);
            return rv == RC_TOO_LARGE ? RC_CORRUPT : rv;
        }
        *text = buf;
        return RC_OK;
    }
}

/* "missing", "CORRUPT" or "unreadable" for a failed read, counted as a
 * problem but for a missing file. */
static const char *status_of(struct dump_log *d, int rv)
{
    if (rv == RC_NOT_FOUND) {
        return "missing";
    }
    dump_log_problem(d);
    return rv == RC_CORRUPT ? "CORRUPT" : "UNREADABLE";
}

struct epochs {
    struct dump_log *d;
    size_t n;
};

static int epoch_cb(void *arg, int32_t epoch, int64_t start_offset)
{
    struct epochs *e = arg;
    struct dump_log *d = e->d;
    if (e->n++ >= DUMP_LOG__EPOCHS_SHOWN_MAX) {
        return RC_OK;
    }
    if (d->opts->json) {
        json_object_begin(&d->json);
        json_key(&d->json, "epoch");
        json_int(&d->json, epoch);
        json_key(&d->json, "start_offset");
        json_int(&d->json, start_offset);
        json_object_end(&d->json);
    } else {
        fprintf(d->out, "  epoch=%" PRId32 " start_offset=%" PRId64 "\n",
                epoch, start_offset);
    }
    return RC_OK;
}

/* The leader-epoch checkpoint of dir: its entries, in file order. */
static void epochs_dump(struct dump_log *d, const char *dir)
{
    char *text = NULL;
    int rv = read_text(dir, LOG_LAYOUT_EPOCH_FILE, &text);
    struct epochs e = {.d = d};
    if (d->opts->json) {
        json_key(&d->json, "leader_epoch_checkpoint");
        json_object_begin(&d->json);
        json_key(&d->json, "entries");
        json_array_begin(&d->json);
    } else {
        fprintf(d->out, "%s:\n", LOG_LAYOUT_EPOCH_FILE);
    }
    if (rv == RC_OK) {
        /* Entries before a bad line were shown; the status says so. */
        rv =
            checkpoint_text_epochs(text, LOG_EPOCH_ENTRIES_MAX, epoch_cb, &e);
    }
    free(text);
    const char *status = rv == RC_OK ? "ok" : status_of(d, rv);
    if (d->opts->json) {
        json_array_end(&d->json);
        json_key(&d->json, "status");
        json_string(&d->json, status);
        json_object_end(&d->json);
        return;
    }
    if (e.n > DUMP_LOG__EPOCHS_SHOWN_MAX) {
        fprintf(d->out, "  (and %zu more)\n",
                e.n - DUMP_LOG__EPOCHS_SHOWN_MAX);
    }
    fprintf(d->out, "  entries=%zu %s\n", e.n, status);
}

/* This partition's line of the high-watermark checkpoint in dir's
 * parent, the log dir. */
static void hw_dump(struct dump_log *d, const char *dir, const char *topic,
                    int32_t partition)
{
    char real[PATH_MAX];
    char *text = NULL;
    int64_t hw = 0;
    bool found = false;
    int rv = realpath(dir, real) != NULL ? RC_OK : RC_IO;
    char *slash = rv == RC_OK ? strrchr(real, '/') : NULL;
    if (slash != NULL) {
        *slash = '\0'; /* the log dir; "" for "/" */
        rv = read_text(real[0] != '\0' ? real : "/",
                       LOG_LAYOUT_HW_CHECKPOINT_FILE, &text);
    }
    if (rv == RC_OK) {
        rv = checkpoint_text_offset(text, topic, partition, &hw, &found);
    }
    free(text);
    const char *status =
        rv == RC_OK ? (found ? "ok" : "no entry") : status_of(d, rv);
    if (d->opts->json) {
        json_key(&d->json, "high_watermark");
        json_object_begin(&d->json);
        json_key(&d->json, "file");
        json_string(&d->json, LOG_LAYOUT_HW_CHECKPOINT_FILE);
        json_key(&d->json, "offset");
        json_int_or_null(&d->json, found, hw);
        json_key(&d->json, "status");
        json_string(&d->json, status);
        json_object_end(&d->json);
        return;
    }
    fprintf(d->out, "high watermark (../%s, %s %" PRId32 "): ",
            LOG_LAYOUT_HW_CHECKPOINT_FILE, topic, partition);
    if (found) {
        fprintf(d->out, "%" PRId64 "\n", hw);
    } else {
        fprintf(d->out, "%s\n", status);
    }
}

/* Reads dir/name whole into a fresh *buf (freed by the caller) if it has
 * at most max bytes: RC_OK, RC_NOT_FOUND, RC_TOO_LARGE, RC_IO, RC_NOMEM. */
static int read_binary(const char *dir, const char *name, size_t max,
                       uint8_t **buf, size_t *len)
{
    char path[LOG_PATH_BYTES_MAX];
    *buf = NULL;
    *len = 0;
    if (file_path(path, dir, name) != RC_OK) {
        return RC_TOO_LARGE;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT ? RC_NOT_FOUND : RC_IO;
    }
    struct stat st;
    int rv = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? RC_OK : RC_IO;
    if (rv == RC_OK && (uint64_t)st.st_size > max) {
        rv = RC_TOO_LARGE;
    }
    size_t size = rv == RC_OK ? (size_t)st.st_size : 0;
    uint8_t *p = rv == RC_OK ? malloc(size + 1) : NULL;
    if (rv == RC_OK && p == NULL) {
        rv = RC_NOMEM;
    }
    size_t done = 0;
    while (rv == RC_OK && done < size) {
        ssize_t n = read(fd, p + done, size - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            rv = RC_IO; /* error, or cut while we read */
        }
        done += n > 0 ? (size_t)n : 0;
    }
    close(fd);
    if (rv != RC_OK) {
        free(p);
        return rv;
    }
    *buf = p;
    *len = size;
    return RC_OK;
}

/* One producer of the snapshot at r: its line or object; false when the
 * bytes do not decode. */
static bool producer_dump(struct dump_log *d, struct reader *r, bool show)
{
    int64_t id = reader_i64(r);
    int16_t epoch = reader_i16(r);
    int8_t n = reader_i8(r);
    if (r->rc != RC_OK || id < 0 || n < 1 ||
        (uint32_t)n > PRODUCER_BATCHES_MAX) {
        return false;
    }
    int32_t first_seq = 0, last_seq = 0;
    int64_t base = 0, last = 0;
    for (int8_t i = 0; i < n; i++) {
        first_seq = reader_i32(r);
        last_seq = reader_i32(r);
        base = reader_i64(r);
        last = reader_i64(r);
    }
    if (r->rc != RC_OK || !show) {
        return r->rc == RC_OK;
    }
    if (!d->opts->json) {
        fprintf(d->out,
                "  producer_id=%" PRId64 " producer_epoch=%d batches=%d"
                " last_batch_sequences=%" PRId32 "..%" PRId32
                " last_batch_offsets=%" PRId64 "..%" PRId64 "\n",
                id, epoch, n, first_seq, last_seq, base, last);
        return true;
    }
    json_object_begin(&d->json);
    json_key(&d->json, "producer_id");
    json_int(&d->json, id);
    json_key(&d->json, "producer_epoch");
    json_int(&d->json, epoch);
    json_key(&d->json, "batches");
    json_int(&d->json, n);
    json_key(&d->json, "last_sequence");
    json_int(&d->json, last_seq);
    json_key(&d->json, "last_offset");
    json_int(&d->json, last);
    json_object_end(&d->json);
    return true;
}

/* The snapshot's producers once its CRC checks out: RC_OK or RC_CORRUPT
 * (producers shown before the fault stay shown). */
static int producers_dump(struct dump_log *d, const uint8_t *p, size_t len,
                          int64_t *end_offset, uint32_t *count)
{
    size_t crc_bytes = LOG_LAYOUT_PRODUCER_SNAPSHOT_CRC_BYTES;
    if (len < LOG_LAYOUT_PRODUCER_SNAPSHOT_HEADER_BYTES + crc_bytes ||
        bytes_be32(p + len - crc_bytes) != crc32c(p, len - crc_bytes)) {
        return RC_CORRUPT;
    }
    struct reader r;
    reader_init(&r, p, len - crc_bytes);
    uint32_t magic = reader_u32(&r);
    *end_offset = reader_i64(&r);
    *count = reader_u32(&r);
    if (magic != LOG_LAYOUT_PRODUCER_SNAPSHOT_MAGIC ||
        *count > PRODUCERS_MAX) {
        return RC_CORRUPT;
    }
    for (uint32_t i = 0; i < *count; i++) {
        if (!producer_dump(d, &r, i < DUMP_LOG__EPOCHS_SHOWN_MAX)) {
            return RC_CORRUPT;
        }
    }
    return reader_done(&r) ? RC_OK : RC_CORRUPT;
}

/* The producer-state snapshot of dir, if any. */
static void producers_snapshot_dump(struct dump_log *d, const char *dir)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    int64_t end = -1;
    uint32_t count = 0;
    int rv = read_binary(dir, LOG_LAYOUT_PRODUCER_SNAPSHOT_FILE,
                         PRODUCER_SNAPSHOT_BYTES_MAX, &buf, &len);
    if (d->opts->json) {
        json_key(&d->json, "producer_snapshot");
        json_object_begin(&d->json);
        json_key(&d->json, "producers");
        json_array_begin(&d->json);
    } else {
        fprintf(d->out, "%s:\n", LOG_LAYOUT_PRODUCER_SNAPSHOT_FILE);
    }
    if (rv == RC_OK) {
        rv = producers_dump(d, buf, len, &end, &count);
    }
    free(buf);
    const char *status = rv == RC_OK          ? "crc valid"
                         : rv == RC_TOO_LARGE ? status_of(d, RC_CORRUPT)
                                              : status_of(d, rv);
    if (d->opts->json) {
        json_array_end(&d->json);
        json_key(&d->json, "end_offset");
        json_int_or_null(&d->json, rv == RC_OK, end);
        json_key(&d->json, "status");
        json_string(&d->json, status);
        json_object_end(&d->json);
        return;
    }
    if (rv == RC_OK) {
        fprintf(d->out, "  end_offset=%" PRId64 " producers=%" PRIu32 " ",
                end, count);
    } else {
        fputs("  ", d->out);
    }
    fprintf(d->out, "%s\n", status);
}

void dump_log_checkpoints(struct dump_log *d, const char *dir,
                          const char *topic, int32_t partition)
{
    epochs_dump(d, dir);
    if (topic != NULL) {
        hw_dump(d, dir, topic, partition);
    }
    producers_snapshot_dump(d, dir);
}

/* Entries of one index file, once its header checks out; -1 and *why
 * when it does not. */
static int64_t index_entries(const uint8_t *p, size_t len, uint32_t magic,
                             size_t entry_bytes, const char **why)
{
    size_t header = LOG_LAYOUT_INDEX_HEADER_BYTES;
    if (len < header || bytes_be32(p) != magic) {
        *why = "CORRUPT: bad magic";
    } else if ((len - header) % entry_bytes != 0) {
        *why = "CORRUPT: not a whole number of entries";
    } else if (bytes_be32(p + 4) != crc32c(p + header, len - header)) {
        *why = "CRC MISMATCH";
    } else {
        *why = "crc valid";
        return (int64_t)((len - header) / entry_bytes);
    }
    return -1;
}

static void index_dump(struct dump_log *d, const char *dir, int64_t base,
                       bool times)
{
    const char *ext =
        times ? LOG_LAYOUT_TIME_INDEX_EXT : LOG_LAYOUT_INDEX_EXT;
    size_t entry = times ? LOG_LAYOUT_TIME_INDEX_ENTRY_BYTES
                         : LOG_LAYOUT_INDEX_ENTRY_BYTES;
    char name[64];
    snprintf(name, sizeof name, "%0*" PRId64 ".%s", LOG_LAYOUT_BASE_DIGITS,
             base, ext);
    uint8_t *buf = NULL;
    size_t len = 0;
    int rv = read_binary(dir, name,
                         LOG_LAYOUT_INDEX_HEADER_BYTES +
                             (size_t)LOG_INDEX_ENTRIES_MAX * entry,
                         &buf, &len);
    const char *why = NULL;
    int64_t n = -1;
    if (rv == RC_OK) {
        n = index_entries(buf, len,
                          times ? LOG_LAYOUT_TIME_INDEX_MAGIC
                                : LOG_LAYOUT_INDEX_MAGIC,
                          entry, &why);
    } else if (rv == RC_NOT_FOUND) {
        why = "missing"; /* rebuilt from the segment at the next open */
    } else {
        why = rv == RC_TOO_LARGE ? "CORRUPT: too large" : rc_str(rv);
    }
    if (n < 0 && rv != RC_NOT_FOUND) {
        dump_log_problem(d);
    }
    free(buf);
    if (d->opts->json) {
        json_key(&d->json, times ? "timeindex" : "index");
        json_object_begin(&d->json);
        json_key(&d->json, "entries");
        json_int_or_null(&d->json, n >= 0, n);
        json_key(&d->json, "status");
        json_string(&d->json, why);
        json_object_end(&d->json);
        return;
    }
    fprintf(d->out, "  %s:", name);
    if (n >= 0) {
        fprintf(d->out, " entries=%" PRId64, n);
    }
    fprintf(d->out, " %s\n", why);
}

void dump_log_indexes(struct dump_log *d, const char *dir, int64_t base)
{
    index_dump(d, dir, base, false);
    index_dump(d, dir, base, true);
}
