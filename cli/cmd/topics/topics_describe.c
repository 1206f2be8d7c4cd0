/* `cairn topics describe` (cli/cmd/topics/topics_describe.h). */
#include "cli/cmd/topics/topics_describe.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "common/json.h"
#include "cli/util/table.h"
#include "cli/cmd/status/view.h"
#include "common/rc.h"

/* One topic as shown: its metadata, partitions by id, its configs. */
struct topic_view {
    const rd_kafka_metadata_topic_t *md;
    const rd_kafka_metadata_partition_t **parts; /* sorted by id */
    const rd_kafka_ConfigResource_t *configs;    /* NULL: none came */
    char id[23]; /* topic id as kafka-topics prints it; "" if none came */
};

struct describe {
    const rd_kafka_metadata_t *md;
    rd_kafka_event_t *configs_ev; /* owns what views[i].configs points at */
    struct topic_view *views;
    size_t n;
    bool missing; /* a named topic does not exist */
};

static int by_name(const void *a, const void *b)
{
    const struct topic_view *x = a;
    const struct topic_view *y = b;
    return strcmp(x->md->topic, y->md->topic);
}

static int by_id(const void *a, const void *b)
{
    const rd_kafka_metadata_partition_t *const *x = a;
    const rd_kafka_metadata_partition_t *const *y = b;
    return (*x)->id < (*y)->id ? -1 : (*x)->id > (*y)->id;
}

static const rd_kafka_metadata_topic_t *
find_topic(const rd_kafka_metadata_t *md, const char *name)
{
    for (int i = 0; i < md->topic_cnt; i++) {
        if (strcmp(md->topics[i].topic, name) == 0) {
            return &md->topics[i];
        }
    }
    return NULL;
}

/* The named topics in the order given (every topic, sorted, when none is
 * named); names that do not exist are reported and set d->missing. */
static int select_topics(struct describe *d, const struct topics_opts *o)
{
    size_t cap = o->n_names > 0 ? o->n_names : (size_t)d->md->topic_cnt;
    d->views = calloc(cap + 1, sizeof *d->views);
    if (d->views == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < cap; i++) {
        const rd_kafka_metadata_topic_t *t =
            o->n_names > 0 ? find_topic(d->md, o->names[i])
                           : &d->md->topics[i];
        if (t == NULL || t->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            struct kclient_error e;
            char what[META_TOPIC_NAME_BYTES_MAX + 32];
            snprintf(what, sizeof what, "topics describe %s", o->names[i]);
            kclient_error_set(
                &e,
                t != NULL ? t->err : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
                NULL);
            kclient_error_print(what, &e);
            d->missing = true;
            continue;
        }
        d->views[d->n++].md = t;
    }
    if (o->n_names == 0) {
        qsort(d->views, d->n, sizeof *d->views, by_name);
    }
    return RC_OK;
}

static int sort_partitions(struct topic_view *v)
{
    size_t n = (size_t)v->md->partition_cnt;
    v->parts = calloc(n + 1, sizeof *v->parts);
    if (v->parts == NULL) {
        return RC_NOMEM;
    }
    for (size_t p = 0; p < n; p++) {
        v->parts[p] = &v->md->partitions[p];
    }
    qsort(v->parts, n, sizeof *v->parts, by_id);
    return RC_OK;
}

/* --- DescribeConfigs ----------------------------------------------------- */

static void attach_configs(struct describe *d)
{
    size_t n = 0;
    const rd_kafka_ConfigResource_t **rs =
        rd_kafka_DescribeConfigs_result_resources(
            rd_kafka_event_DescribeConfigs_result(d->configs_ev), &n);
    for (size_t i = 0; i < n; i++) {
        const char *name = rd_kafka_ConfigResource_name(rs[i]);
        rd_kafka_resp_err_t err = rd_kafka_ConfigResource_error(rs[i]);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            struct kclient_error e;
            char what[META_TOPIC_NAME_BYTES_MAX + 32];
            snprintf(what, sizeof what, "topics describe %s", name);
            kclient_error_set(&e, err,
                              rd_kafka_ConfigResource_error_string(rs[i]));
            kclient_error_print(what, &e);
            d->missing = true;
            continue;
        }
        for (size_t k = 0; k < d->n; k++) {
            if (strcmp(d->views[k].md->topic, name) == 0) {
                d->views[k].configs = rs[i];
            }
        }
    }
}

/* DescribeConfigs of every selected topic (arg: the describe). */
static int send_describe_configs_cb(rd_kafka_t *rk,
                                    rd_kafka_AdminOptions_t *opts,
                                    rd_kafka_queue_t *q, const void *arg,
                                    struct kclient_error *e)
{
    const struct describe *d = arg;
    rd_kafka_ConfigResource_t **res = calloc(d->n + 1, sizeof *res);
    if (res == NULL) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, "out of memory");
        return RC_NOMEM;
    }
    for (size_t i = 0; i < d->n; i++) {
        res[i] = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC,
                                             d->views[i].md->topic);
    }
    rd_kafka_DescribeConfigs(rk, res, d->n, opts, q);
    rd_kafka_ConfigResource_destroy_array(res, d->n);
    free(res);
    return RC_OK;
}

/* One DescribeConfigs request for every selected topic. */
static int describe_configs(rd_kafka_t *rk, struct describe *d,
                            struct kclient_error *e)
{
    int rv =
        kclient_admin_call(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS,
                           &d->configs_ev, e, send_describe_configs_cb, d);
    if (rv == RC_OK) {
        attach_configs(d);
    }
    return rv;
}

/* The next config entry from *i on that the topic sets (a topic
 * override, not a broker setting or a default, as kafka-topics
 * --describe shows); NULL after the last. */
static const rd_kafka_ConfigEntry_t *
next_set_config(const struct topic_view *v, size_t *i)
{
    if (v->configs == NULL) {
        return NULL;
    }
    size_t n = 0;
    const rd_kafka_ConfigEntry_t **all =
        rd_kafka_ConfigResource_configs(v->configs, &n);
    for (; *i < n; (*i)++) {
        if (rd_kafka_ConfigEntry_source(all[*i]) ==
            RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG) {
            return all[(*i)++];
        }
    }
    return NULL;
}

/* --- Text ---------------------------------------------------------------- */

static void format_configs(const struct topic_view *v, char *out, size_t cap)
{
    size_t used = 0;
    size_t i = 0;
    const rd_kafka_ConfigEntry_t *c;
    out[0] = '\0';
    while (used < cap && (c = next_set_config(v, &i)) != NULL) {
        const char *value = rd_kafka_ConfigEntry_value(c);
        int w = snprintf(out + used, cap - used, "%s%s=%s",
                         used > 0 ? "," : "", rd_kafka_ConfigEntry_name(c),
                         value != NULL ? value : "");
        ASSERT(w >= 0);
        used += (size_t)w;
    }
}

static void topic_rows(struct table *t, const struct describe *d)
{
    table_cell(t, "NAME");
    table_cell(t, "TOPIC ID");
    table_cell(t, "PARTITIONS");
    table_cell(t, "REPLICATION");
    table_cell(t, "CONFIGS");
    table_end_row(t);
    for (size_t i = 0; i < d->n; i++) {
        const struct topic_view *v = &d->views[i];
        char name[META_TOPIC_NAME_BYTES_MAX + 1];
        char configs[TABLE_CELL_BYTES_MAX];
        char shown[TABLE_CELL_BYTES_MAX];
        cli_printable(v->md->topic, name, sizeof name);
        format_configs(v, configs, sizeof configs);
        cli_printable(configs, shown, sizeof shown);
        table_cell(t, "%s", name);
        table_cell(t, "%s", v->id[0] != '\0' ? v->id : "-");
        table_cell(t, "%d", v->md->partition_cnt);
        table_cell(t, "%d",
                   v->md->partition_cnt > 0 ? v->parts[0]->replica_cnt : 0);
        table_cell(t, "%s", shown[0] != '\0' ? shown : "-");
        table_end_row(t);
    }
}

static void partition_rows(struct table *t, const struct describe *d)
{
    table_cell(t, "TOPIC");
    table_cell(t, "PARTITION");
    table_cell(t, "LEADER");
    table_cell(t, "REPLICAS");
    table_cell(t, "ISR");
    table_end_row(t);
    for (size_t i = 0; i < d->n; i++) {
        char name[META_TOPIC_NAME_BYTES_MAX + 1];
        cli_printable(d->views[i].md->topic, name, sizeof name);
        for (int k = 0; k < d->views[i].md->partition_cnt; k++) {
            const rd_kafka_metadata_partition_t *p = d->views[i].parts[k];
            char replicas[VIEW_IDS_BYTES];
            char isr[VIEW_IDS_BYTES];
            view_format_ids(p->replicas, p->replica_cnt, replicas,
                            sizeof replicas);
            view_format_ids(p->isrs, p->isr_cnt, isr, sizeof isr);
            table_cell(t, "%s", name);
            table_cell(t, "%" PRId32, p->id);
            if (p->leader < 0) {
                table_cell(t, "none");
            } else {
                table_cell(t, "%" PRId32, p->leader);
            }
            table_cell(t, "%s", replicas);
            table_cell(t, "%s", isr);
            table_end_row(t);
        }
    }
}

static void describe_text(const struct describe *d)
{
    struct table t;
    fputs("TOPICS\n", stdout);
    if (d->n == 0) {
        fputs("(none)\n", stdout);
    } else {
        table_init(&t, stdout);
        topic_rows(&t, d);
        table_start_printing(&t);
        topic_rows(&t, d);
    }
    fputs("\nPARTITIONS\n", stdout);
    size_t n_partitions = 0;
    for (size_t i = 0; i < d->n; i++) {
        n_partitions += (size_t)d->views[i].md->partition_cnt;
    }
    if (n_partitions == 0) {
        fputs("(none)\n", stdout);
        return;
    }
    table_init(&t, stdout);
    partition_rows(&t, d);
    table_start_printing(&t);
    partition_rows(&t, d);
}

/* --- JSON ---------------------------------------------------------------- */

static void configs_json(struct json *j, const struct topic_view *v)
{
    json_object_begin(j);
    size_t i = 0;
    const rd_kafka_ConfigEntry_t *c;
    while ((c = next_set_config(v, &i)) != NULL) {
        const char *value = rd_kafka_ConfigEntry_value(c);
        json_key(j, rd_kafka_ConfigEntry_name(c));
        if (value != NULL) {
            json_string(j, value);
        } else {
            json_null(j);
        }
    }
    json_object_end(j);
}

static void topic_json(struct json *j, const struct topic_view *v)
{
    json_object_begin(j);
    json_key(j, "name");
    json_string(j, v->md->topic);
    json_key(j, "topic_id");
    if (v->id[0] != '\0') {
        json_string(j, v->id);
    } else {
        json_null(j);
    }
    json_key(j, "configs");
    configs_json(j, v);
    json_key(j, "partitions");
    json_array_begin(j);
    for (int k = 0; k < v->md->partition_cnt; k++) {
        const rd_kafka_metadata_partition_t *p = v->parts[k];
        json_object_begin(j);
        json_key(j, "partition");
        json_int(j, p->id);
        json_key(j, "leader");
        json_int(j, p->leader);
        json_key(j, "replicas");
        view_ids_json(j, p->replicas, p->replica_cnt);
        json_key(j, "isr");
        view_ids_json(j, p->isrs, p->isr_cnt);
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

static void describe_json(const struct describe *d)
{
    struct json j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_key(&j, "topics");
    json_array_begin(&j);
    for (size_t i = 0; i < d->n; i++) {
        topic_json(&j, &d->views[i]);
    }
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
}

/* --- Run ----------------------------------------------------------------- */

/* The selected topics' ids, shown as kafka-topics shows them. */
static void topic_ids(struct describe *d)
{
    const char **names = calloc(d->n + 1, sizeof *names);
    char(*ids)[23] = calloc(d->n + 1, sizeof *ids);
    for (size_t i = 0; names != NULL && ids != NULL && i < d->n; i++) {
        names[i] = d->views[i].md->topic;
    }
    if (names != NULL && ids != NULL && d->n > 0) {
        kclient_topic_ids(d->md, names, d->n, ids);
        for (size_t i = 0; i < d->n; i++) {
            memcpy(d->views[i].id, ids[i], sizeof ids[i]);
        }
    }
    free(names);
    free(ids);
}

/* Metadata, selection, partitions, ids and configs into d. */
static int gather(rd_kafka_t *rk, const struct topics_opts *o,
                  struct describe *d, struct kclient_error *e)
{
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1 /* all topics */, NULL,
                                                &d->md, KCLIENT_TIMEOUT_MS);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        kclient_error_set(e, err, NULL);
        return RC_IO;
    }
    int rv = select_topics(d, o);
    for (size_t i = 0; rv == RC_OK && i < d->n; i++) {
        rv = sort_partitions(&d->views[i]);
    }
    if (rv != RC_OK) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, "out of memory");
        return rv;
    }
    topic_ids(d);
    return d->n > 0 ? describe_configs(rk, d, e) : RC_OK;
}

int topics_describe_run(rd_kafka_t *rk, const struct topics_opts *o)
{
    struct describe d = {0};
    struct kclient_error e;
    int rc = CLI_EXIT_FAILED;
    if (gather(rk, o, &d, &e) != RC_OK) {
        kclient_error_print("topics describe", &e);
    } else if (o->json) {
        describe_json(&d);
        rc = d.missing ? CLI_EXIT_FAILED : CLI_EXIT_OK;
    } else {
        describe_text(&d);
        rc = d.missing ? CLI_EXIT_FAILED : CLI_EXIT_OK;
    }
    for (size_t i = 0; d.views != NULL && i < d.n; i++) {
        free(d.views[i].parts);
    }
    free(d.views);
    rd_kafka_event_destroy(d.configs_ev);
    if (d.md != NULL) {
        rd_kafka_metadata_destroy(d.md);
    }
    return rc;
}
