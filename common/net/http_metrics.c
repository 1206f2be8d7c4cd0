/* See http_metrics.h. */
#include "common/net/http_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/event_ring.h"
#include "common/net/net.h"
#include "common/rc.h"

struct http_conn {
    struct http_metrics *m;
    struct http_conn *next;
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_write_t write;
    char buf[HTTP_METRICS_REQUEST_MAX];
    size_t len;
    struct writer out;
    bool answered;
    bool closing;
    int handles; /* open libuv handles: tcp and timer */
};

struct http_metrics {
    uv_loop_t *loop;
    uv_tcp_t listener;
    http_metrics_render_cb render;
    void *arg;
    struct event_ring *events; /* NULL: no /events */
    struct {
        const char *path;
        const char *type;
        http_metrics_render_cb render;
        void *arg;
    } routes[HTTP_METRICS_ROUTES_MAX];
    size_t n_routes;
    const char *events_source;
    struct tracer *t;
    struct http_conn *conns;
    size_t n_conns;
    bool closing;
    bool listener_closed;
};

static void maybe_free(struct http_metrics *m)
{
    if (m->closing && m->listener_closed && m->conns == NULL) {
        free(m);
    }
}

static void conn_handle_closed(uv_handle_t *h)
{
    struct http_conn *c = h->data;
    if (--c->handles > 0) {
        return;
    }
    struct http_metrics *m = c->m;
    for (struct http_conn **p = &m->conns; *p != NULL; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    m->n_conns--;
    writer_free(&c->out);
    free(c);
    maybe_free(m);
}

static void conn_close(struct http_conn *c)
{
    if (c->closing) {
        return;
    }
    c->closing = true;
    uv_close((uv_handle_t *)&c->tcp, conn_handle_closed);
    uv_close((uv_handle_t *)&c->timer, conn_handle_closed);
}

static void written_cb(uv_write_t *req, int status)
{
    (void)status;
    conn_close(req->data);
}

static void respond(struct http_conn *c, const char *status,
                    const char *type, const void *body, size_t body_len)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     status, type, body_len);
    struct writer *w = &c->out;
    writer_raw(w, head, (size_t)n);
    writer_raw(w, body, body_len);
    c->answered = true;
    uv_read_stop((uv_stream_t *)&c->tcp);
    if (w->rc != RC_OK) {
        conn_close(c);
        return;
    }
    uv_buf_t b = uv_buf_init((char *)w->data, (unsigned)w->len);
    c->write.data = c;
    if (uv_write(&c->write, (uv_stream_t *)&c->tcp, &b, 1, written_cb) != 0) {
        conn_close(c);
    }
}

/* The path (plen bytes, query included) is name, with or without a
 * query. */
static bool path_is(const char *path, size_t plen, const char *name)
{
    size_t n = strlen(name);
    return plen >= n && strncmp(path, name, n) == 0 &&
           (plen == n || path[n] == '?');
}

/* The query of path has the parameter "name=value" (param). */
static bool query_has(const char *path, size_t plen, const char *param)
{
    const char *q = memchr(path, '?', plen);
    size_t n = strlen(param);
    while (q != NULL && q < path + plen) {
        q++;
        size_t left = (size_t)(path + plen - q);
        size_t field = strcspn(q, "& \r\n");
        if (field > left) {
            field = left;
        }
        if (field == n && strncmp(q, param, n) == 0) {
            return true;
        }
        q = memchr(q, '&', left);
    }
    return false;
}

/* since=N from the query of path; 0 when absent or not a number. */
static uint64_t query_since(const char *path, size_t plen)
{
    const char *q = memchr(path, '?', plen);
    while (q != NULL && q < path + plen) {
        q++;
        if (strncmp(q, "since=", 6) == 0) {
            uint64_t v = 0;
            for (q += 6; q < path + plen && *q >= '0' && *q <= '9'; q++) {
                if (v > (UINT64_MAX - 9) / 10) {
                    return UINT64_MAX; /* past any seq there will be */
                }
                v = v * 10 + (uint64_t)(*q - '0');
            }
            return v;
        }
        q = memchr(q, '&', (size_t)(path + plen - q));
    }
    return 0;
}

static void respond_events(struct http_conn *c, const char *path,
                           size_t plen)
{
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    bool text = query_has(path, plen, "format=text");
    if (f != NULL && text) {
        event_ring_text(c->m->events, query_since(path, plen), f);
    } else if (f != NULL) {
        event_ring_json(c->m->events, c->m->events_source,
                        query_since(path, plen), f);
    }
    if (f == NULL || fclose(f) != 0) {
        static const char msg[] = "out of memory\n";
        free(doc);
        respond(c, "500 Internal Server Error", "text/plain; charset=utf-8",
                msg, sizeof msg - 1);
        return;
    }
    respond(c, "200 OK", text ? "text/plain; charset=utf-8"
                              : "application/json", doc, len);
    free(doc);
}

static void handle_request(struct http_conn *c)
{
    static const char text[] = "text/plain; charset=utf-8";
    if (strncmp(c->buf, "GET ", 4) != 0) {
        static const char msg[] = "only GET\n";
        respond(c, "405 Method Not Allowed", text, msg, sizeof msg - 1);
        return;
    }
    const char *path = c->buf + 4;
    size_t plen = strcspn(path, " \r\n");
    if (c->m->events != NULL && path_is(path, plen, "/events")) {
        respond_events(c, path, plen);
        return;
    }
    http_metrics_render_cb render = NULL;
    void *arg = NULL;
    const char *type = "text/plain; version=0.0.4; charset=utf-8";
    if (path_is(path, plen, "/metrics")) {
        render = c->m->render;
        arg = c->m->arg;
    }
    for (size_t i = 0; render == NULL && i < c->m->n_routes; i++) {
        if (path_is(path, plen, c->m->routes[i].path)) {
            render = c->m->routes[i].render;
            arg = c->m->routes[i].arg;
            type = c->m->routes[i].type;
        }
    }
    if (render == NULL) {
        static const char msg[] = "try /metrics or /events\n";
        respond(c, "404 Not Found", text, msg, sizeof msg - 1);
        return;
    }
    struct writer body;
    writer_init(&body, 64u << 20);
    render(arg, &body);
    if (body.rc != RC_OK) {
        static const char msg[] = "out of memory\n";
        writer_free(&body);
        respond(c, "500 Internal Server Error", text, msg, sizeof msg - 1);
        return;
    }
    respond(c, "200 OK", type, body.data, body.len);
    writer_free(&body);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct http_conn *c = h->data;
    size_t room = sizeof c->buf - 1 - c->len;
    *buf = uv_buf_init(c->buf + c->len, (unsigned)room);
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    (void)buf;
    struct http_conn *c = s->data;
    if (n < 0) {
        conn_close(c);
        return;
    }
    c->len += (size_t)n;
    c->buf[c->len] = '\0';
    if (strstr(c->buf, "\r\n\r\n") != NULL || strstr(c->buf, "\n\n") != NULL) {
        handle_request(c);
    } else if (c->len >= sizeof c->buf - 1) {
        static const char msg[] = "request head too large\n";
        respond(c, "431 Request Header Fields Too Large",
                "text/plain; charset=utf-8", msg, sizeof msg - 1);
    }
}

static void deadline_cb(uv_timer_t *timer)
{
    struct http_conn *c = timer->data;
    conn_close(c); /* slow or silent peers hold nothing for long */
}

static void accept_cb(uv_stream_t *server, int status)
{
    struct http_metrics *m = server->data;
    if (status < 0 || m->closing) {
        return;
    }
    struct http_conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        return; /* it waits in the backlog */
    }
    bool over = m->n_conns >= HTTP_METRICS_CONNS_MAX;
    c->m = m;
    writer_init(&c->out, 64u << 20);
    if (uv_tcp_init(m->loop, &c->tcp) != 0) {
        writer_free(&c->out);
        free(c);
        return;
    }
    c->tcp.data = c;
    c->handles = 1;
    c->next = m->conns;
    m->conns = c;
    m->n_conns++;
    if (uv_timer_init(m->loop, &c->timer) != 0) {
        c->closing = true;
        uv_close((uv_handle_t *)&c->tcp, conn_handle_closed);
        return;
    }
    c->timer.data = c;
    c->handles = 2;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0 || over ||
        uv_timer_start(&c->timer, deadline_cb, HTTP_METRICS_DEADLINE_MS, 0) !=
            0 ||
        uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb) != 0) {
        conn_close(c);
    }
}

static void listener_closed_cb(uv_handle_t *h);

int http_metrics_start(struct http_metrics **out, uv_loop_t *loop,
                       const char *host, int port,
                       http_metrics_render_cb render, void *arg,
                       struct tracer *t, int *port_out)
{
    *out = NULL;
    struct http_metrics *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return RC_NOMEM;
    }
    *m = (struct http_metrics){.loop = loop, .render = render, .arg = arg,
                               .t = t};
    if (uv_tcp_init(loop, &m->listener) != 0) {
        free(m);
        return RC_IO;
    }
    m->listener.data = m;
    int rv = net_listen(&m->listener, loop, host, port, 64, accept_cb,
                        port_out, t);
    if (rv != RC_OK) {
        http_metrics_close(m); /* freed once the listener is closed */
        return rv;
    }
    *out = m;
    return RC_OK;
}

static void listener_closed_cb(uv_handle_t *h)
{
    struct http_metrics *m = h->data;
    m->listener_closed = true;
    maybe_free(m);
}

int http_metrics_route(struct http_metrics *m, const char *path,
                       const char *content_type,
                       http_metrics_render_cb render, void *arg)
{
    if (m->n_routes == HTTP_METRICS_ROUTES_MAX) {
        return RC_FULL;
    }
    m->routes[m->n_routes].path = path;
    m->routes[m->n_routes].type = content_type;
    m->routes[m->n_routes].render = render;
    m->routes[m->n_routes].arg = arg;
    m->n_routes++;
    return RC_OK;
}

void http_metrics_events(struct http_metrics *m, struct event_ring *ring,
                         const char *source)
{
    m->events = ring;
    m->events_source = source;
}

void http_metrics_close(struct http_metrics *m)
{
    if (m == NULL || m->closing) {
        return;
    }
    m->closing = true;
    uv_close((uv_handle_t *)&m->listener, listener_closed_cb);
    for (struct http_conn *c = m->conns; c != NULL; c = c->next) {
        conn_close(c);
    }
}

void http_metrics_family(struct writer *w, const char *name,
                         const char *type, const char *help)
{
    char line[512];
    int n = snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n",
                     name, help, name, type);
    if (n > 0 && (size_t)n < sizeof line) {
        writer_raw(w, line, (size_t)n);
    }
}

void http_metrics_sample(struct writer *w, const char *name,
                         const char *labels, double value)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "%s%s%s%s %.17g\n", name,
                     labels != NULL ? "{" : "", labels != NULL ? labels : "",
                     labels != NULL ? "}" : "", value);
    if (n > 0 && (size_t)n < sizeof line) {
        writer_raw(w, line, (size_t)n);
    }
}

void http_metrics_one(struct writer *w, const char *name, const char *type,
                      const char *help, double value)
{
    http_metrics_family(w, name, type, help);
    http_metrics_sample(w, name, NULL, value);
}

const double http_metrics_bucket_ms[HTTP_METRICS_BUCKETS] = {
    0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000};

void http_metrics_observe(struct http_metrics_hist *h, double ms)
{
    size_t i = 0;
    while (i < HTTP_METRICS_BUCKETS && ms > http_metrics_bucket_ms[i]) {
        i++;
    }
    h->counts[i]++;
    h->n++;
    h->sum_ms += ms;
}

void http_metrics_histogram(struct writer *w, const char *name,
                            const char *labels,
                            const struct http_metrics_hist *h)
{
    char sample[160];
    char lab[1400];
    const char *sep = labels != NULL && labels[0] != '\0' ? "," : "";
    const char *l = labels != NULL ? labels : "";
    uint64_t cum = 0;
    snprintf(sample, sizeof sample, "%s_bucket", name);
    for (size_t i = 0; i <= HTTP_METRICS_BUCKETS; i++) {
        cum += h->counts[i];
        if (i < HTTP_METRICS_BUCKETS) {
            snprintf(lab, sizeof lab, "%s%sle=\"%g\"", l, sep,
                     http_metrics_bucket_ms[i]);
        } else {
            snprintf(lab, sizeof lab, "%s%sle=\"+Inf\"", l, sep);
        }
        http_metrics_sample(w, sample, lab, (double)cum);
    }
    snprintf(sample, sizeof sample, "%s_sum", name);
    http_metrics_sample(w, sample, labels != NULL && labels[0] ? labels : NULL,
                        h->sum_ms);
    snprintf(sample, sizeof sample, "%s_count", name);
    http_metrics_sample(w, sample, labels != NULL && labels[0] ? labels : NULL,
                        (double)h->n);
}

void http_metrics_label_value(const char *s, size_t len, char *out,
                              size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        const char *esc = c == '\\' ? "\\\\" : c == '"' ? "\\\""
                          : c == '\n' ? "\\n" : NULL;
        unsigned char u = (unsigned char)c;
        if (esc == NULL && (u < 0x20 || u >= 0x7f)) {
            c = '?'; /* the format is UTF-8; a group id may be any bytes */
        }
        size_t need = esc != NULL ? 2 : 1;
        if (o + need >= cap) {
            break;
        }
        if (esc != NULL) {
            out[o++] = esc[0];
            out[o++] = esc[1];
        } else {
            out[o++] = c;
        }
    }
    out[o] = '\0';
}
