/* What both daemons (cairn-controller and cairn-broker) do alike at
 * start-up: the command line `PROG CONFIG [--override key=value ...]`, a
 * properties file checked against the daemon's definitions (which include
 * DAEMON_CONFIG_SHARED_DEFS), the overrides applied in order as if the
 * file had said them last, log.level applied to the tracer, and the
 * listener and quorum-voter lists parsed with an error naming the key.
 * Errors are printed to stderr as "PROG: ...". Main thread, before the
 * loop runs. */
#ifndef CAIRN_COMMON_DAEMON_H
#define CAIRN_COMMON_DAEMON_H

#include <stddef.h>

#include "common/assert.h"
#include "common/config.h"
#include "common/net/addr.h"
#include "common/trace.h"

/* Settings both daemons read with the same meaning, to be listed in each
 * daemon's struct config_def array. */
#define DAEMON_CONFIG_SHARED_DEFS                                          \
    {"controller.quorum.voters", CONFIG_LIST, NULL, 0, 0,                  \
     "id@host:port of every controller's RPC listener"},                   \
    {"broker.heartbeat.interval.ms", CONFIG_LONG, "2000", 1, 3600000,      \
     "expected broker heartbeat interval"},                                \
    {"broker.session.timeout.ms", CONFIG_LONG, "9000", 1, 3600000,         \
     "a broker silent this long is fenced"},                               \
    {"log.level", CONFIG_STRING, "info", 0, 0, "debug, info, warn, error"}

/* Parses argv, loads argv[1] against defs (borrowed; they must outlive
 * the config) and applies the overrides and log.level. RC_OK with *out
 * set (free it with config_free); RC_INVALID after printing the usage
 * line (exit 2); RC_CONFIG or RC_NOMEM after printing why (exit 1). */
MUST_CHECK int daemon_config_load(struct config **out, const char *prog,
                                  int argc, char **argv,
                                  const struct config_def *defs,
                                  size_t n_defs, struct tracer *t);

/* The first listener of `key` ("NAME://host:port,..."); RC_CONFIG after
 * printing what was expected. */
MUST_CHECK int daemon_config_listener(const struct config *cfg,
                                      const char *prog, const char *key,
                                      struct addr *out);

/* The voters of `key` ("id@host:port,...", distinct ids) into out[max];
 * RC_CONFIG after printing what was expected. */
MUST_CHECK int daemon_config_voters(const struct config *cfg,
                                    const char *prog, const char *key,
                                    struct addr_voter *out, size_t max,
                                    size_t *n);

/* The file a daemon keeps its events in, in its data dir. */
#define DAEMON_EVENTS_FILE "events.log"

struct event_ring;

/* Loads the events a daemon kept in dir/DAEMON_EVENTS_FILE into ring
 * (empty) and keeps writing them there (common/event_ring.h), creating
 * dir if it is missing. A failure is logged to t and the daemon goes on
 * with its events in memory only. */
void daemon_events_persist(struct event_ring *ring, const char *dir,
                           struct tracer *t);

#endif
