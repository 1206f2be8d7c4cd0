/* See cli/client/http_get.h. */
#include "cli/client/http_get.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli/util/cli.h"
#include "common/rc.h"

/* Waits for events on fd until deadline; false after it (or an error). */
static bool wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - cli_mono_ms();
        if (left <= 0) {
            return false;
        }
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, (int)left);
        if (n > 0) {
            return true;
        }
        if (n < 0 && errno != EINTR) {
            return false;
        }
    }
}

static int connect_by(const char *host, int port, int64_t deadline, char *err,
                      size_t cap)
{
    char service[8];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    int g = getaddrinfo(host, service, &hints, &ai);
    if (g != 0) {
        snprintf(err, cap, "%s: %s", host, gai_strerror(g));
        return -1;
    }
    int fd =
        socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
               ai->ai_protocol);
    if (fd < 0) {
        snprintf(err, cap, "socket: %s", strerror(errno));
        freeaddrinfo(ai);
        return -1;
    }
    int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    if (rc != 0 && errno != EINPROGRESS) {
        snprintf(err, cap, "%s:%d: %s", host, port, strerror(errno));
        close(fd);
        return -1;
    }
    if (rc != 0) {
        int so = 0;
        socklen_t sl = sizeof so;
        if (!wait_fd(fd, POLLOUT, deadline)) {
            snprintf(err, cap, "%s:%d: no connection in time", host, port);
            close(fd);
            return -1;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) != 0 || so != 0) {
            snprintf(err, cap, "%s:%d: %s", host, port, strerror(so));
            close(fd);
            return -1;
        }
    }
    return fd;
}

static int exchange(int fd, const char *host, const char *path,
                    int64_t deadline, char **buf, size_t *len, char *err,
                    size_t cap)
{
    char req[1024];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.0\r\nHost: %s\r\n"
                     "Connection: close\r\n\r\n",
                     path, host);
    if (n < 0 || (size_t)n >= sizeof req) {
        snprintf(err, cap, "request too long");
        return RC_INVALID;
    }
    for (size_t off = 0; off < (size_t)n;) {
        ssize_t w = send(fd, req + off, (size_t)n - off, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!wait_fd(fd, POLLOUT, deadline)) {
                snprintf(err, cap, "no answer in time");
                return RC_IO;
            }
            continue;
        }
        if (w < 0) {
            snprintf(err, cap, "send: %s", strerror(errno));
            return RC_IO;
        }
        off += (size_t)w;
    }
    size_t cap_buf = 0;
    for (;;) {
        if (cap_buf - *len < 4096) {
            size_t grown = cap_buf == 0 ? 16384 : cap_buf * 2;
            if (grown > HTTP_GET_BODY_MAX + 4096) {
                snprintf(err, cap, "answer over %u bytes", HTTP_GET_BODY_MAX);
                return RC_TOO_LARGE;
            }
            char *b = realloc(*buf, grown);
            if (b == NULL) {
                snprintf(err, cap, "out of memory");
                return RC_NOMEM;
            }
            *buf = b;
            cap_buf = grown;
        }
        ssize_t r = recv(fd, *buf + *len, cap_buf - *len - 1, 0);
        if (r == 0) {
            break;
        }
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!wait_fd(fd, POLLIN, deadline)) {
                snprintf(err, cap, "no answer in time");
                return RC_IO;
            }
            continue;
        }
        if (r < 0) {
            snprintf(err, cap, "recv: %s", strerror(errno));
            return RC_IO;
        }
        *len += (size_t)r;
    }
    (*buf)[*len] = '\0';
    return RC_OK;
}

int http_get(const char *host, int port, const char *path,
             unsigned timeout_ms, char **body, size_t *len, char *err,
             size_t err_cap)
{
    *body = NULL;
    *len = 0;
    int64_t deadline = cli_mono_ms() + timeout_ms;
    int fd = connect_by(host, port, deadline, err, err_cap);
    if (fd < 0) {
        return RC_IO;
    }
    char *buf = NULL;
    size_t n = 0;
    int rc = exchange(fd, host, path, deadline, &buf, &n, err, err_cap);
    close(fd);
    if (rc != RC_OK) {
        free(buf);
        return rc;
    }
    char *head_end = strstr(buf, "\r\n\r\n");
    if (strncmp(buf, "HTTP/1.", 7) != 0 || head_end == NULL) {
        snprintf(err, err_cap, "not an HTTP answer");
        free(buf);
        return RC_INVALID;
    }
    const char *status = strchr(buf, ' ');
    if (status == NULL || strncmp(status + 1, "200", 3) != 0) {
        int line = (int)strcspn(buf, "\r\n");
        snprintf(err, err_cap, "%.*s", line, buf);
        free(buf);
        return RC_IO;
    }
    size_t skip = (size_t)(head_end + 4 - buf);
    memmove(buf, buf + skip, n - skip + 1);
    *body = buf;
    *len = n - skip;
    return RC_OK;
}
