# Shared by the lessons in deploy/scenarios/: a cluster of their own
# (deploy/cluster.sh on free ports, in a temporary data directory, so a
# lesson runs beside `make cluster`), narration, and waits for the event
# lines a lesson promises, each with a deadline. A lesson that does not
# see what it narrates fails (exit 1); it always stops its cluster.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${CAIRN_BIN:-$ROOT/build/debug}
CLUSTER=$ROOT/deploy/cluster.sh

say() { printf '\n== %s\n' "$*"; }
note() { printf '   %s\n' "$*"; }
fail() { printf '\nLESSON FAILED: %s\n   (logs in %s)\n' "$*" "$DATA" >&2; exit 1; }

source "$ROOT/deploy/ports.sh" # port_free, pick_base

cleanup() {
    "$CLUSTER" down >/dev/null 2>&1
    if [ "${LESSON_OK:-0}" = 1 ] && [ -z "${KEEP:-}" ]; then
        rm -rf "$DATA"
    fi
}

# lesson_up: the cluster, with CAIRN_BROKER_CONFIG if the lesson set it.
lesson_up() {
    [ -x "$BIN/cairn-broker" ] || fail "$BIN/cairn-broker is missing: run make"
    DATA=$(mktemp -d "${TMPDIR:-/tmp}/cairn-lesson-XXXXXX")
    # deploy/run-lessons.sh gives each of its lanes a base of its own.
    CAIRN_BASE_PORT=${LESSON_BASE_PORT:-$(pick_base)} || fail "no free ports"
    export CAIRN_DATA=$DATA CAIRN_BIN=$BIN CAIRN_BASE_PORT CAIRN_WAIT_S=60
    trap cleanup EXIT
    say "starting a cluster of 3 controllers and 3 brokers (ports from $CAIRN_BASE_PORT)"
    "$CLUSTER" up > "$DATA/up.out" 2>&1 || fail "cluster.sh up: $(tail -3 "$DATA/up.out")"
}

cairn() { timeout 60 "$BIN/cairn" "$@"; }

# The partition's state from cairn status --json, as "leader isr hw"; hw
# is "unknown" while the leader does not say (a new leader answers only
# once its HW has reached the start of its epoch, KIP-207).
part_state() { # TOPIC PARTITION
    cairn status --json 2>/dev/null | /usr/bin/python3 -c "
import json, sys
s = json.load(sys.stdin)
for t in s['topics']:
    if t['name'] == sys.argv[1]:
        p = t['partitions'][int(sys.argv[2])]
        hw = p.get('hw')
        print(p['leader'], ','.join(map(str, p['isr'])),
              'unknown' if hw is None else hw)" "$1" "$2"
}

# isr_is N TOPIC PARTITION: the partition has a leader and N in-sync
# replicas.
isr_is() {
    local leader isr hw
    read -r leader isr hw < <(part_state "$2" "$3")
    [ -n "${leader:-}" ] && [ "$leader" -gt 0 ] &&
        [ "$(tr ',' '\n' <<< "$isr" | grep -c .)" = "$1" ]
}

# mark: later wait_events look only at lines logged from now on.
MARK=0000
mark() { MARK=$(date -u +%Y-%m-%dT%H:%M:%S.%3N); }

# wait_event SECONDS REGEX: until a node's log has a matching event line
# logged since the last mark; prints it.
wait_event() {
    local deadline=$((SECONDS + $1)) line
    while [ $SECONDS -lt $deadline ]; do
        line=$(grep -hE "event: $2" "$DATA"/*/*.log 2>/dev/null |
               awk -v m="$MARK" '$1 >= m' | sort | head -n 1)
        if [ -n "$line" ]; then
            note "${line#* INFO }"
            return 0
        fi
        sleep 0.2
    done
    fail "no event matching '$2' within $1 s"
}

# wait_until SECONDS CMD...: until CMD succeeds.
wait_until() {
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.2
    done
}

# lesson_topic N: topic "lesson" (1 partition, RF 3) with a full ISR and
# N records written with acks=all; sets leader, isr, hw and followers.
lesson_topic() {
    cairn topics create lesson --partitions 1 --replication-factor 3 \
        >/dev/null || fail "topics create"
    wait_until 20 isr_is 3 lesson 0 || fail "the topic never had a full ISR"
    seq 1 "$1" | cairn produce lesson --acks all >/dev/null || fail "produce"
    read -r leader isr hw < <(part_state lesson 0)
    followers=$(tr ',' ' ' <<< "$isr" | xargs -n1 | grep -vx "$leader" | xargs)
}

# events_in_order SINCE REGEX...: cairn events --since SINCE has a line
# matching each REGEX, each after the one before; prints them.
events_in_order() {
    local since=$1 events line rest
    shift
    events=$(cairn events --since "$since" 2>/dev/null) || fail "cairn events"
    rest=$events
    for want in "$@"; do
        line=$(grep -m1 -E "$want" <<< "$rest") ||
            fail "cairn events has no line matching '$want' after the ones before"
        note "$line"
        rest=$(awk -v l="$line" 'found { print } $0 == l { found = 1 }' <<< "$rest")
    done
}

lesson_done() {
    LESSON_OK=1
    say "lesson complete"
}
