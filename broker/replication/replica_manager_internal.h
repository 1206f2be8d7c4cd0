/* What replica_manager.c shares with replica_open.c, the opening of its
 * logs: the parts of hosting a partition that both need. Loop thread
 * only, but for replica_manager_part_dir() and
 * replica_manager_remove_dir(), which read only what never changes after
 * replica_manager_init(). */
#ifndef CAIRN_BROKER_REPLICA_MANAGER_INTERNAL_H
#define CAIRN_BROKER_REPLICA_MANAGER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/replication/replica_manager.h"

/* <log.dir>/<topic>-<id> into out. */
void replica_manager_part_dir(const struct replica_manager *ps,
                              const char *topic, int32_t id, char *out,
                              size_t cap);
/* Removes dir and everything in it (best effort). */
void replica_manager_remove_dir(const char *dir);
/* The log directory no longer takes writes: said once, and the broker
 * told (log_dir_failed). */
void replica_manager_dir_failed(struct replica_manager *ps, const char *why);
/* Whether this broker is a replica of mp. */
bool replica_manager_hosts(const struct replica_manager *ps,
                           const struct meta_partition *mp);
/* Topic t's settings, and the log settings they give. */
void replica_manager_topic_settings(struct replica_manager *ps,
                                    const struct meta_topic *t,
                                    struct topic_config_values *v);
void replica_manager_topic_log_config(const struct replica_manager *ps,
                                      const struct topic_config_values *v,
                                      struct log_config *cfg);
/* Hosts log l, opened and attached to the loop, as partition id of t;
 * NULL (l closed) when out of memory. */
struct partition *replica_manager_adopt(struct replica_manager *ps,
                                        const struct meta_topic *t, int32_t id,
                                        struct log *l);
/* p takes the role mp gives it; true when its leadership changed. */
bool replica_manager_follow_leadership(struct replica_manager *ps,
                                       struct partition *p,
                                       const struct meta_topic *t,
                                       const struct meta_partition *mp);
/* The fetchers re-plan if changed. */
void replica_manager_followers_changed(struct replica_manager *ps,
                                       bool changed);
/* Defers the syncs of a piece of work of this size, if it is bulk (true
 * then); replica_manager_sync_deferred() makes them durable by one
 * syncfs, false when that failed (the log dir then failed). */
bool replica_manager_defer_syncs(size_t work);
bool replica_manager_sync_deferred(struct replica_manager *ps, bool deferred,
                                   const char *what);
/* What a syncfs of the writes named what said (rv, after took_ms): true
 * if they are durable; a slow one is logged, a failed one takes the log
 * dir offline (unless unsafe.fsync.failure.ignore). */
bool replica_manager_synced(struct replica_manager *ps, const char *what,
                            int rv, uint64_t took_ms);
/* The rest of a turn's work, next turn (ps->more). */
void replica_manager_more_cb(uv_idle_t *handle);

#endif
