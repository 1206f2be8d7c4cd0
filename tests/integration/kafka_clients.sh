#!/usr/bin/env bash
# Real Kafka clients against a local Cairn cluster (replication factor 1):
# kcat metadata, then produce and consume round trips with every codec and
# acks 0, 1 and all. Own free ports and data directory.
#     tests/integration/kafka_clients.sh BUILD_DIR
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "${1:-$ROOT/build/debug}" && pwd)
DATA=$(mktemp -d "${TMPDIR:-/tmp}/cairn-clients-XXXXXX")
passed=0
failed=0
export CAIRN_DATA=$DATA CAIRN_BIN=$BIN CAIRN_WAIT_S=60

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pick_base() {
    local base try p ok
    for try in $(seq 1 50); do
        base=$(( (RANDOM % 300) * 100 + 20000 ))
        ok=1
        for p in 91 92 93 101 102 103 201 202 203; do
            port_free $((base + p)) || { ok=0; break; }
        done
        [ $ok = 1 ] && { echo "$base"; return 0; }
    done
    return 1
}

check() {
    local name=$1; shift
    if "$@"; then
        passed=$((passed + 1)); echo "[PASS] $name"
    else
        failed=$((failed + 1)); echo "[FAIL] $name"
    fi
}

cleanup() {
    "$ROOT/deploy/cluster.sh" down >/dev/null 2>&1
    rm -rf "$DATA"
}
trap cleanup EXIT

base=$(pick_base) || { echo "no free port range"; exit 1; }
export CAIRN_BASE_PORT=$base
BOOT=127.0.0.1:$((base + 91)),127.0.0.1:$((base + 92)),127.0.0.1:$((base + 93))
CTL=101@127.0.0.1:$((base + 101)),102@127.0.0.1:$((base + 102)),103@127.0.0.1:$((base + 103))
KCAT=(timeout 60 kcat -b "$BOOT" -X api.version.request=true)

"$ROOT/deploy/cluster.sh" up >/dev/null 2>&1 || { echo "cluster did not start"; exit 1; }

metadata_lists_brokers() {
    local out
    out=$("${KCAT[@]}" -L 2>&1) || return 1
    echo "$out" | grep -q "3 brokers:"
}
check "kcat -L lists three brokers" metadata_lists_brokers

# wait_leader TOPIC: until every broker's metadata shows the topic with a
# leader (brokers learn new topics from the controller asynchronously, as
# in Kafka).
wait_leader() {
    local deadline=$((SECONDS + 15)) b ok
    while [ $SECONDS -lt $deadline ]; do
        ok=1
        for b in ${BOOT//,/ }; do
            timeout 10 kcat -b "$b" -L -t "$1" 2>/dev/null |
                grep -q "partition 0, leader [0-9]" || { ok=0; break; }
        done
        [ $ok = 1 ] && return 0
        sleep 0.1
    done
    return 1
}

# round_trip CODEC ACKS: produces 200 lines to a fresh topic and reads them
# back in order.
round_trip() {
    local codec=$1 acks=$2 topic="rt-$1-$2" want got
    "$BIN/cairn" --controllers "$CTL" topics create "$topic" \
        --partitions 1 --replication-factor 1 >/dev/null || return 1
    wait_leader "$topic" || return 1
    want=$(seq 1 200 | sed "s/^/$codec-$acks-record-/")
    printf '%s\n' "$want" | "${KCAT[@]}" -P -t "$topic" -z "$codec" \
        -X "acks=$acks" -X linger.ms=5 || return 1
    got=$("${KCAT[@]}" -C -t "$topic" -o beginning -c 200 -e -q) || return 1
    [ "$got" = "$want" ]
}

for codec in none gzip snappy lz4 zstd; do
    for acks in 0 1 all; do
        check "kcat round trip codec=$codec acks=$acks" round_trip "$codec" "$acks"
    done
done

python_orders() {
    timeout 120 /usr/bin/python3 "$ROOT/tests/integration/clients/python_orders.py" \
        "$BOOT" >/dev/null
}
check "confluent-kafka idempotent lz4 producer, consumer reads all back" \
    python_orders

echo "kafka_clients: $passed passed, $failed failed"
[ $failed = 0 ]
