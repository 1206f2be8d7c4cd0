#!/usr/bin/python3
"""Self-test of the checker: it must pass a clean run and catch each planted
anomaly.

Simulates a correct three-node cluster (seeded) with producers, consumers,
an observer, a nemesis that kills, pauses and partitions one node at a time,
and a final drain; writes the history in the checker's format and checks it
is valid. Then plants one anomaly of each kind into a copy and checks the
checker reports it. Prints one line per planted anomaly and a final line

    SELFTEST planted=N found=N clean=valid lines=N seconds=S

Exit 0 only if the clean history is valid and every planted anomaly was
found.

Usage: selftest.py [--seed N] [--duration-ms MS] [--keep DIR]
"""

import argparse
import heapq
import json
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checker  # noqa: E402

MS = 10**6
NODES = (1, 2, 3)
STALE_GRACE_MS = 20  # the header's stale_grace_ns, in simulated ms


# ---------------------------------------------------------------------------
# A correct cluster and the workload against it


class Cluster:
    """Partition logs, leaders, epochs and ISRs of a cluster that keeps
    every promise: records commit when appended, a faulted node leaves the
    ISR and loses leadership (epoch + 1), and rejoins when healed."""

    def __init__(self, partitions):
        self.logs = {k: [] for k in range(partitions)}
        self.leader = {k: NODES[k % 3] for k in self.logs}
        self.epoch = {k: 1 for k in self.logs}
        self.isr = {k: list(NODES) for k in self.logs}
        self.unavailable_until = {k: 0 for k in self.logs}
        self.committed = {}

    def fault(self, node, now, election_ns):
        """Take `node` out: out of every ISR; its partitions elect anew."""
        for k in self.logs:
            if node in self.isr[k]:
                self.isr[k].remove(node)
            if self.leader[k] == node:
                self.leader[k] = self.isr[k][0]
                self.epoch[k] += 1
                self.unavailable_until[k] = now + election_ns

    def heal(self, node):
        """Bring `node` back into every ISR."""
        for k in self.logs:
            if node not in self.isr[k]:
                self.isr[k] = sorted(self.isr[k] + [node])

    def high(self, k):
        return len(self.logs[k])


class Sim:
    """Discrete-event simulation writing a history in the checker's format.

    Each worker is a generator that yields delays in nanoseconds; op()
    writes the invocation, waits, applies the effect at completion time
    and writes the completion, so the cluster changes in real-time order.
    """

    def __init__(self, seed, duration_ms, partitions=3, producers=4,
                 consumers=2):
        self.rng = random.Random(seed)
        self.seed = seed
        self.cluster = Cluster(partitions)
        self.parts = list(range(partitions))
        self.now = 0
        self.lines = []
        self.ops = []          # catalogue: {"f", "process", "inv", "comp", ...}
        self.events = []
        self.seq = 0
        self.stop_sends = duration_ms * MS
        self.next_pid = 100
        self.term = 0          # Raft terms the nemesis's elections claim
        self.drained = 0
        self.consumers = consumers
        for p in range(producers):
            self.spawn(self.producer(p + 1))
        for c in range(consumers):
            self.spawn(self.consumer(50 + c))
        self.spawn(self.observer(90))
        self.spawn(self.nemesis())

    def spawn(self, gen, delay=0):
        self.seq += 1
        heapq.heappush(self.events, (self.now + delay, self.seq, gen))

    def run(self):
        while self.events:
            self.now, _, gen = heapq.heappop(self.events)
            try:
                delay = next(gen)
            except StopIteration:
                continue
            self.spawn(gen, delay)
        return self

    def emit(self, process, typ, f, value, final=False, error=None):
        line = {"index": len(self.lines), "time": self.now,
                "process": process, "type": typ, "f": f, "value": value}
        if final:
            line["final"] = True
        if error:
            line["error"] = error
        self.lines.append(line)
        return line["index"]

    def op(self, process, f, inv_value, latency, effect, final=False,
           **notes):
        """Invoke, wait `latency`, complete with effect() -> (type, value,
        error). Catalogued for the planting step. Returns the completion."""
        inv = self.emit(process, "invoke", f, inv_value, final)
        yield latency
        typ, out, error = effect()
        comp = self.emit(process, typ, f, out, final, error)
        entry = dict(f=f, process=process, inv=inv, comp=comp, type=typ,
                     final=final, t0=self.lines[inv]["time"], t1=self.now)
        entry.update(notes)
        self.ops.append(entry)
        return typ, out

    def pause(self, lo_ms, hi_ms):
        return int(self.rng.uniform(lo_ms, hi_ms) * MS)

    # -- workers --------------------------------------------------------------

    def producer(self, pid):
        """Sends unique values one at a time; retired after an unknown
        outcome and replaced under a new process id."""
        n, c = 0, self.cluster
        while self.now < self.stop_sends:
            n += 1
            k = self.rng.choice(self.parts)
            v = "%d:%d" % (pid, n)
            doomed = self.now < c.unavailable_until[k]
            failed = not doomed and self.rng.random() < 0.02
            appended = doomed and self.rng.random() < 0.4

            def effect(k=k, v=v, doomed=doomed, failed=failed,
                       appended=appended):
                if failed:
                    return "fail", None, "UNKNOWN_TOPIC_OR_PART (local)"
                if doomed:
                    if appended:
                        c.logs[k].append(v)
                    return "info", {"key": k, "value": v, "offset": None}, \
                        "REQUEST_TIMED_OUT"
                c.logs[k].append(v)
                return "ok", {"key": k, "value": v,
                              "offset": len(c.logs[k]) - 1}, None

            latency = self.pause(20, 25) if doomed else self.pause(0.5, 3)
            typ, _ = yield from self.op(pid, "send", {"key": k, "value": v},
                                        latency, effect, key=k, value=v,
                                        appended=appended)
            if typ == "info":
                self.next_pid += 1
                self.spawn(self.producer(self.next_pid), self.pause(1, 2))
                return
            yield self.pause(0, 2)

    def assign(self, pid, pos, offsets, final=False):
        """Assign every partition at the given start offsets."""
        pos.clear()
        pos.update(offsets)
        v = {"keys": list(self.parts),
             "offsets": {str(k): o for k, o in offsets.items()}}
        yield from self.op(pid, "assign", v, self.pause(0.2, 1),
                           lambda: ("ok", v, None), final)

    def poll(self, pid, pos, final=False):
        """One poll of up to 20 records per partition from the position."""
        c = self.cluster

        def effect():
            recs = {}
            for k in self.parts:
                end = min(c.high(k), pos[k] + 20)
                recs[str(k)] = [[o, c.logs[k][o]] for o in range(pos[k], end)]
                pos[k] = max(pos[k], end)
            return "ok", {"records": recs}, None

        yield from self.op(pid, "poll", None, self.pause(0.5, 3), effect,
                           final)

    def consumer(self, pid):
        """Assign, poll, commit now and then, crash and rewind now and then;
        at the end, the final drain from offset 0 up to every HW."""
        c, group, pos = self.cluster, "g%d" % pid, {}
        yield from self.assign(pid, pos, {k: 0 for k in self.parts})
        polls = 0
        while self.now < self.stop_sends:
            yield from self.poll(pid, pos)
            polls += 1
            if polls % 8 == 0:
                old = c.committed.setdefault(group, {})
                offs = {str(k): max(pos[k], old.get(str(k), 0))
                        for k in self.parts}

                def commit(offs=offs, old=old):
                    old.update(offs)
                    return "ok", {"group": group, "offsets": offs}, None

                yield from self.op(pid, "commit", {"group": group,
                                                   "offsets": offs},
                                   self.pause(0.5, 2), commit)
            if polls % 40 == 0:
                yield from self.op(pid, "crash", None, self.pause(0.1, 0.5),
                                   lambda: ("info", None, "crashed"))
                rewind = {k: self.rng.randrange(pos[k] + 1) for k in self.parts}
                yield from self.assign(pid, pos, rewind)
            yield self.pause(0, 3)
        yield self.pause(30, 40)
        yield from self.op(pid, "crash", None, self.pause(0.1, 0.5),
                           lambda: ("info", None, "final drain"), True)
        yield from self.assign(pid, pos, {k: 0 for k in self.parts}, True)
        while any(pos[k] < c.high(k) for k in self.parts):
            yield from self.poll(pid, pos, True)
        self.drained += 1

    def observer(self, pid):
        """Watermarks often; metadata and a group's committed offsets less
        often; stops once every consumer has drained."""
        c, n = self.cluster, 0
        while self.drained < self.consumers:
            n += 1
            yield from self.op(pid, "watermarks", None, self.pause(0.3, 1.5),
                               lambda: ("ok", {str(k): [0, c.high(k)]
                                               for k in self.parts}, None))
            yield from self.op(pid, "metadata", None, self.pause(0.3, 1.5),
                               lambda: ("ok", self.metadata(), None))
            if n % 5 == 0:
                group = "g%d" % (50 + self.rng.randrange(self.consumers))
                yield from self.op(
                    pid, "committed", {"group": group}, self.pause(0.3, 1.5),
                    lambda g=group: ("ok", {"group": g, "offsets": dict(
                        c.committed.get(g, {}))}, None))
            yield self.pause(3, 8)

    def metadata(self):
        c = self.cluster
        return {"partitions": {str(k): {"leader": c.leader[k],
                                        "leader_epoch": c.epoch[k],
                                        "replicas": list(NODES),
                                        "isr": list(c.isr[k]),
                                        "hw": c.high(k)}
                               for k in self.parts},
                "controller": 1}

    def nemesis(self):
        """One node at a time: kill/start, pause/resume, partition/heal,
        power-loss/start."""
        pairs = (("kill", "start"), ("pause", "resume"),
                 ("partition", "heal"), ("power-loss", "start"))
        yield self.pause(40, 60)
        while self.now < self.stop_sends - 150 * MS:
            fault, heal = self.rng.choice(pairs)
            node = self.rng.choice(NODES)
            self.emit("nemesis", "invoke", fault, {"node": node})
            self.term += 1
            self.emit("nemesis", "info", "raft-leader",
                      {"node": self.rng.choice((101, 102, 103)),
                       "term": self.term})
            self.cluster.fault(node, self.now, self.pause(5, 15))
            yield self.pause(0.2, 1)
            self.emit("nemesis", "info", fault, {"node": node})
            yield self.pause(40, 120)
            self.emit("nemesis", "invoke", heal, {"node": node})
            self.cluster.heal(node)
            yield self.pause(0.2, 1)
            self.emit("nemesis", "info", heal, {"node": node})
            yield self.pause(40, 120)

    def dumps(self):
        """Every replica holds the whole log; HW is its end."""
        return {str(k): {"hw": len(log),
                         "replicas": {str(b): [[o, v] for o, v in
                                               enumerate(log)]
                                      for b in NODES}}
                for k, log in self.cluster.logs.items()}

    def header(self):
        # Deposed nodes learn within this much (simulated) time of a heal.
        return {"header": True, "seed": self.seed, "source": "selftest",
                "partitions": len(self.parts), "nodes": list(NODES),
                "stale_grace_ns": STALE_GRACE_MS * MS}

    def stale_windows(self):
        """checker.stale_windows of this history."""
        h, recs, _ = checker.parse_lines(
            [json.dumps(self.header())] + [json.dumps(ln) for ln in self.lines])
        return checker.stale_windows(checker.Model(recs, h))


# ---------------------------------------------------------------------------
# Planting anomalies


class Skip(Exception):
    """No place to plant this anomaly in this history."""


def pick(rng, items, what):
    items = list(items)
    if not items:
        raise Skip("no " + what)
    return rng.choice(items)


def ops_of(sim, f, typ="ok", final=None):
    return [o for o in sim.ops if o["f"] == f and o["type"] == typ
            and (final is None or o["final"] == final)]


def in_middle(sim, ops):
    """Ops from the middle half of the run (faults and traffic around)."""
    lo, hi = sim.stop_sends // 4, sim.stop_sends * 3 // 4
    return [o for o in ops if lo <= o["t0"] <= hi]


def records_of(lines, op, k):
    return lines[op["comp"]]["value"]["records"].get(str(k), [])


def rewrite_everywhere(sim, lines, dumps, k, o, new):
    """Replace the record at (k, o) in every poll and every replica."""
    for p in ops_of(sim, "poll"):
        for r in records_of(lines, p, k):
            if r[0] == o:
                r[1] = new
    for recs in dumps[str(k)]["replicas"].values():
        for r in recs:
            if r[0] == o:
                r[1] = new


def unwritten_value(sim, k, rng):
    """The value of an unknown-outcome send that never reached a log; one
    sent to partition k if there is one (else reading it in k also counts
    as misrouted)."""
    unwritten = [s for s in ops_of(sim, "send", "info") if not s["appended"]]
    same = [s for s in unwritten if s["key"] == k]
    return pick(rng, same or unwritten, "unwritten value")["value"]


def plant_lost(sim, lines, dumps, rng):
    """The log was truncated and rewritten: an acknowledged record's offset
    now holds another (never written) value."""
    s = pick(rng, in_middle(sim, ops_of(sim, "send")), "ok send")
    o = lines[s["comp"]]["value"]["offset"]
    rewrite_everywhere(sim, lines, dumps, s["key"], o,
                       unwritten_value(sim, s["key"], rng))


def plant_duplicate(sim, lines, dumps, rng):
    """A final poll reads an earlier value again at the log's end."""
    drains = ops_of(sim, "poll", final=True)
    k = rng.choice(sim.parts)
    last = [p for p in drains if records_of(lines, p, k)][-1]
    recs = records_of(lines, last, k)
    recs.append([recs[-1][0] + 1, recs[0][1]])


def plant_inconsistent(sim, lines, dumps, rng):
    """A non-final poll reads another value at an offset."""
    polls = [p for p in in_middle(sim, ops_of(sim, "poll", final=False))
             if records_of(lines, p, 0)]
    r = pick(rng, records_of(lines, pick(rng, polls, "poll"), 0), "record")
    r[1] = unwritten_value(sim, 0, rng)


def plant_misplaced(sim, lines, dumps, rng):
    """An acknowledgement names the next offset instead of its own."""
    s = pick(rng, in_middle(sim, ops_of(sim, "send")), "ok send")
    lines[s["comp"]]["value"]["offset"] += 1


def plant_misrouted(sim, lines, dumps, rng):
    """A send's partition is not where its value was read."""
    s = pick(rng, in_middle(sim, ops_of(sim, "send")), "ok send")
    other = (s["key"] + 1) % len(sim.parts)
    lines[s["inv"]]["value"]["key"] = other
    lines[s["comp"]]["value"]["key"] = other


def plant_aborted_read(sim, lines, dumps, rng):
    """A send that was read completes as a definite failure."""
    s = pick(rng, in_middle(sim, ops_of(sim, "send")), "ok send")
    comp = lines[s["comp"]]
    comp.update(type="fail", value=None, error="NOT_ENOUGH_REPLICAS")


def plant_unexpected(sim, lines, dumps, rng):
    """A record nobody sent appears in the log."""
    s = pick(rng, in_middle(sim, ops_of(sim, "send")), "ok send")
    o = lines[s["comp"]]["value"]["offset"]
    rewrite_everywhere(sim, lines, dumps, s["key"], o, "999:999")


def plant_offset_hole(sim, lines, dumps, rng):
    """The final drain finds no record at an offset in the middle."""
    k = rng.choice(sim.parts)
    o = len(sim.cluster.logs[k]) // 2
    for p in ops_of(sim, "poll", final=True):
        recs = records_of(lines, p, k)
        recs[:] = [r for r in recs if r[0] != o]


def plant_nonmonotonic_poll(sim, lines, dumps, rng):
    """A poll returns two records of a partition in swapped order."""
    polls = [p for p in ops_of(sim, "poll", final=False)
             if len(records_of(lines, p, 1)) >= 2]
    recs = records_of(lines, pick(rng, polls, "poll"), 1)
    recs[0], recs[1] = recs[1], recs[0]


def plant_nonmonotonic_send(sim, lines, dumps, rng):
    """A producer's later send is acknowledged below its earlier one."""
    sends = in_middle(sim, ops_of(sim, "send"))
    by = {}
    for s in sends:
        by.setdefault((s["process"], s["key"]), []).append(s)
    a, b = pick(rng, [v for v in by.values() if len(v) >= 2], "pair")[:2]
    va, vb = lines[a["comp"]]["value"], lines[b["comp"]]["value"]
    va["offset"], vb["offset"] = vb["offset"], va["offset"]


def settled(sim, ops):
    """Reads that cannot have met a deposed node (the checker leaves the
    others out of its read-side checks)."""
    wins = sim.stale_windows()
    return [o for o in ops
            if not checker.in_windows(wins, o["t0"], o["t1"])]


def _late_leader_hw(sim, lines, after):
    """The partitions of the first metadata read (the leader's HW as the
    observer saw it) invoked after time `after`."""
    for w in ops_of(sim, "metadata"):
        if w["t0"] > after:
            return lines[w["comp"]]["value"]["partitions"]
    raise Skip("no metadata read after %d" % after)


def plant_hw_regression(sim, lines, dumps, rng):
    """The leader reports HW 0 in the middle of the run."""
    w = pick(rng, in_middle(sim, ops_of(sim, "metadata")), "metadata")
    lines[w["comp"]]["value"]["partitions"]["0"]["hw"] = 0


def plant_ack_above_hw(sim, lines, dumps, rng):
    """The leader's HW after an acknowledgement does not cover it."""
    s = pick(rng, in_middle(sim, ops_of(sim, "send")), "ok send")
    o = lines[s["comp"]]["value"]["offset"]
    _late_leader_hw(sim, lines, s["t1"])[str(s["key"])]["hw"] = o


def plant_read_above_hw(sim, lines, dumps, rng):
    """The leader's HW after a poll does not cover what it read."""
    polls = [p for p in in_middle(sim, ops_of(sim, "poll", final=False))
             if records_of(lines, p, 2)]
    p = pick(rng, polls, "poll")
    top = records_of(lines, p, 2)[-1][0]
    _late_leader_hw(sim, lines, p["t1"])["2"]["hw"] = top


def plant_committed_regression(sim, lines, dumps, rng):
    """A committed-offsets read returns 0 after a positive commit."""
    reads = [r for r in settled(sim, ops_of(sim, "committed"))
             if any(o > 0 for o in lines[r["comp"]]["value"]["offsets"].values())]
    offs = lines[pick(rng, reads[len(reads) // 2:], "committed read")["comp"]]
    for k, o in offs["value"]["offsets"].items():
        if o > 0:
            offs["value"]["offsets"][k] = 0
            return


def plant_replica_mismatch(sim, lines, dumps, rng):
    """One replica holds another value at one offset below the HW."""
    recs = dumps["0"]["replicas"]["3"]
    pick(rng, recs, "replica record")[1] = "888:1"


def plant_replica_missing_ack(sim, lines, dumps, rng):
    """One replica lacks an acknowledged record."""
    s = pick(rng, ops_of(sim, "send"), "ok send")
    recs = dumps[str(s["key"])]["replicas"]["2"]
    recs[:] = [r for r in recs if r[1] != s["value"]]


def _metadata(sim, lines, rng):
    m = pick(rng, in_middle(sim, ops_of(sim, "metadata")), "metadata")
    return lines[m["comp"]]["value"]["partitions"]["1"]


def plant_epoch_regression(sim, lines, dumps, rng):
    """A metadata read reports leader epoch 0 after epoch 1 was seen."""
    _metadata(sim, lines, rng)["leader_epoch"] = 0


def plant_epoch_conflict(sim, lines, dumps, rng):
    """A metadata read names another ISR member as leader, same epoch."""
    p = _metadata(sim, lines, rng)
    p["leader"] = [b for b in p["isr"] if b != p["leader"]][0]


def plant_raft_term_conflict(sim, lines, dumps, rng):
    """A second controller claims a term another already claimed."""
    claims = [ln for ln in lines if ln.get("f") == "raft-leader"]
    first, later = claims[0], pick(rng, claims[1:], "raft-leader")
    later["value"] = {"node": 101 + (first["value"]["node"] - 100) % 3,
                      "term": first["value"]["term"]}


def plant_leader_not_in_isr(sim, lines, dumps, rng):
    p = _metadata(sim, lines, rng)
    p["isr"] = [b for b in p["isr"] if b != p["leader"]]


def plant_isr_outside_replicas(sim, lines, dumps, rng):
    _metadata(sim, lines, rng)["isr"].append(9)


def plant_incomplete_drain(sim, lines, dumps, rng):
    """The final drain stops halfway through partition 0."""
    half = len(sim.cluster.logs[0]) // 2
    for p in ops_of(sim, "poll", final=True):
        recs = records_of(lines, p, 0)
        recs[:] = [r for r in recs if r[0] < half]


def plant_no_drain(sim, lines, dumps, rng):
    """No operation is marked as part of the final drain."""
    for ln in lines:
        ln.pop("final", None)


def plant_malformed(sim, lines, dumps, rng):
    """A poll invocation is written as a completion."""
    p = pick(rng, in_middle(sim, ops_of(sim, "poll")), "poll")
    lines[p["inv"]]["type"] = "ok"


# (name, planting function, what must be found: an anomaly or a verdict)
PLANTS = (
    ("lost", plant_lost, "lost"),
    ("duplicate", plant_duplicate, "duplicate"),
    ("inconsistent", plant_inconsistent, "inconsistent"),
    ("misplaced", plant_misplaced, "misplaced"),
    ("misrouted", plant_misrouted, "misrouted"),
    ("aborted_read", plant_aborted_read, "aborted_read"),
    ("unexpected", plant_unexpected, "unexpected"),
    ("offset_hole", plant_offset_hole, "offset_hole"),
    ("nonmonotonic_poll", plant_nonmonotonic_poll, "nonmonotonic_poll"),
    ("nonmonotonic_send", plant_nonmonotonic_send, "nonmonotonic_send"),
    ("hw_regression", plant_hw_regression, "hw_regression"),
    ("ack_above_hw", plant_ack_above_hw, "ack_above_hw"),
    ("read_above_hw", plant_read_above_hw, "read_above_hw"),
    ("committed_regression", plant_committed_regression,
     "committed_regression"),
    ("replica_mismatch", plant_replica_mismatch, "replica_mismatch"),
    ("replica_missing_ack", plant_replica_missing_ack, "replica_missing_ack"),
    ("epoch_regression", plant_epoch_regression, "epoch_regression"),
    ("epoch_conflict", plant_epoch_conflict, "epoch_conflict"),
    ("leader_not_in_isr", plant_leader_not_in_isr, "leader_not_in_isr"),
    ("isr_outside_replicas", plant_isr_outside_replicas,
     "isr_outside_replicas"),
    ("raft_term_conflict", plant_raft_term_conflict, "raft_term_conflict"),
    ("incomplete_drain", plant_incomplete_drain, "verdict=inconclusive"),
    ("no_drain", plant_no_drain, "verdict=inconclusive"),
    ("malformed", plant_malformed, "verdict=malformed"),
)


# ---------------------------------------------------------------------------
# Running


def write_run(directory, name, header, lines, dumps):
    """Write a history and its dumps as the harness would."""
    hist = os.path.join(directory, name + ".jsonl")
    with open(hist, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(header) + "\n")
        for ln in lines:
            fh.write(json.dumps(ln, separators=(",", ":")) + "\n")
    dump = os.path.join(directory, name + ".dumps.json")
    with open(dump, "w", encoding="utf-8") as fh:
        json.dump(dumps, fh)
    return hist, dump


def is_found(result, want):
    """Did the result report what was planted?"""
    if want.startswith("verdict="):
        return result["verdict"] == want.split("=", 1)[1]
    return result["verdict"] == "invalid" and result["counts"][want] > 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration-ms", type=int, default=1200,
                    help="simulated send phase (default 1500: a few "
                    "thousand operations)")
    ap.add_argument("--keep", help="write every history into this directory")
    args = ap.parse_args(argv)
    started = time.monotonic()
    sim = Sim(args.seed, args.duration_ms).run()
    rng = random.Random(args.seed * 7919 + 1)
    directory = args.keep or tempfile.mkdtemp(prefix="jepsen-selftest-")
    os.makedirs(directory, exist_ok=True)
    try:
        hist, dump = write_run(directory, "clean", sim.header(), sim.lines,
                               sim.dumps())
        clean, _ = checker.check_file(hist, dump)
    finally:
        if not args.keep:
            os.unlink(hist)
            os.unlink(dump)
            os.rmdir(directory)
    print(checker.summary_line(clean))
    planted = found = 0
    for name, plant, want in PLANTS:
        planted += 1
        lines = json.loads(json.dumps(sim.lines))
        dumps = sim.dumps()
        try:
            plant(sim, lines, dumps, rng)
        except Skip as e:
            print("PLANT %-22s missed (could not plant: %s)" % (name, e))
            continue
        if args.keep:
            write_run(directory, name, sim.header(), lines, dumps)
        result, _ = checker.check_records(lines, sim.header(), dumps)
        ok = is_found(result, want)
        found += ok
        print("PLANT %-22s %s (verdict=%s%s)" % (
            name, "found" if ok else "missed", result["verdict"],
            "".join(" %s=%d" % (n, c) for n, c in result["counts"].items()
                    if c)))
    print("SELFTEST planted=%d found=%d clean=%s lines=%d seconds=%.1f" % (
        planted, found, clean["verdict"], len(sim.lines),
        time.monotonic() - started))
    return 0 if found == planted and clean["verdict"] == "valid" else 1


if __name__ == "__main__":
    sys.exit(main())
