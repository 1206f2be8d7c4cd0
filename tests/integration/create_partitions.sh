#!/usr/bin/env bash
# CreatePartitions end to end on a local Cairn cluster: confluent-kafka's
# AdminClient and raw-wire requests (tests/integration/clients/
# partitions_flow.py: growth, produce and consume on the new partitions,
# every broker's Metadata, Kafka's errors), kafkajs's admin.createPartitions
# (clients/partitions_kafkajs.js), and `cairn topics alter`. Own free ports
# and data directory.
#     tests/integration/create_partitions.sh BUILD_DIR
set -uo pipefail

TEST_NAME=create_partitions
source "$(dirname "$0")/lib.sh"
cluster_up "${1:-}" prepare
kafkajs_ready
cluster_start_or_give_up

run_flow partitions_flow 180 /usr/bin/python3 \
    "$CLIENTS/partitions_flow.py" "$BOOT"
run_flow partitions_kafkajs 180 env BOOTSTRAP="$BOOT" \
    node "$CLIENTS/partitions_kafkajs.js"

CAIRN=(timeout 60 "$BIN/cairn" --bootstrap-servers "$BOOT")

# Grows cli-grow 2 -> 5: the line on stdout, the warning on stderr, and
# the brokers list 5 partitions when the command returns.
cli_alter_grows() {
    "${CAIRN[@]}" topics create cli-grow --partitions 2 \
        --replication-factor 3 >/dev/null || return 1
    "${CAIRN[@]}" topics alter cli-grow --partitions 5 \
        >"$DATA/alter.out" 2>"$DATA/alter.err" &&
        grep -qx "topic cli-grow now has 5 partitions" "$DATA/alter.out" &&
        grep -q "^warning: records with keys now hash over 5 partitions" \
            "$DATA/alter.err" &&
        [ "$("${CAIRN[@]}" topics describe --json cli-grow |
            python3 -c 'import json,sys; d=json.load(sys.stdin)
print(len(d["topics"][0]["partitions"]))')" = 5 ] && return 0
    sed 's/^/  alter said: /' "$DATA/alter.out" "$DATA/alter.err"
    return 1
}
check "cairn topics alter grows a topic, warns about keys" cli_alter_grows

# Errors name Kafka's code and exit 1; a missing count is a usage error.
cli_alter_errors() {
    local err
    err=$("${CAIRN[@]}" topics alter cli-grow --partitions 3 2>&1)
    [ $? = 1 ] && [[ $err == *"INVALID_PARTITIONS"* ]] || return 1
    err=$("${CAIRN[@]}" topics alter cli-nope --partitions 3 2>&1)
    [ $? = 1 ] && [[ $err == *"UNKNOWN_TOPIC_OR_PARTITION"* ]] || return 1
    "${CAIRN[@]}" topics alter cli-grow >/dev/null 2>&1
    [ $? = 2 ]
}
check "cairn topics alter reports Kafka's errors" cli_alter_errors

# A record produced to the new partition 4 by the CLI reads back.
cli_new_partition_serves() {
    echo "k4:v4" | "${CAIRN[@]}" produce cli-grow --partition 4 \
        --key-separator : >/dev/null 2>&1 || return 1
    [ "$("${CAIRN[@]}" consume cli-grow --partition 4 --from-beginning \
        --count 1 --print-key --separator : 2>/dev/null)" = "k4:v4" ]
}
check "the new partition takes and serves a record (cairn produce/consume)" \
    cli_new_partition_serves

summary
