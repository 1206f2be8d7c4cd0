/* Controller quorum benchmark (`make bench`): real cairn-controller and
 * cairn-broker processes on 127.0.0.1, started by tests/lib/cluster.h on
 * free ports in a temporary directory. Three measurements, each printed
 * with a ratio to a baseline taken in the same run, because the machine is
 * shared and noisy:
 *
 *   controller_failover   3 controllers and 1 broker. SIGKILL the active
 *                         controller and time until another one answers
 *                         DescribeCluster with active=true (polled with
 *                         short timeouts); restart the killed one and wait
 *                         for a stable quorum of three before the next of
 *                         BENCH_FAILOVER_RUNS runs. Baseline:
 *                         controller.quorum.election.timeout.ms, the least
 *                         a failover must wait. Floor (the issue): median
 *                         <= 1.5 s.
 *   controller_fence_move 3 controllers and 3 brokers, a 6-partition RF 3
 *                         topic. SIGKILL a broker that leads some of it and
 *                         time until the active controller's image shows it
 *                         fenced and leading nothing. The clock starts at
 *                         the SIGKILL: the broker's last heartbeat (up to
 *                         broker.heartbeat.interval.ms earlier) cannot be
 *                         seen from outside. Baseline:
 *                         broker.session.timeout.ms. Floor: <= session
 *                         timeout + 0.5 s.
 *   controller_create_partitions  3 controllers and 3 brokers. Round trip
 *                         of one CreateTopics for a 1,000-partition RF 3
 *                         topic on the active controller; baseline: the
 *                         median round trip of the same request for a
 *                         1-partition topic, taken first on the same quiet
 *                         cluster. Floor: <= 1 s. Then, for information
 *                         only: how long until every broker has opened
 *                         its logs of the new topic (from its own log
 *                         file), and how many brokers the controller
 *                         fenced meanwhile.
 *
 * Every wait has a budget; a failed check prints why, stops every process
 * (cluster_destroy) and aborts. CAIRN_KEEP_TEST_DIR=1 keeps the node logs.
 * One thread: cluster_call() runs the helper's libuv loop until the call
 * ends. */
#include "tests/lib/bench_util.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "common/assert.h"
#include "common/kafka/kafka_error.h"
#include "common/meta/meta.h"
#include "common/meta/meta_codec.h"
#include "common/rc.h"

#define BENCH_FAILOVER_RUNS 5
#define BENCH_CREATE_ROUNDS 5         /* 1-partition baseline; median */
#define BENCH_BIG_PARTITIONS 1000
#define BENCH_RF 3
#define BENCH_FENCE_PARTITIONS 6
#define BENCH_SESSION_TIMEOUT_MS 3000
#define BENCH_POLL_MS 5               /* pause between polls of a wait */
#define BENCH_QUORUM_POLL_MS 50
#define BENCH_CALL_TIMEOUT_MS 200     /* one DescribeCluster while polling */
#define BENCH_FAILOVER_BUDGET_MS 10000
#define BENCH_QUORUM_BUDGET_MS 20000  /* restart until a stable quorum */
#define BENCH_FENCE_BUDGET_MS (BENCH_SESSION_TIMEOUT_MS + 10000)
#define BENCH_CREATE_TIMEOUT_MS 10000
#define BENCH_HOSTING_BUDGET_MS 30000 /* brokers opening the big topic */

_Static_assert(BENCH_BIG_PARTITIONS <= META_PARTITIONS_MAX,
               "the big topic must be a valid CreateTopics");
_Static_assert(BENCH_RF <= CLUSTER_BROKERS_MAX,
               "RF 3 needs as many brokers");
_Static_assert(BENCH_CALL_TIMEOUT_MS < BENCH_FAILOVER_BUDGET_MS,
               "a poll must fit in the failover budget");

/* ------------------------------------------------------------------------
 * Helpers: the cluster */

/* Starts a cluster with the helper's timeouts, unless set in c already,
 * and waits until every broker is registered and unfenced. */
static void start_cluster(struct cluster *c, int controllers, int brokers)
{
    bench_cluster = c;
    cluster_start(c, controllers, brokers);
    if (!cluster_wait_ready(c, cluster_now_ms() + BENCH_READY_BUDGET_MS)) {
        bench_fail("cluster of %d controllers and %d brokers not ready in "
                   "%d ms", controllers, brokers, BENCH_READY_BUDGET_MS);
    }
}

/* SIGKILLs every running broker. A broker hosting a thousand partitions
 * takes seconds to close their logs on SIGTERM, and nothing here measures
 * that. */
static void kill_brokers(struct cluster *c)
{
    for (int i = 0; i < c->n_brokers; i++) {
        if (c->brokers[i].pid > 0) {
            (void)cluster_node_signal(c, &c->brokers[i], SIGKILL,
                                      true /* wait */);
        }
    }
}

/* One controller's answer to DescribeCluster. */
struct ctl_view {
    bool active;
    int32_t node_id;
    int32_t leader_id;  /* Raft leader it knows of; 0 if none */
    int64_t term;
    int64_t applied;    /* Raft index applied */
};

/* DescribeCluster to controller i within timeout_ms; with img (initialised
 * by the caller) also decodes the image into it. False when the
 * controller is not running, does not answer in time or answers garbage. */
static bool describe(struct cluster *c, int i, uint64_t timeout_ms,
                     struct ctl_view *v, struct meta_image *img)
{
    memset(v, 0, sizeof *v);
    if (c->controllers[i].pid == 0) {
        return false;
    }
    Cairn__DescribeClusterRequest dc = CAIRN__DESCRIBE_CLUSTER_REQUEST__INIT;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_DESCRIBE_CLUSTER;
    req.describe_cluster = &dc;
    Cairn__Response *r = cluster_call(c, i, &req, timeout_ms);
    if (r == NULL) {
        return false;
    }
    const Cairn__DescribeClusterResponse *d = r->describe_cluster;
    bool ok = r->body_case == CAIRN__RESPONSE__BODY_DESCRIBE_CLUSTER &&
              d != NULL && d->controller != NULL;
    if (ok) {
        v->active = d->controller->active != 0;
        v->node_id = d->controller->node_id;
        v->leader_id = d->controller->leader_id;
        v->term = d->controller->term;
        v->applied = d->controller->applied_index;
    }
    if (ok && img != NULL) {
        ok = d->has_image;
        if (ok) {
            meta_image_free(img);
            meta_image_init(img);
            ok = meta_codec_decode_image(d->image.data, d->image.len, img) ==
                 RC_OK;
        }
    }
    cairn__response__free_unpacked(r, NULL);
    return ok;
}

/* Index of a running controller that answers active=true, polled until
 * deadline (a bench_clock_ms() value); -1 at the deadline. */
static int wait_active(struct cluster *c, double deadline,
                       struct ctl_view *out)
{
    while (bench_clock_ms() < deadline) {
        for (int i = 0; i < c->n_controllers; i++) {
            if (describe(c, i, BENCH_CALL_TIMEOUT_MS, out, NULL) &&
                out->active) {
                return i;
            }
        }
        bench_pause_ms(BENCH_POLL_MS);
    }
    return -1;
}

/* The active controller's image into img; *hint is the index tried first
 * and is updated. False when no running controller says it is active. */
static bool active_image(struct cluster *c, int *hint, struct meta_image *img)
{
    struct ctl_view v;
    if (*hint >= 0 && describe(c, *hint, BENCH_CALL_TIMEOUT_MS, &v, img) &&
        v.active) {
        return true;
    }
    for (int i = 0; i < c->n_controllers; i++) {
        if (i != *hint && describe(c, i, BENCH_CALL_TIMEOUT_MS, &v, img) &&
            v.active) {
            *hint = i;
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------------------
 * Controller failover */

/* True when every controller answers, exactly one is active, and all
 * agree on its term and id and have applied as much as it has. */
static bool quorum_agrees(struct cluster *c, struct ctl_view *leader)
{
    struct ctl_view v[CLUSTER_CONTROLLERS_MAX];
    int active = -1;
    for (int i = 0; i < c->n_controllers; i++) {
        if (!describe(c, i, BENCH_CALL_TIMEOUT_MS, &v[i], NULL)) {
            return false;
        }
        if (v[i].active) {
            if (active >= 0) {
                return false;
            }
            active = i;
        }
    }
    if (active < 0) {
        return false;
    }
    for (int i = 0; i < c->n_controllers; i++) {
        if (v[i].term != v[active].term ||
            v[i].leader_id != v[active].node_id ||
            v[i].applied < v[active].applied) {
            return false;
        }
    }
    *leader = v[active];
    return true;
}

/* Waits until quorum_agrees() has held for stable_ms with the same
 * leader and term. */
static void wait_quorum_stable(struct cluster *c, int run, double stable_ms)
{
    double deadline = bench_clock_ms() + BENCH_QUORUM_BUDGET_MS;
    double since = -1;
    struct ctl_view first = {0};
    while (bench_clock_ms() < deadline) {
        struct ctl_view l;
        if (!quorum_agrees(c, &l)) {
            since = -1;
        } else if (since < 0 || l.term != first.term ||
                   l.node_id != first.node_id) {
            since = bench_clock_ms();
            first = l;
        } else if (bench_clock_ms() - since >= stable_ms) {
            return;
        }
        bench_pause_ms(BENCH_QUORUM_POLL_MS);
    }
    bench_fail("run %d: the quorum of %d controllers was not back and "
               "stable for %.0f ms within %d ms", run, c->n_controllers,
               stable_ms, BENCH_QUORUM_BUDGET_MS);
}

/* One failover: milliseconds from the SIGKILL of the active controller
 * until another one answers active=true. Leaves the quorum whole. */
static double failover_run(struct cluster *c, int run, double stable_ms)
{
    struct ctl_view old;
    int victim = wait_active(c, bench_clock_ms() + BENCH_FAILOVER_BUDGET_MS,
                             &old);
    if (victim < 0) {
        bench_fail("run %d: no active controller before the kill", run);
    }
    double t0 = bench_clock_ms();
    int status = cluster_node_signal(c, &c->controllers[victim], SIGKILL,
                                     true /* wait */);
    if (status == -1 || !WIFSIGNALED(status)) {
        bench_fail("run %d: controller %d did not die of SIGKILL (status "
                   "%d)", run, old.node_id, status);
    }
    struct ctl_view now;
    int next = wait_active(c, t0 + BENCH_FAILOVER_BUDGET_MS, &now);
    double took = bench_clock_ms() - t0;
    if (next < 0) {
        bench_fail("run %d: no controller active %d ms after killing %d",
                   run, BENCH_FAILOVER_BUDGET_MS, old.node_id);
    }
    ASSERT(next != victim); /* its pid is 0: describe() skips it */
    printf("run=%d bench=controller_failover killed=%d old_term=%lld "
           "new_active=%d new_term=%lld failover_ms=%.1f\n", run,
           old.node_id, (long long)old.term, now.node_id,
           (long long)now.term, took);
    fflush(stdout);
    cluster_node_start(c, &c->controllers[victim]);
    wait_quorum_stable(c, run, stable_ms);
    return took;
}

static void bench_failover(void)
{
    static struct cluster c;
    memset(&c, 0, sizeof c);
    start_cluster(&c, 3, 1);
    double election_ms = (double)c.election_timeout_ms;
    double stable_ms = 2 * election_ms;
    printf("info bench=controller_failover controllers=%d brokers=%d "
           "election_timeout_ms=%lld quorum_stable_ms=%.0f poll_ms=%d "
           "runs=%d\n", c.n_controllers, c.n_brokers,
           (long long)c.election_timeout_ms, stable_ms, BENCH_POLL_MS,
           BENCH_FAILOVER_RUNS);
    fflush(stdout);
    wait_quorum_stable(&c, 0, stable_ms);
    double ms[BENCH_FAILOVER_RUNS];
    for (int r = 0; r < BENCH_FAILOVER_RUNS; r++) {
        ms[r] = failover_run(&c, r + 1, stable_ms);
    }
    double med = bench_median(ms, BENCH_FAILOVER_RUNS); /* sorted now */
    printf("RESULT bench=controller_failover runs=%d median_ms=%.1f "
           "min_ms=%.1f max_ms=%.1f election_timeout_ms=%lld ratio=%.3f\n",
           BENCH_FAILOVER_RUNS, med, ms[0], ms[BENCH_FAILOVER_RUNS - 1],
           (long long)c.election_timeout_ms, med / election_ms);
    fflush(stdout);
    bench_cluster_stop(&c);
}

/* ------------------------------------------------------------------------
 * Broker fencing and leader move */

static const struct meta_topic *need_topic(const struct meta_image *img,
                                           const char *name,
                                           int32_t partitions)
{
    const struct meta_topic *t = meta_image_topic(img, name);
    if (t == NULL || t->n_partitions != partitions) {
        bench_fail("topic %s: %d partitions in the image, want %d", name,
                   t == NULL ? -1 : t->n_partitions, partitions);
    }
    return t;
}

static int led_by(const struct meta_topic *t, int32_t broker)
{
    int n = 0;
    for (int32_t p = 0; p < t->n_partitions; p++) {
        n += t->partitions[p].leader == broker;
    }
    return n;
}

/* The broker leading the most partitions of t. */
static int pick_victim(const struct cluster *c, const struct meta_topic *t)
{
    int best = 0;
    for (int i = 1; i < c->n_brokers; i++) {
        if (led_by(t, c->brokers[i].id) > led_by(t, c->brokers[best].id)) {
            best = i;
        }
    }
    if (led_by(t, c->brokers[best].id) == 0) {
        bench_fail("no broker leads a partition of %s", t->name);
    }
    return best;
}

/* Every partition of t has a live leader in its ISR, and victim is in no
 * ISR. */
static void check_moved(const struct meta_topic *t, int32_t victim)
{
    for (int32_t p = 0; p < t->n_partitions; p++) {
        const struct meta_partition *mp = &t->partitions[p];
        if (mp->leader == META_NO_LEADER || mp->leader == victim ||
            !meta_replica_set_contains(&mp->isr, mp->leader)) {
            bench_fail("partition %s-%d: leader %d after fencing %d",
                       t->name, p, mp->leader, victim);
        }
        if (meta_replica_set_contains(&mp->isr, victim)) {
            bench_fail("partition %s-%d keeps fenced broker %d in its ISR",
                       t->name, p, victim);
        }
    }
}

/* Milliseconds from SIGKILL of brokers[victim] until the active
 * controller's image shows it fenced and leading nothing of topic. */
static double fence_move_wait(struct cluster *c, int victim,
                              const char *topic, struct meta_image *img)
{
    int32_t id = c->brokers[victim].id;
    int hint = -1;
    double t0 = bench_clock_ms();
    int status = cluster_node_signal(c, &c->brokers[victim], SIGKILL,
                                     true /* wait */);
    if (status == -1 || !WIFSIGNALED(status)) {
        bench_fail("broker %d did not die of SIGKILL (status %d)", id,
                   status);
    }
    while (bench_clock_ms() - t0 < BENCH_FENCE_BUDGET_MS) {
        if (active_image(c, &hint, img)) {
            const struct meta_broker *b = meta_image_broker(img, id);
            const struct meta_topic *t = meta_image_topic(img, topic);
            if (b != NULL && t != NULL && b->fenced && led_by(t, id) == 0) {
                return bench_clock_ms() - t0;
            }
        }
        bench_pause_ms(BENCH_POLL_MS);
    }
    bench_fail("broker %d not fenced with its leaderships moved %d ms "
               "after SIGKILL", id, BENCH_FENCE_BUDGET_MS);
}

static void bench_fence_move(void)
{
    static struct cluster c;
    memset(&c, 0, sizeof c);
    c.session_timeout_ms = BENCH_SESSION_TIMEOUT_MS;
    start_cluster(&c, 3, 3);
    const char *topic = "bench-fence";
    int16_t err = cluster_create_topic(&c, topic, BENCH_FENCE_PARTITIONS,
                                       BENCH_RF);
    if (err != KAFKA_ERROR_NONE) {
        bench_fail("CreateTopics %s: %s", topic, kafka_error_name(err));
    }
    struct meta_image img;
    meta_image_init(&img);
    int hint = -1;
    if (!active_image(&c, &hint, &img)) {
        bench_fail("no active controller after creating %s", topic);
    }
    const struct meta_topic *t = need_topic(&img, topic,
                                            BENCH_FENCE_PARTITIONS);
    int victim = pick_victim(&c, t);
    int32_t id = c.brokers[victim].id;
    int led = led_by(t, id);
    printf("info bench=controller_fence_move controllers=%d brokers=%d "
           "partitions=%d rf=%d session_timeout_ms=%lld "
           "heartbeat_interval_ms=%lld victim=%d led=%d clock=from_sigkill "
           "(its last heartbeat, up to heartbeat_interval_ms earlier, is "
           "not visible from outside)\n", c.n_controllers, c.n_brokers,
           BENCH_FENCE_PARTITIONS, BENCH_RF,
           (long long)c.session_timeout_ms,
           (long long)c.heartbeat_interval_ms, id, led);
    fflush(stdout);
    double took = fence_move_wait(&c, victim, topic, &img);
    check_moved(need_topic(&img, topic, BENCH_FENCE_PARTITIONS), id);
    meta_image_free(&img);
    printf("RESULT bench=controller_fence_move fence_move_ms=%.1f "
           "session_timeout_ms=%lld ratio=%.3f\n", took,
           (long long)c.session_timeout_ms,
           took / (double)c.session_timeout_ms);
    fflush(stdout);
    bench_cluster_stop(&c);
}

/* ------------------------------------------------------------------------
 * Creating partitions */

/* Round trip in milliseconds of one CreateTopics for name on controller
 * i; fails the bench unless the topic was created. */
static double create_topic_ms(struct cluster *c, int i, const char *name,
                              int32_t partitions)
{
    double t0 = bench_clock_ms();
    int16_t err = cluster_create_topic_on(c, i, name, partitions, BENCH_RF,
                                          BENCH_CREATE_TIMEOUT_MS);
    double took = bench_clock_ms() - t0;
    if (err != KAFKA_ERROR_NONE) {
        bench_fail("CreateTopics %s (%d partitions): %s", name, partitions,
                   kafka_error_name(err));
    }
    return took;
}

/* The topic is in the active controller's image, every partition with
 * BENCH_RF replicas and a leader. */
static void check_created(struct cluster *c, const char *name,
                          int32_t partitions)
{
    struct meta_image img;
    meta_image_init(&img);
    int hint = -1;
    if (!active_image(c, &hint, &img)) {
        bench_fail("no active controller after creating %s", name);
    }
    const struct meta_topic *t = need_topic(&img, name, partitions);
    for (int32_t p = 0; p < t->n_partitions; p++) {
        const struct meta_partition *mp = &t->partitions[p];
        if (mp->replicas.n != BENCH_RF || mp->leader == META_NO_LEADER) {
            bench_fail("partition %s-%d: %d replicas, leader %d", name, p,
                       mp->replicas.n, mp->leader);
        }
    }
    meta_image_free(&img);
}

/* Informational, no floor: milliseconds from the end of the big
 * CreateTopics until every broker's own log says the topic's last
 * partition took its role ("became leader|follower of T-P at epoch",
 * once its log is open: a broker opens them in partition order), or -1
 * after BENCH_HOSTING_BUDGET_MS; *fenced counts the brokers the active
 * controller showed fenced meanwhile. */
static double watch_brokers(struct cluster *c, const char *topic,
                            int32_t partitions, int *fenced)
{
    char text[META_TOPIC_NAME_BYTES_MAX + 32];
    snprintf(text, sizeof text, " of %s-%d at epoch ", topic,
             partitions - 1);
    bool seen_fenced[CLUSTER_BROKERS_MAX] = {false};
    struct meta_image img;
    meta_image_init(&img);
    int hint = -1;
    double t0 = bench_clock_ms();
    double took = -1;
    while (took < 0 && bench_clock_ms() - t0 < BENCH_HOSTING_BUDGET_MS) {
        bool all = true;
        for (int i = 0; i < c->n_brokers; i++) {
            all = all && cluster_log_contains(&c->brokers[i], text);
        }
        if (all) {
            took = bench_clock_ms() - t0;
        }
        for (int i = 0; active_image(c, &hint, &img) && i < c->n_brokers;
             i++) {
            const struct meta_broker *b = meta_image_broker(
                &img, c->brokers[i].id);
            seen_fenced[i] = seen_fenced[i] || b == NULL || b->fenced;
        }
        bench_pause_ms(BENCH_QUORUM_POLL_MS);
    }
    meta_image_free(&img);
    *fenced = 0;
    for (int i = 0; i < c->n_brokers; i++) {
        *fenced += seen_fenced[i];
    }
    return took;
}

static void bench_create_partitions(void)
{
    static struct cluster c;
    memset(&c, 0, sizeof c);
    start_cluster(&c, 3, 3);
    struct ctl_view v;
    int active = wait_active(&c, bench_clock_ms() + BENCH_FAILOVER_BUDGET_MS,
                             &v);
    if (active < 0) {
        bench_fail("no active controller");
    }
    printf("info bench=controller_create_partitions controllers=%d "
           "brokers=%d rf=%d active=%d one_partition_rounds=%d (median; "
           "taken first, on the same quiet cluster)\n", c.n_controllers,
           c.n_brokers, BENCH_RF, v.node_id, BENCH_CREATE_ROUNDS);
    fflush(stdout);
    double one[BENCH_CREATE_ROUNDS];
    for (int r = 0; r < BENCH_CREATE_ROUNDS; r++) {
        char name[32];
        snprintf(name, sizeof name, "bench-one-%d", r);
        one[r] = create_topic_ms(&c, active, name, 1);
        check_created(&c, name, 1);
    }
    double one_med = bench_median(one, BENCH_CREATE_ROUNDS);
    double big = create_topic_ms(&c, active, "bench-big",
                                 BENCH_BIG_PARTITIONS);
    check_created(&c, "bench-big", BENCH_BIG_PARTITIONS);
    printf("RESULT bench=controller_create_partitions partitions=%d "
           "create_ms=%.1f one_partition_ms=%.1f ratio=%.1f\n",
           BENCH_BIG_PARTITIONS, big, one_med, big / one_med);
    fflush(stdout);
    int fenced = 0;
    double hosting = watch_brokers(&c, "bench-big", BENCH_BIG_PARTITIONS,
                                   &fenced);
    printf("info bench=controller_create_partitions brokers_hosting_ms=%.0f "
           "(-1: not within %d ms) brokers_fenced_meanwhile=%d "
           "session_timeout_ms=%lld\n", hosting, BENCH_HOSTING_BUDGET_MS,
           fenced, (long long)c.session_timeout_ms);
    fflush(stdout);
    kill_brokers(&c);
    bench_cluster_stop(&c);
}

/* ------------------------------------------------------------------------
 * Main */

int main(void)
{
    bench_set_name("bench_controller");
    /* The cluster helper writes to controllers that may have just died;
     * the nodes themselves ignore SIGPIPE too. */
    (void)signal(SIGPIPE, SIG_IGN);
    double t0 = bench_clock_ms();
    bench_failover();
    bench_fence_move();
    bench_create_partitions();
    printf("info bench=controller total_s=%.1f\n",
           (bench_clock_ms() - t0) / 1e3);
    return 0;
}
