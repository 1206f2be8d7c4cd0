#!/usr/bin/python3
"""A group coordinator killed after compaction hands over fast, and the
group's member keeps its generation (tests/integration/group_handover.sh).

    group_handover.py BOOT CLUSTER_SH DATA BASE_PORT

The cluster has one __consumer_offsets partition (so one coordinator holds
everything), small segments for it and a quick cleaner. Steps:
  1. a consumer joins group "hg" on topic "handover" and stays in it,
     polling, for the whole run;
  2. 100 standalone groups commit offsets for the 100 partitions of topic
     "ledger", ROUNDS times: 10,000 committed offsets, ROUNDS x 10,000
     commit records of history;
  3. every replica of __consumer_offsets-0 compacts (its broker logs the
     pass);
  4. the coordinator is killed (SIGKILL); the new one logs its load: it
     must take well under a second, and replay about the compacted size,
     not the history;
  5. the new coordinator serves "hg" with the same member at the same
     generation, Stable, with no rebalance, the consumer keeps its
     assignment, and every group's committed offsets read back.
Prints what it measured; exits non-zero with the reason on failure."""

import json
import re
import socket
import struct
import subprocess
import sys
import time
import urllib.request

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

BOOT, CLUSTER, DATA, BASE = sys.argv[1], sys.argv[2], sys.argv[3], \
    int(sys.argv[4])
GROUPS = 100
PARTITIONS = 100
ROUNDS = 10
LOAD_MS_MAX = 500  # "well under a second"


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def wait_for(what, pred, seconds, poll=None):
    deadline = time.time() + seconds
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        if poll is not None:
            poll()
        else:
            time.sleep(0.2)
    fail("timed out after %d s waiting for %s" % (seconds, what))


def broker_log(b):
    try:
        with open("%s/broker-%d/broker-%d.log" % (DATA, b, b),
                  errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def groups_json(b):
    url = "http://127.0.0.1:%d/groups" % (BASE + 93 + b)
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def hg_on(b):
    try:
        doc = groups_json(b)
    except (OSError, ValueError):
        return None
    for g in doc["groups"]:
        if g["id"] == "hg":
            return g
    return None


def coordinator(admin):
    md = admin.list_topics("__consumer_offsets", timeout=10)
    t = md.topics.get("__consumer_offsets")
    if t is None or t.error is not None or 0 not in t.partitions:
        return None
    p = t.partitions[0]
    return p.leader if p.leader >= 0 else None


admin = AdminClient({"bootstrap.servers": BOOT})
for f in admin.create_topics([
        NewTopic("handover", num_partitions=1, replication_factor=3),
        NewTopic("ledger", num_partitions=PARTITIONS, replication_factor=1,
                 # acks=all on one replica: the minimum must be 1 (Kafka)
                 config={"min.insync.replicas": "1"})]).values():
    f.result(60)

# 1. The member that must keep its generation.
consumer = Consumer({"bootstrap.servers": BOOT, "group.id": "hg",
                     "session.timeout.ms": 30000,
                     "heartbeat.interval.ms": 500,
                     "enable.auto.commit": False})
consumer.subscribe(["handover"])


def poll():
    consumer.poll(0.2)


wait_for("hg's assignment", lambda: len(consumer.assignment()) == 1, 60,
         poll)
coord = wait_for("the coordinator", lambda: coordinator(admin), 30)
before = wait_for("hg stable on the coordinator", lambda: (
    lambda g: g if g and g["state"] == "Stable" else None)(hg_on(coord)),
    30, poll)
if len(before["members"]) != 1:
    fail("hg's members on broker %d: %s" % (coord, before["members"]))
member = before["members"][0]["member_id"]
software = before["members"][0].get("client_software", "")
if not software.startswith("confluent-kafka-python "):
    fail("hg's member's client software (ApiVersions v3): %r" % software)
print("group hg: member %s (%s), generation %d, coordinator broker %d"
      % (member, software, before["generation"], coord))

# 2. History: ROUNDS x 10,000 commits over 10,000 keys, as standalone
# commits (OffsetCommit v2, generation -1) on one connection to the
# coordinator: the Python client has no admin call for them.
def kstr(s):
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def offset_commit(sock, corr, group, offsets):
    body = kstr(group) + struct.pack(">i", -1) + kstr("") + \
        struct.pack(">q", -1) + struct.pack(">i", 1) + kstr("ledger") + \
        struct.pack(">i", len(offsets))
    for p, o in offsets:
        body += struct.pack(">iqh", p, o, -1)  # null metadata
    req = struct.pack(">hhi", 8, 2, corr) + kstr("handover-test") + body
    sock.sendall(struct.pack(">i", len(req)) + req)
    size = struct.unpack(">i", recv_exact(sock, 4))[0]
    resp = recv_exact(sock, size)
    if struct.unpack(">i", resp[:4])[0] != corr:
        fail("OffsetCommit answered out of order")
    at = 4 + 4  # correlation id, topic count
    tlen = struct.unpack(">h", resp[at:at + 2])[0]
    at += 2 + tlen
    n = struct.unpack(">i", resp[at:at + 4])[0]
    at += 4
    for _ in range(n):
        p, err = struct.unpack(">ih", resp[at:at + 6])
        at += 6
        if err != 0:
            fail("commit of %s partition %d: error %d" % (group, p, err))


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            fail("the coordinator closed the connection")
        buf += chunk
    return buf


start = time.time()
sock = socket.create_connection(("127.0.0.1", BASE + 90 + coord), timeout=30)
corr = 0
for r in range(ROUNDS):
    for g in range(GROUPS):
        corr += 1
        offset_commit(sock, corr, "ledger-%d" % g,
                      [(p, r * 1000 + g * 7 + p) for p in range(PARTITIONS)])
    poll()
sock.close()
print("committed %d offsets %d times in %.1f s" %
      (GROUPS * PARTITIONS, ROUNDS, time.time() - start))

# 3. Every replica compacts __consumer_offsets-0.
replicas = admin.list_topics("__consumer_offsets", timeout=10) \
    .topics["__consumer_offsets"].partitions[0].replicas
compacted = re.compile(r"event: __consumer_offsets-0 compacted")
wait_for("every replica of __consumer_offsets-0 to compact", lambda: all(
    compacted.search(broker_log(b)) for b in replicas), 120, poll)
print("compacted on brokers %s" % sorted(replicas))

# 4. Kill the coordinator; the new one loads.
loaded = re.compile(
    r"event: coordinating the groups of __consumer_offsets-0 at epoch "
    r"(\d+): (\d+) records \((\d+) bytes, offsets below (\d+)\) loaded in "
    r"(\d+) ms")
seen = {b: len(loaded.findall(broker_log(b))) for b in replicas}
subprocess.run([CLUSTER, "kill", "broker-%d" % coord], check=True,
               stdout=subprocess.DEVNULL)
killed_at = time.time()


def new_load():
    for b in replicas:
        if b == coord:
            continue
        found = loaded.findall(broker_log(b))
        if len(found) > seen[b]:
            return b, found[-1]
    return None


new, (epoch, records, nbytes, below, load_ms) = wait_for(
    "a new coordinator's load", new_load, 60, poll)
records, nbytes, below, load_ms = int(records), int(nbytes), int(below), \
    int(load_ms)
history = GROUPS * PARTITIONS * ROUNDS
print("broker %d took over %.1f s after the kill; its load: %d records, "
      "%d bytes (the log's history: %d commit records below offset %d) in "
      "%d ms" % (new, time.time() - killed_at, records, nbytes, history,
                 below, load_ms))
if load_ms > LOAD_MS_MAX:
    fail("the load took %d ms, over %d" % (load_ms, LOAD_MS_MAX))
if below < history:
    fail("the log holds fewer records than were committed")
if records >= history / 2:
    fail("the load replayed %d records: the history (%d), not the "
         "compacted log" % (records, history))

# 5. The member keeps its generation.
after = wait_for("hg on broker %d" % new, lambda: hg_on(new), 30, poll)
deadline = time.time() + 5  # heartbeats to the new coordinator go on
while time.time() < deadline:
    poll()
after = hg_on(new)
if after is None or after["state"] != "Stable":
    fail("hg on the new coordinator: %s" % after)
if after["generation"] != before["generation"]:
    fail("hg's generation went from %d to %d: the member rejoined"
         % (before["generation"], after["generation"]))
if [m["member_id"] for m in after["members"]] != [member]:
    fail("hg's members changed: %s" % after["members"])
if len(consumer.assignment()) != 1:
    fail("the consumer lost its assignment")
if re.search(r"event: group hg rebalancing", broker_log(new)):
    fail("the new coordinator rebalanced hg")
print("group hg on broker %d: member %s, generation %d, %s, no rebalance"
      % (new, member, after["generation"], after["state"]))

for g in (0, GROUPS // 2, GROUPS - 1):
    reader = Consumer({"bootstrap.servers": BOOT, "group.id": "ledger-%d" % g,
                       "enable.auto.commit": False})
    got = {tp.partition: tp.offset for tp in reader.committed(
        [TopicPartition("ledger", p) for p in range(PARTITIONS)], timeout=30)}
    reader.close()
    for p in range(PARTITIONS):
        w = (ROUNDS - 1) * 1000 + g * 7 + p
        if got.get(p) != w:
            fail("ledger-%d partition %d: committed %s, want %d"
                 % (g, p, got.get(p), w))
consumer.close()
print("OK")
