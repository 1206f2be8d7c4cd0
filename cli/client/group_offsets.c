/* A group's committed offsets through OffsetFetch
 * (cli/client/group_offsets.h). */
#include "cli/client/group_offsets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "common/kafka/kafka_client.h"
#include "common/kafka/kafka_codec.h"
#include "common/arena.h"
#include "common/limits.h"
#include "common/rc.h"

void group_offsets_free(struct group_offsets *go)
{
    for (size_t i = 0; i < go->n_topics; i++) {
        free(go->topics[i]);
    }
    free(go->topics);
    free(go->v);
    *go = (struct group_offsets){0};
}

/* Copies the answer out of the response body it borrows from. */
static int take(const struct kafka_OffsetFetchResponse *resp,
                struct group_offsets *out)
{
    size_t n = 0;
    for (int32_t i = 0; i < resp->TopicsCnt; i++) {
        n += (size_t)resp->Topics[i].PartitionsCnt;
    }
    out->topics = calloc((size_t)resp->TopicsCnt + 1, sizeof *out->topics);
    out->v = calloc(n + 1, sizeof *out->v);
    if (out->topics == NULL || out->v == NULL) {
        return RC_NOMEM;
    }
    for (int32_t i = 0; i < resp->TopicsCnt; i++) {
        const struct kafka_OffsetFetchResponseTopic *t = &resp->Topics[i];
        char *name = malloc(t->Name.len + 1);
        if (name == NULL) {
            return RC_NOMEM;
        }
        if (t->Name.len > 0) {
            memcpy(name, t->Name.ptr, t->Name.len);
        }
        name[t->Name.len] = '\0';
        out->topics[out->n_topics++] = name;
        for (int32_t k = 0; k < t->PartitionsCnt; k++) {
            const struct kafka_OffsetFetchResponsePartition *p =
                &t->Partitions[k];
            out->v[out->n++] =
                (struct group_offset){.topic = name,
                                      .partition = p->PartitionIndex,
                                      .committed = p->CommittedOffset,
                                      .error_code = p->ErrorCode};
        }
    }
    ASSERT(out->n == n);
    return RC_OK;
}

/* Decodes body; RC_OK with out filled, RC_IO for a group-level error, or
 * the decoder's failure. */
static int decode(const uint8_t *body, size_t len, struct group_offsets *out,
                  struct kclient_error *e)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct kafka_OffsetFetchResponse resp;
    struct reader r;
    reader_init(&r, body, len);
    int rv = kafka_offset_fetch_response_decode(&r, GROUP_OFFSETS_VERSION, &a,
                                                &resp);
    if (rv != RC_OK) {
        char text[KCLIENT_ERROR_BYTES];
        snprintf(text, sizeof text, "OffsetFetch: undecodable answer: %s",
                 rc_str(rv));
        kclient_error_set(e, RD_KAFKA_RESP_ERR__BAD_MSG, text);
    } else if (resp.ErrorCode != 0) {
        kclient_error_set(e, (rd_kafka_resp_err_t)resp.ErrorCode, NULL);
        rv = RC_IO;
    } else {
        rv = take(&resp, out);
        if (rv != RC_OK) {
            kclient_error_set(e, RD_KAFKA_RESP_ERR_NO_ERROR, "out of memory");
        }
    }
    arena_free(&a);
    return rv;
}

int group_offsets_fetch(const char *host, int32_t port, const char *group,
                        uint64_t timeout_ms, struct group_offsets *out,
                        struct kclient_error *e)
{
    *out = (struct group_offsets){0};
    struct kafka_OffsetFetchRequest rq = {.GroupId = slice_from_str(group),
                                          .Topics = NULL,
                                          .TopicsCnt =
                                              -1 /* every partition */};
    struct writer w;
    writer_init(&w, KAFKA_STRING_BYTES_MAX);
    uint8_t *body = NULL;
    size_t len = 0;
    struct kafka_client kc;
    int rv =
        kafka_offset_fetch_request_encode(&w, GROUP_OFFSETS_VERSION, &rq);
    if (rv != RC_OK) {
        kclient_error_set(e, RD_KAFKA_RESP_ERR__INVALID_ARG,
                          "the group id is too long");
        writer_free(&w);
        return RC_INVALID;
    }
    rv = kafka_client_open(&kc, host, port, CLI_KAFKA_CLIENT_ID, timeout_ms);
    if (rv == RC_OK) {
        rv = kafka_client_call(&kc, KAFKA_API_OFFSET_FETCH,
                               GROUP_OFFSETS_VERSION, &w, &body, &len);
    }
    if (rv != RC_OK) {
        char text[KCLIENT_ERROR_BYTES];
        snprintf(text, sizeof text, "OffsetFetch to %s:%d: %s", host,
                 (int)port, kc.error);
        kclient_error_set(e, RD_KAFKA_RESP_ERR__TRANSPORT, text);
        rv = RC_IO;
    } else {
        rv = decode(body, len, out, e);
    }
    kafka_client_close(&kc);
    free(body);
    writer_free(&w);
    if (rv != RC_OK) {
        group_offsets_free(out);
    }
    return rv;
}
