#!/usr/bin/env bash
# Lesson: the high watermark stops while the ISR is smaller than
# min.insync.replicas (2 here). With two of three replicas gone, acks=all
# writes are refused (NOT_ENOUGH_REPLICAS) rather than acknowledged on one
# copy; when a replica returns and catches up, the HW moves again.
#     deploy/scenarios/hw-stall.sh      (KEEP=1 keeps the logs)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
lesson_up
lesson_topic 50
say "lesson-0: leader $leader, ISR $isr, HW $hw; min.insync.replicas=2"

say "killing both followers ($followers)"
mark
for f in $followers; do "$CLUSTER" kill "broker-$f"; done
wait_event 20 "lesson-0 hw stalled at [0-9]+ \(isr $leader: 1 < min.insync.replicas=2"
if seq 51 60 | cairn produce lesson --acks all --timeout-ms 4000 \
        >/dev/null 2>&1; then
    fail "an acks=all write was acknowledged with one replica in sync"
fi
note "an acks=all write fails: the leader answers NOT_ENOUGH_REPLICAS"

first=${followers%% *}
say "starting broker $first again"
mark
"$CLUSTER" start "broker-$first"
wait_event 30 "lesson-0 hw moves again from [0-9]+ \(isr [0-9,]+: 2 >= min.insync.replicas=2"
seq 61 70 | cairn produce lesson --acks all >/dev/null 2>&1 ||
    fail "acks=all still failing with two replicas in sync"
read -r leader isr hw < <(part_state lesson 0)
note "acks=all works again: leader $leader, ISR $isr, HW $hw"
for f in $followers; do "$CLUSTER" start "broker-$f" >/dev/null; done
lesson_done
