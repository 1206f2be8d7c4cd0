/* Blocking Kafka request/response over one socket
 * (common/kafka/kafka_client.h). The socket is non-blocking; every wait is
 * a poll() bounded by the deadline. */
#include "common/kafka/kafka_client.h"

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
#include <time.h>
#include <unistd.h>

#include "common/kafka/kafka_frame.h"
#include "common/limits.h"
#include "common/rc.h"
#include "common/reader.h"

/* A request is our header and a body the caller bounded; REQUEST_BYTES_MAX
 * is what a broker accepts at all. */
_Static_assert(REQUEST_BYTES_MAX <= 0x7fffffffu -
                   KAFKA_FRAME_REQUEST_HEADER_BYTES(KAFKA_CLIENT_ID_BYTES_MAX),
               "a request's size must fit its int32 size field");

static int fail(struct kafka_client *kc, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct kafka_client *kc, int rc, const char *fmt, ...)
{
    ASSERT(rc != RC_OK);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(kc->error, sizeof kc->error, fmt, ap);
    va_end(ap);
    kafka_client_close(kc);
    return rc;
}

static int64_t clock_ns(void)
{
    struct timespec ts;
    int rv = clock_gettime(CLOCK_MONOTONIC, &ts);
    ASSERT(rv == 0);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Milliseconds left before the deadline, rounded up; 0 when it passed. */
static int left_ms(const struct kafka_client *kc)
{
    int64_t left = kc->deadline_ns - clock_ns();
    if (left <= 0) {
        return 0;
    }
    int64_t ms = (left + 999999) / 1000000;
    return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

/* Waits until fd is ready for events. RC_OK, RC_TIMEOUT or RC_IO (errno
 * kept). */
static int wait_fd(const struct kafka_client *kc, int fd, short events)
{
    for (;;) {
        int ms = left_ms(kc);
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
static int connect_one(struct kafka_client *kc, const struct addrinfo *ai,
                       int *fd_out)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
                                       SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
        return RC_IO;
    }
    int rv = RC_OK;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        rv = errno == EINPROGRESS ? wait_fd(kc, fd, POLLOUT) : RC_IO;
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

int kafka_client_open(struct kafka_client *kc, const char *host,
                      int32_t port, const char *client_id,
                      uint64_t timeout_ms)
{
    ASSERT(strlen(client_id) <= KAFKA_CLIENT_ID_BYTES_MAX);
    memset(kc, 0, sizeof *kc);
    kc->fd = -1;
    kc->next_correlation_id = 1;
    strcpy(kc->client_id, client_id);
    char service[12];
    snprintf(service, sizeof service, "%" PRId32, port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    struct addrinfo *ais = NULL;
    int gai = getaddrinfo(host, service, &hints, &ais);
    if (gai != 0) {
        return fail(kc, RC_INVALID, "cannot resolve '%s': %s", host,
                    gai_strerror(gai));
    }
    kafka_client_set_timeout(kc, timeout_ms);
    int rv = RC_IO;
    int err = 0;
    for (const struct addrinfo *ai = ais; ai != NULL; ai = ai->ai_next) {
        rv = connect_one(kc, ai, &kc->fd);
        err = errno;
        if (rv != RC_IO) {
            break; /* connected, or out of time */
        }
    }
    freeaddrinfo(ais);
    if (rv == RC_TIMEOUT) {
        return fail(kc, rv, "connect: no answer within %" PRIu64 " ms",
                    timeout_ms);
    }
    if (rv != RC_OK) {
        return fail(kc, rv, "connect: %s", strerror(err));
    }
    return RC_OK;
}

void kafka_client_set_timeout(struct kafka_client *kc, uint64_t timeout_ms)
{
    kc->timeout_ms = timeout_ms;
    kc->deadline_ns = clock_ns() + (int64_t)(timeout_ms * 1000000u);
}

void kafka_client_close(struct kafka_client *kc)
{
    if (kc->fd >= 0) {
        close(kc->fd);
        kc->fd = -1;
    }
}

/* --- The stream ---------------------------------------------------------- */

int kafka_client_send(struct kafka_client *kc, const uint8_t *p, size_t n)
{
    if (kc->fd < 0) {
        return fail(kc, RC_CLOSED, "not connected");
    }
    while (n > 0) {
        ssize_t w = send(kc->fd, p, n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            return fail(kc, RC_IO, "send: %s", strerror(errno));
        }
        int rv = wait_fd(kc, kc->fd, POLLOUT);
        if (rv == RC_TIMEOUT) {
            return fail(kc, rv, "request not sent within %" PRIu64 " ms",
                        kc->timeout_ms);
        }
        if (rv != RC_OK) {
            return fail(kc, rv, "poll: %s", strerror(errno));
        }
    }
    return RC_OK;
}

int kafka_client_recv(struct kafka_client *kc, uint8_t *buf, size_t cap,
                      size_t *got)
{
    ASSERT(cap > 0);
    *got = 0;
    if (kc->fd < 0) {
        return fail(kc, RC_CLOSED, "not connected");
    }
    for (;;) {
        ssize_t r = recv(kc->fd, buf, cap, 0);
        if (r > 0) {
            *got = (size_t)r;
            return RC_OK;
        }
        if (r == 0) {
            return fail(kc, RC_CLOSED, "the broker closed the connection");
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            return fail(kc, RC_IO, "recv: %s", strerror(errno));
        }
        int rv = wait_fd(kc, kc->fd, POLLIN);
        if (rv == RC_TIMEOUT) {
            return fail(kc, rv, "no answer within %" PRIu64 " ms",
                        kc->timeout_ms);
        }
        if (rv != RC_OK) {
            return fail(kc, rv, "poll: %s", strerror(errno));
        }
    }
}

static int recv_all(struct kafka_client *kc, uint8_t *p, size_t n)
{
    while (n > 0) {
        size_t got = 0;
        int rv = kafka_client_recv(kc, p, n, &got);
        if (rv != RC_OK) {
            return rv;
        }
        p += got;
        n -= got;
    }
    return RC_OK;
}

/* --- One exchange -------------------------------------------------------- */

/* The whole request frame, size prefix first. */
static int send_request(struct kafka_client *kc, int16_t api_key,
                        int16_t api_version, int32_t correlation_id,
                        const struct writer *body)
{
    if (body->len > REQUEST_BYTES_MAX) {
        return fail(kc, RC_TOO_LARGE, "request of %zu bytes is above the "
                    "brokers' limit", body->len);
    }
    struct writer w;
    /* + 1: request header v2's (empty) tagged fields, flexible only. */
    writer_init(&w, KAFKA_FRAME_SIZE_BYTES +
                        KAFKA_FRAME_REQUEST_HEADER_BYTES(
                            strlen(kc->client_id)) + 1u + body->len);
    size_t size_at = kafka_frame_request_begin(&w, api_key, api_version,
                                               correlation_id,
                                               kc->client_id);
    writer_raw(&w, body->data, body->len);
    int rv = kafka_frame_end(&w, size_at);
    if (rv != RC_OK) {
        rv = fail(kc, rv, "request not built: %s", rc_str(rv));
    } else {
        rv = kafka_client_send(kc, w.data, w.len);
    }
    writer_free(&w);
    return rv;
}

int kafka_client_recv_frame(struct kafka_client *kc, uint8_t **frame,
                            size_t *len)
{
    *frame = NULL;
    *len = 0;
    uint8_t head[KAFKA_FRAME_SIZE_BYTES];
    int rv = recv_all(kc, head, sizeof head);
    if (rv != RC_OK) {
        return rv;
    }
    struct reader r;
    reader_init(&r, head, sizeof head);
    size_t size = 0;
    rv = kafka_frame_size_read(&r, KAFKA_FRAME_RESPONSE_HEADER_BYTES,
                               KAFKA_CLIENT_RESPONSE_BYTES_MAX, &size);
    if (rv == RC_MALFORMED) {
        return fail(kc, rv, "response size %zu", size);
    }
    if (rv != RC_OK) {
        return fail(kc, rv, "response of %zu bytes is above %u", size,
                    KAFKA_CLIENT_RESPONSE_BYTES_MAX);
    }
    uint8_t *buf = malloc(size);
    if (buf == NULL) {
        return fail(kc, RC_NOMEM, "out of memory");
    }
    rv = recv_all(kc, buf, size);
    if (rv != RC_OK) {
        free(buf);
        return rv;
    }
    *frame = buf;
    *len = size;
    return RC_OK;
}

int kafka_client_call(struct kafka_client *kc, int16_t api_key,
                      int16_t api_version, const struct writer *body,
                      uint8_t **resp, size_t *resp_len)
{
    *resp = NULL;
    *resp_len = 0;
    ASSERT(body->rc == RC_OK);
    if (kc->fd < 0) {
        return fail(kc, RC_CLOSED, "not connected");
    }
    int32_t id = kc->next_correlation_id++;
    int rv = send_request(kc, api_key, api_version, id, body);
    uint8_t *buf = NULL;
    size_t n = 0;
    if (rv == RC_OK) {
        rv = kafka_client_recv_frame(kc, &buf, &n);
    }
    if (rv != RC_OK) {
        return rv;
    }
    struct reader r;
    reader_init(&r, buf, n);
    int32_t got = 0;
    rv = kafka_frame_response_read(&r, id, &got);
    if (rv != RC_OK) {
        free(buf);
        return fail(kc, rv, "response to correlation id %" PRId32
                    ", expected %" PRId32, got, id);
    }
    if (r.pos == n) {
        free(buf); /* no body */
        return RC_OK;
    }
    /* The body starts after header v1's tagged fields. */
    rv = kafka_frame_response_tags(&r, api_key, api_version);
    if (rv != RC_OK) {
        free(buf);
        return fail(kc, rv, "response header of api key %d v%d", api_key,
                    api_version);
    }
    memmove(buf, buf + r.pos, n - r.pos);
    *resp = buf;
    *resp_len = n - r.pos;
    return RC_OK;
}
