/* The controller quorum with real processes on 127.0.0.1: failover of the
 * active controller, broker fencing and leader moves, controlled
 * shutdown, a full restart of the quorum, and malformed frames. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/arena.h"
#include "common/kafka/kafka_client.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/meta/meta.h"
#include "common/rc.h"
#include "common/reader.h"
#include "common/writer.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/cluster.h"
#include "tests/lib/kafka_wire.h"

static struct cluster c;

static void teardown(void)
{
    cluster_destroy(&c);
}

TestSuite(controller, .fini = teardown, .timeout = 120);

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void start_ready(int controllers, int brokers)
{
    memset(&c, 0, sizeof c);
    cluster_start(&c, controllers, brokers);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000),
              "cluster not ready; logs in %s", c.dir);
}

/* Leaders of every partition of topic in img, counted per broker id. */
static int led_by(const struct meta_image *img, const char *topic,
                  int32_t broker)
{
    const struct meta_topic *t = meta_image_topic(img, topic);
    cr_assert_not_null(t, "topic %s missing", topic);
    int n = 0;
    for (int32_t p = 0; p < t->n_partitions; p++) {
        n += t->partitions[p].leader == broker;
    }
    return n;
}

Test(controller, active_controller_failover_keeps_the_metadata)
{
    start_ready(3, 3);
    cr_assert_eq(cluster_create_topic(&c, "orders", 6, 3), KAFKA_ERROR_NONE);
    int active = cluster_active(&c);
    cr_assert_geq(active, 0);
    uint64_t killed = cluster_now_ms();
    cluster_node_signal(&c, &c.controllers[active], SIGKILL, true);
    int next = -1;
    while (next < 0 && cluster_now_ms() - killed < 10000) {
        next = cluster_active(&c);
    }
    uint64_t took = cluster_now_ms() - killed;
    cr_assert_geq(next, 0, "no new active controller");
    cr_assert_neq(next, active);
    cr_assert_leq(took, 2000, "failover took %llu ms",
                  (unsigned long long)took);
    struct meta_image img;
    meta_image_init(&img);
    cr_assert(cluster_image(&c, &img));
    const struct meta_topic *t = meta_image_topic(&img, "orders");
    cr_assert_not_null(t);
    cr_assert_eq(t->n_partitions, 6);
    cr_assert_eq(img.n_brokers, 3);
    meta_image_free(&img);
    /* The new active controller takes writes. */
    cr_assert_eq(cluster_create_topic(&c, "payments", 2, 3),
                 KAFKA_ERROR_NONE);
}

Test(controller, killed_broker_is_fenced_and_leadership_moves)
{
    start_ready(3, 3);
    cr_assert_eq(cluster_create_topic(&c, "t", 6, 3), KAFKA_ERROR_NONE);
    struct meta_image img;
    meta_image_init(&img);
    cr_assert(cluster_image(&c, &img));
    int32_t victim = c.brokers[0].id;
    cr_assert_gt(led_by(&img, "t", victim), 0, "round robin gives it some");
    uint64_t killed = cluster_now_ms();
    cluster_node_signal(&c, &c.brokers[0], SIGKILL, true);
    bool moved = false;
    uint64_t limit = (uint64_t)c.session_timeout_ms + 1000;
    while (!moved && cluster_now_ms() - killed < limit + 5000) {
        if (cluster_image(&c, &img)) {
            const struct meta_broker *b = meta_image_broker(&img, victim);
            moved = b->fenced && led_by(&img, "t", victim) == 0;
        }
    }
    uint64_t took = cluster_now_ms() - killed;
    cr_assert(moved, "broker %d still leads or is not fenced", victim);
    cr_assert_leq(took, limit, "fenced after %llu ms",
                  (unsigned long long)took);
    const struct meta_topic *t = meta_image_topic(&img, "t");
    for (int32_t p = 0; p < t->n_partitions; p++) {
        const struct meta_partition *mp = &t->partitions[p];
        cr_assert(meta_replica_set_contains(&mp->isr, mp->leader),
                  "partition %d leader %d not in its ISR", p, mp->leader);
        cr_assert_not(meta_replica_set_contains(&mp->isr, victim),
                      "partition %d keeps the fenced broker in its ISR", p);
        /* The new leader is the first live ISR member in replica order. */
        for (int32_t k = 0; k < mp->replicas.n; k++) {
            int32_t r = mp->replicas.ids[k];
            if (r != victim) {
                cr_assert_eq(mp->leader, r, "partition %d", p);
                break;
            }
        }
    }
    /* The active controller said what changed and why. */
    int active = cluster_active(&c);
    cr_assert_geq(active, 0);
    const struct cluster_node *ctl = &c.controllers[active];
    char line[200];
    snprintf(line, sizeof line, "event: broker %d fenced (session expired "
             "after %lld ms", victim, (long long)c.session_timeout_ms);
    cr_assert(cluster_log_contains(ctl, line), "no \"%s\" in %s", line,
              ctl->log);
    int32_t p0 = -1;
    for (int32_t p = 0; p < t->n_partitions && p0 < 0; p++) {
        if (t->partitions[p].replicas.ids[0] == victim) {
            p0 = p;
        }
    }
    cr_assert_geq(p0, 0);
    snprintf(line, sizeof line, "event: t-%d leader %d -> %d epoch 0 -> 1",
             p0, victim, t->partitions[p0].leader);
    cr_assert(cluster_log_contains(ctl, line), "no \"%s\" in %s", line,
              ctl->log);
    snprintf(line, sizeof line, "(broker %d fenced: session expired after",
             victim);
    cr_assert(cluster_log_contains(ctl, line), "no cause \"%s\" in %s",
              line, ctl->log);
    /* Back again: registered anew and unfenced. */
    cluster_node_start(&c, &c.brokers[0]);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 15000));
    snprintf(line, sizeof line, "event: broker %d unfenced (broker %d "
             "caught up", victim, victim);
    uint64_t deadline = cluster_now_ms() + 15000;
    while (!cluster_log_contains(ctl, line) && cluster_now_ms() < deadline) {
        pause_ms(50);
    }
    cr_assert(cluster_log_contains(ctl, line), "no \"%s\" in %s", line,
              ctl->log);
    meta_image_free(&img);
}

Test(controller, a_broker_with_node_id_zero_is_fenced_like_any_other)
{
    memset(&c, 0, sizeof c);
    c.broker_ids_from_zero = true;
    cluster_start(&c, 3, 2);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000),
              "cluster not ready; logs in %s", c.dir);
    cr_assert_eq(c.brokers[0].id, 0);
    uint64_t killed = cluster_now_ms();
    cluster_node_signal(&c, &c.brokers[0], SIGKILL, true);
    struct meta_image img;
    meta_image_init(&img);
    bool fenced = false;
    uint64_t limit = (uint64_t)c.session_timeout_ms + 5000;
    while (!fenced && cluster_now_ms() - killed < limit) {
        if (cluster_image(&c, &img)) {
            const struct meta_broker *b = meta_image_broker(&img, 0);
            fenced = b != NULL && b->fenced;
        }
        if (!fenced) {
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL); /* poll interval; the deadline bounds it */
        }
    }
    cr_assert(fenced, "broker 0 not fenced %llu ms after its kill",
              (unsigned long long)(cluster_now_ms() - killed));
    meta_image_free(&img);
}

Test(controller, last_isr_member_fenced_leaves_the_partition_offline)
{
    start_ready(3, 1);
    cr_assert_eq(cluster_create_topic(&c, "solo", 2, 1), KAFKA_ERROR_NONE);
    cluster_node_signal(&c, &c.brokers[0], SIGKILL, true);
    struct meta_image img;
    meta_image_init(&img);
    bool offline = false;
    uint64_t deadline = cluster_now_ms() + (uint64_t)c.session_timeout_ms +
                        5000;
    while (!offline && cluster_now_ms() < deadline) {
        if (cluster_image(&c, &img)) {
            const struct meta_topic *t = meta_image_topic(&img, "solo");
            offline = meta_image_broker(&img, 1)->fenced &&
                      t->partitions[0].leader == META_NO_LEADER;
        }
    }
    cr_assert(offline);
    const struct meta_topic *t = meta_image_topic(&img, "solo");
    cr_assert_eq(t->partitions[0].isr.n, 1, "the ISR is never emptied");
    cr_assert_eq(t->partitions[0].isr.ids[0], 1);
    cluster_node_start(&c, &c.brokers[0]);
    bool back = false;
    deadline = cluster_now_ms() + 15000;
    while (!back && cluster_now_ms() < deadline) {
        if (cluster_image(&c, &img)) {
            t = meta_image_topic(&img, "solo");
            back = t->partitions[0].leader == 1 &&
                   t->partitions[1].leader == 1;
        }
    }
    cr_assert(back, "the returning ISR member leads again");
    meta_image_free(&img);
}

Test(controller, sigterm_moves_leadership_before_the_broker_exits)
{
    start_ready(3, 3);
    cr_assert_eq(cluster_create_topic(&c, "t", 6, 3), KAFKA_ERROR_NONE);
    struct meta_image img;
    meta_image_init(&img);
    cr_assert(cluster_image(&c, &img));
    int32_t id = c.brokers[1].id;
    cr_assert_gt(led_by(&img, "t", id), 0);
    int status = cluster_node_signal(&c, &c.brokers[1], SIGTERM, true);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "broker exit status %d", status);
    cr_assert(cluster_log_contains(&c.brokers[1],
                                   "controlled shutdown complete"));
    /* When it exited the controller had already moved its leaderships,
     * and well before its session could have lapsed. */
    cr_assert(cluster_image(&c, &img));
    cr_assert_eq(led_by(&img, "t", id), 0);
    cr_assert(meta_image_broker(&img, id)->fenced);
    meta_image_free(&img);
}

Test(controller, metadata_survives_a_restart_of_every_controller)
{
    start_ready(3, 2);
    cr_assert_eq(cluster_create_topic(&c, "kept", 3, 2), KAFKA_ERROR_NONE);
    for (int i = 0; i < c.n_controllers; i++) {
        cluster_node_signal(&c, &c.controllers[i], SIGTERM, true);
    }
    for (int i = 0; i < c.n_controllers; i++) {
        cluster_node_start(&c, &c.controllers[i]);
    }
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000));
    struct meta_image img;
    meta_image_init(&img);
    cr_assert(cluster_image(&c, &img));
    const struct meta_topic *t = meta_image_topic(&img, "kept");
    cr_assert_not_null(t, "topic lost in the restart");
    cr_assert_eq(t->n_partitions, 3);
    cr_assert_eq(t->partitions[0].replicas.n, 2);
    meta_image_free(&img);
}

enum outcome { NOT_CONNECTED, NO_ANSWER, ANSWERED };

/* One request on a new connection to the broker at port, with budget_ms
 * for connecting and the answer; on ANSWERED *resp (malloc'd, the caller
 * frees it) and *len hold the answer's body. */
static enum outcome call_on(int port, int16_t key, int16_t version,
                            const struct writer *body, uint64_t budget_ms,
                            uint8_t **resp, size_t *len)
{
    struct kafka_client kc;
    *resp = NULL;
    if (kafka_client_open(&kc, "127.0.0.1", port, "test", budget_ms) !=
        RC_OK) {
        kafka_client_close(&kc);
        return NOT_CONNECTED;
    }
    int rv = kafka_client_call(&kc, key, version, body, resp, len);
    kafka_client_close(&kc);
    if (rv != RC_OK) {
        cr_assert_eq(rv, RC_TIMEOUT, "request failed: %s", rc_str(rv));
        free(*resp);
        *resp = NULL;
        return NO_ANSWER;
    }
    return ANSWERED;
}

/* Metadata v1 for one topic; on ANSWERED the topic's error and partition
 * count. */
static enum outcome metadata_of(int port, const char *topic,
                                uint64_t budget_ms, int16_t *error,
                                int32_t *partitions)
{
    struct kafka_MetadataRequestTopic rt = {.Name = slice_from_str(topic)};
    struct kafka_MetadataRequest rq = {.Topics = &rt, .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, 1 << 16);
    cr_assert_eq(kafka_metadata_request_encode(&w, 1, &rq), RC_OK);
    uint8_t *resp = NULL;
    size_t len = 0;
    enum outcome got = call_on(port, KAFKA_API_METADATA, 1, &w, budget_ms,
                               &resp, &len);
    writer_free(&w);
    if (got != ANSWERED) {
        return got;
    }
    struct reader r;
    reader_init(&r, resp, len);
    struct arena a;
    arena_init(&a, 1 << 20);
    struct kafka_MetadataResponse m;
    cr_assert_eq(kafka_metadata_response_decode(&r, 1, &a, &m), RC_OK);
    cr_assert_eq(m.TopicsCnt, 1);
    *error = m.Topics[0].ErrorCode;
    *partitions = m.Topics[0].PartitionsCnt;
    arena_free(&a);
    free(resp);
    return ANSWERED;
}

/* ListOffsets v2 latest (a consumer's: replica -1) for topic-0; on
 * ANSWERED the partition's error and offset. */
static enum outcome latest_of(int port, const char *topic,
                              uint64_t budget_ms, int16_t *error,
                              int64_t *offset)
{
    struct kafka_ListOffsetsPartition lp = {.PartitionIndex = 0,
                                            .CurrentLeaderEpoch = -1,
                                            .Timestamp = -1};
    struct kafka_ListOffsetsTopic lt = {.Name = slice_from_str(topic),
                                        .Partitions = &lp,
                                        .PartitionsCnt = 1};
    struct kafka_ListOffsetsRequest rq = {.ReplicaId = -1, .Topics = &lt,
                                          .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, 1 << 16);
    /* v5: a lagging new leader answers OFFSET_NOT_AVAILABLE from v5 on,
     * LEADER_NOT_AVAILABLE before, as Kafka. */
    cr_assert_eq(kafka_list_offsets_request_encode(&w, 5, &rq), RC_OK);
    uint8_t *resp = NULL;
    size_t len = 0;
    enum outcome got = call_on(port, KAFKA_API_LIST_OFFSETS, 5, &w,
                               budget_ms, &resp, &len);
    writer_free(&w);
    if (got != ANSWERED) {
        return got;
    }
    struct reader r;
    reader_init(&r, resp, len);
    struct arena a;
    arena_init(&a, 1 << 20);
    struct kafka_ListOffsetsResponse out;
    cr_assert_eq(kafka_list_offsets_response_decode(&r, 5, &a, &out),
                 RC_OK);
    *error = out.Topics[0].Partitions[0].ErrorCode;
    *offset = out.Topics[0].Partitions[0].Offset;
    arena_free(&a);
    free(resp);
    return ANSWERED;
}

/* Kafka enables request processing only once a broker has caught up with
 * the metadata log, which it fetches from the quorum's leader. A restarted
 * broker that answered from its empty image, or from the empty image of a
 * restarted controller that had no leader yet, told clients their topic
 * did not exist, and librdkafka then drops the topic's partitions (a
 * consumer's assignment among them). */
Test(controller, a_restarted_broker_answers_only_once_it_has_the_metadata)
{
    start_ready(3, 1);
    cr_assert_eq(cluster_create_topic(&c, "kept", 2, 1), KAFKA_ERROR_NONE);
    for (int i = 0; i < c.n_controllers; i++) {
        cluster_node_signal(&c, &c.controllers[i], SIGKILL, true);
    }
    cluster_node_signal(&c, &c.brokers[0], SIGKILL, true);
    cluster_node_start(&c, &c.brokers[0]);
    /* One controller of three: no leader, nothing applied. */
    cluster_node_start(&c, &c.controllers[0]);
    /* The broker listens, but nobody can give it the metadata: the
     * request waits rather than being answered "unknown topic". */
    int16_t error = -1;
    int32_t partitions = -1;
    enum outcome got = NOT_CONNECTED;
    uint64_t deadline = cluster_now_ms() + 15000;
    while (got == NOT_CONNECTED && cluster_now_ms() < deadline) {
        got = metadata_of(c.brokers[0].port, "kept", 3000, &error,
                          &partitions);
    }
    cr_assert_neq(got, NOT_CONNECTED, "the broker never listened");
    cr_assert_eq(got, NO_ANSWER, "answered before it had the metadata: "
                 "error %d, %d partitions", error, partitions);
    cluster_node_start(&c, &c.controllers[1]);
    cluster_node_start(&c, &c.controllers[2]);
    got = metadata_of(c.brokers[0].port, "kept", 30000, &error, &partitions);
    cr_assert_eq(got, ANSWERED, "no answer once the controller was back");
    cr_assert_eq(error, KAFKA_ERROR_NONE);
    cr_assert_eq(partitions, 2);
}

/* The leader of a partition killed and started again at once, while its
 * old session is still alive. Kafka refuses the new incarnation's
 * registration until the old one is fenced (which moves its leaderships
 * to new epochs) and serves nothing before the registration is caught
 * up. A restarted broker that served from the image it fetched first
 * acted as leader of its old epoch with the high watermark of its last
 * checkpoint, below what it had acknowledged. */
/* The partition of topic as the controllers have it once pred holds
 * (within 15 s); asserts that it came. */
static struct meta_partition wait_partition(const char *topic,
                                            bool (*pred)(
                                                const struct meta_partition *))
{
    struct meta_partition out = {.leader = -2};
    uint64_t deadline = cluster_now_ms() + 15000;
    while (out.leader == -2 && cluster_now_ms() < deadline) {
        struct meta_image img;
        meta_image_init(&img);
        if (cluster_image(&c, &img)) {
            const struct meta_topic *t = meta_image_topic(&img, topic);
            if (t != NULL && pred(&t->partitions[0])) {
                out = t->partitions[0];
            }
        }
        meta_image_free(&img);
        if (out.leader == -2) {
            pause_ms(50);
        }
    }
    cr_assert_neq(out.leader, -2, "%s-0 never reached the state", topic);
    return out;
}

static bool full_isr(const struct meta_partition *p)
{
    return p->leader >= 0 && p->isr.n == p->replicas.n;
}

static bool leaderless(const struct meta_partition *p)
{
    return p->leader < 0;
}

/* 100 records to topic-0 through the broker at port with acks=all. */
static void produce_100_acked(int port, const char *topic)
{
    struct kafka_client kc;
    cr_assert(kafka_wire_connect(&kc, port), "%s", kc.error);
    struct built_batch b = batch_build(100, 100, 1700000000000, 7);
    int16_t err = -1;
    uint64_t deadline = cluster_now_ms() + 15000;
    while (err != KAFKA_ERROR_NONE && cluster_now_ms() < deadline) {
        err = kafka_wire_produce(&kc, topic, 0, b.bytes, b.len, -1);
    }
    built_batch_free(&b);
    kafka_client_close(&kc);
    cr_assert_eq(err, KAFKA_ERROR_NONE, "acks=all produce failed");
}

/* Asks the broker at port for topic-0's latest offset until it answers
 * (30 s), or with until_leader until it answers as the leader; every
 * answer must be an error or at least 100. Returns the last error. */
static int16_t expect_no_offset_below_100(int port, const char *topic,
                                          bool until_leader)
{
    int16_t err = -1;
    int64_t offset = -1;
    bool done = false;
    uint64_t deadline = cluster_now_ms() + 30000;
    while (!done && cluster_now_ms() < deadline) {
        enum outcome got = latest_of(port, topic, 3000, &err, &offset);
        if (got != ANSWERED) {
            continue;
        }
        cr_assert(err != KAFKA_ERROR_NONE || offset >= 100,
                  "answered offset %lld below the 100 acknowledged "
                  "records", (long long)offset);
        done = !until_leader || err != KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
        if (!done) {
            pause_ms(50);
        }
    }
    cr_assert(done, "no answer%s in 30 s", until_leader ? " as leader" : "");
    return err;
}

/* The leader of a partition killed and started again at once, while its
 * old session is still alive. Kafka refuses the new incarnation's
 * registration until the old one is fenced (which moves its leaderships
 * to new epochs) and serves nothing before the registration is caught
 * up. A restarted broker that served from the image it fetched first
 * acted as leader of its old epoch with the high watermark of its last
 * checkpoint, below what it had acknowledged. */
Test(controller, a_restarted_leader_never_serves_its_old_epoch)
{
    start_ready(1, 2);
    cr_assert_eq(cluster_create_topic(&c, "hw", 1, 2), KAFKA_ERROR_NONE);
    struct cluster_node *ln =
        cluster_broker(&c, wait_partition("hw", full_isr).leader);
    produce_100_acked(ln->port, "hw");
    /* Within the session timeout and before its next HW checkpoint. */
    cluster_node_signal(&c, ln, SIGKILL, true);
    cluster_node_start(&c, ln);
    (void)expect_no_offset_below_100(ln->port, "hw", false);
}

/* Broker n's log from its latest start on (its "broker node=<id>
 * listener=" line), malloc'd; the log file is appended to across
 * restarts. */
static char *log_of_this_start(const struct cluster_node *n)
{
    FILE *f = fopen(n->log, "r");
    cr_assert_not_null(f, "no log %s", n->log);
    size_t cap = 1u << 20;
    char *all = malloc(cap);
    cr_assert_not_null(all);
    size_t len = 0;
    size_t got;
    while ((got = fread(all + len, 1, cap - 1 - len, f)) > 0) {
        len += got;
        if (len == cap - 1) {
            cap *= 2;
            all = realloc(all, cap);
            cr_assert_not_null(all);
        }
    }
    fclose(f);
    all[len] = '\0';
    char marker[64];
    snprintf(marker, sizeof marker, "broker node=%d listener=", n->id);
    const char *start = NULL;
    for (const char *at = strstr(all, marker); at != NULL;
         at = strstr(at + 1, marker)) {
        start = at;
    }
    cr_assert_not_null(start, "no start line in %s", n->log);
    char *out = strdup(start);
    free(all);
    return out;
}

/* Where the first line saying a partition role starts in text, or NULL. */
static const char *first_role_line(const char *text)
{
    static const char *const roles[] = {
        "became leader of ", "became follower of ", " is offline at epoch "};
    const char *first = NULL;
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++) {
        const char *at = strstr(text, roles[i]);
        if (at != NULL && (first == NULL || at < first)) {
            first = at;
        }
    }
    return first;
}

/* A Kafka broker starts fenced (BrokerLifecycleManager): it takes no
 * partition role until it is registered with a new broker epoch and has
 * caught up with the metadata log. Restarted within its session timeout,
 * its registration is refused (DUPLICATE_BROKER_REGISTRATION) until the
 * controller fences the old incarnation and moves its leadership; the
 * image it fetched meanwhile still names it leader. A broker that
 * applied that image said "became leader" before it had registered, then
 * "became follower": two leaders, to whoever read its log. */
Test(controller, a_restarted_broker_takes_no_role_before_it_is_caught_up)
{
    start_ready(1, 2);
    cr_assert_eq(cluster_create_topic(&c, "roles", 1, 2), KAFKA_ERROR_NONE);
    struct cluster_node *ln =
        cluster_broker(&c, wait_partition("roles", full_isr).leader);
    cluster_node_signal(&c, ln, SIGKILL, true);
    cluster_node_start(&c, ln);
    /* Until it has caught up and then taken its role in roles-0. */
    char *text = NULL;
    const char *caught_up = NULL;
    bool took_role = false;
    uint64_t deadline = cluster_now_ms() + 20000;
    do {
        free(text);
        pause_ms(50);
        text = log_of_this_start(ln);
        caught_up = strstr(text, "metadata caught up at offset");
        took_role =
            caught_up != NULL &&
            (strstr(caught_up, "became follower of roles-0 ") != NULL ||
             strstr(caught_up, "became leader of roles-0 ") != NULL);
    } while (!took_role && cluster_now_ms() < deadline);
    const char *refused = strstr(text, "DUPLICATE_BROKER_REGISTRATION");
    const char *registered = strstr(text, "registered with controller=");
    const char *role = first_role_line(text);
    cr_assert_not_null(refused, "not restarted within the session: %s",
                       ln->log);
    cr_assert_not_null(registered, "never registered: %s", ln->log);
    cr_assert_not_null(caught_up, "never caught up: %s", ln->log);
    cr_assert(refused < registered && registered < caught_up,
              "not refused, registered, caught up in order: %s", ln->log);
    cr_assert_not_null(role, "no role for roles-0 in 20 s: %s", ln->log);
    cr_assert(role > caught_up, "a role before it caught up: %.*s",
              (int)strcspn(role, "\n"), role);
    cr_assert(took_role, "no role for roles-0 once caught up: %s", ln->log);
    free(text);
}

/* KIP-207: every replica killed; the last ISR member comes back alone and
 * leads a new epoch that starts at its log end, with the high watermark
 * of its last checkpoint. Until the HW reaches the epoch's start (never,
 * here: min ISR 2 holds it), ListOffsets answers OFFSET_NOT_AVAILABLE
 * rather than offsets below what was acknowledged. */
Test(controller, a_new_leader_below_its_epoch_start_lists_no_offsets)
{
    memset(&c, 0, sizeof c);
    c.broker_extra_config = "min.insync.replicas=2\n";
    cluster_start(&c, 1, 2);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000),
              "cluster not ready; logs in %s", c.dir);
    cr_assert_eq(cluster_create_topic(&c, "hw", 1, 2), KAFKA_ERROR_NONE);
    struct cluster_node *ln =
        cluster_broker(&c, wait_partition("hw", full_isr).leader);
    produce_100_acked(ln->port, "hw");
    for (int i = 0; i < c.n_brokers; i++) {
        cluster_node_signal(&c, &c.brokers[i], SIGKILL, true);
    }
    struct meta_partition p = wait_partition("hw", leaderless);
    cr_assert_eq(p.isr.n, 1);
    struct cluster_node *last = cluster_broker(&c, p.isr.ids[0]);
    cluster_node_start(&c, last);
    cr_assert_eq(expect_no_offset_below_100(last->port, "hw", true),
                 KAFKA_ERROR_OFFSET_NOT_AVAILABLE);
}

/* The broker that led before (a predicate cannot take arguments). */
static int32_t g_old_leader;

static bool led_by_other(const struct meta_partition *p)
{
    return p->leader >= 0 && p->leader != g_old_leader;
}

/* Kafka's divergence on rejoin (KIP-101/279): records a leader took with
 * acks=1 while its follower was stopped were never committed; the
 * follower leads the next epoch, and the old leader, back, truncates
 * them away and says so. */
Test(controller, a_diverged_replica_truncates_on_rejoin_and_says_so)
{
    memset(&c, 0, sizeof c);
    c.broker_extra_config = "replica.fetch.wait.max.ms=50\n";
    cluster_start(&c, 1, 2);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 30000),
              "cluster not ready; logs in %s", c.dir);
    cr_assert_eq(cluster_create_topic(&c, "div", 1, 2), KAFKA_ERROR_NONE);
    struct meta_partition p = wait_partition("div", full_isr);
    struct cluster_node *ln = cluster_broker(&c, p.leader);
    int32_t follower = p.replicas.ids[0] == p.leader ? p.replicas.ids[1]
                                                     : p.replicas.ids[0];
    struct cluster_node *fn = cluster_broker(&c, follower);
    produce_100_acked(ln->port, "div"); /* acks=all: both hold 0..99 */
    cluster_node_signal(&c, fn, SIGSTOP, false);
    /* The fetch it had parked at the leader is answered, empty, within
     * replica.fetch.wait.max.ms (50 ms); stopped, it sends no other, so
     * nothing written from now on reaches it. */
    pause_ms(1000);
    struct kafka_client kc;
    cr_assert(kafka_wire_connect(&kc, ln->port), "%s", kc.error);
    struct built_batch b = batch_build(100, 100, 1700000000000, 8);
    cr_assert_eq(kafka_wire_produce(&kc, "div", 0, b.bytes, b.len, 1),
                 KAFKA_ERROR_NONE, "acks=1 produce");
    built_batch_free(&b);
    kafka_client_close(&kc);
    cluster_node_signal(&c, ln, SIGKILL, true);
    cluster_node_signal(&c, fn, SIGCONT, false);
    g_old_leader = p.leader;
    (void)wait_partition("div", led_by_other);
    cluster_node_start(&c, ln);
    char text[160];
    snprintf(text, sizeof text, "event: div-0 truncated 200 -> 100 (leader "
             "%d says epoch ", follower);
    uint64_t deadline = cluster_now_ms() + 20000;
    while (!cluster_log_contains(ln, text) && cluster_now_ms() < deadline) {
        pause_ms(50);
    }
    cr_assert(cluster_log_contains(ln, text), "no \"%s\" in %s", text,
              ln->log);
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* Sends bytes and expects the controller to close the connection. */
static void expect_closed(int port, const void *bytes, size_t n)
{
    int fd = connect_to(port);
    cr_assert_eq(send(fd, bytes, n, MSG_NOSIGNAL), (ssize_t)n);
    char buf[256];
    ssize_t got;
    do {
        got = recv(fd, buf, sizeof buf, 0);
    } while (got > 0);
    cr_assert_eq(got, 0, "connection not closed (errno %d)", errno);
    close(fd);
}

Test(controller, malformed_frames_close_the_connection_not_the_controller)
{
    start_ready(3, 0);
    int port = c.controllers[0].port;
    static const uint8_t zero_len[4] = {0, 0, 0, 0};
    static const uint8_t huge_len[4] = {0x7f, 0xff, 0xff, 0xff};
    static const uint8_t seven[11] = {0, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7};
    expect_closed(port, zero_len, sizeof zero_len);
    expect_closed(port, huge_len, sizeof huge_len);
    expect_closed(port, seven, sizeof seven);
    /* A well-framed request with a garbage payload gets an error answer. */
    uint8_t junk[4 + 8 + 16] = {0, 0, 0, 24};
    memset(junk + 12, 0xff, 16);
    int fd = connect_to(port);
    cr_assert_eq(send(fd, junk, sizeof junk, MSG_NOSIGNAL),
                 (ssize_t)sizeof junk);
    uint8_t hdr[12];
    cr_assert_eq(recv(fd, hdr, sizeof hdr, MSG_WAITALL), (ssize_t)sizeof hdr,
                 "no answer to a garbage payload");
    close(fd);
    pause_ms(50);
    for (int i = 0; i < c.n_controllers; i++) {
        cr_assert_gt(c.controllers[i].pid, 0);
        cr_assert_eq(kill(c.controllers[i].pid, 0), 0, "controller died");
    }
    cr_assert_geq(cluster_active(&c), 0, "still serving");
}

/* Partitions of topic in img whose ISR holds broker (its == true) or not. */
static int32_t in_isr(const struct meta_image *img, const char *topic,
                      int32_t broker)
{
    const struct meta_topic *t = meta_image_topic(img, topic);
    int32_t n = 0;
    for (int32_t p = 0; t != NULL && p < t->n_partitions; p++) {
        n += meta_replica_set_contains(&t->partitions[p].isr, broker);
    }
    return n;
}

/* Waits until broker is in (want) every ISR of topic, or in none. */
static bool wait_isrs(const char *topic, int32_t broker, int32_t want)
{
    struct meta_image img;
    meta_image_init(&img);
    bool ok = false;
    uint64_t deadline = cluster_now_ms() + 30000;
    while (!ok && cluster_now_ms() < deadline) {
        ok = cluster_image(&c, &img) && in_isr(&img, topic, broker) == want;
    }
    meta_image_free(&img);
    return ok;
}

/* A restarted broker rejoins every ISR: each of its leaders asks the
 * controller once per partition, and the requests that queue while one
 * commits share the next proposal rather than waiting for a commit each. */
Test(controller, a_rejoining_broker_rejoins_its_isrs_in_few_proposals)
{
    enum { PARTITIONS = 60 };
    start_ready(3, 3);
    cr_assert_eq(cluster_create_topic(&c, "t", PARTITIONS, 3),
                 KAFKA_ERROR_NONE);
    int32_t victim = c.brokers[2].id;
    cr_assert(wait_isrs("t", victim, PARTITIONS), "ISRs never full");
    cluster_node_signal(&c, &c.brokers[2], SIGKILL, true);
    cr_assert(wait_isrs("t", victim, 0), "broker %d stays in ISRs", victim);
    int active = cluster_active(&c);
    cr_assert_geq(active, 0);
    const struct cluster_node *ctl = &c.controllers[active];
    double alters0 = cluster_metric(
        ctl, "cairn_controller_alter_partition_requests_total");
    double proposals0 = cluster_metric(ctl, "cairn_controller_proposals_total");
    cr_assert_geq(alters0, 0, "no metrics from controller %d", ctl->id);
    cluster_node_start(&c, &c.brokers[2]);
    cr_assert(wait_isrs("t", victim, PARTITIONS), "broker %d not back in "
              "every ISR", victim);
    cr_assert_eq(cluster_active(&c), active, "the active controller moved");
    double alters = cluster_metric(
        ctl, "cairn_controller_alter_partition_requests_total") - alters0;
    double proposals =
        cluster_metric(ctl, "cairn_controller_proposals_total") - proposals0;
    cr_assert_geq(alters, PARTITIONS, "%.0f AlterPartition requests", alters);
    cr_assert_lt(proposals, alters / 2, "%.0f proposals for %.0f "
                 "AlterPartition requests (and a registration)", proposals,
                 alters);
}

/* Two followers restarted together catch up at once: while the leader's
 * AlterPartition for the first is in flight the second is not proposed,
 * and the new partition epoch makes the leader forget what it fetched.
 * With fetch sessions an idle follower names no partition again, so the
 * leader must learn its position from the session (its next fetch looks
 * at the changed partition) or it never rejoins. */
Test(controller, two_followers_restarted_together_both_rejoin_every_isr)
{
    enum { PARTITIONS = 30 };
    start_ready(3, 3);
    cr_assert_eq(cluster_create_topic(&c, "t", PARTITIONS, 3),
                 KAFKA_ERROR_NONE);
    int32_t b2 = c.brokers[1].id;
    int32_t b3 = c.brokers[2].id;
    cr_assert(wait_isrs("t", b2, PARTITIONS), "ISRs never full");
    cr_assert(wait_isrs("t", b3, PARTITIONS), "ISRs never full");
    cluster_node_signal(&c, &c.brokers[1], SIGKILL, true);
    cluster_node_signal(&c, &c.brokers[2], SIGKILL, true);
    cr_assert(wait_isrs("t", b2, 0), "broker %d stays in ISRs", b2);
    cr_assert(wait_isrs("t", b3, 0), "broker %d stays in ISRs", b3);
    cluster_node_start(&c, &c.brokers[1]);
    cluster_node_start(&c, &c.brokers[2]);
    cr_assert(wait_isrs("t", b2, PARTITIONS), "broker %d not back in every "
              "ISR", b2);
    cr_assert(wait_isrs("t", b3, PARTITIONS), "broker %d not back in every "
              "ISR", b3);
}

/* The partition of topic "u" in a fresh image: *leader and whether broker
 * id is in its ISR. False when no image came. */
static bool u_state(int32_t *leader, int32_t id, bool *in_isr)
{
    struct meta_image img;
    meta_image_init(&img);
    bool ok = cluster_image(&c, &img);
    const struct meta_topic *t = ok ? meta_image_topic(&img, "u") : NULL;
    if (t != NULL) {
        *leader = t->partitions[0].leader;
        *in_isr = meta_replica_set_contains(&t->partitions[0].isr, id);
    }
    meta_image_free(&img);
    return t != NULL;
}

/* An offline partition whose topic comes to allow unclean elections is
 * elected without a broker event: the active controller retries offline
 * partitions every second, as it must anyway for those an unfence could
 * not elect in one batch. */
Test(controller, an_offline_partition_is_elected_once_its_topic_allows_it)
{
    start_ready(3, 2);
    cr_assert_eq(cluster_create_topic(&c, "u", 1, 2), KAFKA_ERROR_NONE);
    int32_t leader = META_NO_LEADER;
    bool in_isr = false;
    uint64_t deadline = cluster_now_ms() + 30000;
    while (cluster_now_ms() < deadline &&
           !(u_state(&leader, c.brokers[0].id, &in_isr) &&
             leader != META_NO_LEADER)) {
    }
    cr_assert_neq(leader, META_NO_LEADER);
    int lead = c.brokers[0].id == leader ? 0 : 1;
    int other = 1 - lead;
    int32_t other_id = c.brokers[other].id;
    /* The follower goes, then the leader: offline, the leader its ISR. */
    cluster_node_signal(&c, &c.brokers[other], SIGKILL, true);
    deadline = cluster_now_ms() + 30000;
    while (cluster_now_ms() < deadline &&
           !(u_state(&leader, other_id, &in_isr) && !in_isr)) {
    }
    cr_assert_not(in_isr, "broker %d left the ISR", other_id);
    cluster_node_signal(&c, &c.brokers[lead], SIGKILL, true);
    deadline = cluster_now_ms() + 30000;
    while (cluster_now_ms() < deadline &&
           !(u_state(&leader, other_id, &in_isr) &&
             leader == META_NO_LEADER)) {
    }
    cr_assert_eq(leader, META_NO_LEADER, "offline");
    cluster_node_start(&c, &c.brokers[other]);
    bool unfenced = false;
    deadline = cluster_now_ms() + 30000;
    struct meta_image img;
    meta_image_init(&img);
    while (!unfenced && cluster_now_ms() < deadline) {
        const struct meta_broker *b =
            cluster_image(&c, &img) ? meta_image_broker(&img, other_id) : NULL;
        unfenced = b != NULL && !b->fenced;
    }
    meta_image_free(&img);
    cr_assert(unfenced, "broker %d back", other_id);
    cr_assert(u_state(&leader, other_id, &in_isr));
    cr_assert_eq(leader, META_NO_LEADER, "not in the ISR: no clean leader");
    cr_assert_eq(kafka_wire_set_config(c.brokers[other].port, 2, "u",
                                       "unclean.leader.election.enable",
                                       "true"),
                 KAFKA_ERROR_NONE);
    deadline = cluster_now_ms() + 15000;
    while (cluster_now_ms() < deadline &&
           !(u_state(&leader, other_id, &in_isr) && leader == other_id)) {
    }
    cr_assert_eq(leader, other_id, "elected (unclean) by the retry");
}

/* A heartbeat that changes nothing is answered at once, whatever waits
 * in the queue: with both other controllers stopped, a CreateTopics stays
 * in flight (it cannot commit), and a heartbeat queued behind it would
 * wait as long. A broker sends its next heartbeat only after an answer,
 * so behind a backlog of proposals (thousands of ISR changes) it would
 * be fenced for the controller's own slowness. */
Test(controller, a_heartbeat_is_answered_ahead_of_a_stuck_proposal)
{
    memset(&c, 0, sizeof c);
    c.election_timeout_ms = 5000; /* the active one stays while alone */
    cluster_start(&c, 3, 1);
    cr_assert(cluster_wait_ready(&c, cluster_now_ms() + 60000));
    int active = cluster_active(&c);
    cr_assert_geq(active, 0);
    struct meta_image img;
    meta_image_init(&img);
    cr_assert(cluster_image(&c, &img));
    const struct meta_broker *b = meta_image_broker(&img, c.brokers[0].id);
    cr_assert_not_null(b);
    Cairn__BrokerHeartbeatRequest hb = CAIRN__BROKER_HEARTBEAT_REQUEST__INIT;
    hb.has_broker_id = hb.has_broker_epoch = true;
    hb.has_current_metadata_offset = true;
    hb.broker_id = b->id;
    hb.broker_epoch = b->epoch;
    hb.current_metadata_offset = img.offset;
    meta_image_free(&img);
    for (int i = 0; i < c.n_controllers; i++) {
        if (i != active) {
            cluster_node_signal(&c, &c.controllers[i], SIGSTOP, false);
        }
    }
    cr_assert_eq(cluster_create_topic_on(&c, active, "stuck", 1, 1, 300),
                 KAFKA_ERROR_REQUEST_TIMED_OUT, "the proposal committed");
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_BROKER_HEARTBEAT;
    req.broker_heartbeat = &hb;
    Cairn__Response *r = cluster_call(&c, active, &req, 1500);
    cr_assert_not_null(r, "no answer while a proposal waits for its commit");
    cr_assert_eq(r->error_code, KAFKA_ERROR_NONE);
    cr_assert_not_null(r->broker_heartbeat);
    cr_assert_not(r->broker_heartbeat->is_fenced);
    cairn__response__free_unpacked(r, NULL);
    for (int i = 0; i < c.n_controllers; i++) {
        if (i != active) {
            cluster_node_signal(&c, &c.controllers[i], SIGCONT, false);
        }
    }
}
