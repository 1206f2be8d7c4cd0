#!/usr/bin/env bash
# Runs every lesson of deploy/scenarios/ (`make scenarios`, part of `make
# test`) in LESSON_LANES lanes at once (default 2). A lane runs its
# lessons one after another on one base port of its own; the lanes' bases
# are at least LANE_GAP apart, so no two clusters meet (a cluster takes
# base+91 .. base+319). Each lesson's output goes to
# BUILD_DIR/lesson-NAME.log, and its last lines are shown if it fails.
#     deploy/run-lessons.sh BUILD_DIR
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:?usage: deploy/run-lessons.sh BUILD_DIR}" && pwd)
LANES=${LESSON_LANES:-2}
LANE_GAP=400
source "$ROOT/deploy/ports.sh" # pick_base

far_from_all() { # BASE: at least LANE_GAP from every base taken
    local o
    for o in "${bases[@]}"; do
        [ $(( $1 > o ? $1 - o : o - $1 )) -ge $LANE_GAP ] || return 1
    done
}
bases=()
for ((i = 0; i < LANES; i++)); do
    for _ in $(seq 1 100); do
        b=$(pick_base) || { echo "run-lessons: no free ports" >&2; exit 1; }
        far_from_all "$b" && { bases+=("$b"); break; }
    done
    [ ${#bases[@]} = $((i + 1)) ] || { echo "run-lessons: no free ports" >&2; exit 1; }
done

lessons=()
for s in "$ROOT"/deploy/scenarios/*.sh; do
    [ "$(basename "$s")" = lib.sh ] || lessons+=("$s")
done

# lane I: lessons I, I + LANES, ... one after another.
lane() {
    local i=$1 rc=0 k name log
    for ((k = i; k < ${#lessons[@]}; k += LANES)); do
        name=$(basename "${lessons[$k]}" .sh)
        log=$BUILD/lesson-$name.log
        echo "lesson $name"
        if ! LESSON_BASE_PORT=${bases[$i]} CAIRN_BIN=$BUILD "${lessons[$k]}" \
            >"$log" 2>&1; then
            echo "lesson $name FAILED (log $log):"
            tail -n 30 "$log"
            rc=1
        fi
    done
    return $rc
}

pids=()
for ((i = 0; i < LANES; i++)); do
    lane "$i" &
    pids+=($!)
done
failed=0
for p in "${pids[@]}"; do
    wait "$p" || failed=1
done
[ $failed = 0 ] && echo "scenarios: every lesson saw what it narrates"
exit $failed
