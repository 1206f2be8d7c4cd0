#!/usr/bin/env bash
# Lesson: a consumer reads up to the high watermark, never past it. With
# both followers gone the leader still takes acks=1 writes, so its log
# runs ahead of the HW (which stays put: the ISR is below
# min.insync.replicas=2). A consumer from the beginning stops at the HW;
# the records above it are in the leader's log but not yet safe, because
# a new leader might not have them. Once a follower is back and caught
# up, the HW moves and the same consumer reads them.
#     deploy/scenarios/consumer-at-hw.sh      (KEEP=1 keeps the logs)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
lesson_up
lesson_topic 100
say "lesson-0: leader $leader, ISR $isr, HW $hw"

# leader_end TOPIC PARTITION: the leader's log end offset, from cairn
# status --json ("-" while unknown).
leader_end() {
    cairn status --json 2>/dev/null | /usr/bin/python3 -c "
import json, sys
s = json.load(sys.stdin)
for t in s['topics']:
    if t['name'] == sys.argv[1]:
        p = t['partitions'][int(sys.argv[2])]
        ends = {e['id']: e['end_offset'] for e in p.get('end_offsets', [])}
        e = ends.get(p['leader'])
        print('-' if e is None else e)" "$1" "$2"
}
leader_end_is() { [ "$(leader_end lesson 0)" = "$1" ]; }
read_count() {
    cairn consume lesson --from-beginning --exit-at-end 2>/dev/null | wc -l
}
reads_all() { [ "$(read_count)" = 120 ]; }

say "killing both followers ($followers); the leader keeps taking acks=1 writes"
mark
for f in $followers; do "$CLUSTER" kill "broker-$f"; done
wait_event 20 "lesson-0 hw stalled at 100 \(isr $leader: 1 < min.insync.replicas=2"
seq 101 120 | cairn produce lesson --acks 1 >/dev/null ||
    fail "acks=1 writes refused"
wait_until 20 leader_end_is 120 ||
    fail "the leader's log end is $(leader_end lesson 0), not 120"
read -r leader isr hw < <(part_state lesson 0)
[ "$hw" = 100 ] || fail "the HW is $hw, not 100"
note "the leader's log ends at 120, its HW is $hw: offsets 100..119 are"
note "written on one broker only"

n=$(read_count)
[ "$n" = 100 ] || fail "a consumer from the beginning read $n records, not 100"
note "a consumer from the beginning reads $n records and is at the end:"
note "its end is the HW (Kafka's high watermark), not the leader's log end"

first=${followers%% *}
say "starting broker $first again: it catches up, rejoins the ISR, the HW moves"
mark
"$CLUSTER" start "broker-$first"
wait_event 30 "lesson-0 hw moves again from 100 \(isr [0-9,]+: 2 >= min.insync.replicas=2"
wait_until 30 reads_all || fail "the consumer still does not read 120 records"
read -r leader isr hw < <(part_state lesson 0)
note "HW $hw, ISR $isr: the same consumer now reads all 120 records"
for f in $followers; do "$CLUSTER" start "broker-$f" >/dev/null; done
lesson_done
