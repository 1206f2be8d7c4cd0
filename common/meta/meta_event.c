/* See meta_event.h. */
#include "common/meta/meta_event.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct event_out {
    char *buf;
    size_t cap;
    size_t len;
};

__attribute__((format(printf, 2, 3))) static void
event_outf(struct event_out *o, const char *fmt, ...)
{
    if (o->len + 1 >= o->cap) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n > 0) {
        o->len += (size_t)n < o->cap - o->len ? (size_t)n
                                              : o->cap - o->len - 1;
    }
}

void meta_replica_set_format(const struct meta_replica_set *s, char *out,
                             size_t cap)
{
    struct event_out o = {out, cap, 0};
    if (cap == 0) {
        return;
    }
    out[0] = '\0';
    int32_t n = s->n < 0 ? 0 : s->n > META_REPLICAS_MAX ? META_REPLICAS_MAX
                                                         : s->n;
    if (n == 0) {
        event_outf(&o, "-");
    }
    for (int32_t i = 0; i < n; i++) {
        event_outf(&o, "%s%" PRId32, i > 0 ? "," : "", s->ids[i]);
    }
}

static void leader_text(int32_t leader, char out[16])
{
    if (leader == META_NO_LEADER) {
        snprintf(out, 16, "none");
    } else {
        snprintf(out, 16, "%" PRId32, leader);
    }
}

static bool partition_event(struct event_out *o, const struct meta_image *img,
                            const struct meta_rec_partition_change *c)
{
    const struct meta_topic *t = meta_image_topic_by_id(img, &c->topic_id);
    if (t == NULL || c->partition < 0 || c->partition >= t->n_partitions) {
        return false;
    }
    const struct meta_partition *p = &t->partitions[c->partition];
    bool leader = c->leader != META_LEADER_UNCHANGED;
    bool isr = c->isr_changed &&
               (c->isr.n != p->isr.n ||
                memcmp(c->isr.ids, p->isr.ids,
                       (size_t)(c->isr.n < 0 ? 0 : c->isr.n) *
                           sizeof c->isr.ids[0]) != 0);
    if (!leader && !isr) {
        return false;
    }
    event_outf(o, "%s-%" PRId32, t->name, c->partition);
    if (leader) {
        char from[16], to[16];
        leader_text(p->leader, from);
        leader_text(c->leader, to);
        event_outf(o, " leader %s -> %s epoch %" PRId32 " -> %" PRId32, from,
                   to, p->leader_epoch, p->leader_epoch + 1);
    }
    if (isr) {
        char from[META_REPLICAS_MAX * 12], to[META_REPLICAS_MAX * 12];
        meta_replica_set_format(&p->isr, from, sizeof from);
        meta_replica_set_format(&c->isr, to, sizeof to);
        event_outf(o, "%s isr %s -> %s", leader ? "," : "", from, to);
    }
    return true;
}

static bool broker_event(struct event_out *o, const struct meta_image *img,
                         const struct meta_rec_broker_change *c)
{
    const struct meta_broker *b = meta_image_broker(img, c->broker_id);
    bool fence = c->fenced > 0 && (b == NULL || !b->fenced);
    bool unfence = c->fenced < 0 && (b == NULL || b->fenced);
    bool shutdown = c->in_controlled_shutdown > 0 &&
                    (b == NULL || !b->in_controlled_shutdown);
    if (!fence && !unfence && !shutdown) {
        return false;
    }
    event_outf(o, "broker %" PRId32, c->broker_id);
    if (shutdown) {
        event_outf(o, " in controlled shutdown");
    }
    if (fence || unfence) {
        event_outf(o, "%s %s", shutdown ? "," : "",
                   fence ? "fenced" : "unfenced");
    }
    return true;
}

bool meta_record_event(const struct meta_image *img,
                       const struct meta_record *rec, char *out, size_t cap)
{
    struct event_out o = {out, cap, 0};
    if (cap == 0) {
        return false;
    }
    out[0] = '\0';
    bool event = false;
    switch (rec->type) {
    case META_REC_PARTITION_CHANGE:
        event = partition_event(&o, img, &rec->u.partition_change);
        break;
    case META_REC_BROKER_CHANGE:
        event = broker_event(&o, img, &rec->u.broker_change);
        break;
    case META_REC_REGISTER_BROKER:
        event_outf(&o, "broker %" PRId32 " registered at %.*s:%" PRId32
                   " (fenced until caught up)",
                   rec->u.register_broker.broker_id,
                   (int)sizeof rec->u.register_broker.host,
                   rec->u.register_broker.host, rec->u.register_broker.port);
        event = true;
        break;
    case META_REC_TOPIC:
        event_outf(&o, "topic %.*s created", (int)sizeof rec->u.topic.name,
                   rec->u.topic.name);
        event = true;
        break;
    case META_REC_REMOVE_TOPIC: {
        const struct meta_topic *t =
            meta_image_topic_by_id(img, &rec->u.remove_topic.topic_id);
        if (t != NULL) {
            event_outf(&o, "topic %s deleted", t->name);
            event = true;
        }
        break;
    }
    default:
        break;
    }
    if (!event) {
        out[0] = '\0';
    }
    return event;
}
