#!/usr/bin/env bash
# @platformatic/kafka 1.35.0 (npm) against a local Cairn cluster: runs
# tests/integration/clients/platformatic_flow.mjs (Admin createTopics,
# listTopics, metadata, deleteTopics; an idempotent producer of keyed
# records with headers, acks all; ListOffsets earliest/latest; a group
# consumer that commits and a new one resuming there). The client speaks
# only Kafka 3.5+'s flexible versions. Own free ports and data directory.
# Needs node >= 20.19.4 and npm; installs the pinned clients with
# `npm ci` (package-lock.json) when node_modules is missing.
#     tests/integration/platformatic.sh BUILD_DIR
set -uo pipefail

TEST_NAME=platformatic
source "$(dirname "$0")/lib.sh"
cluster_up "${1:-}" prepare
platformatic_ready
cluster_start_or_give_up

# The flow prints its own [PASS]/[FAIL] lines; they count here. Its
# stderr (the client's errors) is shown only when something failed.
run_flow platformatic_flow 180 env BOOTSTRAP="$BOOT" \
    node "$CLIENTS/platformatic_flow.mjs"

# The client asks only versions Cairn advertises: no connection closed.
closings() {
    cat "$DATA"/broker-*/broker-*.log | grep "closing: "
}
check "no connection closed by a broker ($(closings | wc -l) seen)" \
    test "$(closings | wc -l)" = 0
[ "$(closings | wc -l)" = 0 ] || closings | head -5
summary
