/* `cairn topics alter` (cli/cmd/topics/topics_alter.h). */
#include "cli/cmd/topics/topics_alter.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/util/cli.h"
#include "cli/client/kclient.h"
#include "common/rc.h"

/* CreatePartitions of o->names[0] to o->partitions. */
static int send_cb(rd_kafka_t *rk, rd_kafka_AdminOptions_t *opts,
                   rd_kafka_queue_t *q, const void *arg,
                   struct kclient_error *e)
{
    const struct topics_opts *o = arg;
    char why[256];
    rd_kafka_NewPartitions_t *np = rd_kafka_NewPartitions_new(
        o->names[0], (size_t)o->partitions, why, sizeof why);
    if (np == NULL) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR__INVALID_ARG, why);
        return RC_INVALID;
    }
    rd_kafka_CreatePartitions(rk, &np, 1, opts, q);
    rd_kafka_NewPartitions_destroy(np);
    return RC_OK;
}

static int report_cb(rd_kafka_t *rk, rd_kafka_event_t *ev, const void *arg)
{
    const struct topics_opts *o = arg;
    size_t n = 0;
    const rd_kafka_topic_result_t **rs =
        rd_kafka_CreatePartitions_result_topics(
            rd_kafka_event_CreatePartitions_result(ev), &n);
    char what[META_TOPIC_NAME_BYTES_MAX + 32];
    snprintf(what, sizeof what, "topics alter %s", o->names[0]);
    struct kclient_error e;
    if (n != 1) {
        kclient_error_set(&e, RD_KAFKA_RESP_ERR__BAD_MSG, "no result");
        kclient_error_print(what, &e);
        return CLI_EXIT_FAILED;
    }
    rd_kafka_resp_err_t err = rd_kafka_topic_result_error(rs[0]);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        kclient_error_set(&e, err, rd_kafka_topic_result_error_string(rs[0]));
        kclient_error_print(what, &e);
        return CLI_EXIT_FAILED;
    }
    printf("topic %s now has %d partitions\n", o->names[0],
           (int)o->partitions);
    fprintf(stderr,
            "warning: records with keys now hash over %d "
            "partitions: a key's new records may go to another partition "
            "than its earlier ones, so per-key order across the change is "
            "not kept\n",
            (int)o->partitions);
    /* Done once every broker serves the new count, so a script can go on
     * (its next command may ask another broker). */
    if (kclient_wait_topic(rk, o->names[0], true /* exists */, o->partitions,
                           KCLIENT_TIMEOUT_MS, &e) != RC_OK) {
        snprintf(what, sizeof what, "warning: topics alter %s", o->names[0]);
        kclient_error_print(what, &e);
    }
    return CLI_EXIT_OK;
}

int topics_alter_run(rd_kafka_t *rk, const struct topics_opts *o)
{
    return kclient_admin_run(rk, RD_KAFKA_ADMIN_OP_CREATEPARTITIONS,
                             "topics alter", send_cb, report_cb, o);
}
