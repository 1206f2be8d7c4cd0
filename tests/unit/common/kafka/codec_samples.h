/* The sample messages of test_kafka_codec_all.c (every field set, arrays
 * with elements, nullable fields null in some elements and not in
 * others), encoded by Cairn's encoders, for other codec tests. */
#ifndef CAIRN_TESTS_UNIT_COMMON_KAFKA_CODEC_SAMPLES_H
#define CAIRN_TESTS_UNIT_COMMON_KAFKA_CODEC_SAMPLES_H

#include <stdbool.h>
#include <stdint.h>

#include "common/writer.h"

/* Resets w and encodes the sample of api_key's request (or response) at
 * version v, which must be in the codec's range; false if the table has
 * no sample for api_key. */
bool codec_samples_encode(int16_t api_key, bool request, int16_t v,
                          struct writer *w);

#endif
