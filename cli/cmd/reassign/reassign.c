/* See cli/cmd/reassign/reassign.h. */
#include "cli/cmd/reassign/reassign.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/util/cli.h"
#include "cli/client/cluster.h"
#include "cli/client/ctl_client.h"
#include "cli/util/opts.h"
#include "cli/cmd/reassign/reassign_plan.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"

/* Plan files are small: a line per partition. */
#define REASSIGN__FILE_BYTES_MAX (4u << 20)
/* How often decommission looks at the moves. */
#define REASSIGN__POLL_MS 1000

void reassign_usage(FILE *out)
{
    fputs("  reassign plan (--add-broker N | --remove-broker N)\n"
          "       [--topics T1,T2...] [--output FILE]\n"
          "      A balanced move of replicas (rack-unaware, fewest moves):\n"
          "      prints the current assignment and the proposed one, in\n"
          "      kafka-reassign-partitions' JSON; --output also writes the\n"
          "      proposal to FILE.\n"
          "  reassign execute (PLANFILE | --add-broker N | --remove-broker "
          "N)\n"
          "      Starts the moves of a plan (a file, or computed now).\n"
          "  reassign status\n"
          "      Partitions being moved: replicas, adding, removing, ISR.\n"
          "  reassign cancel [--topic T --partition P]\n"
          "      Cancels every move (or one): back to the old replicas.\n",
          out);
}

void brokers_usage(FILE *out)
{
    fputs("  brokers decommission N [--timeout DURATION]\n"
          "      Moves every replica off broker N, waits for the moves\n"
          "      (progress printed; default timeout 10m), waits for N's\n"
          "      process to be stopped (a running broker would register\n"
          "      again), then unregisters N.\n",
          out);
}

static const struct opts_cmd reassign_cmd = {"reassign", reassign_usage};
static const struct opts_cmd brokers_cmd = {"brokers", brokers_usage};

static int cc_connect(struct ctl_client *cc, const char *controllers)
{
    char err[CTL_CLIENT_ERROR_BYTES];
    int rv = ctl_client_init(cc, controllers, NULL, err, sizeof err);
    if (rv != RC_OK) {
        cli_error("%s", err);
        return rv == RC_INVALID ? CLI_EXIT_USAGE : CLI_EXIT_FAILED;
    }
    return -1;
}

/* The active controller's answer to req, or NULL (said why). */
static Cairn__Response *call(struct ctl_client *cc, const Cairn__Request *req,
                             const char *what)
{
    Cairn__Response *resp = NULL;
    char err[CTL_CLIENT_ERROR_BYTES * 4];
    if (ctl_client_call_active(cc, req, &resp, err, sizeof err) != RC_OK) {
        cli_error("%s: %s", what, err);
        return NULL;
    }
    if (resp->error_code != 0) {
        cli_error("%s: %s", what,
                  cli_kafka_error_text((int16_t)resp->error_code,
                                       resp->error_message));
        cairn__response__free_unpacked(resp, NULL);
        return NULL;
    }
    return resp;
}

static void print_set(FILE *out, const int32_t *ids, size_t n)
{
    if (n == 0) {
        fputs("-", out);
    }
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s%d", i == 0 ? "" : ",", (int)ids[i]);
    }
}

/* --- Plans ---------------------------------------------------------------- */

/* Splits "a,b,c" in place into names (at most cap). */
static size_t split_topics(char *list, const char **names, size_t cap)
{
    size_t n = 0;
    for (char *tok = strtok(list, ","); tok != NULL && n < cap;
         tok = strtok(NULL, ",")) {
        names[n++] = tok;
    }
    return n;
}

/* Computes the plan for adding `add` or removing `remove` (-1: not) over
 * every registered broker, fenced ones included (a broker that is down
 * for a while keeps its replicas, as kafka-reassign-partitions' broker
 * list would). */
static int compute(const char *controllers, int32_t add, int32_t remove,
                   char *topics, struct reassign_plan *plan)
{
    struct ctl_client cc;
    int rc = cc_connect(&cc, controllers);
    if (rc >= 0) {
        return rc;
    }
    struct cluster_view v;
    int rv = cluster_describe(&cc, &v);
    ctl_client_close(&cc);
    if (rv != RC_OK) {
        cli_error("reassign: no controller sent cluster metadata (is the "
                  "cluster up?)");
        cluster_view_free(&v);
        return CLI_EXIT_FAILED;
    }
    int32_t brokers[REASSIGN_PLAN_BROKERS_MAX];
    size_t n = 0;
    for (size_t i = 0; i < v.image.n_brokers; i++) {
        const struct meta_broker *b = &v.image.brokers[i];
        if (b->id != remove && n < REASSIGN_PLAN_BROKERS_MAX) {
            brokers[n++] = b->id;
        }
    }
    if (add >= 0 && meta_image_broker(&v.image, add) == NULL &&
        n < REASSIGN_PLAN_BROKERS_MAX) {
        brokers[n++] = add; /* a broker to start: Kafka's tool allows it */
    }
    if (remove >= 0 && meta_image_broker(&v.image, remove) == NULL) {
        cli_error("reassign: broker %d is not registered", (int)remove);
        cluster_view_free(&v);
        return CLI_EXIT_FAILED;
    }
    const char *names[256];
    size_t n_names = topics != NULL ? split_topics(topics, names, 256) : 0;
    char err[256];
    rv = reassign_plan_compute(&v.image, brokers, n, names, n_names, plan,
                               err, sizeof err);
    cluster_view_free(&v);
    if (rv != RC_OK) {
        cli_error("reassign: %s", rv == RC_NOMEM ? "out of memory" : err);
        return CLI_EXIT_FAILED;
    }
    return -1;
}

static int read_plan(const char *path, struct reassign_plan *plan)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        cli_error("reassign: %s: %s", path, strerror(errno));
        return CLI_EXIT_FAILED;
    }
    char *text = malloc(REASSIGN__FILE_BYTES_MAX);
    size_t len =
        text != NULL ? fread(text, 1, REASSIGN__FILE_BYTES_MAX, f) : 0;
    bool too_big = text != NULL && len == REASSIGN__FILE_BYTES_MAX;
    fclose(f);
    if (text == NULL || too_big) {
        free(text);
        cli_error("reassign: %s: %s", path,
                  too_big ? "larger than 4 MiB" : "out of memory");
        return CLI_EXIT_FAILED;
    }
    char err[256];
    int rv = reassign_plan_parse(text, len, plan, err, sizeof err);
    free(text);
    if (rv != RC_OK) {
        cli_error("reassign: %s: %s", path, err);
        return CLI_EXIT_FAILED;
    }
    return -1;
}

/* Sends the plan's targets; prints each partition's outcome. */
static int execute(struct ctl_client *cc, const struct reassign_plan *plan,
                   bool quiet)
{
    Cairn__ReassignmentTarget *ts = calloc(plan->n + 1, sizeof *ts);
    Cairn__ReassignmentTarget **ptrs = calloc(plan->n + 1, sizeof *ptrs);
    if (ts == NULL || ptrs == NULL) {
        free(ts);
        free(ptrs);
        cli_error("reassign: out of memory");
        return CLI_EXIT_FAILED;
    }
    for (size_t i = 0; i < plan->n; i++) {
        cairn__reassignment_target__init(&ts[i]);
        ts[i].topic = plan->moves[i].topic;
        ts[i].has_partition = true;
        ts[i].partition = plan->moves[i].partition;
        ts[i].n_replicas = (size_t)plan->moves[i].to.n;
        ts[i].replicas = plan->moves[i].to.ids;
        ptrs[i] = &ts[i];
    }
    Cairn__AlterReassignmentsRequest ar =
        CAIRN__ALTER_REASSIGNMENTS_REQUEST__INIT;
    ar.n_partitions = plan->n;
    ar.partitions = ptrs;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_ALTER_REASSIGNMENTS;
    req.alter_reassignments = &ar;
    Cairn__Response *resp = call(cc, &req, "reassign");
    free(ptrs);
    free(ts);
    if (resp == NULL) {
        return CLI_EXIT_FAILED;
    }
    int rc = CLI_EXIT_OK;
    const Cairn__AlterReassignmentsResponse *r = resp->alter_reassignments;
    for (size_t i = 0; i < plan->n; i++) {
        const Cairn__ReassignmentResult *res =
            r != NULL && i < r->n_results ? r->results[i] : NULL;
        int16_t e = res != NULL ? (int16_t)res->error_code
                                : KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
        if (e != KAFKA_ERROR_NONE) {
            rc = CLI_EXIT_FAILED;
            printf("%s-%d: %s\n", plan->moves[i].topic,
                   (int)plan->moves[i].partition,
                   cli_kafka_error_text(e, res != NULL ? res->error_message
                                                       : NULL));
        } else if (!quiet) {
            printf("%s-%d: moving to ", plan->moves[i].topic,
                   (int)plan->moves[i].partition);
            print_set(stdout, plan->moves[i].to.ids,
                      (size_t)plan->moves[i].to.n);
            putchar('\n');
        }
    }
    cairn__response__free_unpacked(resp, NULL);
    return rc;
}

/* --- Status and cancel ---------------------------------------------------- */

static Cairn__Response *list(struct ctl_client *cc)
{
    Cairn__ListReassignmentsRequest lr =
        CAIRN__LIST_REASSIGNMENTS_REQUEST__INIT;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_LIST_REASSIGNMENTS;
    req.list_reassignments = &lr;
    return call(cc, &req, "reassign status");
}

static void print_moves(const Cairn__ListReassignmentsResponse *lr)
{
    if (lr == NULL || lr->n_reassignments == 0) {
        printf("no reassignment in progress\n");
        return;
    }
    for (size_t i = 0; i < lr->n_reassignments; i++) {
        const Cairn__OngoingReassignment *o = lr->reassignments[i];
        printf("%s-%d replicas ", o->topic != NULL ? o->topic : "",
               (int)o->partition);
        print_set(stdout, o->replicas, o->n_replicas);
        fputs(" adding ", stdout);
        print_set(stdout, o->adding_replicas, o->n_adding_replicas);
        fputs(" removing ", stdout);
        print_set(stdout, o->removing_replicas, o->n_removing_replicas);
        fputs(" isr ", stdout);
        print_set(stdout, o->isr, o->n_isr);
        size_t in = 0;
        for (size_t k = 0; k < o->n_adding_replicas; k++) {
            for (size_t m = 0; m < o->n_isr; m++) {
                in += o->isr[m] == o->adding_replicas[k];
            }
        }
        printf(" (%zu of %zu new replicas in sync)\n", in,
               o->n_adding_replicas);
    }
}

/* The reassignments in progress, or only topic-partition's when topic
 * is given, as plan's moves. CLI_EXIT_OK, or CLI_EXIT_FAILED (said
 * why). */
static int ongoing(struct ctl_client *cc, const char *topic,
                   int32_t partition, struct reassign_plan *plan)
{
    Cairn__Response *resp = list(cc);
    if (resp == NULL) {
        return CLI_EXIT_FAILED;
    }
    const Cairn__ListReassignmentsResponse *lr = resp->list_reassignments;
    size_t n = lr != NULL ? lr->n_reassignments : 0;
    plan->moves = calloc(n + 1, sizeof *plan->moves);
    if (plan->moves == NULL) {
        cairn__response__free_unpacked(resp, NULL);
        cli_error("reassign: out of memory");
        return CLI_EXIT_FAILED;
    }
    for (size_t i = 0; i < n; i++) {
        const Cairn__OngoingReassignment *o = lr->reassignments[i];
        const char *name = o->topic != NULL ? o->topic : "";
        if (topic != NULL &&
            (strcmp(topic, name) != 0 || partition != o->partition)) {
            continue;
        }
        snprintf(plan->moves[plan->n].topic, sizeof plan->moves[0].topic,
                 "%s", name);
        plan->moves[plan->n++].partition = o->partition;
    }
    cairn__response__free_unpacked(resp, NULL);
    return CLI_EXIT_OK;
}

static int cancel(struct ctl_client *cc, const char *topic, int32_t partition)
{
    struct reassign_plan plan = {0};
    if (ongoing(cc, topic, partition, &plan) != CLI_EXIT_OK) {
        return CLI_EXIT_FAILED;
    }
    if (plan.n == 0) {
        printf("no reassignment in progress%s\n",
               topic != NULL ? " for that partition" : "");
        reassign_plan_free(&plan);
        return topic != NULL ? CLI_EXIT_FAILED : CLI_EXIT_OK;
    }
    Cairn__ReassignmentTarget *ts = calloc(plan.n, sizeof *ts);
    Cairn__ReassignmentTarget **ptrs = calloc(plan.n, sizeof *ptrs);
    int rc = CLI_EXIT_FAILED;
    if (ts != NULL && ptrs != NULL) {
        for (size_t i = 0; i < plan.n; i++) {
            cairn__reassignment_target__init(&ts[i]);
            ts[i].topic = plan.moves[i].topic;
            ts[i].has_partition = ts[i].has_cancel = true;
            ts[i].partition = plan.moves[i].partition;
            ts[i].cancel = true;
            ptrs[i] = &ts[i];
        }
        Cairn__AlterReassignmentsRequest ar =
            CAIRN__ALTER_REASSIGNMENTS_REQUEST__INIT;
        ar.n_partitions = plan.n;
        ar.partitions = ptrs;
        Cairn__Request req = CAIRN__REQUEST__INIT;
        req.body_case = CAIRN__REQUEST__BODY_ALTER_REASSIGNMENTS;
        req.alter_reassignments = &ar;
        Cairn__Response *r = call(cc, &req, "reassign cancel");
        if (r != NULL) {
            rc = CLI_EXIT_OK;
            for (size_t i = 0; i < plan.n; i++) {
                const Cairn__AlterReassignmentsResponse *a =
                    r->alter_reassignments;
                int16_t e = a != NULL && i < a->n_results
                                ? (int16_t)a->results[i]->error_code
                                : KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
                printf("%s-%d: %s\n", plan.moves[i].topic,
                       (int)plan.moves[i].partition,
                       e == KAFKA_ERROR_NONE ? "cancelled"
                                             : cli_kafka_error_text(e, NULL));
                rc = e == KAFKA_ERROR_NONE ? rc : CLI_EXIT_FAILED;
            }
            cairn__response__free_unpacked(r, NULL);
        }
    }
    free(ts);
    free(ptrs);
    reassign_plan_free(&plan);
    return rc;
}

/* --- Commands ------------------------------------------------------------- */

struct reassign_args {
    int32_t add;
    int32_t remove;
    const char *topics;
    const char *output;
    const char *topic;
    int32_t partition;
    int n_pos;
};

static int parse(int argc, char **argv, struct reassign_args *a)
{
    *a = (struct reassign_args){.add = -1, .remove = -1, .partition = -1};
    const struct opts_spec specs[] = {
        {"--add-broker", OPTS_INT32, &a->add, 0, INT32_MAX},
        {"--remove-broker", OPTS_INT32, &a->remove, 0, INT32_MAX},
        {"--topics", OPTS_STRING, &a->topics, 0, 0},
        {"--output", OPTS_STRING, &a->output, 0, 0},
        {"--topic", OPTS_STRING, &a->topic, 0, 0},
        {"--partition", OPTS_INT32, &a->partition, 0, INT32_MAX},
    };
    return opts_parse(&reassign_cmd, argc, argv, 2, specs, ARRAY_LEN(specs),
                      &a->n_pos);
}

static int run_plan(const char *controllers, struct reassign_args *a)
{
    if ((a->add < 0) == (a->remove < 0)) {
        return opts_usage_error(&reassign_cmd,
                                "plan: give one of "
                                "--add-broker N and --remove-broker N");
    }
    struct reassign_plan plan;
    char topics[4096];
    snprintf(topics, sizeof topics, "%s", a->topics != NULL ? a->topics : "");
    int rc = compute(controllers, a->add, a->remove,
                     a->topics != NULL ? topics : NULL, &plan);
    if (rc >= 0) {
        return rc;
    }
    printf("Current partition replica assignment (save it to roll back):\n");
    reassign_plan_write_json(stdout, &plan, true);
    printf("\nProposed partition reassignment configuration (%zu "
           "partition%s to move):\n",
           plan.n, plan.n == 1 ? "" : "s");
    reassign_plan_write_json(stdout, &plan, false);
    rc = CLI_EXIT_OK;
    if (a->output != NULL) {
        FILE *f = fopen(a->output, "w");
        if (f == NULL) {
            cli_error("reassign: %s: %s", a->output, strerror(errno));
            rc = CLI_EXIT_FAILED;
        } else {
            reassign_plan_write_json(f, &plan, false);
            if (fclose(f) != 0) {
                cli_error("reassign: %s: %s", a->output, strerror(errno));
                rc = CLI_EXIT_FAILED;
            }
        }
    }
    reassign_plan_free(&plan);
    return rc;
}

static int run_execute(const char *controllers, char **argv,
                       struct reassign_args *a)
{
    bool computed = a->add >= 0 || a->remove >= 0;
    if ((a->n_pos == 1) == computed || a->n_pos > 1 ||
        (a->add >= 0 && a->remove >= 0)) {
        return opts_usage_error(&reassign_cmd, "execute: give a plan file, "
                                               "or one of --add-broker N and "
                                               "--remove-broker N");
    }
    struct reassign_plan plan;
    char topics[4096];
    snprintf(topics, sizeof topics, "%s", a->topics != NULL ? a->topics : "");
    int rc = computed ? compute(controllers, a->add, a->remove,
                                a->topics != NULL ? topics : NULL, &plan)
                      : read_plan(argv[2], &plan);
    if (rc >= 0) {
        return rc;
    }
    struct ctl_client cc;
    rc = cc_connect(&cc, controllers);
    if (rc < 0) {
        rc = plan.n == 0 ? CLI_EXIT_OK : execute(&cc, &plan, false);
        if (plan.n == 0) {
            printf("nothing to move\n");
        }
        ctl_client_close(&cc);
    }
    reassign_plan_free(&plan);
    return rc;
}

int reassign_main(int argc, char **argv, const char *controllers)
{
    if (argc < 2 || opts_is_help(argv[1])) {
        return argc < 2 ? opts_usage_error(&reassign_cmd,
                                           "missing "
                                           "plan|execute|status|cancel")
                        : opts_help(&reassign_cmd);
    }
    struct reassign_args a;
    int rc = parse(argc, argv, &a);
    if (rc >= 0) {
        return rc;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "plan") == 0) {
        return run_plan(controllers, &a);
    }
    if (strcmp(sub, "execute") == 0) {
        return run_execute(controllers, argv, &a);
    }
    if (strcmp(sub, "status") != 0 && strcmp(sub, "cancel") != 0) {
        return opts_usage_error(&reassign_cmd, "unknown subcommand '%s'",
                                sub);
    }
    bool is_cancel = strcmp(sub, "cancel") == 0;
    if (is_cancel && (a.topic == NULL) != (a.partition < 0)) {
        return opts_usage_error(&reassign_cmd, "cancel: --topic and "
                                               "--partition go together");
    }
    struct ctl_client cc;
    rc = cc_connect(&cc, controllers);
    if (rc >= 0) {
        return rc;
    }
    if (is_cancel) {
        rc = cancel(&cc, a.topic, a.partition);
    } else {
        Cairn__Response *resp = list(&cc);
        rc = resp != NULL ? CLI_EXIT_OK : CLI_EXIT_FAILED;
        if (resp != NULL) {
            print_moves(resp->list_reassignments);
            cairn__response__free_unpacked(resp, NULL);
        }
    }
    ctl_client_close(&cc);
    return rc;
}

/* --- Decommission --------------------------------------------------------- */

static void pause_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Replicas broker id still holds, and partitions still moving; -1 when
 * no controller answered. */
static int64_t replicas_on(struct ctl_client *cc, int32_t id, int64_t *moving)
{
    struct cluster_view v;
    int rv = cluster_describe(cc, &v);
    int64_t n = rv == RC_OK ? 0 : -1;
    *moving = 0;
    for (size_t t = 0; rv == RC_OK && t < v.image.n_topics; t++) {
        const struct meta_topic *topic = &v.image.topics[t];
        for (int32_t p = 0; p < topic->n_partitions; p++) {
            const struct meta_partition *mp = &topic->partitions[p];
            n += meta_replica_set_contains(&mp->replicas, id);
            *moving += mp->adding.n > 0 || mp->removing.n > 0;
        }
    }
    cluster_view_free(&v);
    return n;
}

static int unregister(struct ctl_client *cc, int32_t id)
{
    Cairn__UnregisterBrokerRequest ur =
        CAIRN__UNREGISTER_BROKER_REQUEST__INIT;
    ur.has_broker_id = true;
    ur.broker_id = id;
    Cairn__Request req = CAIRN__REQUEST__INIT;
    req.body_case = CAIRN__REQUEST__BODY_UNREGISTER_BROKER;
    req.unregister_broker = &ur;
    Cairn__Response *resp = call(cc, &req, "brokers decommission");
    if (resp == NULL) {
        return CLI_EXIT_FAILED;
    }
    cairn__response__free_unpacked(resp, NULL);
    printf("broker %d unregistered\n", (int)id);
    return CLI_EXIT_OK;
}

/* Waits (printing progress) until broker id holds no replica. */
static int wait_moved_off(struct ctl_client *cc, int32_t id,
                          uint64_t timeout_ms)
{
    int64_t start = cli_mono_ms();
    int64_t last = -2;
    for (;;) {
        int64_t moving = 0;
        int64_t left = replicas_on(cc, id, &moving);
        if (left == 0) {
            printf("broker %d holds no replica\n", (int)id);
            return CLI_EXIT_OK;
        }
        if (left != last && left > 0) {
            printf("broker %d: %" PRId64 " replica%s left, %" PRId64
                   " partition%s moving\n",
                   (int)id, left, left == 1 ? "" : "s", moving,
                   moving == 1 ? "" : "s");
            fflush(stdout);
            last = left;
        }
        if ((uint64_t)(cli_mono_ms() - start) >= timeout_ms) {
            cli_error("brokers decommission: broker %d still holds %" PRId64
                      " replicas after %" PRIu64 " ms (see `cairn reassign "
                      "status`)",
                      (int)id, left, timeout_ms);
            return CLI_EXIT_FAILED;
        }
        pause_ms(REASSIGN__POLL_MS);
    }
}

/* A running broker registers again after UnregisterBroker (as in Kafka):
 * waits until broker id is fenced (its process stopped), saying so once. */
static int wait_stopped(struct ctl_client *cc, int32_t id,
                        uint64_t timeout_ms)
{
    int64_t start = cli_mono_ms();
    bool told = false;
    for (;;) {
        struct cluster_view v;
        int rv = cluster_describe(cc, &v);
        const struct meta_broker *b =
            rv == RC_OK ? meta_image_broker(&v.image, id) : NULL;
        bool fenced = rv == RC_OK && (b == NULL || b->fenced);
        cluster_view_free(&v);
        if (fenced) {
            return CLI_EXIT_OK;
        }
        if (!told) {
            printf("broker %d is still running: stop its process (e.g. "
                   "deploy/cluster.sh stop broker-%d) to unregister it; "
                   "waiting\n",
                   (int)id, (int)id);
            fflush(stdout);
            told = true;
        }
        if ((uint64_t)(cli_mono_ms() - start) >= timeout_ms) {
            cli_error(
                "brokers decommission: broker %d still runs after %" PRIu64
                " ms; unregister it once stopped by running "
                "this again",
                (int)id, timeout_ms);
            return CLI_EXIT_FAILED;
        }
        pause_ms(REASSIGN__POLL_MS);
    }
}

int brokers_main(int argc, char **argv, const char *controllers)
{
    const char *timeout = NULL;
    const struct opts_spec specs[] = {
        {"--timeout", OPTS_STRING, &timeout, 0, 0},
    };
    int n_pos = 0;
    if (argc < 2 || opts_is_help(argv[1])) {
        return argc < 2 ? opts_usage_error(&brokers_cmd, "missing "
                                                         "decommission")
                        : opts_help(&brokers_cmd);
    }
    int rc = opts_parse(&brokers_cmd, argc, argv, 2, specs, ARRAY_LEN(specs),
                        &n_pos);
    if (rc >= 0) {
        return rc;
    }
    int32_t id = -1;
    uint64_t timeout_ms = 600000;
    if (strcmp(argv[1], "decommission") != 0 || n_pos != 1 ||
        !cli_parse_int32(argv[2], 0, INT32_MAX, &id) ||
        (timeout != NULL && !opts_parse_duration_ms(timeout, &timeout_ms))) {
        return opts_usage_error(&brokers_cmd, "expected decommission N "
                                              "[--timeout DURATION]");
    }
    struct reassign_plan plan;
    rc = compute(controllers, -1, id, NULL, &plan);
    if (rc >= 0) {
        return rc;
    }
    struct ctl_client cc;
    rc = cc_connect(&cc, controllers);
    if (rc >= 0) {
        reassign_plan_free(&plan);
        return rc;
    }
    printf("moving %zu partition%s off broker %d\n", plan.n,
           plan.n == 1 ? "" : "s", (int)id);
    rc = plan.n == 0 ? CLI_EXIT_OK : execute(&cc, &plan, false);
    reassign_plan_free(&plan);
    if (rc == CLI_EXIT_OK) {
        rc = wait_moved_off(&cc, id, timeout_ms);
    }
    if (rc == CLI_EXIT_OK) {
        rc = wait_stopped(&cc, id, timeout_ms);
    }
    if (rc == CLI_EXIT_OK) {
        rc = unregister(&cc, id);
    }
    ctl_client_close(&cc);
    return rc;
}
