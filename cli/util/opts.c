/* Table-driven option parsing (cli/util/opts.h). */
#include "cli/util/opts.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "common/assert.h"

int opts_usage_error(const struct opts_cmd *cmd, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (cmd->name != NULL) {
        cli_error("%s: %s", cmd->name, msg);
    } else {
        cli_error("%s", msg);
    }
    fputs(CLI_USAGE_LINE, stderr);
    cmd->usage(stderr);
    return CLI_EXIT_USAGE;
}

bool opts_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 ||
           strcmp(arg, "help") == 0;
}

int opts_help(const struct opts_cmd *cmd)
{
    fputs(CLI_USAGE_LINE, stdout);
    cmd->usage(stdout);
    return CLI_EXIT_OK;
}

bool opts_is_key_value(const char *s)
{
    return s[0] != '=' && strchr(s, '=') != NULL;
}

/* Stores v for spec; -1 to go on, else the exit code. */
static int store(const struct opts_cmd *cmd, const struct opts_spec *spec,
                 const char *v)
{
    switch (spec->kind) {
    case OPTS_FLAG:
        ASSERT(false); /* flags take no value */
        break;
    case OPTS_STRING:
        *(const char **)spec->out = v;
        return -1;
    case OPTS_INT32: {
        int64_t x = 0;
        if (!cli_parse_int64(v, spec->min, spec->max, &x)) {
            break;
        }
        *(int32_t *)spec->out = (int32_t)x;
        return -1;
    }
    case OPTS_INT64:
        if (!cli_parse_int64(v, spec->min, spec->max, (int64_t *)spec->out)) {
            break;
        }
        return -1;
    case OPTS_LIST: {
        struct opts_list *l = spec->out;
        if (l->n == l->cap) {
            return opts_usage_error(cmd, "%s: more than %zu", spec->name,
                                    l->cap);
        }
        l->items[l->n++] = v;
        return -1;
    }
    }
    return opts_usage_error(cmd,
                            "%s: expected a number in [%lld, %lld], "
                            "got '%s'",
                            spec->name, (long long)spec->min,
                            (long long)spec->max, v);
}

/* argv[*i] is an option: finds its spec and stores it. -1 to go on. */
static int one_option(const struct opts_cmd *cmd, int argc, char **argv,
                      int *i, const struct opts_spec *specs, size_t n)
{
    const char *a = argv[*i];
    if (opts_is_help(a)) { /* a is an option: never the word "help" */
        return opts_help(cmd);
    }
    for (size_t k = 0; k < n; k++) {
        if (specs[k].kind == OPTS_FLAG) {
            if (strcmp(a, specs[k].name) == 0) {
                *(bool *)specs[k].out = true;
                return -1;
            }
            continue;
        }
        const char *v = NULL;
        int r = cli_option(argc, argv, i, specs[k].name, &v);
        if (r < 0) {
            return opts_usage_error(cmd, "%s needs a value", specs[k].name);
        }
        if (r > 0) {
            return store(cmd, &specs[k], v);
        }
    }
    return opts_usage_error(cmd, "unknown option '%s'", a);
}

int opts_parse(const struct opts_cmd *cmd, int argc, char **argv, int first,
               const struct opts_spec *specs, size_t n_specs, int *n_pos)
{
    bool options_done = false;
    *n_pos = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        bool option = !options_done && a[0] == '-' && a[1] != '\0';
        if (option && strcmp(a, "--") == 0) {
            options_done = true;
        } else if (option) {
            int rc = one_option(cmd, argc, argv, &i, specs, n_specs);
            if (rc >= 0) {
                return rc;
            }
        } else {
            argv[first + (*n_pos)++] = argv[i]; /* never ahead of i */
        }
    }
    return -1;
}

int opts_parse_topic(const struct opts_cmd *cmd, int argc, char **argv,
                     const struct opts_spec *specs, size_t n_specs,
                     const char **topic)
{
    int n_pos = 0;
    int rc = opts_parse(cmd, argc, argv, 1, specs, n_specs, &n_pos);
    if (rc >= 0) {
        return rc;
    }
    if (n_pos != 1) {
        return opts_usage_error(cmd, "expected one topic, got %d", n_pos);
    }
    *topic = argv[1];
    return -1;
}

/* "3d", "72h", "45m", "600s", "250ms" or bare seconds, in ms; false for
 * anything else or an overflow. */
bool opts_parse_duration_ms(const char *s, uint64_t *out)
{
    char *end = NULL;
    if (s[0] < '0' || s[0] > '9') {
        return false;
    }
    unsigned long long n = strtoull(s, &end, 10);
    static const struct {
        const char *suffix;
        uint64_t ms;
    } units[] = {{"ms", 1},    {"s", 1000},    {"", 1000},
                 {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    for (size_t i = 0; i < ARRAY_LEN(units); i++) {
        if (strcmp(end, units[i].suffix) == 0) {
            return !__builtin_mul_overflow((uint64_t)n, units[i].ms, out);
        }
    }
    return false;
}
