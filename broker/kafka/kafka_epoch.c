/* OffsetForLeaderEpoch (broker/broker.h): for each partition this broker
 * leads, the largest epoch <= the one asked about that its epoch cache
 * knows and where that epoch ended (the next epoch's start, or the log end
 * for the current epoch); followers use it to find where their log
 * diverges (KIP-101/279), consumers to detect truncation (KIP-320).
 * CurrentLeaderEpoch fences callers with stale or future metadata. */
#include "broker/broker.h"

#include <stdlib.h>

#include "common/kafka/kafka_codec.h"
#include "common/kafka/kafka_error.h"
#include "common/limits.h"
#include "common/rc.h"

static int enc_epochs(struct writer *w, int16_t v, const void *r)
{
    return kafka_offset_for_leader_epoch_response_encode(w, v, r);
}

static void answer_one(struct broker *b, struct slice topic,
                       const struct kafka_OffsetForLeaderPartition *in,
                       struct kafka_EpochEndOffset *out)
{
    *out = (struct kafka_EpochEndOffset){.Partition = in->Partition,
                                         .LeaderEpoch = -1,
                                         .EndOffset = -1};
    struct partition *p = broker_partition(b, topic, in->Partition);
    if (p == NULL || !partition_is_leader(p)) {
        out->ErrorCode = broker_not_leader_error(b, topic, in->Partition);
        return;
    }
    out->ErrorCode = partition_check_reader(p, in->CurrentLeaderEpoch, -1);
    if (out->ErrorCode != KAFKA_ERROR_NONE) {
        return;
    }
    log_end_offset_for_epoch(p->log, in->LeaderEpoch, &out->LeaderEpoch,
                             &out->EndOffset);
}

void kafka_handle_offset_for_leader_epoch(struct broker *b,
                                          struct kafka_request *req)
{
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, req->body, req->body_len);
    struct kafka_OffsetForLeaderEpochRequest rq;
    int rv = kafka_offset_for_leader_epoch_request_decode(
        &r, req->api_version, &a, &rq);
    struct kafka_OffsetForLeaderTopicResult *topics = NULL;
    if (rv == RC_OK) {
        rv = arena_alloc(&a, (size_t)rq.TopicsCnt, sizeof *topics,
                         (void **)&topics);
    }
    for (int32_t i = 0; rv == RC_OK && i < rq.TopicsCnt; i++) {
        const struct kafka_OffsetForLeaderTopic *t = &rq.Topics[i];
        struct kafka_EpochEndOffset *parts = NULL;
        rv = arena_alloc(&a, (size_t)t->PartitionsCnt, sizeof *parts,
                         (void **)&parts);
        for (int32_t k = 0; rv == RC_OK && k < t->PartitionsCnt; k++) {
            answer_one(b, t->Topic, &t->Partitions[k], &parts[k]);
        }
        topics[i] = (struct kafka_OffsetForLeaderTopicResult){
            .Topic = t->Topic, .Partitions = parts,
            .PartitionsCnt = t->PartitionsCnt};
    }
    if (rv != RC_OK) {
        arena_free(&a);
        kafka_close_conn(req, "malformed OffsetForLeaderEpoch request");
        return;
    }
    struct kafka_OffsetForLeaderEpochResponse resp = {
        .Topics = topics, .TopicsCnt = rq.TopicsCnt};
    kafka_send(req, enc_epochs, &resp);
    arena_free(&a);
}
