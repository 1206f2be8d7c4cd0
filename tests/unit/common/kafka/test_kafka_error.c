/* Tests for common/kafka/kafka_error.c: the one RC_* -> Kafka map covers
 * the codes the produce and replication paths return, and the
 * OffsetCommit translation gives coordinator errors. */
#include <criterion/criterion.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"

Test(kafka_error, produce_and_replication_codes_map_to_their_kafka_errors)
{
    cr_expect_eq(kafka_error_from_rc(RC_NOT_LEADER), 6);
    cr_expect_eq(kafka_error_from_rc(RC_NOT_ENOUGH_REPLICAS), 19);
    cr_expect_eq(kafka_error_from_rc(RC_NOT_ENOUGH_REPLICAS_AFTER_APPEND),
                 20);
    cr_expect_eq(kafka_error_from_rc(RC_OUT_OF_ORDER_SEQUENCE), 45);
    cr_expect_eq(kafka_error_from_rc(RC_PRODUCER_FENCED), 47);
    cr_expect_eq(kafka_error_from_rc(RC_FENCED_EPOCH), 74);
    cr_expect_eq(kafka_error_from_rc(RC_UNKNOWN_EPOCH), 75);
}

/* What a produced batch's records earn (common/kafka/record_validate.h). */
Test(kafka_error, record_faults_map_to_kafkas_codes)
{
    cr_expect_eq(kafka_error_from_rc(RC_MALFORMED), 87);
    cr_expect_eq(kafka_error_from_rc(RC_CORRUPT), 2);
    cr_expect_eq(kafka_error_from_rc(RC_INVALID_TIMESTAMP), 32);
    cr_expect_str_eq(kafka_error_name(32), "INVALID_TIMESTAMP");
}

Test(kafka_error, every_rc_maps_to_a_known_kafka_error)
{
    for (int rc = RC_OK; rc < RC__COUNT; rc++) {
        int16_t e = kafka_error_from_rc(rc);
        cr_expect_str_neq(kafka_error_name(e), "UNKNOWN_CODE", "rc %d", rc);
    }
}

Test(kafka_error, offset_commit_failures_become_coordinator_errors)
{
    cr_expect_eq(kafka_error_for_offset_commit(kafka_error_from_rc(RC_OK)),
                 KAFKA_ERROR_NONE);
    cr_expect_eq(kafka_error_for_offset_commit(
                     kafka_error_from_rc(RC_NOT_LEADER)),
                 KAFKA_ERROR_NOT_COORDINATOR);
    cr_expect_eq(kafka_error_for_offset_commit(
                     kafka_error_from_rc(RC_OUT_OF_RANGE)),
                 KAFKA_ERROR_NOT_COORDINATOR);
    cr_expect_eq(kafka_error_for_offset_commit(kafka_error_from_rc(RC_IO)),
                 KAFKA_ERROR_NOT_COORDINATOR, "a failed disk: go elsewhere");
    cr_expect_eq(kafka_error_from_rc(RC_IO), KAFKA_ERROR_KAFKA_STORAGE_ERROR);
    cr_expect_eq(kafka_error_from_rc(RC_NO_SPACE),
                 KAFKA_ERROR_KAFKA_STORAGE_ERROR);
    cr_expect_eq(kafka_error_for_offset_commit(
                     kafka_error_from_rc(RC_TOO_LARGE)),
                 KAFKA_ERROR_INVALID_COMMIT_OFFSET_SIZE);
    int unavailable[] = {RC_NOT_ENOUGH_REPLICAS,
                         RC_NOT_ENOUGH_REPLICAS_AFTER_APPEND, RC_TIMEOUT,
                         RC_NOT_FOUND};
    for (size_t i = 0; i < sizeof unavailable / sizeof unavailable[0]; i++) {
        cr_expect_eq(kafka_error_for_offset_commit(
                         kafka_error_from_rc(unavailable[i])),
                     KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE, "rc %d",
                     unavailable[i]);
    }
}
