/* Unit tests for controller/fsm.c, the metadata state machine behind the
 * controllers' Raft log. Three controllers run in libraft's in-memory
 * fixture (raft/fixture.h: no sockets, no disk, fixture time only), each
 * with its own struct meta_fsm; the records they apply are planned with
 * controller/plan.h against the leader's image, as the active controller
 * does. Covered: replication of framed MetaBatch entries to every image,
 * the proposer's struct fsm_result, failover, snapshots taken by the
 * callbacks directly and by Raft (with InstallSnapshot to a lagging
 * follower), malformed entries skipped alike everywhere, and the ring of
 * recent records behind MetadataFetch (meta_fsm_records_since). */
#include "common/bytes.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/meta/meta.h"
#include "common/meta/meta_codec.h"
#include "common/rc.h"
#include "controller/fsm.h"
#include "controller/plan.h"

#include <criterion/criterion.h>
#include <raft.h>
#include <raft/fixture.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_SERVERS 3
#define PROPOSALS_MAX 64
/* Budgets in fixture time: elections take about one election timeout
 * (1000 ms in the fixture), a commit a few network round trips (15 ms). */
#define LEADER_BUDGET_MS 10000
#define COMMIT_BUDGET_MS 5000

/* --- The three-controller fixture --------------------------------------- */

/* One raft_apply, and what its callback saw. */
struct proposal {
    struct raft_apply req;
    bool done;
    int status;
    bool has_result;
    struct fsm_result result;
};

static struct {
    struct raft_fixture raft;
    struct meta_fsm fsms[N_SERVERS]; /* fsms[i] belongs to server i */
    size_t n_fsms;
    bool raft_open;
    struct proposal props[PROPOSALS_MAX];
    size_t n_props;
    struct plan_records out;
} fx;

static void setup(void)
{
    memset(&fx, 0, sizeof fx);
    plan_records_init(&fx.out);
    for (size_t i = 0; i < N_SERVERS; i++) {
        cr_assert_eq(meta_fsm_init(&fx.fsms[i], NULL), RC_OK);
        fx.n_fsms++;
    }
    cr_assert_eq(raft_fixture_initialize(&fx.raft), 0);
    fx.raft_open = true;
    for (size_t i = 0; i < N_SERVERS; i++) {
        cr_assert_eq(raft_fixture_grow(&fx.raft, &fx.fsms[i].raft_fsm), 0);
    }
    cr_assert_eq(raft_fixture_n(&fx.raft), N_SERVERS);
}

static void teardown(void)
{
    if (fx.raft_open) {
        raft_fixture_close(&fx.raft);
    }
    for (size_t i = 0; i < fx.n_fsms; i++) {
        meta_fsm_close(&fx.fsms[i]);
    }
    plan_records_free(&fx.out);
}

/* Bootstraps every server with all three as voters, starts them and waits
 * for a leader. snapshot_threshold 0 keeps libraft's defaults. */
static void cluster_start(unsigned snapshot_threshold,
                          unsigned snapshot_trailing)
{
    struct raft_configuration conf;

    for (unsigned i = 0; snapshot_threshold > 0 && i < N_SERVERS; i++) {
        struct raft *r = raft_fixture_get(&fx.raft, i);
        raft_set_snapshot_threshold(r, snapshot_threshold);
        raft_set_snapshot_trailing(r, snapshot_trailing);
    }
    cr_assert_eq(raft_fixture_configuration(&fx.raft, N_SERVERS, &conf), 0);
    int rv = raft_fixture_bootstrap(&fx.raft, &conf);
    raft_configuration_close(&conf);
    cr_assert_eq(rv, 0);
    cr_assert_eq(raft_fixture_start(&fx.raft), 0);
    cr_assert(raft_fixture_step_until_has_leader(&fx.raft, LEADER_BUDGET_MS),
              "no leader elected");
}

static unsigned leader_index(void)
{
    unsigned i = raft_fixture_leader_index(&fx.raft);
    cr_assert_lt(i, N_SERVERS, "no stable leader");
    return i;
}

static const struct meta_image *leader_image(void)
{
    return &fx.fsms[leader_index()].image;
}

static void apply_done_cb(struct raft_apply *req, int status, void *result)
{
    struct proposal *p = req->data;
    p->done = true;
    p->status = status;
    if (result != NULL) {
        p->result = *(const struct fsm_result *)result;
        p->has_result = true;
    }
}

/* Proposes recs[0..n) as one framed entry on the current leader. */
static struct proposal *propose(const struct meta_record *recs, size_t n)
{
    struct raft *leader = raft_fixture_get(&fx.raft, leader_index());
    struct raft_buffer buf;

    cr_assert_lt(fx.n_props, PROPOSALS_MAX);
    struct proposal *p = &fx.props[fx.n_props++];
    memset(p, 0, sizeof *p);
    p->req.data = p;
    cr_assert_eq(meta_fsm_encode_entry(recs, n, &buf), RC_OK);
    int rv = raft_apply(leader, &p->req, &buf, 1, apply_done_cb);
    if (rv != 0) {
        raft_free(buf.base);
    }
    cr_assert_eq(rv, 0, "raft_apply: %s", raft_strerror(rv));
    return p;
}

static bool all_alive_applied(struct raft_fixture *f, raft_index index)
{
    for (unsigned i = 0; i < raft_fixture_n(f); i++) {
        if (raft_fixture_alive(f, i) &&
            raft_last_applied(raft_fixture_get(f, i)) < index) {
            return false;
        }
    }
    return true;
}

static bool committed_everywhere(struct raft_fixture *f, void *arg)
{
    const struct proposal *p = arg;
    return p->done && all_alive_applied(f, p->req.index);
}

/* Steps until the proposer's callback ran and every live server applied
 * the entry; checks the callback got a result. */
static void commit(struct proposal *p)
{
    cr_assert(raft_fixture_step_until(&fx.raft, committed_everywhere, p,
                                      COMMIT_BUDGET_MS),
              "entry %llu not applied everywhere in time",
              (unsigned long long)p->req.index);
    cr_assert_eq(p->status, 0);
    cr_assert(p->has_result);
}

/* Proposes fx.out as one entry, commits it and empties fx.out; the
 * entry's records must get offsets first..last. */
static struct proposal *propose_out(int64_t first, int64_t last)
{
    cr_assert_gt(fx.out.n, 0);
    struct proposal *p = propose(fx.out.recs, fx.out.n);
    commit(p);
    plan_records_clear(&fx.out);
    cr_assert_eq(p->result.first_offset, first, "first %lld != %lld",
                 (long long)p->result.first_offset, (long long)first);
    cr_assert_eq(p->result.last_offset, last, "last %lld != %lld",
                 (long long)p->result.last_offset, (long long)last);
    cr_assert_eq(p->result.n_invalid, 0);
    return p;
}

/* --- Comparing images --------------------------------------------------- */

static void assert_sets_eq(const struct meta_replica_set *a,
                           const struct meta_replica_set *b,
                           const char *what)
{
    cr_assert_eq(a->n, b->n, "%s: set sizes %d != %d", what, a->n, b->n);
    for (int32_t i = 0; i < a->n; i++) {
        cr_assert_eq(a->ids[i], b->ids[i], "%s: set[%d] %d != %d", what, i,
                     a->ids[i], b->ids[i]);
    }
}

static void assert_topics_eq(const struct meta_topic *a,
                             const struct meta_topic *b)
{
    cr_assert_str_eq(a->name, b->name);
    cr_assert(meta_uuid_eq(&a->id, &b->id), "topic %s: ids differ", a->name);
    cr_assert_eq(a->n_partitions, b->n_partitions, "topic %s: partitions",
                 a->name);
    for (int32_t i = 0; i < a->n_partitions; i++) {
        const struct meta_partition *p = &a->partitions[i];
        const struct meta_partition *q = &b->partitions[i];
        cr_assert_eq(p->id, q->id, "%s-%d: id", a->name, i);
        cr_assert_eq(p->leader, q->leader, "%s-%d: leader", a->name, i);
        cr_assert_eq(p->leader_epoch, q->leader_epoch, "%s-%d: epoch",
                     a->name, i);
        cr_assert_eq(p->partition_epoch, q->partition_epoch,
                     "%s-%d: partition epoch", a->name, i);
        assert_sets_eq(&p->replicas, &q->replicas, "replicas");
        assert_sets_eq(&p->isr, &q->isr, "isr");
    }
    cr_assert_eq(a->n_configs, b->n_configs, "topic %s: configs", a->name);
    for (size_t i = 0; i < a->n_configs; i++) {
        cr_assert_str_eq(a->configs[i].name, b->configs[i].name);
        cr_assert_str_eq(a->configs[i].value, b->configs[i].value);
    }
}

static void assert_brokers_eq(const struct meta_broker *x,
                              const struct meta_broker *y)
{
    cr_assert_eq(x->id, y->id, "broker ids %d != %d", x->id, y->id);
    cr_assert_eq(x->epoch, y->epoch, "broker %d: epoch", x->id);
    cr_assert(meta_uuid_eq(&x->incarnation, &y->incarnation),
              "broker %d: incarnation", x->id);
    cr_assert_str_eq(x->host, y->host);
    cr_assert_eq(x->port, y->port, "broker %d: port", x->id);
    cr_assert_str_eq(x->rack, y->rack);
    cr_assert_eq(x->fenced, y->fenced, "broker %d: fenced", x->id);
    cr_assert_eq(x->in_controlled_shutdown, y->in_controlled_shutdown,
                 "broker %d: controlled shutdown", x->id);
}

/* Field by field, then once more as encoded bytes (the image encoding is
 * a function of the image, so equal images encode alike). */
static void assert_images_eq(const struct meta_image *a,
                             const struct meta_image *b)
{
    cr_assert_eq(a->offset, b->offset, "offsets %lld != %lld",
                 (long long)a->offset, (long long)b->offset);
    cr_assert_eq(a->next_producer_id, b->next_producer_id,
                 "next producer ids differ");
    cr_assert_eq(a->n_brokers, b->n_brokers, "broker counts differ");
    for (size_t i = 0; i < a->n_brokers; i++) {
        assert_brokers_eq(&a->brokers[i], &b->brokers[i]);
    }
    cr_assert_eq(a->n_topics, b->n_topics, "topic counts differ");
    for (size_t i = 0; i < a->n_topics; i++) {
        assert_topics_eq(&a->topics[i], &b->topics[i]);
    }

    uint8_t *ea = NULL;
    uint8_t *eb = NULL;
    size_t la = 0;
    size_t lb = 0;
    cr_assert_eq(meta_codec_encode_image(a, NULL, &ea, &la), RC_OK);
    cr_assert_eq(meta_codec_encode_image(b, NULL, &eb, &lb), RC_OK);
    bool same = la == lb && memcmp(ea, eb, la) == 0;
    free(ea);
    free(eb);
    cr_assert(same, "images encode differently");
}

static void assert_live_images_eq(void)
{
    unsigned ref = leader_index();
    for (unsigned i = 0; i < N_SERVERS; i++) {
        if (raft_fixture_alive(&fx.raft, i)) {
            assert_images_eq(&fx.fsms[ref].image, &fx.fsms[i].image);
        }
    }
}

/* --- Planning records --------------------------------------------------- */

static struct meta_uuid topic_uuid(uint8_t n)
{
    struct meta_uuid u;
    memset(&u, 0, sizeof u);
    u.b[0] = 0x7c;
    u.b[15] = n;
    return u;
}

static void plan_register(const struct meta_image *img, int32_t id)
{
    struct meta_rec_register_broker req;
    int16_t err = -1;
    int64_t epoch = 0;

    memset(&req, 0, sizeof req);
    req.broker_id = id;
    req.incarnation.b[0] = 0xb0;
    req.incarnation.b[1] = (uint8_t)id;
    snprintf(req.host, sizeof req.host, "broker-%d.cairn", (int)id);
    req.port = 9092 + id;
    if (id != 3) {
        snprintf(req.rack, sizeof req.rack, "rack-%d", (int)id);
    }
    cr_assert_eq(plan_register_broker(img, &req, false, &fx.out, &err,
                                      &epoch),
                 RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_NONE);
    cr_assert_eq(epoch, -1);
}

/* A heartbeat from a registered, fenced, caught-up broker: unfence it. */
static void plan_unfence(const struct meta_image *img, int32_t id)
{
    const struct meta_broker *b = meta_image_broker(img, id);
    struct plan_heartbeat_result res;

    cr_assert_not_null(b);
    struct plan_heartbeat_req hb = {.broker_id = id,
                                    .broker_epoch = b->epoch,
                                    .current_metadata_offset = img->offset};
    cr_assert_eq(plan_heartbeat(img, &hb, false, &fx.out, &res), RC_OK);
    cr_assert_eq(res.error, KAFKA_ERROR_NONE);
    cr_assert_not(res.is_fenced);
}

static void plan_topic(const struct meta_image *img, const char *name,
                       uint8_t id, int32_t partitions, int32_t rf,
                       const struct plan_config *configs, size_t n_configs)
{
    struct plan_topic_defaults defaults = {1, 1};
    struct plan_topic_req req = {.name = name,
                                 .num_partitions = partitions,
                                 .replication_factor = rf,
                                 .configs = configs,
                                 .n_configs = n_configs,
                                 .id = topic_uuid(id)};
    struct plan_topic_result res;
    cr_assert_eq(plan_create_topics(img, &req, 1, &defaults, false, &fx.out,
                                    &res),
                 RC_OK);
    cr_assert_eq(res.error, KAFKA_ERROR_NONE, "create %s: error %d", name,
                 (int)res.error);
}

static void plan_producer_ids(const struct meta_image *img, int32_t broker,
                              int64_t expect_first)
{
    int16_t err = -1;
    int64_t first = -1;
    const struct meta_broker *b = meta_image_broker(img, broker);
    cr_assert_not_null(b);
    cr_assert_eq(plan_allocate_producer_ids(img, broker, b->epoch, &fx.out,
                                            &err, &first),
                 RC_OK);
    cr_assert_eq(err, KAFKA_ERROR_NONE);
    cr_assert_eq(first, expect_first);
}

static const struct plan_config orders_configs[] = {
    {"retention.ms", "86400000"},
    {"cleanup.policy", "compact"},
};

/* Offsets the base scenario ends at. */
#define BASE_TOPIC_RECORDS (1 + 2 + 6 + 1 + 3) /* orders + events */
#define BASE_LAST_OFFSET (6 + BASE_TOPIC_RECORDS + 1)

/* Registers brokers 1..3 (two entries), unfences them, creates "orders"
 * (6 partitions, RF 3, two configs) and "events" (3 partitions, RF 2) in
 * one entry, and allocates a producer-id block, committing each entry
 * before planning the next, as the active controller does. */
static void run_base_scenario(void)
{
    plan_register(leader_image(), 1);
    plan_register(leader_image(), 2);
    propose_out(1, 2);
    plan_register(leader_image(), 3);
    propose_out(3, 3);
    for (int32_t id = 1; id <= 3; id++) {
        plan_unfence(leader_image(), id);
    }
    cr_assert_eq(fx.out.n, 3);
    propose_out(4, 6);

    struct plan_topic_defaults defaults = {1, 1};
    struct plan_topic_req reqs[2] = {
        {.name = "orders", .num_partitions = 6, .replication_factor = 3,
         .configs = orders_configs, .n_configs = 2, .id = topic_uuid(1)},
        {.name = "events", .num_partitions = 3, .replication_factor = 2,
         .id = topic_uuid(2)},
    };
    struct plan_topic_result res[2];
    cr_assert_eq(plan_create_topics(leader_image(), reqs, 2, &defaults,
                                    false, &fx.out, res),
                 RC_OK);
    cr_assert_eq(res[0].error, KAFKA_ERROR_NONE);
    cr_assert_eq(res[1].error, KAFKA_ERROR_NONE);
    cr_assert_eq(fx.out.n, BASE_TOPIC_RECORDS);
    propose_out(7, 6 + BASE_TOPIC_RECORDS);

    plan_producer_ids(leader_image(), 2, 0);
    propose_out(BASE_LAST_OFFSET, BASE_LAST_OFFSET);
}

static const struct meta_topic *topic(const struct meta_image *img,
                                      const char *name)
{
    const struct meta_topic *t = meta_image_topic(img, name);
    cr_assert_not_null(t, "topic %s missing", name);
    return t;
}

static void assert_topic_shape(const struct meta_image *img,
                               const char *name, int32_t partitions,
                               int32_t rf)
{
    const struct meta_topic *t = topic(img, name);
    cr_assert_eq(t->n_partitions, partitions, "%s partitions", name);
    for (int32_t p = 0; p < partitions; p++) {
        const struct meta_partition *mp = &t->partitions[p];
        cr_assert_eq(mp->id, p);
        cr_assert_eq(mp->replicas.n, rf, "%s-%d replicas", name, p);
        assert_sets_eq(&mp->isr, &mp->replicas, "isr = replicas");
        cr_assert_eq(mp->leader, mp->replicas.ids[0], "%s-%d leader", name,
                     p);
        cr_assert_eq(mp->leader_epoch, 0);
        cr_assert_eq(mp->partition_epoch, 0);
    }
}

/* What the base scenario must leave in an image. */
static void assert_base_content(const struct meta_image *img)
{
    cr_assert_geq(img->offset, BASE_LAST_OFFSET);
    cr_assert_eq(img->n_brokers, 3);
    for (int32_t id = 1; id <= 3; id++) {
        const struct meta_broker *b = meta_image_broker(img, id);
        char host[32];
        cr_assert_not_null(b);
        cr_assert_eq(b->epoch, id, "epoch = offset of the registration");
        cr_assert_not(b->fenced);
        cr_assert_not(b->in_controlled_shutdown);
        cr_assert_eq(b->port, 9092 + id);
        snprintf(host, sizeof host, "broker-%d.cairn", (int)id);
        cr_assert_str_eq(b->host, host);
    }
    cr_assert_str_eq(meta_image_broker(img, 1)->rack, "rack-1");
    cr_assert_str_eq(meta_image_broker(img, 3)->rack, "");

    assert_topic_shape(img, "orders", 6, 3);
    assert_topic_shape(img, "events", 3, 2);
    const struct meta_topic *orders = topic(img, "orders");
    struct meta_uuid id1 = topic_uuid(1);
    cr_assert(meta_uuid_eq(&orders->id, &id1));
    cr_assert_eq(orders->n_configs, 2);
    cr_assert_str_eq(meta_topic_config(orders, "retention.ms"), "86400000");
    cr_assert_str_eq(meta_topic_config(orders, "cleanup.policy"), "compact");
    cr_assert_eq(topic(img, "events")->n_configs, 0);
    cr_assert_geq(img->next_producer_id, PLAN_PRODUCER_ID_BLOCK_SIZE);
}

/* --- 1. Replication to every image -------------------------------------- */

Test(fsm, entries_reach_every_image_with_offsets_for_the_proposer,
     .init = setup, .fini = teardown)
{
    cluster_start(0, 0);
    run_base_scenario();

    for (unsigned i = 0; i < N_SERVERS; i++) {
        const struct meta_fsm *m = &fx.fsms[i];
        cr_assert_eq(m->image.offset, BASE_LAST_OFFSET, "server %u", i);
        cr_assert_eq(m->image.next_producer_id, PLAN_PRODUCER_ID_BLOCK_SIZE);
        cr_assert_eq(m->entries_applied, 5, "server %u applied %llu", i,
                     (unsigned long long)m->entries_applied);
        assert_base_content(&m->image);
    }
    assert_live_images_eq();
    /* Every entry went through raft_apply's callback exactly once, on the
     * leader, and the five covered offsets 1..BASE_LAST_OFFSET with no
     * gap. */
    cr_assert_eq(fx.n_props, 5);
    int64_t next = 1;
    for (size_t i = 0; i < fx.n_props; i++) {
        cr_assert_eq(fx.props[i].result.first_offset, next);
        next = fx.props[i].result.last_offset + 1;
    }
    cr_assert_eq(next, BASE_LAST_OFFSET + 1);
}

/* --- 2. Failover --------------------------------------------------------- */

/* The fixture only notices a dead leader at its next step, so
 * raft_fixture_step_until_has_leader() right after a kill would return
 * at once with the old one. */
static bool leader_is_another(struct raft_fixture *f, void *arg)
{
    unsigned old = *(const unsigned *)arg;
    unsigned i = raft_fixture_leader_index(f);
    return i < raft_fixture_n(f) && i != old;
}

/* The server brought back, and the index it must apply to catch up. */
static unsigned revived_index;
static raft_index revived_target;

static bool revived_caught_up(struct raft_fixture *f, void *arg)
{
    (void)arg;
    return raft_last_applied(raft_fixture_get(f, revived_index)) >=
           revived_target;
}

Test(fsm, new_leader_keeps_every_committed_record_and_continues_offsets,
     .init = setup, .fini = teardown)
{
    cluster_start(0, 0);
    run_base_scenario();

    unsigned old = leader_index();
    raft_fixture_kill(&fx.raft, old);
    cr_assert(raft_fixture_step_until(&fx.raft, leader_is_another, &old,
                                      LEADER_BUDGET_MS),
              "no new leader after the old one died");
    unsigned now = leader_index();
    cr_assert_neq(now, old);

    /* The new leader's image already holds everything committed. */
    assert_base_content(leader_image());
    cr_assert_eq(leader_image()->offset, BASE_LAST_OFFSET);

    plan_topic(leader_image(), "payments", 3, 4, 3, NULL, 0);
    cr_assert_eq(fx.out.n, 1 + 4);
    propose_out(BASE_LAST_OFFSET + 1, BASE_LAST_OFFSET + 5);
    plan_producer_ids(leader_image(), 3, PLAN_PRODUCER_ID_BLOCK_SIZE);
    propose_out(BASE_LAST_OFFSET + 6, BASE_LAST_OFFSET + 6);

    unsigned follower = N_SERVERS;
    for (unsigned i = 0; i < N_SERVERS; i++) {
        if (i != old && i != now) {
            follower = i;
        }
    }
    cr_assert_lt(follower, N_SERVERS);
    for (unsigned k = 0; k < 2; k++) {
        const struct meta_image *img = &fx.fsms[k == 0 ? now : follower].image;
        cr_assert_eq(img->offset, BASE_LAST_OFFSET + 6);
        assert_base_content(img);
        assert_topic_shape(img, "payments", 4, 3);
        cr_assert_eq(img->next_producer_id, 2 * PLAN_PRODUCER_ID_BLOCK_SIZE);
    }
    assert_images_eq(&fx.fsms[now].image, &fx.fsms[follower].image);
    /* The dead controller stopped where it died. */
    cr_assert_eq(fx.fsms[old].image.offset, BASE_LAST_OFFSET);
    cr_assert_null(meta_image_topic(&fx.fsms[old].image, "payments"));

    /* Back from the dead, it catches up by AppendEntries. */
    raft_fixture_revive(&fx.raft, old);
    revived_index = old;
    revived_target = raft_last_index(raft_fixture_get(&fx.raft, now));
    cr_assert(raft_fixture_step_until(&fx.raft, revived_caught_up, NULL,
                                      LEADER_BUDGET_MS));
    cr_assert(raft_fixture_step_until_has_leader(&fx.raft, LEADER_BUDGET_MS));
    for (unsigned i = 0; i < N_SERVERS; i++) {
        assert_images_eq(&fx.fsms[follower].image, &fx.fsms[i].image);
    }
}

/* --- 3. Snapshots -------------------------------------------------------- */

/* Takes a snapshot of m through its raft_fsm callback and returns its one
 * buffer copied into raft_malloc'd memory, as restore wants it. */
static struct raft_buffer take_snapshot(struct meta_fsm *m)
{
    struct raft_buffer *bufs = NULL;
    unsigned n_bufs = 0;

    cr_assert_eq(m->raft_fsm.snapshot(&m->raft_fsm, &bufs, &n_bufs), 0);
    cr_assert_eq(n_bufs, 1);
    cr_assert_not_null(bufs);
    /* A frame: length, a zero word, the payload, zeros to 8 bytes. */
    const uint8_t *b = bufs[0].base;
    cr_assert_geq(bufs[0].len, META_FSM_FRAME_HEADER_BYTES);
    cr_assert_eq(bufs[0].len % 8, 0);
    size_t payload = bytes_be32(b);
    cr_assert_eq(bytes_be32(b + 4), 0);
    cr_assert_eq(bufs[0].len,
                 META_FSM_FRAME_HEADER_BYTES + ((payload + 7) & ~(size_t)7));
    for (size_t i = META_FSM_FRAME_HEADER_BYTES + payload; i < bufs[0].len;
         i++) {
        cr_assert_eq(b[i], 0, "padding byte %zu", i);
    }

    struct raft_buffer copy = {.base = raft_malloc(bufs[0].len),
                               .len = bufs[0].len};
    cr_assert_not_null(copy.base);
    memcpy(copy.base, bufs[0].base, bufs[0].len);
    raft_free(bufs[0].base);
    raft_free(bufs);
    return copy;
}

/* Applies recs[0..n) to m through raft_fsm.apply, as Raft does. */
static struct fsm_result apply_direct(struct meta_fsm *m,
                                      const struct meta_record *recs,
                                      size_t n)
{
    struct raft_buffer buf;
    void *result = NULL;

    cr_assert_eq(meta_fsm_encode_entry(recs, n, &buf), RC_OK);
    int rv = m->raft_fsm.apply(&m->raft_fsm, &buf, &result);
    raft_free(buf.base);
    cr_assert_eq(rv, 0);
    cr_assert_not_null(result);
    return *(const struct fsm_result *)result;
}

static void assert_ring_empty_at(const struct meta_fsm *m)
{
    size_t start = 99;
    size_t n = 99;
    cr_assert_eq(m->ring_len, 0);
    cr_assert_eq(m->ring_bytes, 0);
    cr_assert_eq(meta_fsm_records_since(m, m->image.offset - 1, 100, &start,
                                        &n),
                 RC_OUT_OF_RANGE);
    cr_assert_eq(meta_fsm_records_since(m, 0, 100, &start, &n),
                 RC_OUT_OF_RANGE);
    cr_assert_eq(meta_fsm_records_since(m, m->image.offset, 100, &start, &n),
                 RC_OK);
    cr_assert_eq(n, 0);
}

static struct meta_record producer_ids_rec(int64_t next)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_PRODUCER_IDS;
    rec.u.producer_ids.broker_id = 1;
    rec.u.producer_ids.broker_epoch = 1;
    rec.u.producer_ids.next_producer_id = next;
    return rec;
}

Test(fsm, snapshot_callback_then_restore_reproduces_the_image,
     .init = setup, .fini = teardown)
{
    cluster_start(0, 0);
    run_base_scenario();
    struct meta_fsm *src = &fx.fsms[leader_index()];
    cr_assert_gt(src->ring_len, 0);

    struct raft_buffer snap = take_snapshot(src);
    struct meta_fsm fresh;
    cr_assert_eq(meta_fsm_init(&fresh, NULL), RC_OK);
    /* Restore takes ownership of snap.base on success. */
    cr_assert_eq(fresh.raft_fsm.restore(&fresh.raft_fsm, &snap), 0);
    assert_images_eq(&src->image, &fresh.image);
    assert_base_content(&fresh.image);
    assert_ring_empty_at(&fresh);

    /* Both continue alike; the restored ring starts after the image. */
    struct meta_record rec = producer_ids_rec(5000);
    struct fsm_result a = apply_direct(src, &rec, 1);
    struct fsm_result b = apply_direct(&fresh, &rec, 1);
    cr_assert_eq(a.first_offset, BASE_LAST_OFFSET + 1);
    cr_assert_eq(b.first_offset, a.first_offset);
    cr_assert_eq(b.last_offset, a.last_offset);
    assert_images_eq(&src->image, &fresh.image);
    size_t start = 0;
    size_t n = 0;
    cr_assert_eq(meta_fsm_records_since(&fresh, BASE_LAST_OFFSET, 10, &start,
                                        &n),
                 RC_OK);
    cr_assert_eq(n, 1);
    cr_assert_eq(meta_fsm_ring_at(&fresh, start)->offset,
                 BASE_LAST_OFFSET + 1);
    cr_assert_eq(meta_fsm_records_since(&fresh, BASE_LAST_OFFSET - 1, 10,
                                        &start, &n),
                 RC_OUT_OF_RANGE);
    meta_fsm_close(&fresh);
}

Test(fsm, restore_replaces_a_non_empty_image_and_empties_its_ring,
     .init = setup, .fini = teardown)
{
    cluster_start(0, 0);
    run_base_scenario();

    /* fsms can run outside the cluster too: this one has its own history
     * (a topic-less image far ahead), which the snapshot must replace. */
    struct meta_fsm other;
    cr_assert_eq(meta_fsm_init(&other, NULL), RC_OK);
    for (int64_t i = 1; i <= 40; i++) {
        struct meta_record rec = producer_ids_rec(i * 7);
        (void)apply_direct(&other, &rec, 1);
    }
    cr_assert_eq(other.image.offset, 40);
    cr_assert_eq(other.ring_len, 40);

    struct raft_buffer snap = take_snapshot(&fx.fsms[leader_index()]);
    cr_assert_eq(other.raft_fsm.restore(&other.raft_fsm, &snap), 0);
    assert_images_eq(leader_image(), &other.image);
    cr_assert_eq(other.image.offset, BASE_LAST_OFFSET);
    assert_ring_empty_at(&other);
    meta_fsm_close(&other);
}

Test(fsm, restore_of_a_corrupt_snapshot_fails_and_changes_nothing,
     .init = setup, .fini = teardown)
{
    cluster_start(0, 0);
    run_base_scenario();
    struct meta_fsm *m = &fx.fsms[leader_index()];
    struct meta_image before;
    meta_image_init(&before);
    cr_assert_eq(meta_image_copy(&before, &m->image), RC_OK);
    size_t ring_len = m->ring_len;

    struct raft_buffer good = take_snapshot(m);
    for (int c = 0; c < 3; c++) {
        struct raft_buffer bad = {.base = raft_malloc(good.len),
                                  .len = good.len};
        cr_assert_not_null(bad.base);
        memcpy(bad.base, good.base, good.len);
        uint8_t *b = bad.base;
        if (c == 0) { /* the length runs past the buffer */
            bytes_put_be32(b, (uint32_t)good.len);
        } else if (c == 1) { /* the reserved word is not zero */
            b[5] = 1;
        } else { /* the payload is not a MetaImage */
            memset(b + META_FSM_FRAME_HEADER_BYTES, 0xff,
                   good.len - META_FSM_FRAME_HEADER_BYTES);
        }
        cr_assert_eq(m->raft_fsm.restore(&m->raft_fsm, &bad), RAFT_CORRUPT,
                     "case %d", c);
        /* On failure the buffer stays the caller's (libraft frees it). */
        raft_free(bad.base);
        assert_images_eq(&before, &m->image);
        cr_assert_eq(m->ring_len, ring_len);
    }
    raft_free(good.base);
    meta_image_free(&before);
}

/* Server index other than the leader, for the lagging follower. */
static unsigned some_follower(void)
{
    return (leader_index() + 1) % N_SERVERS;
}

Test(fsm, lagging_follower_catches_up_by_install_snapshot, .init = setup,
     .fini = teardown)
{
    cluster_start(4 /* threshold */, 2 /* trailing */);
    unsigned lagging = some_follower();
    raft_fixture_kill(&fx.raft, lagging);

    /* 3 registrations, 1 unfence, 8 topics, 1 producer-id block: 13
     * entries, snapshots every 4 applied, 2 kept behind each. */
    int64_t offset = 0;
    for (int32_t id = 1; id <= 3; id++) {
        plan_register(leader_image(), id);
        offset++;
        propose_out(offset, offset);
    }
    for (int32_t id = 1; id <= 3; id++) {
        plan_unfence(leader_image(), id);
    }
    propose_out(offset + 1, offset + 3);
    offset += 3;
    for (uint8_t t = 0; t < 8; t++) {
        char name[16];
        snprintf(name, sizeof name, "t%u", (unsigned)t);
        plan_topic(leader_image(), name, (uint8_t)(10 + t), 2, 2, NULL, 0);
        propose_out(offset + 1, offset + 3);
        offset += 3;
    }
    plan_producer_ids(leader_image(), 1, 0);
    propose_out(offset + 1, offset + 1);
    offset++;

    for (unsigned i = 0; i < N_SERVERS; i++) {
        struct raft *r = raft_fixture_get(&fx.raft, i);
        if (i == lagging) {
            cr_assert_eq(r->log.snapshot.last_index, 0);
            cr_assert_eq(fx.fsms[i].image.offset, 0);
        } else {
            cr_assert_gt(r->log.snapshot.last_index, 4,
                         "server %u took no snapshot", i);
            cr_assert_eq(fx.fsms[i].image.offset, offset);
        }
    }
    /* The leader no longer has the entries the lagging one needs. */
    struct raft *leader = raft_fixture_get(&fx.raft, leader_index());
    cr_assert_gt(leader->log.offset, 2);

    raft_fixture_revive(&fx.raft, lagging);
    revived_index = lagging;
    revived_target = raft_last_index(leader);
    cr_assert(raft_fixture_step_until(&fx.raft, revived_caught_up, NULL,
                                      LEADER_BUDGET_MS),
              "lagging follower did not catch up");
    cr_assert_geq(raft_fixture_n_recv(&fx.raft, lagging,
                                      RAFT_IO_INSTALL_SNAPSHOT),
                  1);
    cr_assert(raft_fixture_step_until_has_leader(&fx.raft, LEADER_BUDGET_MS));
    assert_live_images_eq();
    cr_assert_eq(fx.fsms[lagging].image.offset, offset);
    for (uint8_t t = 0; t < 8; t++) {
        char name[16];
        snprintf(name, sizeof name, "t%u", (unsigned)t);
        assert_topic_shape(&fx.fsms[lagging].image, name, 2, 2);
    }
    /* Its ring starts after the snapshot it restored; a controller that
     * never restored still has everything. */
    size_t start = 0;
    size_t n = 0;
    cr_assert_eq(meta_fsm_records_since(&fx.fsms[lagging], 0, 1000, &start,
                                        &n),
                 RC_OUT_OF_RANGE);
    unsigned never = N_SERVERS;
    for (unsigned i = 0; i < N_SERVERS; i++) {
        if (i != lagging &&
            raft_fixture_n_recv(&fx.raft, i, RAFT_IO_INSTALL_SNAPSHOT) == 0) {
            never = i;
        }
    }
    cr_assert_lt(never, N_SERVERS);
    cr_assert_eq(meta_fsm_records_since(&fx.fsms[never], 0, 1000, &start,
                                        &n),
                 RC_OK);
    cr_assert_eq(n, (size_t)offset);

    /* And it keeps applying with the others after the restore. */
    plan_producer_ids(leader_image(), 2, PLAN_PRODUCER_ID_BLOCK_SIZE);
    propose_out(offset + 1, offset + 1);
    assert_live_images_eq();
    cr_assert_eq(fx.fsms[lagging].image.offset, offset + 1);
}

/* --- 4. Malformed entries ------------------------------------------------ */

/* Two FSMs with the same history: brokers 1..2 registered. */
static void two_alike(struct meta_fsm *a, struct meta_fsm *b)
{
    struct meta_record recs[2];
    memset(recs, 0, sizeof recs);
    for (int32_t i = 0; i < 2; i++) {
        recs[i].type = META_REC_REGISTER_BROKER;
        recs[i].u.register_broker.broker_id = i + 1;
        recs[i].u.register_broker.incarnation.b[0] = (uint8_t)(i + 1);
        snprintf(recs[i].u.register_broker.host,
                 sizeof recs[i].u.register_broker.host, "h%d", (int)i);
        recs[i].u.register_broker.port = 9092;
    }
    cr_assert_eq(meta_fsm_init(a, NULL), RC_OK);
    cr_assert_eq(meta_fsm_init(b, NULL), RC_OK);
    (void)apply_direct(a, recs, 2);
    (void)apply_direct(b, recs, 2);
    cr_assert_eq(a->image.offset, 2);
}

/* Applies the raw bytes p[0..len) as an entry to m: it must be skipped,
 * leaving the image and ring as they were. */
static void assert_skipped(struct meta_fsm *m, const uint8_t *p, size_t len,
                           const char *what)
{
    struct meta_image before;
    meta_image_init(&before);
    cr_assert_eq(meta_image_copy(&before, &m->image), RC_OK);
    size_t ring_len = m->ring_len;
    uint64_t entries = m->entries_applied;

    /* A private copy, so that a read past len is caught by ASan. */
    uint8_t *copy = raft_malloc(len > 0 ? len : 1);
    cr_assert_not_null(copy);
    if (len > 0) {
        memcpy(copy, p, len);
    }
    struct raft_buffer buf = {.base = copy, .len = len};
    void *result = NULL;
    int rv = m->raft_fsm.apply(&m->raft_fsm, &buf, &result);
    raft_free(copy);

    cr_assert_eq(rv, 0, "%s: apply returned %d", what, rv);
    cr_assert_not_null(result, "%s", what);
    const struct fsm_result *r = result;
    cr_assert_eq(r->first_offset, before.offset + 1, "%s", what);
    cr_assert_eq(r->last_offset, before.offset, "%s: no records", what);
    cr_assert_eq(r->n_invalid, 0, "%s", what);
    assert_images_eq(&before, &m->image);
    cr_assert_eq(m->ring_len, ring_len, "%s: ring changed", what);
    cr_assert_eq(m->entries_applied, entries + 1, "%s", what);
    meta_image_free(&before);
}

static void put_header(uint8_t *b, uint32_t len)
{
    bytes_put_be32(b, len);
    bytes_put_be32(b + 4, 0);
}

struct malformed_case {
    const char *what;
    uint8_t bytes[32];
    size_t len;
};

Test(fsm, malformed_entries_are_skipped_alike_and_change_nothing)
{
    struct meta_fsm a;
    struct meta_fsm b;
    struct malformed_case cases[8];
    size_t n_cases = 0;

    two_alike(&a, &b);
    memset(cases, 0, sizeof cases);
    cases[n_cases++] = (struct malformed_case){.what = "empty", .len = 0};
    cases[n_cases] = (struct malformed_case){.what = "shorter than a header",
                                             .len = 5};
    memcpy(cases[n_cases++].bytes, "hello", 5);
    /* Not a frame: the reserved word after the length is not zero. */
    cases[n_cases] = (struct malformed_case){.what = "text", .len = 26};
    memcpy(cases[n_cases++].bytes, "this is not a frame at all", 26);
    cases[n_cases] = (struct malformed_case){.what = "length 100 in 16",
                                             .len = 16};
    put_header(cases[n_cases++].bytes, 100);
    cases[n_cases] = (struct malformed_case){.what = "length 2^32-1",
                                             .len = 24};
    put_header(cases[n_cases++].bytes, 0xffffffffu);
    cases[n_cases] = (struct malformed_case){.what = "length one past end",
                                             .len = 16};
    put_header(cases[n_cases].bytes, 9);
    memset(cases[n_cases++].bytes + 8, 0x0a, 8);
    cases[n_cases] = (struct malformed_case){.what = "garbage protobuf",
                                             .len = 24};
    put_header(cases[n_cases].bytes, 16);
    memset(cases[n_cases++].bytes + 8, 0xff, 16);
    /* Field 1 (records), length-delimited, 127 bytes long; 3 follow. */
    cases[n_cases] = (struct malformed_case){.what = "truncated protobuf",
                                             .len = 16};
    put_header(cases[n_cases].bytes, 5);
    memcpy(cases[n_cases++].bytes + 8, "\x0a\x7f\x01\x02\x03", 5);
    cr_assert_eq(n_cases, 8);

    /* A good entry but for its reserved word: only the frame check can
     * tell, the payload decodes. */
    struct meta_record good = producer_ids_rec(1000);
    struct raft_buffer framed;
    cr_assert_eq(meta_fsm_encode_entry(&good, 1, &framed), RC_OK);
    cr_assert_leq(framed.len, sizeof cases[0].bytes);
    struct malformed_case reserved = {.what = "reserved word set",
                                      .len = framed.len};
    memcpy(reserved.bytes, framed.base, framed.len);
    raft_free(framed.base);
    reserved.bytes[7] = 1;
    assert_skipped(&a, reserved.bytes, reserved.len, reserved.what);
    assert_skipped(&b, reserved.bytes, reserved.len, reserved.what);

    for (size_t i = 0; i < n_cases; i++) {
        assert_skipped(&a, cases[i].bytes, cases[i].len, cases[i].what);
        assert_skipped(&b, cases[i].bytes, cases[i].len, cases[i].what);
        assert_images_eq(&a.image, &b.image);
    }

    /* The next good entry takes the next offset, on both. */
    struct meta_record rec = producer_ids_rec(1000);
    struct fsm_result ra = apply_direct(&a, &rec, 1);
    struct fsm_result rb = apply_direct(&b, &rec, 1);
    cr_assert_eq(ra.first_offset, 3);
    cr_assert_eq(ra.last_offset, 3);
    cr_assert_eq(rb.first_offset, 3);
    assert_images_eq(&a.image, &b.image);
    cr_assert_eq(a.ring_len, 3);
    meta_fsm_close(&a);
    meta_fsm_close(&b);
}

/* Contrast with the skipped entries: a well-formed record that does not
 * fit the image still takes an offset (every node counts the same) and is
 * counted in n_invalid; an empty batch takes none. */
Test(fsm, invalid_records_take_an_offset_and_empty_batches_none)
{
    struct meta_fsm a;
    struct meta_fsm b;
    two_alike(&a, &b);

    struct meta_record recs[2];
    memset(recs, 0, sizeof recs);
    recs[0].type = META_REC_BROKER_CHANGE; /* stale epoch */
    recs[0].u.broker_change.broker_id = 1;
    recs[0].u.broker_change.broker_epoch = 99;
    recs[0].u.broker_change.fenced = -1;
    recs[1] = producer_ids_rec(1000);
    struct fsm_result r = apply_direct(&a, recs, 2);
    cr_assert_eq(r.first_offset, 3);
    cr_assert_eq(r.last_offset, 4);
    cr_assert_eq(r.n_invalid, 1);
    cr_assert(meta_image_broker(&a.image, 1)->fenced);
    cr_assert_eq(a.image.next_producer_id, 1000);
    cr_assert_eq(a.ring_len, 4);
    cr_assert_eq(meta_fsm_ring_at(&a, 2)->offset, 3);
    cr_assert_eq(meta_fsm_ring_at(&a, 3)->offset, 4);

    struct meta_record unused;
    memset(&unused, 0, sizeof unused);
    r = apply_direct(&a, &unused, 0);
    cr_assert_eq(r.first_offset, 5);
    cr_assert_eq(r.last_offset, 4);
    cr_assert_eq(r.n_invalid, 0);
    cr_assert_eq(a.image.offset, 4);
    cr_assert_eq(a.ring_len, 4);

    r = apply_direct(&b, recs, 2);
    cr_assert_eq(r.n_invalid, 1);
    r = apply_direct(&b, &unused, 0);
    assert_images_eq(&a.image, &b.image);
    meta_fsm_close(&a);
    meta_fsm_close(&b);
}

/* --- 5. The ring behind MetadataFetch ------------------------------------ */

/* The record at ring position i decodes to a producer-ids record whose
 * next id was chosen as offset * 10. */
static void assert_ring_record(const struct meta_fsm *m, size_t i,
                               int64_t offset)
{
    const struct fsm_record *fr = meta_fsm_ring_at(m, i);
    struct meta_record rec;
    cr_assert_eq(fr->offset, offset, "ring[%zu] offset %lld != %lld", i,
                 (long long)fr->offset, (long long)offset);
    cr_assert_eq(meta_codec_decode_record(fr->bytes, fr->len, &rec), RC_OK);
    cr_assert_eq(rec.type, META_REC_PRODUCER_IDS);
    cr_assert_eq(rec.u.producer_ids.next_producer_id, offset * 10);
}

/* ring_bytes is what the ring's records hold, and their offsets are
 * consecutive up to the image's. */
static void assert_ring_accounting(const struct meta_fsm *m)
{
    size_t bytes = 0;
    for (size_t i = 0; i < m->ring_len; i++) {
        const struct fsm_record *r = meta_fsm_ring_at(m, i);
        cr_assert_eq(r->offset,
                     m->image.offset - (int64_t)(m->ring_len - 1 - i));
        bytes += r->len;
    }
    cr_assert_eq(m->ring_bytes, bytes);
}

/* Applies records for offsets from..to in entries of at most per_entry. */
static void apply_producer_range(struct meta_fsm *m, int64_t from,
                                 int64_t to, size_t per_entry)
{
    struct meta_record *recs = calloc(per_entry, sizeof *recs);
    cr_assert_not_null(recs);
    for (int64_t o = from; o <= to;) {
        size_t n = 0;
        for (; n < per_entry && o <= to; n++, o++) {
            recs[n] = producer_ids_rec(o * 10);
        }
        struct fsm_result r = apply_direct(m, recs, n);
        cr_assert_eq(r.last_offset, o - 1);
        cr_assert_eq(r.n_invalid, 0);
    }
    free(recs);
}

Test(fsm, records_since_returns_the_records_after_an_offset_in_order)
{
    struct meta_fsm m;
    const int64_t n_recs = 10;
    size_t start = 0;
    size_t n = 0;

    cr_assert_eq(meta_fsm_init(&m, NULL), RC_OK);
    cr_assert_eq(meta_fsm_records_since(&m, 0, 100, &start, &n), RC_OK);
    cr_assert_eq(n, 0, "nothing applied yet: up to date");
    apply_producer_range(&m, 1, 4, 4);
    apply_producer_range(&m, 5, n_recs, 6);
    cr_assert_eq(m.image.offset, n_recs);
    assert_ring_accounting(&m);

    for (int64_t k = 0; k <= n_recs; k++) {
        cr_assert_eq(meta_fsm_records_since(&m, k, 100, &start, &n), RC_OK);
        cr_assert_eq(n, (size_t)(n_recs - k), "from %lld", (long long)k);
        for (size_t i = 0; i < n; i++) {
            assert_ring_record(&m, start + i, k + 1 + (int64_t)i);
        }
    }
    /* Bounded by max. */
    cr_assert_eq(meta_fsm_records_since(&m, 2, 3, &start, &n), RC_OK);
    cr_assert_eq(n, 3);
    for (size_t i = 0; i < n; i++) {
        assert_ring_record(&m, start + i, 3 + (int64_t)i);
    }
    /* Up to date, or ahead of the image: nothing, and no error. */
    cr_assert_eq(meta_fsm_records_since(&m, n_recs, 100, &start, &n), RC_OK);
    cr_assert_eq(n, 0);
    cr_assert_eq(meta_fsm_records_since(&m, n_recs + 5, 100, &start, &n),
                 RC_OK);
    cr_assert_eq(n, 0);
    meta_fsm_close(&m);
}

/* Twice around the array, so that the head itself wraps too. */
Test(fsm, records_since_after_the_ring_wraps, .timeout = 60)
{
    struct meta_fsm m;
    const int64_t total = 2 * (int64_t)META_RING_RECORDS_MAX + 100;
    size_t start = 0;
    size_t n = 0;

    cr_assert_eq(meta_fsm_init(&m, NULL), RC_OK);
    apply_producer_range(&m, 1, total, 10000);
    cr_assert_eq(m.image.offset, total);
    cr_assert_eq(m.ring_len, META_RING_RECORDS_MAX);
    assert_ring_accounting(&m);

    const int64_t oldest = total - (int64_t)META_RING_RECORDS_MAX + 1;
    cr_assert_eq(meta_fsm_ring_at(&m, 0)->offset, oldest);
    /* Evicted: the image instead. */
    cr_assert_eq(meta_fsm_records_since(&m, 0, 10, &start, &n),
                 RC_OUT_OF_RANGE);
    cr_assert_eq(meta_fsm_records_since(&m, oldest - 2, 10, &start, &n),
                 RC_OUT_OF_RANGE);
    /* Just kept: from the oldest on, across the wrap of the array. */
    cr_assert_eq(meta_fsm_records_since(&m, oldest - 1, 200, &start, &n),
                 RC_OK);
    cr_assert_eq(start, 0);
    cr_assert_eq(n, 200);
    for (size_t i = 0; i < n; i++) {
        assert_ring_record(&m, start + i, oldest + (int64_t)i);
    }
    cr_assert_eq(meta_fsm_records_since(&m, total - 150, 1000, &start, &n),
                 RC_OK);
    cr_assert_eq(n, 150);
    for (size_t i = 0; i < n; i++) {
        assert_ring_record(&m, start + i, total - 149 + (int64_t)i);
    }
    meta_fsm_close(&m);
}

/* An entry that decodes everywhere else but not here, for lack of
 * memory, must stop this controller (a restart replays the log) rather
 * than be skipped: skipping it here only would make this controller's
 * metadata diverge from the others'. Memory is made short with
 * RLIMIT_AS, which AddressSanitizer's shadow memory does not allow. */
#if defined(__SANITIZE_ADDRESS__)
#define FSM__NO_RLIMIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FSM__NO_RLIMIT 1
#endif
#endif

#ifndef FSM__NO_RLIMIT
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

/* Leaves the process extra_bytes of address space beyond what it maps. */
static void limit_address_space(size_t extra_bytes)
{
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert_not_null(f);
    unsigned long pages = 0;
    cr_assert_eq(fscanf(f, "%lu", &pages), 1);
    fclose(f);
    struct rlimit rl = {
        .rlim_cur = pages * (unsigned long)sysconf(_SC_PAGESIZE) + extra_bytes,
        .rlim_max = RLIM_INFINITY};
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
}

Test(fsm, an_entry_that_cannot_be_decoded_for_memory_stops_the_controller,
     .signal = SIGABRT)
{
    struct meta_fsm m;
    cr_assert_eq(meta_fsm_init(&m, NULL), RC_OK);
    size_t n = 4096;
    struct meta_record *recs = calloc(n, sizeof *recs);
    cr_assert_not_null(recs);
    for (size_t i = 0; i < n; i++) {
        recs[i] = producer_ids_rec((int64_t)(1000 * (i + 1)));
    }
    struct raft_buffer buf;
    cr_assert_eq(meta_fsm_encode_entry(recs, n, &buf), RC_OK);
    free(recs);
    limit_address_space(64 << 10);
    void *result = NULL;
    (void)m.raft_fsm.apply(&m.raft_fsm, &buf, &result);
    cr_assert_fail("the entry was skipped for lack of memory, not fatal");
}
#endif
