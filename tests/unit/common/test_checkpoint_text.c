/* The text checkpoints' parsers (common/checkpoint_text.h): entries in
 * order, and every malformed file refused as a whole. */
#include "common/checkpoint_text.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/rc.h"

struct seen {
    int n;
    int32_t epochs[8];
    int64_t starts[8];
};

static int see(void *arg, int32_t epoch, int64_t start_offset)
{
    struct seen *s = arg;
    cr_assert_lt(s->n, 8);
    s->epochs[s->n] = epoch;
    s->starts[s->n++] = start_offset;
    return RC_OK;
}

static int epochs(const char *text, struct seen *s)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    memset(s, 0, sizeof *s);
    return checkpoint_text_epochs(buf, 8, see, s);
}

Test(checkpoint_text, epochs_come_in_file_order)
{
    struct seen s;
    cr_assert_eq(epochs("0\n3\n0 0\n2 5\n7 5\n", &s), RC_OK);
    cr_assert_eq(s.n, 3);
    cr_expect_eq(s.epochs[1], 2);
    cr_expect_eq(s.starts[1], 5);
    cr_expect_eq(s.epochs[2], 7);
    cr_assert_eq(epochs("0\n0\n", &s), RC_OK);
    cr_expect_eq(s.n, 0);
}

Test(checkpoint_text, malformed_epoch_files_are_corrupt)
{
    struct seen s;
    const char *bad[] = {
        "",                     /* empty */
        "1\n0\n",               /* version */
        "0\n2\n0 0\n",          /* fewer entries than counted */
        "0\n1\n0 0\n1 1\n",     /* more */
        "0\n2\n3 0\n3 4\n",     /* epochs not increasing */
        "0\n2\n1 9\n2 4\n",     /* offsets going back */
        "0\n1\n-1 0\n",         /* negative epoch */
        "0\n1\n0 x\n",          /* not a number */
        "0\n9\n",               /* more than entries_max */
        "0\n1\n2147483648 0\n", /* epoch beyond int32 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(epochs(bad[i], &s), RC_CORRUPT, "%zu", i);
    }
}

static int offset(const char *text, const char *topic, int32_t part,
                  int64_t *off, bool *found)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    return checkpoint_text_offset(buf, topic, part, off, found);
}

Test(checkpoint_text, offsets_find_their_topic_partition)
{
    int64_t off = -1;
    bool found = false;
    const char *text = "0\n3\na 0 5\na 1 6\nb 0 7\n";
    cr_assert_eq(offset(text, "a", 1, &off, &found), RC_OK);
    cr_expect(found);
    cr_expect_eq(off, 6);
    cr_assert_eq(offset(text, "c", 0, &off, &found), RC_OK);
    cr_expect_not(found);
    cr_expect_eq(off, 0);
    cr_expect_eq(offset("0\n2\na 0 5\n", "a", 0, &off, &found), RC_CORRUPT);
    cr_expect_not(found);
    cr_expect_eq(offset("0\n1\na 0 -5\n", "a", 0, &off, &found), RC_CORRUPT);
    cr_expect_eq(offset("1\n0\n", "a", 0, &off, &found), RC_CORRUPT);
}
