/* Test helper: the blocking Kafka client (common/kafka/kafka_client.h) on
 * 127.0.0.1 with client id "test", for tests that speak the protocol byte
 * by byte through the codec. Each request has its own budget, so one
 * connection may serve a test's whole retry loop. */
#ifndef CAIRN_TESTS_KAFKA_WIRE_H
#define CAIRN_TESTS_KAFKA_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kafka/kafka_client.h"
#include "common/arena.h"
#include "common/kafka/kafka_codec.h"
#include "common/reader.h"
#include "common/writer.h"

/* Connecting, and each request with its answer. */
#define KAFKA_WIRE_TIMEOUT_MS 10000u

/* Connects kc to 127.0.0.1:port; false (kc->error says why) if refused or
 * out of time. kafka_client_close() either way. */
bool kafka_wire_connect(struct kafka_client *kc, int port);

/* Sends api key/version with body; returns the answer's body (after the
 * correlation id) in a malloc'd buffer, or NULL (kc closed) if the
 * connection failed, closed or timed out. */
uint8_t *kafka_wire_roundtrip(struct kafka_client *kc, int16_t key,
                              int16_t version, const struct writer *body,
                              size_t *len);

/* Reads one whole response frame from kc (a request sent with
 * kafka_client_send()) into a malloc'd buffer; *len its size. Asserts it
 * came. */
uint8_t *kafka_wire_recv_frame(struct kafka_client *kc, size_t *len);

/* Produce v7 of one batch (batch[0..len), sent as it is) to
 * topic/partition with acks and the broker-side timeout_ms; the
 * partition's answer in *out (its scalar fields; no pointers). False when no answer that decodes came
 * (kc is then closed if the connection failed). */
bool kafka_wire_produce_answer(struct kafka_client *kc, const char *topic,
                               int32_t partition, const uint8_t *batch,
                               size_t len, int16_t acks, int32_t timeout_ms,
                               struct kafka_PartitionProduceResponse *out);

/* The same with a 10 s timeout; the partition's Kafka error, or
 * REQUEST_TIMED_OUT when no answer came. */
int16_t kafka_wire_produce(struct kafka_client *kc, const char *topic,
                           int32_t partition, const uint8_t *batch,
                           size_t len, int16_t acks);

/* One request's answer, ready to decode: its bytes (after the response
 * header), a reader over them and an arena for what is decoded.
 * kafka_wire_answer_free() releases it. */
struct kafka_wire_answer {
    uint8_t *bytes;
    struct reader r;
    struct arena a;
};

/* Sends body (left to the caller) as api key/version to the broker at
 * 127.0.0.1:port on a new connection; true with the answer in *ans, false
 * (nothing to free) when no answer came. */
bool kafka_wire_call(int port, int16_t key, int16_t version,
                     const struct writer *body, struct kafka_wire_answer *ans);
void kafka_wire_answer_free(struct kafka_wire_answer *ans);

/* A request encoder and an answer decoder of common/kafka's codec, with
 * the request and answer types erased, for kafka_wire_typed_call(). */
typedef int (*kafka_wire_encode_fn)(struct writer *w, int16_t v,
                                    const void *req);
typedef int (*kafka_wire_decode_fn)(struct reader *r, int16_t v,
                                    struct arena *a, void *out);

/* Encodes req with enc, sends it (kafka_wire_call) and decodes the answer
 * with dec into out, its memory in ans until kafka_wire_answer_free().
 * RC_OK; RC_INVALID when it would not encode, RC_IO when no answer came
 * (nothing to free), RC_MALFORMED when the answer does not decode. */
int kafka_wire_typed_call(int port, int16_t key, int16_t v,
                          kafka_wire_encode_fn enc, const void *req,
                          kafka_wire_decode_fn dec, void *out,
                          struct kafka_wire_answer *ans);

/* The codec's Metadata and CreateTopics, as kafka_wire_*_fn. */
int kafka_wire_enc_metadata(struct writer *w, int16_t v, const void *req);
int kafka_wire_dec_metadata(struct reader *r, int16_t v, struct arena *a,
                            void *out);
int kafka_wire_enc_create(struct writer *w, int16_t v, const void *req);
int kafka_wire_dec_create(struct reader *r, int16_t v, struct arena *a,
                          void *out);

/* IncrementalAlterConfigs v0 through the broker at port: SET name=value
 * (DELETE when value is NULL) on broker resource `broker` ("" for the
 * cluster-wide default, "N" for broker N). Its Kafka error;
 * REQUEST_TIMED_OUT when no answer came. */
int16_t kafka_wire_set_broker_config(int port, const char *broker,
                                     const char *name, const char *value);
/* The same on any resource: type 2 a topic, 4 a broker. */
int16_t kafka_wire_set_config(int port, int8_t type, const char *resource,
                              const char *name, const char *value);

/* AlterPartitionReassignments v0 of one partition through the broker at
 * port: to replicas[0..n), or a cancel when replicas is NULL. The
 * partition's Kafka error (the request's, if it has one);
 * REQUEST_TIMED_OUT when no answer came. */
int16_t kafka_wire_reassign(int port, const char *topic, int32_t partition,
                            const int32_t *replicas, int32_t n);

#endif
