/* cairn: the command-line client of a Cairn cluster.
 *     cairn [--controllers ID@HOST:PORT,...] COMMAND [ARGS]
 * Parses the global options, then hands the command its arguments
 * (cli/status.c, cli/topics.c), which talk to the controllers through a
 * blocking client (cli/ctl_client.c). Exit status: 0 success, 1 the
 * operation failed, 2 a usage error. One thread. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/ctl_client.h"
#include "cli/status.h"
#include "cli/topics.h"
#include "common/rc.h"
#include "common/trace.h"

/* The local cluster's controllers (deploy/cluster.sh). */
#define CLI__CONTROLLERS_DEFAULT                                       \
    "101@127.0.0.1:19101,102@127.0.0.1:19102,103@127.0.0.1:19103"

static void usage(FILE *out)
{
    fputs(CLI_USAGE_LINE
          "\n"
          "Global options:\n"
          "  --controllers LIST\n"
          "      The controller quorum, id@host:port of each controller's\n"
          "      RPC listener. Default: $CAIRN_CONTROLLERS, else\n"
          "      " CLI__CONTROLLERS_DEFAULT ".\n"
          "  -h, --help\n"
          "      This text.\n"
          "\n"
          "Commands:\n",
          out);
    status_usage(out);
    topics_usage(out);
    fputs("  help\n"
          "      This text.\n"
          "\n"
          "Environment: CAIRN_CONTROLLERS (see above); CAIRN_LOG=debug|info|"
          "warn\n"
          "logs the RPC layer to stderr.\n"
          "Exit status: 0 success, 1 the operation failed, 2 usage error.\n",
          out);
}

static int usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_error("%s", msg);
    usage(stderr);
    return CLI_EXIT_USAGE;
}

static bool is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 ||
           strcmp(arg, "help") == 0;
}

/* Global options before the command; *i ends on the command. Returns -1
 * to go on, or the exit code. */
static int parse_globals(int argc, char **argv, int *i,
                         const char **controllers)
{
    for (*i = 1; *i < argc && argv[*i][0] == '-'; (*i)++) {
        if (is_help(argv[*i])) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        int r = cli_option(argc, argv, i, "--controllers", controllers);
        if (r < 0) {
            return usage_error("%s needs a value", "--controllers");
        }
        if (r == 0) {
            return usage_error("unknown option '%s'", argv[*i]);
        }
    }
    if (*i == argc) {
        return usage_error("%s", "missing command");
    }
    if (is_help(argv[*i])) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    return -1;
}

/* CAIRN_LOG=LEVEL shows the RPC layer's log lines; silent otherwise. */
static struct tracer *env_tracer(struct tracer *t)
{
    const char *name = getenv("CAIRN_LOG");
    if (name == NULL || name[0] == '\0') {
        return NULL;
    }
    int level = trace_level_parse(name);
    if (level < 0) {
        cli_error("CAIRN_LOG=%s: expected debug, info, warn, error or off; "
                  "ignored", name);
        return NULL;
    }
    trace_init_stderr(t, (enum trace_level)level, "cairn");
    return t;
}

/* Runs a parsed command: status when st is set, else topics. */
static int run(const char *controllers, const struct status_opts *st,
               const struct topics_opts *tp)
{
    struct tracer tracer;
    struct ctl_client cc;
    char err[CTL_CLIENT_ERROR_BYTES];
    int rv = ctl_client_init(&cc, controllers, env_tracer(&tracer), err,
                             sizeof err);
    if (rv == RC_INVALID) {
        cli_error("%s", err);
        fputs(CLI_USAGE_LINE "(cairn --help describes the commands)\n",
              stderr);
        return CLI_EXIT_USAGE;
    }
    if (rv != RC_OK) {
        cli_error("%s", err);
        return CLI_EXIT_FAILED;
    }
    int rc = st != NULL ? status_run(&cc, st) : topics_run(&cc, tp);
    ctl_client_close(&cc);
    return rc;
}

int main(int argc, char **argv)
{
    /* A controller closing its socket mid-write must give EPIPE, not kill
     * the process; so does a closed stdout, reported on exit. */
    signal(SIGPIPE, SIG_IGN);
    const char *controllers = getenv("CAIRN_CONTROLLERS");
    if (controllers == NULL || controllers[0] == '\0') {
        controllers = CLI__CONTROLLERS_DEFAULT;
    }
    int i = 0;
    int rc = parse_globals(argc, argv, &i, &controllers);
    if (rc >= 0) {
        return cli_finish_output(rc);
    }
    static struct topics_opts topics; /* 16 KiB of --config pointers */
    struct status_opts status;
    bool is_status = strcmp(argv[i], "status") == 0;
    if (is_status) {
        rc = status_parse(argc - i, argv + i, &status);
    } else if (strcmp(argv[i], "topics") == 0) {
        rc = topics_parse(argc - i, argv + i, &topics);
    } else {
        return usage_error("unknown command '%s'", argv[i]);
    }
    if (rc < 0) {
        rc = run(controllers, is_status ? &status : NULL, &topics);
    }
    return cli_finish_output(rc);
}
