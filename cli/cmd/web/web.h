/* `cairn web`: the cluster page. A small HTTP server on 127.0.0.1 (by
 * default) that serves one static page (cli/cmd/web/index.html, built into
 * the binary) and the documents it polls:
 *
 *   /api/status            `cairn status --json`, gathered per request
 *   /api/events?since_ms=T every process's events (cli/cmd/events.h) last
 *                          seen at or after T, merged by time:
 *                          {"now_ms","sources":[{"name","reachable",
 *                          "error"}],"events":[{"source","seq","time_ms",
 *                          "last_ms","repeats","text"}]}
 *   /api/groups            every broker's coordinated groups (its
 *                          /groups): {"brokers":[{"broker","groups":[...]}]}
 *
 * One request at a time, each read within WEB_REQUEST_DEADLINE_MS and
 * WEB_REQUEST_MAX bytes; anything but GET of those paths is 404 or 405.
 * One thread. */
#ifndef CAIRN_CLI_WEB_H
#define CAIRN_CLI_WEB_H

#include <stdio.h>

#define WEB_REQUEST_MAX 8192
#define WEB_REQUEST_DEADLINE_MS 2000

/* The page, NUL-terminated (cli/cmd/web/web_page.c). */
extern const char web_page_html[];
extern const char web_page_html_end[];

void web_usage(FILE *out);

/* argv[0] is "web"; controllers: the quorum (id@host:port,...);
 * http_default: the local cluster's metrics listeners; port_default: the
 * local cluster's page port. Returns the exit code. */
int web_main(int argc, char **argv, const char *controllers,
             const char *http_default, int port_default);

#endif
