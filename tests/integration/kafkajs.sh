#!/usr/bin/env bash
# kafkajs 2.2.4 (npm) against a local Cairn cluster: runs
# tests/integration/clients/kafkajs_flow.js (admin, gzip producers with
# acks -1/1/0 and idempotence, ListOffsets, a group-less Fetch v11), then
# reads the records kafkajs produced back with kcat (keys, values,
# headers) and checks that the batches on disk are gzip, as sent. Own free
# ports and data directory. Needs node and npm; installs the pinned
# kafkajs with `npm ci` (package-lock.json) when node_modules is missing.
#     tests/integration/kafkajs.sh BUILD_DIR
set -uo pipefail

TEST_NAME=kafkajs
source "$(dirname "$0")/lib.sh"
cluster_up "${1:-}" prepare
kafkajs_ready

KCAT=(timeout 60 kcat -b "$BOOT" -X api.version.request=true)

cluster_start_or_give_up

# The flow prints its own [PASS]/[FAIL] lines; they count here. Its
# stderr (kafkajs's log) is shown only when something failed.
EXPECT=$DATA/kafkajs-expected.txt
run_flow kafkajs_flow 180 env BOOTSTRAP="$BOOT" EXPECT="$EXPECT" \
    node "$CLIENTS/kafkajs_flow.js"

# kcat reads what kafkajs wrote, partition by partition, exactly as the
# flow says it produced it (null key prints empty, headers as k=v,k=v).
kcat_reads_kafkajs_records() {
    local p got=""
    [ -s "$EXPECT" ] || return 1
    for p in 0 1 2; do
        got+=$("${KCAT[@]}" -C -t js-orders -p "$p" -o beginning -e -q \
            -f '%p %o %k %s %h\n') || return 1
        got+=$'\n'
    done
    if [ "$got" != "$(cat "$EXPECT")"$'\n' ]; then
        diff <(printf '%s' "$got") "$EXPECT" | head -20
        return 1
    fi
}
check "kcat -C reads the kafkajs records back (keys, values, headers)" \
    kcat_reads_kafkajs_records

# Every batch kafkajs sent to js-orders is stored as sent: gzip (codec 1),
# three batches (one per send) per partition.
batches_on_disk_are_gzip() {
    python3 - "$DATA" <<'EOF'
import glob, struct, sys
files = sorted(glob.glob(sys.argv[1] + "/broker-*/logs/js-orders-*/*.log"))
codecs = []
for f in files:
    data = open(f, "rb").read()
    pos = n = 0
    while pos + 61 <= len(data):
        length, = struct.unpack_from(">i", data, pos + 8)
        if length <= 0:
            break
        attributes, = struct.unpack_from(">h", data, pos + 21)
        codecs.append(attributes & 7)
        pos += 12 + length
        n += 1
    if n != 3:
        print(f"{f}: {n} batches, want 3")
        sys.exit(1)
if len(files) != 3 or any(c != 1 for c in codecs):
    print(f"segments {files} codecs {codecs}")
    sys.exit(1)
EOF
}
check "kafkajs batches are stored gzip, one per send" batches_on_disk_are_gzip

summary
