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
#include "common/assert.h"
#include "common/json.h"
#include "common/rc.h"

void web_usage(FILE *out)
{
    fputs("  web [--port P] [--host ADDR] [--for-ms MS]\n"
          "      [--http HOST:PORT,...]\n"
          "      Serves the cluster page at http://ADDR:P/ (default\n"
          "      127.0.0.1, port base+90): controllers, brokers, every\n"
          "      partition's leader, ISR, HW and replicas' log end\n"
          "      offsets, a chart of HW and end offsets over time, and\n"
          "      the events of every process (--http as for events),\n"
          "      refreshed every second. Until killed or --for-ms.\n",
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

/* since_ms=N from the request's query; 0 when absent. */
static int64_t query_since_ms(const char *path, size_t plen)
{
    const char *q = memchr(path, '?', plen);
    if (q == NULL) {
        return 0;
    }
    const char *k = strstr(q, "since_ms=");
    if (k == NULL || k >= path + plen) {
        return 0;
    }
    long long v = strtoll(k + 9, NULL, 10);
    return v > 0 ? (int64_t)v : 0;
}

static void write_events(struct web *w, int64_t since_ms, FILE *out)
{
    for (size_t i = 0; i < w->n_src; i++) {
        w->src[i].seen = 0; /* every request reads each ring whole */
    }
    struct events_batch b;
    int rc = events_collect(w->src, w->n_src, since_ms, &b);
    struct json j;
    json_init(&j, out);
    json_object_begin(&j);
    json_key(&j, "now_ms");
    json_int(&j, cli_wall_ms());
    json_key(&j, "sources");
    json_array_begin(&j);
    for (size_t i = 0; i < w->n_src; i++) {
        json_object_begin(&j);
        json_key(&j, "name");
        json_string(&j, w->src[i].name);
        json_key(&j, "reachable");
        json_bool(&j, w->src[i].reachable);
        json_key(&j, "error");
        json_string_or_null(&j, w->src[i].error);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_key(&j, "events");
    json_array_begin(&j);
    for (size_t k = 0; rc == RC_OK && k < b.n; k++) {
        const struct events_record *r = &b.recs[k];
        json_object_begin(&j);
        json_key(&j, "source");
        json_string(&j, w->src[r->source].name);
        json_key(&j, "seq");
        json_int(&j, (int64_t)r->seq);
        json_key(&j, "time_ms");
        json_int(&j, r->time_ms);
        json_key(&j, "last_ms");
        json_int(&j, r->last_ms);
        json_key(&j, "repeats");
        json_int(&j, r->repeats);
        json_key(&j, "text");
        json_string(&j, r->text);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
    if (rc == RC_OK) {
        events_batch_free(&b);
    }
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

static void serve_request(struct web *w, int fd, const char *req)
{
    if (strncmp(req, "GET ", 4) != 0) {
        respond_text(fd, "405 Method Not Allowed", "only GET\n");
        return;
    }
    const char *path = req + 4;
    size_t plen = strcspn(path, " \r\n");
    if (path_is(path, plen, "/") || path_is(path, plen, "/index.html")) {
        respond(fd, "200 OK", "text/html; charset=utf-8", web_page_html,
                (size_t)(web_page_html_end - web_page_html));
        return;
    }
    bool status = path_is(path, plen, "/api/status");
    bool events = path_is(path, plen, "/api/events");
    bool groups = path_is(path, plen, "/api/groups");
    if (!status && !events && !groups) {
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
    if (status) {
        int st = status_json_write(w->cc, f);
        (void)st; /* no metadata shows in the document as an empty list */
    } else if (groups) {
        write_groups(w, f);
    } else {
        write_events(w, query_since_ms(path, plen), f);
    }
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

int web_main(int argc, char **argv, const char *controllers,
             const char *http_default, int port_default)
{
    int32_t port = port_default;
    const char *host = "127.0.0.1";
    const char *http = NULL;
    int64_t for_ms = 0;
    const struct opts_spec specs[] = {
        {"--port", OPTS_INT32, &port, 1, 65535},
        {"--host", OPTS_STRING, &host, 0, 0},
        {"--http", OPTS_STRING, &http, 0, 0},
        {"--for-ms", OPTS_INT64, &for_ms, 1, INT64_MAX / 2},
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
    const char *list = http != NULL ? http : http_default;
    if (!events_sources_parse(list, w.src, &w.n_src)) {
        return opts_usage_error(&web_cmd,
                                "--http: expected HOST:PORT,... "
                                "(at most %d), got '%s'",
                                EVENTS_SOURCES_MAX, list);
    }
    struct ctl_client cc;
    char err[CTL_CLIENT_ERROR_BYTES];
    if (ctl_client_init(&cc, controllers, NULL, err, sizeof err) != RC_OK) {
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
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("the cluster page: http://%s:%d/\n", host, port);
    fflush(stdout);
    int64_t end = for_ms > 0 ? cli_mono_ms() + for_ms : INT64_MAX;
    while (!web_stop && cli_mono_ms() < end) {
        struct pollfd pf = {.fd = lfd, .events = POLLIN};
        if (poll(&pf, 1, 200) <= 0) {
            continue;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            continue;
        }
        serve_conn(&w, fd);
        close(fd);
    }
    close(lfd);
    ctl_client_close(&cc);
    return CLI_EXIT_OK;
}
