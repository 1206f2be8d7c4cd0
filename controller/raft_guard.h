/* Checks every Raft message a controller receives before libraft 0.15
 * decodes it. libraft trusts its peers: its decoder reads fixed fields
 * without checking the header's length, allocates whatever entry count a
 * header claims and walks a NULL array when that fails, asserts on a
 * message type of 0 or a server id of 0 in a configuration, and sizes
 * an AppendEntries payload without the padding it then skips. Cairn's
 * Raft transport (controller/raft_transport.h) runs each inbound message
 * through these checks and hands libraft only messages that pass, so a
 * malformed or hostile message closes its connection instead of the
 * controller.
 *
 * The wire format (libraft's src/uv_encoding.c, little endian):
 *   preamble   u64 type (1 AppendEntries, 2 its result, 3 RequestVote,
 *              4 its result, 5 InstallSnapshot, 6 TimeoutNow),
 *              u64 header length
 *   header     per type; AppendEntries: term, prev index, prev term,
 *              commit, u64 n, then n entry headers (u64 term, u8 type,
 *              3 unused, u32 size); InstallSnapshot: term, last index,
 *              last term, configuration index, u64 configuration length,
 *              the configuration, u64 data length
 *   payload    AppendEntries: the entries' data, each a multiple of 8
 *              bytes; InstallSnapshot: the snapshot data
 *
 * Pure: no I/O, no allocation. */
#ifndef CAIRN_CONTROLLER_RAFT_GUARD_H
#define CAIRN_CONTROLLER_RAFT_GUARD_H

#include <stddef.h>
#include <stdint.h>

#define RAFT_GUARD_PREAMBLE_BYTES 16
/* A header of 64 Ki entries; libraft sends far fewer at once. */
#define RAFT_GUARD_HEADER_BYTES_MAX (48 + 16 * 65536)
/* AppendEntries data or a snapshot. The metadata image is far smaller. */
#define RAFT_GUARD_PAYLOAD_BYTES_MAX (256u << 20)
/* Servers in a configuration (a cluster has 3 or 5 controllers). */
#define RAFT_GUARD_SERVERS_MAX 64

enum raft_guard_type {
    RAFT_GUARD_APPEND_ENTRIES = 1,
    RAFT_GUARD_APPEND_ENTRIES_RESULT,
    RAFT_GUARD_REQUEST_VOTE,
    RAFT_GUARD_REQUEST_VOTE_RESULT,
    RAFT_GUARD_INSTALL_SNAPSHOT,
    RAFT_GUARD_TIMEOUT_NOW,
};

/* Entry types (libraft's RAFT_COMMAND, RAFT_BARRIER, RAFT_CHANGE). */
#define RAFT_GUARD_ENTRY_COMMAND 1
#define RAFT_GUARD_ENTRY_BARRIER 2
#define RAFT_GUARD_ENTRY_CHANGE 3

/* The preamble p (RAFT_GUARD_PREAMBLE_BYTES): RC_OK with the type and the
 * header length when the type is known and the length within
 * [1, RAFT_GUARD_HEADER_BYTES_MAX]; RC_MALFORMED otherwise. */
int raft_guard_preamble(const uint8_t *p, uint64_t *type,
                        size_t *header_len);

/* A header of type (len bytes): RC_OK with the payload length that
 * follows it when every field libraft reads is present and sane (entry
 * counts against the bytes there, entry types and sizes, the
 * configuration of a snapshot, payload within
 * RAFT_GUARD_PAYLOAD_BYTES_MAX); RC_MALFORMED otherwise. */
int raft_guard_header(uint64_t type, const uint8_t *h, size_t len,
                      size_t *payload_len);

/* An AppendEntries payload (len bytes, as raft_guard_header() sized it)
 * whose header is h: RC_OK when every configuration-change entry in it
 * holds a configuration libraft can decode (it decodes them as it
 * appends); RC_MALFORMED otherwise. */
int raft_guard_entries(const uint8_t *h, size_t header_len,
                       const uint8_t *payload, size_t len);

/* An encoded configuration (libraft's configurationEncode: u8 format 1,
 * u64 n, then per server u64 id (not 0), a NUL-terminated address, u8
 * role 0..2), within len bytes, at most RAFT_GUARD_SERVERS_MAX servers:
 * RC_OK or RC_MALFORMED. */
int raft_guard_configuration(const uint8_t *p, size_t len);

#endif
