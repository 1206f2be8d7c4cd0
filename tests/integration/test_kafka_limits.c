/* What one client can cost a broker, with real processes on 127.0.0.1:
 * a client that pipelines requests and never reads its answers holds a
 * bounded amount of the broker's memory, which comes back after it
 * leaves; idle connections are closed after connections.max.idle.ms;
 * more connections than max.connections.per.ip from one address are
 * refused while the broker keeps serving others; and a normal client
 * still gets its answers through all of it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "common/kafka/kafka_client.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/kafka_frame.h"
#include "common/rc.h"
#include "common/writer.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/cluster.h"
#include "tests/lib/kafka_wire.h"

/* The most a never-reading client may add to the broker's RSS, and what
 * must come back within LIMITS_RSS_WAIT_MS of it leaving. */
#define LIMITS_RSS_GROWTH_MAX (64u << 20)
#define LIMITS_RSS_LEFT_MAX (16u << 20)
#define LIMITS_RSS_WAIT_MS 10000
/* The pipelining client stops after this many bytes, or once the broker
 * has not taken a byte for LIMITS_STALL_MS. */
#define LIMITS_SEND_BYTES_MAX (256u << 20)
#define LIMITS_STALL_MS 2000
#define LIMITS_CROWD 8           /* clients that never read */
#define LIMITS_HEALTH_TOPIC "health" /* acks=all writes after each fault */
#define LIMITS_STRANGERS 16      /* more than max.connections=12 */
#define LIMITS_ISR_WAIT_MS 40000
#define LIMITS_DEAD_QUORUM_S 4   /* seconds of retries measured */
#define LIMITS_NOFILE 128        /* the starved broker's open-file limit */
#define LIMITS_TOPICS 6          /* of LIMITS_PARTITIONS partitions: more */
#define LIMITS_PARTITIONS 50     /* logs than those fds can open */
#define LIMITS_BACKOFF_SETTLE_S 5 /* before the starved broker's cost is read */
/* The budgeted broker's limit: fewer descriptors than its logs, room for
 * the connections a restart brings. */
#define LIMITS_BUDGET_NOFILE 256

static struct cluster c;

static void teardown(void)
{
    cluster_destroy(&c);
}

TestSuite(kafka_limits, .fini = teardown, .timeout = 180);

static void start_n(const char *broker_config, int brokers)
{
    memset(&c, 0, sizeof c);
    c.broker_extra_config = broker_config;
    cluster_start(&c, 3, brokers);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000),
              "cluster not ready; logs in %s", c.dir);
    cr_assert_eq(cluster_create_topic(&c, LIMITS_HEALTH_TOPIC, 1, 1),
                 KAFKA_ERROR_NONE);
}

static void start(const char *broker_config)
{
    start_n(broker_config, 1);
}

/* The broker's resident set, bytes. */
static size_t broker_rss(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)c.brokers[0].pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "broker gone");
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "VmRSS: %zu kB", &kb) == 1) {
            break;
        }
    }
    fclose(f);
    cr_assert_gt(kb, 0);
    return kb * 1024;
}

static int raw_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* A normal client's round trip: Metadata on a new connection. */
static void served(const char *after, bool write);

/* A normal client's round trips: Metadata and an acks=all write. */
static void assert_served(const char *after)
{
    served(after, true);
}

/* Metadata only: for a broker starved of file descriptors, which cannot
 * even reach its controllers and so leads nothing. */
static void assert_alive(const char *after)
{
    served(after, false);
}

static void served(const char *after, bool write)
{
    int status = 0;
    cr_assert_eq(waitpid(c.brokers[0].pid, &status, WNOHANG), 0,
                 "broker exited after %s; log %s", after, c.brokers[0].log);
    struct kafka_client kc;
    cr_assert(kafka_wire_connect(&kc, c.brokers[0].port),
              "no connection after %s", after);
    struct kafka_MetadataRequest rq = {.TopicsCnt = -1};
    struct writer body;
    writer_init(&body, 4096);
    cr_assert_eq(kafka_metadata_request_encode(&body, 4, &rq), RC_OK);
    size_t len = 0;
    uint8_t *answer = kafka_wire_roundtrip(&kc, KAFKA_API_METADATA, 4,
                                           &body, &len);
    cr_assert_not_null(answer, "no Metadata answer after %s", after);
    free(answer);
    writer_free(&body);
    if (!write) {
        kafka_client_close(&kc);
        return;
    }
    /* And an acks=all write, the round trip that matters. */
    struct built_batch b = batch_build(1, 10, 1000, 1);
    int16_t err = KAFKA_ERROR_NONE;
    uint64_t deadline = cluster_now_ms() + 15000;
    do {
        err = kafka_wire_produce(&kc, LIMITS_HEALTH_TOPIC, 0, b.bytes, b.len,
                                 -1);
        if (err == KAFKA_ERROR_NONE) {
            break;
        }
        /* A new connection for the next try, the old one closed: a
         * retry that leaked its connection filled a starved broker's
         * descriptors by itself. */
        kafka_client_close(&kc);
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL); /* retry pause */
        if (!kafka_wire_connect(&kc, c.brokers[0].port)) {
            break;
        }
    } while (cluster_now_ms() < deadline);
    built_batch_free(&b);
    cr_assert_eq(err, KAFKA_ERROR_NONE, "acks=all produce after %s: %d",
                 after, err);
    kafka_client_close(&kc);
}

/* One ApiVersions v0 request frame, the smallest answer there is. */
static void api_versions_frame(struct writer *w, int32_t id)
{
    size_t at = kafka_frame_request_begin(w, KAFKA_API_API_VERSIONS, 0, id,
                                          "x");
    cr_assert_eq(kafka_frame_end(w, at), RC_OK);
}

/* A client that sends ApiVersions requests back to back and never reads,
 * until the broker takes no more (or LIMITS_SEND_BYTES_MAX): its socket,
 * still open; *sent the bytes the broker took. */
static int pipeline_without_reading(size_t *sent)
{
    struct writer frames; /* back to back, sent over and over */
    writer_init(&frames, 1u << 20);
    for (int32_t i = 0; i < 4096; i++) {
        api_versions_frame(&frames, i);
    }
    int fd = raw_connect(c.brokers[0].port);
    cr_assert_eq(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
    size_t at = 0;
    uint64_t last_progress = cluster_now_ms();
    *sent = 0;
    while (*sent < LIMITS_SEND_BYTES_MAX &&
           cluster_now_ms() - last_progress < LIMITS_STALL_MS) {
        ssize_t n = send(fd, frames.data + at, frames.len - at,
                         MSG_NOSIGNAL);
        if (n > 0) {
            *sent += (size_t)n;
            at = (at + (size_t)n) % frames.len;
            last_progress = cluster_now_ms();
            continue;
        }
        cr_assert(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
                  "send: errno %d", errno);
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        (void)poll(&p, 1, 100);
    }
    writer_free(&frames);
    return fd;
}

Test(kafka_limits, unread_answers_hold_bounded_memory_given_back_after)
{
    start(NULL);
    assert_served("start");
    size_t base = broker_rss();
    size_t sent = 0;
    int fd = pipeline_without_reading(&sent);
    size_t peak = broker_rss();
    cr_assert_leq(peak, base + LIMITS_RSS_GROWTH_MAX,
                  "RSS %zu MiB -> %zu MiB after %zu MiB of unread requests",
                  base >> 20, peak >> 20, sent >> 20);
    assert_served("a client that never reads");
    close(fd);
    cr_log_info("RSS %zu MiB before, %zu MiB with %zu MiB of requests "
                "never answered", base >> 20, peak >> 20, sent >> 20);
    uint64_t deadline = cluster_now_ms() + LIMITS_RSS_WAIT_MS;
    size_t now = broker_rss();
    while (now > base + LIMITS_RSS_LEFT_MAX && cluster_now_ms() < deadline) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL); /* RSS poll interval */
        now = broker_rss();
    }
    cr_assert_leq(now, base + LIMITS_RSS_LEFT_MAX,
                  "RSS %zu MiB, %zu MiB before the client came", now >> 20,
                  base >> 20);
    assert_served("the client left");
}

/* Over queued.max.request.bytes, the clients holding memory wait; a new
 * client still gets its answers. */
Test(kafka_limits, a_crowd_that_never_reads_does_not_starve_a_client)
{
    start("queued.max.request.bytes=2097152\n");
    size_t base = broker_rss();
    int fds[LIMITS_CROWD];
    for (int i = 0; i < LIMITS_CROWD; i++) {
        size_t sent = 0;
        fds[i] = pipeline_without_reading(&sent);
    }
    size_t peak = broker_rss();
    cr_assert_leq(peak, base + LIMITS_RSS_GROWTH_MAX,
                  "RSS %zu MiB -> %zu MiB", base >> 20, peak >> 20);
    assert_served("a crowd that never reads");
    for (int i = 0; i < LIMITS_CROWD; i++) {
        close(fds[i]);
    }
    assert_served("the crowd left");
}

/* The raw connection fd is closed by the broker within budget_ms. */
static bool closed_within(int fd, uint64_t budget_ms)
{
    uint64_t deadline = cluster_now_ms() + budget_ms;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(deadline > cluster_now_ms()
                             ? deadline - cluster_now_ms()
                             : 0);
        if (poll(&p, 1, left) == 1) {
            uint8_t b;
            ssize_t n = recv(fd, &b, 1, 0);
            return n == 0 || (n < 0 && errno == ECONNRESET);
        }
        if (cluster_now_ms() >= deadline) {
            return false;
        }
    }
}

Test(kafka_limits, idle_connections_close_after_connections_max_idle_ms)
{
    start("connections.max.idle.ms=1000\n");
    int fd = raw_connect(c.brokers[0].port);
    uint64_t t0 = cluster_now_ms();
    cr_assert(closed_within(fd, 10000), "an idle connection stayed open");
    cr_assert_geq(cluster_now_ms() - t0, 900);
    close(fd);
    assert_served("closing an idle connection");
}

/* The partition's ISR size as the active controller has it. */
static int isr_size(const char *topic, int32_t *leader)
{
    struct meta_image img;
    meta_image_init(&img);
    int n = -1;
    if (cluster_image(&c, &img)) {
        const struct meta_topic *t = meta_image_topic(&img, topic);
        if (t != NULL) {
            n = (int)t->partitions[0].isr.n;
            *leader = t->partitions[0].leader;
        }
    }
    meta_image_free(&img);
    return n;
}

static int wait_isr(const char *topic, int want, int32_t *leader)
{
    uint64_t deadline = cluster_now_ms() + LIMITS_ISR_WAIT_MS;
    int n = isr_size(topic, leader);
    while (n != want && cluster_now_ms() < deadline) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL); /* metadata poll interval */
        n = isr_size(topic, leader);
    }
    return n;
}

/* Strangers fill the leader up to max.connections and sit idle; a
 * follower that restarts still gets its connection (the quietest
 * stranger makes room) and rejoins the ISR. */
Test(kafka_limits, a_restarted_follower_gets_in_past_idle_strangers)
{
    start_n("max.connections=12\nreplica.lag.time.max.ms=3000\n", 3);
    cr_assert_eq(cluster_create_topic(&c, "crowded", 1, 3),
                 KAFKA_ERROR_NONE);
    int32_t leader = -1;
    cr_assert_eq(wait_isr("crowded", 3, &leader), 3);
    struct cluster_node *l = cluster_broker(&c, leader);
    struct cluster_node *follower = NULL;
    for (int i = 0; i < c.n_brokers; i++) {
        if (c.brokers[i].id != leader) {
            follower = &c.brokers[i];
        }
    }
    cr_assert_not_null(l);
    cluster_node_signal(&c, follower, SIGKILL, true);
    cr_assert_eq(wait_isr("crowded", 2, &leader), 2);
    int fds[LIMITS_STRANGERS];
    int refused = 0;
    for (int i = 0; i < LIMITS_STRANGERS; i++) {
        fds[i] = raw_connect(l->port);
    }
    for (int i = 0; i < LIMITS_STRANGERS; i++) {
        refused += closed_within(fds[i], 200);
    }
    cr_assert_gt(refused, 0, "the bound was never reached");
    cluster_node_start(&c, follower);
    cr_assert_eq(wait_isr("crowded", 3, &leader), 3,
                 "the follower never got back in; logs in %s", c.dir);
    for (int i = 0; i < LIMITS_STRANGERS; i++) {
        close(fds[i]);
    }
}

/* utime + stime of pid, in clock ticks. */
static long long cpu_ticks(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command may hold spaces */
    cr_assert_not_null(p);
    long long utime = 0;
    long long stime = 0;
    cr_assert_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
                        "%*u %lld %lld", &utime, &stime),
                 2);
    return utime + stime;
}

static long file_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    long n = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF) {
        n += ch == '\n';
    }
    fclose(f);
    return n;
}

/* With every controller down, a request that needs the active controller
 * (an auto-creation here) is retried with a growing pause: it used to
 * spin at a full core with tens of thousands of connection attempts a
 * second. */
Test(kafka_limits, calls_to_a_dead_quorum_back_off)
{
    start(NULL);
    assert_served("start");
    for (int i = 0; i < c.n_controllers; i++) {
        cluster_node_signal(&c, &c.controllers[i], SIGKILL, true);
    }
    long lines0 = file_lines(c.brokers[0].log);
    long long t0 = cpu_ticks(c.brokers[0].pid);
    uint64_t w0 = cluster_now_ms();
    struct kafka_client kc;
    cr_assert(kafka_wire_connect(&kc, c.brokers[0].port));
    struct kafka_MetadataRequestTopic topic = {.Name = slice_from_str("spin")};
    struct kafka_MetadataRequest rq = {
        .Topics = &topic, .TopicsCnt = 1, .AllowAutoTopicCreation = true};
    struct writer body;
    writer_init(&body, 4096);
    cr_assert_eq(kafka_metadata_request_encode(&body, 4, &rq), RC_OK);
    size_t len = 0;
    uint8_t *answer = kafka_wire_roundtrip(&kc, KAFKA_API_METADATA, 4, &body,
                                           &len);
    cr_assert_not_null(answer, "no Metadata answer without controllers");
    free(answer);
    writer_free(&body);
    kafka_client_close(&kc);
    struct timespec ts = {LIMITS_DEAD_QUORUM_S, 0};
    nanosleep(&ts, NULL); /* the retries' window: what they cost is read */
    long long ticks = cpu_ticks(c.brokers[0].pid) - t0;
    uint64_t wall = cluster_now_ms() - w0;
    double share = (double)ticks * 1000.0 / (double)sysconf(_SC_CLK_TCK) /
                   (double)wall;
    long lines = file_lines(c.brokers[0].log) - lines0;
    cr_log_info("broker CPU %.1f%% of a core, %ld log lines in %llu ms",
                share * 100, lines, (unsigned long long)wall);
    cr_assert_lt(share, 0.25, "the broker spent %.0f%% of a core",
                 share * 100);
    cr_assert_lt(lines, 1000, "%ld log lines", lines);
}

/* The broker's CPU share of one core and its new log lines over
 * seconds, from now. */
static void measure_idle_cost(int seconds, double *share, long *lines)
{
    long lines0 = file_lines(c.brokers[0].log);
    long long t0 = cpu_ticks(c.brokers[0].pid);
    uint64_t w0 = cluster_now_ms();
    struct timespec ts = {seconds, 0};
    nanosleep(&ts, NULL); /* the window whose cost is read */
    long long ticks = cpu_ticks(c.brokers[0].pid) - t0;
    uint64_t wall = cluster_now_ms() - w0;
    *share = (double)ticks * 1000.0 / (double)sysconf(_SC_CLK_TCK) /
             (double)wall;
    *lines = file_lines(c.brokers[0].log) - lines0;
}

/* Topics of more logs than nofile descriptors hold, then broker 1 killed
 * and started again under that soft limit. */
static void restart_starved(rlim_t nofile)
{
    for (int i = 0; i < LIMITS_TOPICS; i++) {
        char name[32];
        snprintf(name, sizeof name, "starved-%d", i);
        cr_assert_eq(cluster_create_topic(&c, name, LIMITS_PARTITIONS, 1),
                     KAFKA_ERROR_NONE);
    }
    /* Back with too few descriptors for every log it hosts: it learns
     * them all from its first metadata fetch and opens what it can. */
    cluster_node_signal(&c, &c.brokers[0], SIGKILL, true);
    struct rlimit saved;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &saved), 0);
    struct rlimit low = {nofile, saved.rlim_max};
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
    cluster_node_start(&c, &c.brokers[0]); /* inherits the low limit */
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &saved), 0);
}

/* Out of file descriptors (a log.fds.max above the limit, kept as set),
 * the logs that cannot open wait with a growing pause: they used to be
 * retried on every loop turn (a busy core and hundreds of thousands of
 * ERROR lines a minute). */
Test(kafka_limits, logs_that_cannot_open_back_off)
{
    start("log.fds.max=1000000\n");
    restart_starved(LIMITS_NOFILE);
    uint64_t deadline = cluster_now_ms() + 20000;
    while (!cluster_log_contains(&c.brokers[0], "cannot open its log") &&
           cluster_now_ms() < deadline) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL); /* log poll interval */
    }
    cr_assert(cluster_log_contains(&c.brokers[0], "cannot open its log"),
              "no log ever failed to open; raise LIMITS_TOPICS (log %s)",
              c.brokers[0].log);
    /* The pauses grow from 100 ms; a few seconds in, each log is tried
     * about once in the window measured. */
    struct timespec settle = {LIMITS_BACKOFF_SETTLE_S, 0};
    nanosleep(&settle, NULL); /* the back-off grows, as it is meant to */
    double share = 0;
    long lines = 0;
    measure_idle_cost(LIMITS_DEAD_QUORUM_S, &share, &lines);
    cr_log_info("broker CPU %.1f%% of a core, %ld log lines", share * 100,
                lines);
    cr_assert_lt(share, 0.25, "the broker spent %.0f%% of a core",
                 share * 100);
    cr_assert_lt(lines, 1000, "%ld log lines", lines);
    assert_alive("logs that cannot open");
}

/* With a descriptor budget below its limit, the starved broker opens
 * every log: idle ones close their files (broker/log/log_fds.c), none
 * fails to open, and it leads them all again. */
Test(kafka_limits, a_descriptor_budget_opens_more_logs_than_descriptors)
{
    start("log.fds.max=16\n");
    restart_starved(LIMITS_BUDGET_NOFILE);
    int32_t want = LIMITS_TOPICS * LIMITS_PARTITIONS + 1; /* and health */
    uint64_t deadline = cluster_now_ms() + 30000;
    double hosted = 0;
    while (cluster_now_ms() < deadline &&
           (hosted = cluster_metric(
                &c.brokers[0], "kafka_server_replicamanager_partitioncount")) <
               want) {
        struct timespec ts = {0, 500 * 1000 * 1000};
        nanosleep(&ts, NULL); /* metrics poll interval (each a socket) */
    }
    cr_assert_eq(hosted, want, "every log open: %.0f of %d (log %s)", hosted,
                 want, c.brokers[0].log);
    cr_assert_not(cluster_log_contains(&c.brokers[0], "cannot open its log"),
                  "no log failed to open (log %s)", c.brokers[0].log);
    cr_assert_leq(cluster_metric(&c.brokers[0], "cairn_log_open_segment_files"),
                  16.0);
    cr_assert_gt(cluster_metric(&c.brokers[0], "cairn_log_parks_total"), 0);
    assert_served("a descriptor budget below the logs");
}

/* The broker's only log dir stops taking writes (here: replaced by a
 * file): the broker stops, as Kafka's does when every log dir has
 * failed, instead of retrying forever. */
Test(kafka_limits, a_failed_log_dir_stops_the_broker)
{
    start(NULL);
    assert_served("start");
    char dir[4200];
    char moved[4300];
    cluster_broker_log_dir(&c, &c.brokers[0], dir, sizeof dir);
    snprintf(moved, sizeof moved, "%s.gone", dir);
    cr_assert_eq(rename(dir, moved), 0);
    FILE *f = fopen(dir, "w");
    cr_assert_not_null(f);
    fclose(f);
    cr_assert_eq(cluster_create_topic(&c, "doomed", 1, 1), KAFKA_ERROR_NONE);
    pid_t pid = c.brokers[0].pid;
    int status = 0;
    uint64_t deadline = cluster_now_ms() + 20000;
    pid_t got = 0;
    while ((got = waitpid(pid, &status, WNOHANG)) == 0 &&
           cluster_now_ms() < deadline) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL); /* exit poll interval */
    }
    cr_assert_eq(got, pid, "the broker kept running; log %s",
                 c.brokers[0].log);
    c.brokers[0].pid = 0;
    cr_assert(WIFEXITED(status) &&
                  WEXITSTATUS(status) == BROKER_EXIT_LOG_DIR_FAILED,
              "status %d", status);
    cr_assert(cluster_log_contains(&c.brokers[0],
                                   "stopped: its only log dir"));
    cr_assert_eq(unlink(dir), 0);
    cr_assert_eq(rename(moved, dir), 0);
}

#define LIMITS_UNKNOWN_TOPICS 100000 /* KAFKA_REQUEST_TOPICS_MAX */

/* A Metadata request naming 100,000 unknown topics is answered, each
 * UNKNOWN_TOPIC_OR_PARTITION, as Kafka does. Before, the handler spent
 * the request's arena on an auto-creation list as long as the request,
 * ran out, and closed the connection with no answer. */
Test(kafka_limits, metadata_naming_100000_unknown_topics_is_answered)
{
    start(NULL);
    struct kafka_MetadataRequestTopic *t =
        calloc(LIMITS_UNKNOWN_TOPICS, sizeof *t);
    char(*names)[24] = calloc(LIMITS_UNKNOWN_TOPICS, sizeof *names);
    cr_assert(t != NULL && names != NULL);
    for (int i = 0; i < LIMITS_UNKNOWN_TOPICS; i++) {
        snprintf(names[i], sizeof names[i], "unknown-%d", i);
        t[i].Name = slice_from_str(names[i]);
    }
    struct kafka_MetadataRequest rq = {.Topics = t,
                                       .TopicsCnt = LIMITS_UNKNOWN_TOPICS};
    struct writer w;
    writer_init(&w, 4u << 20);
    cr_assert_eq(kafka_metadata_request_encode(&w, 4, &rq), RC_OK);
    struct kafka_wire_answer ans;
    cr_assert(kafka_wire_call(cluster_broker(&c, 1)->port, KAFKA_API_METADATA,
                              4, &w, &ans), "no answer");
    struct kafka_MetadataResponse resp;
    cr_assert_eq(kafka_metadata_response_decode(&ans.r, 4, &ans.a, &resp),
                 RC_OK);
    cr_assert_eq(resp.TopicsCnt, LIMITS_UNKNOWN_TOPICS);
    for (int i = 0; i < resp.TopicsCnt; i++) {
        cr_assert_eq(resp.Topics[i].ErrorCode,
                     KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION, "topic %d", i);
    }
    kafka_wire_answer_free(&ans);
    writer_free(&w);
    free(t);
    free(names);
    assert_served("a Metadata request of 100,000 unknown topics");
}
