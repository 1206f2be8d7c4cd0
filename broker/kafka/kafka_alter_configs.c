/* AlterConfigs (33) and IncrementalAlterConfigs (44) (broker/broker.h):
 * forwarded to the active controller, which validates them and writes
 * ConfigRecords; the broker answers with its per-resource results and
 * fetches the change at once, so what it applies (retention, segments,
 * min.insync.replicas, timestamps) follows without a restart. */
#include "broker/broker.h"
#include "broker/kafka/kafka_forward.h"

#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"
#include "rpc.pb-c.h"

/* An AlterConfigs or IncrementalAlterConfigs request waiting for the
 * controller. */
struct alter_ctx {
    struct kafka_forward fw;
    const struct kafka_AlterConfigsResource *res;
    int32_t n;
    bool incremental;
};

static int enc_alter(struct writer *w, int16_t v, const void *r)
{
    return kafka_alter_configs_response_encode(w, v, r);
}

static int enc_incremental(struct writer *w, int16_t v, const void *r)
{
    return kafka_incremental_alter_configs_response_encode(w, v, r);
}

/* Answers every resource: the controller's result i, else error. */
static void answer(struct kafka_forward *fw, const Cairn__Response *resp,
                   int16_t error)
{
    struct alter_ctx *ctx = (struct alter_ctx *)fw;
    const Cairn__AlterConfigsResponse *ac =
        resp != NULL && error == KAFKA_ERROR_NONE ? resp->alter_configs
                                                  : NULL;
    error = kafka_forward_missing(error);
    struct kafka_AlterConfigsResourceResponse *out = NULL;
    if (arena_alloc(&ctx->fw.arena, (size_t)ctx->n, sizeof *out,
                    (void **)&out) != RC_OK) {
        kafka_close_conn(ctx->fw.req, "out of memory");
        return;
    }
    for (int32_t i = 0; i < ctx->n; i++) {
        int16_t e = error;
        const char *msg = kafka_error_name(error);
        if (ac != NULL && (size_t)i < ac->n_results) {
            e = (int16_t)ac->results[i]->error_code;
            msg = ac->results[i]->error_message;
        }
        out[i] = (struct kafka_AlterConfigsResourceResponse){
            .ErrorCode = e,
            .ErrorMessage = e != KAFKA_ERROR_NONE && msg != NULL
                                ? slice_from_str(msg)
                                : slice_null(),
            .ResourceType = ctx->res[i].ResourceType,
            .ResourceName = ctx->res[i].ResourceName};
    }
    struct kafka_AlterConfigsResponse r = {.Responses = out,
                                           .ResponsesCnt = ctx->n};
    kafka_send(ctx->fw.req, ctx->incremental ? enc_incremental : enc_alter,
               &r);
}

/* A wire string for the controller: NULL for null (a config's deleted
 * value), else a NUL-terminated copy in the arena. */
static char *arena_str(struct arena *a, struct slice s, bool *fail)
{
    if (slice_is_null(s)) {
        return NULL;
    }
    char *out = kafka_forward_str(a, s, false);
    *fail |= out == NULL;
    return out;
}

/* The controller's request, in the arena. A name holding a NUL byte is
 * sent as "" (no such topic, no such config) rather than cut short. */
static int build(struct alter_ctx *ctx, Cairn__AlterConfigsRequest *ac)
{
    struct arena *a = &ctx->fw.arena;
    size_t n = (size_t)ctx->n;
    Cairn__AlterConfigsResource *rs = NULL;
    Cairn__AlterConfigsResource **rp = NULL;
    int rv = arena_alloc(a, n, sizeof *rs, (void **)&rs);
    if (rv == RC_OK) {
        rv = arena_alloc(a, n, sizeof *rp, (void **)&rp);
    }
    bool fail = false;
    for (size_t i = 0; rv == RC_OK && !fail && i < n; i++) {
        const struct kafka_AlterConfigsResource *kr = &ctx->res[i];
        cairn__alter_configs_resource__init(&rs[i]);
        rs[i].has_resource_type = true;
        rs[i].resource_type = kr->ResourceType;
        struct slice name = memchr(kr->ResourceName.ptr, '\0',
                                   kr->ResourceName.len) != NULL
                                ? slice_from_str("")
                                : kr->ResourceName;
        rs[i].resource_name = arena_str(a, name, &fail);
        size_t nc = (size_t)kr->ConfigsCnt;
        Cairn__AlterConfigOp *os = NULL;
        Cairn__AlterConfigOp **op = NULL;
        rv = arena_alloc(a, nc, sizeof *os, (void **)&os);
        if (rv == RC_OK) {
            rv = arena_alloc(a, nc, sizeof *op, (void **)&op);
        }
        for (size_t k = 0; rv == RC_OK && k < nc; k++) {
            const struct kafka_AlterableConfig *kc = &kr->Configs[k];
            cairn__alter_config_op__init(&os[k]);
            struct slice cn = memchr(kc->Name.ptr, '\0', kc->Name.len)
                                  ? slice_from_str("")
                                  : kc->Name;
            os[k].name = arena_str(a, cn, &fail);
            os[k].has_op = true;
            os[k].op = kc->ConfigOperation;
            os[k].value = arena_str(a, kc->Value, &fail);
            op[k] = &os[k];
        }
        rs[i].n_ops = nc;
        rs[i].ops = op;
        rp[i] = &rs[i];
    }
    ac->n_resources = n;
    ac->resources = rp;
    return fail ? RC_TOO_LARGE : rv;
}

static void handle(struct broker *b, struct kafka_request *req,
                   bool incremental)
{
    struct alter_ctx *ctx = kafka_forward_new(b, req, sizeof *ctx);
    if (ctx == NULL) {
        kafka_close_conn(req, "out of memory");
        return;
    }
    ctx->incremental = incremental;
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    bool validate_only = false;
    int rv;
    if (incremental) {
        struct kafka_IncrementalAlterConfigsRequest rq;
        rv = kafka_incremental_alter_configs_request_decode(
            &r, req->api_version, &ctx->fw.arena, &rq);
        ctx->res = rq.Resources;
        ctx->n = rq.ResourcesCnt;
        validate_only = rq.ValidateOnly;
    } else {
        struct kafka_AlterConfigsRequest rq;
        rv = kafka_alter_configs_request_decode(&r, req->api_version,
                                                &ctx->fw.arena, &rq);
        ctx->res = rq.Resources;
        ctx->n = rq.ResourcesCnt;
        validate_only = rq.ValidateOnly;
    }
    Cairn__AlterConfigsRequest ac = CAIRN__ALTER_CONFIGS_REQUEST__INIT;
    if (rv == RC_OK) {
        rv = build(ctx, &ac);
    }
    if (rv != RC_OK) {
        kafka_forward_refuse(ctx, req,
                             incremental
                                 ? "malformed IncrementalAlterConfigs request"
                                 : "malformed AlterConfigs request");
        return;
    }
    ac.has_validate_only = ac.has_replace = true;
    ac.validate_only = validate_only;
    ac.replace = !incremental;
    Cairn__Request cr = CAIRN__REQUEST__INIT;
    cr.body_case = CAIRN__REQUEST__BODY_ALTER_CONFIGS;
    cr.alter_configs = &ac;
    if (!validate_only) {
        kafka_forward_visible(&ctx->fw, 0 /* the API has no timeout */);
    }
    kafka_forward_call(&ctx->fw, &cr, KAFKA_FORWARD_TIMEOUT_MS, answer);
}

void kafka_handle_alter_configs(struct broker *b, struct kafka_request *req)
{
    handle(b, req, false);
}

void kafka_handle_incremental_alter_configs(struct broker *b,
                                            struct kafka_request *req)
{
    handle(b, req, true);
}
