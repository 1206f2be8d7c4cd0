/* Tests for cli/cmd/status/view.c's partitions table: up to
 * VIEW_PARTITIONS_LISTED_MAX partitions every one is listed; past it only
 * those that need a look, after a line that counts the healthy ones left
 * out, unless every one is asked for. */
#include "cli/cmd/status/view.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/meta/meta.h"
#include "common/rc.h"

static struct meta_image img;

/* Topic "t" of n partitions on brokers 1,2,3, all in sync but the
 * partitions in short[] (ISR 1,2). */
static const struct meta_topic *topic(int32_t n, const int32_t *short_isr,
                                      size_t n_short)
{
    meta_image_init(&img);
    struct meta_record r = {.type = META_REC_TOPIC};
    snprintf(r.u.topic.name, sizeof r.u.topic.name, "t");
    r.u.topic.id.b[0] = 3;
    cr_assert_eq(meta_apply(&img, &r), RC_OK);
    for (int32_t p = 0; p < n; p++) {
        r = (struct meta_record){.type = META_REC_PARTITION};
        r.u.partition.topic_id.b[0] = 3;
        r.u.partition.partition = p;
        r.u.partition.replicas =
            (struct meta_replica_set){.n = 3, .ids = {1, 2, 3}};
        r.u.partition.isr = r.u.partition.replicas;
        for (size_t k = 0; k < n_short; k++) {
            if (short_isr[k] == p) {
                r.u.partition.isr.n = 2;
            }
        }
        r.u.partition.leader = 1;
        cr_assert_eq(meta_apply(&img, &r), RC_OK);
    }
    return meta_image_topic(&img, "t");
}

/* The text view_partitions_text() writes, and its number of lines. */
static char *render(const struct meta_topic *t, bool all, int *lines)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    const struct meta_topic *ts[] = {t};
    view_partitions_text(out, ts, 1, NULL, all);
    fclose(out);
    *lines = 0;
    for (const char *c = text; *c != '\0'; c++) {
        *lines += *c == '\n';
    }
    return text;
}

static void teardown(void)
{
    meta_image_free(&img);
}

TestSuite(status_view, .fini = teardown);

Test(status_view, a_few_partitions_are_all_listed)
{
    int lines = 0;
    char *text = render(topic(10, NULL, 0), false, &lines);
    cr_assert_eq(lines, 1 + 1 + 10, "%s", text); /* title, header, rows */
    cr_assert_null(strstr(text, "not listed"));
    free(text);
}

Test(status_view, past_the_bound_only_what_needs_a_look_is_listed)
{
    const int32_t short_isr[] = {7, 250};
    int lines = 0;
    char *text = render(topic(300, short_isr, 2), false, &lines);
    cr_assert(strstr(text, "300 partitions in 1 topics; 298 healthy, not "
                           "listed (--all lists them); 2 below") != NULL,
              "%s", text);
    cr_assert_eq(lines, 1 + 1 + 1 + 2, "%s", text);
    int32_t rows[2];
    int n = 0;
    for (char *line = strtok(text, "\n"); line != NULL;
         line = strtok(NULL, "\n")) {
        int32_t id;
        if (line[0] == 't' && line[1] == ' ' && n < 2 &&
            sscanf(line + 1, "%d", &id) == 1) {
            rows[n++] = id;
        }
    }
    cr_assert_eq(n, 2);
    cr_assert_eq(rows[0], 7);
    cr_assert_eq(rows[1], 250);
    free(text);
    text = render(topic(300, short_isr, 2), true, &lines);
    cr_assert_eq(lines, 1 + 1 + 300, "--all lists every one");
    free(text);
}
