/* See cli/cmd/size/size_topic.h. */
#include "cli/cmd/size/size_topic.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/util/cli.h"
#include "cli/client/cluster.h"
#include "cli/client/ctl_client.h"
#include "cli/client/health.h"
#include "common/rc.h"

/* The sum of t's partitions' HWs in img, asked now; false (said why) when
 * one is unknown. */
static bool hw_sum(const struct meta_image *img, const struct meta_topic *t,
                   int64_t *sum)
{
    struct health h;
    int rv = health_gather(&h, img);
    bool ok = rv == RC_OK;
    *sum = 0;
    for (int32_t i = 0; ok && i < t->n_partitions; i++) {
        const struct health_partition *hp = health_partition(&h, t, i);
        if (hp->hw < 0) {
            cli_error("size: %s-%d: its leader did not say its high "
                      "watermark",
                      t->name, (int)i);
            ok = false;
        } else {
            *sum += hp->hw;
        }
    }
    if (rv != RC_OK) {
        cli_error("size: %s", rc_str(rv));
    }
    health_free(&h);
    return ok;
}

static bool retention_of(const struct meta_topic *t, struct size_topic *out)
{
    const char *v = meta_topic_config(t, "retention.ms");
    out->retention_ms = SIZE_TOPIC_RETENTION_DEFAULT_MS;
    out->retention_set = v != NULL;
    if (v == NULL) {
        return true;
    }
    char *end = NULL;
    errno = 0;
    long long ms = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || ms < -1) {
        cli_error("size: %s: retention.ms=%s is not a number of ms", t->name,
                  v);
        return false;
    }
    out->retention_ms = ms;
    return true;
}

int size_topic_measure(const char *controllers, const char *topic,
                       int64_t sample_ms, struct size_topic *out)
{
    memset(out, 0, sizeof *out);
    struct ctl_client cc;
    char err[CTL_CLIENT_ERROR_BYTES];
    if (ctl_client_init(&cc, controllers, NULL, err, sizeof err) != RC_OK) {
        cli_error("size: %s", err);
        return 1;
    }
    struct cluster_view v;
    int rv = cluster_describe(&cc, &v);
    int code = 1;
    const struct meta_topic *t =
        rv == RC_OK ? meta_image_topic(&v.image, topic) : NULL;
    if (rv != RC_OK) {
        cli_error("size: no controller sent cluster metadata (is the "
                  "cluster up? deploy/cluster.sh up)");
    } else if (t == NULL) {
        cli_error("size: no topic named '%s'", topic);
    } else if (t->n_partitions > 0 && retention_of(t, out)) {
        out->replication_factor = t->partitions[0].replicas.n;
        out->brokers = (int32_t)v.image.n_brokers;
        int64_t before = 0, after = 0;
        int64_t t0 = cli_mono_ms();
        if (hw_sum(&v.image, t, &before)) {
            int64_t left = sample_ms - (cli_mono_ms() - t0);
            if (left > 0) {
                struct timespec ts = {left / 1000, (left % 1000) * 1000000};
                while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
                }
            }
            if (hw_sum(&v.image, t, &after)) {
                out->window_ms = cli_mono_ms() - t0;
                out->records = after - before;
                out->rate = out->window_ms > 0
                                ? (double)out->records * 1000.0 /
                                      (double)out->window_ms
                                : 0;
                code = 0;
            }
        }
    }
    cluster_view_free(&v);
    ctl_client_close(&cc);
    return code;
}
