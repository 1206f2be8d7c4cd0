#!/usr/bin/env bash
# A local Cairn cluster on 127.0.0.1 (or, with CAIRN_NETNS, on test hosts
# of deploy/netns.sh): three controllers (node ids 101-103)
# and three brokers (node ids 1-3), each its own process with its own
# config, log and data under $CAIRN_DATA (default ./data/cluster).
# CAIRN_BROKER_CONFIG and CAIRN_CONTROLLER_CONFIG (lines of key=value) are
# appended to each new node's file. CAIRN_BROKER_PRELOAD (a path to
# libcairn-durable.so) runs brokers under the power-loss recorder.
#
#   deploy/cluster.sh up              start what is not running, wait until a
#                                     controller is active and every broker
#                                     registered; last line bootstrap.servers=;
#                                     marks $CAIRN_DATA/lab for cairn web
#   deploy/cluster.sh down            stop everything (brokers first)
#   deploy/cluster.sh status          cairn status against this cluster
#   deploy/cluster.sh kill NODE       SIGKILL, wait for it to die
#                                     (NODE: controller-101, broker-2)
#   deploy/cluster.sh stop NODE       SIGTERM, wait for exit
#   deploy/cluster.sh start NODE      start one node (says what it started)
#   deploy/cluster.sh pause NODE      SIGSTOP
#   deploy/cluster.sh resume NODE     SIGCONT
#   deploy/cluster.sh pid NODE        print its pid
#   deploy/cluster.sh logs NODE       print its log file
#   deploy/cluster.sh add broker-N    configure and start one more broker
#                                     (N 4..9), wait until it is registered
#                                     and unfenced; `up` and `down` then
#                                     include it
#   deploy/cluster.sh events [SINCE]  every node's "event:" lines as one
#                                     timeline (SINCE: an ISO time prefix,
#                                     e.g. 2026-12-01T10:15)
#
# Ports: CAIRN_BASE_PORT (default 19000) + 90 + broker id for the Kafka
# listeners, + 100 + n for controller RPC, + 200 + n for controller Raft;
# metrics (Prometheus text at /metrics) on + 93 + broker id and + 103 + n.
# Brokers added with `add` (ids 4..9) listen on + 300 + id, metrics on
# + 310 + id, clear of the first three's ports.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${CAIRN_DATA:-$ROOT/data/cluster}
BIN=${CAIRN_BIN:-$ROOT/build/debug}
BASE=${CAIRN_BASE_PORT:-19000}
CONTROLLERS=(101 102 103)
BROKERS=(1 2 3)
# Brokers added with `add`, one id a line.
EXTRA_BROKERS_FILE=$DATA/brokers.added
if [ -f "$EXTRA_BROKERS_FILE" ]; then
    while read -r extra_id; do
        [ -n "$extra_id" ] && BROKERS+=("$extra_id")
    done < "$EXTRA_BROKERS_FILE"
fi
WAIT_S=${CAIRN_WAIT_S:-60}
source "$ROOT/deploy/ports.sh" # port_free

die() { echo "cluster: $*" >&2; exit 1; }

# CAIRN_NETNS=NAME: each node runs in test host I of deploy/netns.sh (its
# own network namespace and address: broker I and controller 100+I share
# host I), so faults can cut the links between nodes; else 127.0.0.1.
NETNS=${CAIRN_NETNS:-}

node_host() {
    local i=$1
    [ "$i" -gt 100 ] && i=$((i - 100))
    if [ -n "$NETNS" ]; then
        "$ROOT/deploy/netns.sh" addr "$NETNS" "$i"
    else
        echo 127.0.0.1
    fi
}

ctl_rpc_port() { echo $((BASE + 100 + $1 - 100)); }
# Prometheus text at http://host:port/metrics: brokers on +94..+96,
# controllers on +104..+106.
broker_metrics_port() {
    if [ "$1" -le 3 ]; then echo $((BASE + 93 + $1)); else echo $((BASE + 310 + $1)); fi
}
ctl_metrics_port() { echo $((BASE + 103 + $1 - 100)); }
ctl_raft_port() { echo $((BASE + 200 + $1 - 100)); }
broker_port() {
    if [ "$1" -le 3 ]; then echo $((BASE + 90 + $1)); else echo $((BASE + 300 + $1)); fi
}

voters() {
    local out="" id
    for id in "${CONTROLLERS[@]}"; do
        out+="${out:+,}$id@$(node_host "$id"):$(ctl_rpc_port "$id")"
    done
    echo "$out"
}

raft_voters() {
    local out="" id
    for id in "${CONTROLLERS[@]}"; do
        out+="${out:+,}$id@$(node_host "$id"):$(ctl_raft_port "$id")"
    done
    echo "$out"
}

bootstrap() {
    local out="" id
    for id in "${BROKERS[@]}"; do
        out+="${out:+,}$(node_host "$id"):$(broker_port "$id")"
    done
    echo "$out"
}

node_dir() { echo "$DATA/$1"; }
pid_file() { echo "$DATA/$1/pid"; }
log_file() { echo "$DATA/$1/$1.log"; }

node_kind() {
    case "$1" in
        controller-10[1-3]) echo controller ;;
        broker-[1-9]) echo broker ;;
        *) die "unknown node '$1' (controller-101..103, broker-1..9)" ;;
    esac
}

# A process killed a moment ago may not be reaped yet: it answers kill -0
# as a zombie ("Z" in /proc/PID/stat). It counts as gone.
is_zombie() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat%% *}" = Z ]
}

node_pid() {
    local f
    f=$(pid_file "$1")
    [ -f "$f" ] || return 1
    local pid
    pid=$(cat "$f")
    kill -0 "$pid" 2>/dev/null || return 1
    is_zombie "$pid" && return 1
    echo "$pid"
}

# The controllers' shared Raft secret: made once per cluster, readable by
# its owner only.
raft_secret() {
    local f="$DATA/raft.secret"
    if [ ! -s "$f" ]; then
        mkdir -p "$DATA"
        (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$f")
    fi
    cat "$f"
}

write_config() {
    local node=$1 kind id dir
    kind=$(node_kind "$node")
    id=${node#*-}
    dir=$(node_dir "$node")
    mkdir -p "$dir"
    if [ -f "$dir/$kind.properties" ]; then
        # A controller configured before Raft connections were
        # authenticated gets the cluster's secret.
        if [ "$kind" = controller ] &&
            ! grep -q '^controller.quorum.raft.secret=' "$dir/controller.properties"; then
            echo "controller.quorum.raft.secret=$(raft_secret)" >> "$dir/controller.properties"
        fi
        return 0
    fi
    if [ "$kind" = controller ]; then
        mkdir -p "$dir/metadata"
        (umask 077; : > "$dir/controller.properties")
        cat > "$dir/controller.properties" <<CONF
node.id=$id
process.roles=controller
listeners=CONTROLLER://$(node_host "$id"):$(ctl_rpc_port "$id")
metrics.port=$(ctl_metrics_port "$id")
controller.quorum.voters=$(voters)
controller.quorum.raft.voters=$(raft_voters)
controller.quorum.raft.secret=$(raft_secret)
metadata.log.dir=$dir/metadata
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=3000
num.partitions=1
default.replication.factor=3
CONF
    else
        mkdir -p "$dir/logs"
        cat > "$dir/broker.properties" <<CONF
node.id=$id
process.roles=broker
listeners=PLAINTEXT://$(node_host "$id"):$(broker_port "$id")
metrics.port=$(broker_metrics_port "$id")
controller.quorum.voters=$(voters)
log.dirs=$dir/logs
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=3000
min.insync.replicas=2
replica.lag.time.max.ms=5000
group.initial.rebalance.delay.ms=0
log.retention.check.interval.ms=10000
CONF
    fi
    # Settings a harness adds to a new node's file (later lines win).
    local extra
    if [ "$kind" = controller ]; then
        extra=${CAIRN_CONTROLLER_CONFIG:-}
    else
        extra=${CAIRN_BROKER_CONFIG:-}
    fi
    if [ -n "$extra" ]; then
        printf '%s\n' "$extra" >> "$dir/$kind.properties"
    fi
}

start_node() {
    local node=$1 kind dir
    kind=$(node_kind "$node")
    if node_pid "$node" >/dev/null; then
        return 0
    fi
    [ -x "$BIN/cairn-$kind" ] || die "$BIN/cairn-$kind is missing: run make"
    write_config "$node"
    dir=$(node_dir "$node")
    local in=()
    if [ -n "$NETNS" ]; then
        local i=${node#*-}
        [ "$i" -gt 100 ] && i=$((i - 100))
        in=(ip netns exec "$NETNS-h$i")
    fi
    # CAIRN_BROKER_PRELOAD: jepsen/durable's recorder for the power-loss
    # model (jepsen/powerloss.py); its journal and slow-disk switch live
    # beside the broker's logs.
    if [ "$kind" = broker ] && [ -n "${CAIRN_BROKER_PRELOAD:-}" ]; then
        in+=(env "LD_PRELOAD=$CAIRN_BROKER_PRELOAD"
             "CAIRN_DURABLE_JOURNAL=$dir/durable.journal"
             "CAIRN_DURABLE_ROOT=$dir/logs"
             "CAIRN_DURABLE_SLOW=$dir/disk.slow")
    fi
    setsid "${in[@]}" "$BIN/cairn-$kind" "$dir/$kind.properties" \
        >>"$(log_file "$node")" 2>&1 < /dev/null &
    echo $! > "$(pid_file "$node")"
}

signal_node() {
    local node=$1 sig=$2 pid
    node_kind "$node" >/dev/null
    pid=$(node_pid "$node") || die "$node is not running"
    kill "-$sig" "$pid"
}

wait_exit() {
    local pid=$1 deadline=$((SECONDS + $2))
    while kill -0 "$pid" 2>/dev/null; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.1
    done
    return 0
}

stop_node() {
    local node=$1 pid
    pid=$(node_pid "$node") || return 0
    kill -TERM "$pid"
    kill -CONT "$pid" 2>/dev/null # a paused node acts on the TERM too
    if ! wait_exit "$pid" 30; then
        echo "cluster: $node did not stop in 30 s, sending SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$(pid_file "$node")"
}

all_nodes() {
    local id
    for id in "${CONTROLLERS[@]}"; do echo "controller-$id"; done
    for id in "${BROKERS[@]}"; do echo "broker-$id"; done
}

cairn_status() {
    "$BIN/cairn" --controllers "$(voters)" status "$@"
}

# The status goes through a file, not an argument: with thousands of
# partitions it is longer than an argument may be.
cluster_ready() {
    local json rc
    json=$(mktemp) || return 1
    if ! cairn_status --json > "$json" 2>/dev/null; then
        rm -f "$json"
        return 1
    fi
    /usr/bin/python3 -c '
import json, sys
with open(sys.argv[1]) as f:
    s = json.load(f)
active = any(c.get("active") for c in s.get("controllers", []))
brokers = [b for b in s.get("brokers", []) if not b.get("fenced")]
sys.exit(0 if active and len(brokers) >= int(sys.argv[2]) else 1)
' "$json" "${#BROKERS[@]}"
    rc=$?
    rm -f "$json"
    return $rc
}

# PORT's listener as "pid N (COMMAND LINE)", from ss (all processes as
# root, one's own otherwise); fails when nothing listens there.
port_holder() {
    local port=$1 line pid cmd
    if command -v ss >/dev/null 2>&1; then
        line=$(ss -Hltnp "sport = :$port" 2>/dev/null | head -n 1)
        [ -n "$line" ] || return 1
        pid=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' <<< "$line")
        if [ -z "$pid" ]; then
            echo "a process of another user (sudo ss -ltnp 'sport = :$port')"
            return 0
        fi
        cmd=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null || true)
        echo "pid $pid (${cmd% })"
        return 0
    fi
    port_free "$port" && return 1
    echo "an unknown process (no ss to name it)"
}

# NODE's listening ports, one "PORT WHAT" a line.
node_ports() {
    local node=$1 id=${1#*-}
    if [ "$(node_kind "$node")" = controller ]; then
        echo "$(ctl_rpc_port "$id") $node controller RPC"
        echo "$(ctl_raft_port "$id") $node Raft"
        echo "$(ctl_metrics_port "$id") $node metrics"
    else
        echo "$(broker_port "$id") $node Kafka listener"
        echo "$(broker_metrics_port "$id") $node metrics"
    fi
}

# Before anything starts: every port of a node that is not running must be
# free, else names each holder and exits 1 (nothing started). A running
# node of this cluster (its pid file under $DATA) owns its ports.
check_ports() {
    [ -n "$NETNS" ] && return 0 # each node has an address of its own
    local node port what holder busy=0
    for node in $(all_nodes); do
        node_pid "$node" >/dev/null && continue
        while read -r port what; do
            holder=$(port_holder "$port") || continue
            echo "cluster: port $port ($what) is in use by $holder" >&2
            busy=1
        done < <(node_ports "$node")
    done
    if [ $busy = 1 ]; then
        die "not started: stop what holds those ports, or move this" \
            "cluster with CAIRN_BASE_PORT (now $BASE)"
    fi
    # `cairn web` is run by hand later; only a note.
    if holder=$(port_holder $((BASE + 90))); then
        echo "cluster: note: port $((BASE + 90)) (cairn web) is in use by" \
            "$holder; give cairn web --port" >&2
    fi
}

# The last line of FILE past byte FROM that says what went wrong: an
# ERROR line or a "cairn-broker: ..." startup message, else the last line.
last_error_line() {
    local text
    text=$(tail -c +"$(($2 + 1))" "$1" 2>/dev/null |
        grep -v '^[[:space:]]*$' || true)
    local line
    line=$(grep -E ' (ERROR|FATAL) |^cairn-[a-z]+: ' <<< "$text" |
        tail -n 1 || true)
    [ -n "$line" ] || line=$(tail -n 1 <<< "$text")
    echo "${line:-(its log is empty)}"
}

# Fails (1) when a node this `up` started has died, naming each with the
# last error line its log got since. STARTED: "NODE LOG_OFFSET" lines.
report_dead() {
    local node from dead=0 pid
    while read -r node from; do
        [ -n "$node" ] || continue
        node_pid "$node" >/dev/null && continue
        pid=$(cat "$(pid_file "$node")" 2>/dev/null || true)
        echo "cluster: $node (pid ${pid:-?}) died at start:" \
            "$(last_error_line "$(log_file "$node")" "$from")" >&2
        dead=1
    done <<< "$1"
    return $dead
}

cmd_up() {
    [ -x "$BIN/cairn" ] || die "$BIN/cairn is missing: run make"
    mkdir -p "$DATA"
    local node from started="" n_running=0 n_nodes=0
    for node in $(all_nodes); do
        n_nodes=$((n_nodes + 1))
        node_pid "$node" >/dev/null && n_running=$((n_running + 1))
    done
    check_ports
    # Marks this cluster as a lab bench: `cairn web` on 127.0.0.1 serving
    # this base port offers its buttons (cli/cmd/web/lab.h).
    echo "base_port=$BASE" > "$DATA/lab"
    if [ -n "$NETNS" ]; then
        "$ROOT/deploy/netns.sh" up "$NETNS" "${#BROKERS[@]}" >/dev/null
    fi
    for node in $(all_nodes); do
        node_pid "$node" >/dev/null && continue
        mkdir -p "$(node_dir "$node")"
        from=$(stat -c %s "$(log_file "$node")" 2>/dev/null || echo 0)
        started+="$node $from"$'\n'
        start_node "$node"
    done
    [ "$n_running" = "$n_nodes" ] &&
        echo "cluster: already up (all $n_nodes nodes of $DATA are running)"
    local deadline=$((SECONDS + WAIT_S))
    until cluster_ready; do
        report_dead "$started" ||
            die "not up (deploy/cluster.sh down stops what still runs);" \
                "logs in $DATA/*/"
        if [ $SECONDS -ge $deadline ]; then
            echo "cluster: not ready after ${WAIT_S}s; logs in $DATA/*/" >&2
            exit 1
        fi
        sleep 0.2
    done
    report_dead "$started" ||
        die "not up (deploy/cluster.sh down stops what still runs); logs" \
            "in $DATA/*/"
    cairn_status
    echo "bootstrap.servers=$(bootstrap)"
}

cmd_down() {
    local id
    for id in "${BROKERS[@]}"; do stop_node "broker-$id"; done
    for id in "${CONTROLLERS[@]}"; do stop_node "controller-$id"; done
}

cmd_add() {
    local node=$1 id
    [[ "$node" =~ ^broker-[4-9]$ ]] || die "add: expected broker-4 .. broker-9"
    id=${node#broker-}
    mkdir -p "$DATA"
    if ! grep -qx "$id" "$EXTRA_BROKERS_FILE" 2>/dev/null; then
        port_free_or_die "$(broker_port "$id")"
        port_free_or_die "$(broker_metrics_port "$id")"
        echo "$id" >> "$EXTRA_BROKERS_FILE"
        BROKERS+=("$id")
    fi
    start_node "$node"
    local deadline=$((SECONDS + WAIT_S))
    until cluster_ready; do
        if [ $SECONDS -ge $deadline ]; then
            echo "cluster: $node not registered after ${WAIT_S}s; see $(log_file "$node")" >&2
            exit 1
        fi
        sleep 0.2
    done
    echo "added $node (pid $(cat "$(pid_file "$node")")) on $(node_host "$id"):$(broker_port "$id")"
}

port_free_or_die() {
    local holder
    if holder=$(port_holder "$1"); then
        die "port $1 is in use by $holder"
    fi
}

case "${1:-}" in
    up) cmd_up ;;
    add) cmd_add "${2:?NODE}" ;;
    down) cmd_down ;;
    status) shift; cairn_status "$@" ;;
    events)
        since=${2:-}
        for f in "$DATA"/*/*.log; do
            [ -f "$f" ] || continue
            n=$(basename "$f" .log)
            { grep -h " event: " "$f" || true; } |
                sed -e "s/ routine event: / event: (routine) /" \
                    -e "s/^\([^ ]*\) [A-Z]* [a-z]* [^ ]* event: /\1 $n: /"
        done | awk -v s="$since" '$1 >= s' | sort
        ;;
    kill)
        # Returns once the process is gone (or a zombie), so that a
        # `start` right after it starts a new one.
        pid=$(node_pid "${2:?NODE}") || die "$2 is not running"
        signal_node "$2" KILL
        deadline=$((SECONDS + 10))
        while kill -0 "$pid" 2>/dev/null && ! is_zombie "$pid"; do
            [ $SECONDS -ge $deadline ] && die "$2 (pid $pid) outlived SIGKILL"
            sleep 0.05
        done
        ;;
    stop) node_kind "${2:?NODE}" >/dev/null; stop_node "$2" ;;
    start)
        if pid=$(node_pid "${2:?NODE}"); then
            echo "${2} is already running (pid $pid)"
        else
            start_node "$2"
            echo "started ${2} (pid $(cat "$(pid_file "$2")"))"
        fi
        ;;
    pause) signal_node "${2:?NODE}" STOP ;;
    resume) signal_node "${2:?NODE}" CONT ;;
    pid) node_kind "${2:?NODE}" >/dev/null; node_pid "$2" || die "$2 is not running" ;;
    logs) node_kind "${2:?NODE}" >/dev/null; cat "$(log_file "$2")" ;;
    *) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2 ;;
esac
