/* Test helper over the blocking Kafka client (tests/lib/kafka_wire.h). */
#include "tests/lib/kafka_wire.h"

#include <stdlib.h>

#include "common/rc.h"

bool kafka_wire_connect(struct kafka_client *kc, int port)
{
    return kafka_client_open(kc, "127.0.0.1", port, "test",
                             KAFKA_WIRE_TIMEOUT_MS) == RC_OK;
}

uint8_t *kafka_wire_roundtrip(struct kafka_client *kc, int16_t key,
                              int16_t version, const struct writer *body,
                              size_t *len)
{
    uint8_t *resp = NULL;
    kafka_client_set_timeout(kc, KAFKA_WIRE_TIMEOUT_MS);
    if (kafka_client_call(kc, key, version, body, &resp, len) != RC_OK) {
        return NULL;
    }
    /* An empty answer is still one: a byte to free, as before. */
    return resp != NULL ? resp : calloc(1, 1);
}
