/* `cairn events`: the controllers' and the brokers' events as one
 * timeline. Each process keeps its last events in memory and serves them
 * at http://host:port/events (common/event_ring.h); this reads every
 * process named (by default the local cluster's, from CAIRN_BASE_PORT as
 * deploy/cluster.sh places them), merges them by time and prints
 *
 *   2026-12-01T12:00:07.020Z controller-101 demo-0 leader 1 -> 2 ...
 *
 * A record that stands for repeats says so: "(and 33 more like it until
 * 12:00:07.021)". Routine events are left out but for --all, and counted
 * on a last line. A process that does not answer is named on stderr and
 * skipped. --follow keeps reading every 500 ms. One thread. */
#ifndef CAIRN_CLI_EVENTS_H
#define CAIRN_CLI_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/assert.h"

#define EVENTS_SOURCES_MAX 16

/* A process to read: its metrics listener and what was read of it. */
struct events_source {
    char host[256];
    int port;
    char name[272];  /* "controller-101" once it answered; else host:port */
    uint64_t seen;   /* highest seq read */
    bool reachable;  /* the last read answered */
    char error[256]; /* why not; "" */
};

struct events_record {
    int64_t time_ms;
    int64_t last_ms;
    uint32_t repeats;
    uint64_t seq;
    bool routine;     /* housekeeping (common/event_ring.h) */
    size_t source;    /* index in the sources */
    const char *text; /* into the batch's bodies */
};

/* One read of every source, merged by time. */
struct events_batch {
    struct events_record *recs;
    size_t n;
    char *bodies[EVENTS_SOURCES_MAX];
};

/* "host:port,..." into src (at most EVENTS_SOURCES_MAX); false if bad. */
MUST_CHECK bool events_sources_parse(const char *list,
                                     struct events_source *src, size_t *n);

/* Asks each source its name ("broker-1"); those that do not answer keep
 * host:port. */
void events_sources_name(struct events_source *src, size_t n_src);

/* Reads each source's records after its seen and last repeated at or
 * after since_ms, advances seen, and merges them by time into b (the
 * caller frees it with events_batch_free); RC_OK or RC_NOMEM. */
MUST_CHECK int events_collect(struct events_source *src, size_t n_src,
                              int64_t since_ms, struct events_batch *b);

void events_batch_free(struct events_batch *b);

/* Whether r is left out of default views: a routine event, or one about
 * an internal topic ("__consumer_offsets-3 ...", from processes older
 * than the routine flag). */
bool events_is_routine(const struct events_record *r);

void events_usage(FILE *out);

/* argv[0] is "events"; http_default: "host:port,..." of the local
 * cluster's processes. Returns the exit code. */
int events_main(int argc, char **argv, const char *http_default);

#endif
