/* `cairn status --watch`: the cluster's state polled (every --interval-ms)
 * and every change printed as it is seen, with the time:
 *
 *   12:00:03.512 controller 102 active (term 5)
 *   12:00:07.020 broker 1 fenced
 *   12:00:07.020 demo-0 leader 1 -> 2 epoch 3 -> 4
 *   12:00:07.020 demo-0 isr 1,2,3 -> 2,3
 *   12:00:09.530 demo-0 hw 118 -> 140
 *
 * and after them the events the processes logged meanwhile, with their
 * source and cause (cli/cmd/events.h):
 *
 *   12:00:07.018 controller-101: broker 1 fenced (session expired ...)
 *
 * The first poll prints the state as changes from nothing. Internal topics
 * (__consumer_offsets) only with --internal; --topic T only T's
 * partitions (and the brokers' and controllers' own events). One
 * thread. */
#ifndef CAIRN_CLI_WATCH_H
#define CAIRN_CLI_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/client/ctl_client.h"

struct watch_opts {
    const char *topic;   /* NULL: every topic */
    bool internal;       /* also topics named "__..." */
    int64_t interval_ms; /* between polls */
    int64_t for_ms;      /* stop after this long; 0: until killed */
    const char *http;    /* the processes' metrics listeners, for their
                            events (cli/cmd/events.h); NULL: none */
};

/* Runs until for_ms has passed (or forever); the exit code. */
int watch_run(struct ctl_client *cc, const struct watch_opts *o);

#endif
