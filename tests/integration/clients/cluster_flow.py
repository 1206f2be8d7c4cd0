"""DescribeCluster and DescribeLogDirs on the wire, against a running Cairn
cluster whose data directory is given: DescribeCluster v0 and v1 from
every broker (cluster id, the live brokers with host and port, a live
broker as ControllerId, EndpointType 1, the authorized-operations field,
Kafka's endpoint-type errors), and DescribeLogDirs v0..v4 from every
broker (the absolute log dir, each hosted partition's size equal to its
segment files on disk, offset lag 0 when caught up, IsFutureKey false,
a filter by topic and partition, v3's ErrorCode, v4's TotalBytes and
UsableBytes as statvfs of the dir says).

    cluster_flow.py BOOTSTRAP DATA_DIR
Prints a [PASS]/[FAIL] line per check; exit 0 when all passed.
"""
import glob
import os
import sys
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from partitions_flow import Reader, call, check, cstr, kstr, uvarint  # noqa
import partitions_flow  # noqa: E402  (its failure count)

TOPIC = "dirs"


def describe_cluster(addr, version, include_ops=False, endpoint=1):
    body = bytes([1 if include_ops else 0])
    if version >= 1:
        body += bytes([endpoint & 0xFF])
    body += b"\x00"
    r = Reader(call(addr, 60, version, body, flexible=True))
    r.uvarint()  # response header tags
    out = {"throttle": r.take(">i"), "error": r.take(">h"),
           "message": r.cstring()}
    out["endpoint"] = r.take(">b") if version >= 1 else None
    out["cluster_id"] = r.cstring()
    out["controller"] = r.take(">i")
    brokers = []
    for _ in range(r.uvarint() - 1):
        b = (r.take(">i"), r.cstring(), r.take(">i"), r.cstring())
        r.uvarint()
        brokers.append(b)
    out["brokers"] = brokers
    out["ops"] = r.take(">i")
    return out


def describe_log_dirs(addr, version, topics=None):
    """{dir: (error, {(topic, p): (size, lag, future)}, total, usable)}."""
    flex = version >= 2
    arr = (lambda n: uvarint(n + 1)) if flex else (
        lambda n: n.to_bytes(4, "big", signed=True))
    st = cstr if flex else kstr
    if topics is None:
        body = arr(-1)
    else:
        body = arr(len(topics))
        for t, ps in topics:
            body += st(t) + arr(len(ps))
            for p in ps:
                body += p.to_bytes(4, "big", signed=True)
            body += b"\x00" if flex else b""
    body += b"\x00" if flex else b""
    r = Reader(call(addr, 35, version, body, flexible=flex))
    if flex:
        r.uvarint()
    r.take(">i")
    top_error = r.take(">h") if version >= 3 else None
    n = r.uvarint() - 1 if flex else r.take(">i")
    dirs = {}
    for _ in range(n):
        err = r.take(">h")
        d = r.cstring() if flex else r.string()
        parts = {}
        for _ in range(r.uvarint() - 1 if flex else r.take(">i")):
            name = r.cstring() if flex else r.string()
            for _ in range(r.uvarint() - 1 if flex else r.take(">i")):
                p, size, lag, fut = (r.take(">i"), r.take(">q"),
                                     r.take(">q"), r.take(">?"))
                if flex:
                    r.uvarint()
                parts[(name, p)] = (size, lag, fut)
            if flex:
                r.uvarint()
        total = usable = None
        if version >= 4:
            total, usable = r.take(">q"), r.take(">q")
        if flex:
            r.uvarint()
        dirs[d] = (err, parts, total, usable)
    return top_error, dirs


def on_disk(data, broker_id):
    """{(topic, p): bytes of its .log segment files} of one broker."""
    out = {}
    for d in glob.glob("%s/broker-%d/logs/*-[0-9]*" % (data, broker_id)):
        topic, _, p = os.path.basename(d).rpartition("-")
        out[(topic, int(p))] = sum(os.path.getsize(f)
                                   for f in glob.glob(d + "/*.log"))
    return out


def main():
    boot, data = sys.argv[1], sys.argv[2]
    brokers = boot.split(",")
    admin = AdminClient({"bootstrap.servers": boot})
    for _, f in admin.create_topics([NewTopic(TOPIC, 3, 2)]).items():
        f.result()
    p = Producer({"bootstrap.servers": boot, "acks": "all"})
    for i in range(300):
        p.produce(TOPIC, key=b"k%d" % i, value=b"v" * (i % 50))
    check("300 records acknowledged", p.flush(30) == 0)

    ports = sorted(int(b.split(":")[1]) for b in brokers)
    for addr in brokers:
        for v in (0, 1):
            c = describe_cluster(addr, v)
            got = sorted((b[0], b[2]) for b in c["brokers"])
            check("DescribeCluster v%d from %s: 3 live brokers, host and "
                  "port" % (v, addr),
                  c["error"] == 0 and [x[1] for x in got] == ports and
                  all(b[1] == "127.0.0.1" for b in c["brokers"]), c)
            check("DescribeCluster v%d from %s: cluster id, a live broker "
                  "as controller, EndpointType" % (v, addr),
                  c["cluster_id"] == "cairn" and
                  c["controller"] in [b[0] for b in c["brokers"]] and
                  c["endpoint"] == (None if v == 0 else 1) and
                  c["ops"] == -2**31, c)
    c = describe_cluster(brokers[0], 1, include_ops=True)
    check("IncludeClusterAuthorizedOperations: Kafka's 8096 (no authorizer)",
          c["ops"] == 8096, c["ops"])
    c = describe_cluster(brokers[0], 1, endpoint=2)
    check("EndpointType 2 (controllers): MISMATCHED_ENDPOINT_TYPE",
          c["error"] == 114 and c["brokers"] == [] and
          c["controller"] == -1, c)
    c = describe_cluster(brokers[0], 1, endpoint=7)
    check("EndpointType 7: UNSUPPORTED_ENDPOINT_TYPE",
          c["error"] == 115 and c["message"] == "Unsupported endpoint type 7",
          c)

    for i, addr in enumerate(brokers):
        bid = i + 1
        deadline = time.time() + 30
        while True:  # followers catch up; sizes settle
            _, dirs = describe_log_dirs(addr, 4)
            (d, (err, parts, total, usable)), = dirs.items()
            disk = on_disk(data, bid)
            mine = {k: v[0] for k, v in parts.items() if k[0] == TOPIC}
            want = {k: v for k, v in disk.items() if k[0] == TOPIC}
            if (mine == want and all(v[1] == 0 for v in parts.values())) \
                    or time.time() > deadline:
                break
            time.sleep(0.1)
        check("broker %d: the absolute log dir" % bid,
              d == os.path.abspath("%s/broker-%d/logs" % (data, bid)), d)
        check("broker %d: every hosted partition with its bytes on disk"
              % bid, mine == want and len(mine) == 2 and
              all(v > 0 for v in mine.values()), (mine, want))
        check("broker %d: lag 0, not future" % bid,
              all(v[1] == 0 and not v[2] for v in parts.values()), parts)
        vfs = os.statvfs(d)
        check("broker %d: v4 TotalBytes is statvfs's" % bid,
              total == vfs.f_blocks * vfs.f_frsize, (total,))
        check("broker %d: v4 UsableBytes near statvfs's" % bid,
              abs(usable - vfs.f_bavail * vfs.f_frsize) < 64 << 20,
              (usable, vfs.f_bavail * vfs.f_frsize))
        for v in (0, 1, 2, 3):
            top, dv = describe_log_dirs(addr, v)
            (_, (e, pv, tv, uv)), = dv.items()
            check("broker %d: v%d says the same" % (bid, v),
                  e == 0 and {k: x[0] for k, x in pv.items()
                              if k[0] == TOPIC} == mine and
                  top == (0 if v >= 3 else None) and tv is None, (v, pv))
        ask = [(TOPIC, [0, 1, 2, 9, 0]), ("nope", [0])]
        _, dv = describe_log_dirs(addr, 2, ask)
        (_, (_, pv, _, _)), = dv.items()
        check("broker %d: a filter gives only the named hosted partitions"
              % bid, set(pv) == set(mine), sorted(pv))
    return 0 if partitions_flow.failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
