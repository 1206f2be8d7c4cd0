/* Tests for broker/replication/sent_list.c: the partitions of an
 * OffsetForLeaderEpoch request grouped by topic, and each answered one
 * found in one probe when the answer keeps the request's order, however
 * the partitions were collected. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "broker/replication/sent_list.h"
#include "common/rc.h"

static struct sent_list list;
static struct arena arena;

static void setup(void)
{
    arena_init(&arena, 16u << 20);
}

static void teardown(void)
{
    sent_list_free(&list);
    arena_free(&arena);
}

TestSuite(sent_list, .init = setup, .fini = teardown);

/* The list grouped for a request (and its find order set). */
static struct sent_groups grouped(void)
{
    struct sent_groups g;
    cr_assert_eq(sent_list_group(&list, &arena, &g), RC_OK);
    return g;
}

static struct slice name(const char *s)
{
    return (struct slice){(const uint8_t *)s, strlen(s)};
}

/* n partitions over topics "t0".."t<topics-1>", collected round-robin
 * across the topics (as a broker's partitions lie after a restart), not
 * topic by topic. */
static void collect(int n, int topics)
{
    for (int i = 0; i < n; i++) {
        char topic[16];
        snprintf(topic, sizeof topic, "t%d", i % topics);
        cr_assert_eq(sent_list_add(&list, topic, i / topics, 7, i), RC_OK);
    }
}

Test(sent_list, groups_by_topic_in_the_order_added)
{
    collect(12, 3);
    struct sent_groups g = grouped();
    cr_assert_eq(g.n_topics, 3);
    for (size_t t = 0; t < 3; t++) {
        char want[16];
        snprintf(want, sizeof want, "t%zu", t);
        cr_assert_str_eq(g.names[t], want);
        cr_assert_eq(g.counts[t], 4);
        for (int k = 0; k < 4; k++) {
            const struct sent_part *s =
                &list.parts[g.order[g.start[t] + (size_t)k]];
            cr_assert_str_eq(s->topic, want);
            cr_assert_eq(s->id, k, "partitions of a topic keep their order");
        }
    }
}

/* The answer names the partitions in the request's order: one probe each.
 * Looked for in the order they were collected, the 66,000 of this test
 * took about n * n / 2. */
Test(sent_list, an_answer_in_request_order_costs_a_probe_per_partition)
{
    int n = 66000, topics = 10;
    collect(n, topics);
    struct sent_groups g = grouped();
    list.probes = 0;
    for (size_t t = 0; t < g.n_topics; t++) {
        for (int32_t k = 0; k < g.counts[t]; k++) {
            const struct sent_part *s = sent_list_find(&list,
                                                       name(g.names[t]), k);
            cr_assert_not_null(s);
            cr_assert_eq(s->id, k);
            cr_assert_str_eq(s->topic, g.names[t]);
        }
    }
    cr_assert_eq(list.probes, (uint64_t)n, "probes %llu for %d partitions",
                 (unsigned long long)list.probes, n);
}

/* 100,000 topics of a partition each: grouping is linear (hashed
 * names); every partition is found. */
Test(sent_list, a_hundred_thousand_topics_group_and_are_found)
{
    int n = 100000;
    collect(n, n);
    struct sent_groups g = grouped();
    cr_assert_eq(g.n_topics, (size_t)n);
    list.probes = 0;
    for (size_t t = 0; t < g.n_topics; t++) {
        cr_assert_not_null(sent_list_find(&list, name(g.names[t]), 0));
    }
    cr_assert_eq(list.probes, (uint64_t)n);
}

/* Out of order, unknown and repeated names are still answered right. */
Test(sent_list, any_order_and_unknown_names_are_handled)
{
    collect(30, 3);
    (void)grouped();
    const struct sent_part *s = sent_list_find(&list, name("t2"), 9);
    cr_assert_not_null(s);
    cr_assert_eq(s->fetch_offset, 29);
    s = sent_list_find(&list, name("t0"), 0);
    cr_assert_not_null(s);
    cr_assert_eq(s->fetch_offset, 0);
    cr_assert_null(sent_list_find(&list, name("t9"), 0));
    cr_assert_null(sent_list_find(&list, name("t0"), 10));
    cr_assert_null(sent_list_find(&list, name("t"), 0));
    sent_list_clear(&list);
    cr_assert_null(sent_list_find(&list, name("t0"), 0));
}

Test(sent_list, a_topic_name_too_long_is_refused)
{
    char topic[META_TOPIC_NAME_BYTES_MAX + 2];
    memset(topic, 'a', sizeof topic - 1);
    topic[sizeof topic - 1] = '\0';
    cr_assert_eq(sent_list_add(&list, topic, 0, 0, 0), RC_INVALID);
    cr_assert_eq(list.n, 0);
}
