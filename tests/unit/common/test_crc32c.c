/* Tests for common/crc32c.c: RFC 3720 appendix B.4 vectors, the usual
 * "123456789" check value, and crc32c_extend() over every split. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "common/crc32c.h"

Test(crc32c, rfc3720_32_zero_bytes)
{
    uint8_t buf[32];
    memset(buf, 0x00, sizeof(buf));
    cr_assert_eq(crc32c(buf, sizeof(buf)), 0x8A9136AAu);
}

Test(crc32c, rfc3720_32_ff_bytes)
{
    uint8_t buf[32];
    memset(buf, 0xFF, sizeof(buf));
    cr_assert_eq(crc32c(buf, sizeof(buf)), 0x62A8AB43u);
}

Test(crc32c, rfc3720_32_incrementing_bytes)
{
    uint8_t buf[32];
    for (size_t i = 0; i < sizeof(buf); i++) {
        buf[i] = (uint8_t)i;
    }
    cr_assert_eq(crc32c(buf, sizeof(buf)), 0x46DD794Eu);
}

Test(crc32c, rfc3720_32_decrementing_bytes)
{
    uint8_t buf[32];
    for (size_t i = 0; i < sizeof(buf); i++) {
        buf[i] = (uint8_t)(31 - i);
    }
    cr_assert_eq(crc32c(buf, sizeof(buf)), 0x113FDB5Cu);
}

/* The 48-byte iSCSI SCSI Read (10) command PDU of RFC 3720 B.4. */
static const uint8_t iscsi_read_pdu[48] = {
    0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
    0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

Test(crc32c, rfc3720_iscsi_read_command_pdu)
{
    cr_assert_eq(crc32c(iscsi_read_pdu, sizeof(iscsi_read_pdu)),
                 0xD9963A56u);
}

Test(crc32c, check_value_of_123456789)
{
    cr_assert_eq(crc32c("123456789", 9), 0xE3069283u);
}

Test(crc32c, empty_input_is_zero)
{
    cr_assert_eq(crc32c("", 0), 0u);
    cr_assert_eq(crc32c_extend(0, "", 0), 0u);
}

Test(crc32c, extending_by_nothing_keeps_the_crc)
{
    uint32_t crc = crc32c("123456789", 9);
    cr_assert_eq(crc32c_extend(crc, "", 0), crc);
}

Test(crc32c, extend_split_at_every_position_equals_whole)
{
    uint32_t whole = crc32c(iscsi_read_pdu, sizeof(iscsi_read_pdu));
    for (size_t cut = 0; cut <= sizeof(iscsi_read_pdu); cut++) {
        uint32_t crc = crc32c(iscsi_read_pdu, cut);
        crc = crc32c_extend(crc, iscsi_read_pdu + cut,
                            sizeof(iscsi_read_pdu) - cut);
        cr_expect_eq(crc, whole, "split at %zu", cut);
    }
}

Test(crc32c, extend_byte_by_byte_equals_whole)
{
    const char *s = "123456789";
    uint32_t crc = 0;
    for (size_t i = 0; i < 9; i++) {
        crc = crc32c_extend(crc, s + i, 1);
    }
    cr_assert_eq(crc, 0xE3069283u);
}
