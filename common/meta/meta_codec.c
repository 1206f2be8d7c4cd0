/* protobuf-c glue for cluster metadata (common/meta/meta_codec.h); the only
 * file that includes metadata.pb-c.h. Encoding builds protobuf-c structs
 * that point into the caller's records or image (nothing is copied), then
 * packs them with get_packed_size + pack. Decoding unpacks with a private
 * allocator and copies into Cairn's structs, checking everything. Pure: no
 * I/O, no clock, no globals; any thread.
 *
 * Why a private allocator: protobuf-c hands strings back NUL-terminated
 * without their length, so a NUL byte inside a string would silently cut
 * it. Each block carries its size in a header; protobuf-c allocates a
 * string of n wire bytes as n + 1, so a string whose strlen() is not its
 * block size - 1 held a NUL. The allocator also tells a failed malloc
 * (RC_NOMEM) from bytes protobuf-c refused (RC_MALFORMED). */
#include "common/meta/meta_codec.h"

#include "common/rc.h"

#include "metadata.pb-c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- Allocator for unpacking --------------------------------------------- */

union codec__hdr {
    size_t size;
    max_align_t align;
};

struct codec__heap {
    ProtobufCAllocator pa;
    bool nomem; /* an allocation failed: unpack's NULL is RC_NOMEM */
};

static void *codec_heap_alloc_cb(void *data, size_t size)
{
    struct codec__heap *h = data;
    union codec__hdr *hdr = NULL;

    if (size <= SIZE_MAX - sizeof *hdr) {
        hdr = malloc(sizeof *hdr + size);
    }
    if (hdr == NULL) {
        h->nomem = true;
        return NULL;
    }
    hdr->size = size;
    return hdr + 1;
}

static void codec_heap_free_cb(void *data, void *p)
{
    (void)data;
    if (p != NULL) {
        free((union codec__hdr *)p - 1);
    }
}

static void codec_heap_init(struct codec__heap *h)
{
    h->pa.alloc = codec_heap_alloc_cb;
    h->pa.free = codec_heap_free_cb;
    h->pa.allocator_data = h;
    h->nomem = false;
}

static int codec_unpack_failed(const struct codec__heap *h)
{
    return h->nomem ? RC_NOMEM : RC_MALFORMED;
}

/* --- Reading unpacked messages (false: malformed) ------------------------ */

static bool codec_known(const ProtobufCMessage *m)
{
    return m->n_unknown_fields == 0;
}

static bool codec_get_uuid(protobuf_c_boolean has,
                           const ProtobufCBinaryData *bd,
                           struct meta_uuid *u)
{
    if (!has || bd->len != sizeof u->b) {
        return false;
    }
    memcpy(u->b, bd->data, sizeof u->b);
    return true;
}

/* True if s, an unpacked string, has at most max bytes and no NUL. */
static bool codec_str_valid(const char *s, size_t max)
{
    size_t block = ((const union codec__hdr *)(const void *)s - 1)->size;

    ASSERT(block >= 1); /* n wire bytes + the NUL protobuf-c adds */
    return block - 1 <= max && strlen(s) == block - 1;
}

/* Copies unpacked string s (NULL: absent, read as "") into dst[cap]. */
static bool codec_get_str(const char *s, char *dst, size_t cap)
{
    if (s == NULL) {
        dst[0] = '\0';
        return true;
    }
    if (!codec_str_valid(s, cap - 1)) {
        return false;
    }
    memcpy(dst, s, strlen(s) + 1);
    return true;
}

static bool codec_get_set(size_t n, const int32_t *ids,
                          struct meta_replica_set *s)
{
    memset(s, 0, sizeof *s);
    if (n > META_REPLICAS_MAX) {
        return false;
    }
    s->n = (int32_t)n;
    if (n > 0) {
        memcpy(s->ids, ids, n * sizeof ids[0]);
    }
    return true;
}

static bool codec_get_int8(int32_t v, int8_t *out)
{
    if (v < INT8_MIN || v > INT8_MAX) {
        return false;
    }
    *out = (int8_t)v;
    return true;
}

static bool codec_get_endpoint(const Cairn__Endpoint *e, char *host,
                               size_t host_cap, int32_t *port)
{
    if (e == NULL || !codec_known(&e->base) || e->host == NULL ||
        !e->has_port) {
        return false;
    }
    *port = e->port;
    return codec_get_str(e->host, host, host_cap);
}

/* --- Reading records ----------------------------------------------------- */

static bool codec_get_register_broker(const Cairn__RegisterBrokerRecord *m,
                                      struct meta_rec_register_broker *r)
{
    if (!codec_known(&m->base) || !m->has_broker_id) {
        return false;
    }
    r->broker_id = m->broker_id;
    return codec_get_uuid(m->has_incarnation_id, &m->incarnation_id,
                          &r->incarnation) &&
           codec_get_endpoint(m->endpoint, r->host, sizeof r->host,
                              &r->port) &&
           codec_get_str(m->rack, r->rack, sizeof r->rack);
}

static bool
codec_get_broker_change(const Cairn__BrokerRegistrationChangeRecord *m,
                        struct meta_rec_broker_change *r)
{
    if (!codec_known(&m->base) || !m->has_broker_id || !m->has_broker_epoch) {
        return false;
    }
    r->broker_id = m->broker_id;
    r->broker_epoch = m->broker_epoch;
    return codec_get_int8(m->has_fenced ? m->fenced : 0, &r->fenced) &&
           codec_get_int8(m->has_in_controlled_shutdown
                              ? m->in_controlled_shutdown
                              : 0,
                          &r->in_controlled_shutdown);
}

static bool codec_get_topic(const Cairn__TopicRecord *m,
                            struct meta_rec_topic *r)
{
    return codec_known(&m->base) && m->name != NULL &&
           codec_get_str(m->name, r->name, sizeof r->name) &&
           codec_get_uuid(m->has_topic_id, &m->topic_id, &r->id);
}

static bool codec_get_partition(const Cairn__PartitionRecord *m,
                                struct meta_rec_partition *r)
{
    if (!codec_known(&m->base) || !m->has_partition_id || !m->has_leader ||
        !m->has_leader_epoch || !m->has_partition_epoch) {
        return false;
    }
    r->partition = m->partition_id;
    r->leader = m->leader;
    r->leader_epoch = m->leader_epoch;
    r->partition_epoch = m->partition_epoch;
    return codec_get_uuid(m->has_topic_id, &m->topic_id, &r->topic_id) &&
           codec_get_set(m->n_replicas, m->replicas, &r->replicas) &&
           codec_get_set(m->n_isr, m->isr, &r->isr) &&
           codec_get_set(m->n_adding_replicas, m->adding_replicas,
                         &r->adding) &&
           codec_get_set(m->n_removing_replicas, m->removing_replicas,
                         &r->removing);
}

static bool codec_get_partition_change(const Cairn__PartitionChangeRecord *m,
                                       struct meta_rec_partition_change *r)
{
    if (!codec_known(&m->base) || !m->has_partition_id) {
        return false;
    }
    r->partition = m->partition_id;
    r->isr_changed = m->has_has_isr_change && m->has_isr_change;
    if (!r->isr_changed && m->n_isr > 0) {
        return false; /* an ISR that is not a change */
    }
    r->leader = m->has_leader ? m->leader : META_LEADER_UNCHANGED;
    r->replicas_changed = m->has_has_replicas_change &&
                          m->has_replicas_change;
    if (!r->replicas_changed &&
        (m->n_replicas > 0 || m->n_adding_replicas > 0 ||
         m->n_removing_replicas > 0)) {
        return false; /* replicas that are not a change */
    }
    return codec_get_uuid(m->has_topic_id, &m->topic_id, &r->topic_id) &&
           codec_get_set(m->n_isr, m->isr, &r->isr) &&
           codec_get_set(m->n_replicas, m->replicas, &r->replicas) &&
           codec_get_set(m->n_adding_replicas, m->adding_replicas,
                         &r->adding) &&
           codec_get_set(m->n_removing_replicas, m->removing_replicas,
                         &r->removing);
}

static bool codec_get_config(const Cairn__ConfigRecord *m,
                             struct meta_rec_config *r)
{
    if (!codec_known(&m->base) || !m->has_resource_type ||
        m->resource_name == NULL || m->name == NULL) {
        return false;
    }
    r->has_value = m->value != NULL;
    return codec_get_int8(m->resource_type, &r->resource_type) &&
           codec_get_str(m->resource_name, r->resource_name,
                         sizeof r->resource_name) &&
           codec_get_str(m->name, r->name, sizeof r->name) &&
           codec_get_str(m->value, r->value, sizeof r->value);
}

static bool codec_get_producer_ids(const Cairn__ProducerIdsRecord *m,
                                   struct meta_rec_producer_ids *r)
{
    if (!codec_known(&m->base) || !m->has_broker_id ||
        !m->has_broker_epoch || !m->has_next_producer_id) {
        return false;
    }
    r->broker_id = m->broker_id;
    r->broker_epoch = m->broker_epoch;
    r->next_producer_id = m->next_producer_id;
    return true;
}

static bool codec_get_record(const Cairn__MetaRecord *m,
                             struct meta_record *rec)
{
    if (!codec_known(&m->base)) {
        return false;
    }
    switch (m->record_case) {
    case CAIRN__META_RECORD__RECORD_REGISTER_BROKER:
        rec->type = META_REC_REGISTER_BROKER;
        return codec_get_register_broker(m->register_broker,
                                         &rec->u.register_broker);
    case CAIRN__META_RECORD__RECORD_BROKER_CHANGE:
        rec->type = META_REC_BROKER_CHANGE;
        return codec_get_broker_change(m->broker_change,
                                       &rec->u.broker_change);
    case CAIRN__META_RECORD__RECORD_TOPIC:
        rec->type = META_REC_TOPIC;
        return codec_get_topic(m->topic, &rec->u.topic);
    case CAIRN__META_RECORD__RECORD_PARTITION:
        rec->type = META_REC_PARTITION;
        return codec_get_partition(m->partition, &rec->u.partition);
    case CAIRN__META_RECORD__RECORD_PARTITION_CHANGE:
        rec->type = META_REC_PARTITION_CHANGE;
        return codec_get_partition_change(m->partition_change,
                                          &rec->u.partition_change);
    case CAIRN__META_RECORD__RECORD_REMOVE_TOPIC:
        rec->type = META_REC_REMOVE_TOPIC;
        return codec_known(&m->remove_topic->base) &&
               codec_get_uuid(m->remove_topic->has_topic_id,
                              &m->remove_topic->topic_id,
                              &rec->u.remove_topic.topic_id);
    case CAIRN__META_RECORD__RECORD_CONFIG:
        rec->type = META_REC_CONFIG;
        return codec_get_config(m->config, &rec->u.config);
    case CAIRN__META_RECORD__RECORD_PRODUCER_IDS:
        rec->type = META_REC_PRODUCER_IDS;
        return codec_get_producer_ids(m->producer_ids, &rec->u.producer_ids);
    case CAIRN__META_RECORD__RECORD_UNREGISTER_BROKER:
        rec->type = META_REC_UNREGISTER_BROKER;
        rec->u.unregister_broker.broker_id = m->unregister_broker->broker_id;
        rec->u.unregister_broker.broker_epoch =
            m->unregister_broker->broker_epoch;
        return codec_known(&m->unregister_broker->base) &&
               m->unregister_broker->has_broker_id &&
               m->unregister_broker->has_broker_epoch;
    default:
        return false; /* no record set */
    }
}

/* --- Checking records before encoding ------------------------------------ */

static bool codec_str_ok(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

static bool codec_set_ok(const struct meta_replica_set *s)
{
    return s->n >= 0 && s->n <= META_REPLICAS_MAX;
}

/* RC_INVALID for a record the decoder would refuse. */
static int codec_check_record(const struct meta_record *rec)
{
    const struct meta_rec_register_broker *rb = &rec->u.register_broker;
    const struct meta_rec_partition_change *pc = &rec->u.partition_change;
    const struct meta_rec_config *c = &rec->u.config;
    bool ok;

    switch (rec->type) {
    case META_REC_REGISTER_BROKER:
        ok = codec_str_ok(rb->host, sizeof rb->host) &&
             codec_str_ok(rb->rack, sizeof rb->rack);
        break;
    case META_REC_TOPIC:
        ok = codec_str_ok(rec->u.topic.name, sizeof rec->u.topic.name);
        break;
    case META_REC_PARTITION:
        ok = codec_set_ok(&rec->u.partition.replicas) &&
             codec_set_ok(&rec->u.partition.isr) &&
             codec_set_ok(&rec->u.partition.adding) &&
             codec_set_ok(&rec->u.partition.removing);
        break;
    case META_REC_PARTITION_CHANGE:
        ok = (!pc->isr_changed || codec_set_ok(&pc->isr)) &&
             (!pc->replicas_changed ||
              (codec_set_ok(&pc->replicas) && codec_set_ok(&pc->adding) &&
               codec_set_ok(&pc->removing)));
        break;
    case META_REC_CONFIG:
        ok = codec_str_ok(c->resource_name, sizeof c->resource_name) &&
             codec_str_ok(c->name, sizeof c->name) &&
             (!c->has_value || codec_str_ok(c->value, sizeof c->value));
        break;
    case META_REC_BROKER_CHANGE:
    case META_REC_REMOVE_TOPIC:
    case META_REC_PRODUCER_IDS:
    case META_REC_UNREGISTER_BROKER:
        ok = true;
        break;
    default:
        ok = false;
        break;
    }
    return ok ? RC_OK : RC_INVALID;
}

/* --- Views: protobuf-c structs pointing into Cairn's --------------------- */

/* protobuf-c's structs are not const-correct; pack() only reads. */
static ProtobufCBinaryData codec_uuid_view(const struct meta_uuid *u)
{
    ProtobufCBinaryData bd = {sizeof u->b, (uint8_t *)u->b};

    return bd;
}

struct codec__view {
    Cairn__MetaRecord mr;
    Cairn__Endpoint endpoint;
    union {
        Cairn__RegisterBrokerRecord register_broker;
        Cairn__BrokerRegistrationChangeRecord broker_change;
        Cairn__TopicRecord topic;
        Cairn__PartitionRecord partition;
        Cairn__PartitionChangeRecord partition_change;
        Cairn__RemoveTopicRecord remove_topic;
        Cairn__ConfigRecord config;
        Cairn__ProducerIdsRecord producer_ids;
        Cairn__UnregisterBrokerRecord unregister_broker;
    } u;
};

static void codec_view_register_broker(struct codec__view *v,
                                       const struct meta_rec_register_broker *r)
{
    Cairn__RegisterBrokerRecord *m = &v->u.register_broker;

    cairn__register_broker_record__init(m);
    cairn__endpoint__init(&v->endpoint);
    m->has_broker_id = true;
    m->broker_id = r->broker_id;
    m->has_incarnation_id = true;
    m->incarnation_id = codec_uuid_view(&r->incarnation);
    v->endpoint.host = (char *)r->host;
    v->endpoint.has_port = true;
    v->endpoint.port = r->port;
    m->endpoint = &v->endpoint;
    m->rack = (char *)r->rack;
    v->mr.record_case = CAIRN__META_RECORD__RECORD_REGISTER_BROKER;
    v->mr.register_broker = m;
}

static void codec_view_broker_change(struct codec__view *v,
                                     const struct meta_rec_broker_change *r)
{
    Cairn__BrokerRegistrationChangeRecord *m = &v->u.broker_change;

    cairn__broker_registration_change_record__init(m);
    m->has_broker_id = true;
    m->broker_id = r->broker_id;
    m->has_broker_epoch = true;
    m->broker_epoch = r->broker_epoch;
    m->has_fenced = true;
    m->fenced = r->fenced;
    m->has_in_controlled_shutdown = true;
    m->in_controlled_shutdown = r->in_controlled_shutdown;
    v->mr.record_case = CAIRN__META_RECORD__RECORD_BROKER_CHANGE;
    v->mr.broker_change = m;
}

/* Fills m from the partition fields shared by records and the image. */
static void codec_view_partition_fields(Cairn__PartitionRecord *m,
                                        int32_t partition,
                                        const struct meta_replica_set *replicas,
                                        const struct meta_replica_set *isr,
                                        int32_t leader, int32_t leader_epoch,
                                        int32_t partition_epoch,
                                        const struct meta_replica_set *adding,
                                        const struct meta_replica_set *removing)
{
    m->n_adding_replicas = (size_t)adding->n;
    m->adding_replicas = (int32_t *)adding->ids;
    m->n_removing_replicas = (size_t)removing->n;
    m->removing_replicas = (int32_t *)removing->ids;
    m->has_partition_id = true;
    m->partition_id = partition;
    m->n_replicas = (size_t)replicas->n;
    m->replicas = (int32_t *)replicas->ids;
    m->n_isr = (size_t)isr->n;
    m->isr = (int32_t *)isr->ids;
    m->has_leader = true;
    m->leader = leader;
    m->has_leader_epoch = true;
    m->leader_epoch = leader_epoch;
    m->has_partition_epoch = true;
    m->partition_epoch = partition_epoch;
}

static void codec_view_partition(struct codec__view *v,
                                 const struct meta_rec_partition *r)
{
    Cairn__PartitionRecord *m = &v->u.partition;

    cairn__partition_record__init(m);
    m->has_topic_id = true;
    m->topic_id = codec_uuid_view(&r->topic_id);
    codec_view_partition_fields(m, r->partition, &r->replicas, &r->isr,
                                r->leader, r->leader_epoch,
                                r->partition_epoch, &r->adding,
                                &r->removing);
    v->mr.record_case = CAIRN__META_RECORD__RECORD_PARTITION;
    v->mr.partition = m;
}

static void codec_view_partition_change(
    struct codec__view *v, const struct meta_rec_partition_change *r)
{
    Cairn__PartitionChangeRecord *m = &v->u.partition_change;

    cairn__partition_change_record__init(m);
    m->has_topic_id = true;
    m->topic_id = codec_uuid_view(&r->topic_id);
    m->has_partition_id = true;
    m->partition_id = r->partition;
    m->has_has_isr_change = true;
    m->has_isr_change = r->isr_changed;
    if (r->isr_changed) {
        m->n_isr = (size_t)r->isr.n;
        m->isr = (int32_t *)r->isr.ids;
    }
    if (r->leader != META_LEADER_UNCHANGED) {
        m->has_leader = true; /* absent means unchanged */
        m->leader = r->leader;
    }
    if (r->replicas_changed) {
        m->has_has_replicas_change = true;
        m->has_replicas_change = true;
        m->n_replicas = (size_t)r->replicas.n;
        m->replicas = (int32_t *)r->replicas.ids;
        m->n_adding_replicas = (size_t)r->adding.n;
        m->adding_replicas = (int32_t *)r->adding.ids;
        m->n_removing_replicas = (size_t)r->removing.n;
        m->removing_replicas = (int32_t *)r->removing.ids;
    }
    v->mr.record_case = CAIRN__META_RECORD__RECORD_PARTITION_CHANGE;
    v->mr.partition_change = m;
}

static void codec_view_config(struct codec__view *v,
                              const struct meta_rec_config *r)
{
    Cairn__ConfigRecord *m = &v->u.config;

    cairn__config_record__init(m);
    m->has_resource_type = true;
    m->resource_type = r->resource_type;
    m->resource_name = (char *)r->resource_name;
    m->name = (char *)r->name;
    if (r->has_value) {
        m->value = (char *)r->value; /* absent deletes the key */
    }
    v->mr.record_case = CAIRN__META_RECORD__RECORD_CONFIG;
    v->mr.config = m;
}

static void codec_view_small(struct codec__view *v,
                             const struct meta_record *rec)
{
    const struct meta_rec_producer_ids *p = &rec->u.producer_ids;

    if (rec->type == META_REC_TOPIC) {
        cairn__topic_record__init(&v->u.topic);
        v->u.topic.name = (char *)rec->u.topic.name;
        v->u.topic.has_topic_id = true;
        v->u.topic.topic_id = codec_uuid_view(&rec->u.topic.id);
        v->mr.record_case = CAIRN__META_RECORD__RECORD_TOPIC;
        v->mr.topic = &v->u.topic;
    } else if (rec->type == META_REC_REMOVE_TOPIC) {
        cairn__remove_topic_record__init(&v->u.remove_topic);
        v->u.remove_topic.has_topic_id = true;
        v->u.remove_topic.topic_id =
            codec_uuid_view(&rec->u.remove_topic.topic_id);
        v->mr.record_case = CAIRN__META_RECORD__RECORD_REMOVE_TOPIC;
        v->mr.remove_topic = &v->u.remove_topic;
    } else if (rec->type == META_REC_UNREGISTER_BROKER) {
        cairn__unregister_broker_record__init(&v->u.unregister_broker);
        v->u.unregister_broker.has_broker_id = true;
        v->u.unregister_broker.broker_id = rec->u.unregister_broker.broker_id;
        v->u.unregister_broker.has_broker_epoch = true;
        v->u.unregister_broker.broker_epoch =
            rec->u.unregister_broker.broker_epoch;
        v->mr.record_case = CAIRN__META_RECORD__RECORD_UNREGISTER_BROKER;
        v->mr.unregister_broker = &v->u.unregister_broker;
    } else {
        ASSERT(rec->type == META_REC_PRODUCER_IDS);
        cairn__producer_ids_record__init(&v->u.producer_ids);
        v->u.producer_ids.has_broker_id = true;
        v->u.producer_ids.broker_id = p->broker_id;
        v->u.producer_ids.has_broker_epoch = true;
        v->u.producer_ids.broker_epoch = p->broker_epoch;
        v->u.producer_ids.has_next_producer_id = true;
        v->u.producer_ids.next_producer_id = p->next_producer_id;
        v->mr.record_case = CAIRN__META_RECORD__RECORD_PRODUCER_IDS;
        v->mr.producer_ids = &v->u.producer_ids;
    }
}

/* v views rec, which codec_check_record() accepted. */
static void codec_view_record(struct codec__view *v,
                              const struct meta_record *rec)
{
    cairn__meta_record__init(&v->mr);
    switch (rec->type) {
    case META_REC_REGISTER_BROKER:
        codec_view_register_broker(v, &rec->u.register_broker);
        break;
    case META_REC_BROKER_CHANGE:
        codec_view_broker_change(v, &rec->u.broker_change);
        break;
    case META_REC_PARTITION:
        codec_view_partition(v, &rec->u.partition);
        break;
    case META_REC_PARTITION_CHANGE:
        codec_view_partition_change(v, &rec->u.partition_change);
        break;
    case META_REC_CONFIG:
        codec_view_config(v, &rec->u.config);
        break;
    case META_REC_TOPIC:
    case META_REC_REMOVE_TOPIC:
    case META_REC_PRODUCER_IDS:
    case META_REC_UNREGISTER_BROKER:
        codec_view_small(v, rec);
        break;
    default:
        ASSERT_UNREACHABLE("record type checked before viewing");
    }
}

/* Packs m into a new buffer from alloc (NULL: malloc). */
static int codec_pack(const ProtobufCMessage *m, size_t max,
                      void *(*alloc)(size_t), uint8_t **out, size_t *len)
{
    size_t size = protobuf_c_message_get_packed_size(m);
    uint8_t *buf;
    size_t packed;

    if (size > max) {
        return RC_TOO_LARGE;
    }
    buf = (alloc != NULL ? alloc : malloc)(size > 0 ? size : 1);
    if (buf == NULL) {
        return RC_NOMEM;
    }
    packed = protobuf_c_message_pack(m, buf);
    ASSERT(packed == size);
    *out = buf;
    *len = size;
    return RC_OK;
}

/* --- Records and batches ------------------------------------------------- */

int meta_codec_encode_record(const struct meta_record *rec, uint8_t **out,
                             size_t *len)
{
    struct codec__view v;
    int rv;

    *out = NULL;
    *len = 0;
    rv = codec_check_record(rec);
    if (rv != RC_OK) {
        return rv;
    }
    codec_view_record(&v, rec);
    return codec_pack(&v.mr.base, META_RECORD_BYTES_MAX, NULL, out, len);
}

int meta_codec_decode_record(const uint8_t *p, size_t len,
                             struct meta_record *rec)
{
    struct codec__heap heap;
    Cairn__MetaRecord *m;
    bool ok;

    memset(rec, 0, sizeof *rec);
    if (len > META_RECORD_BYTES_MAX) {
        return RC_TOO_LARGE;
    }
    codec_heap_init(&heap);
    m = cairn__meta_record__unpack(&heap.pa, len, p);
    if (m == NULL) {
        return codec_unpack_failed(&heap);
    }
    ok = codec_get_record(m, rec);
    cairn__meta_record__free_unpacked(m, &heap.pa);
    if (!ok) {
        memset(rec, 0, sizeof *rec);
        return RC_MALFORMED;
    }
    return RC_OK;
}

int meta_codec_encode_batch(const struct meta_record *recs, size_t n,
                            void *(*alloc)(size_t), uint8_t **out,
                            size_t *len)
{
    Cairn__MetaBatch mb;
    struct codec__view *views;
    Cairn__MetaRecord **ptrs;
    int rv = RC_NOMEM;

    *out = NULL;
    *len = 0;
    if (n > META_BATCH_RECORDS_MAX) {
        return RC_TOO_LARGE;
    }
    for (size_t i = 0; i < n; i++) {
        rv = codec_check_record(&recs[i]);
        if (rv != RC_OK) {
            return rv;
        }
    }
    views = calloc(n > 0 ? n : 1, sizeof *views);
    ptrs = calloc(n > 0 ? n : 1, sizeof *ptrs);
    if (views != NULL && ptrs != NULL) {
        for (size_t i = 0; i < n; i++) {
            codec_view_record(&views[i], &recs[i]);
            ptrs[i] = &views[i].mr;
        }
        cairn__meta_batch__init(&mb);
        mb.n_records = n;
        mb.records = ptrs;
        rv = codec_pack(&mb.base, META_BATCH_BYTES_MAX, alloc, out, len);
    }
    free(ptrs);
    free(views);
    return rv;
}

int meta_codec_decode_batch(const uint8_t *p, size_t len,
                            struct meta_record **recs, size_t *n)
{
    struct codec__heap heap;
    Cairn__MetaBatch *mb;
    struct meta_record *arr = NULL;
    int rv = RC_OK;

    *recs = NULL;
    *n = 0;
    if (len > META_BATCH_BYTES_MAX) {
        return RC_TOO_LARGE;
    }
    codec_heap_init(&heap);
    mb = cairn__meta_batch__unpack(&heap.pa, len, p);
    if (mb == NULL) {
        return codec_unpack_failed(&heap);
    }
    if (!codec_known(&mb->base) || mb->n_records > META_BATCH_RECORDS_MAX) {
        rv = RC_MALFORMED;
    } else if (mb->n_records > 0) {
        arr = calloc(mb->n_records, sizeof *arr);
        rv = arr == NULL ? RC_NOMEM : RC_OK;
    }
    for (size_t i = 0; rv == RC_OK && i < mb->n_records; i++) {
        if (!codec_get_record(mb->records[i], &arr[i])) {
            rv = RC_MALFORMED;
        }
    }
    if (rv == RC_OK) {
        *recs = arr;
        *n = mb->n_records;
    } else {
        free(arr);
    }
    cairn__meta_batch__free_unpacked(mb, &heap.pa);
    return rv;
}

/* --- Encoding the image -------------------------------------------------- */

/* Every protobuf-c struct of one image's encoding, in flat arrays. */
struct codec__image_view {
    Cairn__BrokerState *brokers;
    Cairn__BrokerState **broker_ptrs;
    Cairn__Endpoint *endpoints;
    Cairn__TopicState *topics;
    Cairn__TopicState **topic_ptrs;
    Cairn__PartitionRecord *parts;
    Cairn__PartitionRecord **part_ptrs;
    Cairn__ConfigRecord *configs;
    Cairn__ConfigRecord **config_ptrs;
    Cairn__ConfigRecord *bconfigs; /* broker configs */
    Cairn__ConfigRecord **bconfig_ptrs;
    char (*bnames)[16];            /* their resource names */
};

static void codec_image_view_free(struct codec__image_view *iv)
{
    free(iv->brokers);
    free(iv->broker_ptrs);
    free(iv->endpoints);
    free(iv->topics);
    free(iv->topic_ptrs);
    free(iv->parts);
    free(iv->part_ptrs);
    free(iv->configs);
    free(iv->config_ptrs);
    free(iv->bconfigs);
    free(iv->bconfig_ptrs);
    free(iv->bnames);
}

/* calloc of at least one element, so that NULL only means no memory. */
static void *codec_calloc(size_t n, size_t size)
{
    return calloc(n > 0 ? n : 1, size);
}

static int codec_image_view_alloc(struct codec__image_view *iv,
                                  const struct meta_image *img)
{
    size_t n_parts = 0;
    size_t n_configs = 0;

    for (size_t i = 0; i < img->n_topics; i++) {
        ASSERT(img->topics[i].n_partitions >= 0);
        n_parts += (size_t)img->topics[i].n_partitions;
        n_configs += img->topics[i].n_configs;
    }
    memset(iv, 0, sizeof *iv);
    iv->brokers = codec_calloc(img->n_brokers, sizeof *iv->brokers);
    iv->broker_ptrs = codec_calloc(img->n_brokers, sizeof *iv->broker_ptrs);
    iv->endpoints = codec_calloc(img->n_brokers, sizeof *iv->endpoints);
    iv->topics = codec_calloc(img->n_topics, sizeof *iv->topics);
    iv->topic_ptrs = codec_calloc(img->n_topics, sizeof *iv->topic_ptrs);
    iv->parts = codec_calloc(n_parts, sizeof *iv->parts);
    iv->part_ptrs = codec_calloc(n_parts, sizeof *iv->part_ptrs);
    iv->configs = codec_calloc(n_configs, sizeof *iv->configs);
    iv->config_ptrs = codec_calloc(n_configs, sizeof *iv->config_ptrs);
    size_t n_bconfigs = 0;
    for (size_t i = 0; i < img->n_broker_configs; i++) {
        n_bconfigs += img->broker_configs[i].n_configs;
    }
    iv->bconfigs = codec_calloc(n_bconfigs, sizeof *iv->bconfigs);
    iv->bconfig_ptrs = codec_calloc(n_bconfigs, sizeof *iv->bconfig_ptrs);
    iv->bnames = codec_calloc(img->n_broker_configs, sizeof *iv->bnames);
    if (iv->bconfigs == NULL || iv->bconfig_ptrs == NULL ||
        iv->bnames == NULL) {
        codec_image_view_free(iv);
        return RC_NOMEM;
    }
    if (iv->brokers == NULL || iv->broker_ptrs == NULL ||
        iv->endpoints == NULL || iv->topics == NULL ||
        iv->topic_ptrs == NULL || iv->parts == NULL ||
        iv->part_ptrs == NULL || iv->configs == NULL ||
        iv->config_ptrs == NULL) {
        codec_image_view_free(iv);
        return RC_NOMEM;
    }
    return RC_OK;
}

static void codec_view_broker_state(Cairn__BrokerState *m, Cairn__Endpoint *e,
                                    const struct meta_broker *b)
{
    cairn__broker_state__init(m);
    cairn__endpoint__init(e);
    m->has_broker_id = true;
    m->broker_id = b->id;
    m->has_broker_epoch = true;
    m->broker_epoch = b->epoch;
    m->has_incarnation_id = true;
    m->incarnation_id = codec_uuid_view(&b->incarnation);
    e->host = (char *)b->host;
    e->has_port = true;
    e->port = b->port;
    m->endpoint = e;
    m->rack = (char *)b->rack;
    m->has_fenced = true;
    m->fenced = b->fenced;
    m->has_in_controlled_shutdown = true;
    m->in_controlled_shutdown = b->in_controlled_shutdown;
}

/* Views topic t in m, taking its partitions and configs from iv at *pi and
 * *ci. Nested partitions leave out the topic id, configs the resource. */
static void codec_view_topic_state(Cairn__TopicState *m,
                                   struct codec__image_view *iv, size_t *pi,
                                   size_t *ci, const struct meta_topic *t)
{
    cairn__topic_state__init(m);
    m->name = (char *)t->name;
    m->has_topic_id = true;
    m->topic_id = codec_uuid_view(&t->id);
    m->n_partitions = (size_t)t->n_partitions;
    m->partitions = &iv->part_ptrs[*pi];
    for (int32_t i = 0; i < t->n_partitions; i++) {
        const struct meta_partition *p = &t->partitions[i];
        Cairn__PartitionRecord *pm = &iv->parts[*pi];
        cairn__partition_record__init(pm);
        codec_view_partition_fields(pm, p->id, &p->replicas, &p->isr,
                                    p->leader, p->leader_epoch,
                                    p->partition_epoch, &p->adding,
                                    &p->removing);
        iv->part_ptrs[(*pi)++] = pm;
    }
    m->n_configs = t->n_configs;
    m->configs = &iv->config_ptrs[*ci];
    for (size_t i = 0; i < t->n_configs; i++) {
        Cairn__ConfigRecord *cm = &iv->configs[*ci];
        cairn__config_record__init(cm);
        cm->name = t->configs[i].name;
        cm->value = t->configs[i].value;
        iv->config_ptrs[(*ci)++] = cm;
    }
}

/* Every broker config set, as ConfigRecords of resource type 4. */
static void codec_view_broker_configs(Cairn__MetaImage *mi,
                                      struct codec__image_view *iv,
                                      const struct meta_image *img)
{
    size_t k = 0;
    for (size_t i = 0; i < img->n_broker_configs; i++) {
        const struct meta_broker_configs *s = &img->broker_configs[i];
        if (s->broker != META_BROKER_DEFAULT) {
            snprintf(iv->bnames[i], sizeof iv->bnames[i], "%d",
                     (int)s->broker);
        }
        for (size_t j = 0; j < s->n_configs; j++, k++) {
            Cairn__ConfigRecord *cm = &iv->bconfigs[k];
            cairn__config_record__init(cm);
            cm->has_resource_type = true;
            cm->resource_type = META_RESOURCE_BROKER;
            cm->resource_name = iv->bnames[i];
            cm->name = s->configs[j].name;
            cm->value = s->configs[j].value;
            iv->bconfig_ptrs[k] = cm;
        }
    }
    mi->n_broker_configs = k;
    mi->broker_configs = iv->bconfig_ptrs;
}

int meta_codec_encode_image(const struct meta_image *img,
                            void *(*alloc)(size_t), uint8_t **out,
                            size_t *len)
{
    struct codec__image_view iv;
    Cairn__MetaImage mi;
    size_t pi = 0;
    size_t ci = 0;
    int rv;

    *out = NULL;
    *len = 0;
    ASSERT(img->n_brokers <= META_BROKERS_MAX);
    ASSERT(img->n_topics <= META_TOPICS_MAX);
    rv = codec_image_view_alloc(&iv, img);
    if (rv != RC_OK) {
        return rv;
    }
    cairn__meta_image__init(&mi);
    mi.has_offset = true;
    mi.offset = img->offset;
    mi.has_next_producer_id = true;
    mi.next_producer_id = img->next_producer_id;
    for (size_t i = 0; i < img->n_brokers; i++) {
        codec_view_broker_state(&iv.brokers[i], &iv.endpoints[i],
                                &img->brokers[i]);
        iv.broker_ptrs[i] = &iv.brokers[i];
    }
    mi.n_brokers = img->n_brokers;
    mi.brokers = iv.broker_ptrs;
    for (size_t i = 0; i < img->n_topics; i++) {
        codec_view_topic_state(&iv.topics[i], &iv, &pi, &ci,
                               &img->topics[i]);
        iv.topic_ptrs[i] = &iv.topics[i];
    }
    mi.n_topics = img->n_topics;
    mi.topics = iv.topic_ptrs;
    codec_view_broker_configs(&mi, &iv, img);
    rv = codec_pack(&mi.base, META_IMAGE_BYTES_MAX, alloc, out, len);
    codec_image_view_free(&iv);
    return rv;
}

/* --- Decoding the image -------------------------------------------------- */

static bool codec_get_broker_state(const Cairn__BrokerState *m,
                                   struct meta_broker *b)
{
    if (!codec_known(&m->base) || !m->has_broker_id ||
        !m->has_broker_epoch || !m->has_fenced ||
        !m->has_in_controlled_shutdown) {
        return false;
    }
    b->id = m->broker_id;
    b->epoch = m->broker_epoch;
    b->fenced = m->fenced;
    b->in_controlled_shutdown = m->in_controlled_shutdown;
    return codec_get_uuid(m->has_incarnation_id, &m->incarnation_id,
                          &b->incarnation) &&
           codec_get_endpoint(m->endpoint, b->host, sizeof b->host,
                              &b->port) &&
           codec_get_str(m->rack, b->rack, sizeof b->rack);
}

static int codec_get_brokers(const Cairn__MetaImage *mi,
                             struct meta_image *img)
{
    if (mi->n_brokers > META_BROKERS_MAX) {
        return RC_MALFORMED;
    }
    if (mi->n_brokers == 0) {
        return RC_OK;
    }
    img->brokers = calloc(mi->n_brokers, sizeof *img->brokers);
    if (img->brokers == NULL) {
        return RC_NOMEM;
    }
    img->cap_brokers = mi->n_brokers;
    for (size_t i = 0; i < mi->n_brokers; i++) {
        struct meta_broker *b = &img->brokers[i];
        if (!codec_get_broker_state(mi->brokers[i], b) ||
            (i > 0 && b[-1].id >= b->id)) {
            return RC_MALFORMED; /* brokers must be sorted by id */
        }
        img->n_brokers = i + 1;
    }
    return RC_OK;
}

/* Partition index of a topic in the image: its id must be index. */
static bool codec_get_partition_state(const Cairn__PartitionRecord *m,
                                      size_t index, struct meta_partition *p)
{
    if (!codec_known(&m->base) || m->has_topic_id || !m->has_partition_id ||
        m->partition_id < 0 || (size_t)m->partition_id != index ||
        !m->has_leader || !m->has_leader_epoch || !m->has_partition_epoch) {
        return false;
    }
    p->id = m->partition_id;
    p->leader = m->leader;
    p->leader_epoch = m->leader_epoch;
    p->partition_epoch = m->partition_epoch;
    return codec_get_set(m->n_replicas, m->replicas, &p->replicas) &&
           codec_get_set(m->n_isr, m->isr, &p->isr) &&
           codec_get_set(m->n_adding_replicas, m->adding_replicas,
                         &p->adding) &&
           codec_get_set(m->n_removing_replicas, m->removing_replicas,
                         &p->removing);
}

/* A heap copy of unpacked string s (present, at most max bytes, no NUL);
 * NULL with *rv set on failure. */
static char *codec_dup_str(const char *s, size_t max, int *rv)
{
    char *d;

    if (s == NULL || !codec_str_valid(s, max)) {
        *rv = RC_MALFORMED;
        return NULL;
    }
    d = malloc(strlen(s) + 1);
    if (d == NULL) {
        *rv = RC_NOMEM;
        return NULL;
    }
    memcpy(d, s, strlen(s) + 1);
    return d;
}

/* Configs of a topic in the image: names unique and sorted, with values. */
static int codec_get_configs(const Cairn__TopicState *m, struct meta_topic *t)
{
    int rv = RC_OK;

    if (m->n_configs > META_TOPIC_CONFIGS_MAX) {
        return RC_MALFORMED;
    }
    if (m->n_configs == 0) {
        return RC_OK;
    }
    t->configs = calloc(m->n_configs, sizeof *t->configs);
    if (t->configs == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < m->n_configs; i++) {
        const Cairn__ConfigRecord *c = m->configs[i];
        struct meta_config_entry *e = &t->configs[i];
        if (!codec_known(&c->base) || c->has_resource_type ||
            c->resource_name != NULL) {
            return RC_MALFORMED;
        }
        t->n_configs = i + 1; /* from here on, free what e holds */
        e->name = codec_dup_str(c->name, META_CONFIG_NAME_BYTES_MAX, &rv);
        if (e->name == NULL) {
            return rv;
        }
        e->value = codec_dup_str(c->value, META_CONFIG_VALUE_BYTES_MAX, &rv);
        if (e->value == NULL) {
            return rv;
        }
        if (e->name[0] == '\0' || (i > 0 && strcmp(e[-1].name, e->name) >= 0)) {
            return RC_MALFORMED;
        }
    }
    return RC_OK;
}

static int codec_get_topic_state(const Cairn__TopicState *m,
                                 struct meta_topic *t)
{
    size_t n = m->n_partitions;

    if (!codec_known(&m->base) || m->name == NULL ||
        !codec_get_str(m->name, t->name, sizeof t->name) ||
        t->name[0] == '\0' ||
        !codec_get_uuid(m->has_topic_id, &m->topic_id, &t->id) ||
        n > META_PARTITIONS_MAX) {
        return RC_MALFORMED;
    }
    if (n > 0) {
        t->partitions = calloc(n, sizeof *t->partitions);
        if (t->partitions == NULL) {
            return RC_NOMEM;
        }
        t->n_partitions = (int32_t)n;
        t->cap_partitions = (int32_t)n;
    }
    for (size_t i = 0; i < n; i++) {
        if (!codec_get_partition_state(m->partitions[i], i,
                                       &t->partitions[i])) {
            return RC_MALFORMED;
        }
    }
    return codec_get_configs(m, t);
}

static int codec_cmp_topic_id(const void *a, const void *b)
{
    const struct meta_topic *const *x = a;
    const struct meta_topic *const *y = b;

    return memcmp((*x)->id.b, (*y)->id.b, sizeof (*x)->id.b);
}

static int codec_cmp_topic_name(const void *a, const void *b)
{
    const struct meta_topic *const *x = a;
    const struct meta_topic *const *y = b;

    return strcmp((*x)->name, (*y)->name);
}

/* Topic ids and names must be unique; sorting keeps this O(n log n). */
static int codec_check_topics_unique(const struct meta_image *img)
{
    const struct meta_topic **v;
    int rv = RC_OK;

    if (img->n_topics < 2) {
        return RC_OK;
    }
    v = malloc(img->n_topics * sizeof *v);
    if (v == NULL) {
        return RC_NOMEM;
    }
    for (size_t i = 0; i < img->n_topics; i++) {
        v[i] = &img->topics[i];
    }
    qsort(v, img->n_topics, sizeof *v, codec_cmp_topic_id);
    for (size_t i = 1; i < img->n_topics && rv == RC_OK; i++) {
        if (codec_cmp_topic_id(&v[i - 1], &v[i]) == 0) {
            rv = RC_MALFORMED;
        }
    }
    qsort(v, img->n_topics, sizeof *v, codec_cmp_topic_name);
    for (size_t i = 1; i < img->n_topics && rv == RC_OK; i++) {
        if (codec_cmp_topic_name(&v[i - 1], &v[i]) == 0) {
            rv = RC_MALFORMED;
        }
    }
    free(v);
    return rv;
}

/* Broker configs: applied as records to the image being built, which
 * checks each one and keeps them sorted; a repeated key is malformed. */
static int codec_get_broker_configs(const Cairn__MetaImage *mi,
                                    struct meta_image *img)
{
    if (mi->n_broker_configs >
        (size_t)META_BROKER_CONFIG_SETS_MAX * META_BROKER_CONFIGS_MAX) {
        return RC_MALFORMED;
    }
    int64_t offset = img->offset;
    int rv = RC_OK;
    for (size_t i = 0; rv == RC_OK && i < mi->n_broker_configs; i++) {
        const Cairn__ConfigRecord *c = mi->broker_configs[i];
        struct meta_record rec;
        memset(&rec, 0, sizeof rec);
        rec.type = META_REC_CONFIG;
        int32_t broker;
        if (!codec_known(&c->base) || !c->has_resource_type ||
            c->resource_type != META_RESOURCE_BROKER ||
            c->resource_name == NULL || c->value == NULL ||
            !codec_get_config(c, &rec.u.config) ||
            !meta_broker_resource(rec.u.config.resource_name, &broker) ||
            meta_broker_config(img, broker, rec.u.config.name) != NULL) {
            rv = RC_MALFORMED;
            break;
        }
        rv = meta_apply(img, &rec);
        if (rv == RC_INVALID) {
            rv = RC_MALFORMED;
        }
    }
    img->offset = offset; /* the records were not the log's */
    return rv;
}

static int codec_get_image(const Cairn__MetaImage *mi, struct meta_image *img)
{
    int rv;

    if (!codec_known(&mi->base) || !mi->has_offset || mi->offset < 0 ||
        !mi->has_next_producer_id || mi->next_producer_id < 0 ||
        mi->n_topics > META_TOPICS_MAX) {
        return RC_MALFORMED;
    }
    img->offset = mi->offset;
    img->next_producer_id = mi->next_producer_id;
    rv = codec_get_brokers(mi, img);
    if (rv != RC_OK) {
        return rv;
    }
    if (mi->n_topics > 0) {
        img->topics = calloc(mi->n_topics, sizeof *img->topics);
        if (img->topics == NULL) {
            return RC_NOMEM;
        }
        img->cap_topics = mi->n_topics;
    }
    for (size_t i = 0; i < mi->n_topics; i++) {
        img->n_topics = i + 1; /* zeroed by calloc: safe to free */
        rv = codec_get_topic_state(mi->topics[i], &img->topics[i]);
        if (rv != RC_OK) {
            return rv;
        }
    }
    rv = codec_get_broker_configs(mi, img);
    if (rv != RC_OK) {
        return rv;
    }
    meta_image_reindex(img);
    return codec_check_topics_unique(img);
}

int meta_codec_decode_image(const uint8_t *p, size_t len,
                            struct meta_image *img)
{
    struct codec__heap heap;
    Cairn__MetaImage *mi;
    int rv;

    ASSERT(img->n_brokers == 0 && img->brokers == NULL);
    ASSERT(img->n_topics == 0 && img->topics == NULL);
    if (len > META_IMAGE_BYTES_MAX) {
        return RC_TOO_LARGE;
    }
    codec_heap_init(&heap);
    mi = cairn__meta_image__unpack(&heap.pa, len, p);
    if (mi == NULL) {
        return codec_unpack_failed(&heap);
    }
    rv = codec_get_image(mi, img);
    cairn__meta_image__free_unpacked(mi, &heap.pa);
    if (rv != RC_OK) {
        meta_image_free(img); /* leaves it empty */
    }
    return rv;
}
