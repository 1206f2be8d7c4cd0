#!/usr/bin/env bash
# The cairn command's Kafka side (librdkafka) against a local Cairn cluster
# (replication factor 1, min.insync.replicas=1: acks=all needs as many
# replicas as the minimum, as in Kafka): topics create/list/describe/delete through the
# Admin API, produce and consume round trips (keys, counts, --partition,
# --offset, acks and codecs), consume --group with its commits and groups
# list/describe/delete, keyed records on Kafka's murmur2 partition
# (checked against an independent Python murmur2 that first reproduces
# Kafka's own test vectors), the bootstrap fallback through --controllers,
# `cairn events` leaving the group coordinators' routine lines out (and
# --all showing them), a `cairn bench` smoke run, errors that say why:
# delete-records past the high watermark, acks=all below
# min.insync.replicas with a broker stopped (and its event and the
# produce metrics), and a restarted broker still serving its earlier
# events. Own free ports and data directory.
#     tests/integration/cli_kafka.sh BUILD_DIR
set -uo pipefail

TEST_NAME=cli_kafka
source "$(dirname "$0")/lib.sh"
unset CAIRN_BOOTSTRAP CAIRN_CONTROLLERS CAIRN_LOG
cluster_up "${1:-}" prepare
base=$CAIRN_BASE_PORT
CAIRN=(timeout 60 "$BIN/cairn" --bootstrap-servers "$BOOT")
OUT=$DATA/out
ERR=$DATA/err

cluster_start_or_give_up

# Kafka's murmur2 (Utils.murmur2) and default partition of each key read
# from stdin: prints "KEY PARTITION" lines for N partitions.
murmur2_partitions() {
    /usr/bin/python3 -c '
import sys
def murmur2(data):
    m, h = 0x5bd1e995, (0x9747b28c ^ len(data)) & 0xffffffff
    n4 = len(data) // 4
    for i in range(n4):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * m) & 0xffffffff
        k ^= k >> 24
        k = (k * m) & 0xffffffff
        h = ((h * m) & 0xffffffff) ^ k
    t = data[4 * n4:]
    if len(t) == 3: h ^= t[2] << 16
    if len(t) >= 2: h ^= t[1] << 8
    if len(t) >= 1: h = ((h ^ t[0]) * m) & 0xffffffff
    h ^= h >> 13
    h = (h * m) & 0xffffffff
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h
if sys.argv[1] == "vectors":
    # Kafka UtilsTest.testMurmur2
    want = {b"21": -973932308, b"foobar": -790332482,
            b"a-little-bit-long-string": -985981536,
            b"a-little-bit-longer-string": -1486304829,
            b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
            b"abc": 479470107}
    sys.exit(0 if all(murmur2(k) == v for k, v in want.items()) else 1)
n = int(sys.argv[1])
for line in sys.stdin:
    key = line.rstrip("\n")
    print(key, (murmur2(key.encode()) & 0x7fffffff) % n)
' "$@"
}

# --- Topics through the Admin API -----------------------------------------

topics_create() {
    "${CAIRN[@]}" topics create orders --partitions 3 --replication-factor 1 \
        --config retention.ms=3600000 --config min.insync.replicas=1 \
        > "$OUT" || return 1
    grep -qx "created topic orders" "$OUT"
}
check "topics create (CreateTopics)" topics_create

topics_create_exists() {
    "${CAIRN[@]}" topics create orders --partitions 3 2> "$ERR"
    [ $? = 1 ] && grep -q "TOPIC_ALREADY_EXISTS" "$ERR"
}
check "topics create of an existing topic names Kafka's error, exits 1" \
    topics_create_exists

topics_create_invalid() {
    "${CAIRN[@]}" topics create bad --partitions 1 --replication-factor 9 \
        2> "$ERR"
    [ $? = 1 ] && grep -q "INVALID_REPLICATION_FACTOR" "$ERR"
}
check "topics create with replication factor 9 of 3 brokers fails" \
    topics_create_invalid

topics_list() {
    "${CAIRN[@]}" topics list > "$OUT" && grep -qx "orders" "$OUT"
}
check "topics list (Metadata)" topics_list

topics_describe_text() {
    "${CAIRN[@]}" topics describe orders > "$OUT" || return 1
    grep -Eq "^orders +[A-Za-z0-9_-]{22} +3 +1 +(min.insync.replicas=1,retention.ms=3600000|retention.ms=3600000,min.insync.replicas=1)$" \
        "$OUT" &&
        [ "$(grep -Ec '^orders +[0-2] +[1-3] +[1-3] +[1-3]$' "$OUT")" = 3 ]
}
check "topics describe shows partitions, leaders and set configs" \
    topics_describe_text

topics_describe_json() {
    "${CAIRN[@]}" topics describe --json orders > "$OUT" || return 1
    /usr/bin/python3 - "$OUT" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["topics"]
ok = (len(t) == 1 and t[0]["name"] == "orders"
      and len(t[0]["topic_id"]) == 22 and t[0]["topic_id"][0] != "-"
      and t[0]["configs"] == {"retention.ms": "3600000",
                              "min.insync.replicas": "1"}
      and sorted(p["partition"] for p in t[0]["partitions"]) == [0, 1, 2]
      and all(p["leader"] in p["replicas"] for p in t[0]["partitions"]))
sys.exit(0 if ok else 1)
PY
}
check "topics describe --json (DescribeConfigs)" topics_describe_json

topics_describe_missing() {
    "${CAIRN[@]}" topics describe nosuch > /dev/null 2> "$ERR"
    [ $? = 1 ] && grep -q "UNKNOWN_TOPIC_OR_PARTITION" "$ERR"
}
check "topics describe of a missing topic exits 1" topics_describe_missing

# --- Produce and consume ---------------------------------------------------

round_trip() {
    seq 1 100 | "${CAIRN[@]}" produce orders --acks all || return 1
    "${CAIRN[@]}" consume orders --from-beginning --exit-at-end > "$OUT" ||
        return 1
    [ "$(sort -n "$OUT")" = "$(seq 1 100)" ]
}
check "produce 100 lines, consume them all back" round_trip

consume_count() {
    "${CAIRN[@]}" consume orders --from-beginning --count 10 > "$OUT" &&
        [ "$(wc -l < "$OUT")" = 10 ]
}
check "consume --count 10 stops after 10" consume_count

codec_trip() {
    local codec=$1 acks=$2 topic="codec-$1-$2"
    "${CAIRN[@]}" topics create "$topic" --partitions 2 >/dev/null ||
        return 1
    seq 1 500 | sed "s/^/$codec-/" |
        "${CAIRN[@]}" produce "$topic" --acks "$acks" --compression "$codec" ||
        return 1
    # --count, not --exit-at-end: with acks 0 or 1 the HW (where a
    # consumer's end is) may still trail the last acknowledged record.
    "${CAIRN[@]}" consume "$topic" --from-beginning --count 500 \
        > "$OUT" || return 1
    [ "$(sort "$OUT")" = "$(seq 1 500 | sed "s/^/$codec-/" | sort)" ]
}
check "round trip gzip acks=0" codec_trip gzip 0
check "round trip snappy acks=1" codec_trip snappy 1
check "round trip zstd acks=all" codec_trip zstd all

check "Python murmur2 reproduces Kafka's test vectors" \
    murmur2_partitions vectors

# Keyed records land on murmur2(key) % 3, as from a Java producer.
keyed_partitions() {
    "${CAIRN[@]}" topics create keyed --partitions 3 >/dev/null || return 1
    seq 1 300 | sed 's/.*/user-&:value-&/' |
        "${CAIRN[@]}" produce keyed --key-separator : || return 1
    local p want got
    want=$(seq 1 300 | sed 's/^/user-/' | murmur2_partitions 3 | sort)
    got=$(for p in 0 1 2; do
        "${CAIRN[@]}" consume keyed --partition "$p" --from-beginning \
            --exit-at-end --print-key --separator " " |
            awk -v p="$p" '{ v = $1; sub(/^user-/, "value-", v);
                             if ($2 != v) print "MISMATCH"; print $1, p }'
    done | sort)
    [ -n "$got" ] && [ "$got" = "$want" ]
}
check "keyed records land on Kafka's murmur2 partition" keyed_partitions

fixed_key() {
    printf 'a\nb\nc\n' | "${CAIRN[@]}" produce keyed --key fixed-key ||
        return 1
    local p
    p=$(echo fixed-key | murmur2_partitions 3 | cut -d' ' -f2)
    "${CAIRN[@]}" consume keyed --partition "$p" --offset -3 --exit-at-end \
        --print-key > "$OUT" || return 1
    [ "$(cat "$OUT")" = "$(printf 'fixed-key\ta\nfixed-key\tb\nfixed-key\tc')" ]
}
check "--key puts every record on the key's partition" fixed_key

partition_offset() {
    "${CAIRN[@]}" topics create po --partitions 2 >/dev/null || return 1
    seq 1 5 | "${CAIRN[@]}" produce po --partition 1 || return 1
    "${CAIRN[@]}" consume po --partition 1 --offset 2 --exit-at-end \
        > "$OUT" || return 1
    [ "$(cat "$OUT")" = "$(seq 3 5)" ] || return 1
    "${CAIRN[@]}" consume po --partition 0 --from-beginning --exit-at-end \
        > "$OUT" || return 1
    [ ! -s "$OUT" ]
}
check "produce --partition, consume --partition --offset" partition_offset

# cairn dump-log reads a broker's partition directory offline: the
# offsets produced, each batch's CRC, and a leader epoch that agrees with
# the partition's leader-epoch checkpoint. One replica, acks=1 (whatever
# min.insync.replicas says); the dump is retried until the five records
# are on disk, for 10 s at most.
dump_log_all() {
    "$BIN/cairn" dump-log --records "$1" > "$OUT" &&
        grep -q "^  batches=[12] records=5 next_offset=5$" "$OUT"
}

dump_log() {
    "${CAIRN[@]}" topics create dumped --partitions 1 \
        --replication-factor 1 >/dev/null || return 1
    seq 1 3 | "${CAIRN[@]}" produce dumped --acks 1 || return 1
    seq 4 5 | "${CAIRN[@]}" produce dumped --acks 1 || return 1
    local dir n epoch
    dir=$(find "$DATA" -type d -name dumped-0 | head -n 1)
    [ -n "$dir" ] || return 1
    wait_for 10 dump_log_all "$dir" || {
        cat "$OUT"
        return 1
    }
    grep -q "topic=dumped partition=0 segments=1$" "$OUT" || return 1
    [ "$(grep -c "^    | offset=" "$OUT")" = 5 ] || return 1
    for n in 0 1 2 3 4; do
        grep -q "^    | offset=$n .* value=\"$((n + 1))\"$" "$OUT" ||
            return 1
    done
    [ "$(grep "^  position=" "$OUT" | grep -vc " crc valid$")" = 0 ] ||
        return 1
    epoch=$(sed -n 's/^  epoch=\([0-9]*\) start_offset=0$/\1/p' "$OUT")
    [ -n "$epoch" ] &&
        ! grep "^  position=" "$OUT" | grep -qv " leader_epoch=$epoch "
}
check "dump-log shows the produced offsets, CRCs and leader epoch" dump_log

produce_unknown_topic() {
    echo x | "${CAIRN[@]}" produce nosuch 2> "$ERR"
    [ $? = 1 ] && grep -q "UNKNOWN_TOPIC_OR_PARTITION" "$ERR"
}
check "produce to a missing topic exits 1" produce_unknown_topic

usage_errors() {
    "$BIN/cairn" produce 2>/dev/null
    [ $? = 2 ] || return 1
    "$BIN/cairn" consume t --from-beginning --offset 3 2>/dev/null
    [ $? = 2 ] || return 1
    "$BIN/cairn" produce t --acks 2 2>/dev/null
    [ $? = 2 ]
}
check "bad command lines exit 2" usage_errors

# Scripts that name only the controllers find the brokers through them.
controllers_fallback() {
    timeout 60 "$BIN/cairn" --controllers "$CTL" topics list > "$OUT" &&
        grep -qx "orders" "$OUT"
}
check "--controllers alone finds the brokers" controllers_fallback

# --- Consumer groups ---------------------------------------------------------

# Checks `cairn groups describe G --json` (in $OUT) with a Python
# expression over d (the document), offs (its offsets) and members.
group_json() {
    "${CAIRN[@]}" groups describe "$1" --json > "$OUT" || return 1
    /usr/bin/python3 - "$OUT" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
offs, members = d["offsets"], d["members"]
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)
PY
}

# Polls (up to 30 s) until group $1 is Stable with $2 members that all
# have partitions (before the first join it does not exist: quiet).
wait_group_stable() {
    local i
    for i in $(seq 1 60); do
        group_json "$1" "d['state'] == 'Stable' and len(members) == $2 and
                         all(m['assignment'] for m in members)" 2>/dev/null &&
            return 0
        sleep 0.5
    done
    return 1
}

group_consume_all() {
    "${CAIRN[@]}" topics create grouped --partitions 4 >/dev/null || return 1
    seq 1 100 | sed 's/.*/key-&:&/' |
        "${CAIRN[@]}" produce grouped --key-separator : --acks all ||
        return 1
    "${CAIRN[@]}" consume grouped --group g1 --from-beginning --count 100 \
        > "$OUT" || return 1
    [ "$(sort -n "$OUT")" = "$(seq 1 100)" ]
}
check "consume --group g1 --from-beginning --count 100 reads all 100" \
    group_consume_all

groups_list() {
    "${CAIRN[@]}" groups list > "$OUT" && grep -qx "g1" "$OUT"
}
check "groups list shows g1 (ListGroups)" groups_list

check "groups describe --json: committed offsets sum to 100, lag 0" \
    group_json g1 "d['state'] == 'Empty' and not members and
                   len(offs) == 4 and
                   sorted(o['partition'] for o in offs) == [0, 1, 2, 3] and
                   sum(o['committed'] for o in offs) == 100 and
                   all(o['hw'] == o['committed'] for o in offs) and
                   all(o['lag'] == 0 for o in offs) and d['lag'] == 0"

groups_describe_text() {
    "${CAIRN[@]}" groups describe g1 > "$OUT" || return 1
    grep -Eq "^g1 +Empty +- +[1-3] +0 +0$" "$OUT" &&
        [ "$(grep -Ec '^grouped +[0-3] +[0-9]+ +[0-9]+ +0 +-$' "$OUT")" = 4 ]
}
check "groups describe shows state, members and offsets as text" \
    groups_describe_text

lag_after_produce() {
    seq 101 110 | sed 's/.*/key-&:&/' |
        "${CAIRN[@]}" produce grouped --key-separator : --acks all ||
        return 1
    group_json g1 "sum(o['lag'] for o in offs) == 10 and d['lag'] == 10 and
                   sum(o['hw'] for o in offs) == 110"
}
check "10 more records: the lags sum to 10" lag_after_produce

group_resumes() {
    "${CAIRN[@]}" consume grouped --group g1 --count 10 > "$OUT" ||
        return 1
    [ "$(sort -n "$OUT")" = "$(seq 101 110)" ] || return 1
    group_json g1 "sum(o['committed'] for o in offs) == 110 and
                   d['lag'] == 0"
}
check "consume --group g1 --count 10 reads exactly the 10 new records" \
    group_resumes

# Range: members sorted by id take contiguous ranges of the 4 partitions.
group_two_members() {
    local a=$DATA/member-a b=$DATA/member-b pa pb ok=0
    "${CAIRN[@]}" consume grouped --group g2 --from-beginning > "$a" &
    pa=$!
    "${CAIRN[@]}" consume grouped --group g2 --from-beginning > "$b" &
    pb=$!
    wait_group_stable g2 2 &&
        group_json g2 "d['protocol'] == 'range' and
            [sorted(p['partition'] for p in m['assignment'])
             for m in sorted(members, key=lambda m: m['member_id'])] ==
            [[0, 1], [2, 3]] and
            all(o['member_id'] for o in offs)" && ok=1
    if [ $ok = 1 ]; then
        "${CAIRN[@]}" groups delete g2 2> "$ERR"
        [ $? = 1 ] && grep -q "NON_EMPTY_GROUP" "$ERR" || ok=0
    fi
    # Both have read their partitions to the end before they are told to
    # stop (30 s at most), so what they commit is everything.
    local i
    for i in $(seq 1 60); do
        [ "$(cat "$a" "$b" | wc -l)" -ge 110 ] && break
        sleep 0.5
    done
    kill -INT "$pa" "$pb" 2>/dev/null
    wait "$pa" || ok=0
    wait "$pb" || ok=0
    [ $ok = 1 ] && [ "$(sort -n "$a" "$b")" = "$(seq 1 110)" ] || return 1
    group_json g2 "d['state'] == 'Empty' and
                   sum(o['committed'] for o in offs) == 110"
}
check "two range members split 0-1/2-3, commit what they read on SIGINT" \
    group_two_members

groups_delete() {
    "${CAIRN[@]}" groups delete g1 > "$OUT" || return 1
    grep -qx "deleted group g1" "$OUT" || return 1
    "${CAIRN[@]}" groups describe g1 > /dev/null 2> "$ERR"
    [ $? = 1 ] && grep -q "GROUP_ID_NOT_FOUND" "$ERR" || return 1
    "${CAIRN[@]}" groups list > "$OUT" || return 1
    ! grep -qx "g1" "$OUT" && grep -qx "g2" "$OUT" || return 1
    "${CAIRN[@]}" groups delete g1 2> "$ERR"
    [ $? = 1 ] && grep -q "GROUP_ID_NOT_FOUND" "$ERR"
}
check "groups delete (DeleteGroups): describe and list no longer show it" \
    groups_delete

groups_usage_errors() {
    "$BIN/cairn" groups 2>/dev/null
    [ $? = 2 ] || return 1
    "$BIN/cairn" groups describe 2>/dev/null
    [ $? = 2 ] || return 1
    "$BIN/cairn" groups list --json 2>/dev/null
    [ $? = 2 ] || return 1
    "$BIN/cairn" consume t --assignment-strategy range 2>/dev/null
    [ $? = 2 ] || return 1
    "$BIN/cairn" consume t --group g --assignment-strategy sticky 2>/dev/null
    [ $? = 2 ]
}
check "bad groups command lines exit 2" groups_usage_errors

# --- Events and produce metrics ---------------------------------------------

# The brokers' metrics listeners (deploy/cluster.sh: base + 94..96).
BROKER_HTTP=(127.0.0.1:$((base + 94)) 127.0.0.1:$((base + 95))
             127.0.0.1:$((base + 96)))

events_hide_routine() {
    timeout 60 "$BIN/cairn" events > "$OUT" 2> "$ERR" || return 1
    ! grep -q "coordinating the groups of __consumer_offsets" "$OUT" &&
        grep -Eq "^\([0-9]+ routine events? hidden: .*; --all shows them\)$" \
            "$OUT"
}
check "after groups: cairn events hides the coordinators' lines, counts them" \
    events_hide_routine

events_all() {
    timeout 60 "$BIN/cairn" events --all > "$OUT" 2> "$ERR" || return 1
    grep -Eq "broker-[1-3] +coordinating the groups of __consumer_offsets-[0-9]+ at epoch" \
        "$OUT" && ! grep -q "routine events hidden" "$OUT"
}
check "cairn events --all shows them" events_all

events_json_routine() {
    /usr/bin/python3 - "${BROKER_HTTP[@]}" <<'PY'
import json, sys, urllib.request
coord = 0
for hp in sys.argv[1:]:
    doc = json.load(urllib.request.urlopen("http://%s/events" % hp, timeout=10))
    for e in doc["events"]:
        if e["text"].startswith("coordinating the groups of __consumer_offsets"):
            coord += 1
            assert e.get("routine") is True, e
        elif not e["text"].startswith("__"):
            assert "routine" not in e, e
sys.exit(0 if coord > 0 else 1)
PY
}
check "/events marks the coordinators' lines \"routine\":true, no others" \
    events_json_routine


# --- Delete, bench ----------------------------------------------------------

topics_delete() {
    "${CAIRN[@]}" topics delete orders > "$OUT" || return 1
    grep -qx "deleted topic orders" "$OUT" || return 1
    "${CAIRN[@]}" topics list > "$OUT" || return 1
    ! grep -qx "orders" "$OUT" || return 1
    "${CAIRN[@]}" topics delete orders 2> "$ERR"
    [ $? = 1 ] && grep -q "UNKNOWN_TOPIC_OR_PARTITION" "$ERR"
}
check "topics delete (DeleteTopics), then again fails" topics_delete

bench_line() {
    "${CAIRN[@]}" bench "$@" > "$OUT" 2> "$ERR" || {
        sed 's/^/  bench said: /' "$OUT" "$ERR" | tail -5
        return 1
    }
    local fields="records=[0-9]+ record_bytes=[0-9]+ msgs_s=[0-9]+"
    grep -Eq "^RESULT bench=$1 $fields mb_s=[0-9.]+" "$OUT"
}
check "bench produce prints a RESULT line" \
    bench_line produce --records 20000 --record-size 200
check "bench consume prints a RESULT line" \
    bench_line consume --records 20000
check "bench e2e prints a RESULT line" \
    bench_line e2e --records 2000 --rate 2000
check "bench --mock produce prints a RESULT line" \
    bench_line produce --mock --records 20000

# --- Errors that say why -----------------------------------------------------

delete_records_past_hw() {
    "${CAIRN[@]}" topics create few --partitions 1 >/dev/null || return 1
    echo a | "${CAIRN[@]}" produce few --acks all || return 1
    "${CAIRN[@]}" topics delete-records few --partition 0 --before 100 \
        2> "$ERR"
    [ $? = 1 ] &&
        grep -q "offset 100 is past partition 0's high watermark 1 " "$ERR"
}
check "delete-records past the HW names the HW" delete_records_past_hw

# strict_partition EXPR: topics describe --json of strict's partition 0
# (p) satisfies the Python expression.
strict_partition() {
    "${CAIRN[@]}" topics describe --json strict 2>/dev/null |
        /usr/bin/python3 -c "
import json, sys
p = json.load(sys.stdin)['topics'][0]['partitions'][0]
sys.exit(0 if ($1) else 1)"
}

# until_ok SECONDS COMMAND...: until COMMAND succeeds, SECONDS at most.
until_ok() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.2
    done
}

# A topic whose writes need all 3 replicas in sync, one follower stopped:
# acks=all fails with the broker's error, the ISR and the minimum.
# enable.sparse.connections=false makes librdkafka connect to every
# broker it knows, so the stopped one's connection errors are certain;
# they take one line.
not_enough_replicas() {
    "${CAIRN[@]}" topics create strict --partitions 1 --replication-factor 3 \
        --config min.insync.replicas=3 >/dev/null || return 1
    until_ok 15 strict_partition "p['leader'] > 0 and len(p['isr']) == 3" ||
        return 1
    local leader follower rc
    leader=$("${CAIRN[@]}" topics describe --json strict | /usr/bin/python3 -c "
import json, sys
print(json.load(sys.stdin)['topics'][0]['partitions'][0]['leader'])")
    follower=$(( leader % 3 + 1 ))
    "$ROOT/deploy/cluster.sh" stop "broker-$follower" || return 1
    until_ok 15 strict_partition "len(p['isr']) == 2" || return 1
    echo x | "${CAIRN[@]}" -X enable.sparse.connections=false produce strict \
        --timeout-ms 3000 2> "$ERR"
    rc=$?
    "$ROOT/deploy/cluster.sh" start "broker-$follower" >/dev/null
    local said="partition 0's last error from broker $leader"
    [ $rc = 1 ] &&
        grep -q "^cairn: produce strict: line 1: _MSG_TIMED_OUT: .*; $said: NOT_ENOUGH_REPLICAS$" "$ERR" &&
        grep -Eq "^cairn: produce strict: partition 0: NOT_ENOUGH_REPLICAS: ISR [1-3],[1-3] \(2 of replicas [1-3],[1-3],[1-3]\) is below min.insync.replicas=3 \(the topic's\)$" "$ERR" &&
        [ "$(grep -c "127.0.0.1:$((base + 90 + follower))" "$ERR")" = 1 ] &&
        grep -q "further broker connection errors not shown" "$ERR" &&
        [ "$(wc -l < "$ERR")" = 4 ] || { cat "$ERR"; return 1; }
}
check "acks=all below min.insync.replicas: NOT_ENOUGH_REPLICAS, the ISR, one line of connection errors" \
    not_enough_replicas
# --- A restarted broker keeps its events ----------------------------------

# "SEQ TEXT" of each of broker-1's events (JSON /events), one a line.
broker1_events() {
    /usr/bin/python3 -c '
import json, sys, urllib.request
doc = json.load(urllib.request.urlopen("http://%s/events" % sys.argv[1], timeout=5))
print("next", doc["next"])
for e in doc["events"]:
    print(e["seq"], e["text"])' "${BROKER_HTTP[0]}"
}

wait_for 30 broker1_events # an earlier check may have restarted it
broker1_events > "$DATA/ev.before"

# min.insync.replicas=3 of 3 replicas, one broker stopped: acks=all is
# refused (librdkafka retries NOT_ENOUGH_REPLICAS until the timeout:
# several refusals, the first told at once, the rest counted).
acks_refused() {
    # A broker restarted by the check before may still be fenced.
    wait_for 30 "${CAIRN[@]}" topics create mir --partitions 1 \
        --replication-factor 3 --config min.insync.replicas=3 || return 1
    "$ROOT/deploy/cluster.sh" stop broker-1 > /dev/null 2>&1 || return 1
    local boot=127.0.0.1:$((base + 92)),127.0.0.1:$((base + 93))
    wait_for 30 bash -c '
        seq 1 3 | timeout 20 "$1" --bootstrap-servers "$2" produce mir \
            --acks all --timeout-ms 2000
        "$1" events 2>/dev/null | grep -Eq "broker-[23] +mir-0 acks=all refused [0-9]+ requests?: NOT_ENOUGH_REPLICAS \(isr [23],[23]: 2 < min.insync.replicas=3; nothing written\)"' \
        _ "$BIN/cairn" "$boot"
}
check "a refused acks=all write is an event with its cause" acks_refused

produce_metrics() {
    /usr/bin/python3 - "${BROKER_HTTP[@]}" <<'PY'
import re, sys, urllib.request
seen = {"refused": 0, "failed": 0, "purgatory": 0}
for hp in sys.argv[1:]:
    try:
        text = urllib.request.urlopen("http://%s/metrics" % hp, timeout=10).read().decode()
    except OSError:
        continue # broker-1, stopped
    for line in text.splitlines():
        m = re.match(r'kafka_network_requestmetrics_errors_total\{request="Produce",error="(\w+)"\} (\S+)$', line)
        if m and m.group(1) == "NOT_ENOUGH_REPLICAS":
            seen["refused"] += float(m.group(2))
        m = re.match(r"kafka_server_brokertopicmetrics_failedproducerequests_total (\S+)$", line)
        if m:
            seen["failed"] += float(m.group(1))
        if re.match(r'kafka_server_delayedoperationpurgatory_purgatorysize\{delayedOperation="Produce"\} 0$', line):
            seen["purgatory"] += 1
ok = (seen["refused"] > 0 and seen["failed"] >= seen["refused"]
      and seen["purgatory"] == 2)
print(seen) if not ok else None
sys.exit(0 if ok else 1)
PY
}
check "/metrics: Produce errors per code, failed produces, purgatory size" \
    produce_metrics

events_survive_restart() {
    local next_before n_before
    next_before=$(awk '$1 == "next" {print $2}' "$DATA/ev.before")
    n_before=$(grep -vc '^next ' "$DATA/ev.before")
    [ "$n_before" -gt 0 ] || return 1
    "$ROOT/deploy/cluster.sh" start broker-1 > /dev/null 2>&1 || return 1
    wait_for 30 broker1_events || return 1
    broker1_events > "$DATA/ev.after" || return 1
    local next_after
    next_after=$(awk '$1 == "next" {print $2}' "$DATA/ev.after")
    # Every event from before is still served, under its own seq, and new
    # ones come after them.
    [ -z "$(comm -23 <(grep -v '^next ' "$DATA/ev.before" | sort) \
                     <(grep -v '^next ' "$DATA/ev.after" | sort))" ] &&
        [ "$next_after" -ge "$next_before" ] &&
        grep -q "events: [0-9]* lines of earlier events reloaded" \
            "$DATA/broker-1/broker-1.log"
}
check "a restarted broker's /events still holds its events from before" \
    events_survive_restart

summary
