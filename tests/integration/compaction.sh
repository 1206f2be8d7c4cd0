#!/usr/bin/env bash
# Log compaction on real processes, the customer-profile example: 100,000
# profile updates over 1,000 customers, then 50 customers deleted
# (tombstones), on a compacted topic with small segments (batches of at
# most 16 kB: a batch larger than a segment is MESSAGE_TOO_LARGE). Every
# replica compacts it; a consumer from the beginning then reads exactly the
# latest profile of each customer and the tombstones, and so does a read of
# each replica's own segment files: one record per customer, all of them
# below the replica's cleaner checkpoint, the batches holding them the same
# bytes on the three replicas. Once delete.retention.ms has passed, a later
# pass removes the tombstones, from the consumer's view and every replica's
# files alike.
#     tests/integration/compaction.sh BUILD_DIR
set -uo pipefail

TEST_NAME=compaction
source "$(dirname "$0")/lib.sh"
export CAIRN_BROKER_CONFIG="log.cleaner.backoff.ms=200
log.cleaner.dedupe.buffer.size=8388608"
cluster_up "${1:-}"

UPDATES=100000
KEYS=1000
DELETED=50

check "topic profiles: compact, 64 kB segments" "$BIN/cairn" topics create \
    profiles --partitions 1 --replication-factor 3 \
    --config cleanup.policy=compact --config segment.bytes=65536 \
    --config segment.ms=500 --config min.cleanable.dirty.ratio=0 \
    --config delete.retention.ms=15000
updates() {
    awk -v n="$UPDATES" -v k="$KEYS" 'BEGIN { for (i = 0; i < n; i++)
            printf "cust-%d:profile-%d\n", i % k, i }' |
        "$BIN/cairn" -X batch.size=16384 -X enable.idempotence=true \
            produce profiles --key-separator : \
            --acks all >/dev/null 2>"$DATA/produce.err"
}
check "100,000 updates of 1,000 customers (an idempotent producer)" updates
head -3 "$DATA/produce.err"
check "50 customers deleted (tombstones)" bash -c '
    for k in $(seq 0 $(($2 - 1))); do echo "cust-$k:"; done |
        kcat -b "$1" -P -t profiles -K : -Z' _ "$BOOT" "$DELETED"

# roll: one more write (key zz-roll, always the same) rolls the segment
# once segment.ms has passed, so everything before it can be compacted.
roll() { echo "zz-roll:x" | "$BIN/cairn" produce profiles --key-separator : \
    --acks all >/dev/null 2>&1; }
# compacted_to STATE: rolls until the topic reads as compaction leaves it
# (bounded: 60 tries, 500 ms apart).
compacted_to() {
    for _ in $(seq 1 60); do
        roll
        if timeout 60 /usr/bin/python3 \
               "$ROOT/tests/integration/clients/python_compacted.py" \
               "$BOOT" profiles "$UPDATES" "$KEYS" "$DELETED" "$1" \
               > "$DATA/check.out" 2>&1; then
            return 0
        fi
        sleep 0.5
    done
    cat "$DATA/check.out"
    return 1
}
replica_dir() { find "$DATA/broker-$1" -type d -name profiles-0 | head -n 1; }
# on_disk_to STATE: rolls until every replica's own segment files hold what
# compaction leaves (tests/integration/clients/segment_records.py: each
# replica has cleaned every customer record and keeps one per customer,
# the batches holding them are the same bytes on every replica, every
# replica cut its segments at the same offsets, and the cleaned segment
# files are byte-identical); bounded: 60 tries, 500 ms apart.
on_disk_to() {
    local b reps=()
    for b in 1 2 3; do reps+=("broker-$b=$(replica_dir $b)"); done
    for _ in $(seq 1 60); do
        if timeout 60 /usr/bin/python3 \
               "$ROOT/tests/integration/clients/segment_records.py" \
               --expect "$UPDATES" "$KEYS" "$DELETED" "$1" \
               "${reps[@]}" > "$DATA/disk.out" 2>&1; then
            return 0
        fi
        roll
        sleep 0.5
    done
    cat "$DATA/disk.out"
    return 1
}
check "compacted: the latest profile per customer, tombstones for 50" \
    compacted_to kept
cat "$DATA/check.out"
check "on disk, every replica: 1,000 customer records (950 profiles, 50 tombstones), byte-identical segments" \
    on_disk_to kept
cat "$DATA/disk.out"
# every replica compacted its own copy: each keeps a fraction of the bytes
replica_bytes() {
    local b dir
    for b in 1 2 3; do
        dir=$(replica_dir $b)
        du -sb --apparent-size "$dir"/*.log 2>/dev/null |
            awk '{ s += $1 } END { print s + 0 }'
    done | tr '\n' ' '
}
small_everywhere() {
    local b
    for b in $(replica_bytes); do [ "$b" -gt 0 ] && [ "$b" -lt 200000 ] || return 1; done
}
deadline=$((SECONDS + 30))
until small_everywhere; do
    [ $SECONDS -ge $deadline ] && break
    sleep 0.2
done
check "every replica compacted its log (bytes: $(replica_bytes); ~3 MB written)" \
    small_everywhere
check "the leader's log tells it" bash -c '
    grep -hE "event: profiles-0 compacted [0-9]+ segments? below offset [0-9]+, [0-9]+ -> [0-9]+ bytes: [0-9]+ superseded records" \
        "$1"/broker-*/*.log | grep -q .' _ "$DATA"
check "after delete.retention.ms, the tombstones are gone too" \
    compacted_to gone
cat "$DATA/check.out"
check "on disk, every replica: 950 customer records, no tombstone, byte-identical segments" \
    on_disk_to gone
cat "$DATA/disk.out"
summary
