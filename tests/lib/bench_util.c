/* Benchmark helper (tests/lib/bench_util.h). Main thread only. */
#include "tests/lib/bench_util.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/meta/meta.h"
#include "tests/lib/child.h"

#define BENCH_TOPIC_BUDGET_MS 10000 /* until a new topic is hosted */
#define BENCH_TOPIC_POLL_MS 10
#define BENCH_TOPIC_UNSEEN_MS 500   /* for a broker that logs nothing */
#define BENCH_KEY_BYTES 64
#define BENCH_EXE_BYTES 4200
#define BENCH_COMMAND_BYTES 1024    /* a command line in a message */

struct cluster *bench_cluster;
static const char *bench_name = "bench";

void bench_set_name(const char *name)
{
    bench_name = name;
}

void bench_fail(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s: FAILED: ", bench_name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (bench_cluster != NULL) {
        struct cluster *c = bench_cluster;
        bench_cluster = NULL;
        fprintf(stderr, "%s: node logs in %s (set "
                "CAIRN_KEEP_TEST_DIR=1 to keep them)\n", bench_name, c->dir);
        cluster_destroy(c);
    }
    abort();
}

double bench_clock_ms(void)
{
    struct timespec ts;
    int rv = clock_gettime(CLOCK_MONOTONIC, &ts);
    ASSERT(rv == 0);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void bench_pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    (void)nanosleep(&ts, NULL); /* an early wake only shortens a poll */
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, size_t n)
{
    ASSERT(n > 0);
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

long bench_env_long(const char *name, long def, long max)
{
    const char *s = getenv(name);
    if (s == NULL || s[0] == '\0') {
        return def;
    }
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || v < 1 || v > max) {
        bench_fail("%s=%s: expected 1..%ld", name, s, max);
    }
    return v;
}

void bench_cluster_start(struct cluster *c, int controllers, int brokers)
{
    bench_cluster = c;
    cluster_start(c, controllers, brokers);
    if (!cluster_wait_ready(c, cluster_now_ms() + BENCH_READY_BUDGET_MS)) {
        bench_fail("cluster not ready in %d ms", BENCH_READY_BUDGET_MS);
    }
}

void bench_cluster_stop(struct cluster *c)
{
    ASSERT(bench_cluster == c);
    bench_cluster = NULL;
    cluster_destroy(c);
}

/* ------------------------------------------------------------------------
 * Fresh topics */

/* True once every replica of every partition of t logged that it leads
 * or follows it; *hosts gets a bit for each broker index hosting one. */
static bool topic_hosted(struct cluster *c, const struct meta_topic *t,
                         unsigned *hosts)
{
    *hosts = 0;
    for (int32_t p = 0; p < t->n_partitions; p++) {
        const struct meta_replica_set *rs = &t->partitions[p].replicas;
        for (int32_t i = 0; i < rs->n; i++) {
            struct cluster_node *n = cluster_broker(c, rs->ids[i]);
            ASSERT(n != NULL);
            char text[META_TOPIC_NAME_BYTES_MAX + 48];
            snprintf(text, sizeof text, " of %s-%d at epoch ", t->name, p);
            if (!cluster_log_contains(n, text)) {
                return false;
            }
            *hosts |= 1u << (n - c->brokers);
        }
    }
    return true;
}

void bench_create_topic(const char *name, int32_t partitions, int32_t rf,
                        int *leaders)
{
    struct cluster *c = bench_cluster;
    ASSERT(c != NULL);
    int16_t err = cluster_create_topic(c, name, partitions, rf);
    if (err != 0) {
        bench_fail("create topic %s: Kafka error %d", name, err);
    }
    struct meta_image img;
    meta_image_init(&img);
    double deadline = bench_clock_ms() + BENCH_TOPIC_BUDGET_MS;
    unsigned hosts = 0;
    const struct meta_topic *t = NULL;
    for (;;) {
        t = cluster_image(c, &img) ? meta_image_topic(&img, name) : NULL;
        if (t != NULL && topic_hosted(c, t, &hosts)) {
            break;
        }
        if (bench_clock_ms() > deadline) {
            bench_fail("topic %s not hosted by its replicas in %d ms",
                       name, BENCH_TOPIC_BUDGET_MS);
        }
        bench_pause_ms(BENCH_TOPIC_POLL_MS);
    }
    for (int32_t p = 0; leaders != NULL && p < partitions; p++) {
        struct cluster_node *n = cluster_broker(c, t->partitions[p].leader);
        if (n == NULL) {
            bench_fail("%s-%d has no leader", name, p);
        }
        leaders[p] = n->port;
    }
    meta_image_free(&img);
    if (hosts != (1u << c->n_brokers) - 1) {
        bench_pause_ms(BENCH_TOPIC_UNSEEN_MS); /* a broker with no replica */
    }
}

/* ------------------------------------------------------------------------
 * Child processes */

double bench_field(const char *line, const char *name, bool required)
{
    char key[BENCH_KEY_BYTES];
    snprintf(key, sizeof key, " %s=", name);
    const char *p = strstr(line, key);
    if (p == NULL) {
        if (required) {
            bench_fail("no %s in: %s", name, line);
        }
        return 0;
    }
    return strtod(p + strlen(key), NULL);
}

/* Writes the whole lines of out[*shown, len) to stdout. */
static void echo_lines(const char *out, size_t *shown)
{
    const char *eol;
    while ((eol = strchr(out + *shown, '\n')) != NULL) {
        fwrite(out + *shown, 1, (size_t)(eol + 1 - (out + *shown)), stdout);
        *shown = (size_t)(eol + 1 - out);
    }
    fflush(stdout);
}

/* Reads the child's stdout into out (cap bytes, kept NUL-terminated)
 * until EOF, echoing whole lines with echo; false when the budget ran
 * out first. */
static bool read_child(int fd, char *out, size_t cap, double deadline_ms,
                       bool echo)
{
    size_t len = 0;
    size_t shown = 0;
    out[0] = '\0';
    for (;;) {
        double left = deadline_ms - bench_clock_ms();
        if (left <= 0) {
            return false;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, (int)left) <= 0) {
            continue; /* EINTR or the deadline, checked above */
        }
        ssize_t got = read(fd, out + len, cap - 1 - len);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return true;
        }
        len += (size_t)got;
        out[len] = '\0';
        if (echo) {
            echo_lines(out, &shown);
        }
        if (len == cap - 1) {
            bench_fail("a child printed more than %zu bytes", cap);
        }
    }
}

bool bench_run_child(const char *exe, char *const argv[],
                     const char *log_path, bool echo, char *out, size_t cap,
                     double budget_ms, int *status)
{
    int fd = -1;
    pid_t pid = child_spawn(exe, argv, NULL, log_path, &fd);
    if (pid < 0) {
        bench_fail("start %s: %s", exe, strerror(errno));
    }
    bool done = read_child(fd, out, cap, bench_clock_ms() + budget_ms, echo);
    close(fd);
    if (!done) {
        kill(pid, SIGKILL);
    }
    *status = 0;
    waitpid(pid, status, 0);
    return done;
}

const char *bench_run_cairn(const char *label, const char *const *args)
{
    ASSERT(bench_cluster != NULL);
    char exe[BENCH_EXE_BYTES];
    snprintf(exe, sizeof exe, "%s/cairn", bench_cluster->bin);
    char *argv[BENCH_ARGS_MAX];
    size_t n = 0;
    argv[n++] = exe;
    for (size_t i = 0; args[i] != NULL; i++) {
        ASSERT(n + 1 < BENCH_ARGS_MAX);
        argv[n++] = (char *)(uintptr_t)args[i];
    }
    argv[n] = NULL;
    static char out[BENCH_OUTPUT_BYTES];
    int status = 0;
    bool done = bench_run_child(exe, argv, NULL, false /* echo */, out,
                                sizeof out, BENCH_CAIRN_BUDGET_MS, &status);
    if (!done || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char cmd[BENCH_COMMAND_BYTES] = "";
        for (size_t i = 1; i < n; i++) {
            size_t len = strlen(cmd);
            snprintf(cmd + len, sizeof cmd - len, " %s", argv[i]);
        }
        bench_fail("%s: `cairn%s` %s (status %d); output: %s", label, cmd,
                   done ? "failed" : "ran out of time", status, out);
    }
    char *line = strstr(out, "RESULT ");
    if (line == NULL) {
        bench_fail("%s: no RESULT line in: %s", label, out);
    }
    char *eol = strchr(line, '\n');
    if (eol != NULL) {
        *eol = '\0';
    }
    printf("run %s %s\n", label, line + strlen("RESULT "));
    fflush(stdout);
    return line;
}

void bench_delete_topic(const char *boot, const char *name)
{
    ASSERT(bench_cluster != NULL);
    char exe[BENCH_EXE_BYTES];
    snprintf(exe, sizeof exe, "%s/cairn", bench_cluster->bin);
    char *argv[] = {exe, "--bootstrap-servers", (char *)(uintptr_t)boot,
                    "topics", "delete", (char *)(uintptr_t)name, NULL};
    static char out[BENCH_OUTPUT_BYTES];
    int status = 0;
    bool done = bench_run_child(exe, argv, NULL, false /* echo */, out,
                                sizeof out, BENCH_CAIRN_BUDGET_MS, &status);
    if (!done || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        bench_fail("delete topic %s: `cairn topics delete` %s (status %d); "
                   "output: %s", name, done ? "failed" : "ran out of time",
                   status, out);
    }
}
