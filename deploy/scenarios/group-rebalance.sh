#!/usr/bin/env bash
# Lesson: a consumer group shares a topic's partitions among its members,
# rebalancing (a new generation) whenever one joins or leaves. Committed
# offsets belong to the group, not to a member: when every member is gone
# they stay, and the next member starts where the group left off.
#     deploy/scenarios/group-rebalance.sh      (KEEP=1 keeps the logs)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
lesson_up
cairn topics create orders --partitions 4 --replication-factor 3 >/dev/null ||
    fail "topics create"
wait_until 20 isr_is 3 orders 3 || fail "orders never had a full ISR"
seq 1 400 | sed 's/^/k&:/; s/^k\([0-9]*\):/k\1:\1/' |
    cairn produce orders --key-separator : >/dev/null || fail "produce"
say "topic orders: 4 partitions, 400 keyed records"

consumers=()
stop_consumers() { for c in "${consumers[@]}"; do kill -INT "$c" 2>/dev/null; done; }
trap 'stop_consumers; cleanup' EXIT

say "consumer A joins group readers"
mark
"$BIN/cairn" consume orders --group readers --from-beginning > "$DATA/a.out" 2>/dev/null &
a=$!; consumers+=("$a")
wait_event 30 "group readers stable at generation 1, 1 member"
note "one member: it is given all 4 partitions"

say "consumer B joins: the group rebalances"
mark
"$BIN/cairn" consume orders --group readers --from-beginning > "$DATA/b.out" 2>/dev/null &
b=$!; consumers+=("$b")
wait_event 30 "group readers rebalancing at generation 1, 2 members \(member .* joined\)"
wait_event 30 "group readers generation 2: 2 members, leader .*, protocol range"
wait_event 30 "group readers stable at generation 2, 2 members"
note "each member now reads 2 of the 4 partitions"
wait_until 30 bash -c '[ $(cat "$1"/a.out "$1"/b.out | sort -u | wc -l) -ge 400 ]' _ "$DATA" ||
    fail "A and B did not read all 400 records"
note "together they read all 400"

say "consumer A leaves (SIGINT: it commits, then sends LeaveGroup)"
mark
kill -INT "$a"; wait "$a"
wait_event 30 "group readers rebalancing at generation 2, 1 member \(member .* left \(LeaveGroup\)\)"
wait_event 30 "group readers stable at generation 3, 1 member"
note "B alone has all 4 partitions again, from the offsets the group committed"

say "100 more records; B reads them; then B leaves too"
seq 401 500 | sed 's/^/k&:/; s/^k\([0-9]*\):/k\1:\1/' |
    cairn produce orders --key-separator : >/dev/null || fail "produce"
wait_until 30 bash -c '[ $(cat "$1"/a.out "$1"/b.out | sort -u | wc -l) -ge 500 ]' _ "$DATA" ||
    fail "B did not read the 100 new records"
mark
kill -INT "$b"; wait "$b"
wait_event 30 "group readers empty at generation [0-9]+ \(member .* left \(LeaveGroup\)\); its committed offsets stay"
lag=$(cairn groups describe readers --json | /usr/bin/python3 -c "
import json, sys
d = json.load(sys.stdin)
print(sum(p['lag'] for p in d['offsets']))" 2>/dev/null)
[ "$lag" = 0 ] || fail "the empty group's lag is '$lag', not 0"
note "cairn groups describe readers: no members, committed offsets at the HW, lag 0"

say "50 more records, then consumer C joins the empty group"
seq 501 550 | sed 's/^/k&:/; s/^k\([0-9]*\):/k\1:\1/' |
    cairn produce orders --key-separator : >/dev/null || fail "produce"
cairn consume orders --group readers --from-beginning --count 50 \
    > "$DATA/c.out" 2>/dev/null || fail "consumer C"
[ "$(sort -n "$DATA/c.out" | tr '\n' ' ')" = "$(seq 501 550 | tr '\n' ' ')" ] ||
    fail "C read something other than records 501-550: $(head -c 200 "$DATA/c.out")"
note "C read exactly records 501-550: --from-beginning only applies where the group has no offset"
lesson_done
