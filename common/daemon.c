/* Daemon start-up shared by both daemons (common/daemon.h). */
#include "common/daemon.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/event_ring.h"
#include "common/io.h"
#include "common/rc.h"

#define DAEMON__ERROR_BYTES 512

static int apply_overrides(struct config *cfg, int argc, char **argv,
                           char *err, size_t err_len)
{
    for (int i = 2; i + 1 < argc; i += 2) {
        char *eq = strcmp(argv[i], "--override") == 0
                       ? strchr(argv[i + 1], '=')
                       : NULL;
        if (eq == NULL) {
            snprintf(err, err_len, "expected --override key=value");
            return RC_CONFIG;
        }
        *eq = '\0';
        int rv = config_set(cfg, argv[i + 1], eq + 1, err, err_len);
        if (rv != RC_OK) {
            return rv;
        }
    }
    return RC_OK;
}

int daemon_config_load(struct config **out, const char *prog, int argc,
                       char **argv, const struct config_def *defs,
                       size_t n_defs, struct tracer *t)
{
    *out = NULL;
    if (argc < 2 || argc % 2 != 0) {
        fprintf(stderr, "usage: %s CONFIG [--override key=value ...]\n",
                prog);
        return RC_INVALID;
    }
    char err[DAEMON__ERROR_BYTES];
    struct config *cfg = NULL;
    int rv = config_load_file(&cfg, argv[1], defs, n_defs, t, err,
                              sizeof err);
    if (rv == RC_OK) {
        rv = apply_overrides(cfg, argc, argv, err, sizeof err);
    }
    if (rv != RC_OK) {
        fprintf(stderr, "%s: %s\n", prog,
                rv == RC_NOMEM ? rc_str(rv) : err);
        config_free(cfg);
        return rv;
    }
    int level = trace_level_parse(config_string(cfg, "log.level"));
    t->level = level < 0 ? TRACE_LEVEL_INFO : (enum trace_level)level;
    if (io_fault_from_env() != RC_OK) {
        fprintf(stderr, "%s: CAIRN_IO_FAULTS: not a fault spec (see "
                "common/io.h)\n", prog);
        config_free(cfg);
        return RC_CONFIG;
    }
    if (getenv("CAIRN_IO_FAULTS") != NULL) {
        TRACE_WARN(t, "disk faults injected: CAIRN_IO_FAULTS=%s",
                   getenv("CAIRN_IO_FAULTS"));
    }
    *out = cfg;
    return RC_OK;
}

int daemon_config_listener(const struct config *cfg, const char *prog,
                           const char *key, struct addr *out)
{
    if (addr_parse_listener(config_list(cfg, key), out) != RC_OK) {
        fprintf(stderr, "%s: %s: expected NAME://host:port, got '%s'\n",
                prog, key, config_list(cfg, key));
        return RC_CONFIG;
    }
    return RC_OK;
}

int daemon_config_voters(const struct config *cfg, const char *prog,
                         const char *key, struct addr_voter *out, size_t max,
                         size_t *n)
{
    if (addr_parse_voters(config_list(cfg, key), out, max, n) != RC_OK) {
        fprintf(stderr, "%s: %s: expected id@host:port,... with distinct "
                "ids, got '%s'\n", prog, key, config_list(cfg, key));
        return RC_CONFIG;
    }
    return RC_OK;
}

void daemon_events_persist(struct event_ring *ring, const char *dir,
                           struct tracer *t)
{
    char path[EVENT_PATH_BYTES_MAX];
    int n = snprintf(path, sizeof path, "%s/%s", dir, DAEMON_EVENTS_FILE);
    if (n < 0 || (size_t)n >= sizeof path) {
        TRACE_WARN(t, "events: %s/%s: path too long; events are kept in "
                   "memory only", dir, DAEMON_EVENTS_FILE);
        return;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        TRACE_WARN(t, "events: cannot create %s (%s)", dir, strerror(errno));
    }
    struct event_load ld;
    if (event_ring_persist(ring, path, &ld) != RC_OK) {
        TRACE_WARN(t, "events: cannot keep events in %s (%s); they are "
                   "kept in memory only", path, strerror(ld.error));
    } else if (ld.loaded > 0 || ld.skipped > 0) {
        TRACE_INFO(t, "events: %zu lines of earlier events reloaded from "
                   "%s, %zu damaged or out-of-order lines skipped",
                   ld.loaded, path, ld.skipped);
    }
}
