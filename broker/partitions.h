/* The partitions this broker hosts, kept in step with the metadata image:
 * a partition log (broker/log.h) under <log.dir>/<topic>-<partition> for
 * every partition that names this broker as a replica, created when it
 * appears and deleted with its directory when it goes (topic deleted or
 * replica moved). Each leader or leader-epoch change is logged as
 * "became leader of t-p at epoch e" or "became follower ..."; a new
 * leader records its epoch in the log's leader-epoch cache. A directory
 * keeps a partition.metadata file with the topic id, so a topic deleted
 * and created again under the same name never reuses old data.
 * Opening a log is blocking file work (directories, fsyncs), so at most
 * PARTITIONS_OPENS_PER_TURN are opened per loop iteration; the rest follow
 * in later iterations, and heartbeats and timers run in between.
 * Loop thread only. */
#ifndef CAIRN_BROKER_PARTITIONS_H
#define CAIRN_BROKER_PARTITIONS_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "broker/log.h"
#include "broker/partition.h"
#include "common/meta.h"
#include "common/trace.h"

#define PARTITIONS_OPENS_PER_TURN 16

struct partitions {
    uv_loop_t *loop;
    uv_idle_t more;              /* continues a partial apply */
    const struct meta_image *img; /* the image being followed */
    struct tracer *tracer;
    int32_t broker_id;
    char log_dir[LOG_PATH_BYTES_MAX];
    struct log_config log_cfg;   /* broker defaults; topics may override */
    bool sync_before_ack;        /* log.sync.before.ack */
    void (*hw_moved)(void *arg, struct partition *p);
    void *hw_moved_arg;
    struct partition **parts;
    size_t n;
    size_t cap;
    size_t closing;              /* logs closing, not yet freed */
};

MUST_CHECK int partitions_init(struct partitions *ps, uv_loop_t *loop,
                               int32_t broker_id, const char *log_dir,
                               const struct log_config *log_cfg,
                               struct tracer *tracer);

/* Brings the hosted partitions in line with img. Errors on one partition
 * are logged and leave it out; the rest go on. */
void partitions_apply(struct partitions *ps, const struct meta_image *img);

/* Tells the listener (fetch long polls) that p's high watermark moved. */
void partitions_hw_moved(struct partitions *ps, struct partition *p);

/* Closes every log (cleanly) and the handle; the loop frees them. */
void partitions_close(struct partitions *ps);

struct partition *partitions_find(const struct partitions *ps,
                                  const char *topic, int32_t id);

#endif
