/* The cluster page's lab bench (cli/cmd/web/lab.c): when it is on, what it
 * refuses, and what it runs. The script is a stand-in that prints its
 * arguments, named by CAIRN_CLUSTER_SH. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd/web/lab.h"
#include "cli/util/cli.h"

static char dir[64];
static char script[128];
static struct lab l;

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/cairn-test-lab-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(script, sizeof script, "%s/cluster.sh", dir);
    write_file(script, "#!/bin/sh\necho \"ran $1 $2\"\n", 0700);
    setenv("CAIRN_CLUSTER_SH", script, 1);
    setenv("CAIRN_DATA", dir, 1);
}

static void teardown(void)
{
    char path[160];
    snprintf(path, sizeof path, "%s/lab", dir);
    unlink(path);
    unlink(script);
    rmdir(dir);
    unsetenv("CAIRN_CLUSTER_SH");
    unsetenv("CAIRN_DATA");
}

static void mark(int base_port)
{
    char path[160];
    char text[32];
    snprintf(path, sizeof path, "%s/lab", dir);
    snprintf(text, sizeof text, "base_port=%d\n", base_port);
    write_file(path, text, 0600);
}

static int run(const char *action, const char *node)
{
    char msg[256];
    return lab_run(&l, action, strlen(action), node, strlen(node),
                   cli_wall_ms(), msg, sizeof msg);
}

Test(lab, off_without_the_flag_or_the_marker, .init = setup, .fini = teardown)
{
    lab_init(&l, false, true, 19000, "127.0.0.1");
    cr_assert_not(l.enabled);
    cr_assert_eq(run("kill", "broker-2"), 403);
    cr_assert_eq(run("load-start", ""), 403);
}

Test(lab, on_for_the_local_cluster_its_marker_names, .init = setup,
     .fini = teardown)
{
    mark(19000);
    lab_init(&l, false, true, 19000, "127.0.0.1");
    cr_assert(l.enabled, "%s", l.why);
    lab_init(&l, false, true, 19100, "127.0.0.1");
    cr_assert_not(l.enabled, "another base port is another cluster");
    lab_init(&l, false, false, 19000, "127.0.0.1");
    cr_assert_not(l.enabled, "controllers named elsewhere");
}

Test(lab, never_on_unless_on_127_0_0_1, .init = setup, .fini = teardown)
{
    mark(19000);
    lab_init(&l, true, true, 19000, "0.0.0.0");
    cr_assert_not(l.enabled);
    cr_assert(strstr(l.why, "127.0.0.1") != NULL, "%s", l.why);
    cr_assert_eq(run("kill", "broker-2"), 403);
}

Test(lab, refuses_what_is_off_the_allowlists, .init = setup, .fini = teardown)
{
    lab_init(&l, true, false, 0, "127.0.0.1");
    cr_assert(l.enabled, "%s", l.why);
    cr_assert_eq(run("kill", "broker-2;id"), 400);
    cr_assert_eq(run("kill", "broker-"), 400);
    cr_assert_eq(run("kill", ""), 400);
    cr_assert_eq(run("add", "broker-4"), 400);
    cr_assert_eq(run("killall", "broker-2"), 400);
    cr_assert_eq(run("load-stop", ""), 409, "no load runs");
    cr_assert_eq(l.next_id, 1, "nothing ran");
}

Test(lab, runs_the_script_with_the_allowlisted_words, .init = setup,
     .fini = teardown)
{
    lab_init(&l, true, false, 0, "127.0.0.1");
    cr_assert_eq(run("pause", "controller-102"), 202);
    const struct lab_action *a = &l.actions[0];
    int64_t deadline = cli_mono_ms() + 5000;
    while (a->pid > 0 && cli_mono_ms() < deadline) {
        lab_reap(&l, cli_wall_ms());
        usleep(10 * 1000);
    }
    cr_assert_eq(a->pid, 0, "the script exited and was reaped");
    cr_assert_eq(a->exit_code, 0);
    cr_assert_str_eq(a->verb, "pause");
    cr_assert_str_eq(a->node, "controller-102");
    cr_assert_str_eq(a->output, "ran pause controller-102\n");
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    lab_json(&l, f);
    fclose(f);
    cr_assert(strstr(doc, "\"action\":\"pause\",\"node\":\"controller-102\","
                          "\"state\":\"ok\"") != NULL,
              "%s", doc);
    free(doc);
}
