"""Records and committed offsets for tests/integration/burrow.sh, with
confluent-kafka (Debian's python3-confluent-kafka, so run it with
/usr/bin/python3).

    burrow_setup.py topic BOOTSTRAP TOPIC N
        Creates TOPIC (2 partitions, 3 replicas) and writes N keyed records
        to each partition (acks all).
    burrow_setup.py commit BOOTSTRAP TOPIC GROUP P=OFFSET...
        Commits OFFSET for partition P of TOPIC in GROUP without joining it
        (as a standalone consumer does) and reads the commits back.

Prints "FAIL what: why" and exits 1 when something failed.
"""
import sys

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def fail(what, why):
    print(f"FAIL {what}: {why}")
    sys.exit(1)


def topic(boot, name, n):
    admin = AdminClient({"bootstrap.servers": boot})
    for f in admin.create_topics([NewTopic(name, 2, 3)],
                                 operation_timeout=20).values():
        f.result(30)
    p = Producer({"bootstrap.servers": boot, "acks": "all"})
    errors = []

    def report(err, msg):
        if err is not None:
            errors.append(err)
    for i in range(n):
        for part in range(2):
            p.produce(name, key=f"k-{part}-{i}", value=f"v-{part}-{i}",
                      partition=part, on_delivery=report)
    left = p.flush(30)
    if left or errors:
        fail(f"{name}: {n} records in each partition",
             f"{left} unsent, errors {errors}")


def commit(boot, name, group, specs):
    want = {}
    for spec in specs:
        part, off = spec.split("=")
        want[int(part)] = int(off)
    c = Consumer({"bootstrap.servers": boot, "group.id": group,
                  "enable.auto.commit": False})
    try:
        tps = [TopicPartition(name, p, o) for p, o in sorted(want.items())]
        c.commit(offsets=tps, asynchronous=False)
        got = c.committed([TopicPartition(name, p) for p in sorted(want)],
                          timeout=15)
    finally:
        c.close()
    have = {tp.partition: tp.offset for tp in got}
    if have != want:
        fail(f"{group} commits {want}", f"read back {have}")


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "topic" and len(sys.argv) == 5:
        topic(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "commit" and len(sys.argv) >= 6:
        commit(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


main()
