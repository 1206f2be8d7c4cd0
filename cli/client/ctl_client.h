/* Blocking calls to the controller quorum for the CLI, over the framed RPC
 * client (common/net/rpc.h). The client runs its own libuv loop, only inside
 * its calls: each call returns once every answer is in or its deadline has
 * passed, so a dead or paused controller costs at most its timeout.
 *
 * Requests and responses are the protobuf messages of proto/rpc.proto.
 * Responses returned to the caller are owned by it: free them with
 * cairn__response__free_unpacked(resp, NULL).
 *
 * One thread; a struct ctl_client is used by one caller at a time. */
#ifndef CAIRN_CLI_CTL_CLIENT_H
#define CAIRN_CLI_CTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/net/addr.h"
#include "common/assert.h"
#include "common/limits.h"
#include "common/trace.h"
#include "rpc.pb-c.h"

/* "host:port" of a voter, with room for "[v6]". */
#define CTL_CLIENT_ADDR_BYTES (META_HOST_BYTES_MAX + 8)

/* The error text of one failed exchange. */
#define CTL_CLIENT_ERROR_BYTES 512

struct ctl_client {
    uv_loop_t loop;
    struct rpc_client *rpc;
    struct tracer *tracer; /* borrowed; may be NULL */
    struct addr_voter voters[CONTROLLER_VOTERS_MAX];
    char addrs[CONTROLLER_VOTERS_MAX][CTL_CLIENT_ADDR_BYTES];
    size_t n_voters;
    size_t active; /* index of the last known active controller */
};

/* One controller's answer to ctl_client_call_all(). */
struct ctl_reply {
    int rc;                /* RC_OK: resp is set */
    Cairn__Response *resp; /* owned by the caller (ctl_reply_free) */
};

/* Parses voters ("id@host:port,...") and resolves their addresses
 * (blocking, for names). On failure writes why into err (cap bytes):
 * RC_INVALID for a bad list or an address that does not resolve, RC_NOMEM,
 * RC_IO. tracer (may be NULL) gets the RPC layer's log lines. */
MUST_CHECK int ctl_client_init(struct ctl_client *cc, const char *voters,
                               struct tracer *tracer, char *err, size_t cap);

/* Closes the connections and the loop, freeing everything. */
void ctl_client_close(struct ctl_client *cc);

/* Sends req to every controller at once and waits for all of them, each
 * for at most timeout_ms. out[i] is voter i's answer; RC_MALFORMED when it
 * does not parse. Returns RC_OK, or RC_NOMEM/RC_TOO_LARGE when req could
 * not be packed (no reply then needs freeing). */
MUST_CHECK int ctl_client_call_all(struct ctl_client *cc,
                                   const Cairn__Request *req,
                                   uint64_t timeout_ms,
                                   struct ctl_reply *out);

void ctl_reply_free(struct ctl_reply *r);

/* One controller's answer to DescribeCluster, read out of its reply by
 * ctl_reply_describe(). Strings and image bytes are borrowed from the
 * reply: valid until ctl_reply_free(). */
struct ctl_describe {
    int rc;                    /* the exchange's; RC_OK: it answered */
    bool has_error;            /* it answered with an error code ... */
    int16_t error_code;        /* ... this one */
    const char *error_message; /* may be NULL */
    bool described;            /* a DescribeCluster answer, with its info */
    const char *raft_role;     /* may be NULL */
    bool has_node_id;
    int32_t node_id;
    int64_t term;
    int32_t leader_id;
    int64_t applied_index;
    bool active;
    bool has_image;
    const uint8_t *image; /* a packed MetaImage */
    size_t image_len;
};

/* Sends DescribeCluster to every controller at once, as
 * ctl_client_call_all() does. */
MUST_CHECK int ctl_client_describe_all(struct ctl_client *cc,
                                       uint64_t timeout_ms,
                                       struct ctl_reply *out);

/* Reads r, an answer to ctl_client_describe_all(), into out. */
void ctl_reply_describe(const struct ctl_reply *r, struct ctl_describe *out);

/* Sends req to the active controller: first the last known one, then,
 * on NOT_CONTROLLER, the controller it names (or, when it names none, the
 * same one again after a pause, then the next); on a transport error or
 * timeout, the next one. Each attempt waits at most CLI_CALL_TIMEOUT_MS;
 * the whole call at most CLI_ACTIVE_BUDGET_MS. RC_OK gives the answer
 * (whose error_code is not NOT_CONTROLLER) in *resp. Otherwise
 * RC_TIMEOUT (no active controller answered in time) or a packing error,
 * and err says what failed at each controller, and whether the request
 * may still take effect (an attempt timed out after sending it). A retry
 * after a timeout may also find the request already done (say,
 * TOPIC_ALREADY_EXISTS for our own create). */
MUST_CHECK int ctl_client_call_active(struct ctl_client *cc,
                                      const Cairn__Request *req,
                                      Cairn__Response **resp, char *err,
                                      size_t cap);

/* Why an exchange failed with rc, into out (cap bytes), e.g. "no answer
 * within 1000 ms" for RC_TIMEOUT with timeout_ms 1000. */
void ctl_client_describe_rc(int rc, uint64_t timeout_ms, char *out,
                            size_t cap);

#endif
