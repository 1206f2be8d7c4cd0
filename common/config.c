/* Properties-file configuration (common/config.h). Loading runs in three
 * steps: the parser cuts the text into logical lines and key/value pairs the
 * way java.util.Properties.load does and stores the raw values (a later
 * duplicate wins); unknown keys are reported; then every schema entry is
 * parsed and checked, from its raw value or its default, as Kafka's
 * ConfigDef does. Startup code on the main thread; the result is read-only
 * afterwards. Reads the file with stdio; no libuv, no clock. */
#include "common/config.h"

#include "common/limits.h"
#include "common/rc.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Values and keys quoted in messages are cut to this many bytes. */
#define CONFIG__SHOW_BYTES 96u

/* Name used in messages for config_load_string's text. */
#define CONFIG__TEXT_NAME "config text"

/* One schema entry's current value. text is the trimmed value (owned);
 * during parsing it holds the raw value from the file instead. */
struct config__slot {
    char *text;
    bool is_set;
    union {
        int64_t i; /* CONFIG_INT, CONFIG_LONG */
        bool b;    /* CONFIG_BOOL */
        double d;  /* CONFIG_DOUBLE */
    } v;
};

struct config {
    const struct config_def *defs;     /* borrowed schema */
    size_t n_defs;
    const struct config_def **sorted;  /* defs by name, for bsearch */
    struct config__slot *slots;        /* parallel to defs */
    char **unknown;                    /* CONFIG_KEYS_MAX entries */
    size_t n_unknown;
    size_t n_set;                      /* slots with is_set */
    struct tracer *t;
};

/* Text being cut into logical lines; see config_parser_next(). */
struct config__parser {
    const char *src;    /* path or CONFIG__TEXT_NAME, for messages */
    const char *text;
    size_t len;
    size_t pos;
    size_t line_no;     /* natural line of text[pos], from 1 */
    size_t start_line;  /* where the current logical line began */
    char *line;         /* logical line, continuations joined */
    size_t line_len;
    char *kv;           /* unescaped "key\0value\0" */
    char *err;
    size_t err_len;
};

__attribute__((format(printf, 3, 4))) static void
config_errf(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;

    if (err_len == 0) {
        return;
    }
    ASSERT(err != NULL);
    va_start(ap, fmt);
    (void)vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
}

/* A copy of s fit for a one-line message: control bytes become '?', and
 * long text is cut with "...". */
static const char *config_show(const char *s, char buf[CONFIG__SHOW_BYTES])
{
    size_t n = 0;

    while (s[n] != '\0' && n < CONFIG__SHOW_BYTES - 4) {
        unsigned char ch = (unsigned char)s[n];
        buf[n] = ch < 0x20 || ch == 0x7f ? '?' : s[n];
        n++;
    }
    if (s[n] != '\0') {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return buf;
}

/* Blanks between tokens of a properties line. */
static bool config_is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\f';
}

/* Java's String.trim(): every byte up to ' ' counts as space. */
static bool config_is_space(char ch)
{
    return ch != '\0' && (unsigned char)ch <= ' ';
}

/* --- Schema ------------------------------------------------------------ */

static int config_def_cmp(const void *a, const void *b)
{
    const struct config_def *const *da = a;
    const struct config_def *const *db = b;

    return strcmp((*da)->name, (*db)->name);
}

static int config_def_cmp_name(const void *key, const void *elem)
{
    const struct config_def *const *d = elem;

    return strcmp(key, (*d)->name);
}

/* True and the schema index in *index if name is in the schema. */
static bool config_find(const struct config *c, const char *name,
                        size_t *index)
{
    const struct config_def *const *hit;

    if (c->n_defs == 0) {
        return false;
    }
    hit = bsearch(name, c->sorted, c->n_defs, sizeof c->sorted[0],
                  config_def_cmp_name);
    if (hit == NULL) {
        return false;
    }
    *index = (size_t)(*hit - c->defs);
    return true;
}

static void config_check_def(const struct config_def *d)
{
    ASSERT(d->name != NULL);
    ASSERT(d->name[0] != '\0');
    ASSERT(d->type <= CONFIG_DOUBLE);
    ASSERT(d->min <= d->max);
    if (d->type == CONFIG_INT) {
        ASSERT(d->min >= INT32_MIN);
        ASSERT(d->max <= INT32_MAX);
    }
}

/* --- One value, strictly ------------------------------------------------ */

bool config_value_long(const char *s, int64_t *out)
{
    const char *digits = s + (*s == '+' || *s == '-');
    char *end = NULL;
    long long v;

    /* strtoll would also skip leading blanks; Long.parseLong would not. */
    if (*digits < '0' || *digits > '9') {
        return false;
    }
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0') {
        return false;
    }
    *out = (int64_t)v;
    return true;
}

bool config_value_int(const char *s, int32_t *out)
{
    int64_t v = 0;

    if (!config_value_long(s, &v) || v < INT32_MIN || v > INT32_MAX) {
        return false;
    }
    *out = (int32_t)v;
    return true;
}

bool config_value_bool(const char *s, bool *out)
{
    if (strcasecmp(s, "true") == 0) {
        *out = true;
    } else if (strcasecmp(s, "false") == 0) {
        *out = false;
    } else {
        return false;
    }
    return true;
}

/* Assumes the "C" locale for the decimal point, as a program has until it
 * calls setlocale(). */
bool config_value_double(const char *s, double *out)
{
    char *end = NULL;
    double v;

    if (!(*s == '+' || *s == '-' || *s == '.' || (*s >= '0' && *s <= '9'))) {
        return false; /* blanks, and the start of "nan" or "inf" */
    }
    v = strtod(s, &end); /* underflow is 0 or subnormal, as in Java */
    if (end == s || *end != '\0' || !isfinite(v)) {
        return false;
    }
    *out = v;
    return true;
}

bool config_value_one_of(const char *item, size_t len, const char *choices)
{
    const char *p = choices;

    while (*p != '\0') {
        size_t n = strcspn(p, ",");
        if (n == len && memcmp(p, item, len) == 0) {
            return true;
        }
        p += n;
        while (*p == ',' || *p == ' ') {
            p++;
        }
    }
    return false;
}

bool config_value_list_of(const char *s, const char *choices)
{
    const char *p = s;

    if (*s == '\0') {
        return true;
    }
    for (;;) {
        size_t n = strcspn(p, ",");
        const char *item = p;
        size_t len = n;
        while (len > 0 && config_is_space(*item)) {
            item++;
            len--;
        }
        while (len > 0 && config_is_space(item[len - 1])) {
            len--;
        }
        if (len == 0 || !config_value_one_of(item, len, choices)) {
            return false;
        }
        if (p[n] == '\0') {
            return true;
        }
        p += n + 1;
    }
}

/* --- Values ------------------------------------------------------------ */

static void config_bounds(const struct config_def *d, int64_t *lo,
                          int64_t *hi)
{
    if (d->min != 0 || d->max != 0) {
        *lo = d->min;
        *hi = d->max;
    } else if (d->type == CONFIG_INT) {
        *lo = INT32_MIN;
        *hi = INT32_MAX;
    } else {
        *lo = INT64_MIN;
        *hi = INT64_MAX;
    }
}

static int config_parse_integer(const struct config_def *d, const char *s,
                                int64_t *out, char *err, size_t err_len)
{
    char shown[CONFIG__SHOW_BYTES];
    int64_t lo;
    int64_t hi;
    int64_t v;

    config_bounds(d, &lo, &hi);
    if (!config_value_long(s, &v) || v < lo || v > hi) {
        config_errf(err, err_len,
                    "%s: expected an integer in [%" PRId64 ", %" PRId64
                    "], got '%s'",
                    d->name, lo, hi, config_show(s, shown));
        return RC_CONFIG;
    }
    *out = v;
    return RC_OK;
}

static int config_parse_bool(const struct config_def *d, const char *s,
                             bool *out, char *err, size_t err_len)
{
    char shown[CONFIG__SHOW_BYTES];

    if (!config_value_bool(s, out)) {
        config_errf(err, err_len, "%s: expected true or false, got '%s'",
                    d->name, config_show(s, shown));
        return RC_CONFIG;
    }
    return RC_OK;
}

static int config_parse_double(const struct config_def *d, const char *s,
                               double *out, char *err, size_t err_len)
{
    char shown[CONFIG__SHOW_BYTES];

    if (!config_value_double(s, out)) {
        config_errf(err, err_len, "%s: expected a number, got '%s'", d->name,
                    config_show(s, shown));
        return RC_CONFIG;
    }
    return RC_OK;
}

/* Trims raw, checks it against d and fills *out (its text owned by the
 * caller on success). */
static int config_value_parse(const struct config_def *d, const char *raw,
                              struct config__slot *out, char *err,
                              size_t err_len)
{
    size_t len = strlen(raw);
    int rv = RC_OK;

    while (config_is_space(*raw)) {
        raw++;
        len--;
    }
    while (len > 0 && config_is_space(raw[len - 1])) {
        len--;
    }
    out->text = malloc(len + 1);
    if (out->text == NULL) {
        config_errf(err, err_len, "%s: out of memory", d->name);
        return RC_NOMEM;
    }
    memcpy(out->text, raw, len);
    out->text[len] = '\0';
    switch (d->type) {
    case CONFIG_INT:
    case CONFIG_LONG:
        rv = config_parse_integer(d, out->text, &out->v.i, err, err_len);
        break;
    case CONFIG_BOOL:
        rv = config_parse_bool(d, out->text, &out->v.b, err, err_len);
        break;
    case CONFIG_DOUBLE:
        rv = config_parse_double(d, out->text, &out->v.d, err, err_len);
        break;
    case CONFIG_STRING:
    case CONFIG_LIST:
        break;
    }
    if (rv != RC_OK) {
        free(out->text);
        out->text = NULL;
    }
    return rv;
}

/* A default that does not parse is a bug in the schema. */
static int config_check_default(const struct config_def *d, char *err,
                                size_t err_len)
{
    struct config__slot tmp;
    int rv;

    if (d->default_value == NULL) {
        return RC_OK;
    }
    rv = config_value_parse(d, d->default_value, &tmp, err, err_len);
    ASSERT(rv != RC_CONFIG);
    if (rv == RC_OK) {
        free(tmp.text);
    }
    return rv;
}

/* --- The config object --------------------------------------------------- */

static int config_new(struct config **out, const struct config_def *defs,
                      size_t n_defs, struct tracer *t, char *err,
                      size_t err_len)
{
    struct config *c;
    size_t i;
    int rv = RC_OK;

    ASSERT(defs != NULL || n_defs == 0);
    c = calloc(1, sizeof *c);
    if (c == NULL) {
        goto err;
    }
    c->defs = defs;
    c->n_defs = n_defs;
    c->t = t;
    c->sorted = calloc(n_defs + 1, sizeof c->sorted[0]);
    c->slots = calloc(n_defs + 1, sizeof c->slots[0]);
    c->unknown = calloc(CONFIG_KEYS_MAX, sizeof c->unknown[0]);
    if (c->sorted == NULL || c->slots == NULL || c->unknown == NULL) {
        goto err_after_alloc;
    }
    for (i = 0; i < n_defs; i++) {
        config_check_def(&defs[i]);
        c->sorted[i] = &defs[i];
    }
    if (n_defs > 0) {
        qsort(c->sorted, n_defs, sizeof c->sorted[0], config_def_cmp);
    }
    for (i = 0; i + 1 < n_defs; i++) {
        ASSERT(strcmp(c->sorted[i]->name, c->sorted[i + 1]->name) != 0);
    }
    for (i = 0; i < n_defs && rv == RC_OK; i++) {
        rv = config_check_default(&defs[i], err, err_len);
    }
    if (rv != RC_OK) {
        goto err_after_alloc;
    }
    *out = c;
    return RC_OK;
err_after_alloc:
    config_free(c);
err:
    config_errf(err, err_len, "config: out of memory");
    return RC_NOMEM;
}

void config_free(struct config *c)
{
    size_t i;

    if (c == NULL) {
        return;
    }
    if (c->slots != NULL) {
        for (i = 0; i < c->n_defs; i++) {
            free(c->slots[i].text);
        }
    }
    for (i = 0; i < c->n_unknown; i++) {
        free(c->unknown[i]);
    }
    free(c->unknown);
    free(c->slots);
    free(c->sorted);
    free(c);
}

static void config_warn_unknown(const struct config *c, const char *key)
{
    char shown[CONFIG__SHOW_BYTES];

    TRACE_WARN(c->t,
               "key=%s the configuration was supplied but isn't a known "
               "config",
               config_show(key, shown));
}

/* A copy of text for a key; a key not seen before (new_key) must still
 * fit within CONFIG_KEYS_MAX distinct keys. */
static int config_copy_new(const struct config *c, bool new_key,
                           const char *text, const char *src, char **out,
                           char *err, size_t err_len)
{
    if (new_key && c->n_set + c->n_unknown >= CONFIG_KEYS_MAX) {
        config_errf(err, err_len, "%s: more than %u distinct keys", src,
                    CONFIG_KEYS_MAX);
        return RC_CONFIG;
    }
    *out = strdup(text);
    if (*out == NULL) {
        config_errf(err, err_len, "%s: out of memory", src);
        return RC_NOMEM;
    }
    return RC_OK;
}

/* Lists key as unknown unless it already is; *added tells which. */
static int config_add_unknown(struct config *c, const char *key,
                              const char *src, bool *added, char *err,
                              size_t err_len)
{
    char *copy;
    size_t i;

    *added = false;
    for (i = 0; i < c->n_unknown; i++) {
        if (strcmp(c->unknown[i], key) == 0) {
            return RC_OK;
        }
    }
    int rv = config_copy_new(c, true /* new key */, key, src, &copy, err,
                             err_len);
    if (rv != RC_OK) {
        return rv;
    }
    ASSERT(c->n_unknown < CONFIG_KEYS_MAX);
    c->unknown[c->n_unknown++] = copy;
    *added = true;
    return RC_OK;
}

/* Stores the raw value of a key from the file; a later duplicate wins. */
static int config_put_raw(struct config *c, const char *key,
                          const char *value, const char *src, char *err,
                          size_t err_len)
{
    struct config__slot *s;
    bool added;
    char *copy;
    size_t i;

    if (!config_find(c, key, &i)) {
        return config_add_unknown(c, key, src, &added, err, err_len);
    }
    s = &c->slots[i];
    int rv = config_copy_new(c, !s->is_set, value, src, &copy, err, err_len);
    if (rv != RC_OK) {
        return rv;
    }
    free(s->text);
    s->text = copy;
    if (!s->is_set) {
        s->is_set = true;
        c->n_set++;
    }
    return RC_OK;
}

/* Replaces every raw value with its parsed form, or the default. */
static int config_finish(struct config *c, char *err, size_t err_len)
{
    struct config__slot tmp;
    size_t i;
    int rv;

    for (i = 0; i < c->n_defs; i++) {
        const struct config_def *d = &c->defs[i];
        struct config__slot *s = &c->slots[i];
        const char *raw = s->is_set ? s->text : d->default_value;

        if (raw == NULL) {
            config_errf(err, err_len,
                        "%s: missing required configuration, which has no "
                        "default value",
                        d->name);
            return RC_CONFIG;
        }
        rv = config_value_parse(d, raw, &tmp, err, err_len);
        if (rv != RC_OK) {
            return rv;
        }
        free(s->text);
        s->text = tmp.text;
        s->v = tmp.v;
    }
    return RC_OK;
}

/* --- Parser ------------------------------------------------------------ */

static int config_parser_init(struct config__parser *p, const char *src,
                              const char *text, size_t len, char *err,
                              size_t err_len)
{
    memset(p, 0, sizeof *p);
    p->src = src;
    p->text = text;
    p->len = len;
    p->line_no = 1;
    p->err = err;
    p->err_len = err_len;
    p->line = malloc(CONFIG_LINE_BYTES_MAX);
    p->kv = malloc(CONFIG_LINE_BYTES_MAX + 2);
    if (p->line == NULL || p->kv == NULL) {
        free(p->line);
        free(p->kv);
        config_errf(err, err_len, "%s: out of memory", src);
        return RC_NOMEM;
    }
    return RC_OK;
}

static void config_parser_fini(struct config__parser *p)
{
    free(p->line);
    free(p->kv);
}

static int config_parser_append(struct config__parser *p, char ch,
                                size_t line_no)
{
    if (ch == '\0') {
        config_errf(p->err, p->err_len, "%s: line %zu: NUL byte", p->src,
                    line_no);
        return RC_CONFIG;
    }
    if (p->line_len == CONFIG_LINE_BYTES_MAX) {
        config_errf(p->err, p->err_len,
                    "%s: line %zu: logical line longer than %u bytes",
                    p->src, p->start_line, CONFIG_LINE_BYTES_MAX);
        return RC_CONFIG;
    }
    p->line[p->line_len++] = ch;
    return RC_OK;
}

/* Cuts the next logical line into p->line, as Properties' LineReader does:
 * blank and comment lines are skipped, leading blanks dropped, and a line
 * ending in an odd number of backslashes joined with the next. *got is false
 * at the end of the text. */
static int config_parser_next(struct config__parser *p, bool *got)
{
    bool skip_blank = true, new_line = true, comment = false;
    bool appended = false, backslash = false;
    int rv;

    p->line_len = 0;
    while (p->pos < p->len) {
        size_t line_no = p->line_no;
        char ch = p->text[p->pos++];
        bool eol = ch == '\n' || ch == '\r';

        if (eol) {
            if (ch == '\r' && p->pos < p->len && p->text[p->pos] == '\n') {
                p->pos++;
            }
            p->line_no++;
        }
        if (skip_blank) {
            if (config_is_blank(ch) || (eol && !appended)) {
                continue;
            }
            skip_blank = false;
            appended = false;
        }
        if (new_line) {
            new_line = false;
            p->start_line = line_no;
            if (ch == '#' || ch == '!') {
                comment = true;
                continue;
            }
        }
        if (!eol) {
            if (comment) {
                continue;
            }
            rv = config_parser_append(p, ch, line_no);
            if (rv != RC_OK) {
                return rv;
            }
            backslash = ch == '\\' ? !backslash : false;
            continue;
        }
        if (comment || p->line_len == 0) {
            comment = false;
            new_line = true;
            skip_blank = true;
            backslash = false;
            continue;
        }
        if (!backslash) {
            *got = true;
            return RC_OK;
        }
        p->line_len--; /* the continuation backslash */
        skip_blank = true;
        appended = true;
        backslash = false;
    }
    /* At the end of the text a dangling continuation backslash is dropped. */
    *got = p->line_len > 0 || backslash;
    if (backslash) {
        p->line_len--;
    }
    return RC_OK;
}

static int config_hex4(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    int i;

    for (i = 0; i < 4; i++) {
        char ch = s[i];
        uint32_t digit;

        if (ch >= '0' && ch <= '9') {
            digit = (uint32_t)(ch - '0');
        } else if (ch >= 'a' && ch <= 'f') {
            digit = (uint32_t)(ch - 'a' + 10);
        } else if (ch >= 'A' && ch <= 'F') {
            digit = (uint32_t)(ch - 'A' + 10);
        } else {
            return RC_CONFIG;
        }
        v = v << 4 | digit;
    }
    *out = v;
    return RC_OK;
}

/* Writes code point cp as UTF-8; returns the bytes written (1..4). */
static size_t config_utf8_put(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Decodes the XXXX of \uXXXX at in[*i..len), joining a UTF-16 surrogate
 * pair written as two escapes; 6 input bytes never make more than 3 output
 * bytes, so decoding in place of the line cannot overflow. */
static int config_unescape_u(const char *in, size_t len, size_t *i,
                             char *out, size_t *o)
{
    uint32_t cp;
    uint32_t low;

    if (len - *i < 4 || config_hex4(in + *i, &cp) != RC_OK) {
        return RC_CONFIG;
    }
    *i += 4;
    if (cp >= 0xd800 && cp <= 0xdbff) {
        if (len - *i < 6 || in[*i] != '\\' || in[*i + 1] != 'u' ||
            config_hex4(in + *i + 2, &low) != RC_OK || low < 0xdc00 ||
            low > 0xdfff) {
            return RC_CONFIG;
        }
        *i += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    } else if ((cp >= 0xdc00 && cp <= 0xdfff) || cp == 0) {
        return RC_CONFIG;
    }
    *o += config_utf8_put(cp, out + *o);
    return RC_OK;
}

/* Decodes Properties escapes in in[0..len) into out, NUL-ended; the output
 * is never longer than the input. */
static int config_unescape(const char *in, size_t len, char *out,
                           size_t *out_len)
{
    size_t i = 0;
    size_t o = 0;
    int rv;

    while (i < len) {
        char ch = in[i++];

        if (ch != '\\') {
            out[o++] = ch;
            continue;
        }
        if (i == len) {
            break; /* a lone trailing backslash stands for nothing */
        }
        ch = in[i++];
        switch (ch) {
        case 't':
            out[o++] = '\t';
            break;
        case 'n':
            out[o++] = '\n';
            break;
        case 'r':
            out[o++] = '\r';
            break;
        case 'f':
            out[o++] = '\f';
            break;
        case 'u':
            rv = config_unescape_u(in, len, &i, out, &o);
            if (rv != RC_OK) {
                return rv;
            }
            break;
        default:
            out[o++] = ch;
            break;
        }
    }
    DEBUG_ASSERT(o <= len);
    out[o] = '\0';
    *out_len = o;
    return RC_OK;
}

/* Splits p->line into key and value as Properties.load0 does: the key ends
 * at the first unescaped '=', ':' or blank; blanks and at most one '=' or
 * ':' after it are skipped. Both point into p->kv. */
static int config_parser_split(struct config__parser *p, const char **key,
                               const char **value)
{
    const char *l = p->line;
    size_t n = p->line_len, k = 0, v, key_len, value_len;
    bool escaped = false, sep = false;

    while (k < n) {
        if (!escaped && (l[k] == '=' || l[k] == ':')) {
            sep = true;
            break;
        }
        if (!escaped && config_is_blank(l[k])) {
            break;
        }
        escaped = l[k] == '\\' ? !escaped : false;
        k++;
    }
    for (v = k < n ? k + 1 : n; v < n; v++) {
        if (!config_is_blank(l[v]) && (sep || (l[v] != '=' && l[v] != ':'))) {
            break;
        }
        sep = sep || !config_is_blank(l[v]);
    }
    if (config_unescape(l, k, p->kv, &key_len) != RC_OK ||
        config_unescape(l + v, n - v, p->kv + key_len + 1, &value_len) !=
            RC_OK) {
        config_errf(p->err, p->err_len,
                    "%s: line %zu: malformed \\uxxxx escape", p->src,
                    p->start_line);
        return RC_CONFIG;
    }
    *key = p->kv;
    *value = p->kv + key_len + 1;
    return RC_OK;
}

static int config_parse_text(struct config *c, struct config__parser *p)
{
    const char *key;
    const char *value;
    bool got;
    int rv;

    /* Each round consumes at least one byte of text, or ends. */
    for (;;) {
        rv = config_parser_next(p, &got);
        if (rv != RC_OK || !got) {
            return rv;
        }
        rv = config_parser_split(p, &key, &value);
        if (rv != RC_OK) {
            return rv;
        }
        rv = config_put_raw(c, key, value, p->src, p->err, p->err_len);
        if (rv != RC_OK) {
            return rv;
        }
    }
}

/* --- Loading ------------------------------------------------------------ */

static int config_load(struct config **out, const char *src, const char *text,
                       size_t len, const struct config_def *defs,
                       size_t n_defs, struct tracer *t, char *err,
                       size_t err_len)
{
    struct config__parser p;
    struct config *c;
    size_t i;
    int rv;

    ASSERT(len <= CONFIG_FILE_BYTES_MAX);
    rv = config_new(&c, defs, n_defs, t, err, err_len);
    if (rv != RC_OK) {
        goto err;
    }
    rv = config_parser_init(&p, src, text, len, err, err_len);
    if (rv != RC_OK) {
        goto err_after_new;
    }
    rv = config_parse_text(c, &p);
    config_parser_fini(&p);
    if (rv != RC_OK) {
        goto err_after_new;
    }
    for (i = 0; i < c->n_unknown; i++) {
        config_warn_unknown(c, c->unknown[i]);
    }
    rv = config_finish(c, err, err_len);
    if (rv != RC_OK) {
        goto err_after_new;
    }
    *out = c;
    return RC_OK;
err_after_new:
    config_free(c);
err:
    ASSERT(rv != RC_OK);
    return rv;
}

int config_load_string(struct config **out, const char *text, size_t len,
                       const struct config_def *defs, size_t n_defs,
                       struct tracer *t, char *err, size_t err_len)
{
    ASSERT(out != NULL);
    ASSERT(text != NULL || len == 0);
    *out = NULL;
    if (len > CONFIG_FILE_BYTES_MAX) {
        config_errf(err, err_len, "%s: larger than %u bytes",
                    CONFIG__TEXT_NAME, CONFIG_FILE_BYTES_MAX);
        return RC_CONFIG;
    }
    return config_load(out, CONFIG__TEXT_NAME, text != NULL ? text : "", len,
                       defs, n_defs, t, err, err_len);
}

/* Reads the whole file into *buf_out (malloc'd), refusing big files. */
static int config_read_file(const char *path, char **buf_out, size_t *len_out,
                            char *err, size_t err_len)
{
    FILE *f;
    char *buf;
    size_t n;
    int read_errno;

    f = fopen(path, "rb");
    if (f == NULL) {
        config_errf(err, err_len, "cannot open config file '%s': %s", path,
                    strerror(errno));
        return RC_CONFIG;
    }
    buf = malloc(CONFIG_FILE_BYTES_MAX + 1);
    if (buf == NULL) {
        fclose(f);
        config_errf(err, err_len, "'%s': out of memory", path);
        return RC_NOMEM;
    }
    errno = 0;
    n = fread(buf, 1, CONFIG_FILE_BYTES_MAX + 1, f);
    read_errno = errno;
    if (ferror(f)) {
        config_errf(err, err_len, "cannot read config file '%s': %s", path,
                    strerror(read_errno));
    } else if (n > CONFIG_FILE_BYTES_MAX) {
        config_errf(err, err_len, "config file '%s' is larger than %u bytes",
                    path, CONFIG_FILE_BYTES_MAX);
    }
    if (ferror(f) || n > CONFIG_FILE_BYTES_MAX) {
        fclose(f);
        free(buf);
        return RC_CONFIG;
    }
    fclose(f);
    *buf_out = buf;
    *len_out = n;
    return RC_OK;
}

int config_load_file(struct config **out, const char *path,
                     const struct config_def *defs, size_t n_defs,
                     struct tracer *t, char *err, size_t err_len)
{
    char *buf;
    size_t len;
    int rv;

    ASSERT(out != NULL);
    ASSERT(path != NULL);
    *out = NULL;
    rv = config_read_file(path, &buf, &len, err, err_len);
    if (rv != RC_OK) {
        return rv;
    }
    rv = config_load(out, path, buf, len, defs, n_defs, t, err, err_len);
    free(buf);
    return rv;
}

/* --- After loading ------------------------------------------------------- */

int config_set(struct config *c, const char *key, const char *value,
               char *err, size_t err_len)
{
    struct config__slot tmp;
    struct config__slot *s;
    bool added;
    size_t i;
    int rv;

    ASSERT(c != NULL);
    ASSERT(key != NULL);
    ASSERT(value != NULL);
    if (!config_find(c, key, &i)) {
        rv = config_add_unknown(c, key, "config", &added, err, err_len);
        if (rv == RC_OK && added) {
            config_warn_unknown(c, key);
        }
        return rv;
    }
    rv = config_value_parse(&c->defs[i], value, &tmp, err, err_len);
    if (rv != RC_OK) {
        return rv;
    }
    s = &c->slots[i];
    free(s->text);
    s->text = tmp.text;
    s->v = tmp.v;
    if (!s->is_set) {
        s->is_set = true;
        c->n_set++;
    }
    return RC_OK;
}

static const struct config__slot *
config_get(const struct config *c, const char *name, enum config_type type)
{
    size_t i = 0;
    bool found;

    ASSERT(c != NULL);
    ASSERT(name != NULL);
    found = config_find(c, name, &i);
    ASSERT(found);
    ASSERT(c->defs[i].type == type);
    return &c->slots[i];
}

int32_t config_int(const struct config *c, const char *name)
{
    const struct config__slot *s = config_get(c, name, CONFIG_INT);

    ASSERT(s->v.i >= INT32_MIN);
    ASSERT(s->v.i <= INT32_MAX);
    return (int32_t)s->v.i;
}

int64_t config_long(const struct config *c, const char *name)
{
    return config_get(c, name, CONFIG_LONG)->v.i;
}

bool config_bool(const struct config *c, const char *name)
{
    return config_get(c, name, CONFIG_BOOL)->v.b;
}

double config_double(const struct config *c, const char *name)
{
    return config_get(c, name, CONFIG_DOUBLE)->v.d;
}

const char *config_string(const struct config *c, const char *name)
{
    return config_get(c, name, CONFIG_STRING)->text;
}

const char *config_list(const struct config *c, const char *name)
{
    return config_get(c, name, CONFIG_LIST)->text;
}

bool config_list_next(const char **pos, const char **item, size_t *item_len)
{
    const char *p;
    const char *end;

    ASSERT(pos != NULL);
    ASSERT(*pos != NULL);
    p = *pos;
    while (config_is_space(*p) || *p == ',') {
        p++;
    }
    if (*p == '\0') {
        *pos = p;
        return false;
    }
    *item = p;
    while (*p != '\0' && *p != ',') {
        p++;
    }
    end = p;
    while (config_is_space(end[-1])) {
        end--;
    }
    *item_len = (size_t)(end - *item);
    *pos = p;
    return true;
}

bool config_is_set(const struct config *c, const char *name)
{
    size_t i = 0;
    bool found;

    ASSERT(c != NULL);
    ASSERT(name != NULL);
    found = config_find(c, name, &i);
    ASSERT(found);
    return c->slots[i].is_set;
}

size_t config_unknown_count(const struct config *c)
{
    ASSERT(c != NULL);
    return c->n_unknown;
}

const char *config_unknown_key(const struct config *c, size_t i)
{
    ASSERT(c != NULL);
    ASSERT(i < c->n_unknown);
    return c->unknown[i];
}
