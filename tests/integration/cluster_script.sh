#!/usr/bin/env bash
# deploy/cluster.sh and the cairn command end to end: up refusing a port
# another process holds and reporting a node that dies at start, up,
# topics, kill a broker and watch it fenced, start it again; `cairn
# status` offsets (HW, each replica's log end offset) and flags, with a
# follower killed and started again; stop everything. Runs on its own
# free ports and data directory, so it passes beside `make cluster`.
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
def part(topic, i):
    return [p for t in s['topics'] if t['name'] == topic
            for p in t['partitions'] if p['partition'] == i][0]
def ends(p):
    return {r['id']: r['end_offset'] for r in p['end_offsets']}
sys.exit(0 if ($expr) else 1)" 2>/dev/null; then
            return 0
        fi
        sleep 0.2
    done
    return 1
}

# --- cairn size: no cluster needed ----------------------------------------
check "size: 1,500-byte messages at 2,000/s for 3 days at RF 3" bash -c '
    out=$("$1" size --message-bytes 1500 --rate 2000 --retention 3d) &&
    echo "$out" | grep -q "^across the cluster *2,332,800,000,000 bytes (2.33 TB)$" &&
    echo "$out" | grep -q "^per broker *777,600,000,000 bytes .* 3 brokers$"' \
    _ "$BIN/cairn"
check "size: a product past 64 bits is an error, not a wrapped number" bash -c '
    "$1" size --message-bytes 9223372036854775807 --rate 2 --retention 1s \
        >/dev/null 2>&1
    test $? = 1' _ "$BIN/cairn"
check "size: a duration it cannot read is a usage error" bash -c '
    "$1" size --message-bytes 10 --rate 1 --retention 3x >/dev/null 2>&1
    test $? = 2' _ "$BIN/cairn"

check "cairn help status prints the status command's usage only" bash -c '
    out=$("$1" help status) && echo "$out" | grep -q "status --watch" &&
    ! echo "$out" | grep -q "topics create"' _ "$BIN/cairn"

# --- up: ports in use, a node that dies at start ----------------------------
# wait_listening SECONDS PORT: until something listens on 127.0.0.1:PORT.
wait_listening() {
    local deadline=$((SECONDS + $1))
    while port_free "$2"; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.05
    done
}
no_node_started() { ! compgen -G "$DATA/*/pid" >/dev/null; }
held=$((base + 92))
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
time.sleep(300)' "$held" &
holder=$!
check "another process listens on broker-2's port" wait_listening 10 "$held"
up_out=$("$ROOT/deploy/cluster.sh" up 2>&1)
check "up fails when a port it needs is in use" test $? != 0
check "up names the port, what needs it, the holder's pid and command" \
    grep -q "^cluster: port $held (broker-2 Kafka listener) is in use by pid $holder (/usr/bin/python3 -c" \
    <<< "$up_out"
check "up started nothing" no_node_started
kill "$holder"
wait "$holder" 2>/dev/null
# broker-3 with a config it refuses: it exits at once.
mkdir -p "$DATA/broker-3"
printf 'node.id=3\nmin.insync.replicas=0\n' > "$DATA/broker-3/broker.properties"
up_out=$("$ROOT/deploy/cluster.sh" up 2>&1)
check "up fails when a node dies at start" test $? != 0
check "up names the dead node and its log's last error line" grep -qF \
    "died at start: $(tail -n 1 "$DATA/broker-3/broker-3.log")" \
    <<< "$(grep "^cluster: broker-3 (pid [0-9]*) died at start: cairn-broker: " <<< "$up_out")"
check "up reports only the dead node" \
    test "$(grep -c "died at start" <<< "$up_out")" = 1
rm "$DATA/broker-3/broker.properties"

out=$("$ROOT/deploy/cluster.sh" up 2>&1)
last=$(printf '%s\n' "$out" | tail -n 1)
check "up prints bootstrap.servers last" \
    test "$last" = "bootstrap.servers=127.0.0.1:$((base + 91)),127.0.0.1:$((base + 92)),127.0.0.1:$((base + 93))"
check "up again says it is already up, exits 0" bash -c '
    out=$("$1" up 2>&1) && echo "$out" | grep -q "^cluster: already up" &&
    echo "$out" | tail -n 1 | grep -q "^bootstrap.servers="' \
    _ "$ROOT/deploy/cluster.sh"
check "topics create" "$BIN/cairn" --controllers \
    "101@127.0.0.1:$((base + 101)),102@127.0.0.1:$((base + 102)),103@127.0.0.1:$((base + 103))" \
    topics create orders --partitions 3 --replication-factor 3
check "cairn honours CAIRN_BASE_PORT (no --controllers)" bash -c '
    timeout 60 "$1" topics list | grep -qx orders &&
    timeout 60 "$1" status | grep -q "^orders"' _ "$BIN/cairn"
check "a CAIRN_BASE_PORT that is no port is a usage error" bash -c '
    CAIRN_BASE_PORT=99999 "$1" status 2>&1 | grep -q "CAIRN_BASE_PORT=99999";
    test "${PIPESTATUS[0]}" = 2' _ "$BIN/cairn"
check "status shows three leaders" wait_for 10 \
    "len([p for t in s['topics'] for p in t['partitions'] if p['leader'] > 0]) == 3"
# --- metrics: Prometheus text from every process --------------------------
metrics() { # PORT: its samples, checked by the parser
    /usr/bin/python3 "$ROOT/tests/integration/prom_check.py" \
        "http://127.0.0.1:$1/metrics"
}
check "every broker's and controller's /metrics is valid Prometheus text" \
    bash -c 'for p in 94 95 96 104 105 106; do
        "$1" "http://127.0.0.1:$(($2 + p))/metrics" > /dev/null || exit 1
    done' _ "$ROOT/tests/integration/prom_check.py" "$base"
check "exactly one controller says it is active" bash -c '
    n=0; for p in 104 105 106; do
        v=$(/usr/bin/python3 "$1" "http://127.0.0.1:$(($2 + p))/metrics" |
            sed -n "s/^kafka_controller_kafkacontroller_activecontrollercount //p")
        n=$((n + ${v%.*}))
    done; test "$n" = 1' _ "$ROOT/tests/integration/prom_check.py" "$base"
check "brokers report leaders, log end offsets and ISR gauges" bash -c '
    out=$(/usr/bin/python3 "$1" "http://127.0.0.1:$(($2 + 94))/metrics") &&
    echo "$out" | grep -q "^kafka_server_replicamanager_underreplicatedpartitions 0$" &&
    echo "$out" | grep -q "^kafka_server_replicamanager_underminisrpartitioncount 0$" &&
    echo "$out" | grep -q "^kafka_log_log_logendoffset{topic=\"orders\",partition=\"[0-2]\"} " &&
    echo "$out" | grep -q "^kafka_server_replicamanager_isrshrinks_total "' \
    _ "$ROOT/tests/integration/prom_check.py" "$base"
check "a broker's /metrics/summary has its gauges and no series per partition" bash -c '
    out=$(/usr/bin/python3 "$1" "http://127.0.0.1:$(($2 + 94))/metrics/summary") &&
    echo "$out" | grep -q "^kafka_server_replicamanager_leadercount [0-9]" &&
    echo "$out" | grep -q "^kafka_server_replicamanager_partitioncount 3$" &&
    ! echo "$out" | grep -q "^kafka_log_log_logendoffset" &&
    ! echo "$out" | grep -q "^cairn_partition_high_watermark"' \
    _ "$ROOT/tests/integration/prom_check.py" "$base"
check "a path other than /metrics is 404" bash -c '
    /usr/bin/python3 -c "
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(sys.argv[1], timeout=10)
except urllib.error.HTTPError as e:
    sys.exit(0 if e.code == 404 else 1)
sys.exit(1)" "http://127.0.0.1:$(($1 + 94))/nothing"' _ "$base"

check "the metrics port answers bad requests and stays up" \
    /usr/bin/python3 "$ROOT/tests/integration/metrics_bad_requests.py" \
    $((base + 94))

# status --watch sees the kill as it happens (it stops by itself).
"$BIN/cairn" status --watch --topic orders --interval-ms 200 \
    --for-ms 20000 > "$DATA/watch.out" 2>&1 &
watch_pid=$!
# wait_line SECONDS REGEX FILE: until a line of FILE matches.
wait_line() {
    local deadline=$((SECONDS + $1))
    until grep -qE "$2" "$3"; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.1
    done
}
check "status --watch starts with the state" wait_line 10 \
    "^[0-9:.]+ orders-0 leader [1-3] epoch 0$" "$DATA/watch.out"
check "kill broker-1" "$ROOT/deploy/cluster.sh" kill broker-1
check "a kill then at once a start starts it again, and says so" bash -c '
    "$1" kill broker-2 && out=$("$1" start broker-2) &&
    echo "$out" | grep -q "^started broker-2 (pid [0-9]*)$" &&
    "$1" pid broker-2 >/dev/null' _ "$ROOT/deploy/cluster.sh"
check "broker-1 fenced, leads nothing" wait_for 10 \
    "b[1]['fenced'] and all(p['leader'] != 1 for t in s['topics'] for p in t['partitions'])"
check "a surviving leader counts under-replicated partitions" bash -c '
    n=0; for p in 95 96; do
        v=$(/usr/bin/python3 "$1" "http://127.0.0.1:$(($2 + p))/metrics" |
            sed -n "s/^kafka_server_replicamanager_underreplicatedpartitions //p")
        n=$((n + ${v%.*}))
    done; test "$n" -ge 1' _ "$ROOT/tests/integration/prom_check.py" "$base"
check "cluster.sh events: the fencing on one timeline, with its cause" \
    bash -c '"$1" events | grep -qE "^[0-9T:.-]+Z controller-10[1-3]: broker 1 fenced \(session expired after [0-9]+ ms\)$"' \
    _ "$ROOT/deploy/cluster.sh"
check "every running process serves its events as JSON at /events, named" bash -c '
    /usr/bin/python3 -c "
import json, sys, urllib.request
base = int(sys.argv[1])
want = {95: \"broker-2\", 96: \"broker-3\",
        104: \"controller-101\", 105: \"controller-102\", 106: \"controller-103\"}
texts = []
for off, name in want.items():
    with urllib.request.urlopen(\"http://127.0.0.1:%d/events\" % (base + off),
                                timeout=10) as r:
        doc = json.load(r)
    assert doc[\"source\"] == name, doc[\"source\"]
    assert doc[\"next\"] == len(doc[\"events\"]) + 1 or len(doc[\"events\"]) == 1024
    texts += [e[\"text\"] for e in doc[\"events\"]]
assert any(t.startswith(\"broker 1 fenced (session expired\") for t in texts), texts
" "$1"' _ "$base"
check "cairn events: the fencing and the leader moves, with their cause" bash -c '
    out=$(timeout 60 "$1" events --since 10m) &&
    echo "$out" | grep -qE "^[0-9T:.-]+Z controller-10[1-3] +broker 1 fenced \(session expired after [0-9]+ ms\)$" &&
    echo "$out" | grep -qE "controller-10[1-3] +orders-[0-2] leader 1 -> [23] epoch .*\(broker 1 fenced: session expired"' \
    _ "$BIN/cairn"
check "status --watch saw broker 1 fenced" wait_line 10 \
    "^[0-9:.]+ broker 1 fenced$" "$DATA/watch.out"
check "status --watch saw why: the controller fenced broker 1, session expired" \
    wait_line 10 "^[0-9:.]+ controller-10[1-3]: broker 1 fenced \(session expired after [0-9]+ ms\)$" \
    "$DATA/watch.out"
check "status --watch saw why orders' leaders moved" wait_line 10 \
    "^[0-9:.]+ controller-10[1-3]: orders-[0-2] leader 1 -> [23] epoch [0-9]+ -> [0-9]+, isr .*\(broker 1 fenced: session expired" \
    "$DATA/watch.out"
check "status --watch saw a leader move off broker 1" wait_line 10 \
    "^[0-9:.]+ orders-[0-2] leader 1 -> [23] epoch [0-9]+ -> [0-9]+$" \
    "$DATA/watch.out"
check "status --watch saw an ISR shrink" wait_line 10 \
    "^[0-9:.]+ orders-[0-2] isr [0-9,]*1[0-9,]* -> [23](,[23])?$" \
    "$DATA/watch.out"
check "status --watch hides other topics" bash -c '! grep -q "__consumer" "$1"' \
    _ "$DATA/watch.out"
check "status --watch stops by itself after --for-ms" wait "$watch_pid"
check "start broker-1" "$ROOT/deploy/cluster.sh" start broker-1
check "broker-1 unfenced again" wait_for 15 "not b[1]['fenced']"
check "logs show leadership" grep -q "became leader of orders-" \
    "$DATA"/broker-*/broker-*.log
check "pid of a running node" "$ROOT/deploy/cluster.sh" pid controller-102

# --- status: HW and log end offsets (ListOffsets), flags -------------------
# Last, as it kills a follower: it starts it again before `down`.
check "produce 5 records to an RF 3 topic" bash -c '
    "$1" --bootstrap-servers "$2" topics create offsets --partitions 1 \
        --replication-factor 3 >/dev/null &&
    seq 1 5 | timeout 60 "$1" --bootstrap-servers "$2" produce offsets \
        --acks all' _ "$BIN/cairn" "$BOOT"
check "status: hw 5, every replica's end offset 5, no flags" wait_for 20 \
    "(p := part('offsets', 0)) is not None and p['hw'] == 5
     and len(ends(p)) == 3 and set(ends(p).values()) == {5}
     and not p['under_replicated']
     and not p['under_min_isr'] and not p['offline']"
# sum_metric NAME_REGEX: the sum over the brokers of the samples matched.
sum_metric() {
    local p total=0 v
    for p in 94 95 96; do
        for v in $(/usr/bin/python3 "$ROOT/tests/integration/prom_check.py" \
                       "http://127.0.0.1:$((base + p))/metrics" |
                   sed -nE "s/^$1 ([0-9.e+]+)$/\1/p"); do
            total=$(/usr/bin/python3 -c "print(int($total + float('$v')))")
        done
    done
    echo "$total"
}
export -f sum_metric; export ROOT base
check "metrics: the 5 records counted in messagesin, their bytes in bytesin" \
    test "$(sum_metric kafka_server_brokertopicmetrics_messagesin_total)" = 5
bytes_in=$(sum_metric kafka_server_brokertopicmetrics_bytesin_total)
check "metrics: followers appended at least twice those bytes" bash -c '
    test "$1" -gt 0 && test "$(sum_metric kafka_server_brokertopicmetrics_replicationbytesin_total)" -ge $(($1 * 2))' \
    _ "$bytes_in"
check "metrics: a Produce latency histogram and log sync times" bash -c '
    test "$(sum_metric "kafka_network_requestmetrics_totaltimems_count\{request=\"Produce\"\}")" -ge 1 &&
    test "$(sum_metric kafka_log_logflushstats_logflushrateandtimems_count)" -ge 1'
check "consume 3 of them in group lagcheck" bash -c '
    timeout 60 "$1" --bootstrap-servers "$2" consume offsets --group lagcheck \
        --from-beginning --count 3 >/dev/null' _ "$BIN/cairn" "$BOOT"
check "metrics: group lagcheck committed 3 on offsets-0, lag 2" bash -c '
    test "$(sum_metric "cairn_consumergroup_committed_offset\{group=\"lagcheck\",topic=\"offsets\",partition=\"0\"\}")" = 3 &&
    test "$(sum_metric "cairn_consumergroup_lag\{group=\"lagcheck\",topic=\"offsets\",partition=\"0\"\}")" = 2'
# cairn size --topic: RF, retention and brokers from the cluster, the rate
# measured while a producer writes.
check "size --topic: a topic with retention.ms" "$BIN/cairn" topics create \
    sizing --partitions 2 --replication-factor 3 --config retention.ms=60000
for i in $(seq 1 200); do # until told to stop
    [ -e "$DATA/sizing.stop" ] && break
    seq 1 25 | timeout 60 "$BIN/cairn" produce sizing --acks 1 >/dev/null 2>&1
done &
producer=$!
check "size --topic: the producer is writing" wait_for 30 \
    "(p := part('sizing', 0)) is not None and (p['hw'] or 0) + (part('sizing', 1)['hw'] or 0) > 0"
size_out=$(timeout 60 "$BIN/cairn" size --message-bytes 100 --topic sizing \
    --sample-ms 2000 2>&1)
touch "$DATA/sizing.stop"
wait "$producer"
check "size --topic: RF 3, 3 brokers and the topic's retention.ms" \
    grep -qE "^sizing: replication factor 3, 3 brokers, retention 60000 ms \(the topic's retention.ms\); [1-9][0-9]* records in [0-9]+ ms: [0-9.]+/s$" <<< "$size_out"
check "size --topic: bytes = 100 x the measured rate x 60 s x 3" \
    /usr/bin/python3 -c '
import re, sys
out = sys.argv[1]
measured = float(re.search(r"records in \d+ ms: ([0-9.]+)/s", out).group(1))
rate = int(re.search(r"100-byte messages at (\d+)/s kept", out).group(1))
total = int(re.search(r"across the cluster +([0-9,]+) bytes", out).group(1).replace(",", ""))
sys.exit(0 if total == 100 * rate * 60 * 3 and abs(rate - measured) <= 0.56
         else 1)' "$size_out"
check "size --topic: an unknown topic is an error" bash -c '
    timeout 60 "$1" size --message-bytes 100 --topic no-such-topic 2>&1 |
        grep -q "no topic named .no-such-topic."; test "${PIPESTATUS[0]}" = 1' \
    _ "$BIN/cairn"
# status_text ISR-HW-ENDS-FLAGS: the text row of offsets-0 ends so.
status_text() {
    "$ROOT/deploy/cluster.sh" status 2>/dev/null |
        grep -Eq "^offsets +0 +[1-3] +[0-9]+ +[1-3],[1-3],[1-3] +$1\$"
}
check "status text: HW and END-OFFSETS columns, empty FLAGS" \
    status_text "[1-3],[1-3],[1-3] +5 +[1-3]:5,[1-3]:5,[1-3]:5"
follower=$(status_json | /usr/bin/python3 -c "
import json, sys
p = [t for t in json.load(sys.stdin)['topics']
     if t['name'] == 'offsets'][0]['partitions'][0]
print([r for r in p['replicas'] if r != p['leader']][0])" 2>/dev/null)
check "found a follower of offsets-0" test -n "$follower"
follower=${follower:-2}
check "kill broker-$follower (a follower)" \
    "$ROOT/deploy/cluster.sh" kill "broker-$follower"
check "status: its end offset unknown, others 5, UNDER-REPLICATED, AT-MIN-ISR" \
    wait_for 30 "(p := part('offsets', 0)) is not None
     and b[$follower]['reachable'] is False and ends(p)[$follower] is None and p['hw'] == 5
     and all(v == 5 for k, v in ends(p).items() if k != $follower)
     and $follower not in p['isr'] and p['under_replicated']
     and p['at_min_isr'] and not p['under_min_isr'] and not p['offline']"
check "status text: '-' for its end offset, the flags" \
    status_text \
    "[1-3],[1-3] +5 +[1-3]:[5-],[1-3]:[5-],[1-3]:[5-] +UNDER-REPLICATED,AT-MIN-ISR"
check "start broker-$follower" "$ROOT/deploy/cluster.sh" start "broker-$follower"
check "status: back in the ISR at end offset 5, no flags" wait_for 30 \
    "(p := part('offsets', 0)) is not None
     and b[$follower]['reachable'] is True and set(ends(p).values()) == {5} and len(p['isr']) == 3
     and not p['under_replicated'] and not p['at_min_isr']"
# A status longer than a command line's argument may be (128 KiB).
check "a topic of 2,000 partitions" "$BIN/cairn" --controllers \
    "101@127.0.0.1:$((base + 101)),102@127.0.0.1:$((base + 102)),103@127.0.0.1:$((base + 103))" \
    topics create wide --partitions 2000 --replication-factor 1
check "its status is longer than an argument may be" bash -c '
    test "$("$1" status --json | wc -c)" -gt 131072' _ "$ROOT/deploy/cluster.sh"
check "up with 2,000 more partitions still finds the cluster ready" bash -c '
    out=$("$1" up 2>&1) && echo "$out" | grep -q "^cluster: already up" &&
    ! echo "$out" | grep -q "not ready"' _ "$ROOT/deploy/cluster.sh"
pids=$(cat "$DATA"/*/pid)
check "down" "$ROOT/deploy/cluster.sh" down
alive=0
for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
check "no process left" test $alive = 0
hw_checkpointed() {
    local f
    for f in "$DATA"/broker-*/logs/replication-offset-checkpoint; do
        grep -qx "offsets 0 5" "$f" || return 1
    done
}
check "every broker checkpointed offsets-0's high watermark (5)" \
    hw_checkpointed

summary
