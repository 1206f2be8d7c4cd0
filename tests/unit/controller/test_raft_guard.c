/* Tests for controller/raft_guard.c: the checks every Raft message passes
 * before libraft 0.15 decodes it. Messages are built here as libraft's
 * encoder (src/uv_encoding.c) lays them out; the hostile ones are those
 * that crash or mislead its decoder. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/rc.h"
#include "controller/raft_guard.h"

static uint8_t buf[4096];

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static int preamble(uint64_t type, uint64_t len)
{
    uint8_t p[RAFT_GUARD_PREAMBLE_BYTES];
    put64(p, type);
    put64(p + 8, len);
    uint64_t t = 0;
    size_t hl = 0;
    int rv = raft_guard_preamble(p, &t, &hl);
    if (rv == RC_OK) {
        cr_assert_eq(t, type);
        cr_assert_eq(hl, len);
    }
    return rv;
}

/* An AppendEntries header as libraft encodes it (48 + 16 n bytes) with
 * n entries of the given types and sizes. */
static size_t append_entries(size_t n, const uint8_t *types,
                             const uint32_t *sizes)
{
    memset(buf, 0, sizeof buf);
    put64(buf, 7);       /* term */
    put64(buf + 8, 10);  /* prev index */
    put64(buf + 16, 6);  /* prev term */
    put64(buf + 24, 9);  /* commit */
    put64(buf + 32, n);
    for (size_t i = 0; i < n; i++) {
        uint8_t *e = buf + 40 + 16 * i;
        put64(e, 7);
        e[8] = types[i];
        put32(e + 12, sizes[i]);
    }
    return 48 + 16 * n;
}

/* A configuration as libraft encodes it: format 1, n, then id, address,
 * NUL, role per server. */
static size_t configuration(uint8_t *p, size_t n, uint64_t first_id,
                            uint8_t role)
{
    size_t at = 0;
    p[at++] = 1;
    put64(p + at, n);
    at += 8;
    for (size_t i = 0; i < n; i++) {
        put64(p + at, first_id + i);
        at += 8;
        at += (size_t)sprintf((char *)p + at, "127.0.0.1:%zu", 9000 + i) + 1;
        p[at++] = role;
    }
    return at;
}

Test(raft_guard, preamble_types_and_lengths)
{
    cr_assert_eq(preamble(1, 48), RC_OK);
    cr_assert_eq(preamble(6, 24), RC_OK);
    cr_assert_eq(preamble(0, 24), RC_MALFORMED, "libraft asserts type > 0");
    cr_assert_eq(preamble(7, 24), RC_MALFORMED);
    cr_assert_eq(preamble(UINT64_MAX, 24), RC_MALFORMED);
    cr_assert_eq(preamble(1, 0), RC_MALFORMED);
    cr_assert_eq(preamble(1, RAFT_GUARD_HEADER_BYTES_MAX + 1), RC_MALFORMED);
    cr_assert_eq(preamble(5, UINT64_MAX), RC_MALFORMED);
}

Test(raft_guard, append_entries_as_libraft_sends_them)
{
    const uint8_t types[] = {RAFT_GUARD_ENTRY_COMMAND,
                             RAFT_GUARD_ENTRY_BARRIER};
    const uint32_t sizes[] = {64, 8};
    size_t len = append_entries(2, types, sizes);
    size_t payload = 0;
    cr_assert_eq(raft_guard_header(RAFT_GUARD_APPEND_ENTRIES, buf, len,
                                   &payload),
                 RC_OK);
    cr_assert_eq(payload, 72);
    /* A heartbeat: no entries. */
    len = append_entries(0, NULL, NULL);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_APPEND_ENTRIES, buf, len,
                                   &payload),
                 RC_OK);
    cr_assert_eq(payload, 0);
}

/* The message that killed every controller: 2^32 - 1 entries claimed in
 * a header that holds none. */
Test(raft_guard, entry_count_beyond_the_header_is_refused)
{
    size_t len = append_entries(0, NULL, NULL);
    put64(buf + 32, UINT32_MAX);
    size_t payload = 0;
    cr_assert_eq(raft_guard_header(RAFT_GUARD_APPEND_ENTRIES, buf, len,
                                   &payload),
                 RC_MALFORMED);
    put64(buf + 32, 1); /* one more than the 48 bytes hold */
    cr_assert_eq(raft_guard_header(RAFT_GUARD_APPEND_ENTRIES, buf, len,
                                   &payload),
                 RC_MALFORMED);
}

Test(raft_guard, short_headers_are_refused)
{
    size_t payload = 0;
    memset(buf, 0, sizeof buf);
    for (uint64_t type = 1; type <= 6; type++) {
        cr_assert_eq(raft_guard_header(type, buf, 1, &payload),
                     RC_MALFORMED, "type %d, 1 byte", (int)type);
    }
    cr_assert_eq(raft_guard_header(RAFT_GUARD_APPEND_ENTRIES, buf, 39,
                                   &payload),
                 RC_MALFORMED);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_APPEND_ENTRIES_RESULT, buf, 23,
                                   &payload),
                 RC_MALFORMED);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_TIMEOUT_NOW, buf, 23,
                                   &payload),
                 RC_MALFORMED);
}

/* libraft reads 40 bytes of a RequestVote unless it is exactly the 32 of
 * the first version; a result 24 unless exactly 16. */
Test(raft_guard, vote_lengths_libraft_reads)
{
    size_t payload = 0;
    memset(buf, 0, sizeof buf);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_REQUEST_VOTE, buf, 32,
                                   &payload),
                 RC_OK);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_REQUEST_VOTE, buf, 36,
                                   &payload),
                 RC_MALFORMED);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_REQUEST_VOTE, buf, 40,
                                   &payload),
                 RC_OK);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_REQUEST_VOTE_RESULT, buf, 16,
                                   &payload),
                 RC_OK);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_REQUEST_VOTE_RESULT, buf, 20,
                                   &payload),
                 RC_MALFORMED);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_REQUEST_VOTE_RESULT, buf, 24,
                                   &payload),
                 RC_OK);
}

Test(raft_guard, entry_types_and_sizes)
{
    size_t payload = 0;
    uint8_t bad_type[] = {0};
    uint32_t size8[] = {8};
    size_t len = append_entries(1, bad_type, size8);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_APPEND_ENTRIES, buf, len,
                                   &payload),
                 RC_MALFORMED);
    uint8_t type4[] = {4};
    len = append_entries(1, type4, size8);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_APPEND_ENTRIES, buf, len,
                                   &payload),
                 RC_MALFORMED);
    /* libraft pads each entry to 8 bytes when it reads the payload but
     * sizes the payload without padding: an odd size walks past it. */
    uint8_t command[] = {RAFT_GUARD_ENTRY_COMMAND};
    uint32_t size5[] = {5};
    len = append_entries(1, command, size5);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_APPEND_ENTRIES, buf, len,
                                   &payload),
                 RC_MALFORMED);
    uint8_t change[] = {RAFT_GUARD_ENTRY_CHANGE};
    uint32_t size0[] = {0};
    len = append_entries(1, change, size0);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_APPEND_ENTRIES, buf, len,
                                   &payload),
                 RC_MALFORMED, "an empty configuration asserts");
    uint32_t huge[] = {UINT32_MAX - 7, UINT32_MAX - 7};
    uint8_t two[] = {RAFT_GUARD_ENTRY_COMMAND, RAFT_GUARD_ENTRY_COMMAND};
    len = append_entries(2, two, huge);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_APPEND_ENTRIES, buf, len,
                                   &payload),
                 RC_MALFORMED, "payload past the bound");
}

Test(raft_guard, configurations)
{
    uint8_t c[512];
    size_t len = configuration(c, 3, 101, 1);
    cr_assert_eq(raft_guard_configuration(c, len), RC_OK);
    cr_assert_eq(raft_guard_configuration(c, len - 1), RC_MALFORMED,
                 "role byte cut");
    cr_assert_eq(raft_guard_configuration(c, 0), RC_MALFORMED);
    len = configuration(c, 1, 0, 1);
    cr_assert_eq(raft_guard_configuration(c, len), RC_MALFORMED,
                 "libraft asserts on id 0");
    len = configuration(c, 1, 5, 3);
    cr_assert_eq(raft_guard_configuration(c, len), RC_MALFORMED, "role 3");
    len = configuration(c, 1, 5, 1);
    c[0] = 2;
    cr_assert_eq(raft_guard_configuration(c, len), RC_MALFORMED, "format");
    len = configuration(c, 1, 5, 1);
    put64(c + 1, 1000);
    cr_assert_eq(raft_guard_configuration(c, len), RC_MALFORMED,
                 "more servers than bytes");
    /* An address without its NUL. */
    len = configuration(c, 1, 5, 1);
    memset(c + 17, 'x', len - 17);
    cr_assert_eq(raft_guard_configuration(c, len), RC_MALFORMED);
}

Test(raft_guard, install_snapshot)
{
    memset(buf, 0, sizeof buf);
    size_t conf = configuration(buf + 40, 3, 101, 1);
    put64(buf + 32, conf);
    put64(buf + 40 + conf, 12345); /* data length */
    size_t len = 40 + conf + 8;
    size_t payload = 0;
    cr_assert_eq(raft_guard_header(RAFT_GUARD_INSTALL_SNAPSHOT, buf, len,
                                   &payload),
                 RC_OK);
    cr_assert_eq(payload, 12345);
    put64(buf + 32, conf + 1); /* the data length no longer fits */
    cr_assert_eq(raft_guard_header(RAFT_GUARD_INSTALL_SNAPSHOT, buf, len,
                                   &payload),
                 RC_MALFORMED);
    put64(buf + 32, 0);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_INSTALL_SNAPSHOT, buf, len,
                                   &payload),
                 RC_MALFORMED);
    put64(buf + 32, conf);
    put64(buf + 40 + conf, (uint64_t)RAFT_GUARD_PAYLOAD_BYTES_MAX + 1);
    cr_assert_eq(raft_guard_header(RAFT_GUARD_INSTALL_SNAPSHOT, buf, len,
                                   &payload),
                 RC_MALFORMED);
    put64(buf + 40 + conf, 8);
    put64(buf + 40 + 9, 0); /* the first server's id */
    cr_assert_eq(raft_guard_header(RAFT_GUARD_INSTALL_SNAPSHOT, buf, len,
                                   &payload),
                 RC_MALFORMED, "a server id 0 in the snapshot's conf");
}

Test(raft_guard, change_entries_must_hold_configurations)
{
    uint8_t payload[512];
    memset(payload, 0, sizeof payload);
    size_t conf = configuration(payload + 8, 3, 101, 1);
    uint32_t conf_size = (uint32_t)((conf + 7) & ~(size_t)7);
    const uint8_t types[] = {RAFT_GUARD_ENTRY_COMMAND,
                             RAFT_GUARD_ENTRY_CHANGE};
    const uint32_t sizes[] = {8, conf_size};
    size_t len = append_entries(2, types, sizes);
    size_t total = 0;
    cr_assert_eq(raft_guard_header(RAFT_GUARD_APPEND_ENTRIES, buf, len,
                                   &total),
                 RC_OK);
    cr_assert_eq(total, 8 + conf_size);
    cr_assert_eq(raft_guard_entries(buf, len, payload, total), RC_OK);
    payload[8] = 9; /* not format 1 */
    cr_assert_eq(raft_guard_entries(buf, len, payload, total),
                 RC_MALFORMED);
    payload[8] = 1;
    cr_assert_eq(raft_guard_entries(buf, len, payload, total - 8),
                 RC_MALFORMED, "payload shorter than the entries");
}
