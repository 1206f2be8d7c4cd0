/* Test helper: blocking Kafka request/response (tests/lib/kafka_wire.h). */
#include "tests/lib/kafka_wire.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/bytes.h"

int kafka_wire_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

uint8_t *kafka_wire_roundtrip(int fd, int16_t key, int16_t version,
                              const struct writer *body, size_t *len)
{
    static int32_t correlation = 1;
    uint8_t hdr[4 + 2 + 2 + 4 + 2 + 4];
    size_t total = sizeof hdr - 4 + body->len;
    bytes_put_be32(hdr, (uint32_t)total);
    bytes_put_be16(hdr + 4, (uint16_t)key);
    bytes_put_be16(hdr + 6, (uint16_t)version);
    bytes_put_be32(hdr + 8, (uint32_t)correlation++);
    bytes_put_be16(hdr + 12, 4);
    memcpy(hdr + 14, "test", 4);
    if (send(fd, hdr, sizeof hdr, MSG_NOSIGNAL) != (ssize_t)sizeof hdr ||
        send(fd, body->data, body->len, MSG_NOSIGNAL) !=
            (ssize_t)body->len) {
        return NULL;
    }
    uint8_t size[4];
    if (recv(fd, size, 4, MSG_WAITALL) != 4) {
        return NULL;
    }
    size_t n = bytes_be32(size);
    if (n < 4 || n > (64u << 20)) {
        return NULL;
    }
    uint8_t *buf = malloc(n);
    if (buf == NULL || recv(fd, buf, n, MSG_WAITALL) != (ssize_t)n) {
        free(buf);
        return NULL;
    }
    *len = n - 4;
    memmove(buf, buf + 4, n - 4);
    return buf;
}
