/* Text and JSON of metadata images (cli/cmd/status/view.h). */
#include "cli/cmd/status/view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "cli/util/table.h"
#include "common/rc.h"

/* "1:5,2:5,3:-": 16 ids, colons, offsets of up to 20 characters, commas
 * (a table cell cuts what is beyond TABLE_CELL_BYTES_MAX). */
#define VIEW__END_OFFSETS_BYTES (META_REPLICAS_MAX * 33 + 1)

/* "UNDER-REPLICATED,UNDER-MIN-ISR,AT-MIN-ISR,OFFLINE" and room. */
#define VIEW__FLAGS_BYTES 64

static int topic_cmp(const void *a, const void *b)
{
    const struct meta_topic *const *x = a;
    const struct meta_topic *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

int view_topics_sorted(const struct meta_image *img,
                       const struct meta_topic ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (img->n_topics == 0) {
        return RC_OK;
    }
    const struct meta_topic **ts = malloc(img->n_topics * sizeof *ts);
    if (ts == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < img->n_topics; i++) {
        ts[i] = &img->topics[i];
    }
    qsort(ts, img->n_topics, sizeof *ts, topic_cmp);
    *out = ts;
    *n = img->n_topics;
    return RC_OK;
}

void view_format_ids(const int32_t *ids, int32_t n, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int32_t i = 0; i < n && used < cap; i++) {
        int w = snprintf(out + used, cap - used, "%s%" PRId32,
                         i > 0 ? "," : "", ids[i]);
        ASSERT(w >= 0);
        used += (size_t)w;
    }
}

void view_ids_json(struct json *j, const int32_t *ids, int32_t n)
{
    json_array_begin(j);
    for (int32_t i = 0; i < n; i++) {
        json_int(j, ids[i]);
    }
    json_array_end(j);
}

static const char *broker_state(const struct meta_broker *b)
{
    if (b->in_controlled_shutdown) {
        return b->fenced ? "fenced,controlled-shutdown"
                         : "controlled-shutdown";
    }
    return b->fenced ? "fenced" : "unfenced";
}

/* --- Text ---------------------------------------------------------------- */

static void broker_rows(struct table *t, const struct meta_image *img)
{
    table_cell(t, "ID");
    table_cell(t, "EPOCH");
    table_cell(t, "ADDRESS");
    table_cell(t, "STATE");
    table_end_row(t);
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct meta_broker *b = &img->brokers[i];
        char host[META_HOST_BYTES_MAX + 1];
        cli_printable(b->host, host, sizeof host);
        table_cell(t, "%" PRId32, b->id);
        table_cell(t, "%" PRId64, b->epoch);
        table_cell(t, "%s:%" PRId32, host, b->port);
        table_cell(t, "%s", broker_state(b));
        table_end_row(t);
    }
}

void view_brokers_text(FILE *out, const struct meta_image *img)
{
    fputs("BROKERS\n", out);
    if (img->n_brokers == 0) {
        fputs("(none)\n", out);
        return;
    }
    struct table t;
    table_init(&t, out);
    broker_rows(&t, img);
    table_start_printing(&t);
    broker_rows(&t, img);
}

static void format_end_offsets(const struct meta_replica_set *s,
                               const struct health_partition *hp, char *out,
                               size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int32_t i = 0; i < s->n && used < cap; i++) {
        const char *sep = i > 0 ? "," : "";
        int w =
            hp->end_offsets[i] >= 0
                ? snprintf(out + used, cap - used, "%s%" PRId32 ":%" PRId64,
                           sep, s->ids[i], hp->end_offsets[i])
                : snprintf(out + used, cap - used, "%s%" PRId32 ":-", sep,
                           s->ids[i]);
        ASSERT(w >= 0);
        used += (size_t)w;
    }
}

static void format_flags(const struct health_partition *hp, char *out,
                         size_t cap)
{
    const char *names[4];
    size_t n = 0;
    if (hp->under_replicated) {
        names[n++] = "UNDER-REPLICATED";
    }
    if (hp->under_min_isr) {
        names[n++] = "UNDER-MIN-ISR";
    }
    if (hp->at_min_isr) {
        names[n++] = "AT-MIN-ISR";
    }
    if (hp->offline) {
        names[n++] = "OFFLINE";
    }
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && used < cap; i++) {
        int w = snprintf(out + used, cap - used, "%s%s", i > 0 ? "," : "",
                         names[i]);
        ASSERT(w >= 0);
        used += (size_t)w;
    }
}

static void health_cells(struct table *t, const struct meta_partition *p,
                         const struct health_partition *hp)
{
    char ends[VIEW__END_OFFSETS_BYTES];
    char flags[VIEW__FLAGS_BYTES];
    format_end_offsets(&p->replicas, hp, ends, sizeof ends);
    format_flags(hp, flags, sizeof flags);
    if (hp->hw >= 0) {
        table_cell(t, "%" PRId64, hp->hw);
    } else {
        table_cell(t, "-");
    }
    table_cell(t, "%s", ends);
    table_cell(t, "%s", flags);
}

static void partition_row(struct table *t, const char *name,
                          const struct meta_partition *p,
                          const struct health_partition *hp)
{
    char replicas[VIEW_IDS_BYTES];
    char isr[VIEW_IDS_BYTES];
    view_format_ids(p->replicas.ids, p->replicas.n, replicas,
                    sizeof replicas);
    view_format_ids(p->isr.ids, p->isr.n, isr, sizeof isr);
    table_cell(t, "%s", name);
    table_cell(t, "%" PRId32, p->id);
    if (p->leader == META_NO_LEADER) {
        table_cell(t, "none");
    } else {
        table_cell(t, "%" PRId32, p->leader);
    }
    table_cell(t, "%" PRId32, p->leader_epoch);
    table_cell(t, "%s", replicas);
    table_cell(t, "%s", isr);
    if (hp != NULL) {
        health_cells(t, p, hp);
    }
    table_end_row(t);
}

/* A partition worth listing when the healthy ones are left out. */
static bool needs_a_look(const struct meta_partition *p,
                         const struct health_partition *hp)
{
    if (p->adding.n > 0 || p->removing.n > 0 || p->leader == META_NO_LEADER ||
        p->isr.n < p->replicas.n) {
        return true;
    }
    return hp != NULL && (hp->offline || hp->under_replicated ||
                          hp->under_min_isr || hp->at_min_isr);
}

static void partition_rows(struct table *t,
                           const struct meta_topic *const *ts, size_t n,
                           const struct health *h, bool all)
{
    table_cell(t, "TOPIC");
    table_cell(t, "PARTITION");
    table_cell(t, "LEADER");
    table_cell(t, "EPOCH");
    table_cell(t, "REPLICAS");
    table_cell(t, "ISR");
    if (h != NULL) {
        table_cell(t, "HW");
        table_cell(t, "END-OFFSETS");
        table_cell(t, "FLAGS");
    }
    table_end_row(t);
    for (size_t i = 0; i < n; i++) {
        char name[META_TOPIC_NAME_BYTES_MAX + 1];
        cli_printable(ts[i]->name, name, sizeof name);
        for (int32_t p = 0; p < ts[i]->n_partitions; p++) {
            const struct health_partition *hp =
                h != NULL ? health_partition(h, ts[i], p) : NULL;
            if (all || needs_a_look(&ts[i]->partitions[p], hp)) {
                partition_row(t, name, &ts[i]->partitions[p], hp);
            }
        }
    }
}

/* Partitions being moved (KIP-455), each with how many of its new
 * replicas have caught up into the ISR; nothing when none moves. */
static void reassignments_text(FILE *out, const struct meta_topic *const *ts,
                               size_t n)
{
    bool header = false;
    for (size_t i = 0; i < n; i++) {
        char name[META_TOPIC_NAME_BYTES_MAX + 1];
        cli_printable(ts[i]->name, name, sizeof name);
        for (int32_t p = 0; p < ts[i]->n_partitions; p++) {
            const struct meta_partition *mp = &ts[i]->partitions[p];
            if (mp->adding.n == 0 && mp->removing.n == 0) {
                continue;
            }
            if (!header) {
                fputs("\nREASSIGNING\n", out);
                header = true;
            }
            char replicas[VIEW_IDS_BYTES], adding[VIEW_IDS_BYTES];
            char removing[VIEW_IDS_BYTES];
            view_format_ids(mp->replicas.ids, mp->replicas.n, replicas,
                            sizeof replicas);
            view_format_ids(mp->adding.ids, mp->adding.n, adding,
                            sizeof adding);
            view_format_ids(mp->removing.ids, mp->removing.n, removing,
                            sizeof removing);
            int32_t in_sync = 0;
            for (int32_t k = 0; k < mp->adding.n; k++) {
                in_sync +=
                    meta_replica_set_contains(&mp->isr, mp->adding.ids[k]);
            }
            fprintf(out,
                    "%s-%" PRId32 " replicas %s adding %s removing %s "
                    "(%" PRId32 " of %" PRId32 " new replicas in sync)\n",
                    name, p, replicas, adding[0] != '\0' ? adding : "-",
                    removing[0] != '\0' ? removing : "-", in_sync,
                    mp->adding.n);
        }
    }
}

void view_partitions_text(FILE *out, const struct meta_topic *const *topics,
                          size_t n, const struct health *h, bool all)
{
    fputs("PARTITIONS\n", out);
    size_t n_partitions = 0;
    size_t listed = 0;
    for (size_t i = 0; i < n; i++) {
        n_partitions += (size_t)topics[i]->n_partitions;
        for (int32_t p = 0; p < topics[i]->n_partitions; p++) {
            listed += needs_a_look(
                &topics[i]->partitions[p],
                h != NULL ? health_partition(h, topics[i], p) : NULL);
        }
    }
    if (n_partitions == 0) {
        fputs("(none)\n", out);
        return;
    }
    all = all || n_partitions <= VIEW_PARTITIONS_LISTED_MAX;
    if (!all) {
        fprintf(out,
                "%zu partitions in %zu topics; %zu healthy, not listed "
                "(--all lists them); %zu below\n",
                n_partitions, n, n_partitions - listed, listed);
        if (listed == 0) {
            reassignments_text(out, topics, n);
            return;
        }
    }
    struct table t;
    table_init(&t, out);
    partition_rows(&t, topics, n, h, all);
    table_start_printing(&t);
    partition_rows(&t, topics, n, h, all);
    reassignments_text(out, topics, n);
}

/* --- JSON ---------------------------------------------------------------- */

static void broker_health_json(struct json *j, const struct health_broker *hb)
{
    json_key(j, "reachable");
    if (hb->asked) {
        json_bool(j, hb->reachable);
    } else {
        json_null(j);
    }
    if (hb->error[0] != '\0') {
        json_key(j, "error");
        json_string(j, hb->error);
    }
}

void view_brokers_json(struct json *j, const struct meta_image *img,
                       const struct health *h)
{
    json_array_begin(j);
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct meta_broker *b = &img->brokers[i];
        json_object_begin(j);
        json_key(j, "id");
        json_int(j, b->id);
        json_key(j, "epoch");
        json_int(j, b->epoch);
        json_key(j, "host");
        json_string(j, b->host);
        json_key(j, "port");
        json_int(j, b->port);
        json_key(j, "rack");
        json_string_or_null(j, b->rack);
        json_key(j, "fenced");
        json_bool(j, b->fenced);
        json_key(j, "in_controlled_shutdown");
        json_bool(j, b->in_controlled_shutdown);
        if (h != NULL) {
            broker_health_json(j, health_broker(h, b));
        }
        json_object_end(j);
    }
    json_array_end(j);
}

static void partition_health_json(struct json *j,
                                  const struct meta_partition *p,
                                  const struct health_partition *hp)
{
    json_key(j, "hw");
    json_int_or_null(j, hp->hw >= 0, hp->hw);
    json_key(j, "end_offsets");
    json_array_begin(j);
    for (int32_t i = 0; i < p->replicas.n; i++) {
        json_object_begin(j);
        json_key(j, "id");
        json_int(j, p->replicas.ids[i]);
        json_key(j, "end_offset");
        json_int_or_null(j, hp->end_offsets[i] >= 0, hp->end_offsets[i]);
        json_object_end(j);
    }
    json_array_end(j);
    json_key(j, "min_isr");
    json_int(j, hp->min_isr);
    json_key(j, "under_replicated");
    json_bool(j, hp->under_replicated);
    json_key(j, "under_min_isr");
    json_bool(j, hp->under_min_isr);
    json_key(j, "at_min_isr");
    json_bool(j, hp->at_min_isr);
    json_key(j, "offline");
    json_bool(j, hp->offline);
}

static void partition_json(struct json *j, const struct meta_partition *p,
                           const struct health_partition *hp)
{
    json_object_begin(j);
    json_key(j, "partition");
    json_int(j, p->id);
    json_key(j, "leader");
    json_int(j, p->leader);
    json_key(j, "leader_epoch");
    json_int(j, p->leader_epoch);
    json_key(j, "partition_epoch");
    json_int(j, p->partition_epoch);
    json_key(j, "replicas");
    view_ids_json(j, p->replicas.ids, p->replicas.n);
    json_key(j, "isr");
    view_ids_json(j, p->isr.ids, p->isr.n);
    if (p->adding.n > 0 || p->removing.n > 0) {
        json_key(j, "adding_replicas");
        view_ids_json(j, p->adding.ids, p->adding.n);
        json_key(j, "removing_replicas");
        view_ids_json(j, p->removing.ids, p->removing.n);
    }
    if (hp != NULL) {
        partition_health_json(j, p, hp);
    }
    json_object_end(j);
}

static void topic_json(struct json *j, const struct meta_topic *t,
                       const struct health *h)
{
    char id[23];
    meta_uuid_format(&t->id, id);
    json_object_begin(j);
    json_key(j, "name");
    json_string(j, t->name);
    json_key(j, "id");
    json_string(j, id);
    json_key(j, "configs");
    json_object_begin(j);
    for (size_t i = 0; i < t->n_configs; i++) {
        json_key(j, t->configs[i].name);
        json_string(j, t->configs[i].value);
    }
    json_object_end(j);
    json_key(j, "partitions");
    json_array_begin(j);
    for (int32_t p = 0; p < t->n_partitions; p++) {
        partition_json(j, &t->partitions[p],
                       h != NULL ? health_partition(h, t, p) : NULL);
    }
    json_array_end(j);
    json_object_end(j);
}

void view_topics_json(struct json *j, const struct meta_topic *const *topics,
                      size_t n, const struct health *h)
{
    json_array_begin(j);
    for (size_t i = 0; i < n; i++) {
        topic_json(j, topics[i], h);
    }
    json_array_end(j);
}
