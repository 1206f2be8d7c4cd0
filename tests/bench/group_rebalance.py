"""Rebalance timing for the consumer group benchmark (tests/bench/
bench_groups.c runs it as a child), with confluent-kafka (Debian's
python3-confluent-kafka, so run it with /usr/bin/python3).

    group_rebalance.py BOOTSTRAP TOPIC RUNS

TOPIC exists already, with PARTITIONS partitions. A producer thread writes
one small record to every partition every TRICKLE_S seconds (acks=all), so
a consumer always has something to read soon after it is assigned a
partition. Three consumers (one thread each, in one group: range assignor,
heartbeat.interval.ms 100, session.timeout.ms 6000, auto commit) subscribe
and the group settles: every member holds its share of the partitions and
has read a record from it. Then, RUNS times:

  join   a 4th member subscribes; timed from just before its subscribe()
         until every one of the 4 members has been assigned its new share
         (PARTITIONS / 4 partitions, together all of them) and has read a
         record from it;
  leave  the 4th member closes (LeaveGroup); timed the same way until the
         3 members hold PARTITIONS / 3 each again (the group is stable for
         the next run);
  solo   the baseline: one consumer alone in a fresh group subscribes,
         timed until it has read a record: the same client's
         FindCoordinator, JoinGroup, SyncGroup, OffsetFetch and Fetch
         path, with no other member to wait for.

A member learns of a rebalance at its next heartbeat, so up to
heartbeat.interval.ms of a join is the clients' own timer; what the
coordinator, the commits on revocation and the fetches add comes on top.

Prints one `run` line per run and a RESULT line (median, min and max of
join, beyond_timers_ms = median - heartbeat interval against the floor of
FLOOR_BEYOND_MS, and the ratio of the join median to the solo median) on
stdout; client errors go to stderr. Exits 1 if the group does not settle
within SETTLE_S_MAX at some step.
"""
import os
import statistics
import sys
import threading
import time

from confluent_kafka import Consumer, Producer

PARTITIONS = 12
MEMBERS = 3
HEARTBEAT_MS = 100
SESSION_MS = 6000
TRICKLE_S = 0.02
POLL_S = 0.05       # poll() returns at once when something is there
SETTLE_S_MAX = 30.0
CHECK_S = 0.002     # how often the main thread looks at the members
PAUSE_S = 0.3       # between steps, once settled; not timed
FLOOR_BEYOND_MS = 1000


def log(msg):
    sys.stderr.write("group_rebalance: %s\n" % msg)
    sys.stderr.flush()


def on_error(err):
    log("client error: %s" % err)


class Trickle:
    """A producer thread: one record to every partition per TRICKLE_S."""

    def __init__(self, boot, topic):
        self.topic = topic
        self.stop = threading.Event()
        self.producer = Producer({
            "bootstrap.servers": boot,
            "acks": "all",
            "linger.ms": 5,
            "error_cb": on_error,
        })
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        n = 0
        while not self.stop.is_set():
            for p in range(PARTITIONS):
                self.producer.produce(self.topic, value=b"%d" % n,
                                      partition=p)
            n += 1
            self.producer.poll(0)
            time.sleep(TRICKLE_S)
        self.producer.flush(10)


class Member:
    """One consumer on its own thread. What the main thread reads (under
    lock): the current assignment, when it came, and when the first record
    from it arrived."""

    def __init__(self, boot, topic, group, name):
        self.topic = topic
        self.name = name
        self.lock = threading.Lock()
        self.assigned = frozenset()
        self.assigned_at = None
        self.first_at = None
        self.subscribed_at = None
        self.failed = None
        self.stop = threading.Event()
        self.consumer = Consumer({
            "bootstrap.servers": boot,
            "group.id": group,
            "client.id": name,
            "heartbeat.interval.ms": HEARTBEAT_MS,
            "session.timeout.ms": SESSION_MS,
            "partition.assignment.strategy": "range",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": True,
            "auto.commit.interval.ms": 1000,
            "error_cb": on_error,
        })
        self.thread = threading.Thread(target=self.run, daemon=True)

    def on_assign(self, consumer, parts):
        now = time.monotonic()
        with self.lock:
            self.assigned = frozenset(p.partition for p in parts)
            self.assigned_at = now
            self.first_at = None

    def on_revoke(self, consumer, parts):
        with self.lock:
            self.assigned = frozenset()
            self.assigned_at = None
            self.first_at = None

    def run(self):
        try:
            self.subscribed_at = time.monotonic()
            self.consumer.subscribe([self.topic], on_assign=self.on_assign,
                                    on_revoke=self.on_revoke)
            while not self.stop.is_set():
                msg = self.consumer.poll(POLL_S)
                if msg is None:
                    continue
                if msg.error():
                    log("%s: %s" % (self.name, msg.error()))
                    continue
                now = time.monotonic()
                with self.lock:
                    if (self.first_at is None and
                            msg.partition() in self.assigned):
                        self.first_at = now
        except Exception as e:  # reported by the main thread
            self.failed = "%s: %r" % (self.name, e)
        finally:
            self.consumer.close()

    def start(self):
        """Starts the thread; returns once subscribe() is about to run."""
        self.thread.start()
        while self.subscribed_at is None:
            time.sleep(CHECK_S / 2)
        return self.subscribed_at

    def close(self):
        self.stop.set()
        self.thread.join()

    def snapshot(self):
        with self.lock:
            return self.assigned, self.assigned_at, self.first_at


def settled(members, since):
    """(last first-record time, [(assigned, first) offsets in ms]) once
    every member holds its even share, assigned after since, together all
    partitions, each with a record read; else None."""
    share = PARTITIONS // len(members)
    union = set()
    last = since
    detail = []
    for m in members:
        if m.failed is not None:
            raise RuntimeError(m.failed)
        assigned, assigned_at, first_at = m.snapshot()
        if (len(assigned) != share or assigned_at is None or
                assigned_at < since or first_at is None):
            return None
        union |= assigned
        last = max(last, first_at)
        detail.append(((assigned_at - since) * 1e3,
                       (first_at - since) * 1e3))
    if len(union) != PARTITIONS:
        return None
    return last, detail


def wait_settled(members, since, what):
    deadline = time.monotonic() + SETTLE_S_MAX
    while time.monotonic() < deadline:
        got = settled(members, since)
        if got is not None:
            return (got[0] - since) * 1e3, got[1]
        time.sleep(CHECK_S)
    for m in members:
        assigned, assigned_at, first_at = m.snapshot()
        log("%s: assigned %s at %s, first record at %s" % (
            m.name, sorted(assigned), assigned_at, first_at))
    log("%s: not settled in %.0f s" % (what, SETTLE_S_MAX))
    sys.exit(1)


def fmt(detail, k):
    return ",".join("%.0f" % d[k] for d in detail)


def main():
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        sys.exit(2)
    boot, topic, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tag = "%d-%d" % (os.getpid(), int(time.time()))
    group = "bench-rebalance-%s" % tag
    trickle = Trickle(boot, topic)
    trickle.thread.start()
    members = [Member(boot, topic, group, "member-%d" % i)
               for i in range(MEMBERS)]
    formed_from = time.monotonic()
    for m in members:
        m.start()
    formation_ms, _ = wait_settled(members, formed_from, "formation")
    print("info bench=group_rebalance formation_ms=%.0f members=%d "
          "partitions=%d" % (formation_ms, MEMBERS, PARTITIONS))
    sys.stdout.flush()
    joins, leaves, solos = [], [], []
    for run in range(runs):
        time.sleep(PAUSE_S)
        extra = Member(boot, topic, group, "member-%d" % MEMBERS)
        since = extra.start()
        join_ms, join_detail = wait_settled(members + [extra], since,
                                            "join %d" % (run + 1))
        time.sleep(PAUSE_S)
        since = time.monotonic()
        extra.close()
        leave_ms, _ = wait_settled(members, since, "leave %d" % (run + 1))
        solo = Member(boot, topic, "bench-solo-%s-%d" % (tag, run), "solo")
        since = solo.start()
        solo_ms, _ = wait_settled([solo], since, "solo %d" % (run + 1))
        solo.close()
        joins.append(join_ms)
        leaves.append(leave_ms)
        solos.append(solo_ms)
        print("run bench=group_rebalance run=%d join_ms=%.0f "
              "assigned_ms=%s first_record_ms=%s leave_ms=%.0f "
              "solo_join_ms=%.0f" % (run + 1, join_ms, fmt(join_detail, 0),
                                     fmt(join_detail, 1), leave_ms,
                                     solo_ms))
        sys.stdout.flush()
    for m in members:
        m.close()
    trickle.stop.set()
    trickle.thread.join()
    med = statistics.median(joins)
    solo_med = statistics.median(solos)
    beyond = med - HEARTBEAT_MS
    print("RESULT bench=group_rebalance members=%d+1 runs=%d median_ms=%.0f "
          "min_ms=%.0f max_ms=%.0f heartbeat_interval_ms=%d "
          "beyond_timers_ms=%.0f floor_beyond_ms=%d met=%s "
          "leave_median_ms=%.0f formation_ms=%.0f baseline=solo_join "
          "solo_join_ms=%.0f ratio=%.3f" % (
              MEMBERS, runs, med, min(joins), max(joins), HEARTBEAT_MS,
              beyond, FLOOR_BEYOND_MS,
              "yes" if beyond <= FLOOR_BEYOND_MS else "no",
              statistics.median(leaves), formation_ms, solo_med,
              med / solo_med))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
