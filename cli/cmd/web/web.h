/* `cairn web`: the cluster page. A small HTTP server on 127.0.0.1 (by
 * default) that serves one static page (cli/cmd/web/index.html, built into
 * the binary) and the documents it polls:
 *
 *   /api/status            `cairn status --json`, gathered per request
 *   /api/events            every process's events as its /events sent them
 *                          (common/event_ring.h), fields it may add
 *                          (e.g. "routine") included: {"now_ms","rings":
 *                          [{"source","next","events":[{"seq","time_ms",
 *                          "last_ms","repeats","text",...}]}],"sources":
 *                          [{"name","reachable","error"}]}
 *   /api/groups            every broker's coordinated groups (its
 *                          /groups): {"brokers":[{"broker","groups":[...]}]}
 *   /api/lab               the lab bench (cli/cmd/web/lab.h): whether it is
 *                          on, its actions and its load
 *   POST /api/lab/run?action=A&node=N
 *                          one lab action; 403 when the bench is off or
 *                          the request lacks the page's header
 *                          X-Cairn-Lab: 1 or a Host of this listener
 *
 * One request at a time, each read within WEB_REQUEST_DEADLINE_MS and
 * WEB_REQUEST_MAX bytes; anything else is 404 or 405. One thread. */
#ifndef CAIRN_CLI_WEB_H
#define CAIRN_CLI_WEB_H

#include <stdbool.h>
#include <stdio.h>

#define WEB_REQUEST_MAX 8192
#define WEB_REQUEST_DEADLINE_MS 2000

/* The page, NUL-terminated (cli/cmd/web/web_page.c). */
extern const char web_page_html[];
extern const char web_page_html_end[];

void web_usage(FILE *out);

/* What the page serves unless told otherwise. */
struct web_local {
    const char *controllers;  /* the quorum (id@host:port,...) */
    bool is_local;            /* controllers are the local cluster's */
    const char *http_default; /* the local cluster's metrics listeners */
    int base_port;            /* the local cluster's (CAIRN_BASE_PORT) */
    int port_default;         /* the local cluster's page port */
};

/* argv[0] is "web". Returns the exit code. */
int web_main(int argc, char **argv, const struct web_local *local);

#endif
