#!/usr/bin/env bash
# Lesson: growing and shrinking a live cluster. A 6-partition topic with
# replication factor 3 takes a steady acks=all load (an idempotent
# confluent-kafka producer, tests/integration/clients/repl_load.py) while
#   1. a fourth broker joins (deploy/cluster.sh add broker-4) and
#      `cairn reassign execute --add-broker 4` moves its share of replicas
#      onto it: each new replica catches up outside the ISR, joins it, and
#      only then does a replica leave;
#   2. `cairn brokers decommission 1` moves every replica off broker 1,
#      waits for it to be stopped, and unregisters it.
# A replication throttle (leader.replication.throttled.rate, set live)
# keeps the moves from starving the producer. The producer's acknowledged
# throughput is printed for each phase and must stay above half of what
# it was before; at the end every acknowledged record reads back once, in
# order, at its offset, and broker 1's partitions are elsewhere with full
# ISRs.
#     deploy/scenarios/grow-and-shrink.sh   (KEEP=1 keeps the logs;
#                                            RATE=N records/s, default 2000)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
export CAIRN_BROKER_CONFIG="min.insync.replicas=2"
RATE=${RATE:-2000}
PY=/usr/bin/python3
LOAD=$ROOT/tests/integration/clients/repl_load.py
TOPIC=grow
THROTTLE=5242880 # bytes/s: 5 MiB/s for all moves out of one leader
lesson_up
BOOT=$(sed -n 's/^bootstrap.servers=//p' "$DATA/up.out")
[ -n "$BOOT" ] || fail "no bootstrap.servers in cluster.sh up's output"
LOAD_PID=
stop_load() {
    [ -n "$LOAD_PID" ] || return 0
    touch "$DATA/stop"
    wait "$LOAD_PID"
    local rc=$?
    LOAD_PID=
    return $rc
}
trap 'stop_load; cleanup' EXIT

# "broker: replicas (leaders)" for every broker holding one of TOPIC's.
placement() {
    cairn status --json 2>/dev/null | $PY -c '
import json, sys
s = json.load(sys.stdin)
ps = [p for t in s["topics"] if t["name"] == sys.argv[1] for p in t["partitions"]]
ids = sorted({b for p in ps for b in p["replicas"]})
print("  ".join("broker %d: %d (%d)" % (b, sum(b in p["replicas"] for p in ps),
                                       sum(p["leader"] == b for p in ps))
                for b in ids))' $TOPIC
}

# Every partition of every topic in sync, and none on broker $1 if given.
settled() {
    cairn status --json 2>/dev/null | $PY -c '
import json, sys
s = json.load(sys.stdin)
gone = int(sys.argv[1]) if len(sys.argv) > 1 else None
ps = [p for t in s["topics"] for p in t["partitions"]]
sys.exit(0 if ps and all(p["leader"] > 0 and
                         len(p["isr"]) == len(p["replicas"]) and
                         gone not in p["replicas"] for p in ps) else 1)' "$@"
}

broker_4_up() {
    cairn status --json 2>/dev/null | grep -q '"id":4,[^}]*"fenced":false'
}
no_moves() {
    cairn reassign status 2>/dev/null | grep -q '^no reassignment in progress'
}

acked() {
    local n
    n=$(grep -vc ERR "$DATA/acked" 2>/dev/null)
    echo "${n:-0}"
}
acked_over() { [ "$(acked)" -gt "$1" ]; }
now_ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }
PHASE_T=0
PHASE_N=0
phase_start() { PHASE_T=$(now_ms); PHASE_N=$(acked); }
# phase_rate: acknowledged records per second since phase_start.
phase_rate() {
    local t n
    t=$(now_ms); n=$(acked)
    echo $(( (n - PHASE_N) * 1000 / (t - PHASE_T > 0 ? t - PHASE_T : 1) ))
}
RATES=()
# phase_end KEY NAME: prints the phase's rate against the first one's.
phase_end() {
    local r
    r=$(phase_rate)
    RATES+=("$1=$r")
    shift
    if [ -z "${BASE_RATE:-}" ]; then
        BASE_RATE=$r
        note "producer: $r acknowledged records/s ($1)"
    else
        note "producer: $r acknowledged records/s during $1" \
            "($(( r * 100 / (BASE_RATE > 0 ? BASE_RATE : 1) ))% of before)"
        [ $(( r * 2 )) -gt "$BASE_RATE" ] ||
            fail "throughput during $1 fell to $r/s, not above half of $BASE_RATE/s"
    fi
}

say "topic $TOPIC: 6 partitions, replication factor 3, min.insync.replicas=2"
cairn topics create $TOPIC --partitions 6 --replication-factor 3 >/dev/null ||
    fail "topics create"
wait_until 30 settled || fail "the topic never had full ISRs"
note "$(placement)"

say "an idempotent acks=all producer at $RATE records/s"
$PY "$LOAD" produce "$BOOT" $TOPIC "$DATA/acked" "$DATA/stop" "$RATE" \
    >"$DATA/load.out" 2>"$DATA/load.log" &
LOAD_PID=$!
wait_until 30 acked_over 100 || fail "no acknowledged writes (see $DATA/load.log)"
phase_start
sleep 8 # the window over which the steady rate is measured
phase_end before "steady, 3 brokers"

say "a throttle for moves, set live: leader.replication.throttled.rate=$THROTTLE"
cairn configs set broker default leader.replication.throttled.rate=$THROTTLE \
    >/dev/null || fail "configs set"
note "a leader sends at most that many bytes/s to replicas that are catching up"

say "adding broker 4 and moving its share of replicas onto it"
phase_start
mark
"$CLUSTER" add broker-4 > "$DATA/add.out" 2>&1 ||
    fail "cluster.sh add broker-4: $(tail -3 "$DATA/add.out")"
note "$(cat "$DATA/add.out")"
wait_until 30 broker_4_up || fail "broker 4 never joined"
cairn reassign plan --add-broker 4 --topics $TOPIC > "$DATA/plan.out" 2>&1 ||
    fail "reassign plan: $(tail -3 "$DATA/plan.out")"
sed -n '/^Proposed/,$p' "$DATA/plan.out" | sed 's/^/   /'
cairn reassign execute --add-broker 4 > "$DATA/execute.out" 2>&1 ||
    fail "reassign execute: $(tail -3 "$DATA/execute.out")"
sed 's/^/   /' "$DATA/execute.out"
wait_event 30 "$TOPIC-[0-9].* reassignment started"
wait_until 120 no_moves || fail "the moves never completed"
wait_event 10 "$TOPIC-[0-9].* reassignment completed"
wait_until 30 settled || fail "ISRs not full after the moves"
phase_end add_broker_4 "adding broker 4"
note "$(placement)"

say "decommissioning broker 1: every replica moves off it, then it is unregistered"
phase_start
timeout 200 "$BIN/cairn" brokers decommission 1 --timeout 150s > "$DATA/decom.out" 2>&1 &
decom=$!
wait_until 160 grep -q "broker 1 is still running" "$DATA/decom.out" ||
    fail "decommission: $(tail -3 "$DATA/decom.out")"
note "every replica is off broker 1; the command waits for it to stop"
"$CLUSTER" stop broker-1 >/dev/null
wait $decom || fail "cairn brokers decommission 1: $(tail -3 "$DATA/decom.out")"
sed 's/^/   /' "$DATA/decom.out" | tail -n 4
wait_until 30 settled 1 || fail "partitions still on broker 1, or ISRs not full"
phase_end decommission_1 "decommissioning broker 1"
note "$(placement)"

say "stopping the producer; every acknowledged record must read back"
stop_load || fail "the producer failed: $(tail -5 "$DATA/load.log")"
note "$(grep -vc ERR "$DATA/acked") acknowledged, $(grep -c ERR "$DATA/acked") failed"
timeout 150 $PY "$LOAD" verify "$BOOT" $TOPIC "$DATA/acked" > "$DATA/verify.out" 2>&1 ||
    fail "verify: $(tail -5 "$DATA/verify.out")"
note "$(tail -n 1 "$DATA/verify.out")"
cairn configs set broker default --delete leader.replication.throttled.rate \
    >/dev/null 2>&1 || fail "configs set --delete"
note "RESULT scenario=grow-and-shrink rate=$RATE ${RATES[*]}"
lesson_done
