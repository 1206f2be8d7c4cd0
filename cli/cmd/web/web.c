/* See cli/cmd/web/web.h. */
#include "cli/cmd/web/web.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "cli/util/cli.h"
#include "cli/client/ctl_client.h"
#include "cli/cmd/events.h"
#include "cli/client/http_get.h"
#include "cli/util/opts.h"
#include "cli/cmd/status/status.h"
#include "cli/cmd/web/lab.h"
#include "common/assert.h"
#include "common/json.h"
#include "common/rc.h"

void web_usage(FILE *out)
{
    fputs("  web [--port P] [--host ADDR] [--for-ms MS] [--lab]\n"
          "      [--http HOST:PORT,...]\n"
          "      Serves the cluster page at http://ADDR:P/ (default\n"
          "      127.0.0.1, port base+90): controllers, brokers, every\n"
          "      partition's leader, ISR, HW and replicas' log end\n"
          "      offsets, a chart of HW and end offsets over time, and\n"
          "      the events of every process (--http as for events),\n"
          "      refreshed every second. Until killed or --for-ms.\n"
          "      Lab bench: buttons that kill, stop, start, pause and\n"
          "      resume nodes (through deploy/cluster.sh) and run a small\n"
          "      acks=all load; only on 127.0.0.1, and only with --lab or\n"
          "      for the local cluster that deploy/cluster.sh up marked.\n",
          out);
}

static const struct opts_cmd web_cmd = {"web", web_usage};

static volatile sig_atomic_t web_stop;

static void on_signal(int sig)
{
    (void)sig;
    web_stop = 1;
}

struct web {
    struct ctl_client *cc;
    struct events_source src[EVENTS_SOURCES_MAX];
    size_t n_src;
    int port;
    struct lab lab;
};

static void send_all(int fd, const char *p, size_t n)
{
    int64_t deadline = cli_mono_ms() + WEB_REQUEST_DEADLINE_MS;
    while (n > 0 && cli_mono_ms() < deadline) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            (void)poll(&pf, 1, 100);
            continue;
        }
        if (w <= 0) {
            return; /* the browser went away */
        }
        p += w;
        n -= (size_t)w;
    }
}

static void respond(int fd, const char *status, const char *type,
                    const char *body, size_t len)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: "
                     "%zu\r\nCache-Control: no-store\r\nConnection: close"
                     "\r\n\r\n",
                     status, type, len);
    send_all(fd, head, (size_t)n);
    send_all(fd, body, len);
}

static void respond_text(int fd, const char *status, const char *msg)
{
    respond(fd, status, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* Every process's /events document, spliced as it came, so that fields
 * the page knows and this server does not (e.g. "routine") pass through. */
static void write_events(struct web *w, FILE *out)
{
    fprintf(out, "{\"now_ms\":%" PRId64 ",\"rings\":[", cli_wall_ms());
    bool first = true;
    for (size_t i = 0; i < w->n_src; i++) {
        struct events_source *s = &w->src[i];
        char *body = NULL;
        size_t len = 0;
        int rc = http_get(s->host, s->port, "/events?since=0",
                          WEB_REQUEST_DEADLINE_MS, &body, &len, s->error,
                          sizeof s->error);
        s->reachable = rc == RC_OK && len > 0 && body[0] == '{';
        if (s->reachable) {
            s->error[0] = '\0';
            fputs(first ? "" : ",", out);
            fwrite(body, 1, len, out);
            first = false;
        }
        free(body);
    }
    fputs("],\"sources\":", out);
    struct json j;
    json_init(&j, out);
    json_array_begin(&j);
    for (size_t i = 0; i < w->n_src; i++) {
        json_object_begin(&j);
        json_key(&j, "name");
        json_string(&j, w->src[i].name);
        json_key(&j, "reachable");
        json_bool(&j, w->src[i].reachable);
        json_key(&j, "error");
        json_string_or_null(&j, w->src[i].reachable ? NULL : w->src[i].error);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_finish(&j);
    fputs("}\n", out);
}

/* Every broker's /groups document (controllers have none: 404), as
 * {"brokers":[DOC,...]}; the documents are the brokers' own JSON. */
static void write_groups(struct web *w, FILE *out)
{
    fputs("{\"brokers\":[", out);
    bool first = true;
    for (size_t i = 0; i < w->n_src; i++) {
        char *body = NULL;
        size_t len = 0;
        char err[HTTP_GET_ERROR_BYTES];
        if (http_get(w->src[i].host, w->src[i].port, "/groups",
                     WEB_REQUEST_DEADLINE_MS, &body, &len, err,
                     sizeof err) == RC_OK &&
            len > 0 && body[0] == '{') {
            fputs(first ? "" : ",", out);
            fwrite(body, 1, len, out);
            first = false;
        }
        free(body);
    }
    fputs("]}\n", out);
}

static bool path_is(const char *path, size_t plen, const char *name)
{
    size_t n = strlen(name);
    return plen >= n && strncmp(path, name, n) == 0 &&
           (plen == n || path[n] == '?');
}

/* The value of key (with its '=') in the query of path, borrowed from
 * it; false when absent. */
static bool query_value(const char *path, size_t plen, const char *key,
                        const char **v, size_t *vlen)
{
    const char *end = path + plen;
    const char *q = memchr(path, '?', plen);
    size_t klen = strlen(key);
    while (q != NULL && q < end) {
        q++;
        size_t n = (size_t)(end - q);
        const char *amp = memchr(q, '&', n);
        size_t len = amp != NULL ? (size_t)(amp - q) : n;
        if (len >= klen && memcmp(q, key, klen) == 0) {
            *v = q + klen;
            *vlen = len - klen;
            return true;
        }
        q = amp;
    }
    return false;
}

/* Whether the request head has header name (any case) with value. */
static bool header_is(const char *req, const char *name, const char *value)
{
    size_t n = strlen(name);
    size_t vn = strlen(value);
    for (const char *line = strchr(req, '\n'); line != NULL;
         line = strchr(line, '\n')) {
        line++;
        if (strncasecmp(line, name, n) != 0 || line[n] != ':') {
            continue;
        }
        const char *v = line + n + 1;
        v += strspn(v, " \t");
        size_t len = strcspn(v, "\r\n");
        while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t')) {
            len--;
        }
        return len == vn && memcmp(v, value, vn) == 0;
    }
    return false;
}

/* A lab action must come from the page itself: addressed to this
 * listener by name (no DNS rebinding) with the page's own header, which a
 * form on another site cannot send without a preflight we never answer. */
static bool lab_request_ours(const struct web *w, const char *req)
{
    char ip[32];
    char local[32];
    snprintf(ip, sizeof ip, "127.0.0.1:%d", w->port);
    snprintf(local, sizeof local, "localhost:%d", w->port);
    return header_is(req, "X-Cairn-Lab", "1") &&
           (header_is(req, "Host", ip) || header_is(req, "Host", local));
}

static void serve_post(struct web *w, int fd, const char *req)
{
    const char *path = req + 5;
    size_t plen = strcspn(path, " \r\n");
    if (!path_is(path, plen, "/api/lab/run")) {
        respond_text(fd, "404 Not Found", "POST /api/lab/run only\n");
        return;
    }
    char msg[256];
    int code = 403;
    if (!w->lab.enabled) {
        snprintf(msg, sizeof msg, "the lab bench is %s", w->lab.why);
    } else if (!lab_request_ours(w, req)) {
        snprintf(msg, sizeof msg, "refused: not the page's own request");
    } else {
        const char *action = "", *node = "";
        size_t alen = 0, nlen = 0;
        (void)query_value(path, plen, "action=", &action, &alen);
        (void)query_value(path, plen, "node=", &node, &nlen);
        code = lab_run(&w->lab, action, alen, node, nlen, cli_wall_ms(), msg,
                       sizeof msg);
    }
    const char *status = code == 202   ? "202 Accepted"
                         : code == 400 ? "400 Bad Request"
                         : code == 403 ? "403 Forbidden"
                         : code == 409 ? "409 Conflict"
                                       : "500 Internal Server Error";
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    if (f == NULL) {
        respond_text(fd, "500 Internal Server Error", "out of memory\n");
        return;
    }
    struct json j;
    json_init(&j, f);
    json_object_begin(&j);
    json_key(&j, "message");
    json_string(&j, msg);
    json_object_end(&j);
    json_finish(&j);
    if (fclose(f) == 0) {
        respond(fd, status, "application/json", doc, len);
    }
    free(doc);
}

/* The JSON documents the page polls, into f. */
static void write_doc(struct web *w, const char *path, size_t plen, FILE *f)
{
    if (path_is(path, plen, "/api/status")) {
        int st = status_json_write(w->cc, f);
        (void)st; /* no metadata shows in the document as an empty list */
    } else if (path_is(path, plen, "/api/groups")) {
        write_groups(w, f);
    } else if (path_is(path, plen, "/api/lab")) {
        lab_json(&w->lab, f);
    } else {
        write_events(w, f);
    }
}

static void serve_request(struct web *w, int fd, const char *req)
{
    if (strncmp(req, "POST ", 5) == 0) {
        serve_post(w, fd, req);
        return;
    }
    if (strncmp(req, "GET ", 4) != 0) {
        respond_text(fd, "405 Method Not Allowed", "GET, or POST to lab\n");
        return;
    }
    const char *path = req + 4;
    size_t plen = strcspn(path, " \r\n");
    if (path_is(path, plen, "/") || path_is(path, plen, "/index.html")) {
        respond(fd, "200 OK", "text/html; charset=utf-8", web_page_html,
                (size_t)(web_page_html_end - web_page_html));
        return;
    }
    if (!path_is(path, plen, "/api/status") &&
        !path_is(path, plen, "/api/events") &&
        !path_is(path, plen, "/api/groups") &&
        !path_is(path, plen, "/api/lab")) {
        respond_text(fd, "404 Not Found", "try /\n");
        return;
    }
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    if (f == NULL) {
        respond_text(fd, "500 Internal Server Error", "out of memory\n");
        return;
    }
    write_doc(w, path, plen, f);
    if (fclose(f) != 0) {
        free(doc);
        respond_text(fd, "500 Internal Server Error", "out of memory\n");
        return;
    }
    respond(fd, "200 OK", "application/json", doc, len);
    free(doc);
}

/* Reads one request head (bounded in bytes and time) and answers it. */
static void serve_conn(struct web *w, int fd)
{
    char req[WEB_REQUEST_MAX + 1];
    size_t n = 0;
    int64_t deadline = cli_mono_ms() + WEB_REQUEST_DEADLINE_MS;
    while (n < WEB_REQUEST_MAX) {
        int64_t left = deadline - cli_mono_ms();
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&pf, 1, (int)left) <= 0) {
            return; /* slow or silent: dropped */
        }
        ssize_t r = recv(fd, req + n, WEB_REQUEST_MAX - n, 0);
        if (r <= 0) {
            return;
        }
        n += (size_t)r;
        req[n] = '\0';
        if (strstr(req, "\r\n\r\n") != NULL || strstr(req, "\n\n") != NULL) {
            serve_request(w, fd, req);
            return;
        }
    }
    respond_text(fd, "431 Request Header Fields Too Large", "too large\n");
}

static int listen_on(const char *host, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        cli_error("web: --host %s: expected an IPv4 address", host);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(fd, 16) != 0) {
        cli_error("web: cannot listen on %s:%d: %s", host, port,
                  strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    return fd;
}

/* Answers requests one at a time until a signal or end_ms (monotonic),
 * collecting the lab's finished actions in between. */
static void serve_until(struct web *w, int lfd, int64_t end_ms)
{
    while (!web_stop && cli_mono_ms() < end_ms) {
        lab_reap(&w->lab, cli_wall_ms());
        struct pollfd pf = {.fd = lfd, .events = POLLIN};
        if (poll(&pf, 1, 200) <= 0) {
            continue;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            continue;
        }
        serve_conn(w, fd);
        close(fd);
    }
}

int web_main(int argc, char **argv, const struct web_local *local)
{
    int32_t port = local->port_default;
    bool lab = false;
    const char *host = "127.0.0.1";
    const char *http = NULL;
    int64_t for_ms = 0;
    const struct opts_spec specs[] = {
        {"--port", OPTS_INT32, &port, 1, 65535},
        {"--host", OPTS_STRING, &host, 0, 0},
        {"--http", OPTS_STRING, &http, 0, 0},
        {"--for-ms", OPTS_INT64, &for_ms, 1, INT64_MAX / 2},
        {"--lab", OPTS_FLAG, &lab, 0, 0},
    };
    int n_pos = 0;
    int rc =
        opts_parse(&web_cmd, argc, argv, 1, specs, ARRAY_LEN(specs), &n_pos);
    if (rc >= 0) {
        return rc;
    }
    if (n_pos > 0) {
        return opts_usage_error(&web_cmd, "unexpected argument '%s'",
                                argv[1]);
    }
    static struct web w;
    const char *list = http != NULL ? http : local->http_default;
    if (!events_sources_parse(list, w.src, &w.n_src)) {
        return opts_usage_error(&web_cmd,
                                "--http: expected HOST:PORT,... "
                                "(at most %d), got '%s'",
                                EVENTS_SOURCES_MAX, list);
    }
    struct ctl_client cc;
    char err[CTL_CLIENT_ERROR_BYTES];
    if (ctl_client_init(&cc, local->controllers, NULL, err, sizeof err) !=
        RC_OK) {
        cli_error("web: %s", err);
        return CLI_EXIT_FAILED;
    }
    w.cc = &cc;
    int lfd = listen_on(host, port);
    if (lfd < 0) {
        ctl_client_close(&cc);
        return CLI_EXIT_FAILED;
    }
    events_sources_name(w.src, w.n_src);
    w.port = port;
    lab_init(&w.lab, lab, local->is_local && http == NULL, local->base_port,
             host);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("the cluster page: http://%s:%d/ (lab bench %s)\n", host, port,
           w.lab.why);
    fflush(stdout);
    serve_until(&w, lfd, for_ms > 0 ? cli_mono_ms() + for_ms : INT64_MAX);
    lab_stop(&w.lab);
    close(lfd);
    ctl_client_close(&cc);
    return CLI_EXIT_OK;
}
