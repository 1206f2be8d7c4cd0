/* See cli/cmd/dump_log/dump_log.h: options, and the walk of each path (a
 * partition directory's segments in offset order, then its checkpoints;
 * or one segment file). */
#include "cli/cmd/dump_log/dump_log.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cmd/dump_log/dump_log_internal.h"
#include "cli/util/cli.h"
#include "cli/util/opts.h"
#include "common/limits.h"
#include "common/log_layout.h"
#include "common/rc.h"

/* Segments listed of one directory, at most: a directory with more is
 * not a partition Cairn wrote (a 1 GiB segment each would be a petabyte). */
#define DUMP_LOG__SEGMENTS_MAX (1u << 20)

void dump_log_usage(FILE *out)
{
    fputs("  dump-log [--records] [--max-bytes N] [--json] PATH...\n"
          "      Reads a broker's partition log offline, with no cluster,\n"
          "      as kafka-dump-log.sh does. PATH: a partition directory\n"
          "      (<log.dir>/<topic>-<partition>/) or a segment file\n"
          "      (<base offset>.log). Prints each segment batch by batch:\n"
          "      position, offsets, count, leader epoch, magic, codec and\n"
          "      flags, producer id/epoch/sequence, timestamps, size, and\n"
          "      'crc valid' or 'CRC MISMATCH'; a cut or undecodable tail\n"
          "      with its position; each index file's entries; then the\n"
          "      leader-epoch checkpoint, the partition's high watermark\n"
          "      (the log dir's replication-offset-checkpoint) and the\n"
          "      producer-state snapshot. --records (or --print-records):\n"
          "      each record too, offset, timestamp, key and value,\n"
          "      compressed batches decompressed; --max-bytes: key and\n"
          "      value bytes shown (default 64). --json: one JSON\n"
          "      document. Exits 1 when anything is damaged or\n"
          "      unreadable.\n",
          out);
}

static const struct opts_cmd dump_log_cmd = {"dump-log", dump_log_usage};

int dump_log_parse(int argc, char **argv, struct dump_log_opts *o)
{
    memset(o, 0, sizeof *o);
    o->show_bytes = DUMP_LOG_SHOW_BYTES_DEFAULT;
    bool print_records = false;
    const struct opts_spec specs[] = {
        {"--records", OPTS_FLAG, &o->records, 0, 0},
        {"--print-records", OPTS_FLAG, &print_records, 0, 0},
        {"--json", OPTS_FLAG, &o->json, 0, 0},
        {"--max-bytes", OPTS_INT32, &o->show_bytes, 1,
         DUMP_LOG_SHOW_BYTES_MAX},
    };
    int n_pos = 0;
    int rc = opts_parse(&dump_log_cmd, argc, argv, 1, specs, ARRAY_LEN(specs),
                        &n_pos);
    if (rc >= 0) {
        return rc;
    }
    o->records = o->records || print_records;
    if (n_pos == 0) {
        return opts_usage_error(&dump_log_cmd, "%s",
                                "expected a partition directory or a "
                                "segment file");
    }
    if (n_pos > DUMP_LOG_PATHS_MAX) {
        return opts_usage_error(&dump_log_cmd, "more than %d paths",
                                DUMP_LOG_PATHS_MAX);
    }
    for (int i = 0; i < n_pos; i++) {
        o->paths[o->n_paths++] = argv[1 + i];
    }
    return -1;
}

/* The base offset a segment's name gives ("<20 digits>.log"), or -1. */
static int64_t segment_base(const char *name)
{
    size_t digits = strspn(name, "0123456789");
    if (digits != LOG_LAYOUT_BASE_DIGITS || name[digits] != '.' ||
        strcmp(name + digits + 1, LOG_LAYOUT_SEGMENT_EXT) != 0) {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(name, &end, 10);
    return errno == 0 && end == name + digits ? (int64_t)v : -1;
}

static int by_offset(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The base offsets of dir's segments, sorted, into a fresh *bases. */
static int list_segments(const char *dir, int64_t **bases, size_t *n)
{
    *bases = NULL;
    *n = 0;
    DIR *dp = opendir(dir);
    if (dp == NULL) {
        return RC_IO;
    }
    size_t cap = 0;
    int rv = RC_OK;
    struct dirent *e;
    while (rv == RC_OK && (e = readdir(dp)) != NULL) {
        int64_t base = segment_base(e->d_name);
        if (base < 0) {
            continue;
        }
        if (*n == cap && cap == DUMP_LOG__SEGMENTS_MAX) {
            rv = RC_TOO_LARGE;
            break;
        }
        if (*n == cap) {
            cap = cap == 0 ? 16 : cap * 2;
            int64_t *p = realloc(*bases, cap * sizeof *p);
            rv = p != NULL ? RC_OK : RC_NOMEM;
            *bases = p != NULL ? p : *bases;
        }
        if (rv == RC_OK) {
            (*bases)[(*n)++] = base;
        }
    }
    closedir(dp);
    if (*n > 0) {
        qsort(*bases, *n, sizeof **bases, by_offset);
    }
    return rv;
}

/* "orders-3" names topic "orders", partition 3; false when the name
 * (the last component of dir) is not so. */
static bool partition_of(const char *dir, char *topic, size_t cap,
                         int32_t *partition)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') {
        len--;
    }
    size_t start = len;
    while (start > 0 && dir[start - 1] != '/') {
        start--;
    }
    const char *dash = NULL;
    for (size_t i = start; i < len; i++) {
        dash = dir[i] == '-' ? dir + i : dash;
    }
    if (dash == NULL || dash == dir + start ||
        (size_t)(dash - (dir + start)) >= cap) {
        return false;
    }
    char num[16];
    size_t num_len = (size_t)(dir + len - (dash + 1));
    if (num_len == 0 || num_len >= sizeof num) {
        return false;
    }
    memcpy(num, dash + 1, num_len);
    num[num_len] = '\0';
    if (strspn(num, "0123456789") != num_len ||
        !cli_parse_int32(num, 0, INT32_MAX, partition)) {
        return false;
    }
    memcpy(topic, dir + start, (size_t)(dash - (dir + start)));
    topic[dash - (dir + start)] = '\0';
    return true;
}

/* A path that cannot be dumped at all: why, on stderr too. */
static void path_error(struct dump_log *d, const char *path, const char *why)
{
    dump_log_problem(d);
    cli_error("dump-log: %s: %s", path, why);
    if (d->opts->json) {
        json_key(&d->json, "error");
        json_string(&d->json, why);
    } else {
        fprintf(d->out, "%s: CANNOT READ: %s\n", path, why);
    }
}

/* A partition directory: every segment in offset order, then the
 * checkpoints. */
static void dump_partition(struct dump_log *d, const char *dir)
{
    char topic[META_TOPIC_NAME_BYTES_MAX + 1];
    int32_t partition = -1;
    bool named = partition_of(dir, topic, sizeof topic, &partition);
    int64_t *bases = NULL;
    size_t n = 0;
    int rv = list_segments(dir, &bases, &n);
    if (rv != RC_OK) {
        path_error(d, dir, rv == RC_IO ? strerror(errno) : rc_str(rv));
        free(bases);
        return;
    }
    if (d->opts->json) {
        json_key(&d->json, "topic");
        json_string_or_null(&d->json, named ? topic : NULL);
        json_key(&d->json, "partition");
        json_int_or_null(&d->json, named, partition);
        json_key(&d->json, "segments");
        json_array_begin(&d->json);
    } else {
        fprintf(d->out, "partition %s", dir);
        if (named) {
            fprintf(d->out, " topic=%s partition=%" PRId32, topic, partition);
        }
        fprintf(d->out, " segments=%zu\n", n);
    }
    for (size_t i = 0; i < n; i++) {
        char path[LOG_PATH_BYTES_MAX];
        snprintf(path, sizeof path, "%s/%0*" PRId64 ".%s", dir,
                 LOG_LAYOUT_BASE_DIGITS, bases[i], LOG_LAYOUT_SEGMENT_EXT);
        dump_log_segment(d, path, dir, bases[i]);
    }
    free(bases);
    if (d->opts->json) {
        json_array_end(&d->json);
    }
    dump_log_checkpoints(d, dir, named ? topic : NULL, partition);
}

/* One segment file, with the indexes beside it when its name gives its
 * base offset. */
static void dump_file(struct dump_log *d, const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[LOG_PATH_BYTES_MAX];
    if (slash == NULL) {
        snprintf(dir, sizeof dir, ".");
    } else {
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    }
    int64_t base = segment_base(slash != NULL ? slash + 1 : path);
    if (d->opts->json) {
        json_key(&d->json, "segments");
        json_array_begin(&d->json);
    }
    dump_log_segment(d, path, dir[0] != '\0' ? dir : "/", base);
    if (d->opts->json) {
        json_array_end(&d->json);
    }
}

static void dump_path(struct dump_log *d, const char *path)
{
    struct stat st;
    bool ok = strlen(path) < LOG_PATH_BYTES_MAX - 64;
    ok = ok && stat(path, &st) == 0;
    bool is_dir = ok && S_ISDIR(st.st_mode);
    if (d->opts->json) {
        json_object_begin(&d->json);
        json_key(&d->json, "path");
        json_string(&d->json, path);
        json_key(&d->json, "kind");
        json_string(&d->json, is_dir ? "partition" : "segment");
    }
    if (!ok) {
        path_error(d, path, errno != 0 ? strerror(errno) : "path too long");
    } else if (is_dir) {
        dump_partition(d, path);
    } else {
        dump_file(d, path);
    }
    if (d->opts->json) {
        json_object_end(&d->json);
    }
}

int dump_log_run(const struct dump_log_opts *o, FILE *out)
{
    struct dump_log d = {.opts = o, .out = out};
    if (o->json) {
        json_init(&d.json, out);
        json_object_begin(&d.json);
        json_key(&d.json, "paths");
        json_array_begin(&d.json);
    }
    for (size_t i = 0; i < o->n_paths; i++) {
        errno = 0;
        dump_path(&d, o->paths[i]);
    }
    if (o->json) {
        json_array_end(&d.json);
        json_key(&d.json, "problems");
        json_int(&d.json, d.problems);
        json_object_end(&d.json);
        json_finish(&d.json);
    } else if (d.problems > 0) {
        fprintf(out, "problems=%d\n", d.problems);
    }
    return d.problems > 0 ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}

int dump_log_main(int argc, char **argv)
{
    struct dump_log_opts o;
    int rc = dump_log_parse(argc, argv, &o);
    return rc >= 0 ? rc : dump_log_run(&o, stdout);
}
