/* `cairn status --watch`: the cluster's state polled (every --interval-ms)
 * and every change printed as it is seen, with the time:
 *
 *   12:00:03.512 controller 102 active (term 5)
 *   12:00:07.020 broker 1 fenced
 *   12:00:07.020 demo-0 leader 1 -> 2 epoch 3 -> 4
 *   12:00:07.020 demo-0 isr 1,2,3 -> 2,3
 *   12:00:09.530 demo-0 hw 118 -> 140
 *
 * The first poll prints the state as changes from nothing. Internal topics
 * (__consumer_offsets) only with --internal; --topic T only T's
 * partitions. One thread. */
#ifndef CAIRN_CLI_WATCH_H
#define CAIRN_CLI_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/ctl_client.h"

struct watch_opts {
    const char *topic;   /* NULL: every topic */
    bool internal;       /* also topics named "__..." */
    int64_t interval_ms; /* between polls */
    int64_t for_ms;      /* stop after this long; 0: until killed */
};

/* Runs until for_ms has passed (or forever); the exit code. */
int watch_run(struct ctl_client *cc, const struct watch_opts *o);

#endif
