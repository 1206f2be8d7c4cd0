#!/usr/bin/env bash
# Lesson: unclean leader election, off and on. Two topics, each RF 2 with
# min.insync.replicas=1: the follower dies, the leader takes 20 more
# writes alone (acks=all is satisfied by an ISR of one), then the leader
# dies and the stale follower comes back.
#   clean   (unclean.leader.election.enable=false, Kafka's default): the
#           partition stays offline; nothing acknowledged is lost, but
#           nothing can be read or written until the old leader returns.
#   unclean (=true): the stale follower is made leader; the partition is
#           back at once, and the 20 writes only the old leader had are
#           gone, although they were acknowledged.
#     deploy/scenarios/unclean-election.sh      (KEEP=1 keeps the logs)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
lesson_up

# topic_end TOPIC: the partition's HW on its leader (what consumers can
# read), or "offline".
topic_end() {
    local l h
    read -r l _ h < <(part_state "$1" 0)
    if [ "${l:-0}" -le 0 ]; then echo offline; else echo "$h"; fi
}
hw_is() { [ "$(topic_end "$1")" = "$2" ]; } # TOPIC HW

run() { # TOPIC UNCLEAN
    local t=$1 leader isr hw follower
    cairn topics create "$t" --partitions 1 --replication-factor 2 \
        --config min.insync.replicas=1 \
        --config "unclean.leader.election.enable=$2" >/dev/null ||
        fail "topics create $t"
    wait_until 20 isr_is 2 "$t" 0 || fail "$t never had a full ISR"
    seq 1 10 | cairn produce "$t" --acks all >/dev/null 2>&1 || fail "produce"
    read -r leader isr hw < <(part_state "$t" 0)
    follower=$(tr ',' '\n' <<< "$isr" | grep -vx "$leader")
    say "$t (unclean.leader.election.enable=$2): leader $leader, follower $follower, 10 records"

    mark
    "$CLUSTER" kill "broker-$follower"
    wait_event 20 "$t-0 isr [0-9,]+ -> $leader \(broker $follower fenced"
    seq 11 30 | cairn produce "$t" --acks all >/dev/null 2>&1 ||
        fail "acks=all with an ISR of one and min.insync.replicas=1"
    hw_is "$t" 30 || fail "$t: HW $(topic_end "$t"), expected 30"
    note "follower $follower killed; 20 more acknowledged by leader $leader alone (HW 30)"

    mark
    "$CLUSTER" kill "broker-$leader"
    wait_event 20 "$t-0 leader $leader -> none epoch [0-9]+ -> [0-9]+, offline: no live replica in the ISR"
    note "leader $leader killed: the ISR held only it"

    mark
    "$CLUSTER" start "broker-$follower"
    wait_event 30 "broker $follower unfenced"
    if [ "$2" = false ]; then
        # The unfencing and any election are one metadata batch: the
        # partition would have a leader by now.
        [ "$(topic_end "$t")" = offline ] ||
            fail "$t has a leader: only stale replica $follower is alive"
        note "broker $follower is back, but not in the ISR: $t-0 stays OFFLINE"
        mark
        "$CLUSTER" start "broker-$leader"
        wait_event 30 "$t-0 leader none -> $leader epoch"
        wait_until 30 hw_is "$t" 30 ||
            fail "$t: HW $(topic_end "$t") with leader $leader back, expected 30"
        note "leader $leader back: $t-0 online with all 30 records"
    else
        wait_event 10 "$t-0 leader none -> $follower epoch [0-9]+ -> [0-9]+, isr $leader -> $follower, unclean: $follower was not in the ISR $leader"
        n=$(cairn consume "$t" --from-beginning --exit-at-end 2>/dev/null | wc -l)
        [ "$n" = 10 ] || fail "$t: read $n records after the unclean election, expected 10"
        note "$t-0 led by stale broker $follower: online, but it has 10 records; 20 acknowledged writes are lost"
        "$CLUSTER" start "broker-$leader" >/dev/null # for the next topic
    fi
}

run clean false
run unclean true
lesson_done
