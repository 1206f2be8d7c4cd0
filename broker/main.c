/* cairn-broker: registers with the controllers, follows the metadata and
 * hosts its partitions' logs.
 *     cairn-broker CONFIG [--override key=value ...]
 * SIGTERM (or SIGINT) is a controlled shutdown: the controller moves
 * leadership away before the broker exits. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include "broker/broker.h"
#include "broker/kafka/kafka_forward.h"
#include "common/config.h"
#include "common/daemon.h"
#include "common/kafka/kafka_error.h"
#include "common/rc.h"
#include "common/topic_config.h"

static const struct config_def broker_defs[] = {
    {"node.id", CONFIG_INT, NULL, 0, 2147483647, "this broker's id"},
    {"process.roles", CONFIG_LIST, "broker", 0, 0, "must be broker"},
    {"listeners", CONFIG_LIST, NULL, 0, 0, "Kafka listener NAME://host:port"},
    {"metrics.port", CONFIG_INT, "0", 0, 65535,
     "Prometheus text at http://<listener host>:<port>/metrics; 0: off"},
    {"log.dirs", CONFIG_LIST, NULL, 0, 0, "where partition logs live"},
    {"broker.rack", CONFIG_STRING, "", 0, 0, "rack id"},
    {"log.segment.bytes", CONFIG_LONG, "1073741824", LOG_SEGMENT_BYTES_MIN,
     LOG_SEGMENT_BYTES_MAX, "segment size before a roll"},
    {"log.roll.ms", CONFIG_LONG, "604800000", 1, INT64_MAX,
     "segment age before a roll"},
    {"log.index.interval.bytes", CONFIG_LONG, "4096", 0, 2147483647,
     "bytes between offset index entries"},
    {"log.index.size.max.bytes", CONFIG_LONG, "10485760", 8, 2147483647,
     "offset index size before a roll"},
    {"log.retention.hours", CONFIG_LONG, "168", -1, 2562047788015,
     "how long records are kept unless a topic's retention.ms says; -1: "
     "forever"},
    {"log.retention.ms", CONFIG_LONG, "-2", -2, INT64_MAX,
     "overrides log.retention.hours when set; -1: forever; -2 (the "
     "default): not set"},
    {"log.retention.bytes", CONFIG_LONG, "-1", -1, INT64_MAX,
     "bytes a partition keeps unless a topic's retention.bytes says; -1: "
     "no limit"},
    {"log.retention.check.interval.ms", CONFIG_LONG, "300000", 1, INT64_MAX,
     "how often old segments are looked for"},
    {"log.cleaner.enable", CONFIG_BOOL, "true", 0, 0,
     "compact topics whose cleanup.policy has compact"},
    {"log.cleaner.backoff.ms", CONFIG_LONG, "15000", 1, INT64_MAX,
     "how often a compacted log is looked at for a pass"},
    {"log.cleaner.dedupe.buffer.size", CONFIG_LONG, "134217728", 65536,
     17179869184, "memory for a pass's map of keys"},
    {"log.cleaner.min.cleanable.ratio", CONFIG_STRING, "0.5", 0, 0,
     "dirty share of a log that starts a pass unless a topic's "
     "min.cleanable.dirty.ratio says"},
    {"log.cleaner.delete.retention.ms", CONFIG_LONG, "86400000", 0,
     INT64_MAX, "how long a tombstone is kept unless a topic's "
     "delete.retention.ms says"},
    {"log.cleaner.min.compaction.lag.ms", CONFIG_LONG, "0", 0, INT64_MAX,
     "records younger than this are not compacted"},
    {"log.cleaner.max.compaction.lag.ms", CONFIG_LONG, "9223372036854775807",
     1, INT64_MAX, "a dirty record older than this starts a pass"},
    {"auto.create.topics.enable", CONFIG_BOOL, "true", 0, 0,
     "create a topic a client asks Metadata for"},
    {"log.sync.before.ack", CONFIG_BOOL, "true", 0, 0,
     "count a write only once fdatasync'd (group commit)"},
    {"unsafe.fsync.failure.ignore", CONFIG_BOOL, "false", 0, 0,
     "never set it: the fault harness's negative control; a replica "
     "whose fsync failed goes on fetching and its log dir stays online"},
    {"message.max.bytes", CONFIG_INT, "1048588", 1, BATCH_BYTES_MAX,
     "largest record batch a topic takes unless max.message.bytes says"},
    {"log.message.timestamp.before.max.ms", CONFIG_LONG,
     "9223372036854775807", 0, INT64_MAX,
     "a CreateTime record this far behind the broker's clock is refused "
     "(INVALID_TIMESTAMP) unless its topic sets "
     "message.timestamp.before.max.ms"},
    {"log.message.timestamp.after.max.ms", CONFIG_LONG, "3600000", 0,
     INT64_MAX,
     "a CreateTime record this far ahead of the broker's clock is refused "
     "(INVALID_TIMESTAMP) unless its topic sets "
     "message.timestamp.after.max.ms"},
    /* For benchmarks only: the cost of Kafka's LogValidator is measured
     * against a run without it (tests/bench/bench_validation.c). */
    {"produce.record.validation.enable", CONFIG_BOOL, "true", 0, 0,
     "benchmarks only: false stores produced batches after the header and "
     "CRC checks alone, without walking their records"},
    /* For benchmarks only: the cost of the check is measured against a
     * run without it (tests/bench/bench_fetch_crc.c). */
    {"log.fetch.verify.crc", CONFIG_BOOL, "true", 0, 0,
     "check every batch a Fetch answer carries by its CRC-32C before it "
     "is sent; false (benchmarks only) sends segment bytes unchecked"},
    {"log.scrub.bytes.per.second", CONFIG_LONG, "8388608", 0, INT64_MAX,
     "bytes/s of the hosted logs read back and checked by CRC-32C in the "
     "background, so that a follower finds and repairs a damaged batch "
     "from its leader; 0 turns the scrub off"},
    {"min.insync.replicas", CONFIG_INT, "1", 1, META_REPLICAS_MAX,
     "replicas that must hold an acks=all write"},
    {"replica.lag.time.max.ms", CONFIG_LONG, "30000", 1, 3600000,
     "a follower not caught up for this long leaves the ISR"},
    /* KIP-73's names, Kafka's default (no limit); also dynamic. */
    {"leader.replication.throttled.rate", CONFIG_LONG,
     "9223372036854775807", 0, INT64_MAX,
     "bytes/s a leader sends to the replicas of partitions being "
     "reassigned that are not in their ISR, all of them together"},
    {"follower.replication.throttled.rate", CONFIG_LONG,
     "9223372036854775807", 0, INT64_MAX,
     "bytes/s a broker fetches for partitions being moved onto it, "
     "all of them together"},
    {"replica.fetch.wait.max.ms", CONFIG_INT, "500", 0, 60000,
     "a follower's long-poll wait"},
    {"max.incremental.fetch.session.cache.slots", CONFIG_INT, "1000", 0,
     1000000, "incremental fetch sessions (KIP-227) kept at once"},
    /* Not Kafka's (which keeps every segment open): 0 takes
     * BROKER_FDS_DEFAULT_MAX, or half of the descriptor limit if that is
     * less, its soft value raised to the hard one at start; a value set
     * leaves the limit as it is. */
    {"log.fds.max", CONFIG_LONG, "0", 0, 100000000,
     "segment files open at once; past it idle logs close theirs "
     "(0: 2048, or half the process's descriptor limit if less)"},
    {"replica.fetch.max.bytes", CONFIG_INT, "1048576", 1024, 104857600,
     "bytes a follower asks for per partition"},
    /* Kafka's default is 10 MiB. A Cairn follower fdatasyncs every round
     * before the next, so a round must carry what a busy leader appended
     * during the last one: follower fetches grow towards this while the
     * leader has a backlog (broker/replication/follower.h). */
    {"replica.fetch.response.max.bytes", CONFIG_INT, "67108864", 1024,
     104857600, "bytes a follower asks for per fetch, at most"},
    {"replica.fetch.backoff.ms", CONFIG_LONG, "200", 1, 60000,
     "a follower's pause after a fetch error"},
    {"reconnect.backoff.max.ms", CONFIG_LONG, "1000", 1, 3600000,
     "a follower's pause after connections lost in a row grows to this"},
    {"replica.socket.timeout.ms", CONFIG_LONG, "30000", 1, 3600000,
     "a follower's wait for an answer beyond replica.fetch.wait.max.ms"},
    {"socket.connection.setup.timeout.ms", CONFIG_LONG, "10000", 1,
     3600000, "a follower's wait for a connection to its leader"},
    /* Kafka's default is unbounded; each connection costs an fd and a
     * read buffer here. At the bound the connection quiet the longest
     * makes room (KIP-402's least-recently-used closing). */
    {"max.connections", CONFIG_INT, "4096", 1, 65536,
     "Kafka connections open at once"},
    {"max.connections.per.ip", CONFIG_LONG, "2147483647", 1, 2147483647,
     "Kafka connections from one address"},
    {"connections.max.idle.ms", CONFIG_LONG, "600000", 0, INT64_MAX,
     "a connection with nothing in flight this long is closed (0: never)"},
    /* Kafka's default is unbounded (-1). */
    {"queued.max.request.bytes", CONFIG_LONG, "536870912", 1048576,
     INT64_MAX, "requests read and answers unsent, all connections"},
    {"offsets.topic.num.partitions", CONFIG_INT, "50", 1, 1000,
     "partitions of __consumer_offsets"},
    {"offsets.topic.replication.factor", CONFIG_INT, "3", 1,
     META_REPLICAS_MAX, "replication factor of __consumer_offsets"},
    {"offsets.topic.segment.bytes", CONFIG_INT, "104857600",
     LOG_SEGMENT_BYTES_MIN, INT32_MAX,
     "segment size of __consumer_offsets (small segments compact sooner)"},
    {"offsets.commit.timeout.ms", CONFIG_LONG, "5000", 1, 3600000,
     "an offset commit waits this long for its replicas"},
    {"offsets.retention.minutes", CONFIG_LONG, "10080", 1, 153722867280912,
     "an empty group's committed offsets are kept this long"},
    {"offsets.retention.check.interval.ms", CONFIG_LONG, "600000", 1,
     INT64_MAX, "how often committed offsets are looked at to expire"},
    {"group.initial.rebalance.delay.ms", CONFIG_INT, "3000", 0, 3600000,
     "a new group's first rebalance waits this long for more members"},
    {"group.min.session.timeout.ms", CONFIG_INT, "6000", 1, 86400000,
     "shortest session timeout a member may ask for"},
    {"group.max.session.timeout.ms", CONFIG_INT, "1800000", 1, 86400000,
     "longest session timeout a member may ask for"},
    DAEMON_CONFIG_SHARED_DEFS,
};

#define PROG "cairn-broker"

static int build(const struct config *cfg, struct membership_config *mc,
                 struct log_config *lc)
{
    memset(mc, 0, sizeof *mc);
    mc->broker_id = config_int(cfg, "node.id");
    if (daemon_config_listener(cfg, PROG, "listeners", &mc->endpoint) !=
            RC_OK ||
        daemon_config_voters(cfg, PROG, "controller.quorum.voters",
                             mc->controllers, CONTROLLER_VOTERS_MAX,
                             &mc->n_controllers) != RC_OK) {
        return RC_CONFIG;
    }
    const char *rack = config_string(cfg, "broker.rack");
    if (strlen(rack) > META_RACK_BYTES_MAX) {
        fprintf(stderr, PROG ": broker.rack: longer than %u bytes\n",
                META_RACK_BYTES_MAX);
        return RC_CONFIG;
    }
    strcpy(mc->rack, rack);
    mc->heartbeat_interval_ms = config_long(cfg,
                                            "broker.heartbeat.interval.ms");
    mc->session_timeout_ms = config_long(cfg, "broker.session.timeout.ms");
    log_config_default(lc);
    lc->segment_bytes = config_long(cfg, "log.segment.bytes");
    lc->segment_ms = config_long(cfg, "log.roll.ms");
    lc->index_interval_bytes = config_long(cfg, "log.index.interval.bytes");
    lc->segment_index_bytes = config_long(cfg, "log.index.size.max.bytes");
    return RC_OK;
}

/* log.retention.ms, else log.retention.hours (-1: forever). */
static int64_t broker_retention_ms(const struct config *cfg)
{
    int64_t ms = config_long(cfg, "log.retention.ms");
    if (ms == -2) {
        int64_t hours = config_long(cfg, "log.retention.hours");
        ms = hours < 0 ? -1 : hours * 3600 * 1000;
    }
    return ms;
}

/* The text of schema entry d's value in cfg; buf holds a number's. */
static const char *broker_value_text(const struct config *cfg,
                                     const struct config_def *d, char *buf,
                                     size_t len)
{
    switch (d->type) {
    case CONFIG_INT:
        snprintf(buf, len, "%" PRId32, config_int(cfg, d->name));
        return buf;
    case CONFIG_LONG:
        snprintf(buf, len, "%" PRId64, config_long(cfg, d->name));
        return buf;
    case CONFIG_BOOL:
        return config_bool(cfg, d->name) ? "true" : "false";
    case CONFIG_DOUBLE:
        snprintf(buf, len, "%.17g", config_double(cfg, d->name));
        return buf;
    case CONFIG_STRING:
        return config_string(cfg, d->name);
    case CONFIG_LIST:
        return config_list(cfg, d->name);
    }
    return "";
}

/* The broker's defaults of the topic configs: Kafka's, then the file's
 * value (or the schema's default) of every topic config synonym the
 * schema has, checked by the topic config registry as the controller
 * checks a dynamic broker config; log.retention.ms falls back to
 * log.retention.hours. false (said why) for a value the registry
 * refuses, as the controller would. */
static bool broker_topic_defaults(const struct config *cfg,
                                  struct topic_config_values *out)
{
    topic_config_values_default(out);
    for (size_t i = 0; i < ARRAY_LEN(broker_defs); i++) {
        const struct config_def *cd = &broker_defs[i];
        const struct topic_config_def *d = topic_config_by_synonym(cd->name);
        if (d == NULL) {
            continue;
        }
        char buf[32];
        const char *v = broker_value_text(cfg, cd, buf, sizeof buf);
        char msg[TOPIC_CONFIG_MESSAGE_BYTES];
        if (topic_config_set(out, d, true /* synonym */, v, msg) !=
            KAFKA_ERROR_NONE) {
            fprintf(stderr, PROG ": %s\n", msg);
            return false;
        }
    }
    out->retention_ms = broker_retention_ms(cfg);
    return true;
}

/* log.cleaner.*: the cleaner's settings, with the topics' defaults of
 * its per-topic ones. */
static struct log_clean_config
broker_cleaner(const struct config *cfg, const struct topic_config_values *v)
{
    return (struct log_clean_config){
        .min_dirty_ratio = v->min_cleanable_dirty_ratio,
        .delete_retention_ms = v->delete_retention_ms,
        .min_lag_ms = v->min_compaction_lag_ms,
        .max_lag_ms = v->max_compaction_lag_ms,
        .map_bytes =
            (size_t)config_long(cfg, "log.cleaner.dedupe.buffer.size")};
}

/* A throttle's rate: this broker's dynamic config, else the cluster-wide
 * one, else the static one. */
static void apply_throttle(struct broker *b, const struct meta_image *img,
                           const char *name, struct throttle *t,
                           int64_t static_rate)
{
    const char *v = meta_broker_config(img, b->partitions.broker_id, name);
    if (v == NULL) {
        v = meta_broker_config(img, META_BROKER_DEFAULT, name);
    }
    long long x = v != NULL ? atoll(v) : -1;
    int64_t rate = x >= 0 ? (int64_t)x : static_rate;
    if (rate != t->rate) {
        TRACE_INFO(&b->tracer, "broker=%d %s=%" PRId64,
                   b->partitions.broker_id, name, rate);
        throttle_set_rate(t, rate, uv_now(b->loop));
    }
}

static void image_cb(void *arg, const struct meta_image *img)
{
    struct broker *b = arg;
    apply_throttle(b, img, "leader.replication.throttled.rate",
                   &b->leader_throttle, b->leader_throttle_static);
    apply_throttle(b, img, "follower.replication.throttled.rate",
                   &b->follower_throttle, b->follower_throttle_static);
    /* Fenced until registered and caught up, as a Kafka broker: the
     * logs open and recover meanwhile, but the partitions take the roles
     * of the image only from here, and clients are served from here. */
    bool ready = b->kafka != NULL && !kafka_server_serving(b->kafka) &&
                 membership_caught_up(b->membership);
    if (ready) {
        /* Stopping already (a signal, a failed log dir): no roles now. */
        TRACE_INFO(&b->tracer, "broker=%d metadata caught up at offset "
                   "%lld: %sserving clients", b->partitions.broker_id,
                   (long long)img->offset,
                   b->stopping ? "" : "taking partition roles, ");
        if (!b->stopping) {
            replica_manager_unfence(&b->partitions);
        }
    }
    if (!b->stopping) {
        replica_manager_apply(&b->partitions, img);
    }
    if (ready) {
        kafka_server_serve(b->kafka);
    }
    /* Last: answers held for a change go out once everything above
     * reflects it. */
    kafka_forward_image_moved(b, img->offset);
}

/* Kafka halts a broker whose every log dir has failed (its only one,
 * here). First, so that no acknowledged write depends on a disk that no
 * longer takes writes: replication stops (no fetch may report offsets
 * the failed disk holds), clients get KAFKA_STORAGE_ERROR for every
 * partition here, and the heartbeats name the dir offline and ask to be
 * fenced, so the controller drops this broker from every ISR and moves
 * its leaderships now rather than after the session timeout. done_cb
 * then exits. */
static void log_dir_failed(void *arg)
{
    struct broker *b = arg;
    /* The fetchers stay (this may run inside one of their callbacks) but
     * ask for nothing more: follower.c checks dir_failed. */
    TRACE_ERROR(&b->tracer, "broker=%d log.dirs=%s is offline: replication "
                "stopped, clients get KAFKA_STORAGE_ERROR; asking the "
                "controller to fence this broker, then stopping",
                b->partitions.broker_id, b->partitions.log_dir);
    b->stopping = true;
    membership_log_dir_offline(b->membership, b->partitions.log_dir);
}

static void follower_damaged(void *arg, struct partition *p)
{
    struct broker *b = arg;
    if (b->fetchers != NULL) {
        follower_look_at(b->fetchers, p);
    }
}

static void followers_changed(void *arg)
{
    struct broker *b = arg;
    if (b->fetchers != NULL) {
        follower_plan(b->fetchers);
    }
    coordinator_sync(&b->coordinator);
}

static void done_cb(void *arg)
{
    struct broker *b = arg;
    if (b->partitions.dir_failed) {
        /* Nothing more is written to a failed disk: no checkpoints, no
         * clean-shutdown marker; the next start recovers. */
        TRACE_ERROR(&b->tracer, "broker=%d stopped: its only log dir %s "
                    "failed (see the first error above); replace or repair "
                    "the disk, then start the broker again",
                    b->partitions.broker_id, b->partitions.log_dir);
        trace_batch_flush(); /* _exit() runs no atexit handler */
        _exit(BROKER_EXIT_LOG_DIR_FAILED);
    }
    kafka_fetch_flush(b);
    kafka_forward_close(b);
    coordinator_close(&b->coordinator);
    if (b->fetchers != NULL) {
        follower_close(b->fetchers);
        b->fetchers = NULL;
    }
    if (b->kafka != NULL) {
        kafka_server_close(b->kafka);
    }
    kafka_fetch_sessions_close(b);
    http_metrics_close(b->metrics);
    b->metrics = NULL;
    replica_manager_close(&b->partitions);
    membership_close(b->membership);
    uv_close((uv_handle_t *)&b->sig_term, NULL);
    uv_close((uv_handle_t *)&b->sig_int, NULL);
    loop_watch_close(&b->loop_watch);
}

static void signal_cb(uv_signal_t *handle, int signum)
{
    struct broker *b = handle->data;
    if (b->stopping) {
        return;
    }
    b->stopping = true;
    TRACE_INFO(&b->tracer, "signal %d: controlled shutdown", signum);
    membership_shutdown(b->membership);
}

/* The first of log.dirs into dir (Cairn uses one log dir). */
static int broker_log_dir(const struct config *cfg,
                          char dir[LOG_PATH_BYTES_MAX])
{
    const char *dirs = config_list(cfg, "log.dirs");
    size_t len = strcspn(dirs, ",");
    if (len == 0 || len >= LOG_PATH_BYTES_MAX) {
        fprintf(stderr, "cairn-broker: log.dirs: expected a directory\n");
        return RC_CONFIG;
    }
    memcpy(dir, dirs, len);
    dir[len] = '\0';
    return RC_OK;
}

/* The segment files open by default: a working set, not a share of the
 * partitions, so that a broker's descriptors stay flat as it hosts more
 * of them. Opening a parked log's files again costs about 9 us, and adds
 * about 6% to a synced write (tests/bench/bench_log_fds.c). */
#define BROKER_FDS_DEFAULT_MAX 2048u

/* The descriptor budget of the logs: log.fds.max as set (the limit left
 * as it is), or by default BROKER_FDS_DEFAULT_MAX or half of the
 * process's limit, whose soft value is first raised to the hard one,
 * whichever is less. */
static void set_fds_budget(struct broker *b, const struct config *cfg)
{
    struct rlimit lim = {0, 0};
    size_t budget = BROKER_FDS_DEFAULT_MAX;
    int64_t max = config_long(cfg, "log.fds.max");
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
        if (max == 0 && lim.rlim_cur < lim.rlim_max) {
            struct rlimit raised = {lim.rlim_max, lim.rlim_max};
            if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
                lim = raised;
            }
        }
        if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur / 2 < budget) {
            budget = (size_t)lim.rlim_cur / 2;
        }
    }
    if (max > 0) {
        budget = (size_t)max;
    }
    log_fds_set_max(budget);
    TRACE_INFO(&b->tracer, "segment files open at once: at most %zu "
               "(log.fds.max%s; descriptor limit %llu)", budget,
               max > 0 ? "" : "=0: the default, or half the limit",
               (unsigned long long)lim.rlim_cur);
}

/* The throttles and the replica manager, which opens the logs in dir. */
static int start_partitions(struct broker *b, const struct config *cfg,
                            int32_t broker_id, const struct log_config *lc,
                            const char *dir)
{
    set_fds_budget(b, cfg);
    struct topic_config_values topic_defaults;
    if (!broker_topic_defaults(cfg, &topic_defaults)) {
        return RC_CONFIG;
    }
    struct replica_manager_config rc = {
        .broker_id = broker_id,
        .log_dir = dir,
        .log = *lc,
        .sync_before_ack = config_bool(cfg, "log.sync.before.ack"),
        .unsafe_fsync_failure_ignore =
            config_bool(cfg, "unsafe.fsync.failure.ignore"),
        .topic_defaults = topic_defaults,
        .lag_max_ms = config_long(cfg, "replica.lag.time.max.ms"),
        .validate_records =
            config_bool(cfg, "produce.record.validation.enable"),
        .scrub_bytes_per_sec = config_long(cfg, "log.scrub.bytes.per.second"),
        .clean = broker_cleaner(cfg, &topic_defaults),
        .clean_backoff_ms = config_bool(cfg, "log.cleaner.enable")
                                ? config_long(cfg, "log.cleaner.backoff.ms")
                                : 0,
        .retention_check_ms =
            config_long(cfg, "log.retention.check.interval.ms")};
    kafka_fetch_sessions_init(
        b, (size_t)config_int(cfg, "max.incremental.fetch.session.cache.slots"));
    struct replica_manager_hooks hooks = {
        .arg = b,
        .hw_moved = kafka_fetch_hw_moved,
        .replica_seen = kafka_fetch_replica_seen,
        .alter_isr = broker_alter_isr,
        .log_corrupt = broker_log_corrupt,
        .followers_changed = followers_changed,
        .follower_damaged = follower_damaged,
        .log_dir_failed = log_dir_failed};
    b->leader_throttle_static =
        config_long(cfg, "leader.replication.throttled.rate");
    b->follower_throttle_static =
        config_long(cfg, "follower.replication.throttled.rate");
    throttle_init(&b->leader_throttle, b->leader_throttle_static,
                  uv_now(b->loop));
    throttle_init(&b->follower_throttle, b->follower_throttle_static,
                  uv_now(b->loop));
    int rv = replica_manager_init(&b->partitions, b->loop, &rc, &hooks,
                                  &b->tracer);
    if (rv != RC_OK) {
        fprintf(stderr, "cairn-broker: log.dirs=%s: %s\n", dir, rc_str(rv));
        return rv;
    }
    if (!rc.validate_records) {
        TRACE_WARN(&b->tracer, "produce.record.validation.enable=false: "
                   "produced records are stored without being walked "
                   "(a switch for benchmarks only)");
    }
    replica_manager_start_timers(&b->partitions);
    return RC_OK;
}

/* replica.fetch.* and friends: the fetchers that follow the leaders. */
static int start_followers(struct broker *b, const struct config *cfg,
                           int32_t broker_id)
{
    struct follower_config fc = {
        .self = broker_id,
        .wait_max_ms = config_int(cfg, "replica.fetch.wait.max.ms"),
        .partition_max_bytes = config_int(cfg, "replica.fetch.max.bytes"),
        .response_max_bytes =
            config_int(cfg, "replica.fetch.response.max.bytes"),
        .backoff_ms = config_long(cfg, "replica.fetch.backoff.ms"),
        .reconnect_max_ms = config_long(cfg, "reconnect.backoff.max.ms"),
        .connect_timeout_ms =
            config_long(cfg, "socket.connection.setup.timeout.ms"),
        /* The long poll itself may take wait_max_ms. */
        .request_timeout_ms =
            config_long(cfg, "replica.socket.timeout.ms") +
            config_int(cfg, "replica.fetch.wait.max.ms"),
        .throttle = &b->follower_throttle};
    int rv = follower_start(&b->fetchers, b->loop, &b->partitions, &fc,
                            &b->tracer);
    if (rv != RC_OK) {
        fprintf(stderr, "cairn-broker: cannot start: %s\n", rc_str(rv));
        return rv;
    }
    return RC_OK;
}

/* offsets.* and group.*: the group coordinator. */
static int start_coordinator(struct broker *b, const struct config *cfg,
                             int32_t broker_id)
{
    struct coordinator_config cc = {
        .offsets_partitions = config_int(cfg, "offsets.topic.num.partitions"),
        .offsets_replication_factor =
            config_int(cfg, "offsets.topic.replication.factor"),
        .commit_timeout_ms = config_long(cfg, "offsets.commit.timeout.ms"),
        .offsets_segment_bytes =
            config_int(cfg, "offsets.topic.segment.bytes")};
    group_config_default(&cc.group);
    cc.group.initial_rebalance_delay_ms =
        config_int(cfg, "group.initial.rebalance.delay.ms");
    cc.group.min_session_timeout_ms =
        config_int(cfg, "group.min.session.timeout.ms");
    cc.group.max_session_timeout_ms =
        config_int(cfg, "group.max.session.timeout.ms");
    cc.group.offsets_retention_ms =
        config_long(cfg, "offsets.retention.minutes") * 60000;
    cc.group.sweep_interval_ms =
        config_long(cfg, "offsets.retention.check.interval.ms");
    cc.group.member_id_seed = ((uint64_t)(uint32_t)broker_id << 32) ^
                              (uint64_t)uv_hrtime();
    struct coordinator_answers answers = {
        .join_done = kafka_group_join_done,
        .sync_done = kafka_group_sync_done,
        .commit_done = kafka_group_commit_done};
    int rv = coordinator_start(&b->coordinator, b, &cc, &answers);
    if (rv != RC_OK) {
        fprintf(stderr, "cairn-broker: cannot start: %s\n", rc_str(rv));
        return rv;
    }
    return RC_OK;
}

/* The Kafka listener, with its connection limits. */
static int start_kafka(struct broker *b, const struct config *cfg,
                       const struct membership_config *mc)
{
    long long per_ip = config_long(cfg, "max.connections.per.ip");
    struct kafka_server_config kcfg = {
        .host = mc->endpoint.host,
        .port = mc->endpoint.port,
        .max_connections = (size_t)config_int(cfg, "max.connections"),
        .max_connections_per_ip =
            per_ip >= INT32_MAX ? 0 : (size_t)per_ip, /* Kafka's "none" */
        .idle_ms = (uint64_t)config_long(cfg, "connections.max.idle.ms"),
        .queued_max_bytes =
            (size_t)config_long(cfg, "queued.max.request.bytes"),
    };
    int rv = kafka_server_start(&b->kafka, b->loop, &kcfg,
                                kafka_handlers_request, b, &b->tracer);
    if (rv != RC_OK) {
        fprintf(stderr, "cairn-broker: listeners=%s:%d: %s\n",
                mc->endpoint.host, mc->endpoint.port, rc_str(rv));
        return rv;
    }
    kafka_forward_start(b);
    return RC_OK;
}

/* metrics.port: the HTTP metrics, events and groups, when asked for. The
 * broker's work goes on without them, so a failure is only logged. */
static void start_metrics(struct broker *b, const struct config *cfg,
                          const struct membership_config *mc)
{
    int metrics_port = config_int(cfg, "metrics.port");
    if (metrics_port <= 0) {
        return;
    }
    int bound = 0;
    int rv = http_metrics_start(&b->metrics, b->loop, mc->endpoint.host,
                                metrics_port, broker_metrics_render, b,
                                &b->tracer, &bound);
    if (rv != RC_OK) {
        TRACE_WARN(&b->tracer, "metrics.port=%d: %s; no metrics",
                   metrics_port, rc_str(rv));
        return;
    }
    snprintf(b->events_source, sizeof b->events_source, "broker-%d",
             (int)mc->broker_id);
    http_metrics_events(b->metrics, &b->events, b->events_source);
    rv = http_metrics_route(b->metrics, "/groups", "application/json",
                            broker_groups_render, b);
    ASSERT(rv == RC_OK); /* the first of HTTP_METRICS_ROUTES_MAX */
    rv = http_metrics_route(b->metrics, "/metrics/summary",
                            "text/plain; version=0.0.4; charset=utf-8",
                            broker_metrics_summary_render, b);
    ASSERT(rv == RC_OK); /* the second */
}

static int start(struct broker *b, const struct config *cfg)
{
    struct membership_config mc;
    struct log_config lc;
    if (build(cfg, &mc, &lc) != RC_OK) {
        return RC_CONFIG;
    }
    char dir[LOG_PATH_BYTES_MAX];
    if (broker_log_dir(cfg, dir) != RC_OK) {
        return RC_CONFIG;
    }
    daemon_events_persist(&b->events, dir, &b->tracer); /* before any */
    int rv = start_partitions(b, cfg, mc.broker_id, &lc, dir);
    if (rv != RC_OK) {
        return rv;
    }
    rv = start_followers(b, cfg, mc.broker_id);
    if (rv != RC_OK) {
        return rv;
    }
    b->id = mc.broker_id;
    b->fetch_verify_crc = config_bool(cfg, "log.fetch.verify.crc");
    if (!b->fetch_verify_crc) {
        TRACE_WARN(&b->tracer, "log.fetch.verify.crc=false: fetched batches "
                   "are sent without their CRC checked (a switch for "
                   "benchmarks only)");
    }
    b->auto_create_topics = config_bool(cfg, "auto.create.topics.enable");
    rv = start_coordinator(b, cfg, mc.broker_id);
    if (rv != RC_OK) {
        return rv;
    }
    rv = start_kafka(b, cfg, &mc);
    if (rv != RC_OK) {
        return rv;
    }
    start_metrics(b, cfg, &mc);
    rv = membership_start(&b->membership, b->loop, &mc, &b->tracer,
                          image_cb, done_cb, b);
    if (rv != RC_OK) {
        fprintf(stderr, "cairn-broker: cannot start: %s\n", rc_str(rv));
        return rv;
    }
    TRACE_INFO(&b->tracer, "broker node=%d listener=%s:%d log.dirs=%s "
               "controllers=%zu", mc.broker_id, mc.endpoint.host,
               mc.endpoint.port, dir, mc.n_controllers);
    return RC_OK;
}

int main(int argc, char **argv)
{
    static struct broker b;
    b.loop = uv_default_loop();
    trace_init_stderr(&b.tracer, TRACE_LEVEL_INFO, "broker");
    event_ring_init(&b.events);
    b.tracer.events = &b.events;
    struct config *cfg = NULL;
    int rv = daemon_config_load(&cfg, PROG, argc, argv, broker_defs,
                                ARRAY_LEN(broker_defs), &b.tracer);
    if (rv != RC_OK) {
        return rv == RC_INVALID ? 2 : 1;
    }
    signal(SIGPIPE, SIG_IGN);
    rv = start(&b, cfg);
    config_free(cfg);
    if (rv != RC_OK) {
        return 1;
    }
    uv_signal_init(b.loop, &b.sig_term);
    uv_signal_init(b.loop, &b.sig_int);
    b.sig_term.data = b.sig_int.data = &b;
    uv_signal_start(&b.sig_term, signal_cb, SIGTERM);
    uv_signal_start(&b.sig_int, signal_cb, SIGINT);
    loop_watch_start(&b.loop_watch, b.loop, LOOP_WATCH_WARN_MS, &b.tracer);
    uv_run(b.loop, UV_RUN_DEFAULT);
    uv_loop_close(b.loop);
    b.tracer.events = NULL;
    event_ring_destroy(&b.events); /* the newest repeat count to its file */
    return 0;
}
