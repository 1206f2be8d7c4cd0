/* Active-controller planning (controller/plan.h): the record list and
 * its helpers, heartbeats, registration, CreateTopics, DeleteTopics,
 * AlterPartition and producer ids. Leader election and fencing are in
 * controller/plan_election.c. Pure and deterministic; loop thread of the
 * active controller. */
#include "controller/plan.h"
#include "controller/plan_configs.h"
#include "controller/plan_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/limits.h"
#include "common/rc.h"

#define PLAN__RECORDS_MAX ((size_t)META_BATCH_RECORDS_MAX)
#define PLAN__RECORDS_FIRST_CAP 16u

_Static_assert(META_PARTITIONS_MAX + 2 <= META_BATCH_RECORDS_MAX,
               "a topic with the most partitions fits in one batch");
_Static_assert(PLAN_NO_BROKER == META_NO_LEADER,
               "no broker and no leader are both -1");

/* --- Record list -------------------------------------------------------- */

void plan_records_init(struct plan_records *r)
{
    *r = (struct plan_records){0};
}

void plan_records_free(struct plan_records *r)
{
    free(r->recs);
    free(r->rules);
    plan_records_init(r);
}

void plan_records_clear(struct plan_records *r)
{
    r->n = 0;
    r->more = false;
}

int plan_records_push(struct plan_records *r, const struct meta_record *rec)
{
    ASSERT(r->n <= r->cap);
    if (r->n == r->cap) {
        if (r->cap >= PLAN__RECORDS_MAX) {
            return RC_FULL;
        }
        size_t cap = r->cap == 0 ? PLAN__RECORDS_FIRST_CAP : r->cap * 2;
        if (cap > PLAN__RECORDS_MAX) {
            cap = PLAN__RECORDS_MAX;
        }
        struct meta_record *recs = realloc(r->recs, cap * sizeof *recs);
        if (recs == NULL) {
            return RC_NOMEM;
        }
        r->recs = recs;
        char(*rules)[PLAN_RULE_BYTES] = realloc(r->rules,
                                                cap * sizeof *rules);
        if (rules == NULL) {
            return RC_NOMEM; /* recs grew alone: cap stays, both hold it */
        }
        r->rules = rules;
        r->cap = cap;
    }
    r->rules[r->n][0] = '\0';
    r->recs[r->n++] = *rec;
    return RC_OK;
}

void plan_records_rule(struct plan_records *r, const char *fmt, ...)
{
    ASSERT(r->n > 0);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->rules[r->n - 1], PLAN_RULE_BYTES, fmt, ap);
    va_end(ap);
}

size_t plan_room(const struct plan_records *r)
{
    ASSERT(r->n <= PLAN__RECORDS_MAX);
    return PLAN__RECORDS_MAX - r->n;
}

int plan_undo_on_error(struct plan_records *r, int rv, size_t n0,
                       bool more0)
{
    if (rv != RC_OK) {
        r->n = n0;
        r->more = more0;
    }
    return rv;
}

/* --- Replica sets ------------------------------------------------------- */

bool plan_set_same_members(const struct meta_replica_set *a,
                           const struct meta_replica_set *b)
{
    if (a->n != b->n) {
        return false;
    }
    for (int32_t i = 0; i < a->n; i++) {
        if (!meta_replica_set_contains(b, a->ids[i])) {
            return false;
        }
    }
    return true;
}

void plan_set_without(const struct meta_replica_set *s, int32_t id,
                      struct meta_replica_set *out)
{
    out->n = 0;
    for (int32_t i = 0; i < s->n; i++) {
        if (s->ids[i] != id) {
            out->ids[out->n++] = s->ids[i];
        }
    }
}

void plan_set_single(int32_t id, struct meta_replica_set *out)
{
    memset(out, 0, sizeof *out);
    out->n = 1;
    out->ids[0] = id;
}

/* --- Records ------------------------------------------------------------ */

int plan_push_broker_change(struct plan_records *out,
                            const struct meta_broker *b, int8_t fenced,
                            int8_t in_controlled_shutdown)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_BROKER_CHANGE;
    rec.u.broker_change.broker_id = b->id;
    rec.u.broker_change.broker_epoch = b->epoch;
    rec.u.broker_change.fenced = fenced;
    rec.u.broker_change.in_controlled_shutdown = in_controlled_shutdown;
    return plan_records_push(out, &rec);
}

void plan_partition_change(struct meta_record *rec,
                           const struct meta_topic *t,
                           const struct meta_partition *p,
                           const struct meta_replica_set *isr,
                           int32_t leader)
{
    memset(rec, 0, sizeof *rec);
    rec->type = META_REC_PARTITION_CHANGE;
    rec->u.partition_change.topic_id = t->id;
    rec->u.partition_change.partition = p->id;
    rec->u.partition_change.isr_changed = isr != NULL;
    if (isr != NULL) {
        rec->u.partition_change.isr = *isr;
    }
    rec->u.partition_change.leader = leader;
}

/* --- Heartbeat ---------------------------------------------------------- */

/* Controlled shutdown of unfenced broker b: move what it leads and leave
 * the ISRs; when nothing is left to move, fence it and let it go. */
static int plan_shutdown(const struct meta_image *img,
                         const struct meta_broker *b, bool unclean_default,
                         struct plan_records *out,
                         struct plan_heartbeat_result *res)
{
    if (plan_room(out) == 0) {
        out->more = true;
        return RC_OK;
    }
    size_t n0 = out->n;
    int rv;
    if (!b->in_controlled_shutdown) {
        rv = plan_push_broker_change(out, b, 0, 1 /* in shutdown */);
        if (rv != RC_OK) {
            return rv;
        }
    }
    size_t n_changes;
    bool complete;
    rv = plan_evict(img, b->id, unclean_default, 0 /* reserve */, out,
                    &n_changes, &complete);
    if (rv != RC_OK || n_changes > 0 || !complete) {
        return rv;
    }
    /* Nothing left to move: no need to enter controlled shutdown first. */
    out->n = n0;
    rv = plan_push_broker_change(out, b, 1 /* fenced */, 0);
    if (rv == RC_OK) {
        res->is_fenced = true;
        res->should_shut_down = true;
    }
    return rv;
}

static int plan_heartbeat_fenced(const struct meta_image *img,
                                 const struct meta_broker *b,
                                 const struct plan_heartbeat_req *req,
                                 bool unclean_default,
                                 struct plan_records *out,
                                 struct plan_heartbeat_result *res)
{
    res->is_fenced = true;
    if (req->want_shut_down || b->in_controlled_shutdown) {
        /* A broker fenced at the end of a controlled shutdown stays out
         * until it registers again. */
        res->should_shut_down = true;
        return RC_OK;
    }
    if (req->want_fence || !res->is_caught_up) {
        return RC_OK;
    }
    bool unfenced;
    int rv = plan_unfence(img, b, unclean_default, out, &unfenced);
    res->is_fenced = !unfenced;
    return rv;
}

static int plan_heartbeat_unfenced(const struct meta_image *img,
                                   const struct meta_broker *b,
                                   const struct plan_heartbeat_req *req,
                                   bool unclean_default,
                                   struct plan_records *out,
                                   struct plan_heartbeat_result *res)
{
    if (req->want_fence) {
        bool fenced;
        int rv = plan_fence(img, b, unclean_default, out, &fenced);
        res->is_fenced = fenced;
        res->should_shut_down = fenced && req->want_shut_down;
        return rv;
    }
    if (req->want_shut_down || b->in_controlled_shutdown) {
        return plan_shutdown(img, b, unclean_default, out, res);
    }
    return RC_OK;
}

int plan_heartbeat(const struct meta_image *img,
                   const struct plan_heartbeat_req *req, bool unclean_default,
                   struct plan_records *out, struct plan_heartbeat_result *res)
{
    *res = (struct plan_heartbeat_result){.error = KAFKA_ERROR_NONE};
    const struct meta_broker *b = meta_image_broker(img, req->broker_id);
    if (b == NULL) {
        res->error = KAFKA_ERROR_BROKER_ID_NOT_REGISTERED;
        return RC_OK;
    }
    if (b->epoch != req->broker_epoch) {
        res->error = KAFKA_ERROR_STALE_BROKER_EPOCH;
        return RC_OK;
    }
    res->is_caught_up = req->current_metadata_offset >= b->epoch;

    size_t n0 = out->n;
    bool more0 = out->more;
    int rv;
    if (b->fenced) {
        rv = plan_heartbeat_fenced(img, b, req, unclean_default, out, res);
    } else {
        rv = plan_heartbeat_unfenced(img, b, req, unclean_default, out, res);
    }
    if (rv != RC_OK) {
        *res = (struct plan_heartbeat_result){
            .error = KAFKA_ERROR_UNKNOWN_SERVER_ERROR};
    }
    return plan_undo_on_error(out, rv, n0, more0);
}

/* --- Registration ------------------------------------------------------- */

int plan_register_broker(const struct meta_image *img,
                         const struct meta_rec_register_broker *req,
                         bool other_incarnation_alive,
                         struct plan_records *out, int16_t *error_out,
                         int64_t *epoch_out)
{
    *error_out = KAFKA_ERROR_NONE;
    *epoch_out = -1;
    if (req->broker_id < 0) {
        *error_out = KAFKA_ERROR_INVALID_REQUEST;
        return RC_OK;
    }
    const struct meta_broker *b = meta_image_broker(img, req->broker_id);
    if (b != NULL && meta_uuid_eq(&b->incarnation, &req->incarnation)) {
        *epoch_out = b->epoch; /* a retry of the registration we have */
        return RC_OK;
    }
    if (b != NULL && other_incarnation_alive) {
        *error_out = KAFKA_ERROR_DUPLICATE_BROKER_REGISTRATION;
        return RC_OK;
    }
    if (b == NULL && img->n_brokers >= META_BROKERS_MAX) {
        *error_out = KAFKA_ERROR_INVALID_REQUEST;
        return RC_OK;
    }
    if (b != NULL && !b->fenced) {
        /* The old incarnation died without being fenced (its session
         * lapsed a moment ago). Its partitions must not pass to the new
         * one at their old leader epochs: it may have lost what it had
         * not synced, and its followers would keep what they fetched of
         * that. Fence it first, as Kafka's handleBrokerUncleanShutdown
         * does: leaders move with new epochs, and the new incarnation
         * comes back as a follower. */
        int rv = plan_fence_broker(img, req->broker_id, false, out);
        if (rv != RC_OK || out->more) {
            /* Not all of it fits this batch: the broker asks again. */
            *error_out = rv == RC_OK
                             ? KAFKA_ERROR_DUPLICATE_BROKER_REGISTRATION
                             : KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
            return rv;
        }
    }
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_REGISTER_BROKER;
    rec.u.register_broker = *req;
    int rv = plan_records_push(out, &rec);
    if (rv != RC_OK) {
        *error_out = KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
    }
    return rv;
}

/* --- Duplicate names in one request ------------------------------------- */

struct plan__name_ref {
    const char *name;
    size_t index;
};

static int plan_name_ref_cmp(const void *a, const void *b)
{
    const struct plan__name_ref *x = a;
    const struct plan__name_ref *y = b;
    int c = strcmp(x->name, y->name);
    if (c != 0) {
        return c;
    }
    return x->index < y->index ? -1 : x->index > y->index;
}

int plan_mark_duplicates(size_t n, const void *arg,
                                plan_name_at_cb name_at, bool **dup_out)
{
    *dup_out = NULL;
    if (n == 0) {
        return RC_OK;
    }
    bool *dup = calloc(n, sizeof *dup);
    struct plan__name_ref *refs = malloc(n * sizeof *refs);
    if (dup == NULL || refs == NULL) {
        free(dup);
        free(refs);
        return RC_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = name_at(arg, i);
        refs[i] = (struct plan__name_ref){name != NULL ? name : "", i};
    }
    qsort(refs, n, sizeof *refs, plan_name_ref_cmp);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(refs[i - 1].name, refs[i].name) == 0) {
            dup[refs[i - 1].index] = true;
            dup[refs[i].index] = true;
        }
    }
    free(refs);
    *dup_out = dup;
    return RC_OK;
}

static const char *plan_topic_req_name_cb(const void *arg, size_t i)
{
    const struct plan_topic_req *topics = arg;
    return topics[i].name;
}

static const char *plan_name_list_cb(const void *arg, size_t i)
{
    const char *const *names = arg;
    return names[i];
}

/* --- CreateTopics ------------------------------------------------------- */

/* Validates one topic that is not a duplicate in its request; fills the
 * resolved counts of res. */
static int16_t plan_check_topic(const struct meta_image *img,
                                const struct plan_topic_req *t,
                                const struct plan_topic_defaults *defaults,
                                size_t n_eligible,
                                struct plan_topic_result *res)
{
    if (!meta_topic_name_valid(t->name)) {
        return KAFKA_ERROR_INVALID_TOPIC_EXCEPTION;
    }
    if (meta_image_topic(img, t->name) != NULL) {
        return KAFKA_ERROR_TOPIC_ALREADY_EXISTS;
    }
    int32_t np = t->num_partitions == -1 ? defaults->num_partitions
                                         : t->num_partitions;
    if (np <= 0 || np > META_PARTITIONS_MAX) {
        return KAFKA_ERROR_INVALID_PARTITIONS;
    }
    int32_t rf = t->replication_factor == -1 ? defaults->replication_factor
                                             : t->replication_factor;
    if (rf <= 0 || rf > META_REPLICAS_MAX || (size_t)rf > n_eligible) {
        return KAFKA_ERROR_INVALID_REPLICATION_FACTOR;
    }
    int16_t err = plan_topic_configs_check(t->configs, t->n_configs,
                                           res->message);
    if (err != KAFKA_ERROR_NONE) {
        return err;
    }
    res->num_partitions = np;
    res->replication_factor = rf;
    return KAFKA_ERROR_NONE;
}

size_t plan_eligible_brokers(const struct meta_image *img,
                                    int32_t ids[META_BROKERS_MAX])
{
    size_t n = 0;
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct meta_broker *b = &img->brokers[i];
        ASSERT(i == 0 || img->brokers[i - 1].id < b->id);
        if (!b->fenced && !b->in_controlled_shutdown) {
            ASSERT(n < META_BROKERS_MAX);
            ids[n++] = b->id;
        }
    }
    return n;
}

static int plan_push_topic_head(const struct plan_topic_req *t,
                                struct plan_records *out)
{
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_TOPIC;
    strcpy(rec.u.topic.name, t->name); /* checked: <= 249 bytes */
    rec.u.topic.id = t->id;
    int rv = plan_records_push(out, &rec);
    for (size_t i = 0; rv == RC_OK && i < t->n_configs; i++) {
        memset(&rec, 0, sizeof rec);
        rec.type = META_REC_CONFIG;
        rec.u.config.resource_type = META_RESOURCE_TOPIC;
        strcpy(rec.u.config.resource_name, t->name);
        strcpy(rec.u.config.name, t->configs[i].name); /* a known name */
        rec.u.config.has_value = true;
        strcpy(rec.u.config.value, t->configs[i].value); /* checked */
        rv = plan_records_push(out, &rec);
    }
    return rv;
}

/* Topic, Configs and Partitions of a validated topic; partition p's
 * replicas are eligible[(start + p + k) % n_eligible], k < RF. */
static int plan_push_topic(const struct meta_image *img,
                           const struct plan_topic_req *t,
                           const struct plan_topic_result *res,
                           const int32_t *eligible, size_t n_eligible,
                           size_t start, struct plan_records *out)
{
    ASSERT(!meta_uuid_is_zero(&t->id));
    ASSERT(meta_image_topic_by_id(img, &t->id) == NULL);
    int rv = plan_push_topic_head(t, out);
    struct meta_record rec;
    for (int32_t p = 0; rv == RC_OK && p < res->num_partitions; p++) {
        memset(&rec, 0, sizeof rec);
        rec.type = META_REC_PARTITION;
        struct meta_rec_partition *pr = &rec.u.partition;
        pr->topic_id = t->id;
        pr->partition = p;
        pr->replicas.n = res->replication_factor;
        for (int32_t k = 0; k < res->replication_factor; k++) {
            size_t at = (start % n_eligible + (size_t)p + (size_t)k) %
                        n_eligible;
            pr->replicas.ids[k] = eligible[at];
        }
        pr->isr = pr->replicas;
        pr->leader = pr->replicas.ids[0];
        pr->leader_epoch = 0;
        pr->partition_epoch = 0;
        rv = plan_records_push(out, &rec);
    }
    return rv;
}

/* Accepts or refuses a valid topic by the batch's room and the topic
 * bound; *planned counts the records this request will append. */
static int16_t plan_admit_topic(const struct meta_image *img,
                                const struct plan_topic_req *t,
                                const struct plan_topic_result *res,
                                size_t created, size_t *planned)
{
    if (img->n_topics + created >= META_TOPICS_MAX) {
        return KAFKA_ERROR_POLICY_VIOLATION;
    }
    size_t need = 1 + t->n_configs + (size_t)res->num_partitions;
    if (PLAN__RECORDS_MAX - *planned < need) {
        return KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED;
    }
    *planned += need;
    return KAFKA_ERROR_NONE;
}

int plan_create_topics(const struct meta_image *img,
                       const struct plan_topic_req *topics, size_t n_topics,
                       const struct plan_topic_defaults *defaults,
                       bool validate_only, struct plan_records *out,
                       struct plan_topic_result *results)
{
    size_t n0 = out->n;
    bool more0 = out->more;
    bool *dup;
    int rv = plan_mark_duplicates(n_topics, topics, plan_topic_req_name_cb,
                                  &dup);
    if (rv != RC_OK) {
        return rv;
    }
    int32_t eligible[META_BROKERS_MAX];
    size_t n_eligible = plan_eligible_brokers(img, eligible);
    size_t planned = out->n;
    size_t created = 0;
    for (size_t i = 0; rv == RC_OK && i < n_topics; i++) {
        const struct plan_topic_req *t = &topics[i];
        struct plan_topic_result *res = &results[i];
        *res = (struct plan_topic_result){.error = KAFKA_ERROR_NONE};
        if (dup[i] && meta_topic_name_valid(t->name)) {
            res->error = KAFKA_ERROR_INVALID_REQUEST;
        } else {
            /* An illegal name is INVALID_TOPIC_EXCEPTION however often it
             * comes: brokers forward every name they refuse as "". */
            res->error = plan_check_topic(img, t, defaults, n_eligible, res);
        }
        if (res->error == KAFKA_ERROR_NONE) {
            res->error = plan_admit_topic(img, t, res, created, &planned);
        }
        if (res->error != KAFKA_ERROR_NONE) {
            res->num_partitions = 0;
            res->replication_factor = 0;
            continue;
        }
        if (!validate_only) {
            rv = plan_push_topic(img, t, res, eligible, n_eligible,
                                 img->n_topics + created, out);
        }
        created++;
    }
    free(dup);
    return plan_undo_on_error(out, rv, n0, more0);
}

/* --- DeleteTopics ------------------------------------------------------- */

int plan_delete_topics(const struct meta_image *img, const char *const *names,
                       size_t n_names, struct plan_records *out,
                       int16_t *errors)
{
    size_t n0 = out->n;
    bool more0 = out->more;
    bool *dup;
    int rv = plan_mark_duplicates(n_names, names, plan_name_list_cb, &dup);
    if (rv != RC_OK) {
        return rv;
    }
    for (size_t i = 0; rv == RC_OK && i < n_names; i++) {
        const struct meta_topic *t =
            names[i] != NULL ? meta_image_topic(img, names[i]) : NULL;
        if (dup[i]) {
            errors[i] = KAFKA_ERROR_INVALID_REQUEST;
        } else if (t == NULL) {
            errors[i] = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
        } else if (plan_room(out) == 0) {
            errors[i] = KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED;
        } else {
            struct meta_record rec;
            memset(&rec, 0, sizeof rec);
            rec.type = META_REC_REMOVE_TOPIC;
            rec.u.remove_topic.topic_id = t->id;
            rv = plan_records_push(out, &rec);
            errors[i] = KAFKA_ERROR_NONE;
        }
    }
    free(dup);
    return plan_undo_on_error(out, rv, n0, more0);
}

/* --- AlterPartition ----------------------------------------------------- */

/* Who may ask and on which version of the partition. */
static int16_t plan_alter_check_sender(const struct meta_image *img,
                                       const struct plan_alter_partition_req *r,
                                       const struct meta_topic **t_out,
                                       const struct meta_partition **p_out)
{
    const struct meta_broker *b = meta_image_broker(img, r->broker_id);
    if (b == NULL || b->epoch != r->broker_epoch) {
        return KAFKA_ERROR_STALE_BROKER_EPOCH;
    }
    const struct meta_topic *t = meta_image_topic_by_id(img, &r->topic_id);
    const struct meta_partition *p =
        meta_image_partition(img, &r->topic_id, r->partition);
    if (t == NULL || p == NULL) {
        return KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    if (p->leader != r->broker_id) {
        return KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
    }
    if (r->leader_epoch < p->leader_epoch) {
        return KAFKA_ERROR_FENCED_LEADER_EPOCH;
    }
    if (r->leader_epoch > p->leader_epoch) {
        return KAFKA_ERROR_UNKNOWN_LEADER_EPOCH;
    }
    if (r->partition_epoch != p->partition_epoch) {
        return KAFKA_ERROR_INVALID_UPDATE_VERSION;
    }
    *t_out = t;
    *p_out = p;
    return KAFKA_ERROR_NONE;
}

/* The proposed ISR: shape, then eligibility of added members. */
static int16_t plan_alter_check_isr(const struct meta_image *img,
                                    const struct plan_alter_partition_req *r,
                                    const struct meta_partition *p,
                                    struct meta_replica_set *isr_out)
{
    if (r->n_new_isr == 0 || r->n_new_isr > META_REPLICAS_MAX) {
        return KAFKA_ERROR_INVALID_REQUEST;
    }
    memset(isr_out, 0, sizeof *isr_out);
    for (size_t i = 0; i < r->n_new_isr; i++) {
        int32_t id = r->new_isr[i];
        if (!meta_replica_set_contains(&p->replicas, id) ||
            meta_replica_set_contains(isr_out, id)) {
            return KAFKA_ERROR_INVALID_REQUEST;
        }
        isr_out->ids[isr_out->n++] = id;
    }
    if (!meta_replica_set_contains(isr_out, p->leader)) {
        return KAFKA_ERROR_INVALID_REQUEST;
    }
    for (int32_t i = 0; i < isr_out->n; i++) {
        int32_t id = isr_out->ids[i];
        if (!meta_replica_set_contains(&p->isr, id) &&
            !plan_broker_acceptable(img, id, PLAN_NO_BROKER,
                                    PLAN_NO_BROKER)) {
            return KAFKA_ERROR_INELIGIBLE_REPLICA;
        }
    }
    return KAFKA_ERROR_NONE;
}

int plan_alter_partition(const struct meta_image *img,
                         const struct plan_alter_partition_req *req,
                         struct plan_records *out, int16_t *error_out)
{
    const struct meta_topic *t = NULL;
    const struct meta_partition *p = NULL;
    *error_out = plan_alter_check_sender(img, req, &t, &p);
    if (*error_out != KAFKA_ERROR_NONE) {
        return RC_OK;
    }
    struct meta_replica_set isr;
    *error_out = plan_alter_check_isr(img, req, p, &isr);
    if (*error_out != KAFKA_ERROR_NONE ||
        plan_set_same_members(&isr, &p->isr)) {
        return RC_OK;
    }
    struct meta_record rec;
    char rule[PLAN_RULE_BYTES] = "";
    if (!plan_reassign_complete(img, t, p, &isr, &rec, rule)) {
        plan_partition_change(&rec, t, p, &isr, META_LEADER_UNCHANGED);
    }
    int rv = plan_records_push(out, &rec);
    if (rv == RC_OK && rule[0] != '\0') {
        plan_records_rule(out, "%s", rule);
    }
    if (rv != RC_OK) {
        *error_out = KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
    }
    return rv;
}

/* --- Producer ids ------------------------------------------------------- */

int plan_allocate_producer_ids(const struct meta_image *img,
                               int32_t broker_id, int64_t broker_epoch,
                               struct plan_records *out, int16_t *error_out,
                               int64_t *first_id_out)
{
    *first_id_out = -1;
    const struct meta_broker *b = meta_image_broker(img, broker_id);
    if (b == NULL || b->epoch != broker_epoch) {
        *error_out = KAFKA_ERROR_STALE_BROKER_EPOCH;
        return RC_OK;
    }
    int64_t first = img->next_producer_id;
    if (first < 0 || first > INT64_MAX - PLAN_PRODUCER_ID_BLOCK_SIZE) {
        *error_out = KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
        return RC_OK;
    }
    struct meta_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = META_REC_PRODUCER_IDS;
    rec.u.producer_ids.broker_id = broker_id;
    rec.u.producer_ids.broker_epoch = broker_epoch;
    rec.u.producer_ids.next_producer_id = first + PLAN_PRODUCER_ID_BLOCK_SIZE;
    int rv = plan_records_push(out, &rec);
    if (rv != RC_OK) {
        *error_out = KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
        return rv;
    }
    *error_out = KAFKA_ERROR_NONE;
    *first_id_out = first;
    return RC_OK;
}
