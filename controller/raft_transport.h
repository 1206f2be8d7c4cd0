/* The controllers' Raft transport: libraft's pluggable raft_uv_transport
 * over TCP, in place of its own raft_uv_tcp, so that only the configured
 * voters, holding the cluster's Raft secret, reach libraft, and only with
 * messages it can decode safely.
 *
 *   - Handshake. The accepting side sends "CAIRNRFT" and a 32-byte random
 *     challenge; the connecting side answers "CAIRNRFT", its u64 server
 *     id, the u64 length and bytes of its Raft address, and HMAC-SHA256
 *     under controller.quorum.raft.secret of ("cairn-raft-1", the
 *     challenge, the id, the address). The id must be a configured voter
 *     and the address that voter's; a wrong MAC, a stranger, a late or
 *     oversized hello closes the connection. Integers are little endian,
 *     as libraft's. At most RAFT_TRANSPORT_PENDING_MAX connections may be
 *     in their handshake at once (a new one closes the oldest, so idle
 *     strangers cannot keep a voter out); each has
 *     RAFT_TRANSPORT_HANDSHAKE_MS.
 *   - Inbound messages. After the handshake libraft reads from one end of
 *     a socketpair; this module reads the TCP connection, checks each
 *     message whole with controller/raft_guard.h and writes only those
 *     that pass to the other end. A message that fails closes both.
 *     Reading pauses while RAFT_TRANSPORT_QUEUE_BYTES_MAX are queued for
 *     libraft.
 *   - Outbound. libraft only writes to the connections it opens, so once
 *     the handshake is done the TCP stream is handed to it as it is.
 *
 * Loop thread only. */
#ifndef CAIRN_CONTROLLER_RAFT_TRANSPORT_H
#define CAIRN_CONTROLLER_RAFT_TRANSPORT_H

#include <raft.h>
#include <raft/uv.h>
#include <stddef.h>
#include <uv.h>

#include "common/assert.h"
#include "common/net/addr.h"
#include "common/trace.h"

#define RAFT_TRANSPORT_SECRET_BYTES_MIN 16
#define RAFT_TRANSPORT_SECRET_BYTES_MAX 256
#define RAFT_TRANSPORT_HANDSHAKE_MS 5000
#define RAFT_TRANSPORT_PENDING_MAX 64
#define RAFT_TRANSPORT_QUEUE_BYTES_MAX (8u << 20)

struct raft_transport_config {
    const char *secret;      /* controller.quorum.raft.secret */
    const struct addr_voter *voters; /* controller.quorum.raft.voters */
    size_t n_voters;
};

/* Fills t (its methods and impl) for loop. The config is copied.
 * RC_NOMEM; RC_CONFIG when the secret is shorter than
 * RAFT_TRANSPORT_SECRET_BYTES_MIN or longer than the max. */
MUST_CHECK int raft_transport_init(struct raft_uv_transport *t,
                                   uv_loop_t *loop,
                                   const struct raft_transport_config *cfg,
                                   struct tracer *tracer);

/* Frees what raft_transport_init() allocated; after libraft closed the
 * transport (raft_close()'s callback), or if libraft never used it. */
void raft_transport_free(struct raft_uv_transport *t);

/* The handshake's MAC (exposed for tests): HMAC-SHA256 under secret of
 * "cairn-raft-1" || challenge[32] || id (u64 LE) || address. */
#define RAFT_TRANSPORT_CHALLENGE_BYTES 32
#define RAFT_TRANSPORT_MAC_BYTES 32
void raft_transport_mac(const char *secret,
                        const uint8_t challenge[RAFT_TRANSPORT_CHALLENGE_BYTES],
                        uint64_t id, const char *address, size_t address_len,
                        uint8_t out[RAFT_TRANSPORT_MAC_BYTES]);

#endif
