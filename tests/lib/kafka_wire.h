/* Test helper: a blocking Kafka client socket on 127.0.0.1 that sends one
 * request (header v1, client id "test") and reads its answer, for tests
 * that speak the protocol byte by byte through the codec. */
#ifndef CAIRN_TESTS_KAFKA_WIRE_H
#define CAIRN_TESTS_KAFKA_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "common/writer.h"

/* A connected socket with a 10 s receive timeout, or -1. */
int kafka_wire_connect(int port);

/* Sends api key/version with body; returns the answer's body (after the
 * correlation id) in a malloc'd buffer, or NULL if the connection closed
 * or timed out. */
uint8_t *kafka_wire_roundtrip(int fd, int16_t key, int16_t version,
                              const struct writer *body, size_t *len);

#endif
