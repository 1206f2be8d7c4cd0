/* Configuration from a Java properties file, with Kafka's property names
 * (node.id, log.dirs, log.segment.bytes, ...). A caller describes its keys
 * in a schema, a static array of struct config_def; loading parses the file
 * the way Kafka does (java.util.Properties.load, then ConfigDef's typed
 * parsing), checks every value against the schema and keeps the typed
 * results. Read once at startup on the main thread, then read-only: any
 * thread may call the getters as long as nobody calls config_set().
 *
 * Syntax, as Properties.load reads it:
 *   - lines end at \n, \r or \r\n; blank lines are ignored;
 *   - a line whose first non-blank character is '#' or '!' is a comment;
 *   - leading blanks (space, tab, form feed) of a line are skipped;
 *   - the key ends at the first unescaped '=', ':' or blank; blanks around
 *     the separator are skipped, so "k = v", "k:v" and "k v" are the same;
 *   - a line ending in an odd number of backslashes continues on the next
 *     line, whose leading blanks are skipped;
 *   - escapes: \t \n \r \f, \uXXXX (stored as UTF-8), and a backslash before
 *     any other character stands for that character (\\ \= \: \# \ );
 *   - a later duplicate of a key wins.
 * Other bytes pass through unchanged (files are expected to be UTF-8); a NUL
 * byte in a key or value is an error. As Kafka's ConfigDef does, values are
 * trimmed of surrounding blanks before they are parsed or stored.
 *
 * Types: CONFIG_INT and CONFIG_LONG are decimal integers with an optional
 * sign (strtoll rules, no trailing garbage, overflow is an error), checked
 * against [min, max] unless min == max == 0; CONFIG_BOOL is "true" or
 * "false" in any case; CONFIG_DOUBLE is a finite strtod number; CONFIG_STRING
 * and CONFIG_LIST take any text, a list being comma-separated items.
 *
 * Errors: keys the schema does not know are not fatal; each is reported once
 * through the tracer at WARN, like Kafka's "The configuration 'x' was
 * supplied but isn't a known config.", and kept in a list the caller can
 * read. Everything else that is wrong (unreadable or oversized file, a line
 * longer than CONFIG_LINE_BYTES_MAX, more than CONFIG_KEYS_MAX keys, a bad
 * \u escape, a value of the wrong shape or out of range, a required key
 * without a value) makes loading fail with RC_CONFIG and a one-line message
 * in err naming the path or key, e.g.
 *   "log.segment.bytes: expected an integer in [14, 2147483647], got 'abc'".
 * A bad schema (duplicate name, bad default, min > max) is a programmer
 * error and asserts. */
#ifndef CAIRN_COMMON_CONFIG_H
#define CAIRN_COMMON_CONFIG_H

#include "common/assert.h"
#include "common/trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum config_type {
    CONFIG_INT,    /* int32 */
    CONFIG_LONG,   /* int64 */
    CONFIG_BOOL,   /* true / false */
    CONFIG_STRING, /* any text */
    CONFIG_LIST,   /* comma-separated, kept as the string */
    CONFIG_DOUBLE  /* finite double */
};

struct config_def {
    const char *name;          /* Kafka's property name */
    enum config_type type;
    const char *default_value; /* NULL: required, must be set */
    int64_t min;               /* INT/LONG bounds, inclusive; both 0: */
    int64_t max;               /* the type's own range */
    const char *doc;           /* one sentence for --help */
};

/* Parsed values for one schema. */
struct config;

/* Reads the properties file at path (at most CONFIG_FILE_BYTES_MAX bytes)
 * and checks it against defs[0..n_defs). defs and t are borrowed and must
 * outlive the config; t may be NULL (unknown keys then go unreported, but
 * are still listed). On success stores a new config in *out (free it with
 * config_free). Otherwise stores NULL, writes a message to err (NUL-ended,
 * cut to err_len; err may be NULL when err_len is 0) and returns RC_CONFIG,
 * or RC_NOMEM. */
MUST_CHECK int config_load_file(struct config **out, const char *path,
                                const struct config_def *defs, size_t n_defs,
                                struct tracer *t, char *err, size_t err_len);

/* Same as config_load_file, on len bytes of text (which need not be
 * NUL-ended). */
MUST_CHECK int config_load_string(struct config **out, const char *text,
                                  size_t len, const struct config_def *defs,
                                  size_t n_defs, struct tracer *t, char *err,
                                  size_t err_len);

/* Sets key to value as if the file had said so last, e.g. for an override
 * from the command line; value is parsed and checked the same way. An
 * unknown key is reported and listed, not refused. On RC_CONFIG (bad value,
 * or too many keys) the config is unchanged and err says why. Invalidates
 * pointers earlier returned by config_string/config_list for that key. */
MUST_CHECK int config_set(struct config *c, const char *key, const char *value,
                          char *err, size_t err_len);

/* Typed getters. name must be in the schema with that type; anything else
 * is a programmer error and asserts. Strings belong to the config. */
int32_t config_int(const struct config *c, const char *name);
int64_t config_long(const struct config *c, const char *name);
bool config_bool(const struct config *c, const char *name);
double config_double(const struct config *c, const char *name);
const char *config_string(const struct config *c, const char *name);
/* The whole CONFIG_LIST value, e.g. "/data/a, /data/b". */
const char *config_list(const struct config *c, const char *name);

/* Walks the items of a list value: start with *pos = config_list(c, name);
 * each call points *item at the next item (not NUL-ended), stores its length
 * in *item_len and returns true, or returns false when no items are left.
 * Items are split at commas and trimmed of blanks; empty items are skipped,
 * so "" and " , " are empty lists. */
bool config_list_next(const char **pos, const char **item, size_t *item_len);

/* True if name (in the schema) was in the file or given to config_set,
 * false if its value is the default. */
bool config_is_set(const struct config *c, const char *name);

/* Keys that were supplied but are not in the schema, in the order first
 * seen; i < config_unknown_count(c). */
size_t config_unknown_count(const struct config *c);
const char *config_unknown_key(const struct config *c, size_t i);

/* Frees c and everything it owns; NULL is a no-op. */
void config_free(struct config *c);

/* --- One value, strictly ------------------------------------------------- */

/* The parsers of one value by Kafka's ConfigDef types, for the values of
 * the metadata log: the controller checks a topic or broker config with
 * them before writing it, and brokers read what it wrote with them, so
 * what was accepted is read as it was checked. Strict: the whole string
 * is the value, with no blanks around it (Kafka would trim them; these
 * refuse, so that nothing is stored that another reader could take
 * differently), no trailing bytes and no overflow. Each returns false,
 * leaving *out alone, for a value that does not parse; bounds are the
 * caller's. The properties file trims its values, then uses these too.
 *
 * config_value_long / config_value_int: decimal digits with an optional
 * sign ("+7", "-1", "007"), within int64 / int32. */
MUST_CHECK bool config_value_long(const char *s, int64_t *out);
MUST_CHECK bool config_value_int(const char *s, int32_t *out);
/* "true" or "false" in any case, as Kafka's BOOLEAN. */
MUST_CHECK bool config_value_bool(const char *s, bool *out);
/* A finite number as strtod reads it in the "C" locale ("0.5", "1e-3");
 * never nan or inf. */
MUST_CHECK bool config_value_double(const char *s, double *out);
/* Whether the len bytes of item are one of choices, written the way
 * Kafka prints them: "a, b, c". Case matters. */
bool config_value_one_of(const char *item, size_t len, const char *choices);
/* Whether every item of list s is one of choices: items are split at
 * commas with blanks around them ignored, as Kafka's LIST type splits
 * ("compact, delete"); an empty item ("a,,b", "a,") is none of them. ""
 * is the empty list, which passes. */
bool config_value_list_of(const char *s, const char *choices);

#endif
