/* The consumer protocol's assignment bytes (what a group leader hands each
 * member in SyncGroup, Kafka's ConsumerProtocolAssignment v0-v3: int16
 * version, then [topic string, [int32 partition]], then user data) read
 * into one line for people: "orders 0,1; payments 3". Untrusted bytes:
 * every length is checked; anything else Kafka may append in newer
 * versions is ignored. Pure codec. */
#ifndef CAIRN_COMMON_KAFKA_CONSUMER_ASSIGNMENT_H
#define CAIRN_COMMON_KAFKA_CONSUMER_ASSIGNMENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"

/* Writes the line into out (cap > 0, cut to fit, printable ASCII only).
 * RC_OK ("" for no partitions), or RC_SHORT/RC_MALFORMED for bytes that
 * are not an assignment (out then says "?"). */
MUST_CHECK int consumer_assignment_format(const uint8_t *p, size_t len,
                                          char *out, size_t cap);

#endif
