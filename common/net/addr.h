/* Addresses as Kafka writes them in configs: "host:port", listeners
 * "NAME://host:port" and quorum voters "id@host:port,id@host:port". Pure,
 * any thread. */
#ifndef CAIRN_COMMON_ADDR_H
#define CAIRN_COMMON_ADDR_H

#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/limits.h"

struct addr {
    char host[META_HOST_BYTES_MAX + 1];
    int port;
};

struct addr_voter {
    int32_t id;
    struct addr addr;
};

/* "host:port" (len bytes at s). RC_INVALID names nothing; callers report
 * the config key. */
MUST_CHECK int addr_parse(const char *s, size_t len, struct addr *out);

/* The first listener of a comma-separated "NAME://host:port" list. */
MUST_CHECK int addr_parse_listener(const char *s, struct addr *out);

/* "id@host:port,..." into out[max]; ids positive and distinct. */
MUST_CHECK int addr_parse_voters(const char *s, struct addr_voter *out,
                                 size_t max, size_t *n);

/* "host:port" into out (cap bytes). */
void addr_format(const struct addr *a, char *out, size_t cap);

#endif
