#!/usr/bin/env bash
# Lesson: a broker stopped politely (SIGTERM) asks the controller for a
# controlled shutdown: its leaderships move to other in-sync replicas
# before it exits, so clients never wait for a session to expire.
#     deploy/scenarios/controlled-shutdown.sh      (KEEP=1 keeps the logs)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
lesson_up
lesson_topic 100
say "lesson-0 is led by broker $leader, ISR $isr"

say "stopping broker $leader with SIGTERM (deploy/cluster.sh stop)"
mark
started=$SECONDS
"$CLUSTER" stop "broker-$leader" || fail "stop"
note "it exited after $((SECONDS - started)) s"
wait_event 5 "broker $leader in controlled shutdown \(broker $leader asked for a controlled shutdown\)"
wait_event 5 "lesson-0 leader $leader -> [0-9]+ epoch [0-9]+ -> [0-9]+.*\(broker $leader asked for a controlled shutdown; rule: first live ISR member of replicas [0-9,]+, chose [0-9]+\)"
note "the move was the shutdown's, not a session expiry's: no timeout to wait for"
seq 101 200 | cairn produce lesson --acks all >/dev/null 2>&1 ||
    fail "writes stopped"
note "writes go on with the two replicas left"

say "starting broker $leader again"
mark
"$CLUSTER" start "broker-$leader"
wait_event 20 "broker $leader unfenced"
wait_event 20 "lesson-0 isr [0-9,]+ -> [0-9,]+ at partition epoch [0-9]+ \(replica $leader caught up"
lesson_done
