/* The consumer-group coordinator's private declarations, shared by its
 * files: broker/group/group.c (group table, helpers, describe/list/delete,
 * time), broker/group/group_rebalance.c (JoinGroup/SyncGroup rebalance,
 * Heartbeat, LeaveGroup), broker/group/group_offsets.c (OffsetCommit,
 * loading offsets and unloading) and broker/group/group_load.c
 * (GroupMetadata records, adopting a load). Not for use outside them. */
#ifndef CAIRN_BROKER_GROUP_INTERNAL_H
#define CAIRN_BROKER_GROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/group/group.h"


/* Groups one broker coordinates at once. Kafka has no bound; a broker
 * leading many __consumer_offsets partitions of a large cluster holds tens
 * of thousands. Beyond: the JoinGroup or standalone OffsetCommit that
 * would create a group gets COORDINATOR_NOT_AVAILABLE (retriable). */
#define GROUP__GROUPS_MAX 100000u

/* Members of one group, and separately member ids pending after
 * MEMBER_ID_REQUIRED. Kafka's group.max.size is unbounded by default;
 * consumer groups rarely pass a few hundred members. Beyond:
 * GROUP_MAX_SIZE_REACHED, Kafka's answer for group.max.size. */
#define GROUP__MEMBERS_MAX 4096u

/* Protocols one member offers (clients offer one to three). Beyond:
 * INVALID_REQUEST. */
#define GROUP__PROTOCOLS_MAX 64u

/* Bytes of one member's protocol names and metadata (a subscription to
 * thousands of topics stays far below), and of one member's assignment.
 * Kafka's own limit is its group record (about 1 MiB). Beyond:
 * INVALID_REQUEST for a JoinGroup; for an assignment, UNKNOWN_SERVER_ERROR
 * to every parked SyncGroup and a new rebalance, as Kafka does when the
 * group record is too large to append. */
#define GROUP__MEMBER_BYTES_MAX (1024u * 1024)

/* Committed offsets one group keeps (one per partition it consumes).
 * Beyond: UNKNOWN_SERVER_ERROR for the partitions that would add a key
 * (Kafka has no such bound, hence no code for it); RC_FULL on load. */
#define GROUP__OFFSETS_MAX 262144u

/* Marks an OffsetCommit entry waiting for its write; not a Kafka code. */
#define GROUP__ERROR_PENDING INT16_MIN

#define GROUP__NEVER INT64_MAX /* a deadline that is not set */

_Static_assert(GROUP__MEMBERS_MAX <= INT32_MAX, "member counts fit an int");
_Static_assert(GROUP_PROTOCOL_NAME_BYTES_MAX <= GROUP__MEMBER_BYTES_MAX,
               "a protocol name fits a member's bytes");

/* A commit being persisted (the token of io->persist_offsets). */
struct group_commit {
    struct group_commit *prev;
    struct group_commit *next;
    struct group *group; /* NULL once the group is gone */
    void *req;
    int16_t *errors;               /* one per request entry */
    size_t n_errors;
    struct group_offset *entries;  /* owned copies, to apply */
    size_t n_entries;
    size_t reserved;               /* slots reserved in group->offsets */
};

/* --- broker/group/group.c ------------------------------------------------ */

struct slice group__empty_slice(void);
struct slice group__nonnull(struct slice s);
bool group__bytes_eq(struct slice a, struct slice b);
int group__owned_dup(struct slice s, struct slice *out);
void group__owned_free(struct slice *s);
/* Sets the cause the group's next state-change event gives:
 * "member ID WHAT". */
void group__why(struct group *g, const char *what, struct slice member);
/* Appends the client's reason (KIP-800), if any, to g->why. */
void group__why_reason(struct group *g, struct slice reason);
void group__name_set(struct slice *dst, uint8_t *buf, struct slice src);
int64_t group__max64(int64_t a, int64_t b);
int group__reserve(void **v, size_t *cap, size_t want, size_t size);
void group__protocols_free(struct group_protocol *p, size_t n);
int group__protocols_dup(const struct group_protocol *src, size_t n,
                         struct group_protocol **out);
bool group__protocols_match(const struct group_member *m,
                            const struct group_protocol *p, size_t n);
bool group__member_supports(const struct group_member *m, struct slice name);
struct slice group__member_metadata(const struct group_member *m,
                                    struct slice name);
struct group *group__lookup(const struct groups *gs, struct slice id,
                            size_t *at);
struct group_member *group__member_find(const struct group *g,
                                        struct slice member_id);
struct group_member *group__static_find(const struct group *g,
                                        struct slice instance_id);
struct group_pending_member *group__pending_find(const struct group *g,
                                                 struct slice member_id);
void group__pending_remove(struct group *g, struct slice member_id);
bool group__offset_lookup(const struct group *g, struct slice topic,
                          int32_t partition, size_t *at);
void group__check_group(const struct group *g);
void group__wake_at(struct group *g, int64_t t);
/* io->persist_group, when the adapter has one. */
void group__persist(struct groups *gs, const struct group *g, bool gone);
int group__create(struct groups *gs, struct slice id, size_t at,
                  struct group **out);
int group__get_or_create(struct groups *gs, struct slice id,
                         struct group **out, bool *created);
void group__member_free(struct group_member *m);
void group__offsets_free(struct group *g);
void group__commits_orphan(struct groups *gs, struct group *g);

/* --- broker/group/group_rebalance.c -------------------------------------- */

void group__member_join_fail(struct groups *gs, struct group *g,
                             struct group_member *m, int16_t error,
                             struct slice member_id);
void group__member_sync_fail(struct groups *gs, struct group_member *m,
                             int16_t error);
void group__member_reschedule(struct group *g, struct group_member *m,
                              int64_t now_ms, int64_t timeout_ms);
bool group__member_kept_alive(const struct group_member *m);
void group__member_evict(struct groups *gs, struct group *g,
                         struct group_member *m, int16_t error);
int16_t group__member_validate(const struct group *g, struct slice member_id,
                               struct slice instance_id);
bool group__all_joined(const struct group *g);
void group__set_join_deadline(struct group *g, int64_t t);
void group__complete_join(struct groups *gs, struct group *g, int64_t now_ms);
void group__prepare_rebalance(struct groups *gs, struct group *g,
                              int64_t now_ms);
void group__remove_member_and_update(struct groups *gs, struct group *g,
                                     struct group_member *m, int64_t now_ms);

/* --- broker/group/group_offsets.c ---------------------------------------- */

bool group__holds_nothing(const struct group *g);
void group__drop(struct groups *gs, struct group *g, int16_t error);
/* Forgets a group that holds nothing (created for a request that then
 * failed, or emptied by a tombstone). */
void group__destroy_empty(struct groups *gs, struct group *g);

#endif /* CAIRN_BROKER_GROUP_INTERNAL_H */
