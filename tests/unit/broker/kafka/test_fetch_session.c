/* Unit tests for broker/kafka/fetch_session.c: KIP-227's epochs (full,
 * final, incremental, wrong epoch, unknown id), entries added, updated
 * and forgotten (with the pending list kept right across the moves),
 * Kafka's rule for what an incremental answer carries, and eviction:
 * stale sessions first, then the least valuable one a newcomer may
 * evict, followers' sessions protected while young. */
#include "broker/kafka/fetch_session.h"

#include <criterion/criterion.h>
#include <string.h>

#include "common/kafka/kafka_error.h"
#include "common/rc.h"

static struct meta_uuid key_of(const char *name)
{
    return fetch_session_key(false, NULL, name, strlen(name));
}

static struct fetch_session_entry *put(struct fetch_session_cache *c,
                                       struct fetch_session *s,
                                       const char *topic, int32_t partition,
                                       int64_t offset)
{
    struct meta_uuid key = key_of(topic);
    struct meta_uuid id = {{0}};
    struct fetch_session_params params = {.fetch_offset = offset,
                                          .log_start_offset = -1,
                                          .max_bytes = 1 << 20,
                                          .leader_epoch = -1};
    struct fetch_session_entry *e = NULL;
    cr_assert_eq(fetch_session_put(c, s, &key, &id, topic, strlen(topic),
                                   partition, &params, &e),
                 RC_OK);
    return e;
}

static struct fetch_session_entry *find(const struct fetch_session *s,
                                        const char *topic, int32_t p)
{
    struct meta_uuid key = key_of(topic);
    return fetch_session_find(s, &key, p);
}

Test(fetch_session, epochs_follow_kip_227)
{
    struct fetch_session_cache c;
    fetch_session_cache_init(&c, 10, 7);
    struct fetch_session *s = NULL;
    int16_t err = 0;
    cr_assert_eq(fetch_session_begin(&c, 0, -1, 0, &s, &err),
                 FETCH_SESSION_SESSIONLESS);
    cr_assert_eq(fetch_session_begin(&c, 0, 0, 0, &s, &err),
                 FETCH_SESSION_FULL);
    struct fetch_session *made = fetch_session_create(&c, false, -1, false,
                                                      1, 0);
    cr_assert_not_null(made);
    cr_assert_gt(made->id, 0, "ids are positive");
    cr_assert_eq(made->epoch, 1, "the next request carries epoch 1");
    put(&c, made, "t", 0, 5);
    int32_t id = made->id;

    cr_assert_eq(fetch_session_begin(&c, id, 1, 10, &s, &err),
                 FETCH_SESSION_INCREMENTAL);
    cr_assert_eq(s, made);
    cr_assert_eq(s->epoch, 2);
    cr_assert_eq(s->last_used_ms, 10);
    cr_assert_eq(fetch_session_begin(&c, id, 1, 11, &s, &err),
                 FETCH_SESSION_ERROR, "a repeated epoch");
    cr_assert_eq(err, KAFKA_ERROR_INVALID_FETCH_SESSION_EPOCH);
    cr_assert_eq(fetch_session_begin(&c, id + 1, 1, 11, &s, &err),
                 FETCH_SESSION_ERROR);
    cr_assert_eq(err, KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND);

    /* A full request naming the session closes it. */
    cr_assert_eq(fetch_session_begin(&c, id, 0, 12, &s, &err),
                 FETCH_SESSION_FULL);
    cr_assert_null(fetch_session_get(&c, id));
    cr_assert_eq(c.partitions, 0);
    cr_assert_eq(fetch_session_next_epoch(INT32_MAX), 1);
    cr_assert_eq(fetch_session_next_epoch(-1), -1);
    fetch_session_cache_free(&c);
}

Test(fetch_session, forget_keeps_the_index_and_pending_list_right)
{
    struct fetch_session_cache c;
    fetch_session_cache_init(&c, 10, 7);
    struct fetch_session *s = fetch_session_create(&c, true, 2, false, 3, 0);
    cr_assert_not_null(s);
    for (int32_t p = 0; p < 40; p++) {
        put(&c, s, p % 2 == 0 ? "even" : "odd", p, p * 10);
    }
    cr_assert_eq(s->n, 40);
    cr_assert_eq(s->n_topics, 2);
    cr_assert_eq(c.partitions, 40);
    /* Updating keeps the entry. */
    cr_assert_eq(put(&c, s, "odd", 3, 99)->fetch_offset, 99);
    cr_assert_eq(s->n, 40);

    uint32_t idx[] = {(uint32_t)(find(s, "odd", 39) - s->entries),
                      (uint32_t)(find(s, "even", 0) - s->entries),
                      (uint32_t)(find(s, "even", 10) - s->entries)};
    fetch_session_set_pending(s, idx, 3);
    cr_assert_eq(s->n_pending, 3);

    /* Forgetting moves the last entry into the hole: lookups and the
     * pending list follow it. */
    struct meta_uuid even = key_of("even");
    cr_assert(fetch_session_forget(&c, s, &even, 0));
    cr_assert_not(fetch_session_forget(&c, s, &even, 0), "once");
    cr_assert_null(find(s, "even", 0));
    cr_assert_eq(s->n, 39);
    cr_assert_eq(s->n_pending, 2);
    for (int32_t p = 1; p < 40; p++) {
        const struct fetch_session_entry *e =
            find(s, p % 2 == 0 ? "even" : "odd", p);
        cr_assert_not_null(e, "partition %d", p);
        cr_assert_eq(e->partition, p);
    }
    bool saw39 = false;
    bool saw10 = false;
    for (size_t k = 0; k < s->n_pending; k++) {
        const struct fetch_session_entry *e = &s->entries[s->pending[k]];
        cr_assert(e->pending);
        saw39 |= e->partition == 39;
        saw10 |= e->partition == 10;
    }
    cr_assert(saw39 && saw10, "the moved pending entry is still listed");
    cr_assert_eq(c.partitions, 39);
    fetch_session_cache_free(&c);
}

Test(fetch_session, an_answer_carries_only_news)
{
    struct fetch_session_entry e = {.sent_hw = -1, .sent_log_start = -1};
    cr_assert(fetch_session_must_answer(&e, 10, 0, 0, 0, true),
              "never answered: the high watermark is news");
    cr_assert_eq(e.sent_hw, 10);
    cr_assert_not(fetch_session_must_answer(&e, 10, 0, 0, 0, true));
    cr_assert(fetch_session_must_answer(&e, 10, 0, 100, 0, false),
              "records");
    cr_assert(fetch_session_must_answer(&e, 11, 0, 0, 0, false), "hw");
    cr_assert_eq(e.sent_hw, 10, "not committed");
    cr_assert(fetch_session_must_answer(&e, 10, 4, 0, 0, true),
              "log start");
    cr_assert(fetch_session_must_answer(
        &e, 10, 4, 0, KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER, true));
    cr_assert_eq(e.sent_hw, -1, "after an error the next answer says all");
    cr_assert(fetch_session_must_answer(&e, 10, 4, 0, 0, true));
    cr_assert_not(fetch_session_must_answer(&e, 10, 4, 0, 0, true));
}

Test(fetch_session, stale_sessions_go_first)
{
    struct fetch_session_cache c;
    fetch_session_cache_init(&c, 2, 7);
    struct fetch_session *a = fetch_session_create(&c, true, 1, false, 5, 0);
    struct fetch_session *b = fetch_session_create(&c, true, 2, false, 5,
                                                   1000);
    cr_assert_not_null(a);
    cr_assert_not_null(b);
    int32_t b_id = b->id;
    /* Both followers' and young: a consumer may not take a slot. */
    cr_assert_null(fetch_session_create(&c, false, -1, false, 100, 2000));
    /* Once a is unused for longer than the eviction time it goes. */
    int64_t later = FETCH_SESSION_EVICTION_MS + 1;
    fetch_session_touch(b, later);
    struct fetch_session *d = fetch_session_create(&c, false, -1, false, 1,
                                                   later);
    cr_assert_not_null(d);
    cr_assert_eq(c.evictions, 1);
    cr_assert_not_null(fetch_session_get(&c, b_id), "b was used");
    cr_assert_eq(c.n, 2);
    fetch_session_cache_free(&c);
}

Test(fetch_session, a_follower_evicts_a_consumer_and_size_decides)
{
    struct fetch_session_cache c;
    fetch_session_cache_init(&c, 2, 7);
    struct fetch_session *small = fetch_session_create(&c, false, -1, false,
                                                       1, 0);
    struct fetch_session *big = fetch_session_create(&c, false, -1, false,
                                                     1, 0);
    cr_assert_not_null(small);
    cr_assert_not_null(big);
    put(&c, small, "t", 0, 0);
    for (int32_t p = 0; p < 5; p++) {
        put(&c, big, "t", p, 0);
    }
    int32_t small_id = small->id;
    int32_t big_id = big->id;
    fetch_session_touch(small, 10);
    fetch_session_touch(big, 10);
    /* Young consumers' sessions: another consumer may not evict them,
     * a follower may, taking the smallest. */
    cr_assert_null(fetch_session_create(&c, false, -1, false, 50, 20));
    struct fetch_session *f = fetch_session_create(&c, true, 3, false, 2, 20);
    cr_assert_not_null(f);
    cr_assert_null(fetch_session_get(&c, small_id));
    cr_assert_not_null(fetch_session_get(&c, big_id));

    /* Once old (unused less than the eviction time, created longer ago),
     * a consumer's session may go to a consumer worth as much. */
    int64_t old = FETCH_SESSION_EVICTION_MS + 100;
    fetch_session_touch(big, old);
    fetch_session_touch(f, old);
    cr_assert_null(fetch_session_create(&c, false, -1, false, 4, old),
                   "worth less than the 5 partitions it would evict");
    cr_assert_not_null(fetch_session_create(&c, false, -1, false, 6, old));
    cr_assert_null(fetch_session_get(&c, big_id));
    cr_assert_eq(c.evictions, 2);
    fetch_session_cache_free(&c);
}

static int removed_calls;

static void on_remove(void *arg, struct fetch_session *s)
{
    (void)arg;
    (void)s;
    removed_calls++;
}

Test(fetch_session, no_slots_no_sessions_and_removal_is_told)
{
    struct fetch_session_cache c;
    fetch_session_cache_init(&c, 0, 7);
    cr_assert_null(fetch_session_create(&c, true, 1, false, 1, 0),
                   "max.incremental.fetch.session.cache.slots=0");
    fetch_session_cache_free(&c);
    fetch_session_cache_init(&c, 1, 7);
    c.on_remove = on_remove;
    removed_calls = 0;
    struct fetch_session *s = fetch_session_create(&c, false, -1, true, 1, 0);
    cr_assert_not_null(s);
    cr_assert(s->uses_ids);
    fetch_session_remove(&c, s);
    cr_assert_eq(removed_calls, 1);
    cr_assert_eq(c.n, 0);
    fetch_session_cache_free(&c);
}
