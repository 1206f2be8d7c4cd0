#!/usr/bin/env bash
# Lesson: a follower that stops fetching falls out of the ISR after
# replica.lag.time.max.ms (2 s here), and acks=all writes that were
# waiting for it are released by that ISR shrink, not failed: the two
# replicas left still meet min.insync.replicas=2. The follower comes back,
# catches up, and rejoins the ISR.
#     deploy/scenarios/follower-lag.sh      (KEEP=1 keeps the logs)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
# A lag limit shorter than the session timeout: the paused follower is
# still registered (its session has not expired), it is only behind.
export CAIRN_BROKER_CONFIG="replica.lag.time.max.ms=2000"
export CAIRN_CONTROLLER_CONFIG="broker.session.timeout.ms=15000"
lesson_up
lesson_topic 100
lagger=${followers%% *}
say "lesson-0: leader $leader, ISR $isr, HW $hw; broker $lagger will lag"

say "pausing broker $lagger (SIGSTOP), then 10 records with acks=all"
mark
"$CLUSTER" pause "broker-$lagger"
seq 101 110 | cairn produce lesson --acks all >/dev/null 2>&1 &
producer=$!
note "the leader holds them until every ISR replica has them: $lagger never fetches"
wait_event 15 "lesson-0 isr [0-9,]+ -> [0-9,]+ proposed \(replica $lagger not caught up for [0-9]+ ms > replica.lag.time.max.ms=2000"
wait_event 10 "lesson-0 acks=all released [0-9]+ requests? after up to [0-9]+ ms: hw [0-9]+ passed offset [0-9]+ when the ISR went from [0-9,]+ to [0-9,]+"
wait "$producer" || fail "the acks=all writes failed; two replicas were in sync"
read -r l isr hw < <(part_state lesson 0)
note "all 10 acknowledged; cairn status: leader $l, ISR $isr, HW $hw"

say "resuming broker $lagger"
mark
"$CLUSTER" resume "broker-$lagger"
wait_event 20 "lesson-0 isr [0-9,]+ -> [0-9,]+ at partition epoch [0-9]+ \(replica $lagger caught up"
read -r l isr hw < <(part_state lesson 0)
note "cairn status: leader $l, ISR $isr, HW $hw"
lesson_done
