#!/usr/bin/env bash
# Live topic configs on real processes: AlterConfigs and
# IncrementalAlterConfigs change a running topic without a restart.
# Shrinking retention.ms deletes old segments at once; raising
# min.insync.replicas makes acks=all fail with NOT_ENOUGH_REPLICAS while
# a broker is down; DescribeConfigs shows each config's source; a
# restarted broker still has the configs (they are in the metadata log);
# confluent-kafka's and kafkajs's admin clients and Kafka's errors.
#     tests/integration/live_configs.sh BUILD_DIR
set -uo pipefail

TEST_NAME=live_configs
source "$(dirname "$0")/lib.sh"
export CAIRN_BROKER_CONFIG="log.retention.check.interval.ms=200"
cluster_up "${1:-}"
PY=/usr/bin/python3

# first_base TOPIC: the base offset of the first segment of TOPIC-0 on
# every broker, space separated ("-" where there is none).
first_bases() {
    local b dir
    for b in 1 2 3; do
        dir=$(find "$DATA/broker-$b" -type d -name "$1-0" | head -n 1)
        if [ -z "$dir" ]; then echo -n "- "; continue; fi
        ls "$dir" | grep '\.log$' | sort | head -n 1 |
            sed 's/^0*\([0-9]\)/\1/; s/\.log$/ /' | tr -d '\n'
    done
}

alter() { # alter TOPIC key=value ...: confluent-kafka alter_configs
    $PY - "$BOOT" "$@" <<'PY'
import sys
from confluent_kafka.admin import AdminClient, ConfigResource
boot, topic, kvs = sys.argv[1], sys.argv[2], sys.argv[3:]
a = AdminClient({"bootstrap.servers": boot})
r = ConfigResource("topic", topic,
                   set_config=dict(kv.split("=", 1) for kv in kvs))
a.alter_configs([r], request_timeout=20)[r].result(30)
PY
}
describe() { # describe TOPIC KEY [BOOT]: "value source"
    $PY - "${3:-$BOOT}" "$1" "$2" <<'PY'
import sys
from confluent_kafka.admin import AdminClient, ConfigResource
boot, topic, key = sys.argv[1:4]
a = AdminClient({"bootstrap.servers": boot})
r = ConfigResource("topic", topic)
c = a.describe_configs([r], request_timeout=20)[r].result(30)[key]
print(c.value, c.source)
PY
}

check "topic flow for the clients" "$BIN/cairn" topics create flow \
    --partitions 1 --replication-factor 3
check "topic aging: 1 partition, RF 3, segment.ms=200" "$BIN/cairn" topics \
    create aging --partitions 1 --replication-factor 3 \
    --config segment.ms=200
# Segments roll by age: TOPIC's segments on broker 1; rolled TOPIC
# produces a little and holds when there are three.
n_segments() { find "$DATA/broker-1" -path "*/$1-0/*.log" | wc -l; }
rolled() {
    seq 1 20 | "$BIN/cairn" produce "$1" --acks all >/dev/null 2>&1
    [ "$(n_segments "$1")" -ge 3 ]
}
# Produces a little to TOPIC (so a segment closes) and holds once no
# replica starts at offset 0 any more.
start_moved() {
    seq 1 5 | "$BIN/cairn" produce "$1" --acks all >/dev/null 2>&1
    local b
    for b in $(first_bases "$1"); do
        [ "$b" != - ] && [ "$b" -gt 0 ] || return 1
    done
}
wait_for 20 rolled aging
check "aging has $(n_segments aging) segments on broker 1" \
    test "$(n_segments aging)" -ge 3
check "with the default retention every replica keeps offset 0 ($(first_bases aging))" \
    test "$(first_bases aging)" = "0 0 0 "
check "alter_configs retention.ms=1000 on the live topic" \
    alter aging retention.ms=1000 segment.ms=200
check "describe: retention.ms 1000 from DYNAMIC_TOPIC_CONFIG (1)" \
    test "$(describe aging retention.ms)" = "1000 1"
wait_for 30 start_moved aging
check "old segments go on every replica without a restart ($(first_bases aging))" \
    start_moved aging

check "topic strict: RF 3" "$BIN/cairn" topics create strict \
    --partitions 1 --replication-factor 3
check "acks=all works with min.insync.replicas=1 and a broker down" bash -c '
    "$2/deploy/cluster.sh" stop broker-3 >/dev/null 2>&1 &&
    seq 1 3 | "$1" produce strict --acks all >/dev/null' _ "$BIN/cairn" "$ROOT"
check "alter_configs min.insync.replicas=3" alter strict min.insync.replicas=3
refused() {
    $PY - "$BOOT" <<'PY'
import sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "acks": "all",
              "message.timeout.ms": 4000, "retries": 0})
errs = []
p.produce("strict", b"x", on_delivery=lambda e, m: errs.append(e))
p.flush(10)
sys.exit(0 if errs and errs[0] is not None and
         errs[0].name() == "NOT_ENOUGH_REPLICAS" else 1)
PY
}
wait_for 40 refused
check "acks=all is refused with NOT_ENOUGH_REPLICAS (ISR 2 < 3)" refused
check "broker 3 restarts" "$ROOT/deploy/cluster.sh" start broker-3
b3=127.0.0.1:$((CAIRN_BASE_PORT + 93))
kept() { [ "$(describe strict min.insync.replicas "$b3" 2>/dev/null)" = "3 1" ]; }
wait_for 30 kept
check "the restarted broker describes min.insync.replicas=3 (DYNAMIC_TOPIC_CONFIG)" kept

run_flow python_configs 120 $PY "$ROOT/tests/integration/clients/python_configs.py" "$BOOT" flow
kafkajs_ready
run_flow kafkajs_configs 120 node "$ROOT/tests/integration/clients/kafkajs_configs.js" "$BOOT" flow
platformatic_ready
run_flow platformatic_configs 120 node "$ROOT/tests/integration/clients/platformatic_configs.mjs" "$BOOT" flow

# `cairn configs`: a topic's dynamic configs set, shown and deleted.
check "cairn configs set topic strict retention.ms=86400000 --delete min.insync.replicas" \
    "$BIN/cairn" configs set topic strict retention.ms=86400000 \
    --delete min.insync.replicas
got() { "$BIN/cairn" configs get topic strict 2>&1; }
just_set() { [ "$(got)" = "retention.ms=86400000 (DYNAMIC_TOPIC_CONFIG)" ]; }
wait_for 15 just_set
check "cairn configs get topic strict shows just that: '$(got)'" just_set
check "cairn configs get --all lists the rest with their sources" bash -c '
    "$1" configs get topic strict --all | grep -qx "segment.ms=604800000 (DEFAULT_CONFIG)"' \
    _ "$BIN/cairn"
out=$("$BIN/cairn" configs set topic strict retention.ms=never 2>&1)
check "a bad value is refused with Kafka's message: $out" bash -c '
    [[ "$1" == *"INVALID_CONFIG: Invalid value never for configuration retention.ms"* ]]' _ "$out"
out=$("$BIN/cairn" configs set broker 1 log.dirs=/tmp/elsewhere 2>&1)
check "a static broker config is refused: $out" bash -c '
    [[ "$1" == *"INVALID_REQUEST: Cannot update these configs dynamically: Set(log.dirs)"* ]]' _ "$out"

# A broker-level dynamic default: topic "bdef" sets no retention.ms, so
# the cluster-wide log.retention.ms applies to it at once.
check "topic bdef: segment.ms=200, no retention.ms" "$BIN/cairn" topics \
    create bdef --partitions 1 --replication-factor 3 --config segment.ms=200
wait_for 20 rolled bdef
check "bdef keeps offset 0 everywhere ($(first_bases bdef))" \
    test "$(first_bases bdef)" = "0 0 0 "
check "cairn configs set broker default log.retention.ms=1000" \
    "$BIN/cairn" configs set broker default log.retention.ms=1000
wait_for 30 start_moved bdef
check "the broker default deletes bdef's old segments ($(first_bases bdef))" \
    start_moved bdef
check "describe: bdef's retention.ms is 1000 from DYNAMIC_DEFAULT_BROKER_CONFIG (3)" \
    test "$(describe bdef retention.ms)" = "1000 3"
check "cairn configs get broker default: '$("$BIN/cairn" configs get broker default 2>&1)'" \
    test "$("$BIN/cairn" configs get broker default 2>&1)" = \
    "log.retention.ms=1000 (DYNAMIC_DEFAULT_BROKER_CONFIG)"
# kafkajs asks with IncludeSynonyms: the chain of sources, strongest first.
synonyms() {
    CLIENTS=$CLIENTS node - "$BOOT" <<'JS'
const { Kafka, ConfigResourceTypes, logLevel } = require(process.env.CLIENTS + '/node_modules/kafkajs')
const admin = new Kafka({ brokers: process.argv[2].split(','), logLevel: logLevel.NOTHING }).admin()
admin.connect().then(() => admin.describeConfigs({
  includeSynonyms: true,
  resources: [{ type: ConfigResourceTypes.TOPIC, name: 'bdef', configNames: ['retention.ms'] }]
})).then((d) => {
  const e = d.resources[0].configEntries[0]
  console.log([e.configValue, ...e.configSynonyms.map((s) => `${s.configName}=${s.configValue}/${s.configSource}`)].join(' '))
  return admin.disconnect()
}).catch((e) => { console.error(e); process.exit(1) })
JS
}
check "kafkajs: bdef's retention.ms synonyms: '$(synonyms)'" test "$(synonyms)" = \
    "1000 log.retention.ms=1000/3 log.retention.ms=604800000/5"
check "broker 2 overrides it for itself (DYNAMIC_BROKER_CONFIG)" bash -c '
    "$1" configs set broker 2 log.retention.ms=2000 >/dev/null &&
    for i in $(seq 1 50); do
        "$1" configs get broker 2 | grep -qx "log.retention.ms=2000 (DYNAMIC_BROKER_CONFIG)" && exit 0
        sleep 0.2
    done; exit 1' _ "$BIN/cairn"
check "deleting the broker configs" bash -c '
    "$1" configs set broker 2 --delete log.retention.ms >/dev/null &&
    "$1" configs set broker default --delete log.retention.ms >/dev/null' \
    _ "$BIN/cairn"

# The replication throttles change live: broker 3 applies its own rate
# (and says so), the cluster-wide one applies to the others.
check "cairn configs set broker 3 follower.replication.throttled.rate=1048576" \
    "$BIN/cairn" configs set broker 3 follower.replication.throttled.rate=1048576
check "cairn configs set broker default leader.replication.throttled.rate=2097152" \
    "$BIN/cairn" configs set broker default leader.replication.throttled.rate=2097152
shows() { "$BIN/cairn" configs get broker "$1" | grep -qx "$2"; }
check "broker 3 applies its follower rate (DYNAMIC_BROKER_CONFIG)" wait_for 15 \
    shows 3 "follower.replication.throttled.rate=1048576 (DYNAMIC_BROKER_CONFIG)"
check "broker 1 applies the default leader rate (DYNAMIC_DEFAULT_BROKER_CONFIG)" \
    wait_for 15 shows 1 \
    "leader.replication.throttled.rate=2097152 (DYNAMIC_DEFAULT_BROKER_CONFIG)"
check "broker 3 logs its new rate" \
    grep -q "broker=3 follower.replication.throttled.rate=1048576" \
    "$DATA/broker-3/broker-3.log"
check "deleted, the throttles are off again" bash -c '
    "$1" configs set broker 3 --delete follower.replication.throttled.rate &&
    "$1" configs set broker default --delete leader.replication.throttled.rate &&
    for i in $(seq 1 50); do
        "$1" configs get broker 1 --all | grep -qx "leader.replication.throttled.rate=9223372036854775807 (DEFAULT_CONFIG)" && exit 0
        sleep 0.2
    done; exit 1' _ "$BIN/cairn"
summary
