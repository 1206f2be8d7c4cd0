/* TCP listener set-up and socket address helpers (common/net/net.h). Loop
 * thread only. */
#include "common/net/net.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/rc.h"

int net_sockaddr_resolve(uv_loop_t *loop, const char *host, int port,
                         struct sockaddr_storage *out)
{
    uv_getaddrinfo_t req;
    struct addrinfo hints;
    struct sockaddr_in *sin = (struct sockaddr_in *)out;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;

    memset(out, 0, sizeof *out);
    if (uv_ip4_addr(host, port, sin) == 0 ||
        uv_ip6_addr(host, port, sin6) == 0) {
        return RC_OK;
    }
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (uv_getaddrinfo(loop, &req, NULL, host, NULL, &hints) != 0) {
        return RC_INVALID;
    }
    if (req.addrinfo == NULL || req.addrinfo->ai_addrlen > sizeof *out ||
        (req.addrinfo->ai_family != AF_INET &&
         req.addrinfo->ai_family != AF_INET6)) {
        uv_freeaddrinfo(req.addrinfo);
        return RC_INVALID;
    }
    memcpy(out, req.addrinfo->ai_addr, req.addrinfo->ai_addrlen);
    uv_freeaddrinfo(req.addrinfo);
    if (out->ss_family == AF_INET) {
        sin->sin_port = htons((uint16_t)port);
    } else {
        sin6->sin6_port = htons((uint16_t)port);
    }
    return RC_OK;
}

void net_sockaddr_name(const struct sockaddr_storage *ss, char *out,
                       size_t cap)
{
    char ip[INET6_ADDRSTRLEN] = "?";

    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
        (void)uv_ip4_name(sin, ip, sizeof ip);
        snprintf(out, cap, "%s:%u", ip, (unsigned)ntohs(sin->sin_port));
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
        (void)uv_ip6_name(sin6, ip, sizeof ip);
        snprintf(out, cap, "[%s]:%u", ip, (unsigned)ntohs(sin6->sin6_port));
    } else {
        snprintf(out, cap, "?");
    }
}

int net_listen(uv_tcp_t *listener, uv_loop_t *loop, const char *host,
               int port, int backlog, uv_connection_cb cb, int *port_out,
               struct tracer *t)
{
    struct sockaddr_storage ss;
    int ss_len = (int)sizeof ss;
    int rv;

    ASSERT(cb != NULL);
    if (net_sockaddr_resolve(loop, host, port, &ss) != RC_OK) {
        TRACE_WARN(t, "host=%s port=%d: bad address", host, port);
        return RC_INVALID;
    }
    rv = uv_tcp_bind(listener, (const struct sockaddr *)&ss, 0);
    if (rv == 0) {
        rv = uv_listen((uv_stream_t *)listener, backlog, cb);
    }
    if (rv == 0) {
        rv = uv_tcp_getsockname(listener, (struct sockaddr *)&ss, &ss_len);
    }
    if (rv != 0) {
        TRACE_WARN(t, "host=%s port=%d: listen failed: %s", host, port,
                   uv_strerror(rv));
        return RC_IO;
    }
    *port_out = ss.ss_family == AF_INET6
                    ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                    : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return RC_OK;
}
