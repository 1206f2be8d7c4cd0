/* Gathering DescribeCluster answers (cli/client/cluster.h). */
#include "cli/client/cluster.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/util/cli.h"
#include "common/kafka/kafka_error.h"
#include "common/meta/meta_codec.h"
#include "common/rc.h"

static void take_info(struct cluster_controller *c,
                      const Cairn__ControllerInfo *info)
{
    cli_printable(info->raft_role != NULL ? info->raft_role : "?", c->role,
                  sizeof c->role);
    c->term = info->term;
    c->leader = info->leader_id;
    c->applied = info->applied_index;
    c->active = info->active;
    if (info->has_node_id && info->node_id != c->id) {
        snprintf(c->error, sizeof c->error,
                 "answers as node %" PRId32 ", not %" PRId32
                 " (check --controllers)",
                 info->node_id, c->id);
    }
}

/* True when the image of a (active or not, at offset) should replace the
 * one of b; b may be NULL. */
static bool better_source(const struct cluster_controller *a,
                          const struct cluster_controller *b)
{
    if (b == NULL) {
        return true;
    }
    if (a->active != b->active) {
        return a->active;
    }
    return a->image_offset > b->image_offset;
}

/* Decodes controller i's image; keeps it if it beats the current one. */
static int take_image(struct cluster_view *v, size_t i,
                      const Cairn__DescribeClusterResponse *dc)
{
    struct cluster_controller *c = &v->ctls[i];
    if (!dc->has_image) {
        snprintf(c->error, sizeof c->error, "sent no metadata image");
        return RC_OK;
    }
    struct meta_image img;
    meta_image_init(&img);
    int rv = meta_codec_decode_image(dc->image.data, dc->image.len, &img);
    if (rv != RC_OK) {
        snprintf(c->error, sizeof c->error,
                 "its metadata image does not "
                 "decode: %s",
                 rc_str(rv));
        return rv == RC_NOMEM ? rv : RC_OK;
    }
    c->image_offset = img.offset;
    const struct cluster_controller *cur =
        v->source >= 0 ? &v->ctls[v->source] : NULL;
    if (better_source(c, cur)) {
        meta_image_free(&v->image);
        v->image = img; /* moves the heap parts */
        v->source = (int)i;
    } else {
        meta_image_free(&img);
    }
    return RC_OK;
}

static int take_reply(struct cluster_view *v, size_t i,
                      const struct ctl_reply *r)
{
    struct cluster_controller *c = &v->ctls[i];
    if (r->rc != RC_OK) {
        ctl_client_describe_rc(r->rc, CLI_CALL_TIMEOUT_MS, c->error,
                               sizeof c->error);
        return RC_OK;
    }
    const Cairn__Response *resp = r->resp;
    if (resp->has_error_code && resp->error_code != KAFKA_ERROR_NONE) {
        int16_t code = (int16_t)resp->error_code;
        snprintf(c->error, sizeof c->error, "answered %s: %s",
                 kafka_error_name(code),
                 cli_kafka_error_text(code, resp->error_message));
        return RC_OK;
    }
    if (resp->body_case != CAIRN__RESPONSE__BODY_DESCRIBE_CLUSTER ||
        resp->describe_cluster->controller == NULL) {
        snprintf(c->error, sizeof c->error,
                 "unexpected answer to "
                 "DescribeCluster");
        return RC_OK;
    }
    c->reachable = true;
    take_info(c, resp->describe_cluster->controller);
    return take_image(v, i, resp->describe_cluster);
}

int cluster_describe(struct ctl_client *cc, struct cluster_view *v)
{
    memset(v, 0, sizeof *v);
    meta_image_init(&v->image);
    v->source = -1;
    v->n_ctls = cc->n_voters;
    for (size_t i = 0; i < v->n_ctls; i++) {
        v->ctls[i].id = cc->voters[i].id;
        v->ctls[i].image_offset = -1;
        snprintf(v->ctls[i].address, sizeof v->ctls[i].address, "%s",
                 cc->addrs[i]);
    }
    Cairn__DescribeClusterRequest dc = CAIRN__DESCRIBE_CLUSTER_REQUEST__INIT;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_DESCRIBE_CLUSTER;
    req.describe_cluster = &dc;
    struct ctl_reply replies[CONTROLLER_VOTERS_MAX];
    int rv = ctl_client_call_all(cc, &req, CLI_CALL_TIMEOUT_MS, replies);
    if (rv != RC_OK) {
        return rv;
    }
    for (size_t i = 0; i < v->n_ctls; i++) {
        if (rv == RC_OK) {
            rv = take_reply(v, i, &replies[i]);
        }
        ctl_reply_free(&replies[i]);
    }
    if (rv != RC_OK) {
        return rv;
    }
    return v->source >= 0 ? RC_OK : RC_NOT_FOUND;
}

void cluster_view_free(struct cluster_view *v)
{
    meta_image_free(&v->image);
    v->source = -1;
}
