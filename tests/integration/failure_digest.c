/* What a failed integration test leaves behind: the last lines of each
 * node's log. Each test's cluster writes them to a file named after the
 * test as it is destroyed (the directory goes with it); the runner keeps
 * the files of the tests that failed and prints them after the last test,
 * so that the tail of a CI page shows what the nodes said. */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/cluster.h"

enum {
    DIGEST_LINES = 10,     /* per node */
    DIGEST_LINE_MAX = 240 /* characters kept of one line */
};

static void digest_path(char *out, size_t cap, pid_t runner,
                        const char *category, const char *name)
{
    const char *base = getenv("TMPDIR");
    snprintf(out, cap, "%s/cairn-digest.%d.%s.%s",
             base != NULL && base[0] != '\0' ? base : "/tmp", (int)runner,
             category, name);
}

/* The last DIGEST_LINES lines of the file at path, to out. */
static void tail(FILE *out, const char *label, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return;
    }
    static char ring[DIGEST_LINES][DIGEST_LINE_MAX + 2];
    char line[4096];
    size_t n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char *slot = ring[n % DIGEST_LINES];
        size_t len = strnlen(line, DIGEST_LINE_MAX);
        memcpy(slot, line, len);
        if (len == 0 || slot[len - 1] != '\n') {
            slot[len++] = '\n'; /* cut */
        }
        slot[len] = '\0';
        n++;
    }
    fclose(f);
    fprintf(out, "--- %s: last %zu of %zu lines\n", label,
            n < DIGEST_LINES ? n : (size_t)DIGEST_LINES, n);
    for (size_t i = n < DIGEST_LINES ? 0 : n - DIGEST_LINES; i < n; i++) {
        fputs(ring[i % DIGEST_LINES], out);
    }
}

/* Called by cluster_destroy() in the test's own process. */
void cluster_digest(const struct cluster *c)
{
    const struct criterion_test *t = criterion_current_test;
    if (t == NULL) {
        return;
    }
    char path[PATH_MAX];
    digest_path(path, sizeof path, getppid(), t->category, t->name);
    FILE *out = fopen(path, "a");
    if (out == NULL) {
        return;
    }
    char label[64];
    for (int i = 0; i < c->n_controllers; i++) {
        snprintf(label, sizeof label, "controller %d", c->controllers[i].id);
        tail(out, label, c->controllers[i].log);
    }
    for (int i = 0; i < c->n_brokers; i++) {
        snprintf(label, sizeof label, "broker %d", c->brokers[i].id);
        tail(out, label, c->brokers[i].log);
    }
    fclose(out);
}

static char *digest;      /* the failed tests' files, one after another */
static size_t digest_len;
static FILE *digest_out; /* writes to digest (open_memstream) */

static void keep(const char *category, const char *name, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return;
    }
    if (digest_out == NULL) {
        digest_out = open_memstream(&digest, &digest_len);
    }
    if (digest_out != NULL) {
        fprintf(digest_out, "=== %s::%s failed; its nodes said:\n", category,
                name);
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
            fwrite(buf, 1, n, digest_out);
        }
    }
    fclose(f);
}

ReportHook(POST_FINI)(struct criterion_test_stats *stats)
{
    char path[PATH_MAX];
    digest_path(path, sizeof path, getpid(), stats->test->category,
                stats->test->name);
    bool failed = stats->test_status == CR_STATUS_FAILED ||
                  stats->crashed || stats->timed_out;
    if (failed) {
        keep(stats->test->category, stats->test->name, path);
    }
    unlink(path);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
    (void)stats;
    if (digest_out != NULL && fclose(digest_out) == 0) {
        fflush(stdout);
        fwrite(digest, 1, digest_len, stderr);
    }
    free(digest);
}
