/* The high-watermark checkpoint (broker/replication/hw_checkpoint.h). */
#include "broker/replication/hw_checkpoint.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/checkpoint_text.h"
#include "common/file.h"
#include "common/limits.h"
#include "common/rc.h"

#define HW_CHECKPOINT__FIRST_BYTES (64u * 1024)
#define HW_CHECKPOINT__BYTES_MAX (64u * 1024 * 1024)

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
            bool found = false;
            rv = checkpoint_text_offset(buf, topic, partition, hw, &found);
        }
        free(buf);
        if (rv != RC_OK) {
            *hw = 0;
        }
        return rv;
    }
}
