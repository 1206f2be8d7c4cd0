"""Load and check for the replication tests (tests/integration/
test_replication.c), with confluent-kafka (Debian's python3-confluent-kafka,
so run it with /usr/bin/python3).

    repl_load.py produce BOOTSTRAP TOPIC OUT_FILE STOP_FILE [RATE]
        An idempotent acks=all producer sends the values "0", "1", "2", ...
        (key = value % 16, so several partitions are used) at about RATE
        messages a second (default 2000) until STOP_FILE exists, or for
        300 s at most; then flushes for up to 60 s and exits. Each successful
        delivery report appends "partition offset value" to OUT_FILE, each
        failed one "ERR partition value errname"; the file is flushed after
        every poll, so a test can watch the acknowledged count grow.

    repl_load.py verify BOOTSTRAP TOPIC OUT_FILE
        Reads every partition from its start to its high watermark and
        checks that every acknowledged record is at exactly its partition
        and offset with its value, that no value appears twice in the topic,
        and that within a partition the values of one key increase. Prints
        one summary line; exits 1 on any violation, listing the first few.

Records without a key or whose value is not a decimal number are not this
tool's (a test may write raw batches to the same topic): they are counted
as "foreign" and otherwise ignored.
"""
import os
import sys
import time

from confluent_kafka import (Consumer, KafkaError, KafkaException, Producer,
                             TopicPartition)

KEYS = 16
RUN_S_MAX = 300.0
FLUSH_S_MAX = 60.0
VERIFY_S_MAX = 90.0
SHOW_MAX = 10


def log(msg):
    sys.stderr.write("repl_load: %s\n" % msg)
    sys.stderr.flush()


def produce(boot, topic, out_path, stop_path, rate):
    out = open(out_path, "a")
    stats = {"acked": 0, "failed": 0}

    def delivered(err, msg):
        value = msg.value().decode()
        if err is not None:
            stats["failed"] += 1
            out.write("ERR %d %s %s\n" % (msg.partition(), value, err.name()))
        else:
            stats["acked"] += 1
            out.write("%d %d %s\n" % (msg.partition(), msg.offset(), value))

    def on_error(err):
        log("client error: %s%s" % (err, " (FATAL)" if err.fatal() else ""))

    p = Producer({
        "bootstrap.servers": boot,
        "acks": "all",
        "enable.idempotence": True,
        "linger.ms": 5,
        "message.timeout.ms": 120000,
        "error_cb": on_error,
    })
    started = time.monotonic()
    last = started
    next_check = started
    credit = 0.0  # messages due; capped, so no burst after an outage
    produced = 0
    while True:
        now = time.monotonic()
        if now - started > RUN_S_MAX:
            log("stopping after %d s without %s" % (RUN_S_MAX, stop_path))
            break
        if now >= next_check:
            if os.path.exists(stop_path):
                break
            next_check = now + 0.1
        credit = min(credit + (now - last) * rate, rate / 10.0 + 1.0)
        last = now
        while credit >= 1.0:
            try:
                p.produce(topic, key=str(produced % KEYS),
                          value=str(produced), on_delivery=delivered)
            except BufferError:
                break  # queue full (brokers down): poll, then try again
            produced += 1
            credit -= 1.0
        p.poll(0.005)
        out.flush()
    remaining = p.flush(FLUSH_S_MAX)
    out.flush()
    out.close()
    print("produce: produced=%d acked=%d failed=%d unfinished=%d" %
          (produced, stats["acked"], stats["failed"], remaining))
    sys.stdout.flush()
    return 0


def read_acked(out_path):
    """(acked list of (partition, offset, value), failed count)."""
    acked = []
    failed = 0
    with open(out_path) as f:
        for line in f:
            if not line.endswith("\n"):
                break  # a torn last line from a killed producer
            parts = line.split()
            if parts and parts[0] == "ERR":
                failed += 1
            elif len(parts) == 3:
                acked.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return acked, failed


def watermarks(c, topic, part):
    """(low, high) of a partition. Right after a whole-cluster restart
    the client's own metadata cache may not hold the partition yet (a
    local _UNKNOWN_PARTITION or _LEADER_NOT_AVAILABLE): asked again until
    it does, for 30 s at most."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return c.get_watermark_offsets(TopicPartition(topic, part),
                                           timeout=30)
        except KafkaException as e:
            code = e.args[0].code()
            if (code not in (KafkaError._UNKNOWN_PARTITION,
                             KafkaError.LEADER_NOT_AVAILABLE,
                             KafkaError.NOT_LEADER_FOR_PARTITION) or
                    time.monotonic() > deadline):
                raise
            print("verify: partition %d watermarks: %s, asking again"
                  % (part, e), file=sys.stderr)
            time.sleep(0.2)


def read_topic(boot, topic):
    """{partition: {offset: (key, value)}}, {partition: high}, foreign."""
    c = Consumer({
        "bootstrap.servers": boot,
        "group.id": "repl-load-verify-%d" % os.getpid(),
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        "auto.offset.reset": "earliest",
    })
    md = c.list_topics(topic, timeout=30)
    if topic not in md.topics or md.topics[topic].error is not None:
        raise RuntimeError("topic %s not in the metadata" % topic)
    parts = sorted(md.topics[topic].partitions)
    ends = {}
    for part in parts:
        ends[part] = watermarks(c, topic, part)
    c.assign([TopicPartition(topic, part, ends[part][0]) for part in parts])
    records = {part: {} for part in parts}
    pending = {part for part in parts if ends[part][1] > ends[part][0]}
    foreign = 0
    deadline = time.monotonic() + VERIFY_S_MAX
    while pending and time.monotonic() < deadline:
        for m in c.consume(num_messages=1000, timeout=1.0):
            part = m.partition()
            if m.error() is not None:
                if m.error().code() == KafkaError._PARTITION_EOF:
                    if m.offset() >= ends[part][1]:
                        pending.discard(part)
                else:
                    log("consume error: %s" % m.error())
                continue
            if m.offset() >= ends[part][1]:
                pending.discard(part)
                continue
            key, value = m.key(), m.value()
            try:
                if key is None or value is None:
                    raise ValueError
                records[part][m.offset()] = (int(key), int(value))
            except ValueError:
                foreign += 1
            if m.offset() + 1 >= ends[part][1]:
                pending.discard(part)
    c.close()
    if pending:
        raise RuntimeError("partitions %s not read to their high watermark "
                           "in %d s" % (sorted(pending), VERIFY_S_MAX))
    return records, {p: e[1] for p, e in ends.items()}, foreign


def verify(boot, topic, out_path):
    acked, failed = read_acked(out_path)
    try:
        records, highs, foreign = read_topic(boot, topic)
    except Exception as e:  # noqa: BLE001 - any failure to read is a fail
        print("verify: FAIL cannot read the topic: %s" % e)
        return 1
    problems = []
    # Every acknowledged record at exactly its partition and offset.
    lost = 0
    for part, off, value in acked:
        got = records.get(part, {}).get(off)
        if got is None or got[1] != value:
            lost += 1
            if len(problems) < SHOW_MAX:
                problems.append("acked value %d at %d/%d: found %s (high %s)"
                                % (value, part, off,
                                   "nothing" if got is None else got[1],
                                   highs.get(part)))
    # No value twice.
    seen = {}
    dups = 0
    bad_key = 0
    for part in sorted(records):
        for off in sorted(records[part]):
            key, value = records[part][off]
            if key != value % KEYS:
                bad_key += 1
                if len(problems) < SHOW_MAX:
                    problems.append("value %d at %d/%d has key %d" %
                                    (value, part, off, key))
            if value in seen:
                dups += 1
                if len(problems) < SHOW_MAX:
                    problems.append("value %d at %d/%d and at %d/%d" %
                                    ((value,) + seen[value] + (part, off)))
            else:
                seen[value] = (part, off)
    # Per partition and key, values in increasing order.
    disorder = 0
    for part in sorted(records):
        last = {}
        for off in sorted(records[part]):
            key, value = records[part][off]
            if key in last and last[key][1] >= value:
                disorder += 1
                if len(problems) < SHOW_MAX:
                    problems.append("key %d in partition %d: %d at %d after "
                                    "%d at %d" % (key, part, value, off,
                                                  last[key][1], last[key][0]))
            last[key] = (off, value)
    total = sum(len(r) for r in records.values())
    ok = lost == 0 and dups == 0 and disorder == 0 and bad_key == 0
    print("verify: %s acked=%d failed=%d in_topic=%d foreign=%d lost=%d "
          "duplicates=%d out_of_order=%d bad_key=%d highs=%s" %
          ("ok" if ok else "FAIL", len(acked), failed, total, foreign, lost,
           dups, disorder, bad_key,
           ",".join("%d:%d" % (p, highs[p]) for p in sorted(highs))))
    for line in problems[:SHOW_MAX]:
        print("  " + line)
    return 0 if ok else 1


def main(argv):
    if len(argv) >= 6 and argv[1] == "produce":
        rate = float(argv[6]) if len(argv) > 6 else 2000.0
        return produce(argv[2], argv[3], argv[4], argv[5], rate)
    if len(argv) == 5 and argv[1] == "verify":
        return verify(argv[2], argv[3], argv[4])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
