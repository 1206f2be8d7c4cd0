"""Reads a compacted topic from the beginning with confluent-kafka and
checks it is what compaction of the customer-profile example leaves:
exactly one record per customer, the latest profile for the live ones,
a tombstone for the deleted ones while tombstones are kept (none after);
records of key "zz-roll" (the writes that rolled segments) are counted
apart: the newest of them lie in segments not compacted yet.

    python_compacted.py BOOT TOPIC UPDATES KEYS DELETED TOMBSTONES
UPDATES records "cust-<i % KEYS>" = "profile-<i>" were written in order,
then a tombstone for cust-0 .. cust-<DELETED - 1>. TOMBSTONES: "kept" or
"gone". Exit 0 when the topic holds exactly that (printing what it saw).
"""
import sys

from confluent_kafka import Consumer, TopicPartition


def main():
    boot, topic = sys.argv[1], sys.argv[2]
    updates, keys, deleted = (int(x) for x in sys.argv[3:6])
    tombstones_kept = sys.argv[6] == "kept"
    want = {}
    for i in range(updates):
        want["cust-%d" % (i % keys)] = "profile-%d" % i
    for k in range(deleted):
        want["cust-%d" % k] = None
    if not tombstones_kept:
        for k in range(deleted):
            del want["cust-%d" % k]
    c = Consumer({"bootstrap.servers": boot, "group.id": "compact-check",
                  "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})
    low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    c.assign([TopicPartition(topic, 0, low)])
    got, count, rolls, last = {}, 0, 0, low - 1
    idle = 0
    while last < high - 1 and idle < 20:
        m = c.poll(0.5)
        if m is None:
            idle += 1
            continue
        if m.error():
            print("error: %s" % m.error())
            return 1
        idle = 0
        last = m.offset()
        key = m.key().decode()
        if key == "zz-roll":
            rolls += 1  # the newest are in segments not compacted yet
            continue
        count += 1
        got[key] = None if m.value() is None else m.value().decode()
    c.close()
    print("customer records=%d distinct=%d (want %d), zz-roll records=%d, "
          "offsets %d..%d" % (count, len(got), len(want), rolls, low, high))
    ok = count == len(want) and got == want and rolls >= 1
    if not ok:
        bad = [k for k in want if got.get(k, "absent") != want[k]][:5]
        print("differ: %s" % ", ".join(
            "%s=%r want %r" % (k, got.get(k, "absent"), want[k]) for k in bad))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
