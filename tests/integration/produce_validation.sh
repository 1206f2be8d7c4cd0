#!/usr/bin/env bash
# Hostile produce batches against a local Cairn cluster, read back by real
# consumers: tests/integration/clients/bad_batches.py sends each batch
# Kafka's LogValidator refuses (counts that lie, offset deltas out of
# order, a null header key, trailing bytes, garbage in every codec, a
# timestamp of 2^62; correct CRCs all) raw to the partition leader between
# good records produced with librdkafka, checks each refusal's error, and
# after each one reads the partition with librdkafka and with kafkajs
# (tests/integration/clients/kafkajs_read.js), which must see exactly the
# acknowledged records; a kafkajs consumer group reads them at the end.
# Own free ports and data directory. Needs node and npm; installs the
# pinned kafkajs with `npm ci` (package-lock.json) when node_modules is
# missing, as tests/integration/kafkajs.sh does.
#     tests/integration/produce_validation.sh BUILD_DIR
set -uo pipefail

TEST_NAME=produce_validation
source "$(dirname "$0")/lib.sh"
cluster_up "${1:-}" prepare
kafkajs_ready

cluster_start_or_give_up

TOPIC=pv-hostile
"$BIN/cairn" --controllers "$CTL" topics create "$TOPIC" --partitions 1 \
    --replication-factor 3 >/dev/null || give_up "topics create $TOPIC failed"

# Until every broker's metadata shows the topic with a leader.
wait_leader "$TOPIC" || give_up "$TOPIC has no leader"

# The script prints its own [PASS]/[FAIL] lines; they count here.
run_flow bad_batches 900 env BOOTSTRAP="$BOOT" TOPIC="$TOPIC" \
    KAFKAJS_READ="$CLIENTS/kafkajs_read.js" NODE_PATH="$CLIENTS/node_modules" \
    /usr/bin/python3 "$CLIENTS/bad_batches.py"

# The brokers logged each refusal, and none of them crashed.
refusals_logged() {
    grep -h "produce refused" "$DATA"/broker-*/*.log | grep -q "$TOPIC-0"
}
check "the leader logged the refusals" refusals_logged
brokers_alive() {
    local n
    for n in broker-1 broker-2 broker-3; do
        "$ROOT/deploy/cluster.sh" pid "$n" >/dev/null 2>&1 || return 1
    done
}
check "every broker is still running" brokers_alive

summary
