/* Leader-epoch cache (broker/log/log_epoch.h). */
#include "broker/log/log_epoch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/checkpoint_text.h"
#include "common/file.h"
#include "common/limits.h"
#include "common/log_layout.h"
#include "common/rc.h"

#define LOG_EPOCH__FILE LOG_LAYOUT_EPOCH_FILE
#define LOG_EPOCH__LINE_BYTES 48 /* "<int32> <int64>\n" */

void log_epoch_init(struct log_epoch_cache *c)
{
    *c = (struct log_epoch_cache){0};
}

void log_epoch_free(struct log_epoch_cache *c)
{
    free(c->entries);
    log_epoch_init(c);
}

int32_t log_epoch_latest(const struct log_epoch_cache *c)
{
    return c->n == 0 ? LOG_EPOCH_UNDEFINED : c->entries[c->n - 1].epoch;
}

static int push(struct log_epoch_cache *c, int32_t epoch, int64_t start)
{
    if (c->n == c->cap) {
        if (c->cap >= LOG_EPOCH_ENTRIES_MAX) {
            return RC_FULL;
        }
        size_t cap = c->cap == 0 ? 8 : c->cap * 2;
        void *p = realloc(c->entries, cap * sizeof *c->entries);
        if (p == NULL) {
            return RC_NOMEM;
        }
        c->entries = p;
        c->cap = cap;
    }
    c->entries[c->n++] = (struct log_epoch_entry){epoch, start};
    return RC_OK;
}

int log_epoch_assign(struct log_epoch_cache *c, int32_t epoch,
                     int64_t start_offset, bool *changed)
{
    ASSERT(epoch >= 0);
    ASSERT(start_offset >= 0);
    *changed = false;
    if (c->n > 0 && c->entries[c->n - 1].epoch == epoch) {
        return RC_OK;
    }
    while (c->n > 0 && (c->entries[c->n - 1].epoch >= epoch ||
                        c->entries[c->n - 1].start_offset >= start_offset)) {
        c->n--;
    }
    *changed = true;
    return push(c, epoch, start_offset);
}

void log_epoch_end_offset_for(const struct log_epoch_cache *c, int32_t epoch,
                              int64_t log_end_offset, int32_t *epoch_out,
                              int64_t *end_offset_out)
{
    *epoch_out = LOG_EPOCH_UNDEFINED;
    *end_offset_out = LOG_EPOCH_UNDEFINED;
    if (epoch == LOG_EPOCH_UNDEFINED || c->n == 0) {
        return;
    }
    if (c->entries[c->n - 1].epoch == epoch) {
        *epoch_out = epoch;
        *end_offset_out = log_end_offset;
        return;
    }
    /* The first entry above epoch ("higher"), then the one at or below. */
    size_t i = c->n;
    while (i > 0 && c->entries[i - 1].epoch > epoch) {
        i--;
    }
    if (i == c->n) {
        return; /* newer than everything we know */
    }
    /* Older than everything we know: it ended where our first epoch
     * began (Kafka answers with the requested epoch itself). */
    *epoch_out = i == 0 ? epoch : c->entries[i - 1].epoch;
    *end_offset_out = c->entries[i].start_offset;
}

bool log_epoch_truncate_from_end(struct log_epoch_cache *c,
                                 int64_t end_offset)
{
    size_t n = c->n;
    while (c->n > 0 && c->entries[c->n - 1].start_offset >= end_offset) {
        c->n--;
    }
    return c->n != n;
}

bool log_epoch_truncate_from_start(struct log_epoch_cache *c,
                                   int64_t start_offset)
{
    size_t drop = 0;
    while (drop + 1 < c->n && c->entries[drop + 1].start_offset <= start_offset) {
        drop++;
    }
    bool changed = drop > 0;
    if (drop > 0) {
        for (size_t i = drop; i < c->n; i++) {
            c->entries[i - drop] = c->entries[i];
        }
        c->n -= drop;
    }
    if (c->n > 0 && c->entries[0].start_offset < start_offset) {
        c->entries[0].start_offset = start_offset;
        changed = true;
    }
    return changed;
}

int log_epoch_save(const struct log_epoch_cache *c, const char *dir)
{
    size_t cap = 32 + c->n * LOG_EPOCH__LINE_BYTES;
    char *buf = malloc(cap);
    if (buf == NULL) {
        return RC_NOMEM;
    }
    size_t len = (size_t)snprintf(buf, cap, "0\n%zu\n", c->n);
    for (size_t i = 0; i < c->n; i++) {
        len += (size_t)snprintf(buf + len, cap - len, "%" PRId32 " %" PRId64
                                "\n", c->entries[i].epoch,
                                c->entries[i].start_offset);
    }
    ASSERT(len < cap);
    int rv = file_write_checked(dir, LOG_EPOCH__FILE, buf, len);
    free(buf);
    return rv;
}

/* A checkpoint entry, into the cache arg. */
static int push_cb(void *arg, int32_t epoch, int64_t start_offset)
{
    return push(arg, epoch, start_offset);
}

int log_epoch_load(struct log_epoch_cache *c, const char *dir,
                   bool *unchecked)
{
    size_t cap = 64 + (size_t)LOG_EPOCH_ENTRIES_MAX * LOG_EPOCH__LINE_BYTES +
                 FILE_CHECK_LINE_BYTES;
    /* Most checkpoints are a few lines: read into the stack first, as a
     * broker opening 100,000 logs would otherwise allocate and free a
     * buffer for each. */
    char small[4 * 1024];
    c->n = 0;
    for (size_t size = sizeof small;; size *= 4) {
        if (size > cap) {
            size = cap;
        }
        char *buf = size == sizeof small ? small : malloc(size);
        if (buf == NULL) {
            return RC_NOMEM;
        }
        size_t len = 0;
        int rv = file_read_checked(dir, LOG_EPOCH__FILE, buf, size, &len,
                                   unchecked);
        bool grow = rv == RC_TOO_LARGE && size < cap;
        if (rv == RC_OK) {
            rv = checkpoint_text_epochs(buf, LOG_EPOCH_ENTRIES_MAX, push_cb,
                                        c);
        }
        if (buf != small) {
            free(buf);
        }
        if (grow) {
            continue;
        }
        if (rv == RC_TOO_LARGE) {
            rv = RC_CORRUPT;
        }
        if (rv != RC_OK) {
            c->n = 0;
        }
        return rv;
    }
}
