/* Cairn's one error enum. Every fallible function returns int: RC_OK (0) or
 * an RC_* code; results go in out-params. Strings come from the same
 * X-macro, so a code and its text cannot drift apart. Codes map to Kafka
 * ErrorCodes in exactly one place (the Kafka codec, later). */
#ifndef CAIRN_COMMON_RC_H
#define CAIRN_COMMON_RC_H

#define RC_MAP(X)                                                      \
    X(RC_NOMEM, "out of memory")                                       \
    X(RC_MALFORMED, "malformed bytes from a peer or the disk")         \
    X(RC_SHORT, "input ended before the value did")                    \
    X(RC_TOO_LARGE, "value exceeds its bound")                         \
    X(RC_FULL, "bounded queue is full")                                \
    X(RC_IO, "I/O error")                                              \
    X(RC_NO_SPACE, "no space left on the device")                      \
    X(RC_CORRUPT, "checksum mismatch or undecodable data")            \
    X(RC_INVALID, "invalid argument or value")                         \
    X(RC_NOT_FOUND, "not found")                                       \
    X(RC_OUT_OF_RANGE, "offset out of range")                          \
    X(RC_EXISTS, "already exists")                                     \
    X(RC_CONFIG, "bad configuration")                                  \
    X(RC_BUSY, "resource busy")                                        \
    X(RC_CLOSED, "closed")                                             \
    X(RC_TIMEOUT, "timed out")                                         \
    X(RC_NOT_LEADER, "not the leader of the partition")                 \
    X(RC_PRODUCER_FENCED, "producer epoch older than the current one")    \
    X(RC_OUT_OF_ORDER_SEQUENCE, "producer sequence out of order")     \
    X(RC_NOT_ENOUGH_REPLICAS, "in-sync replicas below the minimum")      \
    X(RC_NOT_ENOUGH_REPLICAS_AFTER_APPEND,                              \
      "written, but in-sync replicas fell below the minimum")           \
    X(RC_FENCED_EPOCH, "leader epoch older than the current one")        \
    X(RC_UNKNOWN_EPOCH, "leader epoch newer than the current one")      \
    X(RC_INVALID_TIMESTAMP, "record timestamp outside the allowed range")

enum rc {
    RC_OK = 0,
#define X(code, text) code,
    RC_MAP(X)
#undef X
    RC__COUNT
};

/* Static text for an rc; never NULL (unknown codes get a fixed string). */
const char *rc_str(int rc);

#endif
