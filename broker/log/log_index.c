/* Sparse offset and time indexes of a segment (broker/log/log_index.h). */
#include "broker/log/log_index.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "common/file.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/log_layout.h"
#include "common/rc.h"

#define LOG_INDEX__ENTRY_BYTES LOG_LAYOUT_INDEX_ENTRY_BYTES
#define LOG_INDEX__TIME_ENTRY_BYTES LOG_LAYOUT_TIME_INDEX_ENTRY_BYTES
/* Each file starts with a magic number and the CRC-32C of its entries. */
#define LOG_INDEX__HEADER_BYTES LOG_LAYOUT_INDEX_HEADER_BYTES
#define LOG_INDEX__MAGIC LOG_LAYOUT_INDEX_MAGIC
#define LOG_INDEX__TIME_MAGIC LOG_LAYOUT_TIME_INDEX_MAGIC

void log_index_init(struct log_index *ix, size_t entries_max)
{
    *ix = (struct log_index){.entries_max = entries_max};
}

void log_index_free(struct log_index *ix)
{
    free(ix->entries);
    free(ix->times);
    log_index_init(ix, ix->entries_max);
}

void log_index_clear(struct log_index *ix)
{
    ix->n_entries = 0;
    ix->n_times = 0;
}

bool log_index_full(const struct log_index *ix)
{
    return ix->n_entries >= ix->entries_max;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem, size_t max)
{
    if (need <= *cap) {
        return RC_OK;
    }
    if (need > max) {
        return RC_FULL;
    }
    size_t n = *cap == 0 ? 64 : *cap * 2;
    if (n > max) {
        n = max;
    }
    void *q = realloc(*p, n * elem);
    if (q == NULL) {
        return RC_NOMEM;
    }
    *p = q;
    *cap = n;
    return RC_OK;
}

int log_index_add(struct log_index *ix, int32_t rel_offset, int32_t position)
{
    if (ix->n_entries > 0) {
        const struct log_index_entry *last = &ix->entries[ix->n_entries - 1];
        ASSERT(rel_offset > last->rel_offset);
        ASSERT(position > last->position);
    }
    int rv = grow((void **)&ix->entries, &ix->cap_entries, ix->n_entries + 1,
                  sizeof *ix->entries, ix->entries_max);
    if (rv != RC_OK) {
        return rv;
    }
    ix->entries[ix->n_entries++] =
        (struct log_index_entry){rel_offset, position};
    return RC_OK;
}

int log_index_add_time(struct log_index *ix, int64_t timestamp,
                       int32_t rel_offset)
{
    if (ix->n_times > 0 && timestamp <= ix->times[ix->n_times - 1].timestamp) {
        return RC_OK;
    }
    int rv = grow((void **)&ix->times, &ix->cap_times, ix->n_times + 1,
                  sizeof *ix->times, ix->entries_max);
    if (rv != RC_OK) {
        return rv;
    }
    ix->times[ix->n_times++] = (struct log_time_entry){timestamp, rel_offset};
    return RC_OK;
}

struct log_index_entry log_index_floor(const struct log_index *ix,
                                       int32_t rel_offset)
{
    size_t lo = 0;
    size_t hi = ix->n_entries; /* answer is entries[lo - 1] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->entries[mid].rel_offset <= rel_offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return (struct log_index_entry){0, 0};
    }
    return ix->entries[lo - 1];
}

struct log_index_entry log_index_floor_position(const struct log_index *ix,
                                                int64_t position)
{
    size_t lo = 0;
    size_t hi = ix->n_entries;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->entries[mid].position <= position) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return (struct log_index_entry){0, 0};
    }
    return ix->entries[lo - 1];
}

int32_t log_index_time_floor(const struct log_index *ix, int64_t target)
{
    size_t lo = 0;
    size_t hi = ix->n_times;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->times[mid].timestamp < target) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo == 0 ? 0 : ix->times[lo - 1].rel_offset;
}

int64_t log_index_last_time(const struct log_index *ix)
{
    return ix->n_times == 0 ? -1 : ix->times[ix->n_times - 1].timestamp;
}

void log_index_truncate(struct log_index *ix, int32_t rel_offset,
                        int64_t position)
{
    while (ix->n_entries > 0 &&
           ix->entries[ix->n_entries - 1].position >= position) {
        ix->n_entries--;
    }
    while (ix->n_times > 0 &&
           ix->times[ix->n_times - 1].rel_offset >= rel_offset) {
        ix->n_times--;
    }
}

static int index_file_name(char *out, size_t cap, const char *dir,
                           int64_t base, const char *ext)
{
    int n = snprintf(out, cap, "%s/%020lld.%s", dir, (long long)base, ext);
    return (n < 0 || (size_t)n >= cap) ? RC_TOO_LARGE : RC_OK;
}

/* Writes the header and the entries at buf + LOG_INDEX__HEADER_BYTES
 * (len bytes in all). */
static int write_file(const char *path, uint32_t magic, uint8_t *data,
                      size_t len)
{
    bytes_put_be32(data, magic);
    bytes_put_be32(data + 4, crc32c(data + LOG_INDEX__HEADER_BYTES,
                                    len - LOG_INDEX__HEADER_BYTES));
    int fd = io_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return RC_IO;
    }
    int rv = file_write_all(fd, data, len);
    io_close(fd);
    return rv;
}

static int save_offsets(const struct log_index *ix, const char *path)
{
    size_t len = LOG_INDEX__HEADER_BYTES + ix->n_entries *
                                               LOG_INDEX__ENTRY_BYTES;
    uint8_t *buf = malloc(len);
    if (buf == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < ix->n_entries; i++) {
        uint8_t *p = buf + LOG_INDEX__HEADER_BYTES +
                     i * LOG_INDEX__ENTRY_BYTES;
        bytes_put_be32(p, (uint32_t)ix->entries[i].rel_offset);
        bytes_put_be32(p + 4, (uint32_t)ix->entries[i].position);
    }
    int rv = write_file(path, LOG_INDEX__MAGIC, buf, len);
    free(buf);
    return rv;
}

static int save_times(const struct log_index *ix, const char *path)
{
    size_t len = LOG_INDEX__HEADER_BYTES + ix->n_times *
                                               LOG_INDEX__TIME_ENTRY_BYTES;
    uint8_t *buf = malloc(len);
    if (buf == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < ix->n_times; i++) {
        uint8_t *p = buf + LOG_INDEX__HEADER_BYTES +
                     i * LOG_INDEX__TIME_ENTRY_BYTES;
        bytes_put_be64(p, (uint64_t)ix->times[i].timestamp);
        bytes_put_be32(p + 8, (uint32_t)ix->times[i].rel_offset);
    }
    int rv = write_file(path, LOG_INDEX__TIME_MAGIC, buf, len);
    free(buf);
    return rv;
}

int log_index_save(const struct log_index *ix, const char *dir,
                   int64_t base_offset)
{
    char path[LOG_PATH_BYTES_MAX];
    int rv = index_file_name(path, sizeof path, dir, base_offset, "index");
    if (rv == RC_OK) {
        rv = save_offsets(ix, path);
    }
    if (rv == RC_OK) {
        rv = index_file_name(path, sizeof path, dir, base_offset,
                             "timeindex");
    }
    if (rv == RC_OK) {
        rv = save_times(ix, path);
    }
    return rv;
}

/* Reads a whole index file of at most max_bytes into a fresh buffer. */
static int read_file(const char *path, size_t max_bytes, uint8_t **out,
                     size_t *len_out)
{
    int fd = io_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        return errno == ENOENT ? RC_NOT_FOUND : RC_IO;
    }
    off_t size = 0;
    int rv = io_fsize(fd, &size) == 0 ? RC_OK : RC_IO;
    if (rv == RC_OK && (uint64_t)size > max_bytes) {
        rv = RC_CORRUPT;
    }
    size_t len = rv == RC_OK ? (size_t)size : 0;
    uint8_t *buf = rv == RC_OK ? malloc(len == 0 ? 1 : len) : NULL;
    if (rv == RC_OK && buf == NULL) {
        rv = RC_NOMEM;
    }
    if (rv == RC_OK && len > 0 && io_pread(fd, buf, len, 0) != (ssize_t)len) {
        rv = RC_IO;
    }
    io_close(fd);
    if (rv != RC_OK) {
        free(buf);
        return rv;
    }
    *out = buf;
    *len_out = len;
    return RC_OK;
}

/* The entries of an index file read whole, once its header checks out:
 * a file of the older format (no header), cut or flipped is RC_CORRUPT. */
static int check_header(const uint8_t *buf, size_t len, uint32_t magic,
                        const uint8_t **entries, size_t *n_bytes)
{
    if (len < LOG_INDEX__HEADER_BYTES || bytes_be32(buf) != magic) {
        return RC_CORRUPT;
    }
    *entries = buf + LOG_INDEX__HEADER_BYTES;
    *n_bytes = len - LOG_INDEX__HEADER_BYTES;
    if (bytes_be32(buf + 4) != crc32c(*entries, *n_bytes)) {
        return RC_CORRUPT;
    }
    return RC_OK;
}

static int load_offsets(struct log_index *ix, const uint8_t *buf, size_t len,
                        int64_t segment_bytes)
{
    if (len % LOG_INDEX__ENTRY_BYTES != 0) {
        return RC_CORRUPT;
    }
    size_t n = len / LOG_INDEX__ENTRY_BYTES;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = buf + i * LOG_INDEX__ENTRY_BYTES;
        int32_t rel = (int32_t)bytes_be32(p);
        int32_t pos = (int32_t)bytes_be32(p + 4);
        int32_t prev_rel = i == 0 ? 0 : ix->entries[i - 1].rel_offset;
        int32_t prev_pos = i == 0 ? 0 : ix->entries[i - 1].position;
        if (rel <= prev_rel || pos <= prev_pos || pos >= segment_bytes) {
            return RC_CORRUPT;
        }
        int rv = log_index_add(ix, rel, pos);
        if (rv != RC_OK) {
            return rv == RC_FULL ? RC_CORRUPT : rv;
        }
    }
    return RC_OK;
}

static int load_times(struct log_index *ix, const uint8_t *buf, size_t len)
{
    if (len % LOG_INDEX__TIME_ENTRY_BYTES != 0) {
        return RC_CORRUPT;
    }
    size_t n = len / LOG_INDEX__TIME_ENTRY_BYTES;
    int32_t last_rel = ix->n_entries == 0
                           ? 0
                           : ix->entries[ix->n_entries - 1].rel_offset;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = buf + i * LOG_INDEX__TIME_ENTRY_BYTES;
        int64_t ts = (int64_t)bytes_be64(p);
        int32_t rel = (int32_t)bytes_be32(p + 8);
        bool grows = i == 0 || (ts > ix->times[i - 1].timestamp &&
                                rel > ix->times[i - 1].rel_offset);
        if (!grows || rel <= 0 || rel > last_rel) {
            return RC_CORRUPT;
        }
        int rv = log_index_add_time(ix, ts, rel);
        if (rv != RC_OK) {
            return rv == RC_FULL ? RC_CORRUPT : rv;
        }
    }
    return RC_OK;
}

/* Reads, checks and parses one index file (ext "index" or "timeindex"). */
static int load_one(struct log_index *ix, const char *dir, int64_t base,
                    const char *ext, int64_t segment_bytes)
{
    char path[LOG_PATH_BYTES_MAX];
    bool times = ext[0] == 't';
    size_t entry = times ? LOG_INDEX__TIME_ENTRY_BYTES : LOG_INDEX__ENTRY_BYTES;
    uint8_t *buf = NULL;
    size_t len = 0;
    int rv = index_file_name(path, sizeof path, dir, base, ext);
    if (rv == RC_OK) {
        rv = read_file(path, LOG_INDEX__HEADER_BYTES + ix->entries_max * entry,
                       &buf, &len);
    }
    if (rv != RC_OK) {
        return rv;
    }
    const uint8_t *entries = NULL;
    size_t n_bytes = 0;
    rv = check_header(buf, len, times ? LOG_INDEX__TIME_MAGIC
                                      : LOG_INDEX__MAGIC, &entries, &n_bytes);
    if (rv == RC_OK) {
        rv = times ? load_times(ix, entries, n_bytes)
                   : load_offsets(ix, entries, n_bytes, segment_bytes);
    }
    free(buf);
    return rv;
}

int log_index_load(struct log_index *ix, const char *dir, int64_t base_offset,
                   int64_t segment_bytes, const char **bad_ext)
{
    log_index_clear(ix);
    *bad_ext = "index";
    int rv = load_one(ix, dir, base_offset, "index", segment_bytes);
    if (rv == RC_OK) {
        *bad_ext = "timeindex";
        rv = load_one(ix, dir, base_offset, "timeindex", segment_bytes);
    }
    if (rv != RC_OK) {
        log_index_clear(ix);
    }
    return rv;
}

void log_index_unlink(const char *dir, int64_t base_offset)
{
    char path[LOG_PATH_BYTES_MAX];
    if (index_file_name(path, sizeof path, dir, base_offset, "index") ==
        RC_OK) {
        io_unlink(path);
    }
    if (index_file_name(path, sizeof path, dir, base_offset, "timeindex") ==
        RC_OK) {
        io_unlink(path);
    }
}

/* One file's size: 0 when missing, -1 when it cannot be told. */
static off_t probe_size(const char *dir, int64_t base_offset, const char *ext)
{
    char path[LOG_PATH_BYTES_MAX];
    if (index_file_name(path, sizeof path, dir, base_offset, ext) != RC_OK) {
        return -1;
    }
    int fd = io_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        return errno == ENOENT ? 0 : -1;
    }
    off_t size = 0;
    if (io_fsize(fd, &size) != 0 || size == 0) {
        size = -1; /* an empty file is no index: not a missing one */
    }
    io_close(fd);
    return size;
}

enum log_index_files log_index_files_probe(const char *dir,
                                           int64_t base_offset)
{
    off_t index = probe_size(dir, base_offset, "index");
    off_t times = index < 0 ? -1 : probe_size(dir, base_offset, "timeindex");
    if (index == 0 && times == 0) {
        return LOG_INDEX_FILES_ABSENT;
    }
    if (index == LOG_INDEX__HEADER_BYTES && times == LOG_INDEX__HEADER_BYTES) {
        return LOG_INDEX_FILES_EMPTY;
    }
    return LOG_INDEX_FILES_OTHER;
}
