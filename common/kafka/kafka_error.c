/* RC_* codes to Kafka ErrorCodes (common/kafka/kafka_error.h). Pure, any
 * thread. */
#include "common/kafka/kafka_error.h"

#include <stddef.h>

#include "common/rc.h"

static const struct {
    int rc;
    int16_t error;
} kafka_error__from_rc[] = {
    {RC_OK, KAFKA_ERROR_NONE},
    {RC_OUT_OF_RANGE, KAFKA_ERROR_OFFSET_OUT_OF_RANGE},
    {RC_CORRUPT, KAFKA_ERROR_CORRUPT_MESSAGE},
    {RC_SHORT, KAFKA_ERROR_CORRUPT_MESSAGE},
    {RC_NOT_FOUND, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION},
    {RC_NOT_LEADER, KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER},
    {RC_TIMEOUT, KAFKA_ERROR_REQUEST_TIMED_OUT},
    {RC_TOO_LARGE, KAFKA_ERROR_MESSAGE_TOO_LARGE},
    {RC_NOT_ENOUGH_REPLICAS, KAFKA_ERROR_NOT_ENOUGH_REPLICAS},
    {RC_NOT_ENOUGH_REPLICAS_AFTER_APPEND,
     KAFKA_ERROR_NOT_ENOUGH_REPLICAS_AFTER_APPEND},
    {RC_INVALID_TIMESTAMP, KAFKA_ERROR_INVALID_TIMESTAMP},
    {RC_EXISTS, KAFKA_ERROR_TOPIC_ALREADY_EXISTS},
    {RC_OUT_OF_ORDER_SEQUENCE, KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER},
    {RC_PRODUCER_FENCED, KAFKA_ERROR_INVALID_PRODUCER_EPOCH},
    {RC_FENCED_EPOCH, KAFKA_ERROR_FENCED_LEADER_EPOCH},
    {RC_UNKNOWN_EPOCH, KAFKA_ERROR_UNKNOWN_LEADER_EPOCH},
    {RC_MALFORMED, KAFKA_ERROR_INVALID_RECORD},
    {RC_IO, KAFKA_ERROR_KAFKA_STORAGE_ERROR},
    {RC_NO_SPACE, KAFKA_ERROR_KAFKA_STORAGE_ERROR},
};

int16_t kafka_error_from_rc(int rc)
{
    size_t n = sizeof kafka_error__from_rc / sizeof kafka_error__from_rc[0];
    for (size_t i = 0; i < n; i++) {
        if (kafka_error__from_rc[i].rc == rc) {
            return kafka_error__from_rc[i].error;
        }
    }
    return KAFKA_ERROR_UNKNOWN_SERVER_ERROR;
}

int16_t kafka_error_for_offset_commit(int16_t error)
{
    switch (error) {
    case KAFKA_ERROR_NONE:
        return KAFKA_ERROR_NONE;
    case KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER:
    case KAFKA_ERROR_OFFSET_OUT_OF_RANGE:
    case KAFKA_ERROR_KAFKA_STORAGE_ERROR: /* as Kafka's group manager */
        return KAFKA_ERROR_NOT_COORDINATOR;
    case KAFKA_ERROR_MESSAGE_TOO_LARGE:
        return KAFKA_ERROR_INVALID_COMMIT_OFFSET_SIZE;
    default:
        return KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
    }
}
