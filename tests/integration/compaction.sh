#!/usr/bin/env bash
# Log compaction on real processes, the customer-profile example: 20,000
# profile updates over 1,000 customers, then 50 customers deleted
# (tombstones), on a compacted topic with small segments (batches of at
# most 16 kB: a batch larger than a segment is MESSAGE_TOO_LARGE). Every
# replica compacts it; a consumer from the beginning then reads exactly the
# latest profile of each customer and the tombstones; once
# delete.retention.ms has passed, a later pass removes the tombstones.
#     tests/integration/compaction.sh BUILD_DIR
set -uo pipefail

TEST_NAME=compaction
source "$(dirname "$0")/lib.sh"
export CAIRN_BROKER_CONFIG="log.cleaner.backoff.ms=200
log.cleaner.dedupe.buffer.size=8388608"
cluster_up "${1:-}"

check "topic profiles: compact, 64 kB segments" "$BIN/cairn" topics create \
    profiles --partitions 1 --replication-factor 3 \
    --config cleanup.policy=compact --config segment.bytes=65536 \
    --config segment.ms=500 --config min.cleanable.dirty.ratio=0 \
    --config delete.retention.ms=10000
check "20,000 updates of 1,000 customers" bash -c '
    for i in $(seq 0 19999); do echo "cust-$((i % 1000)):profile-$i"; done |
        "$1" -X batch.size=16384 produce profiles --key-separator : \
            --acks all >/dev/null 2>"$2"' \
    _ "$BIN/cairn" "$DATA/produce.err"
head -3 "$DATA/produce.err"
check "50 customers deleted (tombstones)" bash -c '
    for k in $(seq 0 49); do echo "cust-$k:"; done |
        kcat -b "$1" -P -t profiles -K : -Z' _ "$BOOT"

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
               "$BOOT" profiles 20000 1000 50 "$1" > "$DATA/check.out" 2>&1; then
            return 0
        fi
        sleep 0.5
    done
    cat "$DATA/check.out"
    return 1
}
check "compacted: the latest profile per customer, tombstones for 50" \
    compacted_to kept
cat "$DATA/check.out"
# every replica compacted its own copy: each keeps a fraction of the bytes
replica_bytes() {
    local b dir
    for b in 1 2 3; do
        dir=$(find "$DATA/broker-$b" -type d -name profiles-0 | head -n 1)
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
check "every replica compacted its log (bytes: $(replica_bytes); ~600 kB written)" \
    small_everywhere
check "the leader's log tells it" bash -c '
    grep -hE "event: profiles-0 compacted [0-9]+ segments? below offset [0-9]+, [0-9]+ -> [0-9]+ bytes: [0-9]+ superseded records" \
        "$1"/broker-*/*.log | grep -q .' _ "$DATA"
check "after delete.retention.ms, the tombstones are gone too" \
    compacted_to gone
cat "$DATA/check.out"
summary
