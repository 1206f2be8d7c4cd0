"""Consumer-group scenarios for tests/integration/test_groups.c, with
confluent-kafka (Debian's python3-confluent-kafka 1.7 on librdkafka 2.0, so
run it with /usr/bin/python3). The test creates the topics (replication
factor 3) and, for failover, kills the coordinator; everything else is here.

    group_check.py walkthrough BOOTSTRAP TOPIC GROUP
        Range over four partitions: consumer-a alone reads 10 records of
        each partition and commits them (lag 30 everywhere); consumer-b
        joins, range gives a 0,1 and b 2,3, b starts at exactly the offsets
        a committed; both commit and the lag follows; b leaves and a takes
        2,3 over from b's commits.
    group_check.py two_groups BOOTSTRAP TOPIC GROUP_X GROUP_Y
        Two groups read every record of one topic, each at its own offsets.
    group_check.py cooperative BOOTSTRAP TOPIC GROUP
        cooperative-sticky: a second member joins while records flow; the
        first loses only the moved partitions and keeps consuming the rest.
    group_check.py failover BOOTSTRAP TOPIC GROUP KILLED_FILE
        Two members consume a topic this script keeps producing to and
        commit every 0.3 s; the script prints "KILL broker=B partition=P"
        for the group's coordinator B (leader of __consumer_offsets
        partition P) and carries on; the test kills B and creates
        KILLED_FILE. The group must recover under another coordinator, keep
        its committed offsets, and no member may start a partition below a
        commit that succeeded (at-least-once: what was read after the last
        successful commit may come again).

Each scenario prints "[PASS] what" / "[FAIL] what: why" lines and a summary;
the exit status is 0 only if nothing failed. Every wait is bounded; a
scenario that cannot go on prints "[FAIL]" and exits 1.
"""
import os
import sys
import time

from confluent_kafka import (OFFSET_INVALID, Consumer, KafkaError,
                             KafkaException, Producer, TopicPartition)
from confluent_kafka.admin import AdminClient

OFFSETS_TOPIC = "__consumer_offsets"
OFFSETS_PARTITIONS = 50  # offsets.topic.num.partitions, the broker default
SESSION_MS = 6000        # group.min.session.timeout.ms, the broker default
HEARTBEAT_MS = 500
REQUEST_S = 10           # one admin or OffsetFetch call

failures = []
passes = []
T0 = time.monotonic()


def log(msg):
    sys.stderr.write("group_check: %6.2f %s\n" % (time.monotonic() - T0, msg))
    sys.stderr.flush()


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def check(name, ok, why=""):
    if ok:
        passes.append(name)
        say("[PASS] %s" % name)
    else:
        failures.append(name)
        say("[FAIL] %s: %s" % (name, why))
    return ok


class Fatal(Exception):
    """The scenario cannot go on; the message says why."""


def require(name, ok, why=""):
    if not check(name, ok, why):
        raise Fatal(name)


def on_error(err):
    log("client error: %s%s" % (err, " (FATAL)" if err.fatal() else ""))


# --- Producing -------------------------------------------------------------

def produce(boot, topic, per_partition):
    """Writes per_partition[p] records "p-i" to each partition p with an
    idempotent acks=all producer; every record must land at offset i (the
    topic is new)."""
    p = Producer({"bootstrap.servers": boot, "acks": "all",
                  "enable.idempotence": True, "linger.ms": 5,
                  "message.timeout.ms": 30000, "error_cb": on_error})
    bad = []

    def delivered(err, msg):
        want = int(msg.value().decode().split("-")[1])
        if err is not None or msg.offset() != want:
            bad.append((msg.partition(), want, msg.offset(), err))

    for part, n in sorted(per_partition.items()):
        for i in range(n):
            p.produce(topic, value="%d-%d" % (part, i), partition=part,
                      on_delivery=delivered)
            p.poll(0)
    left = p.flush(40)
    require("produce %d records to %s at offsets 0..n-1" %
            (sum(per_partition.values()), topic),
            left == 0 and not bad,
            "%d not delivered, wrong or failed: %s" % (left, bad[:5]))


class Pump:
    """A steady idempotent acks=all producer, rate records a second round
    robin over the partitions, driven by step() from the caller's loop."""

    def __init__(self, boot, topic, n_partitions, rate):
        self.p = Producer({"bootstrap.servers": boot, "acks": "all",
                           "enable.idempotence": True, "linger.ms": 5,
                           "message.timeout.ms": 60000,
                           "error_cb": on_error})
        self.topic = topic
        self.n_partitions = n_partitions
        self.rate = rate
        self.produced = 0
        self.failed = []
        self.on = True
        self.credit = 0.0
        self.last = time.monotonic()

    def _delivered(self, err, msg):
        if err is not None:
            self.failed.append((msg.partition(), str(err)))

    def step(self):
        now = time.monotonic()
        if self.on:
            # Capped: no burst after a pause in the caller's loop.
            self.credit = min(self.credit + (now - self.last) * self.rate,
                              self.rate / 5)
            while self.credit >= 1.0:
                n = self.produced
                try:
                    self.p.produce(self.topic, value="%d" % n,
                                   partition=n % self.n_partitions,
                                   on_delivery=self._delivered)
                except BufferError:
                    break
                self.produced += 1
                self.credit -= 1.0
        self.last = now
        self.p.poll(0)

    def stop(self, budget_s):
        """Stops producing and flushes; True if everything was delivered."""
        self.on = False
        left = self.p.flush(budget_s)
        return left == 0 and not self.failed, left


def tp(topic, part, offset=None):
    if offset is None:
        return TopicPartition(topic, part)
    return TopicPartition(topic, part, offset)


# --- Group members ---------------------------------------------------------

class Member:
    """One consumer in a group and what it read. Partitions whose stop
    offset is reached are paused and sought back to the stop, so the
    application reads exactly [start, stop) of each and resumes there when
    the stop moves. librdkafka keeps an application pause across
    revocation, so a paused partition assigned again is resumed; a
    partition that is not paused is never resumed: resuming one that was
    fetching right after its assignment made librdkafka 2.0.2 fetch it
    again from the committed offset (records delivered twice)."""

    def __init__(self, boot, topic, group, client_id, strategy="range",
                 extra=None):
        conf = {"bootstrap.servers": boot, "group.id": group,
                "client.id": client_id,
                "partition.assignment.strategy": strategy,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": SESSION_MS,
                "heartbeat.interval.ms": HEARTBEAT_MS,
                "error_cb": on_error}
        conf.update(extra or {})
        self.name = client_id
        self.topic = topic
        self.c = Consumer(conf)
        self.assigned = []      # each on_assign's partitions, sorted
        self.revoked = []       # each on_revoke's partitions, sorted
        self.owned = set()      # our view of the assignment
        self.reads = {}         # partition -> offsets read, in order
        self.first = {}         # partition -> first offset read since assigned
        self.next = {}          # partition -> next offset, read since assigned
        self.stops = {}         # partition -> offset not to read
        self.paused = set()     # paused by us, not resumed since
        self.resume_due = set() # paused and assigned again: resume after poll
        self.ignored = 0        # delivered at or past a stop, not read
        self.on_read = None     # callback(member, msg) for each read record
        self.on_assign_hook = None  # callback(member, partitions)
        self.on_revoke_hook = None

    def subscribe(self):
        self.c.subscribe([self.topic], on_assign=self._assign_cb,
                         on_revoke=self._revoke_cb)

    def _assign_cb(self, consumer, partitions):
        parts = sorted(x.partition for x in partitions)
        self.assigned.append(parts)
        for part in parts:
            self.owned.add(part)
            self.first.pop(part, None)
            self.next.pop(part, None)
            if part in self.paused:
                self.resume_due.add(part)
        if self.on_assign_hook is not None:
            self.on_assign_hook(self, parts)
        log("%s assigned %s" % (self.name, parts))

    def _revoke_cb(self, consumer, partitions):
        parts = sorted(x.partition for x in partitions)
        self.revoked.append(parts)
        if self.on_revoke_hook is not None:
            self.on_revoke_hook(self, parts)
        for part in parts:
            self.owned.discard(part)
            self.resume_due.discard(part)
        log("%s revoked %s" % (self.name, parts))

    def assignment(self):
        return sorted(x.partition for x in self.c.assignment())

    def position(self, part):
        """Next offset this member would read of part, from what it read
        since part was last assigned to it; None if nothing."""
        return self.next.get(part)

    def _resume(self, parts):
        if parts:
            self.c.resume([tp(self.topic, x) for x in parts])
            self.paused.difference_update(parts)

    def _hold(self, part):
        stop = self.stops[part]
        self.c.pause([tp(self.topic, part)])
        self.paused.add(part)
        try:
            self.c.seek(tp(self.topic, part, stop))
        except KafkaException as e:
            log("%s seek %d to %d: %s" % (self.name, part, stop, e))

    def set_stops(self, stops, resume=True):
        """New stop offsets; with resume, owned partitions held below them
        resume now. Before a rebalance, resume=False: the partitions the
        member keeps resume when assigned again, from the committed
        offsets, instead of being read now and again after."""
        self.stops.update(stops)
        if resume:
            self._resume([x for x in self.paused if x in self.owned and
                          (self.position(x) or 0) <
                          self.stops.get(x, 1 << 62)])

    def _messages(self, n, timeout):
        """Up to n messages: one poll() waiting up to timeout, then polls
        that do not wait. Not consume(): librdkafka 2.0.2's batch consume
        lost the records queued behind a rebalance callback served in the
        same call (kept partitions of a cooperative member, two records
        each at the member's position)."""
        m = self.c.poll(timeout)
        while m is not None:
            yield m
            n -= 1
            if n <= 0:
                return
            m = self.c.poll(0)

    def poll(self, n=100, timeout=0.05):
        """Reads up to n records; returns how many were read."""
        got = 0
        for m in self._messages(n, timeout):
            if m.error() is not None:
                if m.error().code() != KafkaError._PARTITION_EOF:
                    log("%s consume error: %s" % (self.name, m.error()))
                continue
            part, off = m.partition(), m.offset()
            stop = self.stops.get(part)
            if stop is not None and off >= stop:
                self.ignored += 1
                if part not in self.paused:
                    self._hold(part)
                continue
            self.reads.setdefault(part, []).append(off)
            self.first.setdefault(part, off)
            self.next[part] = off + 1
            got += 1
            if self.on_read is not None:
                self.on_read(self, m)
            if stop is not None and off + 1 >= stop:
                self._hold(part)
        # Assigned in a callback of this call: only now in the assignment.
        due = [x for x in self.resume_due if x in self.owned]
        self.resume_due.clear()
        self._resume(due)
        return got

    def commit_sync(self, offsets):
        """Commits {partition: offset}; returns {partition: error or None}."""
        try:
            res = self.c.commit(offsets=[tp(self.topic, p, o)
                                         for p, o in sorted(offsets.items())],
                                asynchronous=False)
        except KafkaException as e:
            return {p: e.args[0] for p in offsets}
        return {x.partition: x.error for x in res}

    def reached(self, stops):
        return all(self.position(p) is not None and self.position(p) >= s
                   for p, s in stops.items())

    def close(self):
        try:
            self.c.close()
        except (KafkaException, RuntimeError) as e:
            log("%s close: %s" % (self.name, e))


def drive(members, cond, budget_s, what):
    """Polls every member in turn until cond() holds; Fatal at the
    deadline."""
    deadline = time.monotonic() + budget_s
    while not cond():
        if time.monotonic() > deadline:
            raise Fatal("%s: not within %d s" % (what, budget_s))
        for m in members:
            m.poll()


def committed(consumer, topic, parts, timeout_s=REQUEST_S):
    """{partition: committed offset or None} through OffsetFetch."""
    res = consumer.committed([tp(topic, p) for p in parts], timeout=timeout_s)
    return {x.partition: (None if x.offset == OFFSET_INVALID else x.offset)
            for x in res}


def highs(consumer, topic, parts):
    return {p: consumer.get_watermark_offsets(tp(topic, p),
                                              timeout=REQUEST_S)[1]
            for p in parts}


def lag_check(name, consumer, topic, want_committed):
    """Committed offsets through OffsetFetch and lag = high watermark -
    committed, both exactly as wanted."""
    parts = sorted(want_committed)
    got = committed(consumer, topic, parts)
    hw = highs(consumer, topic, parts)
    lag = {p: (hw[p] - got[p]) if got[p] is not None else None
           for p in parts}
    want_lag = {p: hw[p] - want_committed[p] for p in parts}
    check(name, got == want_committed and lag == want_lag,
          "committed %s lag %s, want committed %s lag %s (high %s)" %
          (got, lag, want_committed, want_lag, hw))


def describe_group(boot, group, budget_s=15, cond=None, members=()):
    """The group as ListGroups/DescribeGroups show it (GroupMetadata, whose
    .broker is the coordinator that answered), once cond(g) holds or at the
    deadline; None if never described. Polls members meanwhile: an eager
    member rejoins a rebalance only from poll (its revoke callback)."""
    admin = AdminClient({"bootstrap.servers": boot, "error_cb": on_error})
    deadline = time.monotonic() + budget_s
    g = None
    while True:
        try:
            found = [x for x in admin.list_groups(group, timeout=REQUEST_S)
                     if x.id == group]
            g = found[0] if found else g
        except KafkaException as e:
            log("list_groups %s: %s" % (group, e))
        if g is not None and (cond is None or cond(g)):
            break
        if time.monotonic() > deadline:
            break
        if members:
            for m in members:
                m.poll(timeout=0.1)
        else:
            time.sleep(0.2)  # poll interval; the deadline bounds the loop
    log("group %s: %s" % (group, describe(g)))
    return g


def exactly_once(reads, part, want):
    """True if the offsets read of part, over all reads lists, are exactly
    range(want) each once."""
    got = sorted(o for r in reads for o in r.get(part, []))
    return got == list(range(want))


def read_diff(reads, parts, want):
    """What the reads lists miss of range(want[p]), or hold twice or
    beyond, per partition, as text for a failure."""
    out = []
    for p in parts:
        got = sorted(o for r in reads for o in r.get(p, []))
        missing = sorted(set(range(want[p])) - set(got))
        twice = sorted({o for o in got if got.count(o) > 1})
        extra = sorted({o for o in got if o >= want[p] or o < 0})
        if missing or twice or extra:
            out.append("partition %d: missing %s, twice %s, beyond %s" %
                       (p, missing[:20], twice[:20], extra[:20]))
    return "; ".join(out)


# --- Scenario 1: four-partition walk-through --------------------------------

def walkthrough(boot, topic, group):
    parts = [0, 1, 2, 3]
    per = 40
    produce(boot, topic, {p: per for p in parts})
    a = Member(boot, topic, group, "consumer-a")
    b = Member(boot, topic, group, "consumer-b")
    members = [a, b]
    try:
        a.set_stops({p: 10 for p in parts})
        a.subscribe()
        drive([a], lambda: a.assignment() == parts, 30,
              "consumer-a owns partitions 0-3")
        check("consumer-a alone is assigned 0,1,2,3", a.assigned == [parts],
              "assignments %s" % a.assigned)
        drive([a], lambda: a.reached({p: 10 for p in parts}), 30,
              "consumer-a reads 10 records of each partition")
        check("consumer-a reads offsets 0..9 of each partition",
              all(a.reads[p] == list(range(10)) for p in parts),
              "read %s" % a.reads)
        errs = a.commit_sync({p: 10 for p in parts})
        require("consumer-a commits offset 10 on partitions 0-3",
                all(e is None for e in errs.values()), "errors %s" % errs)
        lag_check("OffsetFetch: committed 10, lag 30 on every partition", a.c,
                  topic, {p: 10 for p in parts})

        # consumer-b joins; a holds at 10 until the rebalance is over.
        a.set_stops({0: 40, 1: 20}, resume=False)
        b.set_stops({2: 25, 3: 40})
        b.subscribe()
        n_assigned = len(a.assigned)
        drive(members, lambda: b.assignment() and len(a.assigned) > n_assigned
              and len(set(a.assignment()) | set(b.assignment())) == 4, 45,
              "the group rebalances over consumer-a and consumer-b")
        check("range after consumer-b joins: a 0,1 and b 2,3",
              a.assignment() == [0, 1] and b.assignment() == [2, 3],
              "a %s b %s" % (a.assignment(), b.assignment()))
        g = describe_group(boot, group, cond=lambda x: len(x.members) == 2
                           and x.state == "Stable", members=members)
        check_members(g, ["consumer-a", "consumer-b"])

        drive(members, lambda: a.reached({0: 40, 1: 20}) and
              b.reached({2: 25, 3: 40}), 30, "a reads 0,1 and b reads 2,3")
        check("consumer-b's first records on 2 and 3 are at offset 10",
              b.first.get(2) == 10 and b.first.get(3) == 10,
              "first offsets %s" % b.first)
        check("consumer-a resumes 0 and 1 at its commit, offset 10",
              a.first.get(0) == 10 and a.first.get(1) == 10,
              "first offsets %s" % a.first)
        want = {0: 40, 1: 20, 2: 25, 3: 40}
        check("nothing replayed or skipped: each offset read once",
              all(exactly_once([a.reads, b.reads], p, want[p])
                  for p in parts), read_diff([a.reads, b.reads], parts, want))
        errs = a.commit_sync({0: 40, 1: 20})
        errs.update(b.commit_sync({2: 25, 3: 40}))
        require("a commits 40,20 on 0,1 and b 25,40 on 2,3",
                all(e is None for e in errs.values()), "errors %s" % errs)
        lag_check("OffsetFetch: lag 0,20,15,0 follows the commits", b.c,
                  topic, want)

        # consumer-b leaves: a takes 2 and 3 over from b's commits.
        a.set_stops({p: per for p in parts}, resume=False)
        b.close()
        members = [a]
        drive([a], lambda: a.assignment() == parts, 30,
              "consumer-a owns 0-3 again after consumer-b left")
        drive([a], lambda: a.reached({1: per, 2: per}), 30,
              "consumer-a reads the rest")
        check("after consumer-b leaves, a starts 1 at 20 and 2 at 25",
              a.first.get(1) == 20 and a.first.get(2) == 25,
              "first offsets %s" % a.first)
        check("every record read exactly once by the group",
              all(exactly_once([a.reads, b.reads], p, per) for p in parts),
              read_diff([a.reads, b.reads], parts, {p: per for p in parts}))
        errs = a.commit_sync({p: per for p in parts})
        require("consumer-a commits the high watermarks",
                all(e is None for e in errs.values()), "errors %s" % errs)
        lag_check("OffsetFetch: lag 0 everywhere", a.c, topic,
                  {p: per for p in parts})
        a.close()
        members = []
        g = describe_group(boot, group, cond=lambda x: x.state == "Empty")
        check("the group is Empty after both left",
              g is not None and g.state == "Empty" and not g.members,
              "group %s" % describe(g))
        obs = Consumer({"bootstrap.servers": boot, "group.id": group,
                        "error_cb": on_error})
        lag_check("an Empty group keeps its committed offsets", obs, topic,
                  {p: per for p in parts})
        obs.close()
    finally:
        for m in members:
            m.close()


def describe(g):
    if g is None:
        return "not found"
    return "state=%s protocol=%s/%s broker=%d members=%s" % (
        g.state, g.protocol_type, g.protocol, g.broker.id,
        [(m.id, m.client_id) for m in g.members])


def check_members(g, client_ids):
    """Member ids begin with the client id and a dash, so sorting the ids
    sorts the members by client id (what range assigns by)."""
    ok = (g is not None and g.state == "Stable" and g.protocol == "range" and
          sorted(m.client_id for m in g.members) == client_ids)
    check("DescribeGroups: Stable, range, members %s" % client_ids, ok,
          describe(g))
    if not ok:
        return
    ids = sorted(g.members, key=lambda m: m.id)
    check("member ids are client id + '-' and sort by client id",
          [m.client_id for m in ids] == client_ids and
          all(m.id.startswith(m.client_id + "-") and
              len(m.id) > len(m.client_id) + 1 for m in ids),
          describe(g))


# --- Scenario 2: two groups on one topic ------------------------------------

def two_groups(boot, topic, gx, gy):
    parts = [0, 1, 2]
    per = 30
    produce(boot, topic, {p: per for p in parts})
    x = Member(boot, topic, gx, "x-1")
    y = Member(boot, topic, gy, "y-1")
    members = [x, y]
    try:
        x.set_stops({p: 12 for p in parts})
        x.subscribe()
        y.subscribe()
        drive(members, lambda: x.reached({p: 12 for p in parts}) and
              y.reached({p: per for p in parts}), 45,
              "x reads 12 per partition while y reads everything")
        check("group y reads every record once from offset 0",
              all(y.reads.get(p) == list(range(per)) for p in parts),
              "y %s" % y.reads)
        ex = x.commit_sync({p: 12 for p in parts})
        ey = y.commit_sync({p: per for p in parts})
        require("x commits 12 and y commits %d on every partition" % per,
                all(e is None for e in list(ex.values()) + list(ey.values())),
                "x %s y %s" % (ex, ey))
        lag_check("group x's offsets are its own (12)", x.c,
                  topic, {p: 12 for p in parts})
        lag_check("group y's offsets are its own (%d)" % per, y.c, topic,
                  {p: per for p in parts})
        x.close()
        members = [y]
        # A new member of x resumes from x's commits, not y's.
        x2 = Member(boot, topic, gx, "x-2")
        members.append(x2)
        x2.set_stops({p: per for p in parts})
        x2.subscribe()
        drive(members, lambda: x2.reached({p: per for p in parts}), 45,
              "x's new member reads the rest")
        check("x's new member starts at x's commit, 12",
              all(x2.first.get(p) == 12 for p in parts),
              "first offsets %s" % x2.first)
        check("group x reads every record exactly once",
              all(exactly_once([x.reads, x2.reads], p, per) for p in parts),
              read_diff([x.reads, x2.reads], parts, {p: per for p in parts}))
        ex = x2.commit_sync({p: per for p in parts})
        require("x commits %d" % per, all(e is None for e in ex.values()),
                "errors %s" % ex)
        lag_check("group x's offsets: %d" % per, x2.c, topic,
                  {p: per for p in parts})
        check("group y read nothing twice meanwhile",
              all(y.reads.get(p) == list(range(per)) for p in parts),
              "y %s" % y.reads)
        gxd = describe_group(boot, gx, cond=lambda g: g.state == "Stable",
                             members=members)
        gyd = describe_group(boot, gy, cond=lambda g: g.state == "Stable",
                             members=members)
        check("DescribeGroups: each group has its own member",
              gxd is not None and gyd is not None and
              [m.client_id for m in gxd.members] == ["x-2"] and
              [m.client_id for m in gyd.members] == ["y-1"],
              "x: %s; y: %s" % (describe(gxd), describe(gyd)))
    finally:
        for m in members:
            m.close()


# --- Scenario 3: cooperative-sticky ----------------------------------------

def cooperative(boot, topic, group):
    parts = [0, 1, 2, 3]
    pump = Pump(boot, topic, len(parts), 200.0)

    m1 = Member(boot, topic, group, "member-1", "cooperative-sticky")
    m2 = Member(boot, topic, group, "member-2", "cooperative-sticky")
    commits_on_revoke = {}

    def commit_revoked(m, revoked):
        offs = {p: m.position(p) for p in revoked
                if m.position(p) is not None}
        if offs:
            errs = m.commit_sync(offs)
            ok = {p: offs[p] for p, e in errs.items() if e is None}
            commits_on_revoke.update(ok)
            log("%s committed %s on revoke (errors %s)" % (m.name, offs, errs))

    m1.on_revoke_hook = commit_revoked
    times = {}  # partition -> list of (monotonic time, offset) for m1
    m1.on_read = lambda m, msg: times.setdefault(msg.partition(), []).append(
        (time.monotonic(), msg.offset()))
    members = [m1, m2]

    def drive_pumping(ms, cond, budget_s, what):
        deadline = time.monotonic() + budget_s
        while not cond():
            if time.monotonic() > deadline:
                raise Fatal("%s: not within %d s" % (what, budget_s))
            pump.step()
            for m in ms:
                m.poll(timeout=0.02)

    try:
        m1.subscribe()
        drive_pumping([m1], lambda: m1.assignment() == parts and
                      all(len(m1.reads.get(p, [])) >= 5 for p in parts), 30,
                      "member-1 owns 0-3 and reads from each")
        check("member-1 alone is assigned 0,1,2,3 incrementally",
              nonempty(m1.assigned) == [parts] and not nonempty(m1.revoked),
              "assigned %s revoked %s" % (m1.assigned, m1.revoked))
        t_join = time.monotonic()
        m2.subscribe()
        drive_pumping(members, lambda: len(m2.assignment()) > 0 and
                      len(m1.assigned) >= 1 and
                      len(set(m1.assignment()) | set(m2.assignment())) == 4,
                      45, "member-2 gets partitions")
        t_done = time.monotonic()
        moved = m2.assignment()
        kept = m1.assignment()
        log("after the rebalance: member-1 %s member-2 %s" % (kept, moved))
        check("the partitions are shared 2 and 2, disjoint",
              len(kept) == 2 and len(moved) == 2 and
              not set(kept) & set(moved), "member-1 %s member-2 %s" %
              (kept, moved))
        check("member-1 had only the moved partitions revoked, once",
              nonempty(m1.revoked) == [moved], "revoked %s, moved %s" %
              (m1.revoked, moved))
        check("member-1 was never assigned anything again",
              nonempty(m1.assigned) == [parts], "assigned %s" % m1.assigned)
        check("member-2 is assigned exactly the moved partitions, once",
              nonempty(m2.assigned) == [moved] and not nonempty(m2.revoked),
              "assigned %s revoked %s" % (m2.assigned, m2.revoked))
        during = sum(1 for p in kept for t, _ in times.get(p, [])
                     if t_join <= t <= t_done)
        check("member-1 kept consuming its partitions during the rebalance",
              during > 0, "no record of %s read in the %.1f s between "
              "member-2's subscribe and its assignment" %
              (kept, t_done - t_join))
        base1 = {p: len(m1.reads.get(p, [])) for p in kept}
        base2 = {p: len(m2.reads.get(p, [])) for p in moved}
        drive_pumping(members, lambda:
                      all(len(m1.reads.get(p, [])) >= base1[p] + 10
                          for p in kept) and
                      all(len(m2.reads.get(p, [])) >= base2[p] + 10
                          for p in moved), 30,
                      "both members read new records")
        check("member-2 starts each moved partition at member-1's commit",
              all(m2.first.get(p) is not None and
                  commits_on_revoke.get(p) == m2.first.get(p)
                  for p in moved) if moved else False,
              "commits on revoke %s, member-2 first offsets %s" %
              (commits_on_revoke, m2.first))
        # Stop producing, then read everything to the high watermarks.
        ok, left = pump.stop(30)
        require("the producer delivered everything", ok,
                "%d undelivered, failures %s" % (left, pump.failed[:5]))
        hw = highs(m1.c, topic, parts)
        drive(members, lambda: all(
            (m1 if p in kept else m2).position(p) == hw[p] for p in parts),
            30, "the members read to the high watermarks %s" % hw)
        check("every record read exactly once by the group (%d)" %
              pump.produced,
              all(exactly_once([m1.reads, m2.reads], p, hw[p])
                  for p in parts) and sum(hw.values()) == pump.produced,
              "high %s; member-1 %s; member-2 %s; %s" %
              ({p: hw[p] for p in parts},
               {p: summary(m1.reads.get(p, [])) for p in parts},
               {p: summary(m2.reads.get(p, [])) for p in parts},
               read_diff([m1.reads, m2.reads], parts, hw)))
        g = describe_group(boot, group, cond=lambda x: x.state == "Stable",
                           members=members)
        check("DescribeGroups: Stable, cooperative-sticky, two members",
              g is not None and g.protocol == "cooperative-sticky" and
              sorted(m.client_id for m in g.members) ==
              ["member-1", "member-2"], describe(g))
    finally:
        for m in members:
            m.close()


def nonempty(calls):
    """Rebalance callbacks that moved partitions: with cooperative-sticky
    librdkafka also calls them with none."""
    return [x for x in calls if x]


def summary(offsets):
    if not offsets:
        return "none"
    return "%d records %d..%d" % (len(offsets), offsets[0], offsets[-1])


# --- Scenario 4: coordinator failover --------------------------------------

def java_hash(s):
    """Java's String.hashCode: over UTF-16 code units, wrapping at 32
    bits."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (h * 31 + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def coordinator_partition(group):
    h = java_hash(group)
    return 0 if h == -(1 << 31) else abs(h) % OFFSETS_PARTITIONS


def offsets_leader(admin, part):
    md = admin.list_topics(OFFSETS_TOPIC, timeout=REQUEST_S)
    t = md.topics.get(OFFSETS_TOPIC)
    if t is None or t.error is not None or part not in t.partitions:
        return None
    return t.partitions[part].leader


KILL_AFTER_READ = 100  # records the group reads before the kill
COMMIT_EVERY_S = 0.3


def failover(boot, topic, group, killed_file):
    parts = [0, 1, 2, 3]
    pump = Pump(boot, topic, len(parts), 100.0)
    admin = AdminClient({"bootstrap.servers": boot, "error_cb": on_error})
    cpart = coordinator_partition(group)
    ok_commit = {}     # partition -> highest offset committed successfully
    # A member's reading of a partition, from its assignment on: it must
    # start at or after the highest successful commit when it was assigned
    # and go on one offset at a time.
    session = {}       # (member, partition) -> (commit at assign, last read)
    violations = []    # what broke that, as text
    seen = {p: set() for p in parts}
    stats = {"commits_ok": 0, "commits_failed": 0, "read_after_kill": 0,
             "recovered_at": None, "read_after_recovery": 0}
    killed = {"at": None, "snapshot": None}

    def commit_cb(err, partitions):
        if err is not None:
            stats["commits_failed"] += 1
            return
        for x in partitions:
            if x.error is not None:
                stats["commits_failed"] += 1
                continue
            if x.offset > ok_commit.get(x.partition, -1):
                ok_commit[x.partition] = x.offset
            stats["commits_ok"] += 1
            if killed["at"] is not None and stats["recovered_at"] is None:
                stats["recovered_at"] = time.monotonic()
                log("first successful commit after the kill")

    def on_assign(m, assigned):
        for p in assigned:
            session[(m.name, p)] = (ok_commit.get(p, 0), None)

    def on_read(m, msg):
        p, o = msg.partition(), msg.offset()
        floor, last = session.get((m.name, p), (0, None))
        if last is None and o < floor:
            violations.append("%s started %d at %d, below the commit %d" %
                              (m.name, p, o, floor))
        elif last is not None and o != last + 1:
            violations.append("%s read %d at %d after %d" %
                              (m.name, p, o, last))
        session[(m.name, p)] = (floor, o)
        seen[p].add(o)
        if killed["at"] is not None:
            stats["read_after_kill"] += 1
        if stats["recovered_at"] is not None:
            stats["read_after_recovery"] += 1

    extra = {"on_commit": commit_cb}
    a = Member(boot, topic, group, "fo-a", extra=extra)
    b = Member(boot, topic, group, "fo-b", extra=extra)
    members = [a, b]
    for m in members:
        m.on_read = on_read
        m.on_assign_hook = on_assign
    last_commit = {m.name: 0.0 for m in members}

    def step():
        """Produces, reads what there is and commits each member's
        positions asynchronously every COMMIT_EVERY_S."""
        pump.step()
        now = time.monotonic()
        for m in members:
            m.poll(timeout=0.02)
            offs = {p: m.position(p) for p in m.owned
                    if m.position(p) is not None}
            if offs and now - last_commit[m.name] >= COMMIT_EVERY_S:
                last_commit[m.name] = now
                try:
                    m.c.commit(offsets=[tp(topic, p, o)
                                        for p, o in offs.items()],
                               asynchronous=True)
                except KafkaException as e:
                    log("%s commit: %s" % (m.name, e))

    def run_until(cond, budget_s, what):
        deadline = time.monotonic() + budget_s
        while not cond():
            if time.monotonic() > deadline:
                raise Fatal("%s: not within %d s (read %s, committed %s)" %
                            (what, budget_s,
                             {p: len(seen[p]) for p in parts}, ok_commit))
            step()

    obs = Consumer({"bootstrap.servers": boot, "group.id": group,
                    "error_cb": on_error})
    try:
        a.subscribe()
        b.subscribe()
        run_until(lambda: a.assignment() and b.assignment() and
                  all(ok_commit.get(p, 0) > 0 for p in parts) and
                  sum(len(x) for x in seen.values()) >= KILL_AFTER_READ, 40,
                  "the group consumes and commits every partition")
        # The coordinator: leader of the group's offsets partition, and the
        # broker that describes the group.
        leader = offsets_leader(admin, cpart)
        g = describe_group(boot, group, cond=lambda x: x.broker.id == leader,
                           members=members)
        require("the group's coordinator is the leader of %s-%d (%s)" %
                (OFFSETS_TOPIC, cpart, leader),
                leader is not None and leader >= 0 and g is not None and
                g.broker.id == leader, "described by %s" % describe(g))
        log("read %s, committed %s" % ({p: len(seen[p]) for p in parts},
                                       ok_commit))
        say("KILL broker=%d partition=%d" % (leader, cpart))
        run_until(lambda: os.path.exists(killed_file), 30,
                  "%s created" % killed_file)
        killed["at"] = time.monotonic()
        killed["snapshot"] = dict(ok_commit)
        log("broker %d killed; committed before: %s" %
            (leader, killed["snapshot"]))
        # OffsetFetch (1 s at most each) until the new coordinator answers.
        got = {}
        errors = []

        def fetched():
            try:
                c = committed(obs, topic, parts, timeout_s=1)
            except KafkaException as e:
                errors.append(e)
                if len(errors) % 10 == 1:
                    log("OffsetFetch after the kill, failure %d: %s" %
                        (len(errors), e))
                return False
            got.update(c)
            return all(c[p] is not None for p in parts)

        run_until(fetched, 40, "an OffsetFetch answer after the kill")
        log("OffsetFetch answered %.1f s after the kill" %
            (time.monotonic() - killed["at"]))
        check("committed offsets after the failover >= those before",
              all(got[p] >= killed["snapshot"][p] for p in parts),
              "after %s, before %s" % (got, killed["snapshot"]))
        run_until(lambda: stats["read_after_recovery"] >= 100, 60,
                  "100 records read after a commit succeeded post-kill")
        log("recovered %.1f s after the kill" %
            (stats["recovered_at"] - killed["at"]))
        ok, left = pump.stop(60)
        require("the producer delivered everything (%d)" % pump.produced, ok,
                "%d undelivered, failures %s" % (left, pump.failed[:5]))
        hw = highs(obs, topic, parts)
        run_until(lambda: all(len(seen[p]) == hw[p] for p in parts), 30,
                  "the group reads to the high watermarks %s" % hw)
        check("consumption continues after the failover (%d records read "
              "after the kill, %d after the first successful commit)" %
              (stats["read_after_kill"], stats["read_after_recovery"]),
              stats["read_after_recovery"] > 0)
        check("every record was read (%d)" % pump.produced,
              all(seen[p] == set(range(hw[p])) for p in parts) and
              sum(hw.values()) == pump.produced,
              "high %s, read %s" % (hw, {p: len(seen[p]) for p in parts}))
        check("each assignment starts at or after the last successful "
              "commit and reads on without gaps",
              not violations, "%d violations: %s" % (len(violations),
                                                     violations[:10]))
        # Commit the ends and check them under the new coordinator.
        for m in members:
            offs = {p: m.position(p) for p in m.owned
                    if m.position(p) is not None}
            errs = m.commit_sync(offs) if offs else {}
            check("%s commits its positions %s" % (m.name, offs),
                  all(e is None for e in errs.values()), "errors %s" % errs)
        lag_check("committed offsets are the high watermarks", obs, topic, hw)
        g = describe_group(boot, group, cond=lambda x: x.broker.id != leader
                           and x.state == "Stable" and len(x.members) == 2,
                           members=members)
        check("the group is Stable with both members under a new "
              "coordinator", g is not None and g.broker.id != leader and
              g.state == "Stable" and len(g.members) == 2, describe(g))
        log("commits ok=%d failed=%d" % (stats["commits_ok"],
                                         stats["commits_failed"]))
    finally:
        obs.close()
        for m in members:
            m.close()


def main(argv):
    cmds = {"walkthrough": (walkthrough, 3), "two_groups": (two_groups, 4),
            "cooperative": (cooperative, 3), "failover": (failover, 4)}
    if len(argv) < 2 or argv[1] not in cmds or \
            len(argv) - 2 != cmds[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 2
    fn = cmds[argv[1]][0]
    started = time.monotonic()
    try:
        fn(*argv[2:])
    except Fatal as e:
        if not failures or failures[-1] != str(e):
            check("scenario", False, str(e))
    except Exception as e:  # noqa: BLE001 - report any crash as a failure
        import traceback
        traceback.print_exc()
        check("scenario", False, "%s: %s" % (type(e).__name__, e))
    say("%s: %d passed, %d failed in %.1f s" %
        (argv[1], len(passes), len(failures), time.monotonic() - started))
    return 0 if not failures and passes else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
