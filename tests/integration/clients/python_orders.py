"""confluent-kafka against Cairn: the idempotent lz4 producer from the
issue, unchanged, then an assign()ed consumer with a group.id reads every
record back with its key, value and headers, in order per key.
    python_orders.py BOOTSTRAP"""
import json, sys
from confluent_kafka import Producer, Consumer, TopicPartition
BOOT = sys.argv[1]
p = Producer({"bootstrap.servers": BOOT, "acks": "all", "enable.idempotence": True,
              "compression.type": "lz4", "linger.ms": 5, "batch.size": 65536})
sent = []
for i in range(1000):
    user_id = f"user-{i % 17}"
    order = {"id": i, "total": i * 3}
    p.produce("orders.placed", key=user_id, value=json.dumps(order).encode(),
              headers=[("n", str(i).encode())])
    sent.append((user_id, order))
assert p.flush(30) == 0
c = Consumer({"bootstrap.servers": BOOT, "group.id": "g1", "enable.auto.commit": False})
md = c.list_topics("orders.placed", timeout=10)
parts = sorted(md.topics["orders.placed"].partitions)
c.assign([TopicPartition("orders.placed", p, 0) for p in parts])
got = []
import time
deadline = time.time() + 30
while len(got) < 1000 and time.time() < deadline:
    m = c.poll(1.0)
    if m is None or m.error():
        continue
    got.append((m.key().decode(), json.loads(m.value()), dict(m.headers())["n"].decode(), m.partition()))
by_key = {}
for k, v, n, part in got:
    by_key.setdefault(k, []).append(v["id"])
for k, ids in by_key.items():
    assert ids == sorted(ids), k
assert sorted(v["id"] for _, v, _, _ in got) == list(range(1000)), len(got)
for k, v, n, _ in got:
    assert int(n) == v["id"] and k == f"user-{v['id'] % 17}"
c.close()
print("ok")
