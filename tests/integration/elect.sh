#!/usr/bin/env bash
# Preferred and unclean leader elections end to end, on a local cluster
# (3 controllers, 3 brokers) with its own ports and data directory:
#   1. auto.leader.rebalance.enable=false: a 6-partition RF 3 topic under
#      an idempotent acks=all load (tests/integration/clients/repl_load.py);
#      each broker killed and restarted in turn, so leadership leaves the
#      preferred replicas; ElectLeaders v2 from @platformatic/kafka's
#      protocol layer (clients/platformatic_elect.mjs) moves three back at
#      once, `cairn elect --topic` the rest; then ELECTION_NOT_NEEDED,
#      duplicates (INVALID_REQUEST), an unknown partition, the null list;
#   2. the controllers restarted with auto.leader.rebalance.enable=true and
#      leader.imbalance.check.interval.seconds=2: the brokers killed and
#      restarted again, and leadership returns to every preferred replica
#      within a few intervals, with "preferred leader restored" events;
#   3. the load stopped: every acknowledged record reads back once, in
#      order, at its offset;
#   4. unclean: a partition whose only ISR member is down stays offline
#      with a live out-of-sync replica until `cairn elect --type unclean`.
#     tests/integration/elect.sh BUILD_DIR
set -uo pipefail

TEST_NAME=elect
source "$(dirname "$0")/lib.sh"
unset CAIRN_BOOTSTRAP CAIRN_CONTROLLERS CAIRN_LOG
INTERVAL_S=2
export CAIRN_CONTROLLER_CONFIG="auto.leader.rebalance.enable=false
leader.imbalance.check.interval.seconds=$INTERVAL_S"
cluster_up "${1:-}" prepare
CAIRN=(timeout 60 "$BIN/cairn" --bootstrap-servers "$BOOT")
CLUSTER=$ROOT/deploy/cluster.sh
PY=/usr/bin/python3
LOAD=$ROOT/tests/integration/clients/repl_load.py
TOPIC=el
cluster_start_or_give_up

# meta TOPIC: "PARTITION LEADER FIRST_REPLICA ISR_SIZE N_REPLICAS" per
# partition, from whichever live broker librdkafka asks.
meta() {
    $PY - "$BOOT" "$1" <<'PY' 2>/dev/null
import sys
from confluent_kafka.admin import AdminClient
md = AdminClient({"bootstrap.servers": sys.argv[1]}).list_topics(sys.argv[2], timeout=5)
t = md.topics.get(sys.argv[2])
if t is None or t.error is not None or not t.partitions:
    sys.exit(1)
for p in sorted(t.partitions.values(), key=lambda p: p.id):
    print(p.id, p.leader, p.replicas[0], len(p.isrs), len(p.replicas))
PY
}

all_preferred() {
    local m
    m=$(meta "$1") && [ -n "$m" ] && ! echo "$m" | awk '$2 != $3' | grep -q .
}
n_not_preferred() { meta "$1" | awk '$2 != $3' | wc -l; }
full_isr() {
    local m
    m=$(meta "$1") && [ -n "$m" ] && ! echo "$m" | awk '$4 != $5 || $2 < 0' | grep -q .
}
not_led_by() { local m; m=$(meta "$1") && [ -n "$m" ] && ! echo "$m" | awk -v b="$2" '$2 == b || $2 < 0' | grep -q .; }

# Kills and restarts each broker in turn, each time waiting for its
# leaderships to move and for every ISR to be full again.
cycle_brokers() {
    local b
    for b in 1 2 3; do
        "$CLUSTER" kill "broker-$b" >/dev/null || return 1
        wait_for 20 not_led_by "$TOPIC" "$b" || return 1
        "$CLUSTER" start "broker-$b" >/dev/null || return 1
        wait_for 40 full_isr "$TOPIC" || return 1
    done
}

"${CAIRN[@]}" topics create $TOPIC --partitions 6 --replication-factor 3 \
    >/dev/null 2>"$DATA/create.err"
check "topic $TOPIC created, every partition led by its preferred replica" \
    wait_for 20 all_preferred $TOPIC

$PY "$LOAD" produce "$BOOT" $TOPIC "$DATA/acked" "$DATA/stop" 300 \
    2>"$DATA/load.log" &
LOAD_PID=$!
acked() { [ -f "$DATA/acked" ] && [ "$(grep -vc ERR "$DATA/acked")" -gt "$1" ]; }
check "the load is acknowledged" wait_for 30 acked 100

# --- 1. No auto rebalance: ElectLeaders moves leadership at once -----------
check "kill and restart brokers 1, 2, 3 in turn" cycle_brokers
piled=$(n_not_preferred $TOPIC)
echo "partitions led away from their preferred replica: $piled"
check "leadership left some preferred replicas" test "$piled" -gt 0

NODE_OK=1
if command -v node >/dev/null 2>&1; then
    platformatic_ready
    pk() {
        (cd "$ROOT/tests/integration/clients" &&
            BOOTSTRAP=$BOOT timeout 60 node platformatic_elect.mjs "$@")
    }
    pk 0 $TOPIC 0,1,2 >"$DATA/pk1.json" 2>"$DATA/pk1.err"
    cat "$DATA/pk1.json"
    pk_codes() { $PY -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["errorCode"], " ".join("%s-%d:%d" % (t["topic"], p["partitionId"], p["errorCode"])
      for t in r["results"] for p in t["partitions"]))' "$1"; }
    pk1_ok() {
        local c
        c=$(pk_codes "$DATA/pk1.json") || return 1
        [ "$(echo "$c" | tr ' ' '\n' | grep -cE "^$TOPIC-[012]:(0|84)\$")" = 3 ]
    }
    check "platformatic ElectLeaders v2 preferred: each of p0..2 elected or not needed" \
        pk1_ok
    p012_preferred() {
        local m
        m=$(meta $TOPIC) && [ -n "$m" ] &&
            ! echo "$m" | awk '$1 <= 2 && $2 != $3' | grep -q .
    }
    check "p0..2 led by their preferred replicas at once" wait_for 5 p012_preferred
    pk 0 $TOPIC 0,0 >"$DATA/pk2.json" 2>"$DATA/pk2.err"
    check "a partition named twice: INVALID_REQUEST for each" \
        test "$(pk_codes "$DATA/pk2.json")" = "0 $TOPIC-0:42 $TOPIC-0:42"
else
    NODE_OK=0
    echo "$TEST_NAME: node not found; the @platformatic/kafka checks fail"
    failed=$((failed + 1))
fi

"${CAIRN[@]}" elect --topic $TOPIC >"$DATA/elect1.out" 2>&1
rc=$?
cat "$DATA/elect1.out"
check "cairn elect --topic: exit 0, one line per partition, elected or not needed" \
    test $rc = 0 -a "$(grep -cE "^$TOPIC-[0-5]: (elected|ELECTION_NOT_NEEDED)" "$DATA/elect1.out")" = 6
check "every partition led by its preferred replica" wait_for 5 all_preferred $TOPIC
"${CAIRN[@]}" elect --topic $TOPIC --partition 4 >"$DATA/elect2.out" 2>&1
check "cairn elect --partition: ELECTION_NOT_NEEDED once it leads" \
    grep -q "^$TOPIC-4: ELECTION_NOT_NEEDED: Leader election not needed" "$DATA/elect2.out"
"${CAIRN[@]}" elect >"$DATA/elect3.out" 2>&1
check "cairn elect (every partition): nothing needed, exit 0" \
    grep -q "^no election needed" "$DATA/elect3.out"
"${CAIRN[@]}" elect --topic nope --partition 0 >"$DATA/elect4.out" 2>&1
rc=$?
check "cairn elect of an unknown partition: UNKNOWN_TOPIC_OR_PARTITION, exit 1" \
    test $rc = 1 -a "$(grep -c "^nope-0: UNKNOWN_TOPIC_OR_PARTITION" "$DATA/elect4.out")" = 1
if [ $NODE_OK = 1 ]; then
    pk 0 >"$DATA/pk3.json" 2>"$DATA/pk3.err"
    check "platformatic ElectLeaders with a null list: no partition needed one" \
        test "$(pk_codes "$DATA/pk3.json" | tr ' ' '\n' | grep -c ':')" = 0
fi

# --- 2. Auto rebalance ------------------------------------------------------
restart_controllers() {
    local n
    for n in 101 102 103; do
        sed -i 's/^auto.leader.rebalance.enable=false$/auto.leader.rebalance.enable=true/' \
            "$DATA/controller-$n/controller.properties" || return 1
        "$CLUSTER" stop "controller-$n" >/dev/null || return 1
        "$CLUSTER" start "controller-$n" >/dev/null || return 1
    done
}
check "controllers restarted with auto.leader.rebalance.enable=true" restart_controllers
check "kill and restart brokers 1, 2, 3 in turn (auto rebalance on)" cycle_brokers
t0=$SECONDS
check "leadership back on every preferred replica within $((4 * INTERVAL_S)) s" \
    wait_for $((4 * INTERVAL_S)) all_preferred $TOPIC
echo "preferred leaders restored $((SECONDS - t0)) s after the last restart"
"${CAIRN[@]}" events --http "127.0.0.1:$((CAIRN_BASE_PORT + 104)),127.0.0.1:$((CAIRN_BASE_PORT + 105)),127.0.0.1:$((CAIRN_BASE_PORT + 106))" \
    >"$DATA/events.out" 2>&1
check "cairn events: preferred leader restored" \
    grep -q "preferred leader restored: leader imbalance" "$DATA/events.out"

# --- 3. The acknowledged writes ----------------------------------------------
touch "$DATA/stop"
wait $LOAD_PID
rc=$?
check "the load producer exited cleanly" test $rc = 0
[ $rc = 0 ] || { echo "--- load producer (exit $rc):"; tail -n 30 "$DATA/load.log"; }
echo "acknowledged: $(grep -vc ERR "$DATA/acked"), failed: $(grep -c ERR "$DATA/acked")"
timeout 150 $PY "$LOAD" verify "$BOOT" $TOPIC "$DATA/acked" >"$DATA/verify.out" 2>&1
rc=$?
cat "$DATA/verify.out"
check "every acknowledged record read back once, in order" test $rc = 0

# --- 4. Unclean ----------------------------------------------------------------
"${CAIRN[@]}" topics create un --partitions 1 --replication-factor 3 >/dev/null 2>&1
check "topic un led" wait_for 20 full_isr un
un_leader=$(meta un | awk '{print $2}')
others=$(printf '%s\n' 1 2 3 | grep -vx "$un_leader")
isr_only_leader() { meta un | awk -v l="$un_leader" '$2 == l && $4 == 1' | grep -q .; }
for b in $others; do "$CLUSTER" kill "broker-$b" >/dev/null; done
check "un's ISR shrinks to its leader $un_leader" wait_for 20 isr_only_leader
"$CLUSTER" kill "broker-$un_leader" >/dev/null
first=$(echo "$others" | head -n 1)
"$CLUSTER" start "broker-$first" >/dev/null
offline() { meta un | awk '$2 < 0' | grep -q .; }
check "un offline: its ISR member is down, broker $first out of sync" wait_for 20 offline
"${CAIRN[@]}" elect --type unclean --topic un --partition 0 >"$DATA/elect5.out" 2>&1
cat "$DATA/elect5.out"
check "cairn elect --type unclean: un-0 elected" grep -q "^un-0: elected" "$DATA/elect5.out"
led_by_first() { meta un | awk -v b="$first" '$2 == b' | grep -q .; }
check "un-0 led by broker $first" wait_for 10 led_by_first
"${CAIRN[@]}" elect --type unclean --topic un --partition 0 >"$DATA/elect6.out" 2>&1
check "a second unclean election: ELECTION_NOT_NEEDED" \
    grep -q "^un-0: ELECTION_NOT_NEEDED" "$DATA/elect6.out"
"$CLUSTER" events >"$DATA/log-events.out" 2>&1
check "the controllers' logs narrate both kinds of ElectLeaders" \
    test "$(grep -c "$TOPIC-[0-5] leader .*(preferred leader restored: ElectLeaders; rule: preferred leader" "$DATA/log-events.out")" -gt 0 -a \
    "$(grep -c "un-0 leader none -> $first .*(unclean leader election: ElectLeaders; rule: " "$DATA/log-events.out")" = 1
summary
