/* The controllers' Raft port against strangers and hostile peers, with
 * real processes on 127.0.0.1 (controller/raft_transport.h): without the
 * cluster's secret nothing reaches libraft; with it, a malformed message
 * closes its connection, never the controller; a connection that never
 * finishes its handshake is closed; a crowd of them does not stop the
 * quorum. After each, every controller is still running and the quorum
 * still commits (a topic is created). */
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "controller/raft_transport.h"
#include "tests/lib/cluster.h"

#define CROWD 80 /* more than RAFT_TRANSPORT_PENDING_MAX */

static struct cluster c;
static int topics;

static void teardown(void)
{
    cluster_destroy(&c);
}

TestSuite(raft_port, .fini = teardown, .timeout = 120);

static void start_ready(void)
{
    memset(&c, 0, sizeof c);
    topics = 0;
    cluster_start(&c, 3, 1); /* a broker, so that a topic can be made */
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000),
              "cluster not ready; logs in %s", c.dir);
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    struct timeval tv = {RAFT_TRANSPORT_HANDSHAKE_MS / 1000 + 5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* Reads the controller's challenge: magic and 32 random bytes. */
static void read_challenge(int fd, uint8_t challenge[32])
{
    uint8_t got[8 + 32];
    cr_assert_eq(recv(fd, got, sizeof got, MSG_WAITALL),
                 (ssize_t)sizeof got, "no challenge (errno %d)", errno);
    cr_assert_eq(memcmp(got, "CAIRNRFT", 8), 0);
    memcpy(challenge, got + 8, 32);
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

/* A hello as voter index i, its MAC under secret. */
static size_t hello(uint8_t *out, const uint8_t challenge[32], int i,
                    const char *secret)
{
    char address[64];
    snprintf(address, sizeof address, "127.0.0.1:%d",
             c.controllers[i].raft_port);
    size_t len = strlen(address);
    memcpy(out, "CAIRNRFT", 8);
    put64(out + 8, (uint64_t)c.controllers[i].id);
    put64(out + 16, len);
    memcpy(out + 24, address, len);
    raft_transport_mac(secret, challenge, (uint64_t)c.controllers[i].id,
                       address, len, out + 24 + len);
    return 24 + len + 32;
}

static void send_all(int fd, const void *bytes, size_t n)
{
    cr_assert_eq(send(fd, bytes, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* The controller closes fd (reads end in EOF or a reset) in time; what
 * names the case in a failure. */
static void expect_closed_after(int fd, const char *what)
{
    uint8_t buf[256];
    ssize_t got;
    do {
        got = recv(fd, buf, sizeof buf, 0);
    } while (got > 0);
    cr_assert(got == 0 || errno == ECONNRESET,
              "%s: connection not closed (errno %d)", what, errno);
    close(fd);
}

static void expect_closed(int fd)
{
    expect_closed_after(fd, "after the bytes sent");
}

/* Every controller still runs and the quorum commits. */
static void expect_quorum_intact(void)
{
    for (int i = 0; i < c.n_controllers; i++) {
        int status = 0;
        cr_assert_gt(c.controllers[i].pid, 0);
        cr_assert_eq(waitpid(c.controllers[i].pid, &status, WNOHANG), 0,
                     "controller %d exited (status %d); logs in %s",
                     c.controllers[i].id, status, c.dir);
    }
    char name[32];
    snprintf(name, sizeof name, "after-%d", topics++);
    cr_assert_eq(cluster_create_topic(&c, name, 1, 1), KAFKA_ERROR_NONE,
                 "the quorum no longer commits; logs in %s", c.dir);
}

/* libraft 0.15's own handshake and then the AppendEntries header that
 * claimed 2^32 - 1 entries: it used to kill a controller in one message
 * (SIGSEGV in uvDecodeMessage); now it never passes the handshake. */
Test(raft_port, strangers_without_the_secret_reach_nothing)
{
    start_ready();
    int active = cluster_active(&c);
    cr_assert_geq(active, 0);
    for (int i = 0; i < c.n_controllers; i++) {
        int fd = connect_to(c.controllers[i].raft_port);
        uint8_t msg[24 + 16 + 48];
        memset(msg, 0, sizeof msg);
        put64(msg, 1);           /* libraft's handshake protocol */
        put64(msg + 8, 999);     /* server id */
        put64(msg + 16, 0);      /* address length */
        put64(msg + 24, 1);      /* AppendEntries */
        put64(msg + 32, 48);
        put64(msg + 24 + 16 + 32, 0xffffffffu); /* entry count */
        send_all(fd, msg, sizeof msg);
        expect_closed(fd);
    }
    /* A forged RequestVote with a huge term and the disrupt flag, behind
     * a hello whose MAC is made with the wrong secret. */
    for (int i = 0; i < c.n_controllers; i++) {
        int fd = connect_to(c.controllers[i].raft_port);
        uint8_t challenge[32];
        read_challenge(fd, challenge);
        uint8_t h[24 + 64 + 32];
        size_t n = hello(h, challenge, (i + 1) % c.n_controllers,
                         "not-the-cluster-secret");
        send_all(fd, h, n);
        uint8_t vote[16 + 40];
        memset(vote, 0, sizeof vote);
        put64(vote, 3);
        put64(vote + 8, 40);
        put64(vote + 16, 1000000000); /* term */
        put64(vote + 24, (uint64_t)c.controllers[(i + 1) % 3].id);
        put64(vote + 16 + 32, 1);     /* disrupt the leader */
        (void)send(fd, vote, sizeof vote, MSG_NOSIGNAL);
        expect_closed(fd);
    }
    cr_assert_eq(cluster_active(&c), active, "the leader was deposed");
    expect_quorum_intact();
}

/* With the secret (a compromised or buggy peer), each malformed message
 * closes its connection and nothing else. */
Test(raft_port, malformed_messages_from_a_voter_close_only_their_connection)
{
    start_ready();
    struct {
        const char *what;
        uint64_t type;
        uint64_t header_len;
        size_t sent; /* header bytes that follow */
        uint64_t entries;
    } cases[] = {
        {"2^32 - 1 entries in an empty header", 1, 48, 48, 0xffffffffu},
        {"a 1-byte AppendEntries", 1, 1, 1, 0},
        {"a 1-byte RequestVote", 3, 1, 1, 0},
        {"message type 0", 0, 24, 24, 0},
        {"a header length of 2^63", 2, 1ull << 63, 0, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int target = (int)k % c.n_controllers;
        int as = (target + 1) % c.n_controllers;
        int fd = connect_to(c.controllers[target].raft_port);
        uint8_t challenge[32];
        read_challenge(fd, challenge);
        uint8_t h[24 + 64 + 32];
        send_all(fd, h, hello(h, challenge, as, c.raft_secret));
        uint8_t msg[16 + 48];
        memset(msg, 0, sizeof msg);
        put64(msg, cases[k].type);
        put64(msg + 8, cases[k].header_len);
        if (cases[k].sent >= 40) {
            put64(msg + 16 + 32, cases[k].entries);
        }
        (void)send(fd, msg, 16 + cases[k].sent, MSG_NOSIGNAL);
        expect_closed_after(fd, cases[k].what);
        expect_quorum_intact();
    }
}

Test(raft_port, a_silent_connection_is_closed_after_the_handshake_deadline)
{
    start_ready();
    int fd = connect_to(c.controllers[0].raft_port);
    uint8_t challenge[32];
    read_challenge(fd, challenge);
    uint64_t t0 = cluster_now_ms();
    expect_closed(fd);
    uint64_t took = cluster_now_ms() - t0;
    cr_assert_geq(took, RAFT_TRANSPORT_HANDSHAKE_MS - 500);
    cr_assert_leq(took, RAFT_TRANSPORT_HANDSHAKE_MS + 3000);
    expect_quorum_intact();
}

/* More idle connections than may wait in their handshake: the oldest are
 * closed at once, and the quorum elects and takes a voter back while the
 * rest are held. */
Test(raft_port, a_crowd_of_idle_connections_does_not_stop_the_quorum)
{
    start_ready();
    int fds[CROWD];
    for (int i = 0; i < CROWD; i++) {
        fds[i] = connect_to(c.controllers[0].raft_port);
    }
    int closed = 0;
    for (int i = 0; i < CROWD; i++) {
        uint8_t buf[64];
        struct timeval tv = {0, 50000}; /* 80 x 50 ms: within the deadline */
        setsockopt(fds[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ssize_t got = recv(fds[i], buf, sizeof buf, 0);
        if (got == 40) {
            got = recv(fds[i], buf, sizeof buf, 0); /* after the challenge */
        }
        closed += got == 0 || (got < 0 && errno == ECONNRESET);
    }
    cr_assert_geq(closed, CROWD - RAFT_TRANSPORT_PENDING_MAX,
                  "%d of %d closed at once", closed, CROWD);
    /* Kill the leader: a new one must be elected while the crowd holds
     * its connections. */
    int active = cluster_active(&c);
    cr_assert_geq(active, 0);
    cluster_node_signal(&c, &c.controllers[active], SIGKILL, true);
    int next = -1;
    uint64_t deadline = cluster_now_ms() + 15000;
    while (next < 0 && cluster_now_ms() < deadline) {
        next = cluster_active(&c);
    }
    cr_assert_geq(next, 0, "no leader while idle connections are held");
    cluster_node_start(&c, &c.controllers[active]);
    for (int i = 0; i < CROWD; i++) {
        close(fds[i]);
    }
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    expect_quorum_intact();
}

/* More idle connections on a controller's RPC port than it holds
 * (RPC_SERVER_CONNS_MAX): once they have been idle a while, a new client
 * (a broker, `cairn status`) still gets in: the idlest makes room. Its
 * port used to lock everyone out at 1,024. */
Test(raft_port, idle_connections_do_not_lock_the_rpc_port)
{
    start_ready();
    struct rlimit saved;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &saved), 0);
    size_t want = RPC_SERVER_CONNS_MAX + 64;
    if (saved.rlim_cur < want + 64) {
        struct rlimit more = {want + 64, saved.rlim_max};
        cr_assert_eq(setrlimit(RLIMIT_NOFILE, &more), 0,
                     "cannot raise the open-file limit to %zu", want + 64);
    }
    static int fds[RPC_SERVER_CONNS_MAX + 64];
    for (size_t i = 0; i < want; i++) {
        fds[i] = connect_to(c.controllers[0].port);
    }
    struct timespec idle = {RPC_SERVER_EVICT_IDLE_MS / 1000 + 1, 0};
    nanosleep(&idle, NULL); /* they become the idlest */
    uint64_t deadline = cluster_now_ms() + 10000;
    bool answered = false;
    while (!answered && cluster_now_ms() < deadline) {
        Cairn__DescribeClusterRequest dc =
            CAIRN__DESCRIBE_CLUSTER_REQUEST__INIT;
        Cairn__Request rq = CAIRN__REQUEST__INIT;
        rq.body_case = CAIRN__REQUEST__BODY_DESCRIBE_CLUSTER;
        rq.describe_cluster = &dc;
        Cairn__Response *r = cluster_call(&c, 0, &rq, 2000);
        answered = r != NULL;
        if (r != NULL) {
            cairn__response__free_unpacked(r, NULL);
        }
    }
    cr_assert(answered, "the controller's RPC port never answered");
    for (size_t i = 0; i < want; i++) {
        close(fds[i]);
    }
    (void)setrlimit(RLIMIT_NOFILE, &saved);
    expect_quorum_intact();
}
