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
                      const struct ctl_describe *d)
{
    cli_printable(d->raft_role != NULL ? d->raft_role : "?", c->role,
                  sizeof c->role);
    c->term = d->term;
    c->leader = d->leader_id;
    c->applied = d->applied_index;
    c->active = d->active;
    if (d->has_node_id && d->node_id != c->id) {
        snprintf(c->error, sizeof c->error,
                 "answers as node %" PRId32 ", not %" PRId32
                 " (check --controllers)",
                 d->node_id, c->id);
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
                      const struct ctl_describe *d)
{
    struct cluster_controller *c = &v->ctls[i];
    if (!d->has_image) {
        snprintf(c->error, sizeof c->error, "sent no metadata image");
        return RC_OK;
    }
    struct meta_image img;
    meta_image_init(&img);
    int rv = meta_codec_decode_image(d->image, d->image_len, &img);
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
                      const struct ctl_describe *d)
{
    struct cluster_controller *c = &v->ctls[i];
    if (d->rc != RC_OK) {
        ctl_client_describe_rc(d->rc, CLI_CALL_TIMEOUT_MS, c->error,
                               sizeof c->error);
        return RC_OK;
    }
    if (d->has_error) {
        snprintf(c->error, sizeof c->error, "answered %s: %s",
                 kafka_error_name(d->error_code),
                 cli_kafka_error_text(d->error_code, d->error_message));
        return RC_OK;
    }
    if (!d->described) {
        snprintf(c->error, sizeof c->error,
                 "unexpected answer to "
                 "DescribeCluster");
        return RC_OK;
    }
    c->reachable = true;
    take_info(c, d);
    return take_image(v, i, d);
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
    struct ctl_reply replies[CONTROLLER_VOTERS_MAX];
    int rv = ctl_client_describe_all(cc, CLI_CALL_TIMEOUT_MS, replies);
    if (rv != RC_OK) {
        return rv;
    }
    for (size_t i = 0; i < v->n_ctls; i++) {
        if (rv == RC_OK) {
            struct ctl_describe d;
            ctl_reply_describe(&replies[i], &d);
            rv = take_reply(v, i, &d);
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
