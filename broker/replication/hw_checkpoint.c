/* The high-watermark checkpoint (broker/replication/hw_checkpoint.h). */
#include "broker/replication/hw_checkpoint.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "common/limits.h"
#include "common/rc.h"

#define HW_CHECKPOINT__FIRST_BYTES (64u * 1024)
#define HW_CHECKPOINT__BYTES_MAX (64u * 1024 * 1024)

/* Finds topic-partition in text, every line of which must parse and whose
 * count must match. */
static int parse(char *text, const char *topic, int32_t partition,
                 int64_t *hw)
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
    *hw = 0;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        char name[META_TOPIC_NAME_BYTES_MAX + 2];
        int part = -1;
        long long off = -1;
        if (sscanf(line, "%250s %d %lld %c", name, &part, &off, &tail) != 3 ||
            part < 0 || off < 0) {
            return RC_CORRUPT;
        }
        if (part == partition && strcmp(name, topic) == 0) {
            *hw = off;
        }
        seen++;
    }
    return seen == n ? RC_OK : RC_CORRUPT;
}

int hw_checkpoint_read(const char *dir, const char *topic, int32_t partition,
                       int64_t *hw)
{
    *hw = 0;
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
        if (rv == RC_TOO_LARGE) {
            rv = RC_CORRUPT;
        }
        if (rv == RC_OK) {
            rv = parse(buf, topic, partition, hw);
        }
        free(buf);
        if (rv != RC_OK) {
            *hw = 0;
        }
        return rv;
    }
}
