/* See common/checkpoint_text.h. */
#include "common/checkpoint_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/limits.h"
#include "common/rc.h"

/* Parses one decimal integer in [min, max] followed by the separator sep,
 * and moves *p past it. */
static int parse_num(char **p, char sep, int64_t min, int64_t max,
                     int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(*p, &end, 10);
    if (end == *p || errno != 0 || *end != sep || v < min || v > max) {
        return RC_CORRUPT;
    }
    *out = v;
    *p = end + 1;
    return RC_OK;
}

int checkpoint_text_epochs(char *p, size_t entries_max,
                           checkpoint_text_epoch_fn fn, void *arg)
{
    int64_t version = 0;
    int64_t n = 0;
    int rv = parse_num(&p, '\n', 0, 0, &version);
    if (rv == RC_OK) {
        rv = parse_num(&p, '\n', 0, (int64_t)entries_max, &n);
    }
    int64_t last_epoch = -1;
    int64_t last_start = -1;
    for (int64_t i = 0; rv == RC_OK && i < n; i++) {
        int64_t epoch = 0;
        int64_t start = 0;
        rv = parse_num(&p, ' ', 0, INT32_MAX, &epoch);
        if (rv == RC_OK) {
            rv = parse_num(&p, '\n', 0, INT64_MAX, &start);
        }
        if (rv == RC_OK && (epoch <= last_epoch || start < last_start)) {
            rv = RC_CORRUPT;
        }
        if (rv == RC_OK) {
            rv = fn(arg, (int32_t)epoch, start);
        }
        last_epoch = epoch;
        last_start = start;
    }
    if (rv == RC_OK && *p != '\0') {
        rv = RC_CORRUPT;
    }
    return rv;
}

int checkpoint_text_offsets(char *text, checkpoint_text_offset_fn fn,
                            void *arg)
{
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    long long n = -1;
    char tail = 0;
    if (line == NULL || strcmp(line, "0") != 0) {
        return RC_CORRUPT;
    }
    line = strtok_r(NULL, "\n", &save);
    if (line == NULL || sscanf(line, "%lld%c", &n, &tail) != 1 || n < 0) {
        return RC_CORRUPT;
    }
    long long seen = 0;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        char name[META_TOPIC_NAME_BYTES_MAX + 2];
        int part = -1;
        long long off = -1;
        if (sscanf(line, "%250s %d %lld %c", name, &part, &off, &tail) != 3 ||
            part < 0 || off < 0) {
            return RC_CORRUPT;
        }
        int rv = fn(arg, name, part, off);
        if (rv != RC_OK) {
            return rv;
        }
        seen++;
    }
    return seen == n ? RC_OK : RC_CORRUPT;
}

struct checkpoint_text__find {
    const char *topic;
    int32_t partition;
    int64_t offset;
    bool found;
};

static int find_cb(void *arg, const char *topic, int32_t partition,
                   int64_t offset)
{
    struct checkpoint_text__find *f = arg;
    if (partition == f->partition && strcmp(topic, f->topic) == 0) {
        f->offset = offset;
        f->found = true;
    }
    return RC_OK;
}

int checkpoint_text_offset(char *text, const char *topic, int32_t partition,
                           int64_t *offset, bool *found)
{
    struct checkpoint_text__find f = {.topic = topic, .partition = partition};
    int rv = checkpoint_text_offsets(text, find_cb, &f);
    *offset = rv == RC_OK ? f.offset : 0;
    *found = rv == RC_OK && f.found;
    return rv;
}
