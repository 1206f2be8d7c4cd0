/* The schema walker of schema_walk.h: Kafka's wire format read and
 * written from the generated table alone. Deliberately shares no code
 * with Cairn's codec (no reader.h, no compact mode of writer.h): lengths,
 * counts and tagged sections are spelled out here as KIP-482 and
 * Kafka's protocol guide describe them. */
#include "tests/unit/common/kafka/schema_walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/rc.h"

const struct kafka_schema_api *schema_walk_find(int16_t api_key)
{
    for (size_t i = 0; i < kafka_schema_apis_count; i++) {
        if (kafka_schema_apis[i].key == api_key) {
            return &kafka_schema_apis[i];
        }
    }
    return NULL;
}

bool schema_walk_in(struct kafka_schema_range r, int16_t v)
{
    return r.min >= 0 && v >= r.min && v <= r.max;
}

static const struct kafka_schema_message *
find_message(int16_t api_key, int16_t version, bool request,
             const char **name)
{
    const struct kafka_schema_api *api = schema_walk_find(api_key);
    if (api == NULL) {
        return NULL;
    }
    const struct kafka_schema_message *m =
        request ? &api->request : &api->response;
    if (!schema_walk_in(m->valid, version)) {
        return NULL;
    }
    *name = api->name;
    return m;
}

/* --- Walking ------------------------------------------------------------- */

struct walk {
    const uint8_t *p;
    size_t end; /* of the current (tagged field's) window */
    size_t pos;
    int16_t version;
    bool flex;
    char path[SCHEMA_WALK_PATH_MAX];
    size_t path_len;
    struct schema_walk_result *res;
};

/* Appends a path segment; returns the length to restore. */
static size_t push(struct walk *w, const char *fmt, ...)
{
    size_t old = w->path_len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(w->path + old, sizeof(w->path) - old, fmt, ap);
    va_end(ap);
    if (n > 0) {
        w->path_len += (size_t)n;
        if (w->path_len >= sizeof(w->path)) {
            w->path_len = sizeof(w->path) - 1;
        }
    }
    return old;
}

static void pop(struct walk *w, size_t old)
{
    w->path_len = old;
    w->path[old] = '\0';
}

static bool fail(struct walk *w, const char *fmt, ...)
{
    struct schema_walk_result *res = w->res;
    res->ok = false;
    res->pos = w->pos;
    memcpy(res->path, w->path, sizeof(res->path));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->why, sizeof(res->why), fmt, ap);
    va_end(ap);
    return false;
}

static bool take(struct walk *w, size_t n, const uint8_t **out)
{
    if (w->end - w->pos < n) {
        return fail(w, "%zu bytes needed at %zu, %zu left", n, w->pos,
                    w->end - w->pos);
    }
    *out = w->p + w->pos;
    w->pos += n;
    return true;
}

static bool be(struct walk *w, size_t n, int64_t *v)
{
    const uint8_t *b = NULL;
    if (!take(w, n, &b)) {
        return false;
    }
    uint64_t u = 0;
    for (size_t i = 0; i < n; i++) {
        u = (u << 8) | b[i];
    }
    /* Sign-extend from n bytes. */
    if (n < 8 && (u >> (8 * n - 1)) != 0) {
        u |= ~(uint64_t)0 << (8 * n);
    }
    *v = (int64_t)u;
    return true;
}

static bool uvarint(struct walk *w, uint32_t *v)
{
    uint64_t u = 0;
    for (int i = 0; i < 5; i++) {
        const uint8_t *b = NULL;
        if (!take(w, 1, &b)) {
            return false;
        }
        u |= (uint64_t)(*b & 0x7f) << (7 * i);
        if ((*b & 0x80) == 0) {
            if (u > UINT32_MAX) {
                return fail(w, "unsigned varint above 2^32");
            }
            *v = (uint32_t)u;
            return true;
        }
    }
    return fail(w, "unsigned varint longer than 5 bytes");
}

/* A length or count: int16 or int32 in classic versions, uvarint N+1 in
 * flexible ones. *n is -1 for null. */
static bool length(struct walk *w, size_t classic_bytes, int64_t *n)
{
    if (w->flex) {
        uint32_t u;
        if (!uvarint(w, &u)) {
            return false;
        }
        *n = (int64_t)u - 1;
        return true;
    }
    if (!be(w, classic_bytes, n)) {
        return false;
    }
    if (*n < -1) {
        return fail(w, "negative length %lld", (long long)*n);
    }
    return true;
}

static bool walk_fields(struct walk *w, const struct kafka_schema_field *f,
                        size_t n);

/* One value of f's type (an array's element if in_array). */
static bool walk_one(struct walk *w, const struct kafka_schema_field *f,
                     bool in_array)
{
    bool nullable = !in_array && schema_walk_in(f->nullable, w->version);
    int64_t v;
    const uint8_t *b;
    switch (f->type) {
    case KS_BOOL:
        if (!be(w, 1, &v)) {
            return false;
        }
        return v == 0 || v == 1 ? true : fail(w, "bool %lld", (long long)v);
    case KS_INT8:
        return be(w, 1, &v);
    case KS_INT16:
    case KS_UINT16:
        return be(w, 2, &v);
    case KS_INT32:
    case KS_UINT32:
        return be(w, 4, &v);
    case KS_INT64:
    case KS_FLOAT64:
        return be(w, 8, &v);
    case KS_UUID:
        return take(w, 16, &b);
    case KS_STRING:
    case KS_BYTES:
    case KS_RECORDS:
        if (!length(w, f->type == KS_STRING ? 2 : 4, &v)) {
            return false;
        }
        if (v == -1) {
            return nullable ? true : fail(w, "null, not nullable here");
        }
        return take(w, (size_t)v, &b);
    case KS_STRUCT:
        if (nullable) {
            /* A nullable struct: int8 -1 (null) or 1, then the struct. */
            if (!be(w, 1, &v)) {
                return false;
            }
            if (v == -1) {
                return true;
            }
            if (v != 1) {
                return fail(w, "struct presence byte %lld", (long long)v);
            }
        }
        return walk_fields(w, f->fields, f->fields_cnt);
    }
    return fail(w, "unknown type %d", (int)f->type);
}

static bool walk_value(struct walk *w, const struct kafka_schema_field *f)
{
    size_t old = push(w, ".%s", f->name);
    if (!f->array) {
        bool ok = walk_one(w, f, false);
        pop(w, old);
        return ok;
    }
    int64_t n;
    if (!length(w, 4, &n)) {
        return false;
    }
    if (n == -1) {
        if (!schema_walk_in(f->nullable, w->version)) {
            return fail(w, "null array, not nullable here");
        }
        pop(w, old);
        return true;
    }
    /* Every element takes at least one byte in the versions walked. */
    if ((uint64_t)n > w->end - w->pos) {
        return fail(w, "%lld elements, %zu bytes left", (long long)n,
                    w->end - w->pos);
    }
    for (int64_t i = 0; i < n; i++) {
        size_t at = push(w, "[%lld]", (long long)i);
        if (!walk_one(w, f, true)) {
            return false;
        }
        pop(w, at);
    }
    pop(w, old);
    return true;
}

static bool present(const struct walk *w, const struct kafka_schema_field *f)
{
    return schema_walk_in(f->versions, w->version);
}

static bool tagged(const struct walk *w, const struct kafka_schema_field *f)
{
    return w->flex && schema_walk_in(f->tagged, w->version);
}

/* A tagged-field section: count, then (tag, size, value) in ascending
 * tag order; a tag the schema does not define here is an error (Kafka
 * skips it, but Cairn's encoders write no tag of their own). */
static bool walk_tags(struct walk *w, const struct kafka_schema_field *f,
                      size_t n)
{
    size_t old = push(w, ".<tags>");
    uint32_t count;
    if (!uvarint(w, &count)) {
        return false;
    }
    int64_t last = -1;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t tag, size;
        if (!uvarint(w, &tag) || !uvarint(w, &size)) {
            return false;
        }
        if ((int64_t)tag <= last) {
            return fail(w, "tag %u after tag %lld", tag, (long long)last);
        }
        last = tag;
        if (size > w->end - w->pos) {
            return fail(w, "tag %u of %u bytes, %zu left", tag, size,
                        w->end - w->pos);
        }
        const struct kafka_schema_field *t = NULL;
        for (size_t k = 0; k < n; k++) {
            if (present(w, &f[k]) && tagged(w, &f[k]) &&
                f[k].tag == (int32_t)tag) {
                t = &f[k];
            }
        }
        if (t == NULL) {
            return fail(w, "tag %u is not in the schema here", tag);
        }
        size_t outer_end = w->end;
        w->end = w->pos + size;
        if (!walk_value(w, t)) {
            return false;
        }
        if (w->pos != w->end) {
            return fail(w, "tag %u (%s): %zu of its %u bytes left", tag,
                        t->name, w->end - w->pos, size);
        }
        w->end = outer_end;
    }
    pop(w, old);
    return true;
}

static bool walk_fields(struct walk *w, const struct kafka_schema_field *f,
                        size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (present(w, &f[i]) && !tagged(w, &f[i]) &&
            !walk_value(w, &f[i])) {
            return false;
        }
    }
    return w->flex ? walk_tags(w, f, n) : true;
}

bool schema_walk_check(int16_t api_key, int16_t version, bool request,
                       const uint8_t *p, size_t len,
                       struct schema_walk_result *res)
{
    memset(res, 0, sizeof(*res));
    const char *name = NULL;
    const struct kafka_schema_message *m =
        find_message(api_key, version, request, &name);
    if (m == NULL) {
        snprintf(res->why, sizeof(res->why), "no schema for %d v%d",
                 api_key, version);
        return false;
    }
    struct walk w = {.p = p, .end = len, .version = version,
                     .flex = schema_walk_in(m->flexible, version),
                     .res = res};
    push(&w, "%s%s", name, request ? "Request" : "Response");
    if (!walk_fields(&w, m->fields, m->fields_cnt)) {
        return false;
    }
    if (w.pos != len) {
        return fail(&w, "%zu bytes left after the last field", len - w.pos);
    }
    res->ok = true;
    res->pos = w.pos;
    return true;
}

/* --- Filling ------------------------------------------------------------- */

struct fill {
    int16_t version;
    bool flex;
    bool tagged;
    uint32_t seq; /* makes each value its own */
    /* Writes null into the bad_null'th non-nullable string, bytes or
     * array met (counting from 0 in candidates; -1: none). */
    int32_t bad_null;
    int32_t candidates;
    const char *bad_name;
};

/* True if this non-nullable field is the one to write null into. */
static bool bad_null(struct fill *s, const struct kafka_schema_field *f)
{
    if (s->candidates++ != s->bad_null) {
        return false;
    }
    s->bad_name = f->name;
    return true;
}

static void put_be(struct writer *w, uint64_t v, size_t n)
{
    for (size_t i = n; i > 0; i--) {
        writer_i8(w, (int8_t)(uint8_t)(v >> (8 * (i - 1))));
    }
}

static void put_uvarint(struct writer *w, uint32_t v)
{
    while (v >= 0x80) {
        writer_i8(w, (int8_t)(uint8_t)(v | 0x80));
        v >>= 7;
    }
    writer_i8(w, (int8_t)(uint8_t)v);
}

/* A length or count, -1 for null (see length()). */
static void put_length(const struct fill *s, struct writer *w, int32_t n,
                       size_t classic_bytes)
{
    if (s->flex) {
        put_uvarint(w, (uint32_t)(n + 1));
    } else {
        put_be(w, (uint64_t)(int64_t)n, classic_bytes);
    }
}

static void fill_fields(struct fill *s, struct writer *w,
                        const struct kafka_schema_field *f, size_t n,
                        bool nulls);

static void fill_one(struct fill *s, struct writer *w,
                     const struct kafka_schema_field *f, bool in_array,
                     bool nulls)
{
    bool nullable = !in_array && schema_walk_in(f->nullable, s->version);
    bool null = nulls && nullable;
    uint32_t x = ++s->seq;
    char text[64];
    switch (f->type) {
    case KS_BOOL:
        put_be(w, x & 1, 1);
        return;
    case KS_INT8:
        put_be(w, 1 + (x & 1), 1);
        return;
    case KS_INT16:
    case KS_UINT16:
        put_be(w, x, 2);
        return;
    case KS_INT32:
    case KS_UINT32:
        put_be(w, 1000 + x, 4);
        return;
    case KS_INT64:
        put_be(w, 1000000 + x, 8);
        return;
    case KS_FLOAT64:
        put_be(w, 0x3ff8000000000000ull, 8); /* 1.5 */
        return;
    case KS_UUID:
        for (int i = 0; i < 16; i++) {
            put_be(w, x + (uint32_t)i, 1);
        }
        return;
    case KS_STRING:
    case KS_BYTES:
    case KS_RECORDS:
        if (null || (!nullable && bad_null(s, f))) {
            put_length(s, w, -1, f->type == KS_STRING ? 2 : 4);
            return;
        }
        snprintf(text, sizeof(text), "%s-%u", f->name, x);
        put_length(s, w, (int32_t)strlen(text),
                   f->type == KS_STRING ? 2 : 4);
        writer_raw(w, text, strlen(text));
        return;
    case KS_STRUCT:
        if (!in_array && schema_walk_in(f->nullable, s->version)) {
            put_be(w, null ? (uint64_t)-1 : 1, 1);
            if (null) {
                return;
            }
        }
        fill_fields(s, w, f->fields, f->fields_cnt, nulls);
        return;
    }
}

static void fill_value(struct fill *s, struct writer *w,
                       const struct kafka_schema_field *f, bool nulls)
{
    if (!f->array) {
        fill_one(s, w, f, false, nulls);
        return;
    }
    bool nullable = schema_walk_in(f->nullable, s->version);
    if ((nulls && nullable) || (!nullable && bad_null(s, f))) {
        put_length(s, w, -1, 4);
        return;
    }
    put_length(s, w, 2, 4);
    fill_one(s, w, f, true, false);
    fill_one(s, w, f, true, true);
}

static void fill_tags(struct fill *s, struct writer *w,
                      const struct kafka_schema_field *f, size_t n,
                      bool nulls)
{
    /* Tags go in ascending order, whatever the order of the fields. */
    int32_t max_tag = -1;
    uint32_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (s->tagged && schema_walk_in(f[i].versions, s->version) &&
            schema_walk_in(f[i].tagged, s->version)) {
            count++;
            max_tag = f[i].tag > max_tag ? f[i].tag : max_tag;
        }
    }
    put_uvarint(w, count);
    for (int32_t tag = 0; tag <= max_tag; tag++) {
        for (size_t i = 0; i < n; i++) {
            if (f[i].tag != tag || !schema_walk_in(f[i].versions,
                                                   s->version) ||
                !schema_walk_in(f[i].tagged, s->version)) {
                continue;
            }
            struct writer value;
            writer_init(&value, w->max);
            fill_value(s, &value, &f[i], nulls);
            put_uvarint(w, (uint32_t)tag);
            put_uvarint(w, (uint32_t)value.len);
            writer_raw(w, value.data, value.len);
            if (value.rc != RC_OK && w->rc == RC_OK) {
                w->rc = value.rc;
            }
            writer_free(&value);
        }
    }
}

static void fill_fields(struct fill *s, struct writer *w,
                        const struct kafka_schema_field *f, size_t n,
                        bool nulls)
{
    for (size_t i = 0; i < n; i++) {
        if (schema_walk_in(f[i].versions, s->version) &&
            !(s->flex && schema_walk_in(f[i].tagged, s->version))) {
            fill_value(s, w, &f[i], nulls);
        }
    }
    if (s->flex) {
        fill_tags(s, w, f, n, nulls);
    }
}

int schema_walk_fill(int16_t api_key, int16_t version, bool request,
                     bool nulls, bool tagged, struct writer *w)
{
    const char *name = NULL;
    const struct kafka_schema_message *m =
        find_message(api_key, version, request, &name);
    if (m == NULL) {
        return RC_INVALID;
    }
    /* The two variants start apart so that booleans differ too. */
    struct fill s = {.version = version,
                     .flex = schema_walk_in(m->flexible, version),
                     .tagged = tagged,
                     .seq = nulls ? 1 : 0,
                     .bad_null = -1};
    fill_fields(&s, w, m->fields, m->fields_cnt, nulls);
    return w->rc;
}

bool schema_walk_fill_bad_null(int16_t api_key, int16_t version,
                               bool request, int32_t index, struct writer *w,
                               const char **field)
{
    const char *name = NULL;
    const struct kafka_schema_message *m =
        find_message(api_key, version, request, &name);
    if (m == NULL) {
        return false;
    }
    struct fill s = {.version = version,
                     .flex = schema_walk_in(m->flexible, version),
                     .bad_null = index};
    fill_fields(&s, w, m->fields, m->fields_cnt, false /* nulls */);
    *field = s.bad_name;
    return s.bad_name != NULL;
}
