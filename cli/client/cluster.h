/* What the controllers say about the cluster, gathered for `cairn status`
 * and `cairn topics list|describe`: every controller's own state (its
 * DescribeCluster answer) and one metadata image, the active controller's
 * or, when no active controller answered, the one with the highest
 * metadata offset. Strings from controllers are made printable here.
 * One thread; the view owns its image. */
#ifndef CAIRN_CLI_CLUSTER_H
#define CAIRN_CLI_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/client/ctl_client.h"
#include "common/assert.h"
#include "common/limits.h"
#include "common/meta/meta.h"

/* "leader", "follower", "candidate", "unavailable", with room. */
#define CLUSTER_ROLE_BYTES 16

struct cluster_controller {
    int32_t id; /* as configured in --controllers */
    char address[CTL_CLIENT_ADDR_BYTES];
    bool reachable;                     /* it answered DescribeCluster */
    char error[CTL_CLIENT_ERROR_BYTES]; /* why not, or a problem; "" none */
    char role[CLUSTER_ROLE_BYTES];
    int64_t term;
    int32_t leader; /* Raft leader it knows; 0 none */
    int64_t applied;
    bool active;
    int64_t image_offset; /* of the image it sent; -1 none usable */
};

struct cluster_view {
    struct cluster_controller ctls[CONTROLLER_VOTERS_MAX];
    size_t n_ctls;
    int source; /* index in ctls of the image's controller; -1 none */
    struct meta_image image;
};

/* Asks every controller at once (CLI_CALL_TIMEOUT_MS each) and fills v,
 * which the caller then frees with cluster_view_free() whatever the
 * result. RC_OK when v holds an image; RC_NOT_FOUND when no controller
 * gave a usable one (each one's error says why); RC_NOMEM. */
MUST_CHECK int cluster_describe(struct ctl_client *cc,
                                struct cluster_view *v);

void cluster_view_free(struct cluster_view *v);

#endif
