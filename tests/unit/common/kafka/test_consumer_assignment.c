/* Consumer protocol assignments read for people
 * (common/kafka/consumer_assignment.h). */
#include "common/kafka/consumer_assignment.h"

#include <criterion/criterion.h>
#include <string.h>

#include "common/rc.h"
#include "common/writer.h"

/* A v1 assignment: orders 0,1 and payments 3, user data "ud". */
static void two_topics(struct writer *w)
{
    writer_i16(w, 1);
    writer_i32(w, 2);
    writer_string(w, "orders", 6);
    writer_i32(w, 2);
    writer_i32(w, 0);
    writer_i32(w, 1);
    writer_string(w, "payments", 8);
    writer_i32(w, 1);
    writer_i32(w, 3);
    writer_bytes(w, "ud", 2);
}

Test(consumer_assignment, topics_and_partitions_on_one_line)
{
    struct writer w;
    char out[128];
    writer_init(&w, 1024);
    two_topics(&w);
    cr_assert_eq(consumer_assignment_format(w.data, w.len, out, sizeof out),
                 RC_OK);
    cr_assert_str_eq(out, "orders 0,1; payments 3");
    writer_free(&w);
}

Test(consumer_assignment, nothing_assigned_is_empty)
{
    char out[16] = "x";
    cr_assert_eq(consumer_assignment_format(NULL, 0, out, sizeof out), RC_OK);
    cr_assert_str_eq(out, "");
}

Test(consumer_assignment, cut_to_fit_and_never_past_the_bytes)
{
    struct writer w;
    char small[10];
    writer_init(&w, 1024);
    two_topics(&w);
    cr_assert_eq(consumer_assignment_format(w.data, w.len, small,
                                            sizeof small), RC_OK);
    cr_assert_str_eq(small, "orders 0,");
    /* Every truncation of the bytes is refused, none read past the end. */
    for (size_t n = 1; n < w.len - 6; n++) { /* user data is not read */
        char out[64];
        int rc = consumer_assignment_format(w.data, n, out, sizeof out);
        cr_assert_neq(rc, RC_OK, "cut at %zu read as '%s'", n, out);
        cr_assert_str_eq(out, "?");
    }
    writer_free(&w);
}

Test(consumer_assignment, a_huge_count_is_refused)
{
    struct writer w;
    char out[64];
    writer_init(&w, 1024);
    writer_i16(&w, 0);
    writer_i32(&w, 0x7fffffff);
    cr_assert_neq(consumer_assignment_format(w.data, w.len, out, sizeof out),
                  RC_OK);
    writer_free(&w);
}
