/* sendfile(2), pread(2) and copy buffers for the Kafka listener
 * (broker/kafka/net_sendfile.h). Loop thread only. */
#include "broker/kafka/net_sendfile.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/io.h"
#include "common/rc.h"

/* sendfile(2) moves at most this much per call on Linux. */
#define NET__SENDFILE_CHUNK_MAX 0x7ffff000u

int net_sendfile(int sock_fd, int file_fd, int64_t position, size_t count,
                 size_t *sent_out)
{
    off_t off = (off_t)position;
    ssize_t n;

    ASSERT(position >= 0);
    ASSERT(count > 0);
    *sent_out = 0;
    if (count > NET__SENDFILE_CHUNK_MAX) {
        count = NET__SENDFILE_CHUNK_MAX;
    }
    do {
        n = sendfile(sock_fd, file_fd, &off, count);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
        ASSERT((size_t)n <= count);
        *sent_out = (size_t)n;
        return RC_OK;
    }
    if (n == 0) {
        return RC_SHORT;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return RC_BUSY;
    }
    return RC_IO;
}

int net_pread_full(int fd, void *buf, size_t n, int64_t position)
{
    uint8_t *p = buf;
    size_t have = 0;

    ASSERT(position >= 0);
    while (have < n) {
        ssize_t got = io_pread(fd, p + have, n - have,
                            (off_t)position + (off_t)have);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            return RC_IO;
        }
        if (got == 0) {
            return RC_SHORT;
        }
        have += (size_t)got;
    }
    return RC_OK;
}

struct net__idle {
    struct net__idle *next;
};

void net_pool_init(struct net_pool *p, size_t buf_bytes, size_t keep_max)
{
    ASSERT(buf_bytes >= sizeof(struct net__idle));
    p->idle = NULL;
    p->n_idle = 0;
    p->keep_max = keep_max;
    p->buf_bytes = buf_bytes;
}

void *net_pool_get(struct net_pool *p)
{
    struct net__idle *b = p->idle;

    if (b == NULL) {
        return malloc(p->buf_bytes);
    }
    p->idle = b->next;
    p->n_idle--;
    return b;
}

void net_pool_put(struct net_pool *p, void *buf)
{
    struct net__idle *b = buf;

    if (p->n_idle >= p->keep_max) {
        free(buf);
        return;
    }
    b->next = p->idle;
    p->idle = b;
    p->n_idle++;
}

void net_pool_free(struct net_pool *p)
{
    while (p->idle != NULL) {
        struct net__idle *b = p->idle;
        p->idle = b->next;
        free(b);
    }
    p->n_idle = 0;
}
