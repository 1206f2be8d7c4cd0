/* A blocking HTTP/1.0 GET for the CLI's reads of the processes' own
 * endpoints (/events, /metrics; common/net/http_metrics.h): one request,
 * the whole answer read until the server closes, everything bounded by a
 * deadline and HTTP_GET_BODY_MAX. One thread. */
#ifndef CAIRN_CLI_HTTP_GET_H
#define CAIRN_CLI_HTTP_GET_H

#include <stddef.h>

#include "common/assert.h"

#define HTTP_GET_BODY_MAX (16u << 20)
#define HTTP_GET_ERROR_BYTES 256

/* GETs path from host:port within timeout_ms. RC_OK with the body of a
 * 200 answer in *body (malloc'd, NUL-terminated, *len bytes; the caller
 * frees it); else why in err: RC_IO (cannot connect, reset, deadline,
 * not 200), RC_INVALID (not HTTP), RC_TOO_LARGE, RC_NOMEM. */
MUST_CHECK int http_get(const char *host, int port, const char *path,
                        unsigned timeout_ms, char **body, size_t *len,
                        char *err, size_t err_cap);

#endif
