/* Table-driven option parsing for the commands that take many options
 * (produce, consume, bench): "--name VALUE" or "--name=VALUE", flags,
 * numbers checked against their bounds, repeatable options, "--" ending
 * the options. Positional arguments are moved to the front of what
 * remains of argv, in order. Values are borrowed from argv. Also the
 * --help and usage errors of every command, cairn itself included. One
 * thread. */
#ifndef CAIRN_CLI_OPTS_H
#define CAIRN_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/assert.h"

enum opts_kind {
    OPTS_FLAG,   /* out: bool *, set to true */
    OPTS_STRING, /* out: const char ** */
    OPTS_INT32,  /* out: int32_t *, in [min, max] */
    OPTS_INT64,  /* out: int64_t *, in [min, max] */
    OPTS_LIST,   /* out: struct opts_list *, each value appended */
};

/* Values of a repeatable option; items has cap entries. */
struct opts_list {
    const char **items;
    size_t n;
    size_t cap;
};

struct opts_spec {
    const char *name; /* "--count" */
    enum opts_kind kind;
    void *out;
    int64_t min; /* numbers only */
    int64_t max;
};

/* The command being parsed, for messages and --help. */
struct opts_cmd {
    const char *name;         /* "produce"; NULL for cairn itself */
    void (*usage)(FILE *out); /* its lines of the usage text */
};

/* Parses argv[first..argc). Returns -1 to go on, with the *n_pos
 * positional arguments moved to argv[first..first + *n_pos); or the exit
 * code to stop with: 0 after --help (usage on stdout), 2 after a usage
 * error (message and usage on stderr). */
MUST_CHECK int opts_parse(const struct opts_cmd *cmd, int argc, char **argv,
                          int first, const struct opts_spec *specs,
                          size_t n_specs, int *n_pos);

/* opts_parse() from argv[1] for a command that takes one topic (produce,
 * consume): -1 to go on with *topic set, else the exit code; any number
 * of positional arguments but one is a usage error. */
MUST_CHECK int opts_parse_topic(const struct opts_cmd *cmd, int argc,
                                char **argv, const struct opts_spec *specs,
                                size_t n_specs, const char **topic);

/* "cairn: NAME: MESSAGE" ("cairn: MESSAGE" without a name), then the
 * usage, on stderr; returns 2. */
int opts_usage_error(const struct opts_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* True for "--help", "-h" and "help". */
bool opts_is_help(const char *arg);

/* The usage on stdout; returns 0. */
int opts_help(const struct opts_cmd *cmd);

/* True when s is "key=value" with a non-empty key. */
bool opts_is_key_value(const char *s);

/* "3d", "72h", "45m", "600s", "250ms" or bare seconds, in ms; false for
 * anything else or an overflow. */
bool opts_parse_duration_ms(const char *s, uint64_t *out);

#endif
