/* Checks on libraft 0.15's messages (controller/raft_guard.h). Pure. */
#include "controller/raft_guard.h"

#include <string.h>

#include "common/rc.h"

/* Sizes libraft's decoders read (src/uv_encoding.c). */
#define GUARD__REQUEST_VOTE_V1 32         /* term, candidate, index, term */
#define GUARD__REQUEST_VOTE 40            /* + flags */
#define GUARD__REQUEST_VOTE_RESULT_V1 16  /* term, granted */
#define GUARD__REQUEST_VOTE_RESULT 24     /* + flags */
#define GUARD__APPEND_ENTRIES_RESULT 24   /* term, rejected, last index */
#define GUARD__TIMEOUT_NOW 24             /* term, last index, last term */
#define GUARD__APPEND_ENTRIES_FIXED 40    /* 4 fields and the entry count */
#define GUARD__ENTRY_HEADER 16
#define GUARD__SNAPSHOT_FIXED 40          /* 4 fields and the conf length */

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = v << 8 | p[i];
    }
    return v;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

int raft_guard_preamble(const uint8_t *p, uint64_t *type, size_t *header_len)
{
    uint64_t t = le64(p);
    uint64_t len = le64(p + 8);
    if (t < RAFT_GUARD_APPEND_ENTRIES || t > RAFT_GUARD_TIMEOUT_NOW ||
        len == 0 || len > RAFT_GUARD_HEADER_BYTES_MAX) {
        return RC_MALFORMED;
    }
    *type = t;
    *header_len = (size_t)len;
    return RC_OK;
}

int raft_guard_configuration(const uint8_t *p, size_t len)
{
    if (len < 9 || p[0] != 1 /* libraft's ENCODING_FORMAT */) {
        return RC_MALFORMED;
    }
    uint64_t n = le64(p + 1);
    if (n > RAFT_GUARD_SERVERS_MAX) {
        return RC_MALFORMED;
    }
    size_t at = 9;
    for (uint64_t i = 0; i < n; i++) {
        if (len - at < 8 || le64(p + at) == 0) {
            return RC_MALFORMED; /* libraft asserts on id 0 */
        }
        at += 8;
        const uint8_t *nul = memchr(p + at, 0, len - at);
        if (nul == NULL) {
            return RC_MALFORMED;
        }
        at = (size_t)(nul - p) + 1;
        if (at >= len || p[at] > 2 /* standby, voter, spare */) {
            return RC_MALFORMED;
        }
        at++;
    }
    return RC_OK;
}

static int append_entries(const uint8_t *h, size_t len, size_t *payload_len)
{
    if (len < GUARD__APPEND_ENTRIES_FIXED) {
        return RC_MALFORMED;
    }
    uint64_t n = le64(h + 32);
    if (n > (len - GUARD__APPEND_ENTRIES_FIXED) / GUARD__ENTRY_HEADER) {
        return RC_MALFORMED; /* more entries claimed than the header holds */
    }
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *e = h + GUARD__APPEND_ENTRIES_FIXED +
                           i * GUARD__ENTRY_HEADER;
        uint8_t type = e[8];
        uint32_t size = le32(e + 12);
        if (type < RAFT_GUARD_ENTRY_COMMAND ||
            type > RAFT_GUARD_ENTRY_CHANGE || size % 8 != 0 ||
            (type == RAFT_GUARD_ENTRY_CHANGE && size == 0)) {
            return RC_MALFORMED; /* libraft asserts on an empty change */
        }
        total += size;
        if (total > RAFT_GUARD_PAYLOAD_BYTES_MAX) {
            return RC_MALFORMED;
        }
    }
    *payload_len = (size_t)total;
    return RC_OK;
}

static int install_snapshot(const uint8_t *h, size_t len,
                            size_t *payload_len)
{
    if (len < GUARD__SNAPSHOT_FIXED + 8) {
        return RC_MALFORMED;
    }
    uint64_t conf_len = le64(h + 32);
    if (conf_len == 0 || conf_len > len - GUARD__SNAPSHOT_FIXED - 8 ||
        raft_guard_configuration(h + GUARD__SNAPSHOT_FIXED,
                                 (size_t)conf_len) != RC_OK) {
        return RC_MALFORMED;
    }
    uint64_t data_len = le64(h + GUARD__SNAPSHOT_FIXED + conf_len);
    if (data_len > RAFT_GUARD_PAYLOAD_BYTES_MAX) {
        return RC_MALFORMED;
    }
    *payload_len = (size_t)data_len;
    return RC_OK;
}

int raft_guard_header(uint64_t type, const uint8_t *h, size_t len,
                      size_t *payload_len)
{
    *payload_len = 0;
    switch (type) {
    case RAFT_GUARD_APPEND_ENTRIES:
        return append_entries(h, len, payload_len);
    case RAFT_GUARD_INSTALL_SNAPSHOT:
        return install_snapshot(h, len, payload_len);
    case RAFT_GUARD_REQUEST_VOTE:
        /* libraft reads the flags unless the length is exactly v1's. */
        return len == GUARD__REQUEST_VOTE_V1 || len >= GUARD__REQUEST_VOTE
                   ? RC_OK
                   : RC_MALFORMED;
    case RAFT_GUARD_REQUEST_VOTE_RESULT:
        return len == GUARD__REQUEST_VOTE_RESULT_V1 ||
                       len >= GUARD__REQUEST_VOTE_RESULT
                   ? RC_OK
                   : RC_MALFORMED;
    case RAFT_GUARD_APPEND_ENTRIES_RESULT:
        return len >= GUARD__APPEND_ENTRIES_RESULT ? RC_OK : RC_MALFORMED;
    case RAFT_GUARD_TIMEOUT_NOW:
        return len >= GUARD__TIMEOUT_NOW ? RC_OK : RC_MALFORMED;
    default:
        return RC_MALFORMED;
    }
}

int raft_guard_entries(const uint8_t *h, size_t header_len,
                       const uint8_t *payload, size_t len)
{
    uint64_t n = le64(h + 32);
    size_t at = 0;
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *e = h + GUARD__APPEND_ENTRIES_FIXED +
                           i * GUARD__ENTRY_HEADER;
        size_t size = le32(e + 12);
        if (GUARD__APPEND_ENTRIES_FIXED + (i + 1) * GUARD__ENTRY_HEADER >
                header_len ||
            size > len - at) {
            return RC_MALFORMED;
        }
        if (e[8] == RAFT_GUARD_ENTRY_CHANGE &&
            raft_guard_configuration(payload + at, size) != RC_OK) {
            return RC_MALFORMED;
        }
        at += size;
    }
    return at == len ? RC_OK : RC_MALFORMED;
}
