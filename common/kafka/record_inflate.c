/* Streaming decoders for compressed record streams
 * (common/kafka/record_inflate.h): zlib for gzip, libsnappy, liblz4's
 * frame API, libzstd's streaming API. Pure, one thread per struct. */
#include "common/kafka/record_inflate.h"

#include <limits.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "common/bytes.h"
#include "common/limits.h"
#include "common/rc.h"

/* gzip only (16 + the largest window): no zlib wrapper, no raw deflate. */
#define RECORD_INFLATE__GZIP_WINDOW_BITS (16 + MAX_WBITS)

/* snappy-java's stream header: magic, then version and compatible
 * version as big-endian int32s. */
#define RECORD_INFLATE__XERIAL_HEADER_BYTES 16u
static const uint8_t record_inflate__xerial_magic[8] = {
    0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

/* A snappy block decodes to at most 64 bytes per 3-byte copy tag, so to
 * less than 22 times its size; a header claiming more is a lie, found
 * before anything is allocated for it. */
#define RECORD_INFLATE__SNAPPY_RATIO_MAX 22u

/* The largest zstd window a frame may ask for: 2^27 (libzstd's own
 * default limit), no more than a stream may decode to anyway. */
#define RECORD_INFLATE__ZSTD_WINDOW_LOG_MAX 27
_Static_assert((1u << RECORD_INFLATE__ZSTD_WINDOW_LOG_MAX) <=
                   RECORD_INFLATED_BYTES_MAX,
               "a zstd window is never larger than what a batch may inflate "
               "to");

struct record_inflate {
    uint8_t *window; /* RECORD_INFLATE_WINDOW_BYTES */
    int codec;       /* RECORD_CODEC_NONE when no stream is on */
    const uint8_t *in;
    size_t in_len;
    size_t in_pos;
    uint64_t total;
    uint64_t out_max;
    bool ended;      /* the stream ended cleanly: RC_NOT_FOUND from now */
    /* gzip */
    z_stream gz;
    bool gz_ready;
    bool gz_member_done;
    /* lz4 */
    LZ4F_dctx *lz4;
    /* The decoders' last answer: 0 when a frame ended there. */
    size_t lz4_hint;
    /* zstd */
    ZSTD_DStream *zstd;
    size_t zstd_hint;
    /* snappy */
    bool snappy_framed;
    uint8_t *snappy_buf;
    size_t snappy_cap;
};

int record_inflate_new(struct record_inflate **out)
{
    struct record_inflate *z = calloc(1, sizeof *z);
    if (z == NULL) {
        return RC_NOMEM;
    }
    z->window = malloc(RECORD_INFLATE_WINDOW_BYTES);
    if (z->window == NULL) {
        free(z);
        return RC_NOMEM;
    }
    *out = z;
    return RC_OK;
}

void record_inflate_free(struct record_inflate *z)
{
    if (z == NULL) {
        return;
    }
    if (z->gz_ready) {
        inflateEnd(&z->gz);
    }
    LZ4F_freeDecompressionContext(z->lz4);
    ZSTD_freeDStream(z->zstd);
    free(z->snappy_buf);
    free(z->window);
    free(z);
}

uint64_t record_inflate_total(const struct record_inflate *z)
{
    return z->total;
}

/* --- Starting a stream -------------------------------------------------- */

static int gzip_start(struct record_inflate *z)
{
    if (!z->gz_ready) {
        memset(&z->gz, 0, sizeof z->gz);
        int ret = inflateInit2(&z->gz, RECORD_INFLATE__GZIP_WINDOW_BITS);
        if (ret != Z_OK) {
            return RC_NOMEM;
        }
        z->gz_ready = true;
    } else if (inflateReset(&z->gz) != Z_OK) {
        return RC_NOMEM; /* cannot happen on an initialised stream */
    }
    z->gz_member_done = false;
    return RC_OK;
}

static int lz4_start(struct record_inflate *z)
{
    if (z->lz4 == NULL) {
        LZ4F_errorCode_t e = LZ4F_createDecompressionContext(&z->lz4,
                                                             LZ4F_VERSION);
        if (LZ4F_isError(e)) {
            z->lz4 = NULL;
            return RC_NOMEM;
        }
    } else {
        LZ4F_resetDecompressionContext(z->lz4);
    }
    z->lz4_hint = 1;
    return RC_OK;
}

static int zstd_start(struct record_inflate *z)
{
    if (z->zstd == NULL) {
        z->zstd = ZSTD_createDStream();
        if (z->zstd == NULL) {
            return RC_NOMEM;
        }
        size_t r = ZSTD_DCtx_setParameter(z->zstd, ZSTD_d_windowLogMax,
                                          RECORD_INFLATE__ZSTD_WINDOW_LOG_MAX);
        ASSERT(!ZSTD_isError(r));
    }
    size_t r = ZSTD_DCtx_reset(z->zstd, ZSTD_reset_session_only);
    ASSERT(!ZSTD_isError(r));
    z->zstd_hint = 1;
    return RC_OK;
}

int record_inflate_start(struct record_inflate *z, int codec,
                         const uint8_t *src, size_t len, uint64_t out_max)
{
    ASSERT(z->codec == RECORD_CODEC_NONE); /* the last stream was ended */
    ASSERT(codec >= RECORD_CODEC_GZIP && codec <= RECORD_CODEC_ZSTD);
    z->in = src;
    z->in_len = len;
    z->in_pos = 0;
    z->total = 0;
    z->out_max = out_max;
    z->ended = false;
    int rv = RC_OK;
    switch (codec) {
    case RECORD_CODEC_GZIP:
        rv = gzip_start(z);
        break;
    case RECORD_CODEC_LZ4:
        rv = lz4_start(z);
        break;
    case RECORD_CODEC_ZSTD:
        rv = zstd_start(z);
        break;
    default:
        z->snappy_framed =
            len >= RECORD_INFLATE__XERIAL_HEADER_BYTES &&
            memcmp(src, record_inflate__xerial_magic,
                   sizeof record_inflate__xerial_magic) == 0;
        z->in_pos = z->snappy_framed ? RECORD_INFLATE__XERIAL_HEADER_BYTES
                                     : 0;
        break;
    }
    if (rv == RC_OK) {
        z->codec = codec;
    }
    return rv;
}

void record_inflate_end(struct record_inflate *z)
{
    if (z->zstd != NULL &&
        ZSTD_sizeof_DStream(z->zstd) > RECORD_INFLATE_KEEP_BYTES) {
        ZSTD_freeDStream(z->zstd);
        z->zstd = NULL;
    }
    if (z->snappy_cap > RECORD_INFLATE_KEEP_BYTES) {
        free(z->snappy_buf);
        z->snappy_buf = NULL;
        z->snappy_cap = 0;
    }
    z->codec = RECORD_CODEC_NONE;
    z->in = NULL;
    z->in_len = 0;
}

/* --- Decoding ----------------------------------------------------------- */

static size_t in_left(const struct record_inflate *z)
{
    return z->in_len - z->in_pos;
}

/* Decoded bytes into the window: one zlib step per loop turn. A member
 * that ends with input left starts the next member. */
static int gzip_next(struct record_inflate *z, size_t *got)
{
    z_stream *s = &z->gz;
    for (;;) {
        if (z->gz_member_done) {
            if (in_left(z) == 0) {
                return RC_NOT_FOUND;
            }
            if (inflateReset(s) != Z_OK) {
                return RC_CORRUPT;
            }
            z->gz_member_done = false;
        }
        size_t avail = in_left(z) > UINT_MAX ? UINT_MAX : in_left(z);
        s->next_in = (Bytef *)(uintptr_t)(z->in + z->in_pos);
        s->avail_in = (uInt)avail;
        s->next_out = z->window;
        s->avail_out = RECORD_INFLATE_WINDOW_BYTES;
        int ret = inflate(s, Z_NO_FLUSH);
        size_t used = avail - s->avail_in;
        z->in_pos += used;
        *got = RECORD_INFLATE_WINDOW_BYTES - s->avail_out;
        if (ret == Z_STREAM_END) {
            z->gz_member_done = true;
        } else if (ret == Z_MEM_ERROR) {
            return RC_NOMEM;
        } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
            return RC_CORRUPT; /* Z_DATA_ERROR, Z_NEED_DICT */
        }
        if (*got > 0) {
            return RC_OK;
        }
        if (!z->gz_member_done && used == 0) {
            return RC_CORRUPT; /* the input ended inside a member */
        }
    }
}

static int lz4_next(struct record_inflate *z, size_t *got)
{
    for (;;) {
        if (z->lz4_hint == 0 && in_left(z) == 0) {
            return RC_NOT_FOUND; /* the last frame ended with the input */
        }
        size_t dst = RECORD_INFLATE_WINDOW_BYTES;
        size_t src = in_left(z);
        size_t hint = LZ4F_decompress(z->lz4, z->window, &dst,
                                      z->in + z->in_pos, &src, NULL);
        if (LZ4F_isError(hint)) {
            return RC_CORRUPT;
        }
        z->in_pos += src;
        z->lz4_hint = hint;
        *got = dst;
        if (dst > 0) {
            return RC_OK;
        }
        if (src == 0) { /* no progress: done, or cut inside a frame */
            return hint == 0 && in_left(z) == 0 ? RC_NOT_FOUND : RC_CORRUPT;
        }
    }
}

static int zstd_next(struct record_inflate *z, size_t *got)
{
    for (;;) {
        if (z->zstd_hint == 0 && in_left(z) == 0) {
            return RC_NOT_FOUND;
        }
        ZSTD_inBuffer in = {z->in, z->in_len, z->in_pos};
        ZSTD_outBuffer out = {z->window, RECORD_INFLATE_WINDOW_BYTES, 0};
        size_t hint = ZSTD_decompressStream(z->zstd, &out, &in);
        if (ZSTD_isError(hint)) {
            return ZSTD_getErrorCode(hint) == ZSTD_error_memory_allocation
                       ? RC_NOMEM
                       : RC_CORRUPT;
        }
        size_t used = in.pos - z->in_pos;
        z->in_pos = in.pos;
        z->zstd_hint = hint;
        *got = out.pos;
        if (out.pos > 0) {
            return RC_OK;
        }
        if (used == 0) {
            return hint == 0 && in_left(z) == 0 ? RC_NOT_FOUND : RC_CORRUPT;
        }
    }
}

/* One raw snappy block src[0..len) into snappy_buf, grown to fit. */
static int snappy_block(struct record_inflate *z, const uint8_t *src,
                        size_t len, size_t *got)
{
    size_t n = 0;
    if (snappy_uncompressed_length((const char *)src, len, &n) !=
        SNAPPY_OK) {
        return RC_CORRUPT;
    }
    if ((uint64_t)n > (uint64_t)len * RECORD_INFLATE__SNAPPY_RATIO_MAX) {
        return RC_CORRUPT;
    }
    if ((uint64_t)n > z->out_max - z->total) {
        return RC_TOO_LARGE;
    }
    if (n > z->snappy_cap) {
        uint8_t *buf = realloc(z->snappy_buf, n);
        if (buf == NULL) {
            return RC_NOMEM;
        }
        z->snappy_buf = buf;
        z->snappy_cap = n;
    }
    size_t out = n;
    if (n > 0 && (snappy_uncompress((const char *)src, len,
                                    (char *)z->snappy_buf, &out) !=
                      SNAPPY_OK ||
                  out != n)) {
        return RC_CORRUPT;
    }
    *got = n;
    return RC_OK;
}

/* Raw: the whole input is one block. Framed: int32 length, block, ... */
static int snappy_next(struct record_inflate *z, size_t *got)
{
    for (;;) {
        if (in_left(z) == 0) {
            return z->snappy_framed || z->total > 0 ? RC_NOT_FOUND
                                                    : RC_CORRUPT;
        }
        size_t len = in_left(z);
        const uint8_t *src = z->in + z->in_pos;
        if (z->snappy_framed) {
            if (len < 4) {
                return RC_CORRUPT;
            }
            uint32_t n = bytes_be32(src);
            if (n > len - 4) {
                return RC_CORRUPT;
            }
            src += 4;
            len = n;
            z->in_pos += 4;
        }
        int rv = snappy_block(z, src, len, got);
        if (rv != RC_OK) {
            return rv;
        }
        z->in_pos += len;
        if (*got > 0) {
            return RC_OK;
        }
        if (!z->snappy_framed) {
            return RC_NOT_FOUND; /* one block of nothing */
        }
    }
}

int record_inflate_next(struct record_inflate *z, const uint8_t **out,
                        size_t *len)
{
    ASSERT(z->codec != RECORD_CODEC_NONE);
    if (z->ended) {
        return RC_NOT_FOUND;
    }
    size_t got = 0;
    int rv;
    switch (z->codec) {
    case RECORD_CODEC_GZIP:
        rv = gzip_next(z, &got);
        break;
    case RECORD_CODEC_LZ4:
        rv = lz4_next(z, &got);
        break;
    case RECORD_CODEC_ZSTD:
        rv = zstd_next(z, &got);
        break;
    default:
        rv = snappy_next(z, &got);
        break;
    }
    if (rv == RC_NOT_FOUND) {
        z->ended = true;
    }
    if (rv != RC_OK) {
        return rv;
    }
    ASSERT(got > 0);
    if (got > z->out_max - z->total) {
        return RC_TOO_LARGE;
    }
    z->total += got;
    *out = z->codec == RECORD_CODEC_SNAPPY ? z->snappy_buf : z->window;
    *len = got;
    return RC_OK;
}
