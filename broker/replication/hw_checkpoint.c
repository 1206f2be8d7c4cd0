/* The high-watermark checkpoint (broker/replication/hw_checkpoint.h). */
#include "broker/replication/hw_checkpoint.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/checkpoint_text.h"
#include "common/file.h"
#include "common/limits.h"
#include "common/rc.h"

#define HW_CHECKPOINT__FIRST_BYTES (64u * 1024)
#define HW_CHECKPOINT__BYTES_MAX (64u * 1024 * 1024)

/* The checkpoint's text (its checksum line checked and gone) into *out
 * (the caller frees it). RC_OK, RC_NOT_FOUND, RC_CORRUPT, RC_IO,
 * RC_NOMEM. */
static int read_text(const char *dir, char **out)
{
    *out = NULL;
    for (size_t size = HW_CHECKPOINT__FIRST_BYTES;; size *= 4) {
        char *buf = malloc(size);
        if (buf == NULL) {
            return RC_NOMEM;
        }
        size_t len = 0;
        bool unchecked = false;
        int rv = file_read_checked(dir, HW_CHECKPOINT_FILE, buf, size, &len,
                                   &unchecked);
        if (rv == RC_TOO_LARGE && size < HW_CHECKPOINT__BYTES_MAX) {
            free(buf);
            continue;
        }
        if (rv != RC_OK) {
            free(buf);
            return rv == RC_TOO_LARGE ? RC_CORRUPT : rv;
        }
        *out = buf;
        return RC_OK;
    }
}

int hw_checkpoint_load(const char *dir, checkpoint_text_offset_fn fn,
                       void *arg)
{
    char *text;
    int rv = read_text(dir, &text);
    if (rv == RC_OK) {
        rv = checkpoint_text_offsets(text, fn, arg);
    }
    free(text);
    return rv;
}

int hw_checkpoint_read(const char *dir, const char *topic, int32_t partition,
                       int64_t *hw)
{
    char *text;
    bool found = false;
    *hw = 0;
    int rv = read_text(dir, &text);
    if (rv == RC_OK) {
        rv = checkpoint_text_offset(text, topic, partition, hw, &found);
    }
    free(text);
    return rv;
}

void hw_checkpoint_cache_drop(struct hw_checkpoint_cache *c)
{
    meta_index_free(&c->index);
    free(c->entries);
    free(c->names);
    memset(c, 0, sizeof *c);
}

static int cache_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return RC_OK;
    }
    size_t n = *cap == 0 ? 256 : *cap;
    while (n < need) {
        n *= 2;
    }
    void *p = realloc(*arr, n * elem);
    if (p == NULL) {
        return RC_NOMEM;
    }
    *arr = p;
    *cap = n;
    return RC_OK;
}

static int cache_add(void *arg, const char *topic, int32_t partition,
                     int64_t offset)
{
    struct hw_checkpoint_cache *c = arg;
    size_t len = strlen(topic) + 1;
    void *names = c->names;
    void *entries = c->entries;
    if (cache_grow(&names, &c->names_cap, c->names_len + len, 1) != RC_OK) {
        return RC_NOMEM;
    }
    c->names = names;
    if (cache_grow(&entries, &c->cap, c->n + 1, sizeof c->entries[0]) !=
        RC_OK) {
        return RC_NOMEM;
    }
    c->entries = entries;
    memcpy(c->names + c->names_len, topic, len);
    c->entries[c->n] = (struct hw_checkpoint_entry){
        .name_at = c->names_len, .partition = partition, .hw = offset};
    c->names_len += len;
    c->n++;
    struct meta_uuid key = meta_index_name_key(topic);
    return meta_index_put(&c->index, &key, partition,
                          (void *)(uintptr_t)c->n);
}

int hw_checkpoint_cache_read(struct hw_checkpoint_cache *c, const char *dir,
                             const char *topic, int32_t partition,
                             int64_t *hw)
{
    *hw = 0;
    if (!c->loaded) {
        int rv = hw_checkpoint_load(dir, cache_add, c);
        if (rv == RC_NOMEM) {
            hw_checkpoint_cache_drop(c); /* read the file each time */
            return hw_checkpoint_read(dir, topic, partition, hw);
        }
        if (rv != RC_OK) {
            hw_checkpoint_cache_drop(c); /* no value of it is used */
        }
        c->loaded = true;
        c->rv = rv;
    }
    if (c->rv != RC_OK) {
        return c->rv;
    }
    struct meta_uuid key = meta_index_name_key(topic);
    uintptr_t at = (uintptr_t)meta_index_get(&c->index, &key, partition);
    if (at == 0) {
        return RC_OK; /* no line for it */
    }
    const struct hw_checkpoint_entry *e = &c->entries[at - 1];
    if (strcmp(c->names + e->name_at, topic) != 0) {
        /* Two names with one key: the file says for sure. */
        return hw_checkpoint_read(dir, topic, partition, hw);
    }
    *hw = e->hw;
    return RC_OK;
}
