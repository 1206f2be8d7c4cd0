/* See consumer_assignment.h. */
#include "common/kafka/consumer_assignment.h"

#include <stdio.h>
#include <string.h>

#include "common/rc.h"
#include "common/reader.h"

/* Appends to out at *at (always NUL-terminated), cut at cap. */
static void put(char *out, size_t cap, size_t *at, const char *s, size_t n)
{
    for (size_t i = 0; i < n && *at + 1 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        out[(*at)++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    out[*at] = '\0';
}

int consumer_assignment_format(const uint8_t *p, size_t len, char *out,
                               size_t cap)
{
    struct reader r;
    size_t at = 0;
    out[0] = '\0';
    if (len == 0) {
        return RC_OK; /* a member given nothing */
    }
    reader_init(&r, p, len);
    (void)reader_i16(&r); /* version: every one starts alike */
    int32_t n_topics = reader_array_len(&r, 2 + 4);
    for (int32_t t = 0; r.rc == RC_OK && t < n_topics; t++) {
        struct slice name = reader_string(&r);
        int32_t n_parts = reader_array_len(&r, 4);
        if (r.rc != RC_OK) {
            break;
        }
        if (t > 0) {
            put(out, cap, &at, "; ", 2);
        }
        put(out, cap, &at, (const char *)name.ptr, name.len);
        put(out, cap, &at, " ", 1);
        for (int32_t i = 0; i < n_parts && r.rc == RC_OK; i++) {
            char num[16];
            int n = snprintf(num, sizeof num, "%s%d", i > 0 ? "," : "",
                             (int)reader_i32(&r));
            put(out, cap, &at, num, (size_t)n);
        }
    }
    if (r.rc != RC_OK) {
        snprintf(out, cap, "?");
        return r.rc;
    }
    return RC_OK;
}
