/* `cairn events`: the controllers' and the brokers' events as one
 * timeline. Each process keeps its last events in memory and serves them
 * at http://host:port/events (common/event_ring.h); this reads every
 * process named (by default the local cluster's, from CAIRN_BASE_PORT as
 * deploy/cluster.sh places them), merges them by time and prints
 *
 *   2026-12-01T12:00:07.020Z controller-101 demo-0 leader 1 -> 2 ...
 *
 * A record that stands for repeats says so: "(and 33 more like it until
 * 12:00:07.021)". A process that does not answer is named on stderr and
 * skipped. --follow keeps reading every 500 ms. One thread. */
#ifndef CAIRN_CLI_EVENTS_H
#define CAIRN_CLI_EVENTS_H

#include <stdio.h>

void events_usage(FILE *out);

/* argv[0] is "events"; http_default: "host:port,..." of the local
 * cluster's processes. Returns the exit code. */
int events_main(int argc, char **argv, const char *http_default);

#endif
