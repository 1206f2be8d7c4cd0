#!/usr/bin/env bash
# deploy/cluster.sh and the cairn command end to end: up, topics, kill a
# broker and watch it fenced, start it again, stop everything. Runs on its
# own free ports and data directory, so it passes beside `make cluster`.
#     tests/integration/cluster_script.sh BUILD_DIR
set -uo pipefail

TEST_NAME=cluster_script
source "$(dirname "$0")/lib.sh"
cluster_up "${1:-}" prepare
base=$CAIRN_BASE_PORT

status_json() { "$ROOT/deploy/cluster.sh" status --json 2>/dev/null; }

# wait_for SECONDS PYTHON-EXPR-ON-s: polls cairn status --json.
wait_for() {
    local deadline=$((SECONDS + $1)) expr=$2
    while [ $SECONDS -lt $deadline ]; do
        if status_json | /usr/bin/python3 -c "
import json, sys
s = json.load(sys.stdin)
b = {x['id']: x for x in s['brokers']}
sys.exit(0 if ($expr) else 1)" 2>/dev/null; then
            return 0
        fi
        sleep 0.2
    done
    return 1
}

out=$("$ROOT/deploy/cluster.sh" up 2>&1)
last=$(printf '%s\n' "$out" | tail -n 1)
check "up prints bootstrap.servers last" \
    test "$last" = "bootstrap.servers=127.0.0.1:$((base + 91)),127.0.0.1:$((base + 92)),127.0.0.1:$((base + 93))"
check "topics create" "$BIN/cairn" --controllers \
    "101@127.0.0.1:$((base + 101)),102@127.0.0.1:$((base + 102)),103@127.0.0.1:$((base + 103))" \
    topics create orders --partitions 3 --replication-factor 3
check "status shows three leaders" wait_for 10 \
    "len([p for t in s['topics'] for p in t['partitions'] if p['leader'] > 0]) == 3"
check "kill broker-1" "$ROOT/deploy/cluster.sh" kill broker-1
check "broker-1 fenced, leads nothing" wait_for 10 \
    "b[1]['fenced'] and all(p['leader'] != 1 for t in s['topics'] for p in t['partitions'])"
check "start broker-1" "$ROOT/deploy/cluster.sh" start broker-1
check "broker-1 unfenced again" wait_for 15 "not b[1]['fenced']"
check "logs show leadership" grep -q "became leader of orders-" \
    "$DATA"/broker-*/broker-*.log
check "pid of a running node" "$ROOT/deploy/cluster.sh" pid controller-102
pids=$(cat "$DATA"/*/pid)
check "down" "$ROOT/deploy/cluster.sh" down
alive=0
for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
check "no process left" test $alive = 0

summary
