/* Blocking Kafka request/response over one socket (cli/kwire.h). The
 * socket is non-blocking; every wait is a poll() bounded by the deadline. */
#include "cli/kwire.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/bytes.h"
#include "common/limits.h"
#include "common/rc.h"

#define KWIRE__CLIENT_ID "cairn"

/* int16 api_key, int16 api_version, int32 correlation_id, int16 length
 * and the client id. */
#define KWIRE__HEADER_BYTES (2u + 2u + 4u + 2u + sizeof KWIRE__CLIENT_ID - 1u)

/* A request is our header and a body the caller bounded; REQUEST_BYTES_MAX
 * is what a broker accepts at all. */
_Static_assert(REQUEST_BYTES_MAX <= 0x7fffffffu - KWIRE__HEADER_BYTES,
               "a request's size must fit its int32 size field");

static int fail(struct kwire *kw, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct kwire *kw, int rc, const char *fmt, ...)
{
    ASSERT(rc != RC_OK);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(kw->error, sizeof kw->error, fmt, ap);
    va_end(ap);
    kwire_close(kw);
    return rc;
}

/* Milliseconds left before the deadline, rounded up; 0 when it passed. */
static int left_ms(const struct kwire *kw)
{
    int64_t left = kw->deadline_ns - cli_clock_ns();
    if (left <= 0) {
        return 0;
    }
    int64_t ms = (left + 999999) / 1000000;
    return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

/* Waits until fd is ready for events. RC_OK, RC_TIMEOUT or RC_IO (errno
 * kept). */
static int wait_fd(const struct kwire *kw, int fd, short events)
{
    for (;;) {
        int ms = left_ms(kw);
        if (ms == 0) {
            return RC_TIMEOUT;
        }
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, ms);
        if (n > 0) {
            return RC_OK;
        }
        if (n < 0 && errno != EINTR) {
            return RC_IO;
        }
    }
}

/* --- Connecting ---------------------------------------------------------- */

/* One address: RC_OK with *fd_out connected, RC_TIMEOUT, or RC_IO (errno
 * says why). */
static int connect_one(struct kwire *kw, const struct addrinfo *ai,
                       int *fd_out)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
                                       SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
        return RC_IO;
    }
    int rv = RC_OK;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        rv = errno == EINPROGRESS ? wait_fd(kw, fd, POLLOUT) : RC_IO;
        int err = 0;
        socklen_t len = sizeof err;
        if (rv == RC_OK &&
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
            rv = RC_IO;
        } else if (rv == RC_OK && err != 0) {
            errno = err;
            rv = RC_IO;
        }
    }
    if (rv != RC_OK) {
        int saved = errno;
        close(fd);
        errno = saved;
        return rv;
    }
    /* Requests go out whole in one send; no reason to wait for more. */
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    *fd_out = fd;
    return RC_OK;
}

int kwire_open(struct kwire *kw, const char *host, int32_t port,
               uint64_t timeout_ms)
{
    memset(kw, 0, sizeof *kw);
    kw->fd = -1;
    kw->timeout_ms = timeout_ms;
    kw->next_correlation_id = 1;
    char service[12];
    snprintf(service, sizeof service, "%" PRId32, port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    struct addrinfo *ais = NULL;
    int gai = getaddrinfo(host, service, &hints, &ais);
    if (gai != 0) {
        return fail(kw, RC_INVALID, "cannot resolve '%s': %s", host,
                    gai_strerror(gai));
    }
    kw->deadline_ns = cli_clock_ns() + (int64_t)(timeout_ms * 1000000u);
    int rv = RC_IO;
    int err = 0;
    for (const struct addrinfo *ai = ais; ai != NULL; ai = ai->ai_next) {
        rv = connect_one(kw, ai, &kw->fd);
        err = errno;
        if (rv != RC_IO) {
            break; /* connected, or out of time */
        }
    }
    freeaddrinfo(ais);
    if (rv == RC_TIMEOUT) {
        return fail(kw, rv, "connect: no answer within %" PRIu64 " ms",
                    timeout_ms);
    }
    if (rv != RC_OK) {
        return fail(kw, rv, "connect: %s", strerror(err));
    }
    return RC_OK;
}

void kwire_close(struct kwire *kw)
{
    if (kw->fd >= 0) {
        close(kw->fd);
        kw->fd = -1;
    }
}

/* --- One exchange -------------------------------------------------------- */

static int send_all(struct kwire *kw, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(kw->fd, p, n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            return fail(kw, RC_IO, "send: %s", strerror(errno));
        }
        int rv = wait_fd(kw, kw->fd, POLLOUT);
        if (rv == RC_TIMEOUT) {
            return fail(kw, rv, "request not sent within %" PRIu64 " ms",
                        kw->timeout_ms);
        }
        if (rv != RC_OK) {
            return fail(kw, rv, "poll: %s", strerror(errno));
        }
    }
    return RC_OK;
}

static int recv_all(struct kwire *kw, uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t r = recv(kw->fd, p, n, 0);
        if (r > 0) {
            p += r;
            n -= (size_t)r;
            continue;
        }
        if (r == 0) {
            return fail(kw, RC_CLOSED, "the broker closed the connection");
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            return fail(kw, RC_IO, "recv: %s", strerror(errno));
        }
        int rv = wait_fd(kw, kw->fd, POLLIN);
        if (rv == RC_TIMEOUT) {
            return fail(kw, rv, "no answer within %" PRIu64 " ms",
                        kw->timeout_ms);
        }
        if (rv != RC_OK) {
            return fail(kw, rv, "poll: %s", strerror(errno));
        }
    }
    return RC_OK;
}

/* The whole request frame, size prefix first. */
static int send_request(struct kwire *kw, int16_t api_key,
                        int16_t api_version, int32_t correlation_id,
                        const struct writer *body)
{
    if (body->len > REQUEST_BYTES_MAX) {
        return fail(kw, RC_TOO_LARGE, "request of %zu bytes is above the "
                    "brokers' limit", body->len);
    }
    struct writer w;
    writer_init(&w, 4u + KWIRE__HEADER_BYTES + body->len);
    writer_i32(&w, (int32_t)(KWIRE__HEADER_BYTES + body->len));
    writer_i16(&w, api_key);
    writer_i16(&w, api_version);
    writer_i32(&w, correlation_id);
    writer_string(&w, KWIRE__CLIENT_ID, sizeof KWIRE__CLIENT_ID - 1u);
    writer_raw(&w, body->data, body->len);
    int rv = w.rc;
    if (rv != RC_OK) {
        rv = fail(kw, rv, "request not built: %s", rc_str(rv));
    } else {
        rv = send_all(kw, w.data, w.len);
    }
    writer_free(&w);
    return rv;
}

int kwire_call(struct kwire *kw, int16_t api_key, int16_t api_version,
               const struct writer *body, uint8_t **resp, size_t *resp_len)
{
    *resp = NULL;
    *resp_len = 0;
    ASSERT(body->rc == RC_OK);
    if (kw->fd < 0) {
        return fail(kw, RC_CLOSED, "not connected");
    }
    int32_t id = kw->next_correlation_id++;
    int rv = send_request(kw, api_key, api_version, id, body);
    uint8_t head[8];
    if (rv == RC_OK) {
        rv = recv_all(kw, head, sizeof head);
    }
    if (rv != RC_OK) {
        return rv;
    }
    uint32_t size = bytes_be32(head);
    int32_t got = (int32_t)bytes_be32(head + 4);
    if (size < 4u) {
        return fail(kw, RC_MALFORMED, "response size %" PRIu32, size);
    }
    if (size > KWIRE_RESPONSE_BYTES_MAX) {
        return fail(kw, RC_TOO_LARGE, "response of %" PRIu32 " bytes is "
                    "above %u", size, KWIRE_RESPONSE_BYTES_MAX);
    }
    if (got != id) {
        return fail(kw, RC_MALFORMED, "response to correlation id %" PRId32
                    ", expected %" PRId32, got, id);
    }
    size_t n = size - 4u;
    if (n == 0) {
        return RC_OK;
    }
    uint8_t *buf = malloc(n);
    if (buf == NULL) {
        return fail(kw, RC_NOMEM, "out of memory");
    }
    rv = recv_all(kw, buf, n);
    if (rv != RC_OK) {
        free(buf);
        return rv;
    }
    *resp = buf;
    *resp_len = n;
    return RC_OK;
}
