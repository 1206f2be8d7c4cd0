/* Streaming JSON writer (common/json.h). */
#include "common/json.h"

#include <inttypes.h>

#include "common/assert.h"

void json_init(struct json *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->has_items[0] = false;
    j->after_key = false;
}

/* Writes the comma owed before a value or a key. */
static void json_separate(struct json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->has_items[j->depth]) {
        fputc(',', j->out);
    }
    j->has_items[j->depth] = true;
}

static void json_open(struct json *j, char c)
{
    json_separate(j);
    ASSERT(j->depth < JSON_DEPTH_MAX);
    fputc(c, j->out);
    j->depth++;
    j->has_items[j->depth] = false;
}

static void json_close(struct json *j, char c)
{
    ASSERT(j->depth > 0);
    ASSERT(!j->after_key);
    j->depth--;
    fputc(c, j->out);
}

void json_object_begin(struct json *j)
{
    json_open(j, '{');
}

void json_object_end(struct json *j)
{
    json_close(j, '}');
}

void json_array_begin(struct json *j)
{
    json_open(j, '[');
}

void json_array_end(struct json *j)
{
    json_close(j, ']');
}

/* Length of the valid UTF-8 sequence at p (1 to 4), or 0 when the bytes
 * there are not one (overlong forms, surrogates, above U+10FFFF). */
static size_t utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    uint32_t cp = c >= 0xf0 ? c & 0x07u : c >= 0xe0 ? c & 0x0fu : c & 0x1fu;
    if (c < 0xc2 || c > 0xf4) {
        return 0; /* continuation byte, overlong lead, or out of range */
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            return 0; /* also stops at the terminating NUL */
        }
        cp = (cp << 6) | (p[i] & 0x3fu);
    }
    bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    bool surrogate = cp >= 0xd800 && cp <= 0xdfff;
    return overlong || surrogate || cp > 0x10ffff ? 0 : n;
}

static void escape_control(FILE *out, unsigned char c)
{
    switch (c) {
    case '\b':
        fputs("\\b", out);
        break;
    case '\f':
        fputs("\\f", out);
        break;
    case '\n':
        fputs("\\n", out);
        break;
    case '\r':
        fputs("\\r", out);
        break;
    case '\t':
        fputs("\\t", out);
        break;
    default:
        fprintf(out, "\\u%04x", (unsigned)c);
        break;
    }
}

void json_escape(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p != '\0') {
        if (*p == '"' || *p == '\\') {
            fputc('\\', out);
            fputc(*p++, out);
        } else if (*p < 0x20) {
            escape_control(out, *p++);
        } else if (*p < 0x80) {
            fputc(*p++, out);
        } else {
            size_t n = utf8_len(p);
            if (n == 0) {
                fputs("\\ufffd", out);
                p++;
            } else {
                fwrite(p, 1, n, out);
                p += n;
            }
        }
    }
}

void json_key(struct json *j, const char *key)
{
    ASSERT(!j->after_key);
    json_separate(j);
    fputc('"', j->out);
    json_escape(j->out, key);
    fputs("\":", j->out);
    j->after_key = true;
}

void json_string(struct json *j, const char *s)
{
    json_separate(j);
    fputc('"', j->out);
    json_escape(j->out, s);
    fputc('"', j->out);
}

void json_int(struct json *j, int64_t v)
{
    json_separate(j);
    fprintf(j->out, "%" PRId64, v);
}

void json_bool(struct json *j, bool v)
{
    json_separate(j);
    fputs(v ? "true" : "false", j->out);
}

void json_null(struct json *j)
{
    json_separate(j);
    fputs("null", j->out);
}

void json_int_or_null(struct json *j, bool known, int64_t v)
{
    if (known) {
        json_int(j, v);
    } else {
        json_null(j);
    }
}

void json_string_or_null(struct json *j, const char *s)
{
    if (s == NULL || s[0] == '\0') {
        json_null(j);
    } else {
        json_string(j, s);
    }
}

void json_finish(struct json *j)
{
    ASSERT(j->depth == 0);
    ASSERT(!j->after_key);
    fputc('\n', j->out);
}
