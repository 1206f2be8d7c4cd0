/* Consumer group benchmark (`make bench`) against one real local cluster
 * (3 controllers and 3 brokers of this build, started by
 * tests/lib/cluster.h on free ports in a temporary directory), the
 * brokers with min.insync.replicas=2 and
 * group.initial.rebalance.delay.ms=0. __consumer_offsets has Kafka's 50
 * partitions and replication factor 3; the coordinator of group G leads
 * its partition hash(G) mod 50.
 *
 *   group_commit     standalone OffsetCommit v7 (GenerationIdOrMemberEpoch
 *                    -1, MemberId "", one partition, increasing offsets)
 *                    from BENCH_GROUPS_N (default 16) groups, each on its
 *                    own connection to its coordinator (found with
 *                    FindCoordinator v2), each keeping BENCH_GROUPS_K
 *                    (default 32) requests in flight. The groups are
 *                    chosen to map to distinct __consumer_offsets
 *                    partitions, so they spread over the three brokers as
 *                    those partitions' leaders do. A commit is answered
 *                    once the high watermark passes its record: acks=all
 *                    semantics. Baseline, alternating with it in the same
 *                    run: the same client sending acks=all Produce v7
 *                    requests of one 16 B record each, over the same
 *                    number of connections and in-flight requests, each
 *                    connection to the leader of its own partition of a
 *                    topic with one partition per connection and
 *                    replication factor 3. BENCH_ROUNDS rounds of
 *                    BENCH_GROUPS_S seconds (default 4) each, counting
 *                    the answers with ErrorCode 0 that arrive before a
 *                    round's deadline (those in flight then are drained,
 *                    not counted); commits= and seconds= are totals,
 *                    commits_s and produce_s medians of the rounds, ratio
 *                    commit/produce. Floor (the issue): >= 5,000
 *                    commits/s.
 *   group_rebalance  tests/bench/group_rebalance.py (confluent-kafka, run
 *                    with /usr/bin/python3 as a child): 3 consumers of a
 *                    12-partition topic with a trickle of records, then a
 *                    4th joins; time from its subscribe() until all 4
 *                    members have their new assignment and have consumed
 *                    from it, 5 runs; the script prints the RESULT line,
 *                    echoed here. Floor (the issue): <= 1000 ms beyond
 *                    the heartbeat interval (100 ms); beyond_timers_ms is
 *                    negative when the median join takes less than one
 *                    interval (a member's next heartbeat comes 0 to 100
 *                    ms after the 4th joins). Baseline: one consumer
 *                    joining a fresh group of its own (solo_join_ms);
 *                    ratio = join median / solo median.
 *
 * A failed check prints why, stops every process (cluster_destroy) and
 * aborts; a floor not met is reported (met=no), not fatal.
 * CAIRN_KEEP_TEST_DIR=1 keeps the node logs. The load runs one thread per
 * connection (blocking sockets: send up to K requests, read what came,
 * send as many again); main does the rest. */
#include "tests/lib/bench_util.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/group/group_store.h"
#include "common/kafka/kafka_codec.h"
#include "common/assert.h"
#include "common/bytes.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/kafka_frame.h"
#include "common/rc.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/child.h"
#include "tests/lib/kafka_wire.h"

#define BENCH_ROUNDS 3              /* of each load; median */
#define BENCH_GROUPS_N 16           /* connections, one group each */
#define BENCH_GROUPS_N_MAX 48       /* < 50: distinct offsets partitions */
#define BENCH_GROUPS_K 32           /* requests in flight a connection */
#define BENCH_GROUPS_K_MAX 1024     /* KAFKA_CONN_INFLIGHT_MAX */
#define BENCH_GROUPS_S 4            /* a round */
#define BENCH_GROUPS_S_MAX 600
#define BENCH_OFFSETS_PARTITIONS 50 /* offsets.topic.num.partitions */
#define BENCH_COMMIT_VERSION 7      /* KAFKA_OFFSET_COMMIT_VERSION_MAX */
#define BENCH_PRODUCE_VERSION 7
#define BENCH_FIND_VERSION 2
#define BENCH_RECORD_BYTES 16
#define BENCH_COMMIT_TOPIC "bench-groups-committed"
#define BENCH_PRODUCE_TOPIC "bench-groups-produce"
#define BENCH_REBALANCE_TOPIC "bench-groups-rebalance"
#define BENCH_REBALANCE_PARTITIONS 12
#define BENCH_REBALANCE_RUNS "5"
#define BENCH_FLOOR_COMMITS_S 5000.0
#define BENCH_CLIENT_ID "bench"
#define BENCH_BROKER_CONFIG \
    "min.insync.replicas=2\ngroup.initial.rebalance.delay.ms=0\n"
#define BENCH_COORDINATOR_BUDGET_MS 30000 /* offsets topic created, led */
#define BENCH_WARM_BUDGET_MS 30000        /* first answer 0 on each conn */
#define BENCH_RETRY_MS 50
#define BENCH_DRAIN_BUDGET_MS 30000       /* answers after a round ends */
#define BENCH_CHILD_BUDGET_MS 150000      /* the python helper */
#define BENCH_LOG_TAIL_BYTES 4096
#define BENCH_READ_BYTES 65536            /* a connection's read buffer */
#define BENCH_FRAME_BYTES_MAX (1u << 20)  /* a response; ours are tiny */
#define BENCH_WRITE_BYTES_MAX (8u << 20)  /* K requests at once */
#define BENCH_ERROR_CODES 128             /* counted by code; -1 at 0 */
#define BENCH_SCRIPT_REL "tests/bench/group_rebalance.py"
#define BENCH_PYTHON "/usr/bin/python3"

_Static_assert(BENCH_ROUNDS % 2 == 1, "a median of an odd count");
_Static_assert(BENCH_GROUPS_N <= BENCH_GROUPS_N_MAX, "default in bound");
_Static_assert(BENCH_GROUPS_N_MAX < BENCH_OFFSETS_PARTITIONS,
               "each group its own offsets partition");
_Static_assert(BENCH_GROUPS_K <= BENCH_GROUPS_K_MAX, "default in bound");

/* Creates topic name with replication factor 3 and waits until its
 * replicas have applied it; leaders[p] gets the port of partition p's
 * leader (leaders may be NULL). */
static void create_topic(const char *name, int32_t partitions, int *leaders)
{
    bench_create_topic(name, partitions, 3, leaders);
}

/* ------------------------------------------------------------------------
 * One load connection: requests and answers */

enum load_kind { LOAD_COMMIT, LOAD_PRODUCE };

/* One connection of the load and its counts. Main fills in the first
 * part, then only the connection's thread touches it until joined. */
struct load_conn {
    enum load_kind kind;
    int port;
    struct kafka_client kc;
    char group[32];        /* commit: its group id */
    int32_t partition;     /* committed partition, or produced to */
    int64_t next_offset;   /* commit: the next offset committed */
    int32_t next_corr;     /* correlation id of the next request */
    /* Per round: */
    int64_t ok;            /* ErrorCode 0 answered before the deadline */
    int64_t late;          /* answered after it (not counted) */
    int64_t errors[BENCH_ERROR_CODES];
    char failure[KAFKA_CLIENT_ERROR_BYTES + 64]; /* why it broke, or "" */
    pthread_t thread;
};

/* Set by main before a round's threads start, read only by them. */
static struct {
    double deadline_ms;
    int32_t in_flight;
    struct built_batch batch; /* the one record every Produce sends */
} load;

static void commit_body(struct load_conn *lc, struct writer *w)
{
    struct kafka_OffsetCommitRequestPartition p = {
        .PartitionIndex = lc->partition,
        .CommittedOffset = lc->next_offset++,
        .CommittedLeaderEpoch = -1,
        .CommittedMetadata = slice_from_str("")};
    struct kafka_OffsetCommitRequestTopic t = {
        .Name = slice_from_str(BENCH_COMMIT_TOPIC), .Partitions = &p,
        .PartitionsCnt = 1};
    struct kafka_OffsetCommitRequest rq = {
        .GroupId = slice_from_str(lc->group),
        .GenerationIdOrMemberEpoch = -1, .MemberId = slice_from_str(""),
        .GroupInstanceId = slice_null(), .RetentionTimeMs = -1,
        .Topics = &t, .TopicsCnt = 1};
    int rv = kafka_offset_commit_request_encode(w, BENCH_COMMIT_VERSION, &rq);
    ASSERT(rv == RC_OK);
}

static void produce_body(struct load_conn *lc, struct writer *w)
{
    struct kafka_PartitionProduceData pd = {
        .PartitionIndex = lc->partition,
        .Records = {.ptr = load.batch.bytes, .len = load.batch.len}};
    struct kafka_TopicProduceData td = {
        .Name = slice_from_str(BENCH_PRODUCE_TOPIC), .Partitions = &pd,
        .PartitionsCnt = 1};
    struct kafka_ProduceRequest rq = {
        .TransactionalId = slice_null(), .Acks = -1, .TimeoutMs = 10000,
        .Topics = &td, .TopicsCnt = 1};
    int rv = kafka_produce_request_encode(w, BENCH_PRODUCE_VERSION, &rq);
    ASSERT(rv == RC_OK);
}

static int16_t load_key(const struct load_conn *lc)
{
    return lc->kind == LOAD_COMMIT ? KAFKA_API_OFFSET_COMMIT
                                   : KAFKA_API_PRODUCE;
}

static int16_t load_version(const struct load_conn *lc)
{
    return lc->kind == LOAD_COMMIT ? BENCH_COMMIT_VERSION
                                   : BENCH_PRODUCE_VERSION;
}

/* Appends one whole request (size, header v1, body) to w. */
static void load_frame(struct load_conn *lc, struct writer *w)
{
    size_t size_at = kafka_frame_request_begin(w, load_key(lc),
                                               load_version(lc),
                                               lc->next_corr++,
                                               BENCH_CLIENT_ID);
    if (lc->kind == LOAD_COMMIT) {
        commit_body(lc, w);
    } else {
        produce_body(lc, w);
    }
    int rv = kafka_frame_end(w, size_at);
    ASSERT(rv == RC_OK);
}

/* The one ErrorCode of an answer body, or INT16_MIN if it does not
 * decode as one topic with one partition. */
static int16_t answer_error(const struct load_conn *lc, const uint8_t *body,
                            size_t len, struct arena *a)
{
    struct reader r;
    reader_init(&r, body, len);
    int16_t err = INT16_MIN;
    if (lc->kind == LOAD_COMMIT) {
        struct kafka_OffsetCommitResponse out;
        if (kafka_offset_commit_response_decode(&r, BENCH_COMMIT_VERSION, a,
                                                &out) == RC_OK &&
            out.TopicsCnt == 1 && out.Topics[0].PartitionsCnt == 1) {
            err = out.Topics[0].Partitions[0].ErrorCode;
        }
    } else {
        struct kafka_ProduceResponse out;
        if (kafka_produce_response_decode(&r, BENCH_PRODUCE_VERSION, a,
                                          &out) == RC_OK &&
            out.ResponsesCnt == 1 && out.Responses[0].PartitionsCnt == 1) {
            err = out.Responses[0].Partitions[0].ErrorCode;
        }
    }
    arena_reset(a);
    return err;
}

/* One blocking request and its ErrorCode; INT16_MIN when the connection
 * failed or the answer did not decode. */
static int16_t load_one(struct load_conn *lc)
{
    struct writer w;
    writer_init(&w, BENCH_WRITE_BYTES_MAX);
    if (lc->kind == LOAD_COMMIT) {
        commit_body(lc, &w);
    } else {
        produce_body(lc, &w);
    }
    size_t len = 0;
    uint8_t *resp = kafka_wire_roundtrip(&lc->kc, load_key(lc),
                                         load_version(lc), &w, &len);
    writer_free(&w);
    if (resp == NULL) {
        return INT16_MIN;
    }
    struct arena a;
    arena_init(&a, 1u << 20);
    int16_t err = answer_error(lc, resp, len, &a);
    arena_free(&a);
    free(resp);
    return err;
}

/* ------------------------------------------------------------------------
 * The load threads */

/* Counts a decoded answer: ErrorCode 0 before the deadline, after it, or
 * an error (by code; codes outside the table with UNKNOWN_SERVER_ERROR). */
static void count_answer(struct load_conn *lc, int16_t err)
{
    if (err != 0) {
        int i = err + 1; /* UNKNOWN_SERVER_ERROR (-1) at 0 */
        lc->errors[i >= 0 && i < BENCH_ERROR_CODES ? i : 0]++;
    } else if (bench_clock_ms() < load.deadline_ms) {
        lc->ok++;
    } else {
        lc->late++;
    }
}

/* Handles every whole answer in buf[0, *have), keeping the rest; false
 * (with lc->failure set) on a broken answer. */
static bool parse_answers(struct load_conn *lc, uint8_t *buf, size_t *have,
                          int32_t *expect_corr, int32_t *in_flight,
                          struct arena *a)
{
    size_t pos = 0;
    while (*have - pos >= KAFKA_FRAME_SIZE_BYTES +
                               KAFKA_FRAME_RESPONSE_HEADER_BYTES) {
        struct reader r;
        reader_init(&r, buf + pos, *have - pos);
        size_t n = 0;
        if (kafka_frame_size_read(&r, KAFKA_FRAME_RESPONSE_HEADER_BYTES,
                                  BENCH_FRAME_BYTES_MAX, &n) != RC_OK) {
            snprintf(lc->failure, sizeof lc->failure, "answer size %zu", n);
            return false;
        }
        if (*have - pos - 4 < n) {
            break;
        }
        int32_t corr = 0;
        if (kafka_frame_response_read(&r, *expect_corr, &corr) != RC_OK ||
            *in_flight == 0) {
            snprintf(lc->failure, sizeof lc->failure, "correlation id %d, "
                     "expected %d", corr, *expect_corr);
            return false;
        }
        (*expect_corr)++;
        (*in_flight)--;
        int16_t err = answer_error(lc, buf + pos + 8, n - 4, a);
        if (err == INT16_MIN) {
            snprintf(lc->failure, sizeof lc->failure, "answer %d does not "
                     "decode as one partition's", corr);
            return false;
        }
        count_answer(lc, err);
        pos += 4 + n;
    }
    memmove(buf, buf + pos, *have - pos);
    *have -= pos;
    return true;
}

/* Until the deadline: keep load.in_flight requests outstanding, sending
 * as many as were answered in one send(); then drain. */
static void *load_thread(void *arg)
{
    struct load_conn *lc = arg;
    uint8_t *buf = malloc(BENCH_READ_BYTES + BENCH_FRAME_BYTES_MAX);
    ASSERT(buf != NULL);
    size_t have = 0;
    struct writer w;
    writer_init(&w, BENCH_WRITE_BYTES_MAX);
    struct arena a;
    arena_init(&a, 1u << 20);
    int32_t in_flight = 0;
    int32_t expect_corr = lc->next_corr;
    kafka_client_set_timeout(&lc->kc,
                             (uint64_t)(load.deadline_ms - bench_clock_ms()) +
                                 BENCH_DRAIN_BUDGET_MS);
    for (;;) {
        writer_reset(&w);
        while (bench_clock_ms() < load.deadline_ms &&
               in_flight < load.in_flight) {
            load_frame(lc, &w);
            in_flight++;
        }
        if (w.len > 0 &&
            kafka_client_send(&lc->kc, w.data, w.len) != RC_OK) {
            snprintf(lc->failure, sizeof lc->failure, "send: %s",
                     lc->kc.error);
            break;
        }
        if (in_flight == 0) {
            break;
        }
        size_t got = 0;
        if (kafka_client_recv(&lc->kc, buf + have,
                              BENCH_READ_BYTES + BENCH_FRAME_BYTES_MAX -
                                  have, &got) != RC_OK) {
            snprintf(lc->failure, sizeof lc->failure, "recv with %d in "
                     "flight: %s", in_flight, lc->kc.error);
            break;
        }
        have += got;
        if (!parse_answers(lc, buf, &have, &expect_corr, &in_flight, &a)) {
            break;
        }
    }
    arena_free(&a);
    writer_free(&w);
    free(buf);
    return NULL;
}

/* ------------------------------------------------------------------------
 * Rounds */

/* Per-round results of one load. */
struct load_round {
    int64_t ok;
    int64_t late;
    int64_t errors;
    double seconds;
};

/* Runs every connection's thread until seconds have passed and every
 * answer is in; fails the bench if a connection broke. */
static struct load_round run_round(struct load_conn *conns, int n,
                                   int32_t in_flight, long seconds)
{
    double start = bench_clock_ms();
    load.deadline_ms = start + (double)seconds * 1e3;
    load.in_flight = in_flight;
    for (int i = 0; i < n; i++) {
        struct load_conn *lc = &conns[i];
        lc->ok = 0;
        lc->late = 0;
        memset(lc->errors, 0, sizeof lc->errors);
        lc->failure[0] = '\0';
        if (pthread_create(&lc->thread, NULL, load_thread, lc) != 0) {
            bench_fail("pthread_create failed");
        }
    }
    struct load_round res = {.seconds = (load.deadline_ms - start) / 1e3};
    for (int i = 0; i < n; i++) {
        pthread_join(conns[i].thread, NULL);
    }
    for (int i = 0; i < n; i++) {
        struct load_conn *lc = &conns[i];
        if (lc->failure[0] != '\0') {
            bench_fail("connection %d (port %d%s%s): %s", i, lc->port,
                       lc->kind == LOAD_COMMIT ? ", group " : "",
                       lc->kind == LOAD_COMMIT ? lc->group : "",
                       lc->failure);
        }
        res.ok += lc->ok;
        res.late += lc->late;
        for (int e = 0; e < BENCH_ERROR_CODES; e++) {
            res.errors += lc->errors[e];
        }
    }
    return res;
}

/* "code:count,..." of every error answered in the round, or "none". */
static void format_errors(const struct load_conn *conns, int n, char *out,
                          size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int e = 0; e < BENCH_ERROR_CODES; e++) {
        int64_t k = 0;
        for (int i = 0; i < n; i++) {
            k += conns[i].errors[e];
        }
        if (k > 0 && len < cap) {
            int w = snprintf(out + len, cap - len, "%s%s:%" PRId64,
                             len > 0 ? "," : "",
                             kafka_error_name((int16_t)(e - 1)), k);
            len += w > 0 ? (size_t)w : 0;
        }
    }
    if (len == 0) {
        snprintf(out, cap, "none");
    }
}

/* Retries one blocking request on every connection until it answers 0,
 * so the timed rounds start with leaders elected and groups loaded. */
static void warm_up(struct load_conn *conns, int n, const char *what)
{
    double deadline = bench_clock_ms() + BENCH_WARM_BUDGET_MS;
    for (int i = 0; i < n; i++) {
        int16_t err;
        while ((err = load_one(&conns[i])) != 0) {
            if (err == INT16_MIN) {
                bench_fail("%s connection %d (port %d): no answer", what,
                           i, conns[i].port);
            }
            if (bench_clock_ms() > deadline) {
                bench_fail("%s connection %d (port %d): still %s after %d "
                           "ms", what, i, conns[i].port,
                           kafka_error_name(err), BENCH_WARM_BUDGET_MS);
            }
            bench_pause_ms(BENCH_RETRY_MS);
        }
    }
}

/* ------------------------------------------------------------------------
 * Commit connections: groups and their coordinators */

/* The port of group's coordinator, asking broker port until it answers
 * ErrorCode 0 (the first asks make the broker create
 * __consumer_offsets). */
static int find_coordinator(int port, const char *group)
{
    double deadline = bench_clock_ms() + BENCH_COORDINATOR_BUDGET_MS;
    int16_t last = INT16_MIN;
    while (bench_clock_ms() < deadline) {
        struct kafka_client kc;
        if (!kafka_wire_connect(&kc, port)) {
            bench_fail("connect to broker port %d: %s", port, kc.error);
        }
        struct kafka_FindCoordinatorRequest rq = {
            .Key = slice_from_str(group), .KeyType = 0};
        struct writer w;
        writer_init(&w, 1u << 16);
        int rv = kafka_find_coordinator_request_encode(&w,
                                                       BENCH_FIND_VERSION,
                                                       &rq);
        ASSERT(rv == RC_OK);
        size_t len = 0;
        uint8_t *resp = kafka_wire_roundtrip(&kc, KAFKA_API_FIND_COORDINATOR,
                                             BENCH_FIND_VERSION, &w, &len);
        writer_free(&w);
        kafka_client_close(&kc);
        if (resp == NULL) {
            bench_fail("FindCoordinator %s: no answer", group);
        }
        struct reader r;
        reader_init(&r, resp, len);
        struct arena a;
        arena_init(&a, 1u << 20);
        struct kafka_FindCoordinatorResponse out;
        rv = kafka_find_coordinator_response_decode(&r, BENCH_FIND_VERSION,
                                                    &a, &out);
        int coordinator = rv == RC_OK && out.ErrorCode == 0 ? out.Port : -1;
        last = rv == RC_OK ? out.ErrorCode : INT16_MIN;
        arena_free(&a);
        free(resp);
        if (rv != RC_OK) {
            bench_fail("FindCoordinator %s: answer does not decode: %s",
                       group, rc_str(rv));
        }
        if (coordinator > 0) {
            return coordinator;
        }
        bench_pause_ms(BENCH_RETRY_MS * 2);
    }
    bench_fail("FindCoordinator %s: still %s after %d ms", group,
               kafka_error_name(last), BENCH_COORDINATOR_BUDGET_MS);
}

/* The client sets TCP_NODELAY. */
static void connect_or_fail(struct kafka_client *kc, int port)
{
    if (!kafka_wire_connect(kc, port)) {
        bench_fail("connect to port %d: %s", port, kc->error);
    }
}

/* n groups, each mapping to its own __consumer_offsets partition, each
 * connected to its coordinator. Prints where the coordinators are. */
static void commit_conns(struct load_conn *conns, int n)
{
    struct cluster *c = bench_cluster;
    bool taken[BENCH_OFFSETS_PARTITIONS] = {false};
    int per_broker[CLUSTER_BROKERS_MAX] = {0};
    int next_name = 0;
    for (int i = 0; i < n; i++) {
        struct load_conn *lc = &conns[i];
        int32_t p;
        do {
            snprintf(lc->group, sizeof lc->group, "bench-commit-%d",
                     next_name++);
            p = group_store_partition_for((const uint8_t *)lc->group,
                                          strlen(lc->group),
                                          BENCH_OFFSETS_PARTITIONS);
        } while (taken[p]);
        taken[p] = true;
        lc->kind = LOAD_COMMIT;
        lc->partition = i;
        lc->next_offset = 0;
        lc->next_corr = 1;
        lc->port = find_coordinator(c->brokers[0].port, lc->group);
        connect_or_fail(&lc->kc, lc->port);
        for (int b = 0; b < c->n_brokers; b++) {
            per_broker[b] += c->brokers[b].port == lc->port;
        }
    }
    printf("info bench=group_commit coordinators_per_broker=");
    for (int b = 0; b < c->n_brokers; b++) {
        printf("%s%d:%d", b > 0 ? "," : "", c->brokers[b].id,
               per_broker[b]);
    }
    printf("\n");
    fflush(stdout);
}

/* n connections, each to the leader of its own partition of a fresh
 * replication factor 3 topic. */
static void produce_conns(struct load_conn *conns, int n)
{
    int leaders[BENCH_GROUPS_N_MAX];
    create_topic(BENCH_PRODUCE_TOPIC, n, leaders);
    for (int i = 0; i < n; i++) {
        struct load_conn *lc = &conns[i];
        lc->kind = LOAD_PRODUCE;
        lc->partition = i;
        lc->next_corr = 1;
        lc->port = leaders[i];
        connect_or_fail(&lc->kc, lc->port);
    }
}

/* ------------------------------------------------------------------------
 * group_commit */

static void print_run(const char *target, int round,
                      const struct load_round *r,
                      const struct load_conn *conns, int n)
{
    char errs[512];
    format_errors(conns, n, errs, sizeof errs);
    printf("run target=%s round=%d ok=%" PRId64 " seconds=%.2f "
           "per_s=%.0f late=%" PRId64 " errors=%" PRId64 " (%s)\n", target,
           round, r->ok, r->seconds, (double)r->ok / r->seconds, r->late,
           r->errors, errs);
    fflush(stdout);
}

static void bench_commit(int n, int32_t k, long seconds)
{
    static struct load_conn commits[BENCH_GROUPS_N_MAX];
    static struct load_conn produces[BENCH_GROUPS_N_MAX];
    load.batch = batch_build(1, BENCH_RECORD_BYTES, 1000, 7);
    commit_conns(commits, n);
    warm_up(commits, n, "commit");
    produce_conns(produces, n);
    warm_up(produces, n, "produce");
    double commit_s[BENCH_ROUNDS];
    double produce_s[BENCH_ROUNDS];
    int64_t commits_total = 0;
    double commit_seconds = 0;
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        struct load_round res = run_round(commits, n, k, seconds);
        print_run("commit", r + 1, &res, commits, n);
        commit_s[r] = (double)res.ok / res.seconds;
        commits_total += res.ok;
        commit_seconds += res.seconds;
        res = run_round(produces, n, k, seconds);
        print_run("produce", r + 1, &res, produces, n);
        produce_s[r] = (double)res.ok / res.seconds;
    }
    for (int i = 0; i < n; i++) {
        kafka_client_close(&commits[i].kc);
        kafka_client_close(&produces[i].kc);
    }
    built_batch_free(&load.batch);
    double c_med = bench_median(commit_s, BENCH_ROUNDS);
    double p_med = bench_median(produce_s, BENCH_ROUNDS);
    printf("RESULT bench=group_commit groups=%d in_flight=%d rounds=%d "
           "commit_version=%d commits=%" PRId64 " seconds=%.1f "
           "commits_s=%.0f produce_s=%.0f ratio=%.3f "
           "floor_commits_s=%.0f met=%s\n", n, k, BENCH_ROUNDS,
           BENCH_COMMIT_VERSION, commits_total, commit_seconds, c_med,
           p_med, c_med / p_med, BENCH_FLOOR_COMMITS_S,
           c_med >= BENCH_FLOOR_COMMITS_S ? "yes" : "no");
    fflush(stdout);
}

/* ------------------------------------------------------------------------
 * group_rebalance: the python helper */

static void script_path(char *out, size_t cap)
{
    if (!child_source_path(BENCH_SCRIPT_REL, out, cap)) {
        bench_fail("group_rebalance.py not found (last tried %s); set "
                   "CAIRN_SRC to the source tree", out);
    }
}

/* The last BENCH_LOG_TAIL_BYTES of path to stderr. */
static void show_tail(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return;
    }
    static char tail[BENCH_LOG_TAIL_BYTES + 1];
    if (fseek(f, -(long)BENCH_LOG_TAIL_BYTES, SEEK_END) != 0) {
        rewind(f);
    }
    size_t n = fread(tail, 1, BENCH_LOG_TAIL_BYTES, f);
    tail[n] = '\0';
    fclose(f);
    fprintf(stderr, "bench_groups: end of %s:\n%s\n", path, tail);
}

static void bench_rebalance(void)
{
    struct cluster *c = bench_cluster;
    create_topic(BENCH_REBALANCE_TOPIC, BENCH_REBALANCE_PARTITIONS, NULL);
    char boot[256];
    char script[4200];
    char log_path[4200];
    cluster_bootstrap(c, boot, sizeof boot);
    script_path(script, sizeof script);
    snprintf(log_path, sizeof log_path, "%s/group_rebalance.log", c->dir);
    char *argv[] = {(char *)(uintptr_t)"python3", script, boot,
                    (char *)(uintptr_t)BENCH_REBALANCE_TOPIC,
                    (char *)(uintptr_t)BENCH_REBALANCE_RUNS, NULL};
    static char out[BENCH_OUTPUT_BYTES];
    int status = 0;
    bool done = bench_run_child(BENCH_PYTHON, argv, log_path,
                                true /* echo */, out, sizeof out,
                                BENCH_CHILD_BUDGET_MS, &status);
    if (!done || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        strstr(out, "RESULT bench=group_rebalance ") == NULL) {
        show_tail(log_path);
        bench_fail("group_rebalance.py %s (status %d)",
                   done ? "failed" : "ran out of time", status);
    }
}

int main(void)
{
    bench_set_name("bench_groups");
    int n = (int)bench_env_long("BENCH_GROUPS_N", BENCH_GROUPS_N,
                                BENCH_GROUPS_N_MAX);
    int32_t k = (int32_t)bench_env_long("BENCH_GROUPS_K", BENCH_GROUPS_K,
                                        BENCH_GROUPS_K_MAX);
    long seconds = bench_env_long("BENCH_GROUPS_S", BENCH_GROUPS_S,
                                  BENCH_GROUPS_S_MAX);
    static struct cluster c;
    c.broker_extra_config = BENCH_BROKER_CONFIG;
    double t0 = bench_clock_ms();
    bench_cluster_start(&c, 3, 3);
    char boot[256];
    cluster_bootstrap(&c, boot, sizeof boot);
    printf("info bench=groups controllers=3 brokers=3 min_insync_replicas=2 "
           "groups=%d in_flight=%d round_s=%ld rounds=%d bootstrap=%s\n", n,
           k, seconds, BENCH_ROUNDS, boot);
    fflush(stdout);
    bench_commit(n, k, seconds);
    bench_rebalance();
    bench_cluster_stop(&c);
    printf("info bench=groups total_s=%.1f\n", (bench_clock_ms() - t0) / 1e3);
    return 0;
}
