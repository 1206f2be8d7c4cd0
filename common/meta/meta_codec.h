/* protobuf-c encoding of cluster metadata (proto/metadata.proto): one
 * record (a MetaRecord, as the FSM keeps it for MetadataFetch), a Raft
 * entry (a MetaBatch) and a whole image (a MetaImage, for snapshots and
 * lagging brokers). The only code that sees metadata.pb-c.h. Pure: no I/O,
 * no clock, no globals; any thread.
 *
 * Decoding trusts nothing. The input length is checked against its bound
 * (META_RECORD_BYTES_MAX, META_BATCH_BYTES_MAX, META_IMAGE_BYTES_MAX)
 * before anything is allocated: RC_TOO_LARGE. Everything else that is
 * wrong is RC_MALFORMED: bytes protobuf-c cannot parse, a field this build
 * does not know (in any message), a MetaRecord without a record, a missing
 * field that the encoder always writes, a uuid that is not exactly 16
 * bytes, a string longer than its META_*_BYTES_MAX or holding a NUL byte,
 * more than META_REPLICAS_MAX replicas, an int8 field out of range, counts
 * above META_BATCH_RECORDS_MAX, META_BROKERS_MAX, META_TOPICS_MAX,
 * META_PARTITIONS_MAX or META_TOPIC_CONFIGS_MAX, and an image that breaks
 * the image's invariants (see common/meta/meta_image.c). RC_NOMEM when an
 * allocation fails. protobuf-c allocates while parsing, in proportion to
 * the (bounded) input, before counts can be checked.
 *
 * Absent optional fields: a PartitionChangeRecord without leader leaves it
 * unchanged (META_LEADER_UNCHANGED); without has_isr_change the ISR is
 * unchanged; a ConfigRecord without value deletes the key; a missing rack
 * is ""; missing fenced/in_controlled_shutdown are 0 (unchanged).
 *
 * Encoding refuses (RC_INVALID) a record the decoder would refuse: an
 * unknown type, a string without its NUL, a replica set with n outside
 * 0..META_REPLICAS_MAX. RC_TOO_LARGE when the encoding would exceed its
 * bound. Encoding then decoding gives back an equal record (ids beyond a
 * set's n, and bytes after a string's NUL, are not encoded). */
#ifndef CAIRN_COMMON_META_CODEC_H
#define CAIRN_COMMON_META_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/meta/meta.h"

/* Encodes rec as a MetaRecord into a new malloc'd buffer *out of *len
 * bytes (at least one byte is allocated); the caller frees it. */
MUST_CHECK int meta_codec_encode_record(const struct meta_record *rec,
                                        uint8_t **out, size_t *len);

/* Decodes one MetaRecord of len bytes at p into *rec (zeroed first, and
 * zero again on failure). p may be NULL when len is 0. */
MUST_CHECK int meta_codec_decode_record(const uint8_t *p, size_t len,
                                        struct meta_record *rec);

/* Encodes recs[0..n) as one MetaBatch (a Raft entry). n must be at most
 * META_BATCH_RECORDS_MAX (else RC_TOO_LARGE). The buffer comes from alloc,
 * NULL meaning malloc, so that the Raft glue can pass raft_malloc; the
 * caller frees it with the matching free. At least one byte is allocated,
 * even for an empty batch (*len == 0). */
MUST_CHECK int meta_codec_encode_batch(const struct meta_record *recs,
                                       size_t n, void *(*alloc)(size_t),
                                       uint8_t **out, size_t *len);

/* Decodes a MetaBatch into a new malloc'd array *recs of *n records; the
 * caller frees it. An empty batch gives *recs == NULL, *n == 0. On failure
 * *recs is NULL and *n is 0. */
MUST_CHECK int meta_codec_decode_batch(const uint8_t *p, size_t len,
                                       struct meta_record **recs, size_t *n);

/* Encodes the whole image as a MetaImage; alloc as for batches. */
MUST_CHECK int meta_codec_encode_image(const struct meta_image *img,
                                       void *(*alloc)(size_t), uint8_t **out,
                                       size_t *len);

/* Decodes a MetaImage into img, which must be initialised and empty. On
 * failure img is left empty (as after meta_image_init). */
MUST_CHECK int meta_codec_decode_image(const uint8_t *p, size_t len,
                                       struct meta_image *img);

#endif
