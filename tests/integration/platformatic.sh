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
timeout 180 env BOOTSTRAP="$BOOT" \
    node "$CLIENTS/platformatic_flow.mjs" >"$DATA/flow.out" 2>"$DATA/flow.err"
flow_rc=$?
cat "$DATA/flow.out"
n_pass=$(grep -c '^\[PASS\]' "$DATA/flow.out")
n_fail=$(grep -c '^\[FAIL\]' "$DATA/flow.out")
passed=$((passed + n_pass))
failed=$((failed + n_fail))
if [ $flow_rc != 0 ] && [ "$n_fail" = 0 ]; then
    failed=$((failed + 1)); echo "[FAIL] platformatic_flow.mjs exited $flow_rc"
fi
if [ $flow_rc != 0 ]; then
    echo "--- client errors (stderr):"; tail -n 40 "$DATA/flow.err"
fi

# The client asks only versions Cairn advertises: no connection closed.
closings() {
    cat "$DATA"/broker-*/broker-*.log | grep "closing: "
}
check "no connection closed by a broker ($(closings | wc -l) seen)" \
    test "$(closings | wc -l)" = 0
[ "$(closings | wc -l)" = 0 ] || closings | head -5
summary
