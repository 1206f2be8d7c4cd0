/* See event_ring.h. */
#include "common/event_ring.h"

#include <inttypes.h>
#include <string.h>

#include "common/json.h"

void event_ring_init(struct event_ring *r)
{
    memset(r->recs, 0, sizeof r->recs);
    r->next_seq = 1;
    pthread_mutex_init(&r->lock, NULL);
}

void event_ring_destroy(struct event_ring *r)
{
    pthread_mutex_destroy(&r->lock);
}

static struct event_record *ring_slot(struct event_ring *r, uint64_t seq)
{
    return &r->recs[(seq - 1) % EVENT_RING_CAP];
}

struct event_push event_ring_push(struct event_ring *r, int64_t unix_ms,
                                  const char *text)
{
    struct event_push res = {0};
    pthread_mutex_lock(&r->lock);
    if (r->next_seq > 1) {
        struct event_record *last = ring_slot(r, r->next_seq - 1);
        if (unix_ms - last->unix_ms < EVENT_REPEAT_WINDOW_MS &&
            strncmp(last->text, text, EVENT_TEXT_BYTES - 1) == 0) {
            last->repeats++;
            last->last_ms = unix_ms;
            res.collapsed = true;
            pthread_mutex_unlock(&r->lock);
            return res;
        }
        res.ended_repeats = last->repeats;
    }
    struct event_record *rec = ring_slot(r, r->next_seq);
    rec->seq = r->next_seq++;
    rec->unix_ms = unix_ms;
    rec->last_ms = unix_ms;
    rec->repeats = 0;
    snprintf(rec->text, sizeof rec->text, "%s", text);
    pthread_mutex_unlock(&r->lock);
    return res;
}

/* The first seq to give a reader that saw up to since; call locked. */
static uint64_t ring_first(const struct event_ring *r, uint64_t since)
{
    uint64_t next = r->next_seq;
    uint64_t oldest = next > EVENT_RING_CAP ? next - EVENT_RING_CAP : 1;
    uint64_t from = since >= next ? next : since + 1;
    return from < oldest ? oldest : from;
}

size_t event_ring_text(struct event_ring *r, uint64_t since, FILE *out)
{
    pthread_mutex_lock(&r->lock);
    uint64_t next = r->next_seq;
    fprintf(out, "next %" PRIu64 "\n", next);
    size_t n = 0;
    for (uint64_t s = ring_first(r, since); s < next; s++, n++) {
        const struct event_record *rec = ring_slot(r, s);
        fprintf(out, "%" PRIu64 " %" PRId64 " %" PRId64 " %" PRIu32 " ",
                rec->seq, rec->unix_ms, rec->last_ms, rec->repeats);
        for (const char *c = rec->text; *c != '\0'; c++) {
            unsigned char u = (unsigned char)*c;
            fputc(u < 0x20 || u == 0x7f ? '?' : u, out);
        }
        fputc('\n', out);
    }
    pthread_mutex_unlock(&r->lock);
    return n;
}

size_t event_ring_json(struct event_ring *r, const char *source,
                       uint64_t since, FILE *out)
{
    struct json j;
    json_init(&j, out);
    json_object_begin(&j);
    json_key(&j, "source");
    json_string(&j, source);
    pthread_mutex_lock(&r->lock);
    uint64_t next = r->next_seq;
    json_key(&j, "next");
    json_int(&j, (int64_t)next);
    json_key(&j, "events");
    json_array_begin(&j);
    size_t n = 0;
    for (uint64_t s = ring_first(r, since); s < next; s++, n++) {
        const struct event_record *rec = ring_slot(r, s);
        json_object_begin(&j);
        json_key(&j, "seq");
        json_int(&j, (int64_t)rec->seq);
        json_key(&j, "time_ms");
        json_int(&j, rec->unix_ms);
        json_key(&j, "last_ms");
        json_int(&j, rec->last_ms);
        json_key(&j, "repeats");
        json_int(&j, rec->repeats);
        json_key(&j, "text");
        json_string(&j, rec->text);
        json_object_end(&j);
    }
    pthread_mutex_unlock(&r->lock);
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
    return n;
}
