/* TCP listener set-up and socket address helpers, for the frame layer's
 * listener (common/net/frame_conn.c) and the RPC client (common/net/rpc.c).
 * Loop thread only; net_sockaddr_name() is pure and any thread. */
#ifndef CAIRN_COMMON_NET_H
#define CAIRN_COMMON_NET_H

#include <stddef.h>
#include <uv.h>

#include "common/assert.h"
#include "common/trace.h"

/* Numeric IPv4 or IPv6, else a name resolved synchronously (uv_getaddrinfo
 * with no callback blocks): only at start-up. RC_INVALID when host names
 * no IPv4 or IPv6 address. */
MUST_CHECK int net_sockaddr_resolve(uv_loop_t *loop, const char *host,
                                    int port, struct sockaddr_storage *out);

/* "ip:port" or "[ip6]:port" into out (cap bytes); "?" for other
 * families. */
void net_sockaddr_name(const struct sockaddr_storage *ss, char *out,
                       size_t cap);

/* Binds the initialised listener to host:port and listens with backlog,
 * accepting through cb; *port_out is the bound port (port 0 picks one).
 * RC_INVALID for an address that does not resolve, RC_IO when bind,
 * listen or getsockname fail; each is logged to t. */
MUST_CHECK int net_listen(uv_tcp_t *listener, uv_loop_t *loop,
                          const char *host, int port, int backlog,
                          uv_connection_cb cb, int *port_out,
                          struct tracer *t);

#endif
