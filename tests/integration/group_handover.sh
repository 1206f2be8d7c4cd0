#!/usr/bin/env bash
# A group coordinator killed after compaction hands over in well under a
# second and the group's member keeps its generation: 10,000 committed
# offsets (100 groups x 100 partitions) committed 10 times over, on one
# __consumer_offsets partition with 256 kB segments, compacted on every
# replica; then the coordinator is killed. The steps and checks are in
# tests/integration/clients/group_handover.py.
#     tests/integration/group_handover.sh BUILD_DIR
set -uo pipefail

TEST_NAME=group_handover
source "$(dirname "$0")/lib.sh"
export CAIRN_BROKER_CONFIG="offsets.topic.num.partitions=1
offsets.topic.segment.bytes=262144
log.cleaner.backoff.ms=200
group.initial.rebalance.delay.ms=0"
cluster_up "${1:-}"

check "the coordinator hands over fast and the member keeps its generation" \
    timeout 600 /usr/bin/python3 \
    "$ROOT/tests/integration/clients/group_handover.py" \
    "$BOOT" "$ROOT/deploy/cluster.sh" "$DATA" "$CAIRN_BASE_PORT"
summary
