/* `cairn status` (cli/cmd/status/status.h). */
#include "cli/cmd/status/status.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "cli/client/cluster.h"
#include "cli/client/health.h"
#include "common/json.h"
#include "cli/util/opts.h"
#include "cli/util/table.h"
#include "cli/cmd/status/view.h"
#include "common/rc.h"

void status_usage(FILE *out)
{
    fputs("  status [--json] [--all]\n"
          "  status --watch [--topic T] [--internal] [--interval-ms MS]\n"
          "         [--for-ms MS]\n"
          "      --watch prints every change as it is seen, with the time:\n"
          "      the active controller, brokers fenced and unfenced, each\n"
          "      partition's leader and epoch, ISR and HW (internal topics\n"
          "      only with --internal), then the nodes' events since the\n"
          "      last poll with their causes (as cairn events prints\n"
          "      them), polling every 500 ms, until killed or --for-ms\n"
          "      has passed. Without --watch:\n"
          "      Every controller's Raft role, term, leader and applied\n"
          "      index (or why it is unreachable), then the brokers and\n"
          "      partitions of the active controller's metadata. Each\n"
          "      partition also shows its high watermark (HW, from its\n"
          "      leader) and each replica's log end offset (from that\n"
          "      replica; '-' when its broker does not answer within 2 s),\n"
          "      asked over Kafka's ListOffsets, and the flags\n"
          "      UNDER-REPLICATED (ISR smaller than the replicas),\n"
          "      UNDER-MIN-ISR (ISR below min.insync.replicas: the topic's,\n"
          "      else the brokers' as DescribeConfigs reports it, else 1;\n"
          "      Cairn's brokers report none yet, so the local cluster's\n"
          "      min.insync.replicas=2 counts only where a topic sets it),\n"
          "      AT-MIN-ISR (ISR exactly min.insync.replicas, as\n"
          "      kafka-topics --describe --at-min-isr-partitions: acks=all\n"
          "      still succeeds; one more replica out stops it) and\n"
          "      OFFLINE (no leader). Past 200 partitions only those\n"
          "      with a flag or being reassigned are listed, after one\n"
          "      line that counts the rest; --all lists every one (--json\n"
          "      always has every one).\n",
          out);
}

static const struct opts_cmd status_cmd = {"status", status_usage};

/* "--name VALUE" as a count of milliseconds in [1, 86400000]; false
 * after a usage error. */
static bool ms_arg(int argc, char **argv, int *i, int64_t *out, int *rc)
{
    const char *name = argv[*i];
    char *end = NULL;
    if (*i + 1 >= argc) {
        *rc = opts_usage_error(&status_cmd, "%s needs a value", name);
        return false;
    }
    long long v = strtoll(argv[++*i], &end, 10);
    if (end == argv[*i] || *end != '\0' || v < 1 || v > 86400000) {
        *rc = opts_usage_error(&status_cmd,
                               "%s %s: expected milliseconds "
                               "from 1 to 86400000",
                               name, argv[*i]);
        return false;
    }
    *out = v;
    return true;
}

/* Not opts_parse(): "help" here is an unexpected argument, and so is any
 * other word or option but the ones above. */
int status_parse(int argc, char **argv, struct status_opts *o)
{
    memset(o, 0, sizeof *o);
    o->w.interval_ms = 500;
    int rc = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            o->json = true;
        } else if (strcmp(argv[i], "--all") == 0) {
            o->all = true;
        } else if (strcmp(argv[i], "--watch") == 0) {
            o->watch = true;
        } else if (strcmp(argv[i], "--internal") == 0) {
            o->w.internal = true;
        } else if (strcmp(argv[i], "--topic") == 0 && i + 1 < argc) {
            o->w.topic = argv[++i];
        } else if (strcmp(argv[i], "--interval-ms") == 0) {
            if (!ms_arg(argc, argv, &i, &o->w.interval_ms, &rc)) {
                return rc;
            }
        } else if (strcmp(argv[i], "--for-ms") == 0) {
            if (!ms_arg(argc, argv, &i, &o->w.for_ms, &rc)) {
                return rc;
            }
        } else if (strcmp(argv[i], "--help") == 0 ||
                   strcmp(argv[i], "-h") == 0) {
            return opts_help(&status_cmd);
        } else {
            return opts_usage_error(&status_cmd, "unexpected argument '%s'",
                                    argv[i]);
        }
    }
    if (!o->watch &&
        (o->w.topic != NULL || o->w.internal || o->w.for_ms > 0)) {
        return opts_usage_error(&status_cmd, "--topic, --internal and "
                                             "--for-ms go with --watch");
    }
    if (o->watch && o->all) {
        return opts_usage_error(&status_cmd, "--all goes without --watch");
    }
    if (o->watch && o->json) {
        return opts_usage_error(&status_cmd, "--watch prints lines, not "
                                             "JSON");
    }
    return -1;
}

static void controller_rows(struct table *t, const struct cluster_view *v)
{
    table_cell(t, "ID");
    table_cell(t, "ADDRESS");
    table_cell(t, "ROLE");
    table_cell(t, "TERM");
    table_cell(t, "LEADER");
    table_cell(t, "APPLIED");
    table_cell(t, "ACTIVE");
    table_end_row(t);
    for (size_t i = 0; i < v->n_ctls; i++) {
        const struct cluster_controller *c = &v->ctls[i];
        table_cell(t, "%" PRId32, c->id);
        table_cell(t, "%s", c->address);
        if (!c->reachable) {
            for (int k = 0; k < 4; k++) {
                table_cell(t, "-");
            }
            table_cell(t, "unreachable (%s)", c->error);
        } else {
            table_cell(t, "%s", c->role);
            table_cell(t, "%" PRId64, c->term);
            if (c->leader > 0) {
                table_cell(t, "%" PRId32, c->leader);
            } else {
                table_cell(t, "none");
            }
            table_cell(t, "%" PRId64, c->applied);
            table_cell(t, "%s", c->active ? "yes" : "no");
        }
        table_end_row(t);
    }
}

static void source_text(FILE *out, const struct cluster_view *v)
{
    if (v->source < 0) {
        fputs("METADATA unavailable: no controller sent an image\n", out);
        return;
    }
    const struct cluster_controller *c = &v->ctls[v->source];
    fprintf(out,
            "METADATA offset %" PRId64 " from controller %" PRId32 "%s\n",
            v->image.offset, c->id,
            c->active ? " (active)"
                      : " (no active controller answered; the freshest)");
}

/* Brokers that did not answer, and where min.insync.replicas came from. */
static void health_notes(FILE *out, const struct cluster_view *v,
                         const struct health *h, bool any_topics)
{
    for (size_t i = 0; i < v->image.n_brokers; i++) {
        const struct meta_broker *b = &v->image.brokers[i];
        const struct health_broker *hb = health_broker(h, b);
        if (hb->error[0] == '\0') {
            continue;
        }
        char host[META_HOST_BYTES_MAX + 1];
        char error[HEALTH_ERROR_BYTES];
        cli_printable(b->host, host, sizeof host);
        cli_printable(hb->error, error, sizeof error);
        fprintf(out, "note: broker %" PRId32 " at %s:%" PRId32 ": %s%s\n",
                b->id, host, b->port, error,
                hb->reachable ? "" : "; its offsets show as -");
    }
    if (!any_topics) {
        return;
    }
    if (h->min_insync_from >= 0) {
        fprintf(out,
                "note: min.insync.replicas is %" PRId32 " (broker %" PRId32
                "'s default) where a topic sets none\n",
                h->min_insync_default, h->min_insync_from);
    } else {
        fprintf(out,
                "note: min.insync.replicas is %" PRId32 " (Kafka's "
                "default) where a topic sets none: no broker named its "
                "own\n",
                h->min_insync_default);
    }
}

static void status_text(FILE *out, const struct cluster_view *v,
                        const struct meta_topic *const *topics, size_t n,
                        const struct health *h, bool all)
{
    struct table t;
    fputs("CONTROLLERS\n", out);
    table_init(&t, out);
    controller_rows(&t, v);
    table_start_printing(&t);
    controller_rows(&t, v);
    for (size_t i = 0; i < v->n_ctls; i++) {
        if (v->ctls[i].reachable && v->ctls[i].error[0] != '\0') {
            fprintf(out, "note: controller %" PRId32 " %s\n", v->ctls[i].id,
                    v->ctls[i].error);
        }
    }
    fputc('\n', out);
    source_text(out, v);
    fputc('\n', out);
    view_brokers_text(out, &v->image);
    fputc('\n', out);
    view_partitions_text(out, topics, n, h, all);
    if (h != NULL) {
        health_notes(out, v, h, n > 0);
    }
}

static void controller_json(struct json *j,
                            const struct cluster_controller *c)
{
    json_object_begin(j);
    json_key(j, "id");
    json_int(j, c->id);
    json_key(j, "address");
    json_string(j, c->address);
    json_key(j, "reachable");
    json_bool(j, c->reachable);
    if (c->reachable) {
        json_key(j, "role");
        json_string(j, c->role);
        json_key(j, "term");
        json_int(j, c->term);
        json_key(j, "leader");
        json_int_or_null(j, c->leader > 0, c->leader);
        json_key(j, "applied");
        json_int(j, c->applied);
        json_key(j, "metadata_offset");
        json_int(j, c->image_offset);
    }
    json_key(j, "active");
    json_bool(j, c->reachable && c->active);
    if (c->error[0] != '\0') {
        json_key(j, "error");
        json_string(j, c->error);
    }
    json_object_end(j);
}

/* metadata_offset is -1 (and metadata_source null) when no controller
 * sent an image; the lists are then empty and min.insync.replicas null. */
static void status_json(FILE *out, const struct cluster_view *v,
                        const struct meta_topic *const *topics, size_t n,
                        const struct health *h)
{
    struct json j;
    json_init(&j, out);
    json_object_begin(&j);
    json_key(&j, "metadata_offset");
    json_int(&j, v->source >= 0 ? v->image.offset : -1);
    json_key(&j, "metadata_source");
    json_int_or_null(&j, v->source >= 0,
                     v->source >= 0 ? v->ctls[v->source].id : -1);
    json_key(&j, "controllers");
    json_array_begin(&j);
    for (size_t i = 0; i < v->n_ctls; i++) {
        controller_json(&j, &v->ctls[i]);
    }
    json_array_end(&j);
    json_key(&j, "min_insync_replicas_default");
    json_int_or_null(&j, h != NULL, h != NULL ? h->min_insync_default : -1);
    json_key(&j, "min_insync_replicas_from_broker");
    json_int_or_null(&j, h != NULL && h->min_insync_from >= 0,
                     h != NULL ? h->min_insync_from : -1);
    json_key(&j, "brokers");
    view_brokers_json(&j, &v->image, h);
    json_key(&j, "topics");
    view_topics_json(&j, topics, n, h);
    json_object_end(&j);
    json_finish(&j);
}

/* Gathers the view and its health and writes it (JSON or text, every
 * partition when all) to out; the exit code. */
static int status_write(struct ctl_client *cc, bool json, bool all, FILE *out)
{
    struct cluster_view v;
    int rv = cluster_describe(cc, &v);
    const struct meta_topic **topics = NULL;
    size_t n = 0;
    int sorted = rv == RC_OK || rv == RC_NOT_FOUND
                     ? view_topics_sorted(&v.image, &topics, &n)
                     : rv;
    struct health h;
    bool have_health = false; /* h was gathered */
    if (sorted == RC_OK && rv == RC_OK) {
        sorted = health_gather(&h, &v.image);
        have_health = sorted == RC_OK;
        if (!have_health) {
            health_free(&h);
        }
    }
    if (sorted != RC_OK) {
        cli_error("status: %s", rc_str(sorted));
        free(topics);
        cluster_view_free(&v);
        return CLI_EXIT_FAILED;
    }
    const struct health *hp = have_health ? &h : NULL;
    if (json) {
        status_json(out, &v, topics, n, hp);
    } else {
        status_text(out, &v, topics, n, hp, all);
    }
    if (rv != RC_OK) {
        cli_error("status: no controller sent cluster metadata");
    }
    if (have_health) {
        health_free(&h);
    }
    free(topics);
    cluster_view_free(&v);
    return rv == RC_OK ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

int status_json_write(struct ctl_client *cc, FILE *out)
{
    return status_write(cc, true, true, out);
}

int status_run(struct ctl_client *cc, const struct status_opts *o)
{
    if (o->watch) {
        return watch_run(cc, &o->w);
    }
    return status_write(cc, o->json, o->all, stdout);
}
