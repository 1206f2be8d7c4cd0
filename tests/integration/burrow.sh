#!/usr/bin/env bash
# Burrow 1.2.1 (Debian's burrow) watching a local Cairn cluster. Burrow
# 1.x cannot start without ZooKeeper (its coordinator creates its root path
# there first, and exits when it cannot), so the test starts Debian's
# ZooKeeper 3.8 standalone on loopback. Burrow reads the groups' commits
# from __consumer_offsets (Kafka's record format, as Cairn writes it) and
# the partitions' end offsets with ListOffsets (sarama, kafka-version
# 2.0.0). Checks, through Burrow's HTTP API: the cluster and the topic's end
# offsets, a group with committed offsets 6 and 3 of 10 (lag 4 and 7, total
# 11), then a new commit followed (lag 0 and 7, total 7); and that no
# broker closed a connection of Burrow's for an unsupported version.
# Burrow 1.2.1 decodes group metadata values up to version 2 only and logs
# "failed to decode ... value version 3" for the v3 records Cairn writes,
# as Kafka 2.3 and later write them: owner and client_id stay empty, as
# they do against Kafka, so they are not checked here.
#     tests/integration/burrow.sh BUILD_DIR
set -uo pipefail

TEST_NAME=burrow
source "$(dirname "$0")/lib.sh"
ZK_JAR=/usr/share/java/zookeeper.jar
command -v Burrow >/dev/null 2>&1 || give_up "Burrow not found (make deps: burrow)"
command -v java >/dev/null 2>&1 || give_up "java not found (make deps: zookeeper)"
[ -f "$ZK_JAR" ] || give_up "$ZK_JAR not found (make deps: zookeeper)"
/usr/bin/python3 -c "import confluent_kafka" 2>/dev/null ||
    give_up "python3-confluent-kafka is not installed (make deps)"
cluster_up "${1:-}" prepare

# ZooKeeper and Burrow's HTTP server take two ports of the cluster's range
# that deploy/cluster.sh leaves unused (+97, +98: after the brokers'
# metrics on +94..+96).
ZK_PORT=$((CAIRN_BASE_PORT + 97))
HTTP_PORT=$((CAIRN_BASE_PORT + 98))
port_free $ZK_PORT && port_free $HTTP_PORT ||
    give_up "port $ZK_PORT or $HTTP_PORT is taken"
ZK_PID= BURROW_PID=
burrow_cleanup() {
    [ -n "$BURROW_PID" ] && kill "$BURROW_PID" 2>/dev/null
    [ -n "$ZK_PID" ] && kill "$ZK_PID" 2>/dev/null
    [ -n "$BURROW_PID" ] && wait "$BURROW_PID" 2>/dev/null
    [ -n "$ZK_PID" ] && wait "$ZK_PID" 2>/dev/null
    cluster_cleanup
}
trap burrow_cleanup EXIT

cluster_start_or_give_up

# ZooKeeper standalone, data in $DATA, answering "srvr" when it is up; its
# log (slf4j-simple, of libslf4j-java, which it depends on) in zk.out.
mkdir -p "$DATA/zk"
cat >"$DATA/zk/zoo.cfg" <<EOF
tickTime=2000
dataDir=$DATA/zk/data
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=srvr
EOF
java -Xmx128m -cp "$ZK_JAR:/usr/share/java/slf4j-simple.jar" -Dzookeeper.log.dir="$DATA/zk" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$DATA/zk/zoo.cfg" \
    >"$DATA/zk/zk.out" 2>&1 &
ZK_PID=$!
zk_up() {
    local deadline=$((SECONDS + 30))
    while [ $SECONDS -lt $deadline ]; do
        kill -0 "$ZK_PID" 2>/dev/null || return 1
        if (exec 3<>"/dev/tcp/127.0.0.1/$ZK_PORT" && echo srvr >&3 &&
            timeout 2 cat <&3) 2>/dev/null | grep -q "Mode: standalone"; then
            return 0
        fi
        sleep 0.2
    done
    return 1
}
zk_up || { grep -v INFO "$DATA/zk/zk.out" | tail -n 20; give_up "ZooKeeper did not start"; }

# The topic and a group's commits exist before Burrow starts; a later
# commit shows it follows __consumer_offsets.
setup() { timeout 60 /usr/bin/python3 "$ROOT/tests/integration/clients/burrow_setup.py" "$@"; }
TOPIC=bw-orders GROUP=bw-group
check "$TOPIC: created (2 partitions), 10 records in each" \
    setup topic "$BOOT" $TOPIC 10
check "$GROUP commits offsets 6 and 3 (read back)" \
    setup commit "$BOOT" $TOPIC $GROUP 0=6 1=3
[ "$failed" = 0 ] || give_up "no records or commits for Burrow to watch"

mkdir -p "$DATA/burrow"
cat >"$DATA/burrow/burrow.toml" <<EOF
[general]
pidfile="$DATA/burrow/burrow.pid"
[logging]
level="info"
[zookeeper]
servers=[ "127.0.0.1:$ZK_PORT" ]
timeout=6
root-path="/burrow"
[client-profile.cairn]
client-id="burrow-cairn"
kafka-version="2.0.0"
[cluster.cairn]
class-name="kafka"
servers=[ "${BOOT//,/\", \"}" ]
client-profile="cairn"
topic-refresh=2
offset-refresh=1
[consumer.cairn]
class-name="kafka"
cluster="cairn"
servers=[ "${BOOT//,/\", \"}" ]
client-profile="cairn"
start-latest=false
[httpserver.default]
address="127.0.0.1:$HTTP_PORT"
[storage.default]
class-name="inmemory"
workers=4
intervals=10
min-distance=1
EOF
Burrow -config-dir "$DATA/burrow" >"$DATA/burrow/burrow.out" 2>&1 &
BURROW_PID=$!

# burrow_says WHAT PATH EXPR: within 30 s, GET PATH from Burrow's HTTP API
# answers JSON `j` for which the Python expression EXPR holds.
burrow_says() {
    local what=$1
    if /usr/bin/python3 - "http://127.0.0.1:$HTTP_PORT$2" "$3" <<'EOF'; then
import json, sys, time, urllib.request
url, expr = sys.argv[1], sys.argv[2]
deadline, last = time.monotonic() + 30, None
while time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            last = r.read().decode()
        j = json.loads(last)
        if eval(expr, {"j": j}):
            sys.exit(0)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        last = f"{last} ({e})"
    time.sleep(0.2)
print(f"    {url}: {last}")
sys.exit(1)
EOF
        passed=$((passed + 1)); echo "[PASS] $what"
    else
        failed=$((failed + 1)); echo "[FAIL] $what"
    fi
}

burrow_says "Burrow lists the cluster" /v3/kafka \
    'j["clusters"] == ["cairn"]'
burrow_says "Burrow reads the topic's end offsets (ListOffsets): 10 and 10" \
    /v3/kafka/cairn/topic/$TOPIC 'j["offsets"] == [10, 10]'
burrow_says "Burrow lists the group, read from __consumer_offsets" \
    /v3/kafka/cairn/consumer "\"$GROUP\" in j[\"consumers\"]"

lag_is() { # P0_OFFSET P0_LAG P1_OFFSET P1_LAG TOTAL
    echo "j['status']['partition_count'] == 2 and j['status']['totallag'] == $5 and" \
        "sorted((x['topic'], x['partition'], x['end']['offset'], x['current_lag'])" \
        "for x in j['status']['partitions'])" \
        "== [('$TOPIC', 0, $1, $2), ('$TOPIC', 1, $3, $4)]"
}
burrow_says "Burrow's lag of the group: offsets 6 and 3 of 10, lag 4 and 7, total 11" \
    /v3/kafka/cairn/consumer/$GROUP/lag "$(lag_is 6 4 3 7 11)"
burrow_says "Burrow's group detail: the same commits and lags per partition" \
    /v3/kafka/cairn/consumer/$GROUP \
    "[(x['offsets'][-1]['offset'], x['current-lag']) for x in j['topics']['$TOPIC']] == [(6, 4), (3, 7)]"

check "$GROUP commits offset 10 on partition 0" \
    setup commit "$BOOT" $TOPIC $GROUP 0=10
burrow_says "Burrow follows a new commit: partition 0 at 10, lag 0, total 7" \
    /v3/kafka/cairn/consumer/$GROUP/lag "$(lag_is 10 0 3 7 7)"

check "Burrow is still running" kill -0 "$BURROW_PID"
closed() {
    cat "$DATA"/broker-*/broker-*.log | grep -c "closing: "
}
check "no connection closed by a broker ($(closed) seen)" test "$(closed)" = 0
if [ "$failed" != 0 ]; then
    echo "--- Burrow's log (errors and warnings):"
    grep -E '"level":"(warn|error|panic)"' "$DATA/burrow/burrow.out" | tail -n 20
fi
summary
