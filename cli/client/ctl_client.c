/* Blocking controller calls for the CLI (cli/client/ctl_client.h). */
#include "cli/client/ctl_client.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "common/net/rpc.h"

/* Before asking again when the answer was "no active controller yet"
 * (an election, or a new leader still catching up). */
#define CTL_CLIENT__ELECTION_PAUSE_MS 100u

/* After every controller in turn failed at the transport level. */
#define CTL_CLIENT__ROUND_PAUSE_MS 200u

/* Why one controller failed, in the final error text. */
#define CTL_CLIENT__WHY_BYTES 256

/* One call in flight, filled in by wait_cb. */
struct ctl__wait {
    bool done;
    int rc;
    Cairn__Response *resp;
};

static uint64_t now_ms(void)
{
    return uv_hrtime() / 1000000u;
}

static void wait_cb(void *arg, int rc, const uint8_t *payload, size_t len)
{
    struct ctl__wait *w = arg;
    ASSERT(!w->done);
    w->done = true;
    w->rc = rc;
    if (rc != RC_OK) {
        return;
    }
    w->resp = cairn__response__unpack(NULL, len, payload);
    if (w->resp == NULL) {
        w->rc = RC_MALFORMED;
    }
}

static int pack_request(const Cairn__Request *req, uint8_t **out, size_t *len)
{
    size_t n = cairn__request__get_packed_size(req);
    if (n > RPC_FRAME_BYTES_MAX - 8u) {
        return RC_TOO_LARGE;
    }
    uint8_t *buf = malloc(n == 0 ? 1 : n);
    if (buf == NULL) {
        return RC_NOMEM;
    }
    size_t packed = cairn__request__pack(req, buf);
    ASSERT(packed == n);
    *out = buf;
    *len = n;
    return RC_OK;
}

static bool all_done(const struct ctl__wait *waits, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!waits[i].done) {
            return false;
        }
    }
    return true;
}

/* Runs the loop until every wait is done. The RPC client calls back once
 * per accepted call, by its deadline at the latest, and its timer keeps
 * the loop alive until then. */
static void run_until_done(struct ctl_client *cc, struct ctl__wait *waits,
                           size_t n)
{
    while (!all_done(waits, n)) {
        int alive = uv_run(&cc->loop, UV_RUN_ONCE);
        if (alive == 0) {
            ASSERT(all_done(waits, n));
        }
    }
}

static void start_call(struct ctl_client *cc, size_t target,
                       const uint8_t *buf, size_t len, uint64_t timeout_ms,
                       struct ctl__wait *w)
{
    memset(w, 0, sizeof *w);
    /* The loop's clock stood still while we slept or worked between
     * calls; the call's deadline counts from now. */
    uv_update_time(&cc->loop);
    int rv = rpc_client_call(cc->rpc, (int)target, buf, len, timeout_ms,
                             wait_cb, w);
    if (rv != RC_OK) {
        w->done = true;
        w->rc = rv;
    }
}

void ctl_client_describe_rc(int rc, uint64_t timeout_ms, char *out,
                            size_t cap)
{
    switch (rc) {
    case RC_TIMEOUT:
        snprintf(out, cap, "no answer within %" PRIu64 " ms", timeout_ms);
        break;
    case RC_IO:
        snprintf(out, cap, "cannot connect, or the connection failed");
        break;
    case RC_CLOSED:
        snprintf(out, cap, "the controller closed the connection");
        break;
    case RC_MALFORMED:
        snprintf(out, cap, "malformed answer");
        break;
    default:
        snprintf(out, cap, "%s", rc_str(rc));
        break;
    }
}

/* --- Set-up -------------------------------------------------------------- */

/* rpc_client_init refused the list: find the address that does not
 * resolve, one at a time, to name it. */
static void name_bad_address(struct ctl_client *cc, char *err, size_t cap)
{
    snprintf(err, cap, "--controllers: cannot resolve an address");
    for (size_t i = 0; i < cc->n_voters; i++) {
        const char *one = cc->addrs[i];
        struct rpc_client *probe = NULL;
        if (rpc_client_init(&probe, &cc->loop, &one, 1, NULL) != RC_OK) {
            snprintf(err, cap,
                     "--controllers: controller %" PRId32
                     ": cannot resolve '%s'",
                     cc->voters[i].id, one);
            return;
        }
        rpc_client_close(probe);
        uv_run(&cc->loop, UV_RUN_DEFAULT);
    }
}

int ctl_client_init(struct ctl_client *cc, const char *voters,
                    struct tracer *tracer, char *err, size_t cap)
{
    memset(cc, 0, sizeof *cc);
    cc->tracer = tracer;
    if (addr_parse_voters(voters, cc->voters, CONTROLLER_VOTERS_MAX,
                          &cc->n_voters) != RC_OK) {
        snprintf(err, cap,
                 "--controllers: expected id@host:port,... with "
                 "distinct positive ids (at most %u), got '%s'",
                 CONTROLLER_VOTERS_MAX, voters);
        return RC_INVALID;
    }
    const char *addrs[CONTROLLER_VOTERS_MAX];
    for (size_t i = 0; i < cc->n_voters; i++) {
        addr_format(&cc->voters[i].addr, cc->addrs[i], sizeof cc->addrs[i]);
        addrs[i] = cc->addrs[i];
    }
    if (uv_loop_init(&cc->loop) != 0) {
        snprintf(err, cap, "cannot create an event loop");
        return RC_IO;
    }
    int rv =
        rpc_client_init(&cc->rpc, &cc->loop, addrs, cc->n_voters, tracer);
    if (rv != RC_OK) {
        if (rv == RC_INVALID) {
            name_bad_address(cc, err, cap);
        } else {
            snprintf(err, cap, "RPC client: %s", rc_str(rv));
        }
        goto err_after_loop_init;
    }
    return RC_OK;
err_after_loop_init:
    uv_run(&cc->loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&cc->loop) != 0) {
        ASSERT(false); /* a handle of ours outlived its close */
    }
    ASSERT(rv != RC_OK);
    return rv;
}

void ctl_client_close(struct ctl_client *cc)
{
    rpc_client_close(cc->rpc);
    cc->rpc = NULL;
    uv_run(&cc->loop, UV_RUN_DEFAULT);
    int rv = uv_loop_close(&cc->loop);
    ASSERT(rv == 0);
}

/* --- Calling every controller ------------------------------------------- */

void ctl_reply_free(struct ctl_reply *r)
{
    if (r->resp != NULL) {
        cairn__response__free_unpacked(r->resp, NULL);
        r->resp = NULL;
    }
}

int ctl_client_call_all(struct ctl_client *cc, const Cairn__Request *req,
                        uint64_t timeout_ms, struct ctl_reply *out)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    int rv = pack_request(req, &buf, &len);
    if (rv != RC_OK) {
        return rv;
    }
    struct ctl__wait waits[CONTROLLER_VOTERS_MAX];
    for (size_t i = 0; i < cc->n_voters; i++) {
        start_call(cc, i, buf, len, timeout_ms, &waits[i]);
    }
    run_until_done(cc, waits, cc->n_voters);
    free(buf);
    for (size_t i = 0; i < cc->n_voters; i++) {
        out[i].rc = waits[i].rc;
        out[i].resp = waits[i].resp;
    }
    return RC_OK;
}

int ctl_client_describe_all(struct ctl_client *cc, uint64_t timeout_ms,
                            struct ctl_reply *out)
{
    Cairn__DescribeClusterRequest dc = CAIRN__DESCRIBE_CLUSTER_REQUEST__INIT;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_DESCRIBE_CLUSTER;
    req.describe_cluster = &dc;
    return ctl_client_call_all(cc, &req, timeout_ms, out);
}

void ctl_reply_describe(const struct ctl_reply *r, struct ctl_describe *out)
{
    memset(out, 0, sizeof *out);
    out->rc = r->rc;
    if (r->rc != RC_OK) {
        return;
    }
    const Cairn__Response *resp = r->resp;
    out->has_error =
        resp->has_error_code && resp->error_code != KAFKA_ERROR_NONE;
    out->error_code = (int16_t)resp->error_code;
    out->error_message = resp->error_message;
    if (resp->body_case != CAIRN__RESPONSE__BODY_DESCRIBE_CLUSTER ||
        resp->describe_cluster->controller == NULL) {
        return;
    }
    const Cairn__ControllerInfo *info = resp->describe_cluster->controller;
    out->described = true;
    out->raft_role = info->raft_role;
    out->has_node_id = info->has_node_id;
    out->node_id = info->node_id;
    out->term = info->term;
    out->leader_id = info->leader_id;
    out->applied_index = info->applied_index;
    out->active = info->active;
    out->has_image = resp->describe_cluster->has_image;
    out->image = resp->describe_cluster->image.data;
    out->image_len = resp->describe_cluster->image.len;
}

/* --- Calling the active controller -------------------------------------- */

/* Where one attempt of ctl_client_call_active leaves the search. */
struct ctl__search {
    size_t target;        /* whom to ask next */
    uint64_t pause_ms;    /* wait this long first */
    size_t n_failed_row;  /* transport failures in a row */
    bool maybe_delivered; /* an attempt timed out or was cut off */
    bool down[CONTROLLER_VOTERS_MAX]; /* its last attempt failed */
    char why[CONTROLLER_VOTERS_MAX][CTL_CLIENT__WHY_BYTES];
};

static bool voter_index(const struct ctl_client *cc, int32_t id, size_t *out)
{
    for (size_t i = 0; i < cc->n_voters; i++) {
        if (cc->voters[i].id == id) {
            *out = i;
            return true;
        }
    }
    return false;
}

/* A NOT_CONTROLLER answer from s->target: follow its hint, or wait for
 * the election when it has none, or when it names itself (a new leader
 * that has not caught up yet). */
static void follow_redirect(struct ctl_client *cc, struct ctl__search *s,
                            const Cairn__Response *resp)
{
    size_t from = s->target;
    int32_t hint = resp->has_controller_id ? resp->controller_id : -1;
    size_t to = from;
    snprintf(s->why[from], sizeof s->why[from], "%s: %s",
             kafka_error_name(KAFKA_ERROR_NOT_CONTROLLER),
             resp->error_message != NULL ? resp->error_message : "");
    s->n_failed_row = 0;
    if (hint <= 0) {
        s->target = (from + 1) % cc->n_voters;
        s->pause_ms = CTL_CLIENT__ELECTION_PAUSE_MS;
    } else if (!voter_index(cc, hint, &to)) {
        snprintf(s->why[from], sizeof s->why[from],
                 "names controller %" PRId32
                 " as active, which is not in --controllers",
                 hint);
        s->target = (from + 1) % cc->n_voters;
        s->pause_ms = 0;
    } else {
        /* A hint naming itself, or a controller that just failed us (a
         * stale hint until the election), means waiting, not spinning. */
        bool wait = to == from || s->down[to];
        s->target = to;
        s->pause_ms = wait ? CTL_CLIENT__ELECTION_PAUSE_MS : 0;
    }
}

/* Judges one finished attempt. True when w holds the answer to return. */
static bool judge_attempt(struct ctl_client *cc, struct ctl__search *s,
                          struct ctl__wait *w, uint64_t timeout_ms)
{
    s->pause_ms = 0;
    s->down[s->target] = w->rc != RC_OK;
    if (w->rc != RC_OK) {
        ctl_client_describe_rc(w->rc, timeout_ms, s->why[s->target],
                               sizeof s->why[s->target]);
        s->target = (s->target + 1) % cc->n_voters;
        s->n_failed_row++;
        if (w->rc == RC_TIMEOUT || w->rc == RC_CLOSED) {
            s->maybe_delivered = true;
        }
        if (s->n_failed_row % cc->n_voters == 0) {
            s->pause_ms = CTL_CLIENT__ROUND_PAUSE_MS;
        }
        return false;
    }
    if (w->resp->has_error_code &&
        w->resp->error_code == KAFKA_ERROR_NOT_CONTROLLER) {
        follow_redirect(cc, s, w->resp);
        cairn__response__free_unpacked(w->resp, NULL);
        w->resp = NULL;
        return false;
    }
    return true;
}

static void explain_search(const struct ctl_client *cc,
                           const struct ctl__search *s, char *err, size_t cap)
{
    int n = snprintf(err, cap, "no active controller answered within %u ms",
                     CLI_ACTIVE_BUDGET_MS);
    for (size_t i = 0; i < cc->n_voters && n >= 0 && (size_t)n < cap; i++) {
        if (s->why[i][0] == '\0') {
            continue;
        }
        n += snprintf(err + n, cap - (size_t)n,
                      "\n  controller %" PRId32 " at %s: %s",
                      cc->voters[i].id, cc->addrs[i], s->why[i]);
    }
    if (s->maybe_delivered && n >= 0 && (size_t)n < cap) {
        snprintf(err + n, cap - (size_t)n,
                 "\n  a controller that did not "
                 "answer may still carry the request out");
    }
}

int ctl_client_call_active(struct ctl_client *cc, const Cairn__Request *req,
                           Cairn__Response **resp, char *err, size_t cap)
{
    *resp = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    int rv = pack_request(req, &buf, &len);
    if (rv != RC_OK) {
        snprintf(err, cap, "request not sent: %s", rc_str(rv));
        return rv;
    }
    struct ctl__search s;
    memset(&s, 0, sizeof s);
    s.target = cc->active;
    uint64_t deadline = now_ms() + CLI_ACTIVE_BUDGET_MS;
    for (uint64_t now = now_ms(); now < deadline; now = now_ms()) {
        uint64_t left = deadline - now;
        uint64_t timeout =
            left < CLI_CALL_TIMEOUT_MS ? left : CLI_CALL_TIMEOUT_MS;
        struct ctl__wait w;
        start_call(cc, s.target, buf, len, timeout, &w);
        run_until_done(cc, &w, 1);
        size_t asked = s.target;
        if (judge_attempt(cc, &s, &w, timeout)) {
            cc->active = asked;
            *resp = w.resp;
            free(buf);
            return RC_OK;
        }
        uint64_t after = now_ms();
        left = after < deadline ? deadline - after : 0;
        uv_sleep((unsigned)(s.pause_ms < left ? s.pause_ms : left));
    }
    free(buf);
    explain_search(cc, &s, err, cap);
    return RC_TIMEOUT;
}
