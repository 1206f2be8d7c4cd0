/* Kafka's murmur2 hash and default key partitioner, bit-for-bit equal to
 * Java's org.apache.kafka.common.utils.Utils.murmur2() and toPositive(), so
 * a keyed record lands on the partition a Java producer would pick:
 *
 *     partition = (murmur2(key) & 0x7fffffff) % num_partitions
 *
 * (MurmurHash2 by Austin Appleby, seed 0x9747b28c, 4-byte little-endian
 * blocks.) Pure, any thread. */
#ifndef CAIRN_COMMON_MURMUR2_H
#define CAIRN_COMMON_MURMUR2_H

#include <stddef.h>
#include <stdint.h>

/* Hash of len bytes at data (NULL only when len is 0), as the Java int.
 * Java arrays hold at most INT32_MAX bytes; longer inputs mix in len
 * truncated to 32 bits. */
int32_t murmur2(const void *data, size_t len);

/* Kafka's Utils.toPositive(): clears the sign bit (not abs(), which would
 * leave INT32_MIN negative). */
int32_t murmur2_to_positive(int32_t h);

/* The partition Kafka's default partitioner picks for a non-null key.
 * num_partitions must be > 0. */
int32_t murmur2_partition(const void *key, size_t len,
                          int32_t num_partitions);

#endif
