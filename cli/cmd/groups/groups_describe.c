/* `cairn groups describe` (cli/cmd/groups/groups_describe.h). */
#include "cli/cmd/groups/groups_describe.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "cli/client/group_offsets.h"
#include "common/json.h"
#include "cli/client/kclient.h"
#include "cli/util/table.h"
#include "cli/cmd/status/view.h"
#include "common/rc.h"

/* One partition the group has an offset for or has assigned. */
struct group_row {
    const char *topic; /* borrowed from an event */
    int32_t partition;
    int64_t committed;     /* < 0: none */
    int64_t hw;            /* < 0: unknown */
    const char *member_id; /* NULL: assigned to no member */
};

struct describe {
    const char *group;
    rd_kafka_event_t *desc_ev; /* owns desc */
    const rd_kafka_ConsumerGroupDescription_t *desc;
    struct group_offsets offsets;
    const rd_kafka_MemberDescription_t **members; /* by member id */
    size_t n_members;
    struct group_row *rows; /* by topic, partition */
    size_t n_rows;
    bool partial;                         /* something unknown (printed) */
    char what[TABLE_CELL_BYTES_MAX + 32]; /* "groups describe G" */
};

/* --- Requests ------------------------------------------------------------ */

/* DescribeConsumerGroups of one group (arg: its id). */
static int send_describe_cb(rd_kafka_t *rk, rd_kafka_AdminOptions_t *opts,
                            rd_kafka_queue_t *q, const void *arg,
                            struct kclient_error *e)
{
    (void)e;
    const char *group = arg;
    rd_kafka_DescribeConsumerGroups(rk, &group, 1, opts, q);
    return RC_OK;
}

/* DescribeGroups of the one group into d->desc. */
static int describe_group(rd_kafka_t *rk, struct describe *d,
                          struct kclient_error *e)
{
    int rv = kclient_admin_call(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS,
                                &d->desc_ev, e, send_describe_cb, d->group);
    if (rv != RC_OK) {
        return rv;
    }
    size_t n = 0;
    const rd_kafka_ConsumerGroupDescription_t **gs =
        rd_kafka_DescribeConsumerGroups_result_groups(
            rd_kafka_event_DescribeConsumerGroups_result(d->desc_ev), &n);
    if (n != 1) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR__BAD_MSG,
                          "unexpected answer from the cluster");
        return RC_IO;
    }
    const rd_kafka_error_t *err =
        rd_kafka_ConsumerGroupDescription_error(gs[0]);
    if (err != NULL) {
        kclient_error_set(e, rd_kafka_error_code(err),
                          rd_kafka_error_string(err));
        return RC_IO;
    }
    d->desc = gs[0];
    return RC_OK;
}

/* OffsetFetch of every partition of the group, from its coordinator
 * (cli/client/group_offsets.h says why not through librdkafka). */
static int fetch_offsets(struct describe *d, struct kclient_error *e)
{
    const rd_kafka_Node_t *coord =
        rd_kafka_ConsumerGroupDescription_coordinator(d->desc);
    if (coord == NULL) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE,
                          NULL);
        return RC_IO;
    }
    return group_offsets_fetch(rd_kafka_Node_host(coord),
                               (int32_t)rd_kafka_Node_port(coord), d->group,
                               KCLIENT_TIMEOUT_MS, &d->offsets, e);
}

/* --- Rows ---------------------------------------------------------------- */

static int member_cmp(const void *a, const void *b)
{
    const rd_kafka_MemberDescription_t *const *x = a;
    const rd_kafka_MemberDescription_t *const *y = b;
    return strcmp(rd_kafka_MemberDescription_consumer_id(*x),
                  rd_kafka_MemberDescription_consumer_id(*y));
}

static int row_cmp(const void *a, const void *b)
{
    const struct group_row *x = a;
    const struct group_row *y = b;
    int c = strcmp(x->topic, y->topic);
    if (c != 0) {
        return c;
    }
    return x->partition < y->partition ? -1 : x->partition > y->partition;
}

static const rd_kafka_topic_partition_list_t *
member_partitions(const rd_kafka_MemberDescription_t *m)
{
    const rd_kafka_MemberAssignment_t *a =
        rd_kafka_MemberDescription_assignment(m);
    return a != NULL ? rd_kafka_MemberAssignment_partitions(a) : NULL;
}

/* A row of each committed offset, then of each assigned partition. */
static void add_rows(struct describe *d)
{
    for (size_t i = 0; i < d->offsets.n; i++) {
        const struct group_offset *o = &d->offsets.v[i];
        if (o->error_code != 0) {
            char what[sizeof d->what + TABLE_CELL_BYTES_MAX];
            struct kclient_error e;
            snprintf(what, sizeof what, "%s: committed offset of %s-%" PRId32,
                     d->what, o->topic, o->partition);
            kclient_error_set(&e, (rd_kafka_resp_err_t)o->error_code, NULL);
            kclient_error_print(what, &e);
            d->partial = true;
        }
        d->rows[d->n_rows++] = (struct group_row){
            .topic = o->topic,
            .partition = o->partition,
            .committed = o->error_code == 0 ? o->committed : -1,
            .hw = -1};
    }
    for (size_t k = 0; k < d->n_members; k++) {
        const rd_kafka_topic_partition_list_t *ps =
            member_partitions(d->members[k]);
        for (int i = 0; ps != NULL && i < ps->cnt; i++) {
            d->rows[d->n_rows++] = (struct group_row){
                .topic = ps->elems[i].topic,
                .partition = ps->elems[i].partition,
                .committed = -1,
                .hw = -1,
                .member_id =
                    rd_kafka_MemberDescription_consumer_id(d->members[k])};
        }
    }
}

/* Sorts the rows and merges those of one partition. */
static void merge_rows(struct describe *d)
{
    qsort(d->rows, d->n_rows, sizeof *d->rows, row_cmp);
    size_t n = 0;
    for (size_t i = 0; i < d->n_rows; i++) {
        struct group_row *last = n > 0 ? &d->rows[n - 1] : NULL;
        if (last == NULL || row_cmp(last, &d->rows[i]) != 0) {
            d->rows[n++] = d->rows[i];
            continue;
        }
        if (d->rows[i].committed > last->committed) {
            last->committed = d->rows[i].committed;
        }
        if (last->member_id == NULL) {
            last->member_id = d->rows[i].member_id;
        }
    }
    d->n_rows = n;
}

/* Members sorted by id, and the rows. RC_OK or RC_NOMEM. */
static int build_rows(struct describe *d)
{
    d->n_members = rd_kafka_ConsumerGroupDescription_member_count(d->desc);
    d->members = calloc(d->n_members + 1, sizeof *d->members);
    if (d->members == NULL) {
        return RC_NOMEM;
    }
    size_t cap = d->offsets.n;
    for (size_t k = 0; k < d->n_members; k++) {
        d->members[k] = rd_kafka_ConsumerGroupDescription_member(d->desc, k);
        const rd_kafka_topic_partition_list_t *ps =
            member_partitions(d->members[k]);
        cap += ps != NULL ? (size_t)ps->cnt : 0;
    }
    qsort(d->members, d->n_members, sizeof *d->members, member_cmp);
    d->rows = calloc(cap + 1, sizeof *d->rows);
    if (d->rows == NULL) {
        return RC_NOMEM;
    }
    add_rows(d);
    ASSERT(d->n_rows == cap);
    merge_rows(d);
    return RC_OK;
}

/* Each row's high watermark; failures are printed and leave it
 * unknown. */
static void query_watermarks(rd_kafka_t *rk, struct describe *d)
{
    for (size_t i = 0; i < d->n_rows; i++) {
        struct group_row *r = &d->rows[i];
        int64_t low = 0;
        int64_t high = 0;
        rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
            rk, r->topic, r->partition, &low, &high, KCLIENT_TIMEOUT_MS);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            r->hw = high;
            continue;
        }
        char what[sizeof d->what + TABLE_CELL_BYTES_MAX];
        struct kclient_error e;
        snprintf(what, sizeof what, "%s: high watermark of %s-%" PRId32,
                 d->what, r->topic, r->partition);
        kclient_error_set(&e, err, NULL);
        kclient_error_print(what, &e);
        d->partial = true;
    }
}

static bool has_lag(const struct group_row *r)
{
    return r->committed >= 0 && r->hw >= 0;
}

static int64_t total_lag(const struct describe *d)
{
    int64_t sum = 0;
    for (size_t i = 0; i < d->n_rows; i++) {
        sum +=
            has_lag(&d->rows[i]) ? d->rows[i].hw - d->rows[i].committed : 0;
    }
    return sum;
}

/* --- Text ---------------------------------------------------------------- */

static const char *state_name(const struct describe *d)
{
    return rd_kafka_consumer_group_state_name(
        rd_kafka_ConsumerGroupDescription_state(d->desc));
}

/* "-" for NULL or "", else s made printable, in out. */
static const char *shown(const char *s, char *out, size_t cap)
{
    if (s == NULL || s[0] == '\0') {
        return "-";
    }
    cli_printable(s, out, cap);
    return out;
}

static void group_rows(struct table *t, const struct describe *d)
{
    char buf[TABLE_CELL_BYTES_MAX];
    const rd_kafka_Node_t *coord =
        rd_kafka_ConsumerGroupDescription_coordinator(d->desc);
    table_cell(t, "GROUP");
    table_cell(t, "STATE");
    table_cell(t, "PROTOCOL");
    table_cell(t, "COORDINATOR");
    table_cell(t, "MEMBERS");
    table_cell(t, "LAG");
    table_end_row(t);
    const char *protocol =
        rd_kafka_ConsumerGroupDescription_partition_assignor(d->desc);
    table_cell(t, "%s", shown(d->group, buf, sizeof buf));
    table_cell(t, "%s", state_name(d));
    table_cell(t, "%s", shown(protocol, buf, sizeof buf));
    if (coord != NULL) {
        table_cell(t, "%d", rd_kafka_Node_id(coord));
    } else {
        table_cell(t, "-");
    }
    table_cell(t, "%zu", d->n_members);
    table_cell(t, "%" PRId64, total_lag(d));
    table_end_row(t);
}

/* "topic:0,1,2;other:3" of a member's assignment, made printable. */
static void format_assignment(const rd_kafka_topic_partition_list_t *ps,
                              char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; ps != NULL && i < ps->cnt && used < cap; i++) {
        const rd_kafka_topic_partition_t *tp = &ps->elems[i];
        bool same = i > 0 && strcmp(tp->topic, ps->elems[i - 1].topic) == 0;
        int w = same ? snprintf(out + used, cap - used, ",%" PRId32,
                                tp->partition)
                     : snprintf(out + used, cap - used, "%s%s:%" PRId32,
                                i > 0 ? ";" : "", tp->topic, tp->partition);
        ASSERT(w >= 0);
        used += (size_t)w;
    }
    cli_printable(out, out, cap);
}

static void member_rows(struct table *t, const struct describe *d)
{
    table_cell(t, "MEMBER-ID");
    table_cell(t, "CLIENT-ID");
    table_cell(t, "HOST");
    table_cell(t, "ASSIGNMENT");
    table_end_row(t);
    for (size_t k = 0; k < d->n_members; k++) {
        const rd_kafka_MemberDescription_t *m = d->members[k];
        char buf[TABLE_CELL_BYTES_MAX];
        table_cell(t, "%s",
                   shown(rd_kafka_MemberDescription_consumer_id(m), buf,
                         sizeof buf));
        table_cell(
            t, "%s",
            shown(rd_kafka_MemberDescription_client_id(m), buf, sizeof buf));
        table_cell(
            t, "%s",
            shown(rd_kafka_MemberDescription_host(m), buf, sizeof buf));
        rd_kafka_topic_partition_list_t *ps = NULL;
        if (member_partitions(m) != NULL) {
            ps = rd_kafka_topic_partition_list_copy(member_partitions(m));
            rd_kafka_topic_partition_list_sort(ps, NULL, NULL);
        }
        format_assignment(ps, buf, sizeof buf);
        table_cell(t, "%s", buf[0] != '\0' ? buf : "-");
        if (ps != NULL) {
            rd_kafka_topic_partition_list_destroy(ps);
        }
        table_end_row(t);
    }
}

static void offset_cell(struct table *t, bool known, int64_t v)
{
    if (known) {
        table_cell(t, "%" PRId64, v);
    } else {
        table_cell(t, "-");
    }
}

static void offset_rows(struct table *t, const struct describe *d)
{
    table_cell(t, "TOPIC");
    table_cell(t, "PARTITION");
    table_cell(t, "COMMITTED");
    table_cell(t, "HW");
    table_cell(t, "LAG");
    table_cell(t, "MEMBER-ID");
    table_end_row(t);
    for (size_t i = 0; i < d->n_rows; i++) {
        const struct group_row *r = &d->rows[i];
        char buf[TABLE_CELL_BYTES_MAX];
        table_cell(t, "%s", shown(r->topic, buf, sizeof buf));
        table_cell(t, "%" PRId32, r->partition);
        offset_cell(t, r->committed >= 0, r->committed);
        offset_cell(t, r->hw >= 0, r->hw);
        offset_cell(t, has_lag(r), r->hw - r->committed);
        table_cell(t, "%s", shown(r->member_id, buf, sizeof buf));
        table_end_row(t);
    }
}

/* A table through rows_fn, measured then printed, or "(none)". */
static void print_table(const struct describe *d, size_t n,
                        void (*rows_fn)(struct table *t,
                                        const struct describe *d))
{
    if (n == 0) {
        fputs("(none)\n", stdout);
        return;
    }
    struct table t;
    table_init(&t, stdout);
    rows_fn(&t, d);
    table_start_printing(&t);
    rows_fn(&t, d);
}

static void describe_text(const struct describe *d)
{
    print_table(d, 1, group_rows);
    fputs("\nMEMBERS\n", stdout);
    print_table(d, d->n_members, member_rows);
    fputs("\nOFFSETS\n", stdout);
    print_table(d, d->n_rows, offset_rows);
}

/* --- JSON ---------------------------------------------------------------- */

static void member_json(struct json *j, const rd_kafka_MemberDescription_t *m)
{
    json_object_begin(j);
    json_key(j, "member_id");
    json_string(j, rd_kafka_MemberDescription_consumer_id(m));
    json_key(j, "group_instance_id");
    json_string_or_null(j, rd_kafka_MemberDescription_group_instance_id(m));
    json_key(j, "client_id");
    json_string(j, rd_kafka_MemberDescription_client_id(m));
    json_key(j, "host");
    json_string(j, rd_kafka_MemberDescription_host(m));
    json_key(j, "assignment");
    json_array_begin(j);
    const rd_kafka_topic_partition_list_t *ps = member_partitions(m);
    for (int i = 0; ps != NULL && i < ps->cnt; i++) {
        json_object_begin(j);
        json_key(j, "topic");
        json_string(j, ps->elems[i].topic);
        json_key(j, "partition");
        json_int(j, ps->elems[i].partition);
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

static void row_json(struct json *j, const struct group_row *r)
{
    json_object_begin(j);
    json_key(j, "topic");
    json_string(j, r->topic);
    json_key(j, "partition");
    json_int(j, r->partition);
    json_key(j, "committed");
    json_int_or_null(j, r->committed >= 0, r->committed);
    json_key(j, "hw");
    json_int_or_null(j, r->hw >= 0, r->hw);
    json_key(j, "lag");
    json_int_or_null(j, has_lag(r), r->hw - r->committed);
    json_key(j, "member_id");
    json_string_or_null(j, r->member_id);
    json_object_end(j);
}

static void describe_json(const struct describe *d)
{
    const rd_kafka_Node_t *coord =
        rd_kafka_ConsumerGroupDescription_coordinator(d->desc);
    struct json j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "group");
    json_string(&j, d->group);
    json_key(&j, "state");
    json_string(&j, state_name(d));
    json_key(&j, "protocol");
    json_string_or_null(
        &j, rd_kafka_ConsumerGroupDescription_partition_assignor(d->desc));
    json_key(&j, "simple");
    json_bool(&j, rd_kafka_ConsumerGroupDescription_is_simple_consumer_group(
                      d->desc) != 0);
    json_key(&j, "coordinator");
    json_int_or_null(&j, coord != NULL,
                     coord != NULL ? rd_kafka_Node_id(coord) : -1);
    json_key(&j, "lag");
    json_int(&j, total_lag(d));
    json_key(&j, "members");
    json_array_begin(&j);
    for (size_t k = 0; k < d->n_members; k++) {
        member_json(&j, d->members[k]);
    }
    json_array_end(&j);
    json_key(&j, "offsets");
    json_array_begin(&j);
    for (size_t i = 0; i < d->n_rows; i++) {
        row_json(&j, &d->rows[i]);
    }
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
}

/* --- Run ----------------------------------------------------------------- */

/* Kafka describes a group it does not know as Dead, without an error. */
static bool is_missing(const struct describe *d)
{
    return rd_kafka_ConsumerGroupDescription_state(d->desc) ==
               RD_KAFKA_CONSUMER_GROUP_STATE_DEAD &&
           d->n_members == 0 && d->n_rows == 0;
}

/* Description, offsets, rows and watermarks into d. */
static int gather(rd_kafka_t *rk, struct describe *d, struct kclient_error *e)
{
    int rv = describe_group(rk, d, e);
    if (rv == RC_OK) {
        rv = fetch_offsets(d, e);
    }
    if (rv == RC_OK && build_rows(d) != RC_OK) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, "out of memory");
        rv = RC_NOMEM;
    }
    if (rv == RC_OK && is_missing(d)) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND,
                          "the group does not exist");
        rv = RC_NOT_FOUND;
    }
    if (rv == RC_OK) {
        query_watermarks(rk, d);
    }
    return rv;
}

int groups_describe_run(rd_kafka_t *rk, const char *group, bool json)
{
    struct describe d = {.group = group};
    char name[TABLE_CELL_BYTES_MAX];
    cli_printable(group, name, sizeof name);
    snprintf(d.what, sizeof d.what, "groups describe %s", name);
    struct kclient_error e;
    int rc = CLI_EXIT_FAILED;
    if (gather(rk, &d, &e) != RC_OK) {
        kclient_error_print(d.what, &e);
    } else {
        if (json) {
            describe_json(&d);
        } else {
            describe_text(&d);
        }
        rc = d.partial ? CLI_EXIT_FAILED : CLI_EXIT_OK;
    }
    free(d.rows);
    free(d.members);
    group_offsets_free(&d.offsets);
    rd_kafka_event_destroy(d.desc_ev); /* NULL is allowed */
    return rc;
}
