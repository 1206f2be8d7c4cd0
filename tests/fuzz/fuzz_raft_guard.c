/* libFuzzer target for the checks on Raft messages (controller/
 * raft_guard.h). Input: one message as it would arrive on a controller's
 * Raft port after the handshake: preamble, header, payload.
 *
 * The oracle besides the sanitizers: every message the guard passes is
 * then read the way libraft 0.15's decoder reads it (src/uv_encoding.c
 * uvDecodeMessage, uvDecodeBatchHeader, uvDecodeEntriesBatch, and
 * src/configuration.c configurationDecode: the same fields at the same
 * offsets, the entry count used to size an array, each entry's data
 * padded to 8 bytes, configurations walked server by server), from
 * buffers of exactly the sizes libraft would allocate. Any read past them
 * is an ASan report; a decode libraft would fail (an unknown entry type,
 * a bad role) aborts. So a message the guard lets through cannot crash
 * or mislead that decoder.
 *
 * Built and run by `make fuzz` (and `make test`) from the guard's source
 * alone. Pure apart from what libFuzzer does. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/rc.h"
#include "controller/raft_guard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rd64(const uint8_t **p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v |= (uint64_t)(*p)[i] << (8 * i);
    }
    *p += 8;
    return v;
}

static uint32_t rd32(const uint8_t **p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        v |= (uint32_t)(*p)[i] << (8 * i);
    }
    *p += 4;
    return v;
}

/* configurationDecode's reads over a buffer of exactly len bytes. */
static void read_configuration(const uint8_t *conf, size_t len)
{
    ASSERT(len > 0);
    uint8_t *copy = malloc(len);
    ASSERT(copy != NULL);
    memcpy(copy, conf, len);
    const uint8_t *p = copy;
    ASSERT(*p++ == 1);
    uint64_t n = rd64(&p);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = rd64(&p);
        ASSERT(id != 0);
        size_t max = len - (size_t)(p - copy);
        size_t at = 0;
        while (at < max && p[at] != 0) {
            at++;
        }
        ASSERT(at < max);
        p += at + 1;
        uint8_t role = *p++;
        ASSERT(role <= 2);
    }
    free(copy);
}

/* uvDecodeMessage's reads of a header of exactly len bytes, then the
 * payload reads; returns the payload length libraft would allocate. */
static size_t read_header(uint64_t type, const uint8_t *h, size_t len,
                          uint64_t *n_entries, uint32_t **sizes,
                          uint8_t **types)
{
    uint8_t *copy = malloc(len);
    ASSERT(copy != NULL);
    memcpy(copy, h, len);
    const uint8_t *p = copy;
    size_t payload = 0;
    *n_entries = 0;
    switch (type) {
    case RAFT_GUARD_REQUEST_VOTE:
        p += 32;
        if (len != 32) {
            (void)rd64(&p);
        }
        break;
    case RAFT_GUARD_REQUEST_VOTE_RESULT:
        p += 16;
        if (len > 16) {
            (void)rd64(&p);
        }
        break;
    case RAFT_GUARD_APPEND_ENTRIES_RESULT:
    case RAFT_GUARD_TIMEOUT_NOW:
        p += 16;
        (void)rd64(&p);
        break;
    case RAFT_GUARD_APPEND_ENTRIES: {
        p += 32;
        uint64_t n = (unsigned)rd64(&p);
        *n_entries = n;
        *sizes = calloc(n + 1, sizeof **sizes);
        *types = calloc(n + 1, 1);
        ASSERT(*sizes != NULL && *types != NULL);
        for (uint64_t i = 0; i < n; i++) {
            (void)rd64(&p);
            (*types)[i] = *p++;
            ASSERT((*types)[i] >= 1 && (*types)[i] <= 3);
            p += 3;
            (*sizes)[i] = rd32(&p);
            payload += (*sizes)[i];
        }
        break;
    }
    case RAFT_GUARD_INSTALL_SNAPSHOT: {
        p += 32;
        size_t conf_len = (size_t)rd64(&p);
        read_configuration(p, conf_len);
        p += conf_len;
        payload = (size_t)rd64(&p);
        break;
    }
    default:
        ASSERT(type >= RAFT_GUARD_APPEND_ENTRIES && type <= RAFT_GUARD_TIMEOUT_NOW);
    }
    free(copy);
    return payload;
}

/* uvDecodeEntriesBatch over a payload of exactly len bytes, and the
 * configurations of change entries. */
static void read_entries(const uint8_t *payload, size_t len, uint64_t n,
                         const uint32_t *sizes, const uint8_t *types)
{
    uint8_t *copy = malloc(len + 1);
    ASSERT(copy != NULL);
    memcpy(copy, payload, len);
    size_t at = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (sizes[i] == 0) {
            continue;
        }
        ASSERT(at + sizes[i] <= len);
        if (types[i] == RAFT_GUARD_ENTRY_CHANGE) {
            read_configuration(copy + at, sizes[i]);
        }
        at += sizes[i];
        if (sizes[i] % 8 != 0) {
            at += 8 - sizes[i] % 8;
        }
    }
    ASSERT(at <= len);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < RAFT_GUARD_PREAMBLE_BYTES) {
        return 0;
    }
    uint64_t type = 0;
    size_t header_len = 0;
    if (raft_guard_preamble(data, &type, &header_len) != RC_OK ||
        size - RAFT_GUARD_PREAMBLE_BYTES < header_len) {
        return 0;
    }
    const uint8_t *h = data + RAFT_GUARD_PREAMBLE_BYTES;
    size_t payload_len = 0;
    int rv = raft_guard_header(type, h, header_len, &payload_len);
    ASSERT(rv == RC_OK || rv == RC_MALFORMED);
    if (rv != RC_OK) {
        return 0;
    }
    uint64_t n = 0;
    uint32_t *sizes = NULL;
    uint8_t *types = NULL;
    size_t libraft_payload = read_header(type, h, header_len, &n, &sizes,
                                         &types);
    ASSERT(libraft_payload == payload_len);
    const uint8_t *payload = h + header_len;
    size_t rest = size - RAFT_GUARD_PREAMBLE_BYTES - header_len;
    if (type == RAFT_GUARD_APPEND_ENTRIES && rest >= payload_len &&
        raft_guard_entries(h, header_len, payload, payload_len) == RC_OK) {
        read_entries(payload, payload_len, n, sizes, types);
    }
    free(sizes);
    free(types);
    return 0;
}
