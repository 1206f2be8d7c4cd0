/* `cairn groups` (cli/cmd/groups/groups.h). */
#include "cli/cmd/groups/groups.h"

#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "cli/cmd/groups/groups_describe.h"
#include "cli/util/opts.h"
#include "cli/util/table.h"
#include "cli/cmd/status/view.h"
#include "common/rc.h"

void groups_usage(FILE *out)
{
    fputs("  groups list\n"
          "      Consumer group ids, one a line, sorted.\n"
          "  groups describe GROUP [--json]\n"
          "      The group's state, protocol and members (client id, host,\n"
          "      assigned partitions), and for each partition it has an\n"
          "      offset for or is assigned: the committed offset, the high\n"
          "      watermark and the lag (HW - committed).\n"
          "  groups delete GROUP...\n"
          "      Deletes empty groups and their committed offsets.\n",
          out);
}

static const struct opts_cmd groups_cmd = {"groups", groups_usage};

static int parse_subcommand(const char *sub, enum groups_cmd *cmd)
{
    static const char *const subs[] = {"list", "describe", "delete"};
    static const enum groups_cmd cmds[] = {GROUPS_LIST, GROUPS_DESCRIBE,
                                           GROUPS_DELETE};
    for (size_t k = 0; k < ARRAY_LEN(subs); k++) {
        if (strcmp(sub, subs[k]) == 0) {
            *cmd = cmds[k];
            return -1;
        }
    }
    return opts_usage_error(&groups_cmd,
                            "unknown subcommand '%s' (list, "
                            "describe, delete)",
                            sub);
}

/* What each subcommand takes besides its options. */
static int check_names(const struct groups_opts *o)
{
    if (o->cmd == GROUPS_LIST && o->n_names != 0) {
        return opts_usage_error(&groups_cmd,
                                "list: unexpected argument "
                                "'%s'",
                                o->names[0]);
    }
    if (o->cmd == GROUPS_DESCRIBE && o->n_names != 1) {
        return opts_usage_error(&groups_cmd,
                                "describe: expected one group, "
                                "got %zu",
                                o->n_names);
    }
    if (o->cmd == GROUPS_DELETE && o->n_names == 0) {
        return opts_usage_error(&groups_cmd, "delete: expected groups");
    }
    if (o->json && o->cmd != GROUPS_DESCRIBE) {
        return opts_usage_error(&groups_cmd, "--json goes with describe");
    }
    for (size_t i = 0; i < o->n_names; i++) {
        if (o->names[i][0] == '\0') {
            return opts_usage_error(&groups_cmd, "a group id is empty");
        }
    }
    return -1;
}

int groups_parse(int argc, char **argv, struct groups_opts *o)
{
    memset(o, 0, sizeof *o);
    if (argc < 2) {
        return opts_usage_error(&groups_cmd, "missing subcommand (list, "
                                             "describe, delete)");
    }
    if (opts_is_help(argv[1])) {
        return opts_help(&groups_cmd);
    }
    int rc = parse_subcommand(argv[1], &o->cmd);
    if (rc >= 0) {
        return rc;
    }
    const struct opts_spec specs[] = {
        {"--json", OPTS_FLAG, &o->json, 0, 0},
    };
    int n_pos = 0;
    rc = opts_parse(&groups_cmd, argc, argv, 2, specs, ARRAY_LEN(specs),
                    &n_pos);
    if (rc >= 0) {
        return rc;
    }
    o->names = argv + 2;
    o->n_names = (size_t)n_pos;
    return check_names(o);
}

/* --- List ---------------------------------------------------------------- */

static int id_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Errors of the brokers that did not answer; true when there were any. */
static bool report_list_errors(const rd_kafka_ListConsumerGroups_result_t *r)
{
    size_t n = 0;
    const rd_kafka_error_t **errs =
        rd_kafka_ListConsumerGroups_result_errors(r, &n);
    for (size_t i = 0; i < n; i++) {
        struct kclient_error e;
        kclient_error_set(&e, rd_kafka_error_code(errs[i]),
                          rd_kafka_error_string(errs[i]));
        kclient_error_print("groups list", &e);
    }
    return n > 0;
}

/* Prints the ids of a ListConsumerGroups result, sorted, each once (two
 * brokers may both list a group while its coordinator moves). */
static int print_listing_cb(rd_kafka_t *rk, rd_kafka_event_t *ev,
                            const void *arg)
{
    (void)rk;
    (void)arg;
    const rd_kafka_ListConsumerGroups_result_t *r =
        rd_kafka_event_ListConsumerGroups_result(ev);
    size_t n = 0;
    const rd_kafka_ConsumerGroupListing_t **gs =
        rd_kafka_ListConsumerGroups_result_valid(r, &n);
    const char **ids = calloc(n + 1, sizeof *ids);
    if (ids == NULL) {
        cli_error("groups list: out of memory");
        return CLI_EXIT_FAILED;
    }
    for (size_t i = 0; i < n; i++) {
        ids[i] = rd_kafka_ConsumerGroupListing_group_id(gs[i]);
    }
    qsort(ids, n, sizeof *ids, id_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(ids[i], ids[i - 1]) == 0) {
            continue;
        }
        char shown[TABLE_CELL_BYTES_MAX];
        cli_printable(ids[i], shown, sizeof shown);
        printf("%s\n", shown);
    }
    free(ids);
    return report_list_errors(r) ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}

static int send_list_cb(rd_kafka_t *rk, rd_kafka_AdminOptions_t *opts,
                        rd_kafka_queue_t *q, const void *arg,
                        struct kclient_error *e)
{
    (void)arg;
    (void)e;
    rd_kafka_ListConsumerGroups(rk, opts, q);
    return RC_OK;
}

static int run_list(rd_kafka_t *rk)
{
    return kclient_admin_run(rk, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPS,
                             "groups list", send_list_cb, print_listing_cb,
                             NULL);
}

/* --- Delete -------------------------------------------------------------- */

/* Each group's result of a DeleteGroups event, printed. */
static int report_delete_cb(rd_kafka_t *rk, rd_kafka_event_t *ev,
                            const void *arg)
{
    (void)rk;
    (void)arg;
    size_t n = 0;
    const rd_kafka_group_result_t **rs = rd_kafka_DeleteGroups_result_groups(
        rd_kafka_event_DeleteGroups_result(ev), &n);
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        char shown[TABLE_CELL_BYTES_MAX];
        cli_printable(rd_kafka_group_result_name(rs[i]), shown, sizeof shown);
        const rd_kafka_error_t *err = rd_kafka_group_result_error(rs[i]);
        if (err == NULL) {
            printf("deleted group %s\n", shown);
            continue;
        }
        char what[TABLE_CELL_BYTES_MAX + 32];
        struct kclient_error e;
        snprintf(what, sizeof what, "groups delete %s", shown);
        kclient_error_set(&e, rd_kafka_error_code(err),
                          rd_kafka_error_string(err));
        kclient_error_print(what, &e);
        rc = CLI_EXIT_FAILED;
    }
    return rc;
}

/* DeleteGroups for every name (arg: the groups_opts). */
static int send_delete_cb(rd_kafka_t *rk, rd_kafka_AdminOptions_t *opts,
                          rd_kafka_queue_t *q, const void *arg,
                          struct kclient_error *e)
{
    const struct groups_opts *o = arg;
    rd_kafka_DeleteGroup_t **dgs = calloc(o->n_names, sizeof *dgs);
    if (dgs == NULL) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, "out of memory");
        return RC_NOMEM;
    }
    for (size_t i = 0; i < o->n_names; i++) {
        dgs[i] = rd_kafka_DeleteGroup_new(o->names[i]);
    }
    rd_kafka_DeleteGroups(rk, dgs, o->n_names, opts, q);
    rd_kafka_DeleteGroup_destroy_array(dgs, o->n_names);
    free(dgs);
    return RC_OK;
}

static int run_delete(rd_kafka_t *rk, const struct groups_opts *o)
{
    return kclient_admin_run(rk, RD_KAFKA_ADMIN_OP_DELETEGROUPS,
                             "groups delete", send_delete_cb,
                             report_delete_cb, o);
}

/* --- Run ----------------------------------------------------------------- */

int groups_run(const struct kclient_opts *k, const struct groups_opts *o)
{
    struct kclient_error e;
    rd_kafka_t *rk = kclient_admin_new(k, &e);
    if (rk == NULL) {
        kclient_error_print("groups", &e);
        return CLI_EXIT_FAILED;
    }
    int rc = CLI_EXIT_FAILED;
    switch (o->cmd) {
    case GROUPS_LIST:
        rc = run_list(rk);
        break;
    case GROUPS_DESCRIBE:
        rc = groups_describe_run(rk, o->names[0], o->json);
        break;
    case GROUPS_DELETE:
        rc = run_delete(rk, o);
        break;
    }
    rd_kafka_destroy(rk);
    return rc;
}
