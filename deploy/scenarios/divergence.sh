#!/usr/bin/env bash
# Lesson: divergent logs and truncation on rejoin (KIP-101/279). With both
# followers stopped, the leader takes writes with acks=1 that nobody else
# has; it dies, a follower leads the next epoch, and the old leader, back,
# finds its log diverged where that epoch began and truncates it away.
# Those acks=1 writes are gone: only acks=all promises survival.
# `cairn dump-log` shows the divergent batches (offsets 100.. written in
# the old epoch) in the old leader's directory, then the new epoch's
# batches at the same offsets once it has truncated and caught up.
#     deploy/scenarios/divergence.sh      (KEEP=1 keeps the logs)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
# Followers' fetches parked at the leader are answered (empty) within
# 50 ms, so nothing written after the pause reaches them; sessions and the
# lag limit long enough that the paused followers stay in the ISR.
export CAIRN_BROKER_CONFIG="replica.fetch.wait.max.ms=50
broker.session.timeout.ms=10000
replica.lag.time.max.ms=10000"
export CAIRN_CONTROLLER_CONFIG="broker.session.timeout.ms=10000"
lesson_up
lesson_topic 100
say "lesson-0: leader $leader, followers $followers, HW $hw"

say "pausing both followers, then 20 records with acks=1 to the leader"
for f in $followers; do "$CLUSTER" pause "broker-$f"; done
sleep 1 # their parked fetches are answered, empty, within 50 ms
seq 101 120 | cairn produce lesson --acks 1 >/dev/null 2>&1 ||
    fail "acks=1 produce"
note "the leader holds 120 records, its followers 100"

say "killing the leader, resuming the followers"
mark
"$CLUSTER" kill "broker-$leader"
for f in $followers; do "$CLUSTER" resume "broker-$f"; done
note "the controller fences it once its session expires (10 s here)"
wait_event 30 "lesson-0 leader $leader -> [0-9]+ epoch [0-9]+ -> [0-9]+"
seq 201 205 | cairn produce lesson --acks all >/dev/null 2>&1 ||
    fail "acks=all produce to the new leader"
note "the new leader takes 5 records at offsets 100..104, in its epoch"

# batches DIR: "BASE-LAST epoch E" for each batch at offset 100 or more.
old_dir=$DATA/broker-$leader/logs/lesson-0
batches() {
    "$BIN/cairn" dump-log "$1" 2>/dev/null |
        sed -nE 's/^  position=[0-9]+ base_offset=([0-9]+) last_offset=([0-9]+) .*leader_epoch=([0-9]+) .*/\1-\2 epoch \3/p' |
        awk -F- '$1 >= 100'
}
before=$(batches "$old_dir")
grep -Eq "^1[01][0-9]-1[01][0-9] epoch 0$" <<< "$before" ||
    fail "cairn dump-log shows no batch of the old epoch at offset 100.. ($before)"
note "cairn dump-log $old_dir, the dead leader's batches from offset 100:"
while read -r b; do note "  $b"; done <<< "$before"

say "starting the old leader, broker $leader"
mark
"$CLUSTER" start "broker-$leader"
wait_event 30 "lesson-0 truncated 120 -> 100 \(leader [0-9]+ says epoch [0-9]+ ends at 100"
note "the 20 acks=1 records no replica but the old leader had are gone"
caught_up_new_epoch() {
    after=$(batches "$old_dir")
    grep -Eq "^104 epoch [1-9]|-104 epoch [1-9]" <<< "$after" &&
        ! grep -q " epoch 0$" <<< "$after"
}
wait_until 30 caught_up_new_epoch ||
    fail "after the truncation, its batches from offset 100 are not the new epoch's: $(batches "$old_dir")"
note "cairn dump-log again: from offset 100 it now holds the new epoch's batches:"
while read -r b; do note "  $b"; done <<< "$after"
lesson_done
