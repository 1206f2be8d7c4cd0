#!/usr/bin/env bash
# Lesson: the controllers are a Raft quorum of three. Kill the active one
# and another is elected (a new term) within an election timeout; brokers
# follow the new one and metadata changes go on. Kill a second one and the
# quorum is lost: nobody can change metadata (a topic cannot be created),
# but brokers keep serving reads and writes with what they have.
#     deploy/scenarios/controller-failover.sh      (KEEP=1 keeps the logs)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
lesson_up
lesson_topic 50

# active_controller: the id of the controller that says it is active.
active_controller() {
    cairn status --json 2>/dev/null | /usr/bin/python3 -c "
import json, sys
print(next((c['id'] for c in json.load(sys.stdin)['controllers']
            if c.get('active')), ''))"
}
first=$(active_controller)
[ -n "$first" ] || fail "no active controller"
say "controller $first is active; lesson-0 is led by broker $leader"

say "killing controller $first"
mark
"$CLUSTER" kill "controller-$first"
line=$(wait_event 20 "controller [0-9]+ elected at term [0-9]+") || exit 1
printf '%s\n' "$line"
second=$(sed -nE 's/.*controller ([0-9]+) elected at term.*/\1/p' <<< "$line")
[ -n "$second" ] && [ "$second" != "$first" ] || fail "no other controller elected"
note "Raft elected controller $second (a new term: every vote is for one term)"
cairn topics create after-failover --partitions 1 --replication-factor 3 \
    >/dev/null || fail "the new controller does not create topics"
note "controller $second creates topics: the metadata log goes on"

say "killing controller $second too: one of three left, no majority"
"$CLUSTER" kill "controller-$second"
if cairn topics create no-quorum --partitions 1 --replication-factor 3 \
        >/dev/null 2>&1; then
    fail "a topic was created without a quorum"
fi
note "topics create fails: no controller can commit to the metadata log"
seq 51 100 | cairn produce lesson --acks all >/dev/null 2>&1 ||
    fail "writes stopped without the controllers"
n=$(cairn consume lesson --from-beginning --exit-at-end 2>/dev/null | wc -l)
[ "$n" = 100 ] || fail "read $n records, expected 100"
note "but brokers still take acks=all writes and serve reads: 100 records"

say "starting both controllers again"
mark
"$CLUSTER" start "controller-$first" >/dev/null
"$CLUSTER" start "controller-$second" >/dev/null
wait_event 30 "controller [0-9]+ elected at term [0-9]+"
# created, or created by an attempt that timed out on the client first
created() {
    cairn topics create no-quorum --partitions 1 --replication-factor 3 \
        >/dev/null 2>&1 || cairn topics list 2>/dev/null | grep -qx no-quorum
}
wait_until 30 created || fail "topics create still fails with the quorum back"
note "a quorum again: topic no-quorum created"
lesson_done
