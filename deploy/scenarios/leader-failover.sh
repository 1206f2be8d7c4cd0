#!/usr/bin/env bash
# Lesson: a partition leader dies. The controller fences it when its
# session expires, moves leadership to another in-sync replica with a new
# leader epoch, and the ISR shrinks; writes go on. The broker comes back,
# catches up and rejoins the ISR.
#     deploy/scenarios/leader-failover.sh      (KEEP=1 keeps the logs)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
lesson_up
lesson_topic 100
say "lesson-0 is led by broker $leader, ISR $isr"
note "100 records written with acks=all"

say "killing the leader, broker $leader (SIGKILL: it cannot say goodbye)"
mark
"$CLUSTER" kill "broker-$leader"
note "the controller waits for its session to expire (broker.session.timeout.ms)"
wait_event 15 "broker $leader fenced \(session expired after"
wait_event 5 "lesson-0 leader $leader -> [0-9]+ epoch [0-9]+ -> [0-9]+.*\(broker $leader fenced: session expired after [0-9]+ ms; rule: first live ISR member of replicas [0-9,]+, chose [0-9]+\)"
read -r new isr hw < <(part_state lesson 0)
note "cairn status: leader $new, ISR $isr, HW $hw"
seq 101 200 | cairn produce lesson --acks all >/dev/null 2>&1 ||
    fail "writes stopped with two replicas in sync"
note "100 more records acknowledged by the two that are left"

say "starting broker $leader again"
mark
"$CLUSTER" start "broker-$leader"
wait_event 20 "broker $leader unfenced"
wait_event 20 "lesson-0 isr [0-9,]+ -> [0-9,]+ at partition epoch [0-9]+ \(replica $leader caught up"
read -r new isr hw < <(part_state lesson 0)
note "cairn status: leader $new, ISR $isr, HW $hw (leadership stays where it moved)"

say "the same story from the processes' memory: cairn events --since 5m"
events_in_order 5m \
    "lesson-0 leader $leader -> $new epoch .*\(broker $leader fenced: session expired" \
    "broker $leader unfenced" \
    "lesson-0 isr [0-9,]+ -> [0-9,]+ .*\(replica $leader caught up"
lesson_done
