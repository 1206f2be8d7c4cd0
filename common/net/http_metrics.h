/* A tiny HTTP/1.x server for a process's own state: `GET /metrics`
 * answered with Prometheus text that the owner renders on the loop thread,
 * and, once http_metrics_events() names a ring, `GET /events?since=N` with
 * its events as JSON (common/event_ring.h). Every other path is 404, every other method 405; one request per connection, then
 * the connection closes. Untrusted input: a request head is read up to
 * HTTP_METRICS_REQUEST_MAX bytes and HTTP_METRICS_DEADLINE_MS, at most
 * HTTP_METRICS_CONNS_MAX connections are served at once (more are closed
 * at accept). Loop thread only. */
#ifndef CAIRN_COMMON_NET_HTTP_METRICS_H
#define CAIRN_COMMON_NET_HTTP_METRICS_H

#include <stdint.h>
#include <uv.h>

#include "common/assert.h"
#include "common/trace.h"
#include "common/writer.h"

#define HTTP_METRICS_REQUEST_MAX 8192
#define HTTP_METRICS_DEADLINE_MS 5000
#define HTTP_METRICS_CONNS_MAX 16

/* Appends the exposition text to w. */
typedef void (*http_metrics_render_cb)(void *arg, struct writer *w);

struct http_metrics;

/* Listens on host:port (0 picks one; *port_out says which). RC_INVALID
 * for a bad address, RC_IO when it cannot listen, RC_NOMEM. */
MUST_CHECK int http_metrics_start(struct http_metrics **out, uv_loop_t *loop,
                                  const char *host, int port,
                                  http_metrics_render_cb render, void *arg,
                                  struct tracer *t, int *port_out);

struct event_ring;

#define HTTP_METRICS_ROUTES_MAX 4

/* Serves GET path (exact, a query allowed) with what render appends, as
 * content_type (both borrowed; they outlive m). RC_FULL past
 * HTTP_METRICS_ROUTES_MAX. */
MUST_CHECK int http_metrics_route(struct http_metrics *m, const char *path,
                                  const char *content_type,
                                  http_metrics_render_cb render, void *arg);

/* Serves ring (borrowed; it outlives m) at /events, as source ("broker-1"). */
void http_metrics_events(struct http_metrics *m, struct event_ring *ring,
                         const char *source);

/* Closes the listener and every connection; frees itself once libuv is
 * done with them. */
void http_metrics_close(struct http_metrics *m);

/* Prometheus text exposition: a family's "# HELP" and "# TYPE" lines, and
 * one sample ("name{labels} value"; labels NULL for none). */
void http_metrics_family(struct writer *w, const char *name,
                         const char *type, const char *help);
void http_metrics_sample(struct writer *w, const char *name,
                         const char *labels, double value);
/* A family of one unlabelled sample; type "gauge" or "counter". */
void http_metrics_one(struct writer *w, const char *name, const char *type,
                      const char *help, double value);

/* A label value (len bytes, any bytes) escaped for the text format
 * (backslash, double quote and newline; other control bytes and every byte
 * outside ASCII become '?'), cut to fit out (cap > 0). */
void http_metrics_label_value(const char *s, size_t len, char *out,
                              size_t cap);

/* A Prometheus histogram of milliseconds with fixed bucket bounds
 * (HTTP_METRICS_BUCKETS_MS, 0.5 ms to 10 s, then +Inf). Observing is two
 * additions and a short scan; one thread at a time. */
#define HTTP_METRICS_BUCKETS 14
extern const double http_metrics_bucket_ms[HTTP_METRICS_BUCKETS];

struct http_metrics_hist {
    uint64_t counts[HTTP_METRICS_BUCKETS + 1]; /* the last: above them all */
    uint64_t n;
    double sum_ms;
};

void http_metrics_observe(struct http_metrics_hist *h, double ms);

/* The samples of one labelled histogram (the family written before):
 * name_bucket{labels,le="..."} (cumulative), name_sum, name_count. */
void http_metrics_histogram(struct writer *w, const char *name,
                            const char *labels,
                            const struct http_metrics_hist *h);

#endif
