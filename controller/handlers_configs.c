/* AlterConfigs and IncrementalAlterConfigs on the active controller
 * (controller/controller_internal.h): the request planned by
 * controller/plan_configs.c, its ConfigRecords proposed, one result per
 * resource answered after commit (or at once when nothing changes). */
#include "controller/controller_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "common/topic_config.h"

bool handlers_unclean_default(const struct controller *c)
{
    const char *v = meta_broker_config(
        &c->fsm.image, META_BROKER_DEFAULT,
        topic_config_at(TOPIC_CONFIG_UNCLEAN_LEADER_ELECTION_ENABLE)->synonym);
    bool allowed = c->cfg.unclean_leader_election;
    if (v != NULL && !config_value_bool(v, &allowed)) {
        return c->cfg.unclean_leader_election;
    }
    return allowed;
}

bool handlers_run_alter_configs(struct controller *c, struct ctl_op *op)
{
    const Cairn__AlterConfigsRequest *r = op->req->alter_configs;
    size_t n = r->n_resources;
    size_t n_ops = 0;
    for (size_t i = 0; i < n; i++) {
        n_ops += r->resources[i]->n_ops;
    }
    struct plan_config_resource *res = calloc(n + 1, sizeof *res);
    struct plan_config_op *ops = calloc(n_ops + 1, sizeof *ops);
    op->config_results = calloc(n + 1, sizeof *op->config_results);
    if (res == NULL || ops == NULL || op->config_results == NULL) {
        free(res);
        free(ops);
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                               "out of memory");
        return false;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const Cairn__AlterConfigsResource *x = r->resources[i];
        res[i] = (struct plan_config_resource){
            .type = x->resource_type, .name = x->resource_name,
            .ops = ops + k, .n_ops = x->n_ops};
        for (size_t j = 0; j < x->n_ops; j++, k++) {
            ops[k] = (struct plan_config_op){.name = x->ops[j]->name,
                                             .op = x->ops[j]->op,
                                             .value = x->ops[j]->value};
        }
    }
    struct plan_records recs;
    plan_records_init(&recs);
    int rv = plan_alter_configs(&c->fsm.image, res, n, r->replace,
                                r->validate_only, &recs,
                                op->config_results);
    free(res);
    free(ops);
    return handlers_propose_plan(c, op, rv, &recs, handlers_reply_alter_configs);
}

void handlers_reply_alter_configs(struct controller *c, struct ctl_op *op)
{
    size_t n = op->req->alter_configs->n_resources;
    Cairn__AlterConfigsResult *res = calloc(n + 1, sizeof *res);
    Cairn__AlterConfigsResult **ptrs = calloc(n + 1, sizeof *ptrs);
    if (res == NULL || ptrs == NULL) {
        free(res);
        free(ptrs);
        controller_reply_error(c, op, KAFKA_ERROR_UNKNOWN_SERVER_ERROR,
                               "out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct plan_config_result *pr = &op->config_results[i];
        cairn__alter_configs_result__init(&res[i]);
        res[i].has_error_code = true;
        res[i].error_code = pr->error;
        if (pr->error != KAFKA_ERROR_NONE) {
            res[i].error_message = (char *)(uintptr_t)pr->message;
        }
        ptrs[i] = &res[i];
    }
    Cairn__AlterConfigsResponse ac = CAIRN__ALTER_CONFIGS_RESPONSE__INIT;
    ac.n_results = n;
    ac.results = ptrs;
    Cairn__Response resp = CAIRN__RESPONSE__INIT;
    resp.body_case = CAIRN__RESPONSE__BODY_ALTER_CONFIGS;
    resp.alter_configs = &ac;
    controller_reply(c, op, &resp);
    free(res);
    free(ptrs);
}
