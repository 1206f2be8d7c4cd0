/* libFuzzer target for what a controller decodes from its peers and
 * clients besides Raft's own framing (tests/fuzz/fuzz_raft_guard.c): the
 * first input byte picks
 *   0: a metadata batch, as a Raft entry's payload (meta_codec_decode_
 *      batch), each record then applied to an image as the FSM does
 *      (meta_apply), and described for the log;
 *   1: a metadata image, as a snapshot (meta_codec_decode_image);
 *   2: a controller RPC request (cairn__request__unpack).
 * Oracles besides the sanitizers: a batch that decodes encodes again and
 * that encoding decodes to as many records; an image that decodes
 * encodes and decodes again with as many topics and brokers.
 *
 * Built and run by `make fuzz` (and `make test`). Pure apart from what
 * libFuzzer does. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/assert.h"
#include "common/meta/meta.h"
#include "common/meta/meta_codec.h"
#include "common/rc.h"
#include "rpc.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void batch(const uint8_t *p, size_t len)
{
    struct meta_record *recs = NULL;
    size_t n = 0;
    if (meta_codec_decode_batch(p, len, &recs, &n) != RC_OK) {
        ASSERT(recs == NULL && n == 0);
        return;
    }
    uint8_t *again = NULL;
    size_t again_len = 0;
    if (meta_codec_encode_batch(recs, n, NULL, &again, &again_len) ==
        RC_OK) {
        struct meta_record *recs2 = NULL;
        size_t n2 = 0;
        ASSERT(meta_codec_decode_batch(again, again_len, &recs2, &n2) ==
               RC_OK);
        ASSERT(n2 == n);
        free(recs2);
        free(again);
    }
    struct meta_image img;
    meta_image_init(&img);
    for (size_t i = 0; i < n; i++) {
        char text[512];
        meta_record_describe(&img, &recs[i], text, sizeof text);
        int rv = meta_apply(&img, &recs[i]);
        ASSERT(rv == RC_OK || rv == RC_INVALID || rv == RC_NOMEM);
    }
    meta_image_free(&img);
    free(recs);
}

static void image(const uint8_t *p, size_t len)
{
    struct meta_image img;
    meta_image_init(&img);
    if (meta_codec_decode_image(p, len, &img) != RC_OK) {
        ASSERT(img.n_topics == 0 && img.n_brokers == 0);
        meta_image_free(&img);
        return;
    }
    uint8_t *again = NULL;
    size_t again_len = 0;
    if (meta_codec_encode_image(&img, NULL, &again, &again_len) == RC_OK) {
        struct meta_image img2;
        meta_image_init(&img2);
        ASSERT(meta_codec_decode_image(again, again_len, &img2) == RC_OK);
        ASSERT(img2.n_topics == img.n_topics);
        ASSERT(img2.n_brokers == img.n_brokers);
        meta_image_free(&img2);
        free(again);
    }
    meta_image_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    const uint8_t *p = data + 1;
    size_t len = size - 1;
    switch (data[0] % 3) {
    case 0:
        batch(p, len);
        break;
    case 1:
        image(p, len);
        break;
    default: {
        Cairn__Request *req = cairn__request__unpack(NULL, len, p);
        if (req != NULL) {
            cairn__request__free_unpacked(req, NULL);
        }
        break;
    }
    }
    return 0;
}
