/* A small streaming JSON writer for the CLI's --json output and the
 * processes' HTTP endpoints: compact, one document, commas placed by the
 * writer. Strings are escaped as RFC 8259 requires; bytes that are not
 * valid UTF-8 become U+FFFD, so any input gives valid JSON. Nesting
 * deeper than JSON_DEPTH_MAX is a programmer error (assert). The writer
 * owns nothing; out is borrowed. */
#ifndef CAIRN_COMMON_JSON_H
#define CAIRN_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Our documents nest seven levels (status: object, topics, topic,
 * partitions, partition, end_offsets, replica); the bound leaves room. */
#define JSON_DEPTH_MAX 16

struct json {
    FILE *out;
    int depth;                        /* open containers */
    bool has_items[JSON_DEPTH_MAX + 1]; /* at each depth: a comma is due */
    bool after_key;                   /* a key was written, value next */
};

void json_init(struct json *j, FILE *out);

void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);

/* A key inside an object; the next call writes its value. */
void json_key(struct json *j, const char *key);

void json_string(struct json *j, const char *s);
void json_int(struct json *j, int64_t v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/* v when known, else null. */
void json_int_or_null(struct json *j, bool known, int64_t v);

/* s, or null for NULL and "" (no value). */
void json_string_or_null(struct json *j, const char *s);

/* Writes the escaped body of s (no quotes) to out. */
void json_escape(FILE *out, const char *s);

/* Ends the document with a newline; every container must be closed. */
void json_finish(struct json *j);

#endif
