/* Zero-copy helpers for the Kafka listener (broker/kafka/kafka_server.c): one
 * sendfile(2) of a file range to a non-blocking socket, a pread(2) loop
 * for the copy fallback, and a pool of fixed-size copy buffers.
 *
 * Debian's libuv 1.44 uv_fs_sendfile never calls sendfile(2) for a socket
 * (it falls back to 8 KiB pread/write on the threadpool), so the listener
 * calls net_sendfile() on the socket's fd from the loop thread, and only
 * when nothing is queued ahead of it on that socket; when the socket is
 * full it net_pread_full()s a bounded chunk into a pooled buffer and hands
 * that to uv_write. No libuv here. Loop thread only (the pool has no
 * lock). The process must ignore SIGPIPE (broker/main.c does): sendfile(2)
 * to a reset socket raises it. */
#ifndef CAIRN_BROKER_NET_SENDFILE_H
#define CAIRN_BROKER_NET_SENDFILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"

/* One sendfile(2) (retried on EINTR) of at most count bytes of file_fd
 * from position to sock_fd; *sent_out gets what went out.
 *   RC_OK     something went out (maybe fewer than count: socket full)
 *   RC_BUSY   nothing went out: the socket is full (EAGAIN)
 *   RC_SHORT  the file ends at position (truncated under the caller)
 *   RC_IO     sendfile(2) failed otherwise (errno kept): copy instead,
 *             and a socket error will surface through the copy's write */
MUST_CHECK int net_sendfile(int sock_fd, int file_fd, int64_t position,
                            size_t count, size_t *sent_out);

/* Reads exactly n bytes of fd at position into buf. RC_SHORT if the file
 * ends first, RC_IO on a read error (errno kept). */
MUST_CHECK int net_pread_full(int fd, void *buf, size_t n, int64_t position);

/* Buffers of buf_bytes each; at most keep_max idle ones are kept. */
struct net_pool {
    void *idle;       /* singly linked through each buffer's first word */
    size_t n_idle;
    size_t keep_max;
    size_t buf_bytes;
};

void net_pool_init(struct net_pool *p, size_t buf_bytes, size_t keep_max);
/* A buffer of p->buf_bytes, or NULL when out of memory. */
void *net_pool_get(struct net_pool *p);
/* Takes ownership of buf (from net_pool_get on the same pool). */
void net_pool_put(struct net_pool *p, void *buf);
/* Frees the idle buffers; buffers still out must not come back. */
void net_pool_free(struct net_pool *p);

#endif
