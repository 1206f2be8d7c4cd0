/* The lab bench of the cluster page: buttons that break the local cluster
 * on purpose. Each action runs deploy/cluster.sh with one verb and one
 * node, both taken from fixed tables (never from the request's bytes), by
 * fork and execv, no shell; or starts and stops a small acks=all load
 * (`cairn bench produce` at LAB_LOAD_RATE records/s to topic
 * LAB_LOAD_TOPIC), killed by its pid.
 *
 * Off unless enabled, and never enabled unless the page listens on
 * 127.0.0.1: by --lab, or when `cairn web` serves the local cluster (the
 * default controllers and listeners) whose data directory holds the
 * marker deploy/cluster.sh up writes ("lab", a line base_port=N) with the
 * same base port. The script is $CAIRN_CLUSTER_SH, else deploy/cluster.sh
 * two directories above the binary's (build/NAME/cairn); the data
 * directory $CAIRN_DATA, else data/cluster beside it, as the script's.
 *
 * Actions run in the background; lab_reap() collects their exits and
 * their first output. One thread: the page server's. */
#ifndef CAIRN_CLI_WEB_LAB_H
#define CAIRN_CLI_WEB_LAB_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/assert.h"

#define LAB_ACTIONS_MAX 64 /* the newest are kept; older ones drop off */
#define LAB_OUTPUT_BYTES 200
#define LAB_LOAD_TOPIC "lesson"
#define LAB_LOAD_RATE "200"

struct lab_action {
    uint64_t id;                   /* 1, 2, ... */
    int64_t time_ms;               /* wall clock when started */
    int64_t end_ms;                /* when it exited; 0 running */
    const char *verb;              /* from the allowlist */
    const char *node;              /* from the allowlist; "" for the load */
    pid_t pid;                     /* 0 once reaped */
    int fd;                        /* its output; -1 closed */
    int exit_code;                 /* -1 running or killed by a signal */
    char output[LAB_OUTPUT_BYTES]; /* the first bytes it printed */
    size_t output_len;
};

struct lab {
    bool enabled;
    char why[160]; /* why on or off, for the page */
    char script[PATH_MAX];
    char cairn[PATH_MAX]; /* this binary */
    char bin_dir[PATH_MAX];
    struct lab_action actions[LAB_ACTIONS_MAX]; /* id k at (k-1) % MAX */
    uint64_t next_id;
    pid_t load_pid; /* 0: none */
    int64_t load_since_ms;
    int64_t load_stop_ms; /* SIGTERM sent; SIGKILL 2 s later */
};

/* Decides whether the bench is on: flag is --lab; local: the page serves
 * the local cluster's defaults at base_port; host: the page's address. */
void lab_init(struct lab *l, bool flag, bool local, int base_port,
              const char *host);

/* Runs action (kill, stop, start, pause, resume, load-start, load-stop)
 * on node (broker-1.., controller-101..; ignored for the load), both
 * given as the request's bytes (not NUL-terminated) and matched exactly
 * against the allowlists. Returns the HTTP status: 202 started, 400 not
 * allowed, 403 the bench is off, 409 the load is already in that state,
 * 500 fork failed; msg says what happened. */
int lab_run(struct lab *l, const char *action, size_t action_len,
            const char *node, size_t node_len, int64_t now_ms, char *msg,
            size_t cap);

/* Collects finished actions and the load's exit, without blocking. */
void lab_reap(struct lab *l, int64_t now_ms);

/* {"enabled","why","actions":[{"id","time_ms","end_ms",
 *  "action","node","state","exit","output"}],"load":{"running","pid",
 *  "topic","rate","since_ms"}}, oldest action first. */
void lab_json(const struct lab *l, FILE *out);

/* Stops the load (SIGTERM, then SIGKILL after 2 s) and waits for it. */
void lab_stop(struct lab *l);

#endif
