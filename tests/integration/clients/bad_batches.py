#!/usr/bin/python3
# Hostile produce batches against a running Cairn cluster, read back by
# real consumers, for tests/integration/produce_validation.sh.
#
# One partition: good records are produced with librdkafka
# (confluent-kafka, acks=all; none and gzip, which kafkajs reads without
# plug-ins) and their offsets noted from the delivery reports. Between
# them, batches a buggy or hostile producer could send, each with a
# correct CRC-32C, go to the partition leader raw (Produce v8 on a plain
# socket) and must be refused with Kafka's error: a count above or below
# its records, offset deltas out of order, a null header key, bytes after
# the last record, a record length past the batch, a gzip batch whose
# count lies, garbage inside gzip, snappy, lz4 and zstd, a timestamp of
# 2^62. After each refusal, a librdkafka consumer (assign from the
# beginning, to the partition's end) and kafkajs's own Fetch decoder
# (tests/integration/clients/kafkajs_read.js fetch) read the partition and
# must see exactly the acknowledged records, offsets and values; at the
# end a kafkajs consumer group does the same. Before Cairn walked the
# records, the first two batches made kafkajs throw "Attempt to access
# memory outside buffer bounds" and librdkafka deliver records under
# offsets that belong to others.
#
# Prints "[PASS] what" / "[FAIL] what: why" lines; exits 0 only if nothing
# failed.
#     BOOTSTRAP=host:port,... TOPIC=t KAFKAJS_READ=path/kafkajs_read.js \
#         /usr/bin/python3 bad_batches.py
import os
import socket
import struct
import subprocess
import sys
import time
import zlib

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from crc32c import crc32c

BOOT = os.environ["BOOTSTRAP"]
TOPIC = os.environ["TOPIC"]
KAFKAJS_READ = os.environ["KAFKAJS_READ"]
READ_BUDGET_S = 60

INVALID_RECORD, CORRUPT_MESSAGE, INVALID_TIMESTAMP = 87, 2, 32

passed = failed = 0


def check(name, ok, why=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"[PASS] {name}", flush=True)
    else:
        failed += 1
        print(f"[FAIL] {name}: {why}", flush=True)


# --- Record batch v2, written by hand ------------------------------------

def varint(n):
    z = (n << 1) ^ (n >> 63)
    z &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(b):
    return varint(-1) if b is None else varint(len(b)) + b


def record(offset_delta, value, ts_delta=0, key=b"k", headers=()):
    body = (b"\x00" + varint(ts_delta) + varint(offset_delta) + field(key) +
            field(value) + varint(len(headers)))
    for hk, hv in headers:
        body += field(hk) + field(hv)
    return varint(len(body)) + body


def batch(records, count, codec=0, base_ts=None):
    """A batch around records (bytes, already in codec's form) claiming
    count records, with a correct CRC."""
    if base_ts is None:
        base_ts = int(time.time() * 1000)
    after_crc = struct.pack(">hiqqqhii", codec, count - 1, base_ts,
                            base_ts + count - 1, -1, -1, -1, count) + records
    crc = crc32c(after_crc)
    rest = struct.pack(">iBI", 0, 2, crc) + after_crc
    return struct.pack(">qi", 0, len(rest)) + rest


def gzip(data):
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    return z.compress(data) + z.flush()


def garbage(n):
    return bytes((i * 131 + 7) & 0xFF for i in range(n))


def bad_batches():
    now = int(time.time() * 1000)
    three = record(0, b"a") + record(1, b"b") + record(2, b"c")
    return [
        ("count 5 holding 1 record", batch(record(0, b"x"), 5),
         INVALID_RECORD),
        ("count 1 holding 3 records", batch(three, 1), INVALID_RECORD),
        ("offset deltas 0 2 1",
         batch(record(0, b"a") + record(2, b"b") + record(1, b"c"), 3),
         INVALID_RECORD),
        ("a null header key",
         batch(record(0, b"a", headers=[(None, b"v")]), 1), INVALID_RECORD),
        ("a byte after the last record", batch(three + b"\x00", 3),
         INVALID_RECORD),
        ("a record length past the batch",
         batch(varint(500) + b"\x00\x00\x00", 1), INVALID_RECORD),
        ("gzip whose count says 9 for 3 records", batch(gzip(three), 9, 1),
         INVALID_RECORD),
        ("garbage in gzip", batch(garbage(64), 3, 1), CORRUPT_MESSAGE),
        ("garbage in snappy", batch(garbage(64), 3, 2), CORRUPT_MESSAGE),
        ("garbage in lz4", batch(garbage(64), 3, 3), CORRUPT_MESSAGE),
        ("garbage in zstd", batch(garbage(64), 3, 4), CORRUPT_MESSAGE),
        ("timestamp 2^62", batch(record(0, b"t"), 1, 0, 1 << 62),
         INVALID_TIMESTAMP),
    ]


# --- Produce v8 on a plain socket -----------------------------------------

def kstr(s):
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def raw_produce(host, port, records):
    """The partition's ErrorCode for one Produce v8 (acks=all) of
    records to TOPIC-0, or None if no answer came."""
    body = (struct.pack(">hhi", -1, -1, 10000) + struct.pack(">i", 1) +
            kstr(TOPIC) + struct.pack(">i", 1) +
            struct.pack(">ii", 0, len(records)) + records)
    header = struct.pack(">hhi", 0, 8, 7) + kstr("bad-batches")
    frame = header + body
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(struct.pack(">i", len(frame)) + frame)
        size = b""
        while len(size) < 4:
            chunk = s.recv(4 - len(size))
            if not chunk:
                return None
            size += chunk
        (n,) = struct.unpack(">i", size)
        resp = b""
        while len(resp) < n:
            chunk = s.recv(n - len(resp))
            if not chunk:
                return None
            resp += chunk
    # correlation id, topics array (1), name, partitions array (1), index,
    # then the ErrorCode.
    pos = 4 + 4
    (name_len,) = struct.unpack_from(">h", resp, pos)
    pos += 2 + name_len + 4 + 4
    (error,) = struct.unpack_from(">h", resp, pos)
    return error


def leader_address():
    md = AdminClient({"bootstrap.servers": BOOT}).list_topics(TOPIC,
                                                              timeout=10)
    leader = md.topics[TOPIC].partitions[0].leader
    b = md.brokers[leader]
    return b.host, b.port


# --- Good records and the readers -----------------------------------------

acked = []  # (offset, value), in offset order


def produce_good(tag, n, codec):
    p = Producer({"bootstrap.servers": BOOT, "acks": "all",
                  "compression.type": codec, "linger.ms": 0})
    got = []

    def report(err, msg):
        if err is None:
            got.append((msg.offset(), msg.value().decode()))

    for i in range(n):
        p.produce(TOPIC, value=f"{tag}-{i}".encode(), partition=0,
                  on_delivery=report)
        p.flush(10)
    check(f"librdkafka produces {n} good records ({tag}, {codec})",
          len(got) == n, f"{len(got)} acknowledged")
    acked.extend(got)
    acked.sort()


def librdkafka_read():
    c = Consumer({"bootstrap.servers": BOOT, "group.id": "pv-unused",
                  "enable.auto.commit": False,
                  "enable.partition.eof": True,
                  "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(TOPIC, 0, 0)])
    out = []
    deadline = time.time() + READ_BUDGET_S
    try:
        while time.time() < deadline:
            m = c.poll(1.0)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    return out, None
                return out, str(m.error())
            out.append((m.offset(), m.value().decode()))
        return out, "no end of partition within the budget"
    finally:
        c.close()


def kafkajs_read(mode):
    env = dict(os.environ, MODE=mode, EXPECT=str(len(acked)))
    try:
        r = subprocess.run(["node", KAFKAJS_READ], env=env,
                           capture_output=True, text=True,
                           timeout=READ_BUDGET_S + 30)
    except subprocess.TimeoutExpired:
        return [], "kafkajs_read.js timed out"
    out = []
    for line in r.stdout.splitlines():
        off, _, value = line.partition(" ")
        out.append((int(off), value))
    if r.returncode != 0:
        return out, f"exit {r.returncode}: {r.stderr.strip()[-400:]}"
    return out, None


def compare(name, got, err):
    if err is not None:
        check(name, False, err)
    elif got != acked:
        check(name, False, f"read {got[:8]}... ({len(got)}), acknowledged "
              f"{acked[:8]}... ({len(acked)})")
    else:
        check(name, True)


def main():
    produce_good("before", 3, "none")
    host, port = leader_address()
    for i, (name, records, want) in enumerate(bad_batches()):
        got = raw_produce(host, port, records)
        check(f"{name}: refused with {want}", got == want, f"got {got}")
        produce_good(f"after-{i}", 2, "gzip" if i % 2 else "none")
        compare(f"librdkafka reads the acknowledged records after {name}",
                *librdkafka_read())
        compare(f"kafkajs reads the acknowledged records after {name}",
                *kafkajs_read("fetch"))
    compare("a kafkajs consumer group reads exactly the acknowledged records",
            *kafkajs_read("consume"))
    print(f"bad_batches: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
