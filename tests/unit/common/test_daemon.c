/* Tests for common/daemon.c: the command line and configuration start-up
 * both daemons share. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/daemon.h"
#include "common/rc.h"
#include "tests/lib/tmpdir.h"

static const struct config_def defs[] = {
    {"node.id", CONFIG_INT, NULL, 0, 2147483647, "id"},
    {"listeners", CONFIG_LIST, NULL, 0, 0, "listener"},
    DAEMON_CONFIG_SHARED_DEFS,
};

static char dir[4096];
static char path[4200];

static void setup(void)
{
    tmpdir_make(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/d.properties", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("node.id=3\nlisteners=PLAINTEXT://127.0.0.1:9092\n"
          "controller.quorum.voters=1@127.0.0.1:9100,2@127.0.0.1:9101\n"
          "log.level=warn\n", f);
    fclose(f);
}

static void teardown(void)
{
    tmpdir_remove(dir);
}

static int load(struct config **cfg, struct tracer *t, int argc, char **argv)
{
    return daemon_config_load(cfg, "test", argc, argv, defs,
                              sizeof defs / sizeof defs[0], t);
}

Test(daemon, loads_file_applies_overrides_and_log_level, .init = setup,
     .fini = teardown)
{
    char o1[] = "--override", v1[] = "node.id=7";
    char *argv[] = {"prog", path, o1, v1};
    struct tracer t;
    trace_init_stderr(&t, TRACE_LEVEL_INFO, "test");
    struct config *cfg = NULL;
    cr_assert_eq(load(&cfg, &t, 4, argv), RC_OK);
    cr_expect_eq(config_int(cfg, "node.id"), 7);
    cr_expect_eq(config_long(cfg, "broker.session.timeout.ms"), 9000);
    cr_expect_eq(t.level, TRACE_LEVEL_WARN);
    struct addr l;
    cr_assert_eq(daemon_config_listener(cfg, "test", "listeners", &l), RC_OK);
    cr_expect_str_eq(l.host, "127.0.0.1");
    cr_expect_eq(l.port, 9092);
    struct addr_voter v[4];
    size_t n = 0;
    cr_assert_eq(daemon_config_voters(cfg, "test", "controller.quorum.voters",
                                      v, 4, &n),
                 RC_OK);
    cr_expect_eq(n, 2);
    cr_expect_eq(v[1].id, 2);
    config_free(cfg);
}

Test(daemon, usage_and_bad_overrides_are_refused, .init = setup,
     .fini = teardown)
{
    struct tracer t;
    trace_init_stderr(&t, TRACE_LEVEL_INFO, "test");
    struct config *cfg = NULL;
    char *one[] = {"prog"};
    cr_expect_eq(load(&cfg, &t, 1, one), RC_INVALID);
    char o[] = "--override", bad[] = "node.id";
    char *no_eq[] = {"prog", path, o, bad};
    cr_expect_eq(load(&cfg, &t, 4, no_eq), RC_CONFIG);
    cr_expect_null(cfg);
    char range[] = "node.id=-5";
    char *out_of_range[] = {"prog", path, o, range};
    cr_expect_eq(load(&cfg, &t, 4, out_of_range), RC_CONFIG);
    char nofile[] = "/nonexistent/cairn.properties";
    char *missing[] = {"prog", nofile};
    cr_expect_eq(load(&cfg, &t, 2, missing), RC_CONFIG);
}

Test(daemon, listener_and_voters_errors_name_the_key, .init = setup,
     .fini = teardown)
{
    char o[] = "--override", l[] = "listeners=nonsense",
         v[] = "controller.quorum.voters=1@a:1,1@b:2";
    char *argv[] = {"prog", path, o, l, o, v};
    struct tracer t;
    trace_init_stderr(&t, TRACE_LEVEL_INFO, "test");
    struct config *cfg = NULL;
    cr_assert_eq(load(&cfg, &t, 6, argv), RC_OK);
    struct addr a;
    cr_expect_eq(daemon_config_listener(cfg, "test", "listeners", &a),
                 RC_CONFIG);
    struct addr_voter vs[4];
    size_t n = 0;
    cr_expect_eq(daemon_config_voters(cfg, "test",
                                      "controller.quorum.voters", vs, 4, &n),
                 RC_CONFIG, "duplicate ids");
    config_free(cfg);
}
