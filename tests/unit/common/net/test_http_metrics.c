/* Prometheus text helpers (common/net/http_metrics.h): histograms and
 * label values. */
#include "common/net/http_metrics.h"

#include <criterion/criterion.h>
#include <string.h>

static char *text(struct writer *w)
{
    writer_raw(w, "", 1); /* NUL-terminated for the string asserts */
    cr_assert_eq(w->rc, 0);
    return (char *)w->data;
}

Test(http_metrics, histogram_buckets_are_cumulative_with_sum_and_count)
{
    struct http_metrics_hist h = {0};
    http_metrics_observe(&h, 0.25);  /* <= 0.5 */
    http_metrics_observe(&h, 0.5);   /* <= 0.5: bounds are inclusive */
    http_metrics_observe(&h, 3);     /* <= 5 */
    http_metrics_observe(&h, 20000); /* above every bound */
    struct writer w;
    writer_init(&w, 1 << 20);
    http_metrics_histogram(&w, "t_ms", "request=\"Produce\"", &h);
    const char *s = text(&w);
    cr_assert_not_null(strstr(s, "t_ms_bucket{request=\"Produce\",le=\"0.5\"} 2\n"));
    cr_assert_not_null(strstr(s, "t_ms_bucket{request=\"Produce\",le=\"2.5\"} 2\n"));
    cr_assert_not_null(strstr(s, "t_ms_bucket{request=\"Produce\",le=\"5\"} 3\n"));
    cr_assert_not_null(strstr(s, "t_ms_bucket{request=\"Produce\",le=\"10000\"} 3\n"));
    cr_assert_not_null(strstr(s, "t_ms_bucket{request=\"Produce\",le=\"+Inf\"} 4\n"));
    cr_assert_not_null(strstr(s, "t_ms_sum{request=\"Produce\"} 20003.75\n"));
    cr_assert_not_null(strstr(s, "t_ms_count{request=\"Produce\"} 4\n"));
    writer_free(&w);
}

Test(http_metrics, unlabelled_histogram)
{
    struct http_metrics_hist h = {0};
    http_metrics_observe(&h, 1);
    struct writer w;
    writer_init(&w, 1 << 20);
    http_metrics_histogram(&w, "s_ms", NULL, &h);
    const char *s = text(&w);
    cr_assert_not_null(strstr(s, "s_ms_bucket{le=\"1\"} 1\n"));
    cr_assert_not_null(strstr(s, "s_ms_count 1\n"));
    writer_free(&w);
}

Test(http_metrics, label_values_are_escaped_and_cut)
{
    char out[32];
    const char in[] = "a\"b\\c\nd\x01\xc3\xa9";
    http_metrics_label_value(in, sizeof in - 1, out, sizeof out);
    cr_assert_str_eq(out, "a\\\"b\\\\c\\nd???");
    char small[4];
    http_metrics_label_value("\"\"\"", 3, small, sizeof small);
    cr_assert_str_eq(small, "\\\""); /* never half an escape */
}
