#!/usr/bin/python3
"""kafka-python (Debian's python3-kafka) against Cairn, with its defaults.

    kafka_python_flow.py BOOT TOPIC

1. 50 fresh clients without api_version: each probes the broker (ApiVersions
   v0, then Metadata v0 on the same socket) and must detect a modern broker,
   never 0.8/0.9 (which then fails every call);
2. a producer (detected version, and one pinned to api_version=(2, 0, 0))
   writes keyed records with headers; a consumer reads every one back with
   its key, value, headers and offset;
3. a group member consumes half, commits, closes; a new member of the group
   resumes at the committed offset and reads the rest, no record twice;
4. clients pinned to old broker versions use the old requests Kafka 3.9
   still serves: (0, 9) asks offsets with ListOffsets v0, (0, 8, 2)
   commits with OffsetCommit v1 and reads back with OffsetFetch v1, over
   Metadata v0;
5. lookups by time: 10 records stamped T, T+1 s, ... T+9 s in one batch;
   every lookup at and between them answers the first record at or after
   the time, with that record's own timestamp (Kafka's rule; the batch's
   base offset and the asked time are wrong answers);
6. lookups by time at every millisecond over batches whose records are
   out of time order, on an empty partition (none), and on a
   LogAppendTime topic (records stamped at their append, not as sent).
Prints what it found; exits non-zero with the reason on failure."""

import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, \
    TopicPartition
from kafka.admin import NewTopic

BOOT, TOPIC = sys.argv[1], sys.argv[2]
RECORDS = 200
CLIENTS = 50


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


# 1. Version detection, fresh client after fresh client.
seen = {}
for i in range(CLIENTS):
    c = KafkaConsumer(bootstrap_servers=BOOT, request_timeout_ms=15000,
                      api_version_auto_timeout_ms=10000)
    v = c.config["api_version"]
    seen[v] = seen.get(v, 0) + 1
    c.close()
old = {v: n for v, n in seen.items() if v < (0, 10)}
print("detected versions over %d fresh clients: %s" % (CLIENTS, seen))
if old:
    fail("misdetected as %s" % old)

admin = KafkaAdminClient(bootstrap_servers=BOOT)
admin.create_topics([NewTopic(TOPIC, num_partitions=1, replication_factor=3)])
admin.close()

# 2. Produce (detected and pinned versions), read everything back.
sent = []
for pinned in (None, (2, 0, 0)):
    kw = {"api_version": pinned} if pinned else {}
    p = KafkaProducer(bootstrap_servers=BOOT, acks="all", **kw)
    futures = []
    for i in range(RECORDS // 2):
        n = len(sent)
        key = ("k%d" % (n % 7)).encode()
        value = ("v%d" % n).encode()
        headers = [("h", ("x%d" % n).encode())]
        futures.append(p.send(TOPIC, key=key, value=value, headers=headers))
        sent.append((key, value, headers))
    for n, f in enumerate(futures):
        md = f.get(timeout=30)
        want = len(sent) - len(futures) + n
        if md.offset != want:
            fail("record %d acknowledged at offset %d" % (want, md.offset))
    p.close()
print("produced %d records (half with api_version pinned to 2.0.0)"
      % len(sent))

c = KafkaConsumer(bootstrap_servers=BOOT, auto_offset_reset="earliest",
                  enable_auto_commit=False, consumer_timeout_ms=10000)
tp = TopicPartition(TOPIC, 0)
c.assign([tp])
got = []
deadline = time.time() + 60
while len(got) < RECORDS and time.time() < deadline:
    for msgs in c.poll(timeout_ms=1000).values():
        got.extend(msgs)
c.close()
if len(got) != RECORDS:
    fail("read %d of %d records" % (len(got), RECORDS))
for n, m in enumerate(got):
    key, value, headers = sent[n]
    if m.offset != n or m.key != key or m.value != value or \
            list(m.headers) != headers:
        fail("record %d: offset %d key %r value %r headers %r" %
             (n, m.offset, m.key, m.value, m.headers))
print("read back %d records with their keys, values, headers and offsets"
      % len(got))


# 3. A group commits and the next member resumes there.
def member():
    return KafkaConsumer(TOPIC, bootstrap_servers=BOOT, group_id="kp-group",
                         auto_offset_reset="earliest",
                         enable_auto_commit=False,
                         session_timeout_ms=10000)


def take(c, n):
    out = []
    deadline = time.time() + 60
    while len(out) < n and time.time() < deadline:
        for msgs in c.poll(timeout_ms=1000, max_records=n - len(out)) \
                .values():
            out.extend(msgs)
    return out


first = member()
half = take(first, RECORDS // 2)
if [m.offset for m in half] != list(range(RECORDS // 2)):
    fail("the first member read offsets %s" % [m.offset for m in half][:5])
first.commit()
committed = first.committed(tp)
first.close()
if committed != RECORDS // 2:
    fail("committed %s, want %d" % (committed, RECORDS // 2))
second = member()
rest = take(second, RECORDS - RECORDS // 2)
second.close()
if [m.offset for m in rest] != list(range(RECORDS // 2, RECORDS)):
    fail("the next member resumed at %s" %
         ([m.offset for m in rest][:1] or "nothing"))
print("group kp-group: committed %d, the next member resumed there"
      % committed)

# 4. Old request versions.
old = KafkaConsumer(bootstrap_servers=BOOT, api_version=(0, 9),
                    enable_auto_commit=False)
ends = old.end_offsets([tp])
starts = old.beginning_offsets([tp])
old.close()
if ends.get(tp) != RECORDS or starts.get(tp) != 0:
    fail("ListOffsets v0: end %s, start %s" % (ends, starts))
print("ListOffsets v0: offsets %d..%d" % (starts[tp], ends[tp]))
# (0, 8, 1) commits to any broker (ZooKeeper's era), not to the group's
# coordinator: Kafka 3.x refuses that too; OffsetCommit v0 and OffsetFetch
# v0 are tested on the wire (tests/integration/test_kafka_raw.c).
for pinned, at in (((0, 8, 2), 57),):
    from kafka.structs import OffsetAndMetadata
    legacy = KafkaConsumer(bootstrap_servers=BOOT, api_version=pinned,
                           group_id="kp-legacy-%d" % pinned[2],
                           enable_auto_commit=False)
    legacy.assign([tp])
    legacy.commit({tp: OffsetAndMetadata(at, "m")})
    back = legacy.committed(tp)
    legacy.close()
    if back != at:
        fail("api_version %s committed %d, read back %s" % (pinned, at, back))
    print("api_version %s: OffsetCommit v1 and OffsetFetch v1 at %d"
          % (pinned, at))

# 5. Lookups by time.
T = (int(time.time()) - 3600) * 1000  # an hour ago, whole seconds
p = KafkaProducer(bootstrap_servers=BOOT, acks="all", linger_ms=2000)
for i in range(10):
    p.send("kp-time", key=b"t", value=b"%d" % i, timestamp_ms=T + i * 1000)
p.flush()
p.close()
c = KafkaConsumer(bootstrap_servers=BOOT)
ttp = TopicPartition("kp-time", 0)
checked = 0
for i in range(10):
    for dt, want in ((0, i), (500, i + 1)):
        got = c.offsets_for_times({ttp: T + i * 1000 + dt})[ttp]
        if want == 10:
            if got is not None:
                fail("after the last record: %s" % (got,))
        elif got is None or got.offset != want or \
                got.timestamp != T + want * 1000:
            fail("time T+%d ms: %s, want offset %d stamped T+%d ms"
                 % (i * 1000 + dt, got, want, want * 1000))
        checked += 1
c.close()
print("%d lookups by time: each the first record at or after it, with its "
      "own timestamp" % checked)

# 6. Lookups by time across batches whose records are out of time order,
# every millisecond from before the first to past the last; a
# LogAppendTime topic (every record stamped with its batch's append
# time); an empty partition (no record for any time).
admin = KafkaAdminClient(bootstrap_servers=BOOT)
admin.create_topics([
    NewTopic("kp-times", num_partitions=2, replication_factor=3),
    NewTopic("kp-append", num_partitions=1, replication_factor=3,
             topic_configs={"message.timestamp.type": "LogAppendTime"})])
admin.close()
BATCHES = ((100, 105, 103), (110, 110, 120), (115, 300, 130), (300, 160))
log = []  # (offset, timestamp) in log order
p = KafkaProducer(bootstrap_servers=BOOT, acks="all", linger_ms=2000)
for batch in BATCHES:
    for dt in batch:
        p.send("kp-times", partition=0, value=b"x", timestamp_ms=T + dt)
        log.append((len(log), T + dt))
    p.flush()  # one batch each
p.close()
c = KafkaConsumer(bootstrap_servers=BOOT)
ttp = TopicPartition("kp-times", 0)
checked = 0
for t in range(T + 98, T + 303):
    want = next((r for r in log if r[1] >= t), None)
    got = c.offsets_for_times({ttp: t})[ttp]
    if want is None:
        if got is not None:
            fail("kp-times after the last record: %s" % (got,))
    elif got is None or (got.offset, got.timestamp) != want:
        fail("kp-times T+%d ms: %s, want offset %d stamped T+%d ms"
             % (t - T, got, want[0], want[1] - T))
    checked += 1
empty = TopicPartition("kp-times", 1)
for t in (0, T, T + 300):
    got = c.offsets_for_times({empty: t})[empty]
    if got is not None:
        fail("empty partition at %d: %s" % (t, got))
print("%d lookups by time across %d batches out of time order, and an "
      "empty partition" % (checked, len(BATCHES)))

before = int(time.time() * 1000)
p = KafkaProducer(bootstrap_servers=BOOT, acks="all", linger_ms=2000)
for batch in range(3):
    for i in range(3):
        p.send("kp-append", value=b"x", timestamp_ms=T + i)  # overridden
    p.flush()
p.close()
atp = TopicPartition("kp-append", 0)
r = KafkaConsumer(bootstrap_servers=BOOT, auto_offset_reset="earliest",
                  consumer_timeout_ms=10000)
r.assign([atp])
stamped = [(m.offset, m.timestamp, m.timestamp_type) for m in r][:9]
r.close()
if len(stamped) != 9 or any(m[2] != 1 or m[1] < before for m in stamped):
    fail("LogAppendTime: records read back %s, appended after %d"
         % (stamped, before))
appended = [(m[0], m[1]) for m in stamped]
for t in sorted({m[1] for m in appended} | {m[1] + 1 for m in appended}):
    want = next((m for m in appended if m[1] >= t), None)
    got = c.offsets_for_times({atp: t})[atp]
    if want is None:
        if got is not None:
            fail("LogAppendTime after the last record: %s" % (got,))
    elif got is None or (got.offset, got.timestamp) != want:
        fail("LogAppendTime at %d: %s, want %s" % (t, got, want))
c.close()
print("LogAppendTime: records stamped at their append (%s), found by it"
      % sorted({m[1] - before for m in appended}))
print("OK")
