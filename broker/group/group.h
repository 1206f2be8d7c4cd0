/* Classic consumer-group coordinator (Kafka's GroupMetadataManager and
 * ClassicGroup, shared/reference/replication-design.md section 3,
 * kafka-protocol.md sections 4.7-4.14 and 4.20): every group this broker
 * coordinates, their members, the JoinGroup/SyncGroup rebalance protocol,
 * heartbeats and session timeouts, and each group's committed offsets.
 *
 * A pure core: no I/O, no clock (every entry point takes now_ms), no
 * codec structs. It answers parked requests and asks for persistence
 * through struct group_io. Owned by the broker's group adapter; loop
 * thread only. Callbacks may run inside any group_* call (including for
 * the request being submitted) and must not call back into the core.
 *
 * Requests:
 *   - JoinGroup and SyncGroup may park: group_join() and group_sync()
 *     answer through io->join_done / io->sync_done exactly once per
 *     accepted request, now or later (when the rebalance moves on, or with
 *     NOT_COORDINATOR when the group is unloaded or the core freed).
 *   - OffsetCommit is answered through io->commit_done exactly once per
 *     accepted request: at once when nothing is to be written, else after
 *     the adapter reported io->persist_offsets() done with
 *     group_offsets_persisted().
 *   - Heartbeat, LeaveGroup, OffsetFetch, DescribeGroups, ListGroups and
 *     DeleteGroups answer at once through return values.
 *   - Routing (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS while the
 *     offsets partition loads) is the adapter's business.
 * `req` is an opaque pointer chosen by the caller, given back unchanged.
 *
 * Rules, as Kafka's classic coordinator (Java GroupMetadataManager):
 *   - States Empty, PreparingRebalance, CompletingRebalance, Stable; a
 *     group that is gone is reported "Dead".
 *   - JoinGroup with an empty member id: with require_known_member_id
 *     (JoinGroup v4+) and no instance id, the core remembers a pending
 *     member id (clientId + "-" + a UUID-shaped suffix, deterministic from
 *     config.member_id_seed and a counter) and answers MEMBER_ID_REQUIRED;
 *     the client rejoins with it. A pending id expires after the session
 *     timeout of that first JoinGroup. Otherwise the member is added now.
 *   - Adding a member, the leader rejoining a Stable group, or a member
 *     rejoining with other protocols starts a rebalance. The join phase
 *     ends when every member has rejoined and no member id is pending, or
 *     when the rebalance timeout (the largest of the members') expires:
 *     dynamic members that did not rejoin are removed, static ones kept.
 *     The first rebalance of an Empty group waits
 *     initial_rebalance_delay_ms, extended by another delay while new
 *     members keep arriving, within the rebalance timeout.
 *   - At the end of the join phase the generation goes up by one, the
 *     protocol is chosen (every member votes for its most preferred
 *     protocol among those all members support; most votes wins, a tie
 *     goes to the protocol whose first vote came from the earliest member),
 *     the old leader stays leader if it rejoined, else the first rejoined
 *     member; every parked JoinGroup is answered, the leader's with every
 *     member's metadata. Members must then send SyncGroup within the
 *     rebalance timeout or are removed (and the group rebalances).
 *   - SyncGroup from the leader stores the assignments (empty for members
 *     it left out) and answers every parked SyncGroup; the group is
 *     Stable. Followers' SyncGroups park until then.
 *   - A member not heard from (JoinGroup, SyncGroup, Heartbeat, or an
 *     OffsetCommit while Stable or PreparingRebalance) within its session
 *     timeout is removed and the group rebalances; a member with a parked
 *     JoinGroup or SyncGroup is never expired, except a new member whose
 *     first JoinGroup waits longer than new_member_join_timeout_ms.
 *   - Static members (group.instance.id, KIP-345): an instance id that
 *     joins again with an empty member id replaces its old member id (any
 *     parked request of the old one gets FENCED_INSTANCE_ID); in a Stable
 *     group whose chosen protocol would not change it keeps its assignment
 *     and no rebalance happens. A request whose member id is not the one
 *     mapped to its instance id gets FENCED_INSTANCE_ID.
 *   - OffsetCommit: generation -1 without member id or instance id is a
 *     standalone commit, allowed while the group is Empty (an unknown group
 *     is created Empty for it); otherwise the member must be known
 *     (UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID) and of the current
 *     generation (ILLEGAL_GENERATION), and the group not in
 *     CompletingRebalance (REBALANCE_IN_PROGRESS). A commit with
 *     generation >= 0 to an unknown group gets ILLEGAL_GENERATION.
 *     Offsets belong to the group, not to members.
 *
 * Membership is persisted as Kafka's GroupMetadata record: the core asks
 * io->persist_group on every generation (entering Stable with the
 * leader's assignment, or Empty), when a static member takes a new id in
 * a Stable group, and when a group goes (DeleteGroups, or forgotten by
 * the sweep); a new coordinator replays it with group_load_group(), and
 * the members keep their ids and generation. retention_time_ms of
 * OffsetCommit v2-4 is ignored (as Kafka 2.1+ does for v5+).
 *
 * Offsets expire (offsets.retention.minutes, KIP-211), checked by a sweep
 * every sweep_interval_ms (offsets.retention.check.interval.ms): a group
 * that has had members expires all its offsets once it has been Empty for
 * offsets_retention_ms (since it became Empty, as its GroupMetadata
 * record tells after a load; without one, since each commit); a group that
 * never had members (standalone commits) expires each offset
 * offsets_retention_ms after its commit. Expired offsets get tombstones
 * (io->persist_tombstones). Empty groups then holding no offsets, pending
 * member ids or commits in flight are forgotten by the same sweep.
 *
 * Bounds (group_internal.h): groups, members and pending ids per group,
 * protocols
 * and metadata bytes per member, assignment bytes per member, offsets per
 * group, offset metadata bytes. Beyond them: COORDINATOR_NOT_AVAILABLE
 * (no room for a new group), GROUP_MAX_SIZE_REACHED, INVALID_REQUEST,
 * UNKNOWN_SERVER_ERROR (oversized assignment, as Kafka answers when the
 * group record is too large; offsets table full), OFFSET_METADATA_TOO_LARGE.
 */
#ifndef CAIRN_BROKER_GROUP_H
#define CAIRN_BROKER_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"
#include "common/slice.h"

/* Kafka's defaults (GroupCoordinatorConfig). */
#define GROUP_MIN_SESSION_TIMEOUT_MS_DEFAULT 6000
#define GROUP_MAX_SESSION_TIMEOUT_MS_DEFAULT 1800000
#define GROUP_INITIAL_REBALANCE_DELAY_MS_DEFAULT 3000
#define GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS_DEFAULT 300000
/* offset.metadata.max.bytes */
#define GROUP_OFFSET_METADATA_BYTES_MAX_DEFAULT 4096
/* offsets.retention.check.interval.ms, offsets.retention.minutes */
#define GROUP_SWEEP_INTERVAL_MS_DEFAULT 600000
#define GROUP_OFFSETS_RETENTION_MS_DEFAULT (10080LL * 60 * 1000)

/* A protocol type or name ("consumer", "range", "cooperative-sticky");
 * kept inline in the group, so choosing a protocol never allocates. A
 * JoinGroup with a longer one gets INVALID_REQUEST. */
#define GROUP_PROTOCOL_NAME_BYTES_MAX 255u

enum group_state {
    GROUP_STATE_EMPTY = 0,
    GROUP_STATE_PREPARING_REBALANCE,
    GROUP_STATE_COMPLETING_REBALANCE,
    GROUP_STATE_STABLE,
    GROUP_STATE_DEAD, /* only ever reported, for a group that is gone */
};

struct group_config {
    int32_t min_session_timeout_ms;     /* group.min.session.timeout.ms */
    int32_t max_session_timeout_ms;     /* group.max.session.timeout.ms */
    int32_t initial_rebalance_delay_ms; /* group.initial.rebalance.delay.ms */
    int32_t new_member_join_timeout_ms; /* Kafka's fixed 5 minutes */
    int32_t offset_metadata_bytes_max;  /* offset.metadata.max.bytes */
    int64_t sweep_interval_ms;   /* offsets.retention.check.interval.ms */
    int64_t offsets_retention_ms; /* offsets.retention.minutes, in ms */
    /* Mixed into generated member ids so that two brokers, or two runs of
     * one, do not hand out the same id: the adapter passes something
     * unique per process (broker id and start time, or random bytes). */
    uint64_t member_id_seed;
};

/* One protocol a member supports (name and opaque metadata), in the
 * member's order of preference. Borrowed in requests, owned by the core
 * in struct group_member. */
struct group_protocol {
    struct slice name;
    struct slice metadata;
};

/* One member. Slices are owned by the core; read-only outside group*.c and
 * valid until the next call into the core. */
struct group_member {
    struct slice member_id;         /* never null */
    struct slice group_instance_id; /* null: a dynamic member */
    struct slice client_id;         /* never null */
    struct slice client_host;       /* never null */
    struct slice client_software;   /* its connection's ApiVersions v3
                                     * name and version; "" unknown */
    int32_t session_timeout_ms;
    int32_t rebalance_timeout_ms;
    struct group_protocol *protocols; /* order of preference */
    size_t n_protocols;               /* >= 1 */
    struct slice assignment;  /* from the leader's SyncGroup; never null */
    void *join_req;           /* parked JoinGroup, or NULL */
    void *sync_req;           /* parked SyncGroup, or NULL */
    int64_t deadline_ms;      /* heartbeat (or new-member join) deadline;
                               * INT64_MAX while a parked request keeps it
                               * alive past its deadline */
    bool is_new;              /* first JoinGroup not answered yet */
    bool pending_sync;        /* joined this generation, no SyncGroup yet */
};

/* A member id handed out with MEMBER_ID_REQUIRED, not yet rejoined. */
struct group_pending_member {
    struct slice member_id; /* owned */
    int64_t deadline_ms;
};

/* A committed offset. In the table the slices are owned by the core and
 * metadata is never null (a null metadata is stored as ""). */
struct group_offset {
    struct slice topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch; /* -1: none */
    struct slice metadata;
    int64_t commit_timestamp_ms;
};

/* The cause a group's state-change events carry. */
#define GROUP_WHY_BYTES 160

/* One group. Read-only outside group*.c. */
struct group {
    struct slice id;         /* owned, never null */
    int32_t partition;       /* its __consumer_offsets partition */
    enum group_state state;  /* never GROUP_STATE_DEAD */
    enum group_state previous_state;
    int32_t generation_id;
    struct slice protocol_type; /* null until a member joined */
    struct slice protocol_name; /* null unless a generation has members */
    uint8_t protocol_type_buf[GROUP_PROTOCOL_NAME_BYTES_MAX];
    uint8_t protocol_name_buf[GROUP_PROTOCOL_NAME_BYTES_MAX];
    struct group_member *leader; /* NULL iff there are no members */
    struct group_member **members; /* join order */
    size_t n_members;
    size_t cap_members;
    struct group_pending_member *pending;
    size_t n_pending;
    size_t cap_pending;
    size_t n_awaiting_join;   /* members with a parked JoinGroup */
    bool new_member_added;    /* during an initial rebalance */
    int64_t join_deadline_ms; /* PreparingRebalance: end of the join phase
                               * (or of the current initial delay) */
    int64_t initial_delay_ms;     /* the current initial delay */
    int64_t initial_remaining_ms; /* what the initial delay may still grow */
    int64_t sync_deadline_ms;     /* -1: no member owes a SyncGroup */
    struct group_offset *offsets; /* sorted by (topic, partition) */
    size_t n_offsets;
    size_t cap_offsets;  /* >= n_offsets + n_reserved */
    size_t n_reserved;   /* entries of commits in flight */
    size_t n_commits;    /* commits in flight */
    int64_t wake_ms;     /* no deadline of this group is earlier */
    char why[GROUP_WHY_BYTES]; /* what started the current rebalance */
    int64_t empty_since_ms;   /* when it last became Empty; -1: loaded */
};

struct groups;
struct group_commit; /* a commit being persisted: the token */

/* What io->join_done gets. Slices and members borrow from the core for
 * the duration of the call. On error: generation -1, protocol type and
 * name null, leader "", no members. */
struct group_join_member {
    struct slice member_id;
    struct slice group_instance_id;
    struct slice metadata; /* for the chosen protocol */
};

struct group_join_result {
    int16_t error_code;
    int32_t generation_id;
    struct slice protocol_type;
    struct slice protocol_name;
    struct slice leader;
    struct slice member_id; /* the member's (new) id, or what it sent */
    const struct group_join_member *members; /* the leader's answer only */
    size_t n_members;
};

/* What io->sync_done gets; slices borrow from the core for the call. On
 * error protocol type and name are null and the assignment is empty. */
struct group_sync_result {
    int16_t error_code;
    struct slice protocol_type;
    struct slice protocol_name;
    struct slice assignment; /* never null */
};

struct group_io {
    void *impl;
    /* The __consumer_offsets partition of a group id (Kafka's
     * abs(hashCode) mod offsets.topic.num.partitions); asked once, when
     * the group is created. */
    int32_t (*partition_for)(struct group_io *io, struct slice group_id);
    void (*join_done)(struct group_io *io, void *req,
                      const struct group_join_result *res);
    void (*sync_done)(struct group_io *io, void *req,
                      const struct group_sync_result *res);
    /* Write one offset-commit record per entry to the group's partition
     * (key: group, topic, partition; value: offset, leader epoch,
     * metadata, commit timestamp). Entries and strings are borrowed for
     * the call. Return NONE to take the write: the adapter must then call
     * group_offsets_persisted(token, ...) exactly once, later (never from
     * inside this callback). Any other code is answered at once to every
     * entry, and token is dead. */
    int16_t (*persist_offsets)(struct group_io *io, struct group_commit *token,
                               int32_t partition, struct slice group_id,
                               const struct group_offset *offsets, size_t n);
    /* One error per partition of the OffsetCommit, in request order;
     * borrowed for the call. */
    void (*commit_done)(struct group_io *io, void *req, const int16_t *errors,
                        size_t n);
    /* DeleteGroups removed a group: write a tombstone for each offset key
     * (and the group key). Fire and forget: the group is already gone from
     * memory; if the write is lost, a later load brings the offsets back,
     * as after a crash before Kafka's append. */
    void (*persist_tombstones)(struct group_io *io, int32_t partition,
                               struct slice group_id,
                               const struct group_offset *offsets, size_t n);
    /* May be NULL. Write g's GroupMetadata record (Kafka's layout: its
     * protocol type, generation, protocol, leader, and each member's ids,
     * client, timeouts, subscription for the chosen protocol and
     * assignment; g is borrowed for the call), or with gone its
     * tombstone. Fire and forget: if it is lost, members of a group whose
     * coordinator moved rejoin. */
    void (*persist_group)(struct group_io *io, const struct group *g,
                          bool gone);
    /* May be NULL. A group changed state: one line for people, e.g.
     * "group g1 rebalancing at generation 3 (member c-1 joined)". */
    void (*event)(struct group_io *io, const char *text);
};

struct groups {
    struct group_io *io;
    struct group_config config;
    struct group **v; /* sorted by id (bytewise, shorter first on ties) */
    size_t n;
    size_t cap;
    uint64_t member_id_counter;
    struct group_commit *commits; /* every commit in flight */
    struct group_join_member *scratch; /* the leader's JoinGroup members */
    size_t cap_scratch;
    int64_t next_sweep_ms; /* -1 until the first tick */
};

/* Kafka's defaults, member_id_seed 0. */
void group_config_default(struct group_config *cfg);

/* An empty coordinator; allocates nothing. io must outlive gs. */
void group_init(struct groups *gs, struct group_io *io,
                const struct group_config *cfg);

/* Answers every parked JoinGroup and SyncGroup and every commit in flight
 * with NOT_COORDINATOR (tokens die: the adapter must not report them),
 * then frees everything. */
void group_free(struct groups *gs);

/* --- JoinGroup / SyncGroup ------------------------------------------------ */

struct group_join_request {
    struct slice group_id;
    struct slice member_id;         /* "" on the first join */
    struct slice group_instance_id; /* null: dynamic member (v5+) */
    struct slice client_id;         /* request header; null taken as "" */
    struct slice client_host;
    struct slice client_software; /* "name version" (KIP-511), or "" */
    struct slice protocol_type;
    const struct group_protocol *protocols;
    size_t n_protocols;
    int32_t session_timeout_ms;
    int32_t rebalance_timeout_ms;   /* v0: pass the session timeout */
    bool require_known_member_id;   /* JoinGroup v4+ (KIP-394) */
    struct slice reason; /* v8+ (KIP-800), null: none; for the event */
};

/* RC_OK: the request is taken and io->join_done will be called exactly
 * once (maybe already). RC_NOMEM: not taken, nothing changed; the adapter
 * answers it. Request bytes are borrowed for the call. */
MUST_CHECK int group_join(struct groups *gs, void *req,
                          const struct group_join_request *r, int64_t now_ms);

struct group_assignment {
    struct slice member_id;
    struct slice assignment;
};

struct group_sync_request {
    struct slice group_id;
    int32_t generation_id;
    struct slice member_id;
    struct slice group_instance_id; /* null unless v3+ static member */
    struct slice protocol_type;     /* null unless sent (v5+) */
    struct slice protocol_name;     /* null unless sent (v5+) */
    const struct group_assignment *assignments; /* the leader's only */
    size_t n_assignments;
};

/* As group_join(), answering through io->sync_done. */
MUST_CHECK int group_sync(struct groups *gs, void *req,
                          const struct group_sync_request *r, int64_t now_ms);

/* --- Heartbeat / LeaveGroup ----------------------------------------------- */

/* Heartbeat's ErrorCode: INVALID_GROUP_ID, UNKNOWN_MEMBER_ID,
 * FENCED_INSTANCE_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS (while
 * PreparingRebalance: rejoin) or NONE. */
int16_t group_heartbeat(struct groups *gs, struct slice group_id,
                        struct slice member_id, struct slice group_instance_id,
                        int32_t generation_id, int64_t now_ms);

/* One member of a LeaveGroup (v0-2: one, with a null instance id). The
 * core fills error_code. */
struct group_leave_member {
    struct slice member_id;         /* "" with an instance id: by instance */
    struct slice group_instance_id;
    struct slice reason; /* v5+ (KIP-800), null: none; for the event */
    int16_t error_code;             /* out */
};

/* Removes the members that may leave and rebalances. Returns the
 * top-level ErrorCode (INVALID_GROUP_ID or NONE); an unknown group or
 * member gets UNKNOWN_MEMBER_ID in its entry and changes nothing. For
 * v0-2 the adapter answers the one member's code at top level. */
int16_t group_leave(struct groups *gs, struct slice group_id,
                    struct group_leave_member *members, size_t n,
                    int64_t now_ms);

/* --- Offsets -------------------------------------------------------------- */

struct group_commit_partition {
    struct slice topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch; /* -1: none (v6+ sends it) */
    struct slice metadata; /* nullable */
};

struct group_commit_request {
    struct slice group_id;
    int32_t generation_id;  /* -1: standalone */
    struct slice member_id; /* "" when standalone */
    struct slice group_instance_id; /* null unless v7+ static member */
    const struct group_commit_partition *partitions;
    size_t n_partitions;
};

/* OffsetCommit at now_ms (the commit timestamp). RC_OK: taken, and
 * io->commit_done will be called exactly once (maybe already). RC_NOMEM:
 * not taken, nothing changed. */
MUST_CHECK int group_offset_commit(struct groups *gs, void *req,
                                   const struct group_commit_request *r,
                                   int64_t now_ms);

/* The adapter's answer to io->persist_offsets for token: error is the
 * Kafka code to answer for the written entries (NONE once replicated;
 * the adapter maps append failures as Kafka's
 * appendGroupMetadataErrorToResponseError: NOT_ENOUGH_REPLICAS ->
 * COORDINATOR_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER -> NOT_COORDINATOR,
 * ...). With NONE the offsets enter the group, unless the group was
 * deleted or unloaded meanwhile. Then io->commit_done. token is dead. */
void group_offsets_persisted(struct groups *gs, struct group_commit *token,
                             int16_t error);

/* The committed offset of (topic, partition) in a group, or NULL (answer
 * offset -1, leader epoch -1, metadata "", NONE). Borrowed until the next
 * call into the core. For "every partition", walk g->offsets of
 * group_find() (sorted by topic, then partition). */
const struct group_offset *group_offset_get(const struct groups *gs,
                                            struct slice group_id,
                                            struct slice topic,
                                            int32_t partition);

/* --- Loading a partition of __consumer_offsets ---------------------------- */

/* Replays one offset-commit record (the latest wins), creating the group
 * (Empty) if needed. RC_NOMEM, or RC_FULL at a bound (the record is
 * dropped; the adapter logs it). */
MUST_CHECK int group_load_offset(struct groups *gs, struct slice group_id,
                                 struct slice topic, int32_t partition,
                                 int64_t offset, int32_t leader_epoch,
                                 struct slice metadata,
                                 int64_t commit_timestamp_ms);

/* Replays an offset tombstone; an Empty group left without offsets (and
 * without anything else) is forgotten, as a loaded group with no records
 * left does not exist in Kafka. */
void group_load_tombstone(struct groups *gs, struct slice group_id,
                          struct slice topic, int32_t partition);

/* One member of a GroupMetadata record (Kafka's MemberMetadata).
 * Borrowed. */
struct group_load_member {
    struct slice member_id;
    struct slice group_instance_id; /* null: dynamic */
    struct slice client_id;
    struct slice client_host;
    int32_t rebalance_timeout_ms;
    int32_t session_timeout_ms;
    struct slice subscription; /* metadata for the group's protocol */
    struct slice assignment;
};

/* A GroupMetadata record's value. Borrowed. */
struct group_load_meta {
    struct slice protocol_type; /* "" or null: none */
    int32_t generation_id;
    struct slice protocol_name; /* null when there are no members */
    struct slice leader;        /* null when there are no members */
    int64_t state_ms;  /* currentStateTimestamp, in the core's clock; -1 */
    const struct group_load_member *members;
    size_t n_members;
};

/* Replays a GroupMetadata record (the latest wins): the group takes its
 * generation, protocol, leader and members, Stable when it has members
 * (each member's session starts at now_ms), else Empty (empty since
 * state_ms). RC_MALFORMED for a record that breaks the rules (a leader
 * that is not a member, no protocol with members, duplicate member ids,
 * bounds), RC_NOMEM, RC_FULL; the group is then as it was. */
MUST_CHECK int group_load_group(struct groups *gs, struct slice group_id,
                                const struct group_load_meta *m,
                                int64_t now_ms);

/* Replays a GroupMetadata tombstone: the group loses its membership and
 * generation; it stays (Empty) while it holds offsets. */
void group_load_group_tombstone(struct groups *gs, struct slice group_id);

/* Moves every group of from (loaded into a separate core, so that a load
 * in progress is never seen) into gs, replacing any of the same id;
 * their members' sessions start at now_ms. from is left empty. */
void group_load_adopt(struct groups *gs, struct groups *from,
                      int64_t now_ms);

/* This broker no longer coordinates the partition (or any): its groups
 * go, parked JoinGroup/SyncGroup get NOT_COORDINATOR, commits in flight
 * are answered when persisted but change nothing. */
void group_unload_partition(struct groups *gs, int32_t partition);
void group_unload_all(struct groups *gs);

/* --- DescribeGroups / ListGroups / DeleteGroups --------------------------- */

/* The group, or NULL when this broker has no such group ("Dead"). */
const struct group *group_find(const struct groups *gs, struct slice id);

/* Kafka's state name; NULL g gives "Dead". */
const char *group_state_name(const struct group *g);

/* DescribeGroups, as Kafka's GroupSummary: protocol type ("" when none);
 * the chosen protocol, and each member's metadata and assignment, only
 * while Stable (else "" and empty bytes). All borrowed. */
struct group_member_summary {
    struct slice member_id;
    struct slice group_instance_id;
    struct slice client_id;
    struct slice client_host;
    struct slice metadata;
    struct slice assignment;
};
struct slice group_summary_protocol_type(const struct group *g);
struct slice group_summary_protocol(const struct group *g);
void group_summary_member(const struct group *g, size_t i,
                          struct group_member_summary *out);

/* ListGroups: gs->v[0 .. gs->n), ordered by id; list each group's id and
 * group_summary_protocol_type(). */

/* DeleteGroups for one id: GROUP_ID_NOT_FOUND (unknown), NON_EMPTY_GROUP
 * (not Empty), or NONE after io->persist_tombstones and forgetting the
 * group, its offsets and its pending member ids. Commits in flight for it
 * are answered when persisted but change nothing. */
int16_t group_delete(struct groups *gs, struct slice group_id);

/* --- Time ----------------------------------------------------------------- */

/* Runs every deadline that passed by now_ms: pending member ids and
 * sessions expire, join phases and initial delays end, members that owe
 * a SyncGroup are removed; every sweep_interval_ms expires offsets and
 * forgets Empty groups with nothing left. The adapter calls it periodically (every 100
 * ms) and after each request. */
void group_tick(struct groups *gs, int64_t now_ms);

#endif
