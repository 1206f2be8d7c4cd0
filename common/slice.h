/* Borrowed byte ranges: how decoded Kafka strings and bytes point into the
 * frame they came from (librdkafka's rd_kafkap_str_t). A slice owns
 * nothing; it is valid only while the bytes it points into are. Pure,
 * inline, any thread.
 *
 *   ptr == NULL            a null value (nullable string/bytes sent as -1)
 *   ptr != NULL, len == 0  an empty, non-null value
 */
#ifndef CAIRN_COMMON_SLICE_H
#define CAIRN_COMMON_SLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct slice {
    const uint8_t *ptr; /* NULL means null */
    size_t len;         /* 0 when ptr is NULL */
};

static inline struct slice slice_null(void)
{
    struct slice s = {NULL, 0};
    return s;
}

static inline bool slice_is_null(struct slice s)
{
    return s.ptr == NULL;
}

/* A slice over a NUL-terminated C string (without the NUL); NULL gives the
 * null slice. Borrows str. */
static inline struct slice slice_from_str(const char *str)
{
    struct slice s = {(const uint8_t *)str, str != NULL ? strlen(str) : 0};
    return s;
}

/* Byte equality. A null slice equals only another null slice: null and
 * empty are different Kafka values. */
static inline bool slice_eq(struct slice a, struct slice b)
{
    if (a.ptr == NULL || b.ptr == NULL) {
        return a.ptr == b.ptr;
    }
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* True if s holds exactly the bytes of str (without its NUL). A NULL str
 * matches only the null slice; a null slice never matches a string, not
 * even "". */
static inline bool slice_eq_str(struct slice s, const char *str)
{
    return slice_eq(s, slice_from_str(str));
}

#endif
