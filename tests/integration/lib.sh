# Shared by the shell integration tests: a local cluster on its own free
# ports and data directory (so tests pass beside `make cluster`), and
# PASS/FAIL bookkeeping ending in the line "NAME: N passed, M failed".
# Source it after setting TEST_NAME; then call cluster_up.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
passed=0
failed=0
fail_lines=()

check() {
    local name=$1; shift
    if "$@"; then
        passed=$((passed + 1)); echo "[PASS] $name"
    else
        failed=$((failed + 1)); echo "[FAIL] $name"
        fail_lines+=("[FAIL] $name")
    fi
}

# run_flow NAME SECONDS COMMAND...: runs a client program that prints
# its own [PASS]/[FAIL] lines, which count here; its output is kept in
# $DATA/NAME.out and its stderr in $DATA/NAME.err, shown when it failed.
# An exit other than 0 without a [FAIL] line is one failure more.
run_flow() {
    local name=$1 secs=$2 rc n_pass n_fail
    shift 2
    timeout "$secs" "$@" >"$DATA/$name.out" 2>"$DATA/$name.err"
    rc=$?
    cat "$DATA/$name.out"
    n_pass=$(grep -c '^\[PASS\]' "$DATA/$name.out")
    n_fail=$(grep -c '^\[FAIL\]' "$DATA/$name.out")
    passed=$((passed + n_pass))
    failed=$((failed + n_fail))
    mapfile -t -O "${#fail_lines[@]}" fail_lines < <(
        grep -A1 '^\[FAIL\]' "$DATA/$name.out" | grep -v '^--$')
    if [ $rc != 0 ] && [ "$n_fail" = 0 ]; then
        failed=$((failed + 1)); echo "[FAIL] $name exited $rc"
        fail_lines+=("[FAIL] $name exited $rc")
    fi
    if [ $rc != 0 ]; then
        echo "--- $name stderr:"; tail -n 40 "$DATA/$name.err"
    fi
}

# wait_for SECONDS COMMAND...: runs COMMAND (its output discarded) every
# 0.2 s until it succeeds, for SECONDS at most; its last status.
wait_for() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -ge "$deadline" ] && return 1
        sleep 0.2
    done
}

# After failures: each node's last warnings, then the failed checks and
# the first line of what they printed, last, so that the tail of a long
# log (all a CI page may keep) still says what failed and why.
failure_digest() {
    local log
    echo "--- $TEST_NAME: last warnings of each node"
    for log in "${DATA:-/nonexistent}"/*/*.log; do
        [ -f "$log" ] || continue
        grep -hE ' (WARN|ERROR) ' "$log" | tail -n 2 | cut -c1-200 |
            sed "s|^|$(basename "$log" .log): |"
    done
    echo "--- $TEST_NAME: failed checks"
    printf '%s\n' "${fail_lines[@]}" | cut -c1-240
}

summary() {
    [ "$failed" = 0 ] || failure_digest
    echo "$TEST_NAME: $passed passed, $failed failed"
    [ "$failed" = 0 ]
}

give_up() {
    echo "$TEST_NAME: $*"
    failed=$((failed + 1))
    summary
    exit 1
}

source "$ROOT/deploy/ports.sh" # port_free, pick_base

# CAIRN_KEEP_FAILED=1 keeps the data directory (logs and all) of a run
# with failures, and says where.
cluster_cleanup() {
    "$ROOT/deploy/cluster.sh" down >/dev/null 2>&1
    if [ "$failed" != 0 ] && [ "${CAIRN_KEEP_FAILED:-0}" = 1 ]; then
        echo "$TEST_NAME: kept $DATA"
        return
    fi
    rm -rf "$DATA"
}

# cluster_up BUILD_DIR: sets BIN, DATA, BOOT (Kafka bootstrap) and CTL
# (controller voters), starts the cluster and stops it at exit. Without
# "up", only prepares the variables.
cluster_up() {
    BIN=$(cd "${1:-$ROOT/build/debug}" && pwd)
    DATA=$(mktemp -d "${TMPDIR:-/tmp}/cairn-$TEST_NAME-XXXXXX")
    export CAIRN_DATA=$DATA CAIRN_BIN=$BIN CAIRN_WAIT_S=60
    local base
    base=$(pick_base) || give_up "no free port range"
    export CAIRN_BASE_PORT=$base
    BOOT=127.0.0.1:$((base + 91)),127.0.0.1:$((base + 92)),127.0.0.1:$((base + 93))
    CTL=101@127.0.0.1:$((base + 101)),102@127.0.0.1:$((base + 102)),103@127.0.0.1:$((base + 103))
    trap cluster_cleanup EXIT
    if [ "${2:-up}" = up ]; then
        cluster_start_or_give_up
    fi
}

# Starts the prepared cluster; on failure shows why before giving up.
cluster_start_or_give_up() {
    local out
    if out=$("$ROOT/deploy/cluster.sh" up 2>&1); then
        return 0
    fi
    echo "$out" | tail -n 20
    local f
    for f in "$DATA"/*/*.log; do
        echo "--- $f"
        tail -n 15 "$f"
    done
    give_up "cluster did not start"
}

# node_client_ready PACKAGE VERSION: the pinned Node client (tests/
# integration/clients/package-lock.json: kafkajs, @platformatic/kafka)
# under $CLIENTS, all of them installed with `npm ci` when this one is
# missing; gives up without node, npm or the right version.
node_client_ready() {
    CLIENTS=$ROOT/tests/integration/clients
    command -v node >/dev/null 2>&1 || give_up "node not found (install Node.js 20)"
    command -v npm >/dev/null 2>&1 || give_up "npm not found (install npm)"
    local pkg=$CLIENTS/node_modules/$1/package.json
    if [ ! -f "$pkg" ]; then
        echo "$TEST_NAME: installing $1 from $CLIENTS/package-lock.json"
        local out # (npm warns that two of @platformatic/kafka's own
        # dependencies name Node >= 22.19.0 in their engines; they run on 20)
        out=$(timeout 300 npm ci --prefix "$CLIENTS" --no-audit --no-fund 2>&1) || {
            echo "$out" | tail -n 20
            give_up "npm ci --prefix $CLIENTS failed"
        }
    fi
    local have
    have=$(node -p "require('$pkg').version") ||
        give_up "$1 is not installed under $CLIENTS/node_modules"
    [ "$have" = "$2" ] ||
        give_up "$1 $have installed, want $2 (rm -rf $CLIENTS/node_modules)"
}

KAFKAJS_VERSION=2.2.4
kafkajs_ready() { node_client_ready kafkajs "$KAFKAJS_VERSION"; }

# @platformatic/kafka needs Node >= 20.19.4 (its engines field).
PLATFORMATIC_VERSION=1.35.0
platformatic_ready() {
    node_client_ready @platformatic/kafka "$PLATFORMATIC_VERSION"
    node -e 'const [a, b, c] = process.versions.node.split(".").map(Number);
        process.exit(a > 20 || (a === 20 && (b > 19 || (b === 19 && c >= 4))) ? 0 : 1)' ||
        give_up "node $(node --version) is older than 20.19.4 (@platformatic/kafka)"
}

# wait_leader TOPIC: every broker in $BOOT names a leader for the topic's
# partition 0, within 15 s.
wait_leader() {
    local deadline=$((SECONDS + 15)) b ok
    while [ $SECONDS -lt $deadline ]; do
        ok=1
        for b in ${BOOT//,/ }; do
            timeout 10 kcat -b "$b" -L -t "$1" 2>/dev/null |
                grep -q "partition 0, leader [0-9]" || { ok=0; break; }
        done
        [ $ok = 1 ] && return 0
        sleep 0.1
    done
    return 1
}
