/* Streaming decoders for the records of a compressed RecordBatch v2: the
 * bytes after recordCount are one stream in the batch's codec, and this
 * hands them out decoded, a window at a time, so that a walker can read
 * records of any size without the whole batch ever being decompressed into
 * memory. Bounded: the caller gives the most decoded bytes it accepts, and
 * a stream that would go past it stops with RC_TOO_LARGE (a decompression
 * bomb costs at most that much work).
 *
 * Codecs, as Kafka's clients write them:
 *   1 gzip    RFC 1952 members (zlib); concatenated members are one stream,
 *             as Java's GZIPInputStream reads them. zlib-wrapped or raw
 *             deflate is refused: Kafka's broker and Java consumers read
 *             gzip only.
 *   2 snappy  the Java producer's xerial framing (magic "\x82SNAPPY\0",
 *             two int32 versions, then blocks of an int32 length and a raw
 *             snappy block), or one raw snappy block (librdkafka), as
 *             snappy-java's SnappyInputStream falls back to.
 *   3 lz4     LZ4 frames (liblz4's frame API), concatenated frames allowed.
 *   4 zstd    zstd frames (streaming), concatenated frames allowed.
 * A stream is well-formed only if it decodes without error, its last
 * member or frame is complete and nothing follows it.
 *
 * One struct record_inflate holds a reusable window and the decoders,
 * each created on first use and reset per stream, so a stream allocates
 * nothing except what a codec needs to grow to (a zstd window, a raw
 * snappy block; freed after the stream when above
 * RECORD_INFLATE_KEEP_BYTES). Pure (no I/O, no clock); one thread at a
 * time per struct. */
#ifndef CAIRN_COMMON_KAFKA_RECORD_INFLATE_H
#define CAIRN_COMMON_KAFKA_RECORD_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"

#define RECORD_CODEC_NONE 0
#define RECORD_CODEC_GZIP 1
#define RECORD_CODEC_SNAPPY 2
#define RECORD_CODEC_LZ4 3
#define RECORD_CODEC_ZSTD 4

struct record_inflate;

/* A decoder set with its window (RECORD_INFLATE_WINDOW_BYTES); RC_NOMEM. */
MUST_CHECK int record_inflate_new(struct record_inflate **out);
void record_inflate_free(struct record_inflate *z);

/* Starts decoding src[0..len) (borrowed until record_inflate_end()) in
 * codec (RECORD_CODEC_GZIP..ZSTD), handing out at most out_max bytes.
 * RC_NOMEM when the codec's decoder cannot be created. */
MUST_CHECK int record_inflate_start(struct record_inflate *z, int codec,
                                    const uint8_t *src, size_t len,
                                    uint64_t out_max);

/* The next decoded bytes, at least one: *out points into memory of z
 * valid until the next call. RC_NOT_FOUND once the stream has ended
 * cleanly; RC_CORRUPT when it is not a well-formed stream of its codec
 * (bad data, cut short, bytes after its end); RC_TOO_LARGE when it would
 * decode to more than out_max bytes; RC_NOMEM. After an error the stream
 * is over. */
MUST_CHECK int record_inflate_next(struct record_inflate *z,
                                   const uint8_t **out, size_t *len);

/* Bytes handed out by this stream so far. */
uint64_t record_inflate_total(const struct record_inflate *z);

/* Ends the stream (finished or not): decoders that grew beyond
 * RECORD_INFLATE_KEEP_BYTES give their memory back. */
void record_inflate_end(struct record_inflate *z);

#endif
