/* Bootstrap servers from the controllers' metadata (cli/client/bootstrap.h). */
#include "cli/client/bootstrap.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/client/cluster.h"
#include "common/rc.h"

/* Appends the unfenced brokers of img to out; returns how many. */
static size_t list_brokers(const struct meta_image *img, char *out,
                           size_t cap)
{
    size_t used = 0;
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < img->n_brokers && n < BOOTSTRAP_BROKERS_MAX; i++) {
        const struct meta_broker *b = &img->brokers[i];
        if (b->fenced || b->host[0] == '\0') {
            continue;
        }
        bool v6 = strchr(b->host, ':') != NULL;
        int w = snprintf(out + used, cap - used, "%s%s%s%s:%" PRId32,
                         n > 0 ? "," : "", v6 ? "[" : "", b->host,
                         v6 ? "]" : "", b->port);
        if (w < 0 || (size_t)w >= cap - used) {
            break; /* keep the brokers that fit */
        }
        used += (size_t)w;
        n++;
    }
    return n;
}

int bootstrap_from_controllers(const char *controllers, char *out, size_t cap,
                               char *err, size_t errcap)
{
    ASSERT(cap > 0);
    struct ctl_client cc;
    int rv = ctl_client_init(&cc, controllers, NULL, err, errcap);
    if (rv != RC_OK) {
        return rv;
    }
    struct cluster_view v;
    rv = cluster_describe(&cc, &v);
    if (rv == RC_NOT_FOUND) {
        snprintf(err, errcap,
                 "no controller sent cluster metadata (is "
                 "the cluster up? --bootstrap-servers names brokers)");
    } else if (rv != RC_OK) {
        snprintf(err, errcap, "asking the controllers for brokers: %s",
                 rc_str(rv));
    } else if (list_brokers(&v.image, out, cap) == 0) {
        snprintf(err, errcap, "the controllers list no running broker");
        rv = RC_NOT_FOUND;
    }
    cluster_view_free(&v);
    ctl_client_close(&cc);
    return rv;
}
