#!/usr/bin/env bash
# Real Kafka clients against a local Cairn cluster (replication factor 1):
# kcat metadata, then produce and consume round trips with every codec and
# acks 0, 1 and all. Own free ports and data directory.
#     tests/integration/kafka_clients.sh BUILD_DIR
set -uo pipefail

TEST_NAME=kafka_clients
source "$(dirname "$0")/lib.sh"
cluster_up "${1:-}"
KCAT=(timeout 60 kcat -b "$BOOT" -X api.version.request=true)


# Every broker registers before `cluster.sh up` returns, but the one kcat
# asks may take a metadata fetch (100 ms) to learn the last of them: poll,
# within a deadline.
metadata_lists_brokers() {
    local out deadline=$((SECONDS + 20))
    while [ $SECONDS -lt $deadline ]; do
        out=$("${KCAT[@]}" -L 2>&1) && echo "$out" | grep -q "3 brokers:" &&
            return 0
        sleep 0.2
    done
    return 1
}
check "kcat -L lists three brokers" metadata_lists_brokers

# ApiVersions v3 (KIP-511): librdkafka asks v3 first; answered in v3 on
# every connection, it never falls back to v0 (one round trip each).
api_versions_v3() {
    local out
    out=$("${KCAT[@]}" -L -d protocol 2>&1) || return 1
    local sent v3 fallback
    sent=$(echo "$out" | grep -c "Sent ApiVersionRequest")
    v3=$(echo "$out" | grep -c "Received ApiVersionResponse (v3")
    fallback=$(echo "$out" | grep -ciE "ApiVersionRequest \(v0|UNSUPPORTED_VERSION|retrying")
    echo "ApiVersions: $sent sent, $v3 answered in v3, $fallback fallbacks"
    [ "$sent" -ge 1 ] && [ "$v3" = "$sent" ] && [ "$fallback" = 0 ]
}
check "librdkafka negotiates ApiVersions v3 in one round trip" api_versions_v3

# round_trip CODEC ACKS: produces 200 lines to a fresh topic and reads them
# back in order.
round_trip() {
    local codec=$1 acks=$2 topic="rt-$1-$2" want got
    "$BIN/cairn" --controllers "$CTL" topics create "$topic" \
        --partitions 1 --replication-factor 1 \
        --config min.insync.replicas=1 >/dev/null || return 1
    wait_leader "$topic" || return 1
    want=$(seq 1 200 | sed "s/^/$codec-$acks-record-/")
    printf '%s\n' "$want" | "${KCAT[@]}" -P -t "$topic" -z "$codec" \
        -X "acks=$acks" -X linger.ms=5 || return 1
    # -c, not -e: with acks 0 or 1 the end a consumer sees (the HW) may
    # still trail the last record sent.
    got=$("${KCAT[@]}" -C -t "$topic" -o beginning -c 200 -q) || return 1
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

summary
