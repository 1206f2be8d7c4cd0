/* Incremental fetch sessions (broker/kafka/fetch_session.h). */
#include "broker/kafka/fetch_session.h"

#include <stdlib.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"

void fetch_session_cache_init(struct fetch_session_cache *c, size_t slots,
                              uint64_t seed)
{
    *c = (struct fetch_session_cache){.slots = slots,
                                      .rng = seed != 0 ? seed : 1};
}

static void free_session(struct fetch_session *s)
{
    for (size_t i = 0; i < s->n_topics; i++) {
        free(s->topics[i].name);
    }
    free(s->topics);
    free(s->entries);
    free(s->pending);
    meta_index_free(&s->index);
    meta_index_free(&s->topic_index);
    free(s);
}

void fetch_session_cache_free(struct fetch_session_cache *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free_session(c->sessions[i]);
    }
    free(c->sessions);
    *c = (struct fetch_session_cache){0};
}

int32_t fetch_session_next_epoch(int32_t epoch)
{
    if (epoch < 0) {
        return FETCH_SESSION_EPOCH_FINAL;
    }
    return epoch == INT32_MAX ? 1 : epoch + 1;
}

struct fetch_session *fetch_session_get(const struct fetch_session_cache *c,
                                        int32_t id)
{
    for (size_t i = 0; i < c->n; i++) {
        if (c->sessions[i]->id == id) {
            return c->sessions[i];
        }
    }
    return NULL;
}

void fetch_session_remove(struct fetch_session_cache *c,
                          struct fetch_session *s)
{
    for (size_t i = 0; i < c->n; i++) {
        if (c->sessions[i] == s) {
            if (c->on_remove != NULL) {
                c->on_remove(c->arg, s);
            }
            c->sessions[i] = c->sessions[--c->n];
            c->partitions -= s->n;
            free_session(s);
            return;
        }
    }
}

void fetch_session_touch(struct fetch_session *s, int64_t now_ms)
{
    s->last_used_ms = now_ms;
    bool old = now_ms - s->created_ms > FETCH_SESSION_EVICTION_MS;
    s->evictable_all = old;
    s->evictable_privileged = !s->privileged || old;
}

enum fetch_session_mode fetch_session_begin(struct fetch_session_cache *c,
                                            int32_t id, int32_t epoch,
                                            int64_t now_ms,
                                            struct fetch_session **s,
                                            int16_t *error)
{
    *s = NULL;
    *error = KAFKA_ERROR_NONE;
    if (epoch == FETCH_SESSION_EPOCH_FINAL ||
        epoch == FETCH_SESSION_EPOCH_INITIAL) {
        struct fetch_session *named = id != FETCH_SESSION_ID_NONE
                                          ? fetch_session_get(c, id)
                                          : NULL;
        if (named != NULL) {
            fetch_session_remove(c, named);
        }
        return epoch == FETCH_SESSION_EPOCH_FINAL ? FETCH_SESSION_SESSIONLESS
                                                  : FETCH_SESSION_FULL;
    }
    struct fetch_session *found = fetch_session_get(c, id);
    if (found == NULL || epoch < 0) {
        *error = KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND;
        return FETCH_SESSION_ERROR;
    }
    if (found->epoch != epoch) {
        *error = KAFKA_ERROR_INVALID_FETCH_SESSION_EPOCH;
        return FETCH_SESSION_ERROR;
    }
    fetch_session_touch(found, now_ms);
    found->epoch = fetch_session_next_epoch(found->epoch);
    *s = found;
    return FETCH_SESSION_INCREMENTAL;
}

/* Kafka's EvictableKey order: (privileged, size, id). */
static int compare_value(bool pa, size_t na, int32_t ia, bool pb, size_t nb,
                         int32_t ib)
{
    if (pa != pb) {
        return pa ? 1 : -1;
    }
    if (na != nb) {
        return na < nb ? -1 : 1;
    }
    return ia < ib ? -1 : ia > ib ? 1 : 0;
}

/* Frees a slot for a new session worth (privileged, size), if one may
 * go: the least recently used if stale, else the least valuable of those
 * the newcomer may evict, when it is worth no more than the newcomer. */
static bool try_evict(struct fetch_session_cache *c, bool privileged,
                      size_t size, int64_t now_ms)
{
    struct fetch_session *oldest = NULL;
    struct fetch_session *least = NULL;
    for (size_t i = 0; i < c->n; i++) {
        struct fetch_session *s = c->sessions[i];
        if (oldest == NULL || s->last_used_ms < oldest->last_used_ms ||
            (s->last_used_ms == oldest->last_used_ms && s->id < oldest->id)) {
            oldest = s;
        }
        bool evictable = privileged ? s->evictable_privileged
                                    : s->evictable_all;
        if (evictable &&
            (least == NULL ||
             compare_value(s->privileged, s->n, s->id, least->privileged,
                           least->n, least->id) < 0)) {
            least = s;
        }
    }
    struct fetch_session *victim = NULL;
    if (oldest != NULL &&
        now_ms - oldest->last_used_ms > FETCH_SESSION_EVICTION_MS) {
        victim = oldest;
    } else if (least != NULL &&
               compare_value(privileged, size, 0, least->privileged,
                             least->n, least->id) >= 0) {
        victim = least;
    }
    if (victim == NULL) {
        return false;
    }
    fetch_session_remove(c, victim);
    c->evictions++;
    return true;
}

static int32_t new_id(struct fetch_session_cache *c)
{
    for (;;) {
        c->rng ^= c->rng << 13;
        c->rng ^= c->rng >> 7;
        c->rng ^= c->rng << 17;
        int32_t id = (int32_t)(c->rng & 0x7fffffffu);
        if (id != FETCH_SESSION_ID_NONE && fetch_session_get(c, id) == NULL) {
            return id;
        }
    }
}

struct fetch_session *fetch_session_create(struct fetch_session_cache *c,
                                           bool privileged,
                                           int32_t replica_id,
                                           bool uses_ids, size_t size,
                                           int64_t now_ms)
{
    if (c->slots == 0 ||
        (c->n >= c->slots && !try_evict(c, privileged, size, now_ms))) {
        return NULL;
    }
    if (c->n % 16 == 0) { /* room for 16 more */
        void *grown = realloc(c->sessions, (c->n + 16) * sizeof *c->sessions);
        if (grown == NULL) {
            return NULL;
        }
        c->sessions = grown;
    }
    struct fetch_session *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return NULL;
    }
    s->id = new_id(c);
    s->epoch = fetch_session_next_epoch(FETCH_SESSION_EPOCH_INITIAL);
    s->privileged = privileged;
    s->uses_ids = uses_ids;
    s->replica_id = replica_id;
    s->created_ms = now_ms;
    meta_index_init(&s->index);
    meta_index_init(&s->topic_index);
    fetch_session_touch(s, now_ms);
    c->sessions[c->n++] = s;
    return s;
}

struct meta_uuid fetch_session_key(bool uses_ids, const struct meta_uuid *id,
                                   const char *name, size_t name_len)
{
    return uses_ids ? *id : meta_index_name_key_n(name, name_len);
}

struct fetch_session_entry *fetch_session_find(const struct fetch_session *s,
                                               const struct meta_uuid *key,
                                               int32_t partition)
{
    uintptr_t at = (uintptr_t)meta_index_get(&s->index, key, partition);
    return at == 0 ? NULL : &s->entries[at - 1];
}

static void *slot_value(size_t i)
{
    return (void *)(uintptr_t)(i + 1);
}

/* The index of the topic filed under key, added if new; SIZE_MAX when
 * memory ran out or another name has the same key. */
static size_t topic_slot(struct fetch_session *s, const struct meta_uuid *key,
                         const struct meta_uuid *id, const char *name,
                         size_t name_len)
{
    uintptr_t at = (uintptr_t)meta_index_get(&s->topic_index, key,
                                             META_INDEX_TOPIC);
    if (at != 0) {
        const struct fetch_session_topic *t = &s->topics[at - 1];
        bool same = strlen(t->name) == name_len &&
                    memcmp(t->name, name, name_len) == 0;
        return same || s->uses_ids ? at - 1 : SIZE_MAX;
    }
    if (s->n_topics == s->cap_topics) {
        size_t cap = s->cap_topics == 0 ? 4 : s->cap_topics * 2;
        void *grown = realloc(s->topics, cap * sizeof *s->topics);
        if (grown == NULL) {
            return SIZE_MAX;
        }
        s->topics = grown;
        s->cap_topics = cap;
    }
    char *copy = malloc(name_len + 1);
    if (copy == NULL) {
        return SIZE_MAX;
    }
    memcpy(copy, name, name_len);
    copy[name_len] = '\0';
    size_t i = s->n_topics;
    if (meta_index_put(&s->topic_index, key, META_INDEX_TOPIC,
                       slot_value(i)) != RC_OK) {
        free(copy);
        return SIZE_MAX;
    }
    s->topics[i] = (struct fetch_session_topic){.key = *key, .id = *id,
                                                .name = copy};
    s->n_topics++;
    return i;
}

/* Room for one more entry, and for every entry in the pending list. */
static int reserve(struct fetch_session *s)
{
    if (s->n < s->cap) {
        return RC_OK;
    }
    size_t cap = s->cap == 0 ? 8 : s->cap * 2;
    void *grown = realloc(s->entries, cap * sizeof *s->entries);
    if (grown == NULL) {
        return RC_NOMEM;
    }
    s->entries = grown;
    grown = realloc(s->pending, cap * sizeof *s->pending);
    if (grown == NULL) {
        return RC_NOMEM; /* entries grew; cap stays: tried again */
    }
    s->pending = grown;
    s->cap = cap;
    s->cap_pending = cap;
    return RC_OK;
}

int fetch_session_put(struct fetch_session_cache *c, struct fetch_session *s,
                      const struct meta_uuid *key, const struct meta_uuid *id,
                      const char *name, size_t name_len, int32_t partition,
                      const struct fetch_session_params *params,
                      struct fetch_session_entry **out)
{
    struct fetch_session_entry *e = fetch_session_find(s, key, partition);
    if (e == NULL) {
        size_t t = SIZE_MAX;
        int rv = reserve(s);
        if (rv == RC_OK) {
            t = topic_slot(s, key, id, name, name_len);
        }
        if (t == SIZE_MAX) {
            return RC_NOMEM;
        }
        if (meta_index_put(&s->index, key, partition, slot_value(s->n)) !=
            RC_OK) {
            return RC_NOMEM; /* a topic without entries stays: harmless */
        }
        e = &s->entries[s->n++];
        *e = (struct fetch_session_entry){.key = *key,
                                          .partition = partition,
                                          .topic = (uint32_t)t,
                                          .sent_hw = -1,
                                          .sent_log_start = -1};
        s->topics[t].refs++;
        c->partitions++;
    }
    e->fetch_offset = params->fetch_offset;
    e->log_start_offset = params->log_start_offset;
    e->max_bytes = params->max_bytes;
    e->leader_epoch = params->leader_epoch;
    *out = e;
    return RC_OK;
}

static void drop_pending(struct fetch_session *s, uint32_t i)
{
    for (size_t k = 0; k < s->n_pending; k++) {
        if (s->pending[k] == i) {
            s->pending[k] = s->pending[--s->n_pending];
            return;
        }
    }
}

static void rename_pending(struct fetch_session *s, uint32_t from,
                           uint32_t to)
{
    for (size_t k = 0; k < s->n_pending; k++) {
        if (s->pending[k] == from) {
            s->pending[k] = to;
            return;
        }
    }
}

bool fetch_session_forget(struct fetch_session_cache *c,
                          struct fetch_session *s,
                          const struct meta_uuid *key, int32_t partition)
{
    struct fetch_session_entry *e = fetch_session_find(s, key, partition);
    if (e == NULL) {
        return false;
    }
    uint32_t i = (uint32_t)(e - s->entries);
    uint32_t last = (uint32_t)(s->n - 1);
    if (e->pending) {
        drop_pending(s, i);
    }
    s->topics[e->topic].refs--;
    (void)meta_index_remove(&s->index, key, partition);
    if (i != last) {
        struct fetch_session_entry *moved = &s->entries[last];
        *e = *moved;
        /* The key is there: replacing its value never grows. */
        int rv = meta_index_put(&s->index, &e->key, e->partition,
                                slot_value(i));
        ASSERT(rv == RC_OK);
        if (e->pending) {
            rename_pending(s, last, i);
        }
    }
    s->n--;
    c->partitions--;
    return true;
}

bool fetch_session_must_answer(struct fetch_session_entry *e, int64_t hw,
                               int64_t log_start, int64_t records,
                               int16_t error, bool commit)
{
    bool must = records > 0 || error != KAFKA_ERROR_NONE ||
                e->sent_hw != hw || e->sent_log_start != log_start;
    if (commit && must) {
        e->sent_hw = error != KAFKA_ERROR_NONE ? -1 : hw;
        e->sent_log_start = log_start;
    }
    return must;
}

void fetch_session_set_pending(struct fetch_session *s, const uint32_t *idx,
                               size_t n)
{
    for (size_t k = 0; k < s->n_pending; k++) {
        s->entries[s->pending[k]].pending = false;
    }
    s->n_pending = 0;
    for (size_t k = 0; k < n && s->n_pending < s->cap_pending; k++) {
        struct fetch_session_entry *e = &s->entries[idx[k]];
        if (!e->pending) {
            e->pending = true;
            s->pending[s->n_pending++] = idx[k];
        }
    }
}
