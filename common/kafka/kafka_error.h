/* Kafka ErrorCodes (int16 on the wire) that Cairn sends, with their Kafka
 * names. Numbers are those of Kafka's
 * clients/src/main/java/org/apache/kafka/common/protocol/Errors.java;
 * see also shared/reference/kafka-protocol.md section 6. Header only, pure,
 * any thread.
 *
 * These are answers to a peer, not internal failures: a function that can
 * fail returns an RC_* code (common/rc.h) and puts the Kafka ErrorCode it
 * computed in an out-param. */
#ifndef CAIRN_COMMON_KAFKA_ERROR_H
#define CAIRN_COMMON_KAFKA_ERROR_H

#include <stdint.h>

#define KAFKA_ERROR_MAP(X)                                             \
    X(UNKNOWN_SERVER_ERROR, -1)                                        \
    X(NONE, 0)                                                         \
    X(OFFSET_OUT_OF_RANGE, 1)                                          \
    X(CORRUPT_MESSAGE, 2)                                              \
    X(UNKNOWN_TOPIC_OR_PARTITION, 3)                                   \
    X(LEADER_NOT_AVAILABLE, 5)                                         \
    X(NOT_LEADER_OR_FOLLOWER, 6)                                       \
    X(REQUEST_TIMED_OUT, 7)                                            \
    X(MESSAGE_TOO_LARGE, 10)                                           \
    X(OFFSET_METADATA_TOO_LARGE, 12)                                   \
    X(COORDINATOR_LOAD_IN_PROGRESS, 14)                                \
    X(COORDINATOR_NOT_AVAILABLE, 15)                                   \
    X(NOT_COORDINATOR, 16)                                             \
    X(INVALID_TOPIC_EXCEPTION, 17)                                     \
    X(RECORD_LIST_TOO_LARGE, 18)                                       \
    X(NOT_ENOUGH_REPLICAS, 19)                                         \
    X(NOT_ENOUGH_REPLICAS_AFTER_APPEND, 20)                            \
    X(INVALID_REQUIRED_ACKS, 21)                                       \
    X(ILLEGAL_GENERATION, 22)                                          \
    X(INCONSISTENT_GROUP_PROTOCOL, 23)                                 \
    X(INVALID_GROUP_ID, 24)                                            \
    X(UNKNOWN_MEMBER_ID, 25)                                           \
    X(INVALID_SESSION_TIMEOUT, 26)                                     \
    X(REBALANCE_IN_PROGRESS, 27)                                       \
    X(INVALID_COMMIT_OFFSET_SIZE, 28)                                  \
    X(INVALID_TIMESTAMP, 32)                                           \
    X(UNSUPPORTED_VERSION, 35)                                         \
    X(TOPIC_ALREADY_EXISTS, 36)                                        \
    X(INVALID_PARTITIONS, 37)                                          \
    X(INVALID_REPLICATION_FACTOR, 38)                                  \
    X(INVALID_REPLICA_ASSIGNMENT, 39)                                  \
    X(INVALID_CONFIG, 40)                                              \
    X(NOT_CONTROLLER, 41)                                              \
    X(INVALID_REQUEST, 42)                                             \
    X(POLICY_VIOLATION, 44)                                            \
    X(OUT_OF_ORDER_SEQUENCE_NUMBER, 45)                                \
    X(DUPLICATE_SEQUENCE_NUMBER, 46)                                   \
    X(INVALID_PRODUCER_EPOCH, 47)                                      \
    X(KAFKA_STORAGE_ERROR, 56)                                         \
    X(UNKNOWN_PRODUCER_ID, 59)                                         \
    X(NON_EMPTY_GROUP, 68)                                             \
    X(GROUP_ID_NOT_FOUND, 69)                                          \
    X(FETCH_SESSION_ID_NOT_FOUND, 70)                                  \
    X(INVALID_FETCH_SESSION_EPOCH, 71)                                 \
    X(FENCED_LEADER_EPOCH, 74)                                         \
    X(UNKNOWN_LEADER_EPOCH, 75)                                        \
    X(UNSUPPORTED_COMPRESSION_TYPE, 76)                                \
    X(STALE_BROKER_EPOCH, 77)                                          \
    X(OFFSET_NOT_AVAILABLE, 78)                                        \
    X(MEMBER_ID_REQUIRED, 79)                                          \
    X(PREFERRED_LEADER_NOT_AVAILABLE, 80)                              \
    X(GROUP_MAX_SIZE_REACHED, 81)                                      \
    X(FENCED_INSTANCE_ID, 82)                                          \
    X(ELIGIBLE_LEADERS_NOT_AVAILABLE, 83)                              \
    X(ELECTION_NOT_NEEDED, 84)                                         \
    X(NO_REASSIGNMENT_IN_PROGRESS, 85)                                 \
    X(INVALID_RECORD, 87)                                              \
    X(THROTTLING_QUOTA_EXCEEDED, 89)                                   \
    X(INVALID_UPDATE_VERSION, 95)                                      \
    X(UNKNOWN_TOPIC_ID, 100)                                           \
    X(DUPLICATE_BROKER_REGISTRATION, 101)                              \
    X(BROKER_ID_NOT_REGISTERED, 102)                                   \
    X(FETCH_SESSION_TOPIC_ID_ERROR, 106)                               \
    X(INELIGIBLE_REPLICA, 107)                                         \
    X(NEW_LEADER_ELECTED, 108)                                         \
    X(MISMATCHED_ENDPOINT_TYPE, 114)                                   \
    X(UNSUPPORTED_ENDPOINT_TYPE, 115)

/* Enumerators are ints; every value fits an int16_t, and assigning a
 * constant to an int16_t is silent under -Wconversion. */
enum kafka_error {
#define X(name, code) KAFKA_ERROR_##name = (code),
    KAFKA_ERROR_MAP(X)
#undef X
};

/* Kafka's name of a code ("STALE_BROKER_EPOCH"), or "UNKNOWN_CODE" for a
 * code not listed above. Never NULL. */
static inline const char *kafka_error_name(int16_t code)
{
    switch (code) {
#define X(name, value)                                                 \
    case (value):                                                      \
        return #name;
        KAFKA_ERROR_MAP(X)
#undef X
    default:
        return "UNKNOWN_CODE";
    }
}

/* The one place an RC_* code (common/rc.h) becomes a Kafka ErrorCode
 * (STYLE.md section 3), one general mapping whatever the API:
 *
 *   RC_OK                    NONE (0)
 *   RC_OUT_OF_RANGE          OFFSET_OUT_OF_RANGE (1)
 *   RC_CORRUPT               CORRUPT_MESSAGE (2)       bad batch CRC, or
 *                                                      compressed records
 *                                                      that do not decode
 *   RC_SHORT                 CORRUPT_MESSAGE (2)       batch cut short
 *   RC_NOT_FOUND             UNKNOWN_TOPIC_OR_PARTITION (3)
 *   RC_NOT_LEADER            NOT_LEADER_OR_FOLLOWER (6)
 *   RC_TIMEOUT               REQUEST_TIMED_OUT (7)
 *   RC_TOO_LARGE             MESSAGE_TOO_LARGE (10)
 *   RC_NOT_ENOUGH_REPLICAS   NOT_ENOUGH_REPLICAS (19)
 *   RC_NOT_ENOUGH_REPLICAS_AFTER_APPEND
 *                            NOT_ENOUGH_REPLICAS_AFTER_APPEND (20)
 *   RC_INVALID_TIMESTAMP     INVALID_TIMESTAMP (32)    record timestamp
 *                                                      out of bounds
 *   RC_EXISTS                TOPIC_ALREADY_EXISTS (36)
 *   RC_OUT_OF_ORDER_SEQUENCE OUT_OF_ORDER_SEQUENCE_NUMBER (45)
 *   RC_PRODUCER_FENCED       INVALID_PRODUCER_EPOCH (47)
 *   RC_FENCED_EPOCH          FENCED_LEADER_EPOCH (74)
 *   RC_UNKNOWN_EPOCH         UNKNOWN_LEADER_EPOCH (75)
 *   RC_MALFORMED             INVALID_RECORD (87)       bad batch or record
 *                                                      structure
 *   RC_IO, RC_NO_SPACE       KAFKA_STORAGE_ERROR (56)  the log dir failed:
 *                                                      clients refresh
 *                                                      metadata and retry
 *   anything else            UNKNOWN_SERVER_ERROR (-1)
 *
 * RC_MALFORMED and RC_SHORT reach a client only through record batches: a
 * request body that fails to decode closes the connection instead, so the
 * batch meanings are the general ones. A handler that needs another code
 * (INVALID_REQUIRED_ACKS, ...) uses the KAFKA_ERROR_* constant directly;
 * it is not an RC_* translation. Pure, any thread. */
int16_t kafka_error_from_rc(int rc);

/* What an OffsetCommit answers when writing the commit to
 * __consumer_offsets failed with `error` (a Kafka ErrorCode, usually from
 * kafka_error_from_rc()): Kafka's GroupCoordinator translation
 * (appendGroupMetadataErrorToResponseError), so clients see coordinator
 * errors they know to retry on:
 *   NONE                                     NONE
 *   NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE
 *                                            NOT_COORDINATOR (16)
 *   MESSAGE_TOO_LARGE                        INVALID_COMMIT_OFFSET_SIZE (28)
 *   anything else (NOT_ENOUGH_REPLICAS*, timeouts, I/O)
 *                                            COORDINATOR_NOT_AVAILABLE (15)
 * OFFSET_OUT_OF_RANGE is the offsets partition's log truncated under the
 * write, which only a leadership change does. */
int16_t kafka_error_for_offset_commit(int16_t error);

#endif
