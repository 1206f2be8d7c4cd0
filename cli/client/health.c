/* Partition health from the brokers (cli/client/health.h). */
#include "cli/client/health.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "cli/util/cli.h"
#include "common/arena.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"

/* ListOffsets' ReplicaId for a consumer (answered by the leader with the
 * HW) and Kafka's debugging replica id (answered by any replica with its
 * log end offset; broker/kafka/kafka_handlers.c). */
#define HEALTH__REPLICA_CONSUMER (-1)
#define HEALTH__REPLICA_DEBUG (-2)

/* ListOffsets' Timestamp for "latest". */
#define HEALTH__LATEST (-1)

/* v1 is the oldest the brokers take and says all we need. */
#define HEALTH__LIST_OFFSETS_VERSION 1
#define HEALTH__DESCRIBE_CONFIGS_VERSION 1

#define HEALTH__MIN_INSYNC "min.insync.replicas"

/* --- Which partitions a request carries ---------------------------------- */

/* Whether the ListOffsets of replica_id kind sent to broker carries p. */
static bool carries(const struct meta_partition *p, int32_t broker,
                    int32_t replica_id)
{
    if (replica_id == HEALTH__REPLICA_DEBUG) {
        return meta_replica_set_contains(&p->replicas, broker);
    }
    return p->leader == broker;
}

static int32_t count_carried(const struct meta_topic *t, int32_t broker,
                             int32_t replica_id)
{
    int32_t n = 0;
    for (int32_t i = 0; i < t->n_partitions; i++) {
        n += carries(&t->partitions[i], broker, replica_id) ? 1 : 0;
    }
    return n;
}

static bool carries_any(const struct meta_image *img, int32_t broker,
                        int32_t replica_id)
{
    for (size_t i = 0; i < img->n_topics; i++) {
        if (count_carried(&img->topics[i], broker, replica_id) > 0) {
            return true;
        }
    }
    return false;
}

static int32_t replica_index(const struct meta_replica_set *s, int32_t id)
{
    for (int32_t i = 0; i < s->n; i++) {
        if (s->ids[i] == id) {
            return i;
        }
    }
    return -1;
}

/* --- ListOffsets --------------------------------------------------------- */

struct health__ask {
    struct kafka_ListOffsetsRequest req;
    const size_t *topic_of; /* request topic i is image topic topic_of[i] */
};

/* The request to broker for every partition it carries; its arrays live
 * in a. */
static int build_list_offsets(const struct meta_image *img, int32_t broker,
                              int32_t replica_id, struct arena *a,
                              struct health__ask *ask)
{
    size_t n = 0;
    for (size_t i = 0; i < img->n_topics; i++) {
        n += count_carried(&img->topics[i], broker, replica_id) > 0 ? 1 : 0;
    }
    struct kafka_ListOffsetsTopic *ts = NULL;
    size_t *of = NULL;
    int rv = arena_alloc(a, n, sizeof *ts, (void **)&ts);
    if (rv == RC_OK) {
        rv = arena_alloc(a, n, sizeof *of, (void **)&of);
    }
    size_t k = 0;
    for (size_t i = 0; rv == RC_OK && i < img->n_topics; i++) {
        const struct meta_topic *t = &img->topics[i];
        int32_t m = count_carried(t, broker, replica_id);
        struct kafka_ListOffsetsPartition *ps = NULL;
        rv = arena_alloc(a, (size_t)m, sizeof *ps, (void **)&ps);
        int32_t j = 0;
        for (int32_t p = 0; rv == RC_OK && p < t->n_partitions; p++) {
            if (carries(&t->partitions[p], broker, replica_id)) {
                ps[j++] = (struct kafka_ListOffsetsPartition){
                    .PartitionIndex = p,
                    .CurrentLeaderEpoch = -1,
                    .Timestamp = HEALTH__LATEST};
            }
        }
        if (rv == RC_OK && m > 0) {
            ASSERT(j == m);
            ts[k] = (struct kafka_ListOffsetsTopic){
                .Name = slice_from_str(t->name),
                .Partitions = ps,
                .PartitionsCnt = m};
            of[k++] = i;
        }
    }
    ASSERT(rv != RC_OK || k == n);
    ask->req = (struct kafka_ListOffsetsRequest){
        .ReplicaId = replica_id, .Topics = ts, .TopicsCnt = (int32_t)n};
    ask->topic_of = of;
    return rv;
}

/* Notes the first partition a broker answered with an error. */
static void note_error(struct health_broker *hb, const struct meta_topic *t,
                       int32_t partition, int16_t code, int32_t *n_errors)
{
    if ((*n_errors)++ == 0) {
        snprintf(hb->error, sizeof hb->error,
                 "ListOffsets: %s for "
                 "%s-%" PRId32,
                 kafka_error_name(code), t->name, partition);
    }
}

/* Brokers echo the request's topics in order; a topic that does not
 * match, or a partition that was not asked, is ignored. */
static void take_offsets(struct health *h, size_t bi,
                         const struct health__ask *ask,
                         const struct kafka_ListOffsetsResponse *resp)
{
    int32_t broker = h->img->brokers[bi].id;
    int32_t n_errors = 0;
    for (int32_t i = 0; i < resp->TopicsCnt && i < ask->req.TopicsCnt; i++) {
        const struct kafka_ListOffsetsTopicResponse *rt = &resp->Topics[i];
        size_t ti = ask->topic_of[i];
        const struct meta_topic *t = &h->img->topics[ti];
        if (!slice_eq_str(rt->Name, t->name)) {
            continue;
        }
        for (int32_t k = 0; k < rt->PartitionsCnt; k++) {
            const struct kafka_ListOffsetsPartitionResponse *rp =
                &rt->Partitions[k];
            int32_t p = rp->PartitionIndex;
            if (p < 0 || p >= t->n_partitions ||
                !carries(&t->partitions[p], broker, ask->req.ReplicaId)) {
                continue;
            }
            if (rp->ErrorCode != KAFKA_ERROR_NONE) {
                note_error(&h->brokers[bi], t, p, rp->ErrorCode, &n_errors);
                continue;
            }
            struct health_partition *hp =
                &h->partitions[h->first[ti] + (size_t)p];
            int32_t r = replica_index(&t->partitions[p].replicas, broker);
            if (ask->req.ReplicaId == HEALTH__REPLICA_CONSUMER) {
                hp->hw = rp->Offset >= 0 ? rp->Offset : -1;
            } else if (r >= 0) {
                hp->end_offsets[r] = rp->Offset >= 0 ? rp->Offset : -1;
            }
        }
    }
    if (n_errors > 1) {
        size_t used = strlen(h->brokers[bi].error);
        snprintf(h->brokers[bi].error + used,
                 sizeof h->brokers[bi].error - used,
                 " (and %" PRId32 " more)", n_errors - 1);
    }
}

/* One ListOffsets of replica_id kind to broker bi. Failures other than
 * RC_NOMEM are the broker's, written to its error. */
static int list_offsets(struct health *h, struct kafka_client *kc, size_t bi,
                        int32_t replica_id)
{
    struct health_broker *hb = &h->brokers[bi];
    const int16_t v = HEALTH__LIST_OFFSETS_VERSION;
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct writer w;
    writer_init(&w, REQUEST_BYTES_MAX);
    struct health__ask ask;
    uint8_t *body = NULL;
    size_t len = 0;
    int rv = build_list_offsets(h->img, h->img->brokers[bi].id, replica_id,
                                &a, &ask);
    if (rv == RC_OK) {
        rv = kafka_list_offsets_request_encode(&w, v, &ask.req);
    }
    if (rv != RC_OK) {
        snprintf(hb->error, sizeof hb->error, "ListOffsets not built: %s",
                 rc_str(rv));
        goto out;
    }
    rv = kafka_client_call(kc, KAFKA_API_LIST_OFFSETS, v, &w, &body, &len);
    if (rv != RC_OK) {
        snprintf(hb->error, sizeof hb->error, "ListOffsets: %s", kc->error);
        goto out;
    }
    struct kafka_ListOffsetsResponse resp;
    struct reader r;
    reader_init(&r, body, len);
    rv = kafka_list_offsets_response_decode(&r, v, &a, &resp);
    if (rv != RC_OK) {
        snprintf(hb->error, sizeof hb->error,
                 "ListOffsets: undecodable "
                 "answer: %s",
                 rc_str(rv));
        goto out;
    }
    take_offsets(h, bi, &ask, &resp);
out:
    free(body);
    writer_free(&w);
    arena_free(&a);
    return rv;
}

/* --- DescribeConfigs ----------------------------------------------------- */

static void take_min_insync(struct health *h, int32_t broker,
                            const struct kafka_DescribeConfigsResponse *resp)
{
    for (int32_t i = 0; i < resp->ResultsCnt; i++) {
        const struct kafka_DescribeConfigsResult *res = &resp->Results[i];
        if (res->ErrorCode != KAFKA_ERROR_NONE) {
            continue;
        }
        for (int32_t k = 0; k < res->ConfigsCnt; k++) {
            const struct kafka_DescribeConfigsResourceResult *c =
                &res->Configs[k];
            char value[16];
            int32_t x = 0;
            if (!slice_eq_str(c->Name, HEALTH__MIN_INSYNC) ||
                slice_is_null(c->Value) || c->Value.len >= sizeof value) {
                continue;
            }
            memcpy(value, c->Value.ptr, c->Value.len);
            value[c->Value.len] = '\0';
            if (cli_parse_int32(value, 1, INT32_MAX, &x)) {
                h->min_insync_default = x;
                h->min_insync_from = broker;
                return;
            }
        }
    }
}

/* Asks broker bi for its min.insync.replicas. A broker that does not
 * answer, or names none, leaves the default as it is; only RC_NOMEM is
 * returned. */
static int describe_min_insync(struct health *h, struct kafka_client *kc,
                               size_t bi)
{
    int32_t broker = h->img->brokers[bi].id;
    const int16_t v = HEALTH__DESCRIBE_CONFIGS_VERSION;
    char id[12];
    snprintf(id, sizeof id, "%" PRId32, broker);
    struct slice key = slice_from_str(HEALTH__MIN_INSYNC);
    struct kafka_DescribeConfigsResource res = {
        .ResourceType = META_RESOURCE_BROKER,
        .ResourceName = slice_from_str(id),
        .ConfigurationKeys = &key,
        .ConfigurationKeysCnt = 1};
    struct kafka_DescribeConfigsRequest rq = {.Resources = &res,
                                              .ResourcesCnt = 1};
    struct writer w;
    writer_init(&w, KAFKA_STRING_BYTES_MAX);
    uint8_t *body = NULL;
    size_t len = 0;
    int rv = kafka_describe_configs_request_encode(&w, v, &rq);
    if (rv == RC_OK) {
        rv = kafka_client_call(kc, KAFKA_API_DESCRIBE_CONFIGS, v, &w, &body,
                               &len);
    }
    if (rv == RC_OK) {
        struct arena a;
        arena_init(&a, ARENA_BYTES_MAX);
        struct kafka_DescribeConfigsResponse resp;
        struct reader r;
        reader_init(&r, body, len);
        rv = kafka_describe_configs_response_decode(&r, v, &a, &resp);
        if (rv == RC_OK) {
            take_min_insync(h, broker, &resp);
        }
        arena_free(&a);
    }
    free(body);
    writer_free(&w);
    return rv == RC_NOMEM ? RC_NOMEM : RC_OK;
}

/* --- Gathering ----------------------------------------------------------- */

/* One connection to broker bi for everything it can tell. */
static int ask_broker(struct health *h, size_t bi)
{
    const struct meta_broker *b = &h->img->brokers[bi];
    struct health_broker *hb = &h->brokers[bi];
    bool hosts = carries_any(h->img, b->id, HEALTH__REPLICA_DEBUG);
    bool leads = carries_any(h->img, b->id, HEALTH__REPLICA_CONSUMER);
    bool need_min = h->min_insync_from < 0;
    if (!hosts && !need_min) {
        return RC_OK;
    }
    hb->asked = true;
    struct kafka_client kc;
    int rv = kafka_client_open(&kc, b->host, b->port, CLI_KAFKA_CLIENT_ID,
                               HEALTH_BROKER_TIMEOUT_MS);
    if (rv != RC_OK) {
        snprintf(hb->error, sizeof hb->error, "%s", kc.error);
    }
    if (rv == RC_OK && hosts) {
        rv = list_offsets(h, &kc, bi, HEALTH__REPLICA_DEBUG);
    }
    if (rv == RC_OK && leads) {
        rv = list_offsets(h, &kc, bi, HEALTH__REPLICA_CONSUMER);
    }
    hb->reachable = rv == RC_OK;
    /* Last: a broker that closes the connection on it (no DescribeConfigs
     * of brokers) has already given its offsets. */
    if (rv == RC_OK && need_min) {
        rv = describe_min_insync(h, &kc, bi);
    }
    kafka_client_close(&kc);
    return rv == RC_NOMEM ? RC_NOMEM : RC_OK;
}

static int32_t topic_min_insync(const struct health *h,
                                const struct meta_topic *t)
{
    /* As the brokers read it (broker/replication/replica_manager.c): a value
     * outside 1..META_REPLICAS_MAX falls back to the broker default. */
    const char *v = meta_topic_config(t, HEALTH__MIN_INSYNC);
    int32_t x = 0;
    if (v != NULL && cli_parse_int32(v, 1, META_REPLICAS_MAX, &x)) {
        return x;
    }
    return h->min_insync_default;
}

static void set_flags(struct health *h)
{
    for (size_t i = 0; i < h->img->n_topics; i++) {
        const struct meta_topic *t = &h->img->topics[i];
        int32_t min_insync = topic_min_insync(h, t);
        for (int32_t p = 0; p < t->n_partitions; p++) {
            const struct meta_partition *mp = &t->partitions[p];
            struct health_partition *hp =
                &h->partitions[h->first[i] + (size_t)p];
            hp->min_isr =
                min_insync < mp->replicas.n ? min_insync : mp->replicas.n;
            hp->offline = mp->leader == META_NO_LEADER;
            hp->under_replicated = mp->isr.n < mp->replicas.n;
            hp->under_min_isr = mp->isr.n < hp->min_isr;
            hp->at_min_isr = mp->isr.n == hp->min_isr;
        }
    }
}

int health_gather(struct health *h, const struct meta_image *img)
{
    memset(h, 0, sizeof *h);
    h->img = img;
    h->min_insync_default = HEALTH_MIN_INSYNC_DEFAULT;
    h->min_insync_from = -1;
    size_t total = 0;
    for (size_t i = 0; i < img->n_topics; i++) {
        total += (size_t)img->topics[i].n_partitions;
    }
    /* calloc(0) may give NULL; ask for one element at least. */
    h->first = calloc(img->n_topics + 1, sizeof *h->first);
    h->partitions = calloc(total + 1, sizeof *h->partitions);
    h->brokers = calloc(img->n_brokers + 1, sizeof *h->brokers);
    if (h->first == NULL || h->partitions == NULL || h->brokers == NULL) {
        return RC_NOMEM;
    }
    size_t at = 0;
    for (size_t i = 0; i < img->n_topics; i++) {
        h->first[i] = at;
        at += (size_t)img->topics[i].n_partitions;
    }
    for (size_t k = 0; k < total; k++) {
        h->partitions[k].hw = -1;
        for (size_t r = 0; r < META_REPLICAS_MAX; r++) {
            h->partitions[k].end_offsets[r] = -1;
        }
    }
    for (size_t bi = 0; bi < img->n_brokers; bi++) {
        int rv = ask_broker(h, bi);
        if (rv != RC_OK) {
            return rv;
        }
    }
    set_flags(h);
    return RC_OK;
}

const struct health_partition *health_partition(const struct health *h,
                                                const struct meta_topic *t,
                                                int32_t id)
{
    ASSERT(t >= h->img->topics);
    size_t ti = (size_t)(t - h->img->topics);
    ASSERT(ti < h->img->n_topics);
    ASSERT(id >= 0);
    ASSERT(id < t->n_partitions);
    return &h->partitions[h->first[ti] + (size_t)id];
}

const struct health_broker *health_broker(const struct health *h,
                                          const struct meta_broker *b)
{
    ASSERT(b >= h->img->brokers);
    size_t bi = (size_t)(b - h->img->brokers);
    ASSERT(bi < h->img->n_brokers);
    return &h->brokers[bi];
}

void health_free(struct health *h)
{
    free(h->first);
    free(h->partitions);
    free(h->brokers);
    h->first = NULL;
    h->partitions = NULL;
    h->brokers = NULL;
}
