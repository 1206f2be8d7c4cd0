/* `cairn consume --group` as a group member
 * (cli/cmd/consume/consume_group.h). */
#include "cli/cmd/consume/consume_group.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "common/rc.h"

/* Partition ids tracked: any partition of any topic fits. */
#define CONSUME_GROUP__PARTITIONS CONSUME_PARTITIONS_MAX

/* No offset yet (next, committed). */
#define CONSUME_GROUP__NONE (-1)

bool consume_group_strategy_valid(const char *name)
{
    static const char *const names[] = {"range", "roundrobin",
                                        "cooperative-sticky"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        if (strcmp(name, names[i]) == 0) {
            return true;
        }
    }
    return false;
}

int consume_group_init(struct consume_group *cg, const char *topic,
                       struct kclient_error *e)
{
    memset(cg, 0, sizeof *cg);
    cg->topic = topic;
    snprintf(cg->what, sizeof cg->what, "consume %s", topic);
    size_t n = CONSUME_GROUP__PARTITIONS;
    cg->next = malloc(n * sizeof *cg->next);
    cg->committed = malloc(n * sizeof *cg->committed);
    cg->assigned = calloc(n, sizeof *cg->assigned);
    cg->at_end = calloc(n, sizeof *cg->at_end);
    if (cg->next == NULL || cg->committed == NULL || cg->assigned == NULL ||
        cg->at_end == NULL) {
        consume_group_free(cg);
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, "out of memory");
        return RC_NOMEM;
    }
    for (size_t p = 0; p < n; p++) {
        cg->next[p] = CONSUME_GROUP__NONE;
        cg->committed[p] = CONSUME_GROUP__NONE;
    }
    return RC_OK;
}

void consume_group_free(struct consume_group *cg)
{
    free(cg->next);
    free(cg->committed);
    free(cg->assigned);
    free(cg->at_end);
    cg->next = NULL;
    cg->committed = NULL;
    cg->assigned = NULL;
    cg->at_end = NULL;
}

/* Whether tp is one of ours to track: our topic, a partition id in range
 * (another topic or id cannot come from a subscription to one topic). */
static bool tracked(const struct consume_group *cg,
                    const rd_kafka_topic_partition_t *tp)
{
    return strcmp(tp->topic, cg->topic) == 0 && tp->partition >= 0 &&
           tp->partition < CONSUME_GROUP__PARTITIONS;
}

bool consume_group_owns(const struct consume_group *cg, int32_t p)
{
    return p >= 0 && p < CONSUME_GROUP__PARTITIONS && cg->assigned[p];
}

void consume_group_processed(struct consume_group *cg,
                             const rd_kafka_message_t *m)
{
    ASSERT(consume_group_owns(cg, m->partition));
    cg->next[m->partition] = m->offset + 1;
}

bool consume_group_set_at_end(struct consume_group *cg, int32_t p,
                              bool at_end)
{
    if (consume_group_owns(cg, p) && cg->at_end[p] != at_end) {
        cg->at_end[p] = at_end;
        cg->n_at_end += at_end ? 1 : -1;
    }
    ASSERT(cg->n_at_end <= cg->n_assigned);
    return cg->n_assigned > 0 && cg->n_at_end == cg->n_assigned;
}

/* --- Commits ------------------------------------------------------------- */

struct consume_group__commit {
    struct consume_group *cg;
    int32_t n_failed;
};

/* Served by rd_kafka_commit_queue() itself (no queue given), on our
 * thread: records what the group now holds, prints the first failure. */
static void commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                      rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    (void)rk;
    struct consume_group__commit *c = opaque;
    for (int i = 0; offsets != NULL && i < offsets->cnt; i++) {
        const rd_kafka_topic_partition_t *tp = &offsets->elems[i];
        rd_kafka_resp_err_t perr =
            tp->err != RD_KAFKA_RESP_ERR_NO_ERROR ? tp->err : err;
        if (perr == RD_KAFKA_RESP_ERR_NO_ERROR && tracked(c->cg, tp)) {
            c->cg->committed[tp->partition] = tp->offset;
            continue;
        }
        if (perr != RD_KAFKA_RESP_ERR_NO_ERROR && c->n_failed++ == 0) {
            char what[sizeof c->cg->what + 64];
            struct kclient_error e;
            snprintf(what, sizeof what,
                     "%s: commit of partition %" PRId32 " at offset %" PRId64,
                     c->cg->what, tp->partition, tp->offset);
            kclient_error_set(&e, perr, NULL);
            kclient_error_print(what, &e);
        }
    }
}

int consume_group_commit(struct consume_group *cg)
{
    ASSERT(cg->rk != NULL);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        return RC_IO; /* not shown, so not processed: reported at exit */
    }
    rd_kafka_topic_partition_list_t *list =
        rd_kafka_topic_partition_list_new(16);
    for (int32_t p = 0; p < CONSUME_GROUP__PARTITIONS; p++) {
        if (cg->next[p] > cg->committed[p]) {
            rd_kafka_topic_partition_list_add(list, cg->topic, p)->offset =
                cg->next[p];
        }
    }
    if (list->cnt == 0) {
        rd_kafka_topic_partition_list_destroy(list);
        return RC_OK;
    }
    struct consume_group__commit c = {.cg = cg};
    rd_kafka_resp_err_t err =
        rd_kafka_commit_queue(cg->rk, list, NULL /* wait */, commit_cb, &c);
    rd_kafka_topic_partition_list_destroy(list);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && c.n_failed == 0) {
        char what[sizeof cg->what + 16];
        struct kclient_error e;
        snprintf(what, sizeof what, "%s: commit", cg->what);
        kclient_error_set(&e, err, NULL);
        kclient_error_print(what, &e);
        c.n_failed = 1;
    }
    return c.n_failed == 0 ? RC_OK : RC_IO;
}

/* --- Rebalances ---------------------------------------------------------- */

/* Notes parts as assigned to us (on) or taken away. A partition taken
 * away is forgotten: its next owner commits its offsets. */
static void mark(struct consume_group *cg,
                 const rd_kafka_topic_partition_list_t *parts, bool on)
{
    for (int i = 0; i < parts->cnt; i++) {
        const rd_kafka_topic_partition_t *tp = &parts->elems[i];
        if (!tracked(cg, tp)) {
            continue;
        }
        int32_t p = tp->partition;
        if (cg->at_end[p]) {
            cg->at_end[p] = false;
            cg->n_at_end--;
        }
        if (cg->assigned[p] != on) {
            cg->assigned[p] = on;
            cg->n_assigned += on ? 1 : -1;
        }
        if (!on) {
            cg->next[p] = CONSUME_GROUP__NONE;
            cg->committed[p] = CONSUME_GROUP__NONE;
        }
    }
    ASSERT(cg->n_assigned >= 0);
    ASSERT(cg->n_at_end >= 0);
}

static void report_assign_error(const struct consume_group *cg,
                                rd_kafka_resp_err_t err, const char *text)
{
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        return;
    }
    char what[sizeof cg->what + 16];
    struct kclient_error e;
    snprintf(what, sizeof what, "%s: rebalance", cg->what);
    kclient_error_set(&e, err, text);
    kclient_error_print(what, &e);
}

/* assign (or unassign) parts, as the group's rebalance protocol wants:
 * the whole assignment (EAGER) or the change (COOPERATIVE). */
static void apply(struct consume_group *cg, rd_kafka_t *rk,
                  rd_kafka_topic_partition_list_t *parts, bool assign)
{
    if (strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") != 0) {
        report_assign_error(cg, rd_kafka_assign(rk, assign ? parts : NULL),
                            NULL);
        return;
    }
    rd_kafka_error_t *error = assign
                                  ? rd_kafka_incremental_assign(rk, parts)
                                  : rd_kafka_incremental_unassign(rk, parts);
    if (error != NULL) {
        report_assign_error(cg, rd_kafka_error_code(error),
                            rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
    }
}

/* Runs inside our poll and close calls (see the header). */
static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    struct consume_group *cg = opaque;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        mark(cg, parts, true /* on */);
        apply(cg, rk, parts, true /* assign */);
        return;
    }
    if (err != RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
        /* librdkafka's advice: give up the whole assignment. */
        report_assign_error(cg, err, NULL);
        if (parts != NULL) {
            mark(cg, parts, false /* on */);
        }
        report_assign_error(cg, rd_kafka_assign(rk, NULL), NULL);
        return;
    }
    if (rd_kafka_assignment_lost(rk)) {
        cli_error("%s: the group took the partitions back (session timed "
                  "out?); their uncommitted offsets are dropped",
                  cg->what);
    } else if (consume_group_commit(cg) != RC_OK) {
        /* Printed; the partitions' next owner reads those records again. */
    }
    mark(cg, parts, false /* on */);
    apply(cg, rk, parts, false /* assign */);
}

int consume_group_configure(struct consume_group *cg, rd_kafka_conf_t *conf,
                            const struct consume_opts *o,
                            struct kclient_error *e)
{
    const char *strategy = o->assignment_strategy != NULL
                               ? o->assignment_strategy
                               : CONSUME_GROUP_STRATEGY_DEFAULT;
    int rv = kclient_conf_set(conf, "group.id", o->group, e);
    if (rv == RC_OK) {
        rv = kclient_conf_set(conf, "auto.offset.reset",
                              o->from_beginning ? "earliest" : "latest", e);
    }
    if (rv == RC_OK) {
        rv = kclient_conf_set(conf, "enable.auto.commit", "false", e);
    }
    if (rv == RC_OK) {
        rv = kclient_conf_set(conf, "partition.assignment.strategy", strategy,
                              e);
    }
    if (rv == RC_OK) {
        rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
        rd_kafka_conf_set_opaque(conf, cg);
    }
    return rv;
}
