#!/usr/bin/env bash
# Retention on real processes: a topic with retention.ms of 2 s loses its
# old segments on every replica while a producer writes; once it stops,
# every replica starts at the same offset, which clients see as the log
# start (ListOffsets earliest, a consumer from the beginning, and
# OFFSET_OUT_OF_RANGE below it). A topic with retention.bytes keeps that
# much and less than a segment more.
#     tests/integration/retention.sh BUILD_DIR
set -uo pipefail

TEST_NAME=retention
source "$(dirname "$0")/lib.sh"
export CAIRN_BROKER_CONFIG="log.retention.check.interval.ms=200"
cluster_up "${1:-}"

# first_base N TOPIC: the base offset of broker N's first segment of
# TOPIC-0 (from its file names), and its segment count and bytes.
segments() {
    local dir
    dir=$(find "$DATA/broker-$1" -type d -name "$2-0" | head -n 1)
    [ -n "$dir" ] || { echo "- 0 0"; return; }
    /usr/bin/python3 - "$dir" <<'PY'
import os, sys
d = sys.argv[1]
logs = sorted(f for f in os.listdir(d) if f.endswith(".log"))
print(int(logs[0][:20]) if logs else "-", len(logs),
      sum(os.path.getsize(os.path.join(d, f)) for f in logs))
PY
}
leader_of() {
    "$BIN/cairn" status --json 2>/dev/null | /usr/bin/python3 -c "
import json, sys
s = json.load(sys.stdin)
print([p['leader'] for t in s['topics'] if t['name'] == sys.argv[1]
       for p in t['partitions']][0])" "$1"
}

check "topic short: retention.ms=2000, segment.ms=300" "$BIN/cairn" topics \
    create short --partitions 1 --replication-factor 3 \
    --config retention.ms=2000 --config segment.ms=300
# Write until the leader has deleted segments (bounded: 150 rounds).
n=0
for round in $(seq 1 150); do
    seq $((n + 1)) $((n + 20)) | "$BIN/cairn" produce short --acks all \
        >/dev/null 2>&1 && n=$((n + 20))
    read -r base _ _ < <(segments "$(leader_of short)" short)
    [ "$base" != - ] && [ "$base" -gt 0 ] && [ $round -ge 10 ] && break
done
leader=$(leader_of short)
read -r base _ _ < <(segments "$leader" short)
check "the leader deleted old segments while $n records went in" \
    test "$base" != - -a "${base:-0}" -gt 0
# Producing stopped: every closed segment ages out; the active one stays.
settled() {
    local b c lead; read -r lead c _ < <(segments "$leader" short)
    [ "$c" = 1 ] || return 1
    for b in 1 2 3; do
        read -r first _ _ < <(segments "$b" short)
        [ "$first" = "$lead" ] || return 1
    done
}
deadline=$((SECONDS + 30))
until settled; do
    [ $SECONDS -ge $deadline ] && break
    sleep 0.2
done
check "every replica ends with one segment, at the same base" settled
read -r start _ _ < <(segments "$leader" short)
check "clients see the log start at $start: earliest, first record, below is out of range" \
    timeout 120 /usr/bin/python3 "$ROOT/tests/integration/clients/python_log_start.py" \
        "$BOOT" short "$start"
check "the leader's log tells why" bash -c '
    grep -hE "event: short-0 log start [0-9]+ -> [0-9]+ \([0-9]+ segments? older than retention.ms=2000\)" \
        "$1"/broker-*/*.log | grep -q .' _ "$DATA"

check "topic capped: retention.bytes=16000, segment.bytes=4096" "$BIN/cairn" \
    topics create capped --partitions 1 --replication-factor 3 \
    --config retention.bytes=16000 --config segment.bytes=4096
for round in $(seq 1 40); do # about 1.2 kB a round, 48 kB in all
    seq 1 20 | sed 's/$/ a record of about fifty bytes, to fill segments/' |
        "$BIN/cairn" produce capped --acks all >/dev/null 2>&1
done
cleader=$(leader_of capped)
capped_ok() {
    local first count bytes
    read -r first count bytes < <(segments "$cleader" capped)
    [ "$first" != - ] && [ "$first" -gt 0 ] && [ "$bytes" -ge 16000 ] &&
        [ "$bytes" -le $((16000 + 4096)) ]
}
deadline=$((SECONDS + 30))
until capped_ok; do
    [ $SECONDS -ge $deadline ] && break
    sleep 0.2
done
read -r first count bytes < <(segments "$cleader" capped)
check "capped keeps 16000 bytes and at most a segment more (kept: $bytes in $count segments from offset $first)" capped_ok

# DeleteRecords: the log start moves inside a segment, on every replica.
check "topic purge with 100 records" bash -c '
    "$1" topics create purge --partitions 1 --replication-factor 3 \
        >/dev/null && seq 1 100 | "$1" produce purge --acks all >/dev/null' \
    _ "$BIN/cairn"
out=$("$BIN/cairn" topics delete-records purge --partition 0 --before 40 2>&1)
check "topics delete-records purge --before 40: '$out'" \
    test "$out" = "purge-0 starts at offset 40"
check "clients see the log start at 40" timeout 120 /usr/bin/python3 \
    "$ROOT/tests/integration/clients/python_log_start.py" "$BOOT" purge 40
# start_checkpoints: each replica's log-start-offset-checkpoint of purge-0.
start_checkpoints() {
    local b f
    for b in 1 2 3; do
        f=$(find "$DATA/broker-$b" -path "*/purge-0/log-start-offset-checkpoint")
        [ -n "$f" ] && sed -n 2p "$f" || echo -
    done | tr '\n' ' '
}
deadline=$((SECONDS + 20))
until [ "$(start_checkpoints)" = "40 40 40 " ]; do
    [ $SECONDS -ge $deadline ] && break
    sleep 0.2
done
check "every replica checkpointed log start 40 (saw: $(start_checkpoints))" \
    test "$(start_checkpoints)" = "40 40 40 "
out=$("$BIN/cairn" topics delete-records purge --partition 0 --before 101 2>&1)
check "past the high watermark is OFFSET_OUT_OF_RANGE" \
    grep -q "OFFSET_OUT_OF_RANGE" <<< "$out"
out=$("$BIN/cairn" topics delete-records purge --partition 0 --before -1 2>&1)
check "--before -1 deletes up to the high watermark: '$out'" \
    test "$out" = "purge-0 starts at offset 100"
check "the leader's log tells it" bash -c '
    grep -hE "event: purge-0 log start 40 -> 100 \(DeleteRecords\)" \
        "$1"/broker-*/*.log | grep -q .' _ "$DATA"

# A compacted topic takes only keyed records (Kafka: INVALID_RECORD).
check "topic profiles: cleanup.policy=compact" "$BIN/cairn" topics create \
    profiles --partitions 1 --replication-factor 3 \
    --config cleanup.policy=compact
out=$(echo "no key" | "$BIN/cairn" -X retries=0 produce profiles --acks all 2>&1)
check "a record without a key is refused: INVALID_RECORD" \
    grep -q "INVALID_RECORD" <<< "$out"
check "a keyed record is taken" bash -c '
    echo "customer-1:alice" | "$1" produce profiles --key-separator : \
        --acks all >/dev/null' _ "$BIN/cairn"
summary
