/* DescribeCluster and DescribeLogDirs (broker/broker.h), answered from the
 * broker's metadata image and the partitions it hosts. DescribeLogDirs v4
 * adds the log dir's file-system totals, read with uv_fs_statfs() on the
 * threadpool; everything else is answered on the loop thread at once. */
#include "broker/broker.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/log/log.h"
#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"

/* Kafka's EndpointType values (DescribeCluster v1). */
#define CLUSTER__ENDPOINT_BROKER 1
#define CLUSTER__ENDPOINT_CONTROLLER 2

/* Kafka's cluster operations without an authorizer (AclEntry's
 * supportedOperations(CLUSTER) as a bit field): CREATE 5, ALTER 7,
 * DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11,
 * IDEMPOTENT_WRITE 12. */
#define CLUSTER__AUTHORIZED_OPERATIONS                                    \
    ((1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) |  \
     (1 << 12))

/* --- DescribeCluster ----------------------------------------------------- */

static int enc_cluster(struct writer *w, int16_t v, const void *r)
{
    return kafka_describe_cluster_response_encode(w, v, r);
}

/* Kafka's check of the endpoint type asked for (AuthHelper's
 * computeDescribeClusterResponse): a broker serves type 1 only. */
static bool cluster_endpoint_refused(const struct kafka_request *req,
                                     const struct kafka_DescribeClusterRequest *rq,
                                     struct kafka_DescribeClusterResponse *resp,
                                     char *msg, size_t cap)
{
    bool v0 = req->api_version == 0;
    if (rq->EndpointType != CLUSTER__ENDPOINT_BROKER &&
        rq->EndpointType != CLUSTER__ENDPOINT_CONTROLLER) {
        resp->ErrorCode = v0 ? KAFKA_ERROR_INVALID_REQUEST
                             : KAFKA_ERROR_UNSUPPORTED_ENDPOINT_TYPE;
        snprintf(msg, cap, "Unsupported endpoint type %d",
                 (int)rq->EndpointType);
    } else if (rq->EndpointType == CLUSTER__ENDPOINT_CONTROLLER) {
        resp->ErrorCode = v0 ? KAFKA_ERROR_INVALID_REQUEST
                             : KAFKA_ERROR_MISMATCHED_ENDPOINT_TYPE;
        snprintf(msg, cap, "The request was sent to an endpoint of type "
                 "BROKER, but we wanted an endpoint of type CONTROLLER");
    } else {
        return false;
    }
    resp->ErrorMessage = slice_from_str(msg);
    return true;
}

/* The live (unfenced) brokers as Metadata lists them; the "controller" is
 * the first of them, as Metadata names it here (a Kafka 3.8 KRaft broker
 * names a random live broker: clients cannot reach its controllers). */
static int cluster_brokers(struct broker *b, struct arena *a,
                           struct kafka_DescribeClusterResponse *resp)
{
    const struct meta_image *img = membership_image(b->membership);
    struct kafka_DescribeClusterBroker *out = NULL;
    int rv = arena_alloc(a, img->n_brokers, sizeof *out, (void **)&out);
    int32_t n = 0;
    for (size_t i = 0; rv == RC_OK && i < img->n_brokers; i++) {
        const struct meta_broker *mb = &img->brokers[i];
        if (mb->fenced) {
            continue;
        }
        out[n++] = (struct kafka_DescribeClusterBroker){
            .BrokerId = mb->id, .Host = slice_from_str(mb->host),
            .Port = mb->port,
            .Rack = mb->rack[0] != '\0' ? slice_from_str(mb->rack)
                                        : slice_null()};
    }
    resp->Brokers = out;
    resp->BrokersCnt = n;
    resp->ControllerId = n > 0 ? out[0].BrokerId : -1;
    return rv;
}

void kafka_handle_describe_cluster(struct broker *b, struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    struct kafka_DescribeClusterRequest rq;
    int rv = kafka_describe_cluster_request_decode(&r, req->api_version, &a,
                                                   &rq);
    struct kafka_DescribeClusterResponse resp = {
        .ErrorMessage = slice_null(),
        .EndpointType = CLUSTER__ENDPOINT_BROKER,
        .ClusterId = slice_from_str(""),
        .ControllerId = -1,
        .ClusterAuthorizedOperations = INT32_MIN};
    char msg[128];
    if (rv == RC_OK &&
        !cluster_endpoint_refused(req, &rq, &resp, msg, sizeof msg)) {
        resp.ClusterId = slice_from_str("cairn"); /* as Metadata says */
        if (rq.IncludeClusterAuthorizedOperations) {
            resp.ClusterAuthorizedOperations = CLUSTER__AUTHORIZED_OPERATIONS;
        }
        rv = cluster_brokers(b, &a, &resp);
    }
    if (rv != RC_OK) {
        kafka_close_conn(req, "malformed DescribeCluster request");
    } else {
        kafka_send(req, enc_cluster, &resp);
    }
    arena_free(&a);
}

/* --- DescribeLogDirs ----------------------------------------------------- */

/* A request waiting for the log dir's file-system totals (v4). */
struct log_dirs_ctx {
    uv_fs_t fs;
    struct kafka_request *req;
    struct arena arena;
    struct kafka_DescribeLogDirsResponse resp;
    struct kafka_DescribeLogDirsResult dir;
    char path[LOG_PATH_BYTES_MAX + 4096];
};

static int enc_log_dirs(struct writer *w, int16_t v, const void *r)
{
    return kafka_describe_log_dirs_response_encode(w, v, r);
}

static int part_cmp(const void *x, const void *y)
{
    const struct partition *p = *(struct partition *const *)x;
    const struct partition *q = *(struct partition *const *)y;
    int c = strcmp(p->topic, q->topic);
    if (c != 0) {
        return c;
    }
    return p->id < q->id ? -1 : p->id > q->id;
}

/* The hosted partition of topic/id in sorted[0..n), or -1. */
static ptrdiff_t part_find(struct partition *const *sorted, size_t n,
                           struct slice topic, int32_t id)
{
    char name[META_TOPIC_NAME_BYTES_MAX + 1];
    if (topic.len > META_TOPIC_NAME_BYTES_MAX ||
        memchr(topic.ptr, '\0', topic.len) != NULL) {
        return -1;
    }
    memcpy(name, topic.ptr, topic.len);
    name[topic.len] = '\0';
    size_t lo = 0;
    size_t hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(sorted[mid]->topic, name);
        if (c == 0) {
            c = sorted[mid]->id < id ? -1 : sorted[mid]->id > id;
        }
        if (c == 0) {
            return (ptrdiff_t)mid;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return -1;
}

/* Marks the hosted partitions the request names (all when Topics is
 * null); a partition named twice is described once, as Kafka's set of
 * partitions does. */
static void log_dirs_pick(const struct kafka_DescribeLogDirsRequest *rq,
                          struct partition *const *sorted, size_t n,
                          bool *picked)
{
    for (size_t i = 0; i < n; i++) {
        picked[i] = rq->TopicsCnt < 0;
    }
    for (int32_t t = 0; t < rq->TopicsCnt; t++) {
        const struct kafka_DescribableLogDirTopic *dt = &rq->Topics[t];
        for (int32_t k = 0; k < dt->PartitionsCnt; k++) {
            ptrdiff_t at = part_find(sorted, n, dt->Topic,
                                     dt->Partitions[k]);
            if (at >= 0) {
                picked[at] = true;
            }
        }
    }
}

/* One entry per picked partition, grouped by topic in sorted order.
 * Sizes are the segments' bytes; the lag is Kafka's for a current log,
 * max(high watermark - log end, 0): 0 for a leader. */
static int log_dirs_topics(struct arena *a, struct partition *const *sorted,
                           size_t n, const bool *picked,
                           struct kafka_DescribeLogDirsResult *dir)
{
    struct kafka_DescribeLogDirsTopic *ts = NULL;
    struct kafka_DescribeLogDirsPartition *ps = NULL;
    int rv = arena_alloc(a, n, sizeof *ts, (void **)&ts);
    if (rv == RC_OK) {
        rv = arena_alloc(a, n, sizeof *ps, (void **)&ps);
    }
    int32_t nt = 0;
    size_t np = 0;
    for (size_t i = 0; rv == RC_OK && i < n; i++) {
        if (!picked[i]) {
            continue;
        }
        const struct partition *p = sorted[i];
        if (nt == 0 || !slice_eq_str(ts[nt - 1].Name, p->topic)) {
            char *name = NULL;
            size_t len = strlen(p->topic);
            rv = arena_alloc(a, len + 1, 1, (void **)&name);
            if (rv != RC_OK) {
                break;
            }
            memcpy(name, p->topic, len + 1);
            ts[nt++] = (struct kafka_DescribeLogDirsTopic){
                .Name = slice_from_str(name), .Partitions = &ps[np]};
        }
        int64_t lag = p->hw - log_end_offset(p->log);
        ps[np++] = (struct kafka_DescribeLogDirsPartition){
            .PartitionIndex = p->id,
            .PartitionSize = log_size_bytes(p->log),
            .OffsetLag = lag > 0 ? lag : 0};
        ts[nt - 1].PartitionsCnt++;
    }
    dir->Topics = ts;
    dir->TopicsCnt = nt;
    return rv;
}

/* The hosted partitions with an open log, sorted by topic and id. */
static int log_dirs_hosted(struct broker *b, struct arena *a,
                           struct partition ***sorted_out, size_t *n_out)
{
    const struct replica_manager *rm = &b->partitions;
    struct partition **sorted = NULL;
    int rv = arena_alloc(a, rm->n, sizeof *sorted, (void **)&sorted);
    size_t n = 0;
    for (size_t i = 0; rv == RC_OK && i < rm->n; i++) {
        struct partition *p = rm->parts[i];
        if (p->log != NULL && !p->closing) {
            sorted[n++] = p;
        }
    }
    if (n > 1) {
        qsort(sorted, n, sizeof *sorted, part_cmp);
    }
    *sorted_out = sorted;
    *n_out = n;
    return rv;
}

static void log_dirs_statfs_cb(uv_fs_t *fs)
{
    struct log_dirs_ctx *ctx = fs->data;
    if (fs->result == 0 && fs->ptr != NULL) {
        const uv_statfs_t *st = fs->ptr;
        ctx->dir.TotalBytes = (int64_t)(st->f_blocks * st->f_bsize);
        ctx->dir.UsableBytes = (int64_t)(st->f_bavail * st->f_bsize);
    }
    uv_fs_req_cleanup(fs);
    kafka_send(ctx->req, enc_log_dirs, &ctx->resp);
    arena_free(&ctx->arena);
    free(ctx);
}

static int log_dirs_build(struct broker *b, struct log_dirs_ctx *ctx)
{
    struct reader r;
    reader_init(&r, ctx->req->body, ctx->req->body_len);
    struct kafka_DescribeLogDirsRequest rq;
    int rv = kafka_describe_log_dirs_request_decode(
        &r, ctx->req->api_version, &ctx->arena, &rq);
    struct partition **sorted = NULL;
    size_t n = 0;
    bool *picked = NULL;
    if (rv == RC_OK) {
        rv = log_dirs_hosted(b, &ctx->arena, &sorted, &n);
    }
    if (rv == RC_OK) {
        rv = arena_alloc(&ctx->arena, n, sizeof *picked, (void **)&picked);
    }
    if (rv != RC_OK) {
        return rv;
    }
    log_dirs_pick(&rq, sorted, n, picked);
    /* Kafka names the directory by its absolute path. */
    const char *dir = b->partitions.log_dir;
    char cwd[4096];
    if (dir[0] != '/' && getcwd(cwd, sizeof cwd) != NULL) {
        snprintf(ctx->path, sizeof ctx->path, "%s/%s", cwd, dir);
    } else {
        snprintf(ctx->path, sizeof ctx->path, "%s", dir);
    }
    ctx->dir = (struct kafka_DescribeLogDirsResult){
        .LogDir = slice_from_str(ctx->path), .TotalBytes = -1,
        .UsableBytes = -1};
    ctx->resp = (struct kafka_DescribeLogDirsResponse){.Results = &ctx->dir,
                                                       .ResultsCnt = 1};
    if (b->partitions.dir_failed) {
        /* Kafka's answer for an offline dir: the error, nothing else. */
        ctx->dir.ErrorCode = KAFKA_ERROR_KAFKA_STORAGE_ERROR;
        return RC_OK;
    }
    return log_dirs_topics(&ctx->arena, sorted, n, picked, &ctx->dir);
}

void kafka_handle_describe_log_dirs(struct broker *b,
                                    struct kafka_request *req)
{
    struct log_dirs_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        kafka_close_conn(req, "out of memory");
        return;
    }
    ctx->req = req;
    arena_init(&ctx->arena, ARENA_BYTES_MAX);
    int rv = log_dirs_build(b, ctx);
    if (rv != RC_OK) {
        kafka_close_conn(req, "malformed DescribeLogDirs request");
    } else if (req->api_version >= 4 && ctx->dir.ErrorCode == 0) {
        ctx->fs.data = ctx;
        if (uv_fs_statfs(b->loop, &ctx->fs, ctx->path,
                         log_dirs_statfs_cb) == 0) {
            return; /* answered by the callback */
        }
        kafka_send(req, enc_log_dirs, &ctx->resp); /* totals stay -1 */
    } else {
        kafka_send(req, enc_log_dirs, &ctx->resp);
    }
    arena_free(&ctx->arena);
    free(ctx);
}
