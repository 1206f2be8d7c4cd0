"""Client workers of the fault-injection harness, one OS process each,
each appending its own history file (one JSON object per line, the format
of jepsen/checker.py): times are nanoseconds on the machine's monotonic
clock since the run's start (--t0), shared by every process.

    workload.py producer --id N ...   idempotent acks=all sends of unique
                                      values "N:counter", one at a time
    workload.py consumer --id N ...   assign() all partitions, poll, and
                                      now and then crash and re-assign
                                      from an earlier offset
    workload.py group --id N ...      a subscribed group member that
                                      commits what it read
    workload.py observer --id N ...   cairn status --json every second
                                      (leaders, epochs, ISRs, HWs) and
                                      uncached watermarks
    workload.py drain --id N ...      the final read: every partition from
                                      the start until past both the HW and
                                      the highest acknowledged offset

A producer that sees an error after a send may have reached the broker
(timeouts, NOT_ENOUGH_REPLICAS_AFTER_APPEND, ...) records it as `info`
and retires: it starts again under a new process id, so the checker never
mistakes an indefinite outcome for a failure.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time

from confluent_kafka import (OFFSET_BEGINNING, Consumer, KafkaError,
                             KafkaException, Producer, TopicPartition)

# A producer's process ids: N, N + RETIRE_STRIDE, N + 2 * RETIRE_STRIDE...
RETIRE_STRIDE = 1000
SEND_PAUSE_S = 0.02          # ~50 sends a second per producer
POLL_BATCH = 50
POLL_TIMEOUT_S = 0.2
CRASH_EVERY_S = (8.0, 14.0)  # a consumer restarts this often
OBSERVE_EVERY_S = 1.0
COMMIT_EVERY = 20            # records between a group member's commits


class History:
    """One worker's history file."""

    def __init__(self, path, t0):
        self.f = open(path, "a", buffering=1)
        self.t0 = t0

    def now(self):
        return time.monotonic_ns() - self.t0

    def op(self, process, typ, f, value=None, error=None, final=False,
           node=None):
        rec = {"time": self.now(), "process": process, "type": typ, "f": f}
        if value is not None:
            rec["value"] = value
        if error is not None:
            rec["error"] = error
        if final:
            rec["final"] = True
        if node is not None:
            rec["node"] = node
        self.f.write(json.dumps(rec, separators=(",", ":")) + "\n")


def running(args):
    return time.monotonic_ns() < args.until


def producer_config(args):
    if os.environ.get("JEPSEN_UNSAFE") == "1":
        # The negative control: one replica's word is enough.
        return {"bootstrap.servers": args.boot, "acks": "1",
                "enable.idempotence": False, "linger.ms": 0,
                "message.timeout.ms": 8000, "request.timeout.ms": 2000,
                "retries": 0}
    return {
        "bootstrap.servers": args.boot,
        "enable.idempotence": True,
        "acks": "all",
        "max.in.flight.requests.per.connection": 5,
        "linger.ms": 0,
        "message.timeout.ms": 8000,
        "request.timeout.ms": 2000,
        "socket.timeout.ms": 3000,
    }


def run_producer(args, h):
    rng = random.Random(args.seed * 7919 + args.id)
    process = args.id
    p = Producer(producer_config(args))
    counter = 0
    while running(args):
        key = str(rng.randrange(args.partitions))
        value = "%d:%d" % (process, counter)
        counter += 1
        h.op(process, "invoke", "send", {"key": key, "value": value})
        result = {}

        def report(err, msg, result=result):
            result["err"] = err
            result["offset"] = msg.offset() if err is None else None

        try:
            p.produce(args.topic, value=value.encode(), key=key.encode(),
                      partition=int(key), on_delivery=report)
        except (BufferError, KafkaException) as e:
            # Never handed to librdkafka's queue: it was not sent.
            h.op(process, "fail", "send", {"key": key, "value": value},
                 error=str(e))
            continue
        deadline = time.monotonic() + 15
        while "err" not in result and time.monotonic() < deadline:
            p.poll(0.05)
        err = result.get("err")
        if "err" in result and err is None:
            h.op(process, "ok", "send",
                 {"key": key, "value": value, "offset": result["offset"]})
        else:
            h.op(process, "info", "send",
                 {"key": key, "value": value, "offset": None},
                 error=str(err) if err is not None else "no delivery report")
            # An indefinite outcome: retire this producer and its id.
            p.flush(5)
            process += RETIRE_STRIDE
            p = Producer(producer_config(args))
        time.sleep(SEND_PAUSE_S)
    p.flush(10)


def consumer(args, group, reset="error"):
    """reset: where a partition without a position starts. The assigned
    consumer always gives one ("error" catches a position the broker
    calls out of range); a new group has no committed offsets and starts
    at the earliest."""
    return Consumer({
        "bootstrap.servers": args.boot,
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": reset,
        "enable.partition.eof": False,
        "fetch.wait.max.ms": 200,
        "session.timeout.ms": 6000,
    })


def records_of(msgs):
    """Polled messages as {"key": [[offset, value], ...]}; errors apart."""
    out, errors = {}, []
    for m in msgs:
        if m.error() is not None:
            errors.append(str(m.error()))
            continue
        out.setdefault(str(m.partition()), []).append(
            [m.offset(), m.value().decode()])
    return out, errors


def run_consumer(args, h):
    rng = random.Random(args.seed * 104729 + args.id)
    process = args.id
    c = consumer(args, "jepsen-assign-%d" % args.id)
    starts = {str(k): 0 for k in range(args.partitions)}
    next_crash = time.monotonic() + rng.uniform(*CRASH_EVERY_S)
    h.op(process, "invoke", "assign", {"keys": list(starts), "offsets": starts})
    c.assign([TopicPartition(args.topic, int(k), o) for k, o in starts.items()])
    h.op(process, "ok", "assign", {"keys": list(starts), "offsets": starts})
    seen = dict(starts)
    while running(args):
        h.op(process, "invoke", "poll")
        try:
            msgs = c.consume(POLL_BATCH, POLL_TIMEOUT_S)
        except KafkaException as e:
            h.op(process, "info", "poll", error=str(e))
            msgs = []
        else:
            recs, errors = records_of(msgs)
            if errors:
                h.op(process, "info", "poll", {"records": recs},
                     error="; ".join(errors))
            else:
                h.op(process, "ok", "poll", {"records": recs})
            for k, rs in recs.items():
                seen[k] = rs[-1][0] + 1
        if time.monotonic() >= next_crash:
            h.op(process, "invoke", "crash")
            c.close()
            h.op(process, "ok", "crash")
            # Re-read from the start or from some earlier offset.
            starts = {k: (0 if rng.random() < 0.5
                          else rng.randrange(0, max(1, v)))
                      for k, v in seen.items()}
            c = consumer(args, "jepsen-assign-%d" % args.id)
            h.op(process, "invoke", "assign",
                 {"keys": list(starts), "offsets": starts})
            c.assign([TopicPartition(args.topic, int(k), o)
                      for k, o in starts.items()])
            h.op(process, "ok", "assign",
                 {"keys": list(starts), "offsets": starts})
            next_crash = time.monotonic() + rng.uniform(*CRASH_EVERY_S)
    c.close()


def run_group(args, h):
    process = args.id
    group = "jepsen-group"
    c = consumer(args, group, reset="earliest")
    c.subscribe([args.topic])
    since_commit = 0
    while running(args):
        try:
            msgs = c.consume(POLL_BATCH, POLL_TIMEOUT_S)
        except KafkaException:
            continue
        since_commit += len([m for m in msgs if m.error() is None])
        if since_commit < COMMIT_EVERY:
            continue
        since_commit = 0
        h.op(process, "invoke", "commit", {"group": group})
        try:
            parts = c.commit(asynchronous=False)
        except KafkaException as e:
            h.op(process, "info", "commit", {"group": group}, error=str(e))
            continue
        offsets = {str(tp.partition): tp.offset for tp in parts or []
                   if tp.error is None and tp.offset >= 0}
        h.op(process, "ok", "commit", {"group": group, "offsets": offsets})
    c.close()


def cairn_status(args):
    env = dict(os.environ)
    out = subprocess.run(
        [args.cairn, "--controllers", args.controllers, "status", "--json"],
        capture_output=True, text=True, timeout=10, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-200:])
    return json.loads(out.stdout)


def metadata_of(status, topic):
    """The observer's metadata op value from a cairn status --json."""
    parts = {}
    for t in status.get("topics", []):
        if t.get("name") != topic:
            continue
        for p in t.get("partitions", []):
            parts[str(p["partition"])] = {
                "leader": p.get("leader"),
                "leader_epoch": p.get("leader_epoch"),
                "partition_epoch": p.get("partition_epoch"),
                "replicas": p.get("replicas", []),
                "isr": p.get("isr", []),
                "hw": p.get("hw"),
                "end_offsets": p.get("end_offsets"),
            }
    active = [c["id"] for c in status.get("controllers", [])
              if c.get("active")]
    return {"partitions": parts, "controller": active[0] if active else None}


def run_observer(args, h):
    process = args.id
    c = consumer(args, "jepsen-observer")
    committed_reader = consumer(args, "jepsen-group")
    while running(args):
        t = time.monotonic()
        h.op(process, "invoke", "metadata")
        try:
            h.op(process, "ok", "metadata",
                 metadata_of(cairn_status(args), args.topic))
        except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
            h.op(process, "fail", "metadata", error=str(e))
        h.op(process, "invoke", "watermarks")
        marks, error = {}, None
        for k in range(args.partitions):
            try:
                lo, hi = c.get_watermark_offsets(
                    TopicPartition(args.topic, k), timeout=2, cached=False)
                marks[str(k)] = [lo, hi]
            except KafkaException as e:
                error = str(e)
        if marks:
            h.op(process, "ok", "watermarks", marks)
        else:
            h.op(process, "fail", "watermarks", error=error)
        h.op(process, "invoke", "committed", {"group": "jepsen-group"})
        try:
            parts = committed_reader.committed(
                [TopicPartition(args.topic, k)
                 for k in range(args.partitions)], timeout=2)
            offsets = {str(tp.partition): tp.offset for tp in parts
                       if tp.offset >= 0}
            h.op(process, "ok", "committed",
                 {"group": "jepsen-group", "offsets": offsets})
        except KafkaException as e:
            h.op(process, "fail", "committed", {"group": "jepsen-group"},
                 error=str(e))
        time.sleep(max(0.0, OBSERVE_EVERY_S - (time.monotonic() - t)))
    c.close()
    committed_reader.close()


def run_drain(args, h):
    """Reads every partition from its start until the position passes the
    HW read now and one past the highest acknowledged offset (--targets,
    {"key": offset}); ops are marked final."""
    process = args.id
    targets = json.loads(args.targets)
    c = consumer(args, "jepsen-drain-%d" % args.id)
    probe = consumer(args, "jepsen-drain-probe")
    hw = {}
    for k in range(args.partitions):
        h.op(process, "invoke", "watermarks", final=True)
        lo, hi = probe.get_watermark_offsets(TopicPartition(args.topic, k),
                                             timeout=10, cached=False)
        hw[str(k)] = hi
        h.op(process, "ok", "watermarks", {str(k): [lo, hi]}, final=True)
    probe.close()
    want = {k: max(hw.get(k, 0), targets.get(k, 0)) for k in hw}
    starts = {k: 0 for k in hw}
    h.op(process, "invoke", "assign", {"keys": list(starts),
                                       "offsets": starts}, final=True)
    c.assign([TopicPartition(args.topic, int(k), OFFSET_BEGINNING)
              for k in starts])
    h.op(process, "ok", "assign", {"keys": list(starts), "offsets": starts},
         final=True)
    pos = dict(starts)
    deadline = time.monotonic() + args.drain_s
    while any(pos[k] < want[k] for k in want) and time.monotonic() < deadline:
        h.op(process, "invoke", "poll", final=True)
        try:
            msgs = c.consume(POLL_BATCH * 4, POLL_TIMEOUT_S)
        except KafkaException as e:
            h.op(process, "info", "poll", error=str(e), final=True)
            continue
        recs, errors = records_of(msgs)
        h.op(process, "ok" if not errors else "info", "poll",
             {"records": recs}, error="; ".join(errors) or None, final=True)
        for k, rs in recs.items():
            pos[k] = rs[-1][0] + 1
    c.close()
    done = all(pos[k] >= want[k] for k in want)
    print(json.dumps({"drained": done, "positions": pos, "wanted": want}))
    return 0 if done else 3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=["producer", "consumer", "group",
                                     "observer", "drain"])
    ap.add_argument("--id", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--boot", required=True)
    ap.add_argument("--controllers", default="")
    ap.add_argument("--cairn", default="cairn")
    ap.add_argument("--topic", required=True)
    ap.add_argument("--partitions", type=int, required=True)
    ap.add_argument("--t0", type=int, required=True)
    ap.add_argument("--until", type=int, default=0,
                    help="monotonic ns at which to stop")
    ap.add_argument("--out", required=True)
    ap.add_argument("--targets", default="{}")
    ap.add_argument("--drain-s", type=float, default=30.0)
    args = ap.parse_args()
    h = History(args.out, args.t0)
    roles = {"producer": run_producer, "consumer": run_consumer,
             "group": run_group, "observer": run_observer,
             "drain": run_drain}
    rc = roles[args.role](args, h)
    sys.exit(rc or 0)


if __name__ == "__main__":
    main()
