/* See sent_list.h. */
#include "broker/replication/sent_list.h"

#include <stdlib.h>
#include <string.h>

#include "common/rc.h"

void sent_list_free(struct sent_list *l)
{
    free(l->parts);
    free(l->order);
    *l = (struct sent_list){0};
}

void sent_list_clear(struct sent_list *l)
{
    l->n = 0;
    l->next = 0;
}

int sent_list_add(struct sent_list *l, const char *topic, int32_t id,
                  int32_t leader_epoch, int64_t fetch_offset)
{
    if (strlen(topic) > META_TOPIC_NAME_BYTES_MAX) {
        return RC_INVALID;
    }
    if (l->n == l->cap) { /* grows with the partitions followed */
        size_t cap = l->cap == 0 ? 16 : l->cap * 2;
        void *p = realloc(l->parts, cap * sizeof *l->parts);
        if (p == NULL) {
            return RC_NOMEM;
        }
        l->parts = p;
        p = realloc(l->order, cap * sizeof *l->order);
        if (p == NULL) {
            return RC_NOMEM; /* parts grew: the next call grows this */
        }
        l->order = p;
        l->cap = cap;
    }
    struct sent_part *s = &l->parts[l->n];
    strcpy(s->topic, topic);
    s->id = id;
    s->leader_epoch = leader_epoch;
    s->fetch_offset = fetch_offset;
    l->order[l->n] = l->n;
    l->n++;
    return RC_OK;
}

static uint64_t name_hash(const char *name)
{
    uint64_t h = 14695981039346656037u; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)name; *c != '\0';
         c++) {
        h = (h ^ *c) * 1099511628211u;
    }
    return h;
}

/* Topic index of name among g's names, appending it if new; table is
 * open addressing over mask + 1 slots (a topic index + 1, or 0). */
static size_t topic_slot(struct sent_groups *g, size_t *table, size_t mask,
                         const char *name)
{
    size_t at = (size_t)name_hash(name) & mask;
    while (table[at] != 0) {
        size_t i = table[at] - 1;
        if (strcmp(g->names[i], name) == 0) {
            return i;
        }
        at = (at + 1) & mask;
    }
    g->names[g->n_topics] = name;
    table[at] = ++g->n_topics;
    return g->n_topics - 1;
}

int sent_list_group(struct sent_list *l, struct arena *a,
                    struct sent_groups *g)
{
    size_t n = l->n;
    size_t *slot = NULL;
    size_t *table = NULL;
    size_t slots = 2;
    while (slots < 2 * n) {
        slots <<= 1;
    }
    memset(g, 0, sizeof *g);
    g->order = l->order;
    int rv = arena_alloc(a, n, sizeof *g->names, (void **)&g->names);
    if (rv == RC_OK) {
        rv = arena_alloc(a, n, sizeof *g->counts, (void **)&g->counts);
    }
    if (rv == RC_OK) {
        rv = arena_alloc(a, n, sizeof *g->start, (void **)&g->start);
    }
    if (rv == RC_OK) {
        rv = arena_alloc(a, slots, sizeof *table, (void **)&table);
    }
    if (rv == RC_OK) {
        rv = arena_alloc(a, n, sizeof *slot, (void **)&slot);
    }
    if (rv != RC_OK) {
        return rv;
    }
    memset(table, 0, slots * sizeof *table);
    for (size_t i = 0; i < n; i++) {
        size_t before = g->n_topics;
        slot[i] = topic_slot(g, table, slots - 1, l->parts[i].topic);
        if (g->n_topics > before) {
            g->counts[slot[i]] = 0;
        }
        g->counts[slot[i]]++;
    }
    size_t at = 0;
    for (size_t t = 0; t < g->n_topics; t++) {
        g->start[t] = at;
        at += (size_t)g->counts[t];
    }
    /* start[t] serves as topic t's cursor, then is set back. */
    for (size_t i = 0; i < n; i++) {
        l->order[g->start[slot[i]]++] = i;
    }
    for (size_t t = 0; t < g->n_topics; t++) {
        g->start[t] -= (size_t)g->counts[t];
    }
    l->next = 0;
    return RC_OK;
}

const struct sent_part *sent_list_find(struct sent_list *l,
                                       struct slice topic, int32_t id)
{
    for (size_t k = 0; k < l->n; k++) {
        size_t i = (l->next + k) % l->n;
        const struct sent_part *s = &l->parts[l->order[i]];
        l->probes++;
        if (s->id == id && topic.len == strlen(s->topic) &&
            memcmp(topic.ptr, s->topic, topic.len) == 0) {
            l->next = i + 1;
            return s;
        }
    }
    return NULL;
}
