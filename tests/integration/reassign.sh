#!/usr/bin/env bash
# Partition reassignment end to end on a local cluster (own free ports and
# data directory): a fourth broker added with `deploy/cluster.sh add
# broker-4`; @platformatic/kafka 1.35 moving a partition onto it with
# AlterPartitionReassignments and watching it with
# ListPartitionReassignments (tests/integration/clients/reassign_flow.mjs),
# cancel included; kafkajs 2.2.4's admin doing the same (but a cancel,
# which it cannot send) while broker 4 runs with a follower throttle of 0
# (tests/integration/clients/kafkajs_reassign.js), so the move waits;
# `cairn status` and `cairn reassign status` showing the
# move while broker 4 is paused; `cairn reassign plan --add-broker 4`,
# `execute`, `cancel`; the moves completing once broker 4 runs again, with
# every record still read back; `cairn brokers decommission 1`, which
# moves everything off broker 1, waits for it to be stopped and
# unregisters it. Needs node >= 20.19.4 for the client.
#     tests/integration/reassign.sh BUILD_DIR
set -uo pipefail

TEST_NAME=reassign
source "$(dirname "$0")/lib.sh"
cluster_up "${1:-}" prepare
platformatic_ready
kafkajs_ready
cluster_start_or_give_up

CAIRN="$BIN/cairn"
CLUSTER="$ROOT/deploy/cluster.sh"
TOPIC=moves
RECORDS=3000

check "topic $TOPIC created (6 partitions, RF 3)" \
    "$CAIRN" topics create $TOPIC --partitions 6 --replication-factor 3
seq 1 $RECORDS | sed 's/.*/k& v&/' > "$DATA/records.txt"
check "$RECORDS keyed records produced (acks=all)" \
    sh -c "'$CAIRN' produce $TOPIC --key-separator ' ' < '$DATA/records.txt'"

"$CLUSTER" add broker-4 > "$DATA/add.out" 2>&1
check "deploy/cluster.sh add broker-4 starts a fourth broker" \
    grep -q "added broker-4" "$DATA/add.out"
check "broker 4 registered and unfenced" wait_for 20 sh -c \
    "'$CAIRN' status --json | grep -q '\"id\":4,[^}]*\"fenced\":false'"

"$CAIRN" reassign plan --add-broker 4 --output "$DATA/plan.json" \
    > "$DATA/plan.out" 2>&1
check "reassign plan --add-broker 4 proposes moves onto broker 4" \
    grep -q "Proposed partition reassignment" "$DATA/plan.out"
check "the plan file is Kafka's JSON with broker 4 in it" \
    /usr/bin/python3 -c "import json,sys; p=json.load(open(sys.argv[1]));
sys.exit(0 if p['version']==1 and any(4 in m['replicas'] for m in p['partitions']) else 1)" \
    "$DATA/plan.json"

# A follower throttle of 0 bytes/s on broker 4, set live: moves onto it
# stay in progress while kafkajs looks at them, every broker running.
check "cairn configs set broker 4 follower.replication.throttled.rate=0" \
    "$CAIRN" configs set broker 4 follower.replication.throttled.rate=0
run_flow kafkajs_reassign 120 env BOOTSTRAP="$BOOT" TOPIC=$TOPIC PART=1 NEW=4 \
    node "$CLIENTS/kafkajs_reassign.js"
# (IncrementalAlterConfigs of a broker's config goes to that broker.)
check "broker 4's throttle deleted" \
    "$CAIRN" configs set broker 4 --delete follower.replication.throttled.rate
# Broker 4 paused: moves onto it stay in progress while they are looked at.
"$CLUSTER" pause broker-4
run_flow reassign_flow 120 env BOOTSTRAP="$BOOT" TOPIC=$TOPIC PART=0 NEW=4 \
    node "$CLIENTS/reassign_flow.mjs"
"$CAIRN" reassign status > "$DATA/status1.out" 2>&1
check "cairn reassign status shows $TOPIC-0 adding 4" \
    grep -q "^$TOPIC-0 replicas .* adding 4 " "$DATA/status1.out"
"$CAIRN" status > "$DATA/cstatus.out" 2>&1
check "cairn status lists the partition under REASSIGNING" \
    sh -c "grep -A3 '^REASSIGNING' '$DATA/cstatus.out' | grep -q '^$TOPIC-0 .*adding 4'"
"$CAIRN" reassign cancel --topic $TOPIC --partition 0 > "$DATA/cancel.out" 2>&1
check "cairn reassign cancel --topic --partition cancels it" \
    grep -q "^$TOPIC-0: cancelled" "$DATA/cancel.out"
"$CAIRN" reassign execute "$DATA/plan.json" > "$DATA/execute.out" 2>&1
check "cairn reassign execute PLAN starts every move of the plan" \
    sh -c "grep -q 'moving to' '$DATA/execute.out' && ! grep -qv 'moving to' '$DATA/execute.out'"
"$CLUSTER" resume broker-4
check "every move completes once broker 4 runs (reassign status empty)" \
    wait_for 60 sh -c "'$CAIRN' reassign status | grep -q '^no reassignment in progress'"
"$CAIRN" reassign cancel > "$DATA/cancel2.out" 2>&1
check "cairn reassign cancel with nothing running says so" \
    grep -q "no reassignment in progress" "$DATA/cancel2.out"
check "broker 4 holds replicas and every ISR is full" \
    wait_for 20 /usr/bin/python3 -c "
import json, subprocess, sys
s = json.loads(subprocess.check_output(['$CAIRN', 'status', '--json']))
ps = [p for t in s['topics'] if t['name'] == '$TOPIC' for p in t['partitions']]
on4 = [p for p in ps if 4 in p['replicas']]
sys.exit(0 if on4 and all(len(p['isr']) == len(p['replicas']) for p in ps) else 1)"
timeout 60 "$CAIRN" consume $TOPIC --from-beginning --count $RECORDS \
    > "$DATA/consumed.txt" 2>"$DATA/consume.err"
check "all $RECORDS records read back after the moves" \
    test "$(sort -u "$DATA/consumed.txt" | wc -l)" = "$RECORDS"

# Decommission broker 1: moves, then waits for its process to stop.
timeout 150 "$CAIRN" brokers decommission 1 --timeout 120s \
    > "$DATA/decom.out" 2>&1 &
decom=$!
check "decommission moves everything off broker 1 and asks for it to stop" \
    wait_for 120 grep -q "broker 1 is still running" "$DATA/decom.out"
"$CLUSTER" stop broker-1
wait $decom
rc=$?
cat "$DATA/decom.out"
check "cairn brokers decommission 1 exits 0" test $rc = 0
check "it unregistered broker 1" grep -q "broker 1 unregistered" "$DATA/decom.out"
check "broker 1 is gone from the cluster, its partitions elsewhere in sync" \
    wait_for 20 /usr/bin/python3 -c "
import json, subprocess, sys
s = json.loads(subprocess.check_output(['$CAIRN', 'status', '--json']))
ps = [p for t in s['topics'] for p in t['partitions']]
sys.exit(0 if all(b['id'] != 1 for b in s['brokers']) and
         all(1 not in p['replicas'] and len(p['isr']) == len(p['replicas'])
             for p in ps) else 1)"
timeout 60 "$CAIRN" consume $TOPIC --from-beginning --count $RECORDS \
    > "$DATA/consumed2.txt" 2>"$DATA/consume2.err"
check "all $RECORDS records still read back after the decommission" \
    test "$(sort -u "$DATA/consumed2.txt" | wc -l)" = "$RECORDS"
"$CLUSTER" events > "$DATA/events.txt" 2>&1
check "the events narrate a move's start and completion" \
    sh -c "grep -q 'reassignment started' '$DATA/events.txt' &&
           grep -q 'reassignment completed' '$DATA/events.txt'"
check "and the decommission" grep -q "broker 1 unregistered" "$DATA/events.txt"
summary
