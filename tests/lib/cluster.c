/* Test helper: a real local cluster (tests/lib/cluster.h). */
#include "tests/lib/cluster.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/assert.h"
#include "common/kafka/kafka_error.h"
#include "common/meta/meta_codec.h"
#include "common/rc.h"
#include "tests/lib/tmpdir.h"

uint64_t cluster_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A port free now, below the kernel's ephemeral range (32768 and up), so
 * that no outgoing connection (replica fetchers, clients) can take it
 * before the node binds it; never one handed out before by this process.
 * It stays this process's while it runs: a node stopped and started
 * again binds the same port, and a test running beside it (criterion
 * --jobs) must not take it meanwhile. A lock on a file named after the
 * port says so to every test process; the kernel drops it when the
 * process exits. */
#define CLUSTER__PORT_LOW 20000
#define CLUSTER__PORT_SPAN 12000

bool cluster_claim_port(int port)
{
    const char *base = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/cairn-test-ports",
             base != NULL && base[0] != '\0' ? base : "/tmp");
    (void)mkdir(path, 0777); /* shared by every user's tests */
    size_t len = strlen(path);
    snprintf(path + len, sizeof path - len, "/%d", port);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        return true; /* no lock to take: as before, bind decides */
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return false; /* another test process has it */
    }
    return true; /* fd stays open: the lock lasts as long as we do */
}

static int free_port(void)
{
    static bool used[CLUSTER__PORT_SPAN];
    static unsigned seed;
    if (seed == 0) {
        seed = (unsigned)getpid() ^ (unsigned)cluster_now_ms();
    }
    for (int tries = 0; tries < 10000; tries++) {
        seed = seed * 1103515245u + 12345u;
        int off = (int)((seed >> 8) % CLUSTER__PORT_SPAN);
        if (used[off]) {
            continue;
        }
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        ASSERT(fd >= 0);
        struct sockaddr_in a = {
            .sin_family = AF_INET,
            .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
            .sin_port = htons((uint16_t)(CLUSTER__PORT_LOW + off))};
        bool ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
        close(fd);
        if (ok && cluster_claim_port(CLUSTER__PORT_LOW + off)) {
            used[off] = true;
            return CLUSTER__PORT_LOW + off;
        }
    }
    ASSERT(!"no free port below the ephemeral range");
    return -1;
}

static void find_bin(struct cluster *c)
{
    const char *env = getenv("CAIRN_BIN");
    if (env != NULL && env[0] != '\0') {
        snprintf(c->bin, sizeof c->bin, "%s", env);
        return;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ASSERT(n > 0);
    exe[n] = '\0';
    char *d = dirname(exe); /* build/<variant>/tests */
    snprintf(c->bin, sizeof c->bin, "%s/..", d);
}

static void voters(const struct cluster *c, bool raft, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < c->n_controllers; i++) {
        const struct cluster_node *n = &c->controllers[i];
        int w = snprintf(out + len, cap - len, "%s%d@127.0.0.1:%d",
                         i == 0 ? "" : ",", n->id,
                         raft ? n->raft_port : n->port);
        ASSERT(w > 0 && (size_t)w < cap - len);
        len += (size_t)w;
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fputs(text, f);
    fclose(f);
}

static void controller_config(struct cluster *c, struct cluster_node *n)
{
    char rpc[512];
    char raft[512];
    char text[16384];
    voters(c, false, rpc, sizeof rpc);
    voters(c, true, raft, sizeof raft);
    snprintf(text, sizeof text,
             "node.id=%d\nlisteners=CONTROLLER://127.0.0.1:%d\n"
             "controller.quorum.voters=%s\ncontroller.quorum.raft.voters=%s\n"
             "controller.quorum.raft.secret=%s\n"
             "metadata.log.dir=%s/controller-%d/metadata\n"
             "broker.heartbeat.interval.ms=%lld\n"
             "broker.session.timeout.ms=%lld\n"
             "controller.quorum.election.timeout.ms=%lld\n"
             "default.replication.factor=%d\nnum.partitions=1\n"
             "metrics.port=%d\n",
             n->id, n->port, rpc, raft, c->raft_secret, c->dir, n->id,
             (long long)c->heartbeat_interval_ms,
             (long long)c->session_timeout_ms,
             (long long)c->election_timeout_ms,
             c->n_brokers < 3 ? (c->n_brokers > 0 ? c->n_brokers : 1) : 3,
             n->metrics_port);
    snprintf(n->config, sizeof n->config, "%s/controller-%d.properties",
             c->dir, n->id);
    snprintf(n->log, sizeof n->log, "%s/controller-%d.log", c->dir, n->id);
    write_file(n->config, text);
}

void cluster_broker_log_dir(const struct cluster *c,
                            const struct cluster_node *n, char *out,
                            size_t cap)
{
    int w = snprintf(out, cap, "%s/broker-%d/logs", c->dir, n->id);
    ASSERT(w > 0 && (size_t)w < cap);
}

static void broker_config(struct cluster *c, struct cluster_node *n)
{
    char rpc[512];
    char log_dir[4200];
    char text[16384];
    voters(c, false, rpc, sizeof rpc);
    cluster_broker_log_dir(c, n, log_dir, sizeof log_dir);
    snprintf(text, sizeof text,
             "node.id=%d\nlisteners=PLAINTEXT://127.0.0.1:%d\n"
             "controller.quorum.voters=%s\nlog.dirs=%s\n"
             "broker.heartbeat.interval.ms=%lld\n"
             "broker.session.timeout.ms=%lld\nmetrics.port=%d\n%s",
             n->id, n->port, rpc, log_dir,
             (long long)c->heartbeat_interval_ms,
             (long long)c->session_timeout_ms, n->metrics_port,
             c->broker_extra_config != NULL ? c->broker_extra_config : "");
    snprintf(n->config, sizeof n->config, "%s/broker-%d.properties", c->dir,
             n->id);
    snprintf(n->log, sizeof n->log, "%s/broker-%d.log", c->dir, n->id);
    write_file(n->config, text);
}

void cluster_node_start(struct cluster *c, struct cluster_node *n)
{
    ASSERT(n->pid == 0);
    bool controller = n->raft_port != 0;
    char exe[4200];
    snprintf(exe, sizeof exe, "%s/%s", c->bin,
             controller ? "cairn-controller" : "cairn-broker");
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        int fd = open(n->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl(exe, exe, n->config, (char *)NULL);
        _exit(127);
    }
    n->pid = pid;
}

static void make_client(struct cluster *c)
{
    char addrs[CLUSTER_CONTROLLERS_MAX][64];
    const char *ptrs[CLUSTER_CONTROLLERS_MAX];
    for (int i = 0; i < c->n_controllers; i++) {
        snprintf(addrs[i], sizeof addrs[i], "127.0.0.1:%d",
                 c->controllers[i].port);
        ptrs[i] = addrs[i];
    }
    ASSERT(uv_loop_init(&c->loop) == 0);
    ASSERT(rpc_client_init(&c->client, &c->loop, ptrs,
                           (size_t)c->n_controllers, NULL) == RC_OK);
}

void cluster_start(struct cluster *c, int n_controllers, int n_brokers)
{
    ASSERT(n_controllers <= CLUSTER_CONTROLLERS_MAX);
    ASSERT(n_brokers <= CLUSTER_BROKERS_MAX);
    if (c->session_timeout_ms == 0) {
        c->session_timeout_ms = 3000;
    }
    if (c->heartbeat_interval_ms == 0) {
        c->heartbeat_interval_ms = 500;
    }
    if (c->election_timeout_ms == 0) {
        c->election_timeout_ms = 500;
    }
    tmpdir_make(c->dir, sizeof c->dir);
    find_bin(c);
    /* A fresh secret per cluster: clusters of parallel tests never talk. */
    uint8_t raw[CLUSTER_RAFT_SECRET_RAW];
    ASSERT(getrandom(raw, sizeof raw, 0) == (ssize_t)sizeof raw);
    for (size_t i = 0; i < sizeof raw; i++) {
        snprintf(c->raft_secret + 2 * i, 3, "%02x", raw[i]);
    }
    c->n_controllers = n_controllers;
    c->n_brokers = n_brokers;
    for (int i = 0; i < n_controllers; i++) {
        c->controllers[i] = (struct cluster_node){.id = 101 + i,
                                                  .port = free_port(),
                                                  .raft_port = free_port(),
                                                  .metrics_port = free_port()};
    }
    for (int i = 0; i < n_brokers; i++) {
        c->brokers[i] = (struct cluster_node){.id = (c->broker_ids_from_zero
                                                         ? 0
                                                         : 1) + i,
                                              .port = free_port(),
                                              .metrics_port = free_port()};
    }
    for (int i = 0; i < n_controllers; i++) {
        controller_config(c, &c->controllers[i]);
        cluster_node_start(c, &c->controllers[i]);
    }
    for (int i = 0; i < n_brokers; i++) {
        broker_config(c, &c->brokers[i]);
        cluster_node_start(c, &c->brokers[i]);
    }
    make_client(c);
}

int cluster_node_signal(struct cluster *c, struct cluster_node *n, int sig,
                        bool wait)
{
    (void)c;
    ASSERT(n->pid > 0);
    ASSERT(kill(n->pid, sig) == 0);
    if (!wait) {
        return 0;
    }
    int status = 0;
    uint64_t deadline = cluster_now_ms() + 30000;
    while (cluster_now_ms() < deadline) {
        pid_t got = waitpid(n->pid, &status, WNOHANG);
        if (got == n->pid) {
            n->pid = 0;
            return status;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL); /* polling a child's exit, bounded above */
    }
    kill(n->pid, SIGKILL);
    waitpid(n->pid, &status, 0);
    n->pid = 0;
    return -1;
}

static void stop_all(struct cluster *c, struct cluster_node *nodes, int n)
{
    for (int i = 0; i < n; i++) {
        if (nodes[i].pid > 0) {
            kill(nodes[i].pid, SIGCONT);
            cluster_node_signal(c, &nodes[i], SIGTERM, true);
        }
    }
}

/* The last lines of each node's log, kept for the report of a failed
 * test; only the integration tests' runner has it (the simulators link
 * this file too). */
void cluster_digest(const struct cluster *c) __attribute__((weak));

void cluster_destroy(struct cluster *c)
{
    if (cluster_digest != NULL) {
        cluster_digest(c); /* before the nodes log their shutdown */
    }
    stop_all(c, c->brokers, c->n_brokers);
    stop_all(c, c->controllers, c->n_controllers);
    rpc_client_close(c->client);
    uv_run(&c->loop, UV_RUN_DEFAULT);
    uv_loop_close(&c->loop);
    if (getenv("CAIRN_KEEP_TEST_DIR") == NULL) {
        tmpdir_remove(c->dir);
    } else {
        fprintf(stderr, "cluster kept in %s\n", c->dir);
    }
}

struct call_state {
    bool done;
    Cairn__Response *resp;
};

static void call_cb(void *arg, int rc, const uint8_t *payload, size_t len)
{
    struct call_state *st = arg;
    st->done = true;
    if (rc == RC_OK) {
        st->resp = cairn__response__unpack(NULL, len, payload);
    }
}

Cairn__Response *cluster_call(struct cluster *c, int i,
                              const Cairn__Request *req, uint64_t timeout_ms)
{
    size_t len = cairn__request__get_packed_size(req);
    uint8_t *buf = malloc(len + 1);
    ASSERT(buf != NULL);
    cairn__request__pack(req, buf);
    struct call_state st = {0};
    uv_update_time(&c->loop); /* the loop may have slept since its last run */
    int rv = rpc_client_call(c->client, i, buf, len, timeout_ms, call_cb,
                             &st);
    free(buf);
    if (rv != RC_OK) {
        return NULL;
    }
    while (!st.done) {
        uv_run(&c->loop, UV_RUN_ONCE); /* the call's own timeout ends it */
    }
    return st.resp;
}

static Cairn__Response *describe(struct cluster *c, int i)
{
    Cairn__DescribeClusterRequest dc = CAIRN__DESCRIBE_CLUSTER_REQUEST__INIT;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_DESCRIBE_CLUSTER;
    req.describe_cluster = &dc;
    return cluster_call(c, i, &req, 1000);
}

int cluster_active(struct cluster *c)
{
    for (int i = 0; i < c->n_controllers; i++) {
        if (c->controllers[i].pid == 0) {
            continue;
        }
        Cairn__Response *r = describe(c, i);
        bool active = r != NULL && r->describe_cluster != NULL &&
                      r->describe_cluster->controller != NULL &&
                      r->describe_cluster->controller->active;
        if (r != NULL) {
            cairn__response__free_unpacked(r, NULL);
        }
        if (active) {
            return i;
        }
    }
    return -1;
}

bool cluster_image(struct cluster *c, struct meta_image *img)
{
    int i = cluster_active(c);
    if (i < 0) {
        return false;
    }
    Cairn__Response *r = describe(c, i);
    bool ok = r != NULL && r->describe_cluster != NULL &&
              r->describe_cluster->has_image;
    if (ok) {
        meta_image_free(img);
        meta_image_init(img);
        ok = meta_codec_decode_image(r->describe_cluster->image.data,
                                     r->describe_cluster->image.len,
                                     img) == RC_OK;
    }
    if (r != NULL) {
        cairn__response__free_unpacked(r, NULL);
    }
    return ok;
}

static bool all_brokers_unfenced(struct cluster *c)
{
    struct meta_image img;
    meta_image_init(&img);
    bool ok = cluster_image(c, &img);
    for (int i = 0; ok && i < c->n_brokers; i++) {
        const struct meta_broker *b = meta_image_broker(&img,
                                                        c->brokers[i].id);
        ok = b != NULL && !b->fenced;
    }
    meta_image_free(&img);
    return ok;
}

bool cluster_wait_ready(struct cluster *c, uint64_t deadline_ms)
{
    while (cluster_now_ms() < deadline_ms) {
        if (all_brokers_unfenced(c)) {
            return true;
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL); /* poll interval; the deadline bounds it */
    }
    return false;
}

/* CreateTopics of one topic, with at most one config, on controller i. */
static int16_t create_topic(struct cluster *c, int i, const char *name,
                            int32_t partitions, int32_t rf,
                            const char *config_name,
                            const char *config_value, uint64_t timeout_ms)
{
    Cairn__CreatableTopic t = CAIRN__CREATABLE_TOPIC__INIT;
    t.name = (char *)(uintptr_t)name;
    t.has_num_partitions = t.has_replication_factor = true;
    t.num_partitions = partitions;
    t.replication_factor = rf;
    Cairn__ConfigRecord cr = CAIRN__CONFIG_RECORD__INIT;
    Cairn__ConfigRecord *crs[] = {&cr};
    if (config_name != NULL) {
        cr.name = (char *)(uintptr_t)config_name;
        cr.value = (char *)(uintptr_t)config_value;
        t.n_configs = 1;
        t.configs = crs;
    }
    Cairn__CreatableTopic *ts[] = {&t};
    Cairn__CreateTopicsRequest ct = CAIRN__CREATE_TOPICS_REQUEST__INIT;
    ct.n_topics = 1;
    ct.topics = ts;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_CREATE_TOPICS;
    req.create_topics = &ct;
    Cairn__Response *r = cluster_call(c, i, &req, timeout_ms);
    if (r == NULL) {
        return KAFKA_ERROR_REQUEST_TIMED_OUT;
    }
    int16_t err = (int16_t)r->error_code;
    if (err == KAFKA_ERROR_NONE &&
        (r->create_topics == NULL || r->create_topics->n_results != 1)) {
        err = KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
    } else if (err == KAFKA_ERROR_NONE) {
        err = (int16_t)r->create_topics->results[0]->error_code;
    }
    cairn__response__free_unpacked(r, NULL);
    return err;
}

int16_t cluster_create_topic_on(struct cluster *c, int i, const char *name,
                                int32_t partitions, int32_t rf,
                                uint64_t timeout_ms)
{
    return create_topic(c, i, name, partitions, rf, NULL, NULL, timeout_ms);
}

int16_t cluster_create_topic_with(struct cluster *c, const char *name,
                                  int32_t partitions, int32_t rf,
                                  const char *config_name,
                                  const char *config_value)
{
    int i = cluster_active(c);
    if (i < 0) {
        return KAFKA_ERROR_NOT_CONTROLLER;
    }
    return create_topic(c, i, name, partitions, rf, config_name,
                        config_value, 10000);
}

int16_t cluster_create_topic(struct cluster *c, const char *name,
                             int32_t partitions, int32_t rf)
{
    int i = cluster_active(c);
    if (i < 0) {
        return KAFKA_ERROR_NOT_CONTROLLER;
    }
    return cluster_create_topic_on(c, i, name, partitions, rf, 10000);
}

bool cluster_log_contains(const struct cluster_node *n, const char *text)
{
    FILE *f = fopen(n->log, "r");
    if (f == NULL) {
        return false;
    }
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        found = strstr(line, text) != NULL;
    }
    fclose(f);
    return found;
}

int cluster_log_count(const struct cluster_node *n, const char *text,
                      const char *also)
{
    FILE *f = fopen(n->log, "r");
    if (f == NULL) {
        return 0;
    }
    char line[4096];
    int count = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        count += strstr(line, text) != NULL && strstr(line, also) != NULL;
    }
    fclose(f);
    return count;
}

struct cluster_node *cluster_broker(struct cluster *c, int32_t id)
{
    for (int i = 0; i < c->n_brokers; i++) {
        if (c->brokers[i].id == id) {
            return &c->brokers[i];
        }
    }
    return NULL;
}

struct cluster_node *cluster_add_broker(struct cluster *c)
{
    ASSERT(c->n_brokers > 0);
    ASSERT(c->n_brokers < CLUSTER_BROKERS_MAX);
    struct cluster_node *n = &c->brokers[c->n_brokers];
    *n = (struct cluster_node){.id = c->brokers[c->n_brokers - 1].id + 1,
                               .port = free_port()};
    c->n_brokers++;
    broker_config(c, n);
    cluster_node_start(c, n);
    return n;
}

void cluster_bootstrap(const struct cluster *c, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < c->n_brokers; i++) {
        int w = snprintf(out + len, cap - len, "%s127.0.0.1:%d",
                         i == 0 ? "" : ",", c->brokers[i].port);
        ASSERT(w > 0 && (size_t)w < cap - len);
        len += (size_t)w;
    }
}

double cluster_metric(const struct cluster_node *n, const char *name)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)n->metrics_port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    static char text[1 << 16];
    size_t len = 0;
    const char get[] = "GET /metrics HTTP/1.0\r\n\r\n";
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        write(fd, get, sizeof get - 1) == (ssize_t)(sizeof get - 1)) {
        ssize_t got;
        while (len < sizeof text - 1 &&
               (got = read(fd, text + len, sizeof text - 1 - len)) > 0) {
            len += (size_t)got;
        }
    }
    close(fd);
    text[len] = '\0';
    char want[256];
    snprintf(want, sizeof want, "\n%s ", name);
    const char *at = strstr(text, want);
    return at != NULL ? strtod(at + strlen(want), NULL) : -1;
}
