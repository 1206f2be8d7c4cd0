"""CreatePartitions with confluent-kafka 1.7.0's AdminClient and on the
wire: a topic grown from 2 to 4 partitions, records produced to and
consumed from the new ones with keys hashed over the new count (librdkafka's
consistent partitioner: CRC-32 of the key modulo the partition count),
every broker's Metadata listing the 4 partitions with leaders, and Kafka's
errors (INVALID_PARTITIONS, UNKNOWN_TOPIC_OR_PARTITION,
INVALID_REPLICA_ASSIGNMENT, INVALID_REQUEST for a name given twice,
validate_only changing nothing, POLICY_VIOLATION for __consumer_offsets).

    partitions_flow.py BOOTSTRAP
Prints a [PASS]/[FAIL] line per check; exit 0 when all passed.
"""
import socket
import struct
import sys
import time
import zlib

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

failures = 0


def check(name, ok, detail=""):
    global failures
    print("[%s] %s%s" % ("PASS" if ok else "FAIL", name,
                         "" if ok or not detail else ": %s" % detail))
    if not ok:
        failures += 1


# --- Raw wire ----------------------------------------------------------------

def kstr(s):
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def uvarint(n):
    out = b""
    while n >= 0x80:
        out += bytes([(n & 0x7F) | 0x80])
        n >>= 7
    return out + bytes([n])


def cstr(s):
    b = s.encode()
    return uvarint(len(b) + 1) + b


def call(addr, key, version, body, flexible=False):
    """One request; the response body after the correlation id (and the
    header's tags when flexible)."""
    host, port = addr.split(":")
    header = struct.pack(">hhi", key, version, 7) + kstr("partitions-flow")
    if flexible:
        header += b"\x00"
    frame = header + body
    s = socket.create_connection((host, int(port)), timeout=10)
    s.sendall(struct.pack(">i", len(frame)) + frame)
    buf = b""
    while len(buf) < 4 or len(buf) < 4 + struct.unpack(">i", buf[:4])[0]:
        chunk = s.recv(65536)
        if not chunk:
            raise IOError("connection closed")
        buf += chunk
    s.close()
    return buf[8:]


class Reader:
    def __init__(self, b):
        self.b, self.p = b, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.b, self.p)
        self.p += struct.calcsize(fmt)
        return v[0]

    def uvarint(self):
        n = shift = 0
        while True:
            c = self.b[self.p]
            self.p += 1
            n |= (c & 0x7F) << shift
            shift += 7
            if c < 0x80:
                return n

    def string(self):
        n = self.take(">h")
        if n < 0:
            return None
        s = self.b[self.p:self.p + n].decode()
        self.p += n
        return s

    def cstring(self):
        n = self.uvarint() - 1
        if n < 0:
            return None
        s = self.b[self.p:self.p + n].decode()
        self.p += n
        return s


def metadata_partitions(addr, topic):
    """Metadata v1 of one topic from one broker: {partition: leader}."""
    body = struct.pack(">i", 1) + kstr(topic)
    r = Reader(call(addr, 3, 1, body))
    for _ in range(r.take(">i")):  # brokers
        r.take(">i"), r.string(), r.take(">i"), r.string()
    r.take(">i")  # controller id
    out = {}
    for _ in range(r.take(">i")):
        err, name, _internal = r.take(">h"), r.string(), r.take(">b")
        for _ in range(r.take(">i")):
            perr, p, leader = r.take(">h"), r.take(">i"), r.take(">i")
            for _ in range(r.take(">i")):
                r.take(">i")
            for _ in range(r.take(">i")):
                r.take(">i")
            if name == topic and err == 0 and perr == 0:
                out[p] = leader
    return out


def create_partitions_raw(addr, version, topics, timeout_ms=30000,
                          validate_only=False):
    """CreatePartitions; topics: [(name, count)]; [(name, error, msg)]."""
    flex = version >= 2
    arr = (lambda n: uvarint(n + 1)) if flex else (lambda n: struct.pack(">i", n))
    st = cstr if flex else kstr
    body = arr(len(topics))
    for name, count in topics:
        body += st(name) + struct.pack(">i", count)
        body += uvarint(0) if flex else struct.pack(">i", -1)  # null
        body += b"\x00" if flex else b""
    body += struct.pack(">i?", timeout_ms, validate_only)
    body += b"\x00" if flex else b""
    r = Reader(call(addr, 37, version, body, flexible=flex))
    if flex:
        r.uvarint()  # response header tags
    r.take(">i")  # throttle
    n = r.uvarint() - 1 if flex else r.take(">i")
    out = []
    for _ in range(n):
        name = r.cstring() if flex else r.string()
        err = r.take(">h")
        msg = r.cstring() if flex else r.string()
        if flex:
            r.uvarint()
        out.append((name, err, msg))
    return out


# --- Checks --------------------------------------------------------------------

def grow(admin, parts, **kw):
    """{topic: None or KafkaError code} of one create_partitions call."""
    out = {}
    for t, f in admin.create_partitions(parts, **kw).items():
        try:
            f.result()
            out[t] = None
        except Exception as e:  # KafkaException carrying a KafkaError
            out[t] = e.args[0].code()
    return out


def wait_count(admin, topic, n, brokers):
    deadline = time.time() + 30
    while time.time() < deadline:
        counts = [len(metadata_partitions(b, topic)) for b in brokers]
        if all(c == n for c in counts):
            return counts
        time.sleep(0.1)
    return counts


def produce_keyed(boot, topic, n):
    """n keyed records; [(key, partition, offset)] as delivered."""
    got = []

    def cb(err, m):
        if err is None:
            got.append((m.key(), m.partition(), m.offset()))

    p = Producer({"bootstrap.servers": boot, "acks": "all",
                  "partitioner": "consistent",
                  "topic.metadata.refresh.interval.ms": 1000})
    for i in range(n):
        p.produce(topic, key=b"key-%d" % i, value=b"value-%d" % i,
                  on_delivery=cb)
    p.flush(30)
    return got


def consume(boot, topic, partitions, want):
    c = Consumer({"bootstrap.servers": boot, "group.id": "partitions-flow",
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, -2) for p in partitions])
    got = []
    deadline = time.time() + 30
    while len(got) < want and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            got.append((m.key(), m.partition(), m.offset()))
    c.close()
    return got


def main():
    boot = sys.argv[1]
    brokers = boot.split(",")
    admin = AdminClient({"bootstrap.servers": boot})
    for _, f in admin.create_topics([NewTopic("grow", 2, 3)]).items():
        f.result()
    wait_count(admin, "grow", 2, brokers)

    r = grow(admin, [NewPartitions("grow", 4)], validate_only=True)
    check("validate_only answers success", r == {"grow": None}, r)
    counts = wait_count(admin, "grow", 2, brokers)
    check("validate_only leaves 2 partitions", counts == [2] * len(brokers),
          counts)

    r = grow(admin, [NewPartitions("grow", 4)])
    check("create_partitions grows grow to 4", r == {"grow": None}, r)
    counts = wait_count(admin, "grow", 4, brokers)
    check("every broker's Metadata lists 4 partitions",
          counts == [4] * len(brokers), counts)
    leaders = [metadata_partitions(b, "grow") for b in brokers]
    check("every broker names a leader for the new partitions",
          all(l.get(2, -1) >= 0 and l.get(3, -1) >= 0 for l in leaders),
          leaders)

    sent = produce_keyed(boot, "grow", 200)
    check("200 keyed records acknowledged", len(sent) == 200, len(sent))
    bad = [(k, p) for k, p, _ in sent
           if p != (zlib.crc32(k) & 0xFFFFFFFF) % 4]
    check("keys hash over the new count (crc32 % 4)", not bad, bad[:5])
    new = sorted(x for x in sent if x[1] >= 2)
    check("some records went to partitions 2 and 3",
          {p for _, p, _ in new} == {2, 3}, {p for _, p, _ in new})
    read = sorted(consume(boot, "grow", [2, 3], len(new)))
    check("the new partitions' records consume back", read == new,
          "%d of %d" % (len(read), len(new)))

    errors = [
        ("same count: INVALID_PARTITIONS", [NewPartitions("grow", 4)],
         KafkaError.INVALID_PARTITIONS),
        ("fewer: INVALID_PARTITIONS", [NewPartitions("grow", 3)],
         KafkaError.INVALID_PARTITIONS),
        ("unknown topic: UNKNOWN_TOPIC_OR_PART", [NewPartitions("nope", 3)],
         KafkaError.UNKNOWN_TOPIC_OR_PART),
        ("too few assignments: INVALID_REPLICA_ASSIGNMENT",
         [NewPartitions("grow", 6, [[1, 2, 3]])],
         KafkaError.INVALID_REPLICA_ASSIGNMENT),
        ("replica count differs: INVALID_REPLICA_ASSIGNMENT",
         [NewPartitions("grow", 5, [[1, 2]])],
         KafkaError.INVALID_REPLICA_ASSIGNMENT),
        ("broker twice: INVALID_REPLICA_ASSIGNMENT",
         [NewPartitions("grow", 5, [[1, 2, 2]])],
         KafkaError.INVALID_REPLICA_ASSIGNMENT),
        ("unregistered broker: INVALID_REPLICA_ASSIGNMENT",
         [NewPartitions("grow", 5, [[1, 2, 9]])],
         KafkaError.INVALID_REPLICA_ASSIGNMENT),
    ]
    for name, parts, want in errors:
        r = grow(admin, parts)
        check(name, list(r.values()) == [want], r)

    r = grow(admin, [NewPartitions("grow", 5, [[3, 1, 2]])])
    check("an explicit assignment is accepted", r == {"grow": None}, r)
    wait_count(admin, "grow", 5, brokers)
    md = admin.list_topics("grow", timeout=10).topics["grow"].partitions
    check("partition 4 has the assigned replicas, led by the first",
          md[4].replicas == [3, 1, 2] and md[4].leader == 3,
          (md[4].replicas, md[4].leader))

    for v in (0, 1, 2, 3):
        r = create_partitions_raw(brokers[0], v, [("grow", 9), ("x", 2),
                                                  ("grow", 7)])
        check("v%d: a name given twice gets one INVALID_REQUEST" % v,
              sorted(r) == [("grow", 42, "Duplicate topic name."),
                            ("x", 3, "This server does not host this "
                                     "topic-partition.")], r)
    r = create_partitions_raw(brokers[1], 3, [("grow", 6)])
    check("v3 on another broker grows grow to 6", r == [("grow", 0, None)],
          r)
    counts = wait_count(admin, "grow", 6, brokers)
    check("every broker lists 6", counts == [6] * len(brokers), counts)

    # A group's coordinator lookup creates __consumer_offsets.
    consume(boot, "grow", [0], 1)
    deadline = time.time() + 30
    while time.time() < deadline and not metadata_partitions(
            brokers[0], "__consumer_offsets"):
        time.sleep(0.1)
    r = grow(admin, [NewPartitions("__consumer_offsets", 100)])
    check("__consumer_offsets does not grow (POLICY_VIOLATION)",
          list(r.values()) == [KafkaError.POLICY_VIOLATION], r)
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
