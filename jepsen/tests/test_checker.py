"""Unit tests of jepsen/checker.py: one small hand-written history per
anomaly, each asserting the checker reports exactly that anomaly, plus a
clean history that must be valid.

Run: /usr/bin/python3 -m unittest discover -s jepsen/tests
"""

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir))
import checker  # noqa: E402

CONSUMER, DRAINER, OBSERVER = 10, 11, 20


class History:
    """Builds a history in the checker's format, one operation at a time.

    Every line gets the next index and a time 1 ms after the previous
    line, so operations built one after another never overlap; invoke()
    and complete() build overlapping ones.
    """

    def __init__(self):
        self.lines = []
        self.counters = {}

    def line(self, process, typ, f, value=None, **extra):
        """Append one line and return it."""
        ln = {"index": len(self.lines), "time": (len(self.lines) + 1) * 10**6,
              "process": process, "type": typ, "f": f, "value": value}
        ln.update(extra)
        self.lines.append(ln)
        return ln

    def invoke(self, process, f, value=None, **extra):
        return self.line(process, "invoke", f, value, **extra)

    def complete(self, process, typ, f, value=None, **extra):
        return self.line(process, typ, f, value, **extra)

    def op(self, process, f, inv, typ, comp, **extra):
        """An invocation immediately followed by its completion."""
        self.invoke(process, f, inv, **extra)
        self.complete(process, typ, f, comp, **extra)

    def value(self, process):
        """The producer's next unique value "process:counter"."""
        self.counters[process] = self.counters.get(process, 0) + 1
        return "%s:%d" % (process, self.counters[process])

    def send(self, process, key, offset=None, typ="ok", value=None):
        """A send of a fresh (or given) value; returns the value."""
        value = value or self.value(process)
        comp = {"key": key, "value": value, "offset": offset}
        if typ == "fail":
            comp = None
        self.op(process, "send", {"key": key, "value": value}, typ, comp,
                **({"error": "err"} if typ != "ok" else {}))
        return value

    def poll(self, process, records, final=False):
        """A poll returning {key: [(offset, value), ...]}."""
        recs = {str(k): [[o, v] for o, v in rs] for k, rs in records.items()}
        extra = {"final": True} if final else {}
        self.op(process, "poll", None, "ok", {"records": recs}, **extra)

    def assign(self, process, offsets, final=False):
        """Assign {key: start offset}."""
        v = {"keys": sorted(offsets),
             "offsets": {str(k): o for k, o in offsets.items()}}
        extra = {"final": True} if final else {}
        self.op(process, "assign", v, "ok", v, **extra)

    def crash(self, process, final=False):
        extra = {"final": True} if final else {}
        self.op(process, "crash", None, "info", None, **extra)

    def watermarks(self, marks, process=OBSERVER):
        """A watermark read returning {key: (low, high)}."""
        self.op(process, "watermarks", None, "ok",
                {str(k): list(lh) for k, lh in marks.items()})

    def leader_hw(self, marks, process=OBSERVER):
        """A metadata read in which each partition's leader (1, epoch 1)
        reports the HW in marks {key: hw}."""
        v = {"partitions": {str(k): {"leader": 1, "leader_epoch": 1,
                                     "replicas": [1, 2, 3],
                                     "isr": [1, 2, 3], "hw": hw}
                            for k, hw in marks.items()},
             "controller": 1}
        self.op(process, "metadata", None, "ok", v)

    def metadata(self, parts, process=OBSERVER):
        """A metadata read; parts: {key: (leader, epoch, replicas, isr)}."""
        v = {"partitions": {str(k): {"leader": ld, "leader_epoch": ep,
                                     "replicas": reps, "isr": isr}
                            for k, (ld, ep, reps, isr) in parts.items()},
             "controller": 1}
        self.op(process, "metadata", None, "ok", v)

    def commit(self, group, offsets, process=CONSUMER, f="commit"):
        v = {"group": group, "offsets": {str(k): o for k, o in offsets.items()}}
        self.op(process, f, v, "ok", v)

    def nemesis(self, f, value=None):
        self.op("nemesis", f, value, "info", value)

    def drain(self, logs, process=DRAINER):
        """The final drain: crash, assign every key from 0, one final poll
        returning each log {key: [value at offset 0, value at 1, ...]}."""
        self.crash(process, final=True)
        self.assign(process, {k: 0 for k in logs}, final=True)
        self.poll(process, {k: list(enumerate(vs)) for k, vs in logs.items()},
                  final=True)

    def check(self, dumps=None):
        result, _ = checker.check_records(self.lines, dumps=dumps)
        return result


def found(result):
    """The anomaly names with a non-zero count."""
    return {name for name, n in result["counts"].items() if n}


def clean_history():
    """Writes to two partitions, a consumer, observer reads, a fault and
    its heal, commits, more writes, and a complete final drain."""
    h = History()
    h.metadata({0: (1, 1, [1, 2, 3], [1, 2, 3]), 1: (2, 1, [1, 2, 3], [1, 2, 3])})
    a = h.send(1, 0, 0)
    b = h.send(2, 0, 1)
    c = h.send(1, 1, 0)
    h.watermarks({0: (0, 2), 1: (0, 1)})
    h.assign(CONSUMER, {0: 0, 1: 0})
    h.poll(CONSUMER, {0: [(0, a)], 1: [(0, c)]})
    h.poll(CONSUMER, {0: [(1, b)]})
    h.commit("g10", {0: 2, 1: 1})
    h.nemesis("kill", {"node": 1})
    u = h.send(2, 0, typ="info")          # unknown outcome: not written
    h.metadata({0: (2, 2, [1, 2, 3], [2, 3]), 1: (2, 1, [1, 2, 3], [2, 3])})
    h.nemesis("start", {"node": 1})
    d = h.send(3, 0, 2)
    e = h.send(3, 1, 1)
    h.commit("g10", {0: 2, 1: 1}, process=OBSERVER, f="committed")
    h.poll(CONSUMER, {0: [(2, d)], 1: [(1, e)]})
    h.assign(CONSUMER, {0: 1})
    h.poll(CONSUMER, {0: [(1, b), (2, d)]})
    h.metadata({0: (2, 2, [1, 2, 3], [1, 2, 3]), 1: (2, 1, [1, 2, 3], [1, 2, 3])})
    h.watermarks({0: (0, 3), 1: (0, 2)})
    h.drain({0: [a, b, d], 1: [c, e]})
    assert u not in (a, b, c, d, e)
    return h, {"0": [a, b, d], "1": [c, e]}


def dumps_of(logs, hw=None, replicas=(1, 2, 3)):
    """Replica dumps in which every replica holds exactly `logs`."""
    return {k: {"hw": len(vs) if hw is None else hw,
                "replicas": {str(b): [[o, v] for o, v in enumerate(vs)]
                             for b in replicas}}
            for k, vs in logs.items()}


class CheckerTest(unittest.TestCase):

    def assertOnly(self, result, name, count=None):
        """The result is invalid with exactly the anomaly `name`."""
        self.assertEqual(result["malformed"], [])
        self.assertEqual(found(result), {name}, result["counts"])
        self.assertEqual(result["verdict"], "invalid")
        self.assertEqual(result["exit_code"], 1)
        if count is not None:
            self.assertEqual(result["counts"][name], count)

    # -- the clean baseline -------------------------------------------------

    def test_clean_history_is_valid(self):
        h, logs = clean_history()
        r = h.check(dumps=dumps_of(logs))
        self.assertEqual(found(r), set())
        self.assertEqual(r["malformed"], [])
        self.assertEqual(r["verdict"], "valid")
        self.assertEqual(r["exit_code"], 0)
        self.assertEqual(r["stats"]["sends_ok"], 5)
        self.assertEqual(r["stats"]["sends_info"], 1)
        self.assertEqual(r["stats"]["faults"], {"kill": 1, "start": 1})
        self.assertEqual(r["unseen"], [])

    def test_result_is_json_serialisable(self):
        h, logs = clean_history()
        json.dumps(h.check(dumps=dumps_of(logs)))

    def test_recovered_unknown_send_is_not_an_anomaly(self):
        h = History()
        a = h.send(1, 0, typ="info")
        h.drain({0: [a]})
        r = h.check()
        self.assertEqual(r["verdict"], "valid")
        self.assertEqual(r["stats"]["recovered"], 1)

    # -- lost writes --------------------------------------------------------

    def test_lost(self):
        h = History()
        a = h.send(1, 0, 0)
        h.send(1, 0, None)        # acknowledged, offset unknown, never read
        h.drain({0: [a]})
        r = h.check()
        self.assertOnly(r, "lost", 1)
        self.assertEqual(r["anomalies"]["lost"][0]["value"], "1:2")

    def test_lost_in_middle_of_log_also_leaves_a_hole(self):
        h = History()
        a, b, c = (h.send(1, 0, o) for o in range(3))
        h.crash(DRAINER, final=True)
        h.assign(DRAINER, {0: 0}, final=True)
        h.poll(DRAINER, {0: [(0, a), (2, c)]}, final=True)
        r = h.check()
        self.assertEqual(found(r), {"lost", "offset_hole"})
        self.assertEqual(r["anomalies"]["lost"][0]["value"], b)
        self.assertEqual(r["anomalies"]["lost"][0]["position"], "middle")

    def test_lost_split_into_prefix_middle_postfix(self):
        h = History()
        vals = [h.send(1, 0, None) for _ in range(5)]   # 1:1 .. 1:5
        h.drain({0: [vals[1], vals[3]]})
        r = h.check()
        pos = {e["value"]: e["position"] for e in r["anomalies"]["lost"]}
        self.assertEqual(pos, {"1:1": "prefix", "1:3": "middle",
                               "1:5": "postfix"})
        self.assertEqual(r["lost_positions"],
                         {"prefix": 1, "middle": 1, "postfix": 1})

    # -- log reconstruction -------------------------------------------------

    def test_duplicate(self):
        h = History()
        a = h.send(1, 0, 0)
        b = h.send(1, 0, 1)
        h.drain({0: [a, b, a]})
        self.assertOnly(h.check(), "duplicate", 1)

    def test_inconsistent_offsets(self):
        h = History()
        a = h.send(1, 0, 0)
        b = h.send(1, 0, typ="info")
        c = h.send(2, 0, typ="info")
        h.assign(CONSUMER, {0: 0})
        h.poll(CONSUMER, {0: [(0, a), (1, b)]})
        h.drain({0: [a, c]})
        r = h.check()
        self.assertOnly(r, "inconsistent", 1)
        self.assertEqual(r["anomalies"]["inconsistent"][0]["values"],
                         sorted([b, c]))

    def test_two_acks_at_one_offset_are_inconsistent(self):
        h = History()
        a = h.send(1, 0, 0)
        b = h.send(2, 0, 0)
        h.drain({0: [a, b]})
        r = h.check()
        self.assertIn("inconsistent", found(r))
        self.assertEqual(r["anomalies"]["inconsistent"][0]["source"], "acks")

    def test_misplaced_ack(self):
        h = History()
        a = h.send(1, 0, 1)       # acknowledged at 1, but lives at 0
        b = h.send(2, 0, 0)       # acknowledged at 0, but lives at 1
        h.drain({0: [a, b]})
        self.assertOnly(h.check(), "misplaced", 2)

    def test_misrouted(self):
        h = History()
        a = h.send(1, 0, 0)
        b = h.send(1, 1, typ="info")   # sent to partition 1
        h.drain({0: [a, b], 1: []})
        r = h.check()
        self.assertOnly(r, "misrouted", 1)
        self.assertEqual(r["anomalies"]["misrouted"][0]["read_from"], "0")

    def test_aborted_read(self):
        h = History()
        a = h.send(1, 0, 0)
        b = h.send(1, 0, typ="fail")
        h.drain({0: [a, b]})
        self.assertOnly(h.check(), "aborted_read", 1)

    def test_unexpected_value(self):
        h = History()
        a = h.send(1, 0, 0)
        h.drain({0: [a, "7:99"]})
        self.assertOnly(h.check(), "unexpected", 1)

    def test_offset_hole(self):
        h = History()
        a = h.send(1, 0, 0)
        h.send(1, 0, typ="info")  # never written
        c = h.send(2, 0, 2)
        h.crash(DRAINER, final=True)
        h.assign(DRAINER, {0: 0}, final=True)
        h.poll(DRAINER, {0: [(0, a), (2, c)]}, final=True)
        r = h.check()
        self.assertOnly(r, "offset_hole", 1)
        self.assertEqual(r["anomalies"]["offset_hole"][0]["first"], 1)

    # -- consumer and producer order -----------------------------------------

    def test_nonmonotonic_poll_rewind(self):
        h = History()
        a = h.send(1, 0, 0)
        b = h.send(1, 0, 1)
        h.assign(CONSUMER, {0: 0})
        h.poll(CONSUMER, {0: [(0, a), (1, b)]})
        h.poll(CONSUMER, {0: [(1, b)]})
        h.drain({0: [a, b]})
        r = h.check()
        self.assertOnly(r, "nonmonotonic_poll", 1)
        self.assertEqual(r["anomalies"]["nonmonotonic_poll"][0]["kind"], "rewind")

    def test_nonmonotonic_poll_skip_and_internal(self):
        h = History()
        a, b, c, d = (h.send(1, 0, o) for o in range(4))
        h.assign(CONSUMER, {0: 0})
        h.poll(CONSUMER, {0: [(0, a)]})
        h.poll(CONSUMER, {0: [(2, c)]})               # skips offset 1
        h.poll(CONSUMER, {0: [(3, d), (2, c)]})       # goes back inside
        h.drain({0: [a, b, c, d]})
        r = h.check()
        self.assertOnly(r, "nonmonotonic_poll", 2)
        kinds = [e["kind"] for e in r["anomalies"]["nonmonotonic_poll"]]
        self.assertEqual(kinds, ["skip", "internal-rewind"])

    def test_assign_and_crash_reset_the_position(self):
        h = History()
        a = h.send(1, 0, 0)
        b = h.send(1, 0, 1)
        h.assign(CONSUMER, {0: 0})
        h.poll(CONSUMER, {0: [(0, a), (1, b)]})
        h.assign(CONSUMER, {0: 0})
        h.poll(CONSUMER, {0: [(0, a)]})
        h.crash(CONSUMER)
        h.poll(CONSUMER, {0: [(1, b)]})
        h.drain({0: [a, b]})
        self.assertEqual(h.check()["verdict"], "valid")

    def test_nonmonotonic_send(self):
        h = History()
        a = h.send(1, 0, 1)
        b = h.send(1, 0, 0)
        h.drain({0: [b, a]})
        self.assertOnly(h.check(), "nonmonotonic_send", 1)

    # -- high watermark -----------------------------------------------------

    def test_hw_regression(self):
        h = History()
        a = h.send(1, 1, typ="info")
        h.leader_hw({1: 1})
        h.leader_hw({1: 0})
        h.drain({1: [a]})
        self.assertOnly(h.check(), "hw_regression", 1)

    def test_concurrent_leader_hw_reads_may_disagree(self):
        h = History()
        a = h.send(1, 1, typ="info")
        hw = {"partitions": {"1": {"leader": 1, "leader_epoch": 1,
                                   "replicas": [1, 2, 3], "isr": [1, 2, 3],
                                   "hw": 1}}, "controller": 1}
        low = {"partitions": {"1": dict(hw["partitions"]["1"], hw=0)},
               "controller": 1}
        h.invoke(OBSERVER, "metadata")
        h.invoke(OBSERVER + 1, "metadata")
        h.complete(OBSERVER, "ok", "metadata", hw)
        h.complete(OBSERVER + 1, "ok", "metadata", low)
        h.drain({1: [a]})
        self.assertEqual(h.check()["verdict"], "valid")
        # The same two reads one after the other are a regression.
        h = History()
        a = h.send(1, 1, typ="info")
        h.leader_hw({1: 1})
        h.leader_hw({1: 0})
        h.drain({1: [a]})
        self.assertEqual(h.check()["verdict"], "invalid")

    def test_ack_above_hw(self):
        h = History()
        a = h.send(1, 0, 0)
        b = h.send(1, 0, 1)
        h.leader_hw({0: 1})  # b acknowledged yet not below the HW
        h.drain({0: [a, b]})
        self.assertOnly(h.check(), "ack_above_hw", 1)

    def test_stale_reads_of_a_deposed_node_are_left_out(self):
        """A deposed leader or coordinator that clients still reach answers
        from its old state until it learns, as Kafka's does: a client's
        watermark read is never judged (the leader's HW as the controllers
        name it is), and a committed-offsets read during a partition (and
        a grace after the heal) is left out; one after that counts."""
        def run(grace_ns):
            h = History()
            h.commit("g", {0: 2})
            a = h.send(1, 0, 0)
            b = h.send(1, 0, 1)
            h.nemesis("partition", {"fault": "partition-leader"})
            h.watermarks({0: (0, 1)})            # stale HW, a client's
            h.nemesis("heal", {"targets": "network"})
            h.commit("g", {0: 1}, process=OBSERVER, f="committed")
            h.watermarks({0: (0, 1)})            # stale, after the heal
            h.drain({0: [a, b]})
            return checker.check_records(
                h.lines, header={"stale_grace_ns": grace_ns})[0]
        self.assertEqual(run(10 ** 9)["verdict"], "valid")
        # With no grace, the committed read after the heal counts.
        self.assertOnly(run(0), "committed_regression", 1)

    def test_read_above_hw(self):
        h = History()
        a = h.send(1, 0, typ="info")
        h.assign(CONSUMER, {0: 0})
        h.poll(CONSUMER, {0: [(0, a)]})
        h.leader_hw({0: 0})  # offset 0 was read, yet HW is 0
        h.drain({0: [a]})
        self.assertOnly(h.check(), "read_above_hw", 1)

    def test_read_record_vanished_past_drain_end(self):
        h = History()
        a = h.send(1, 0, 0)
        b = h.send(1, 0, typ="info")
        h.assign(CONSUMER, {0: 0})
        h.poll(CONSUMER, {0: [(0, a), (1, b)]})   # b read, then gone
        h.drain({0: [a]})
        r = h.check()
        self.assertOnly(r, "read_above_hw", 1)
        self.assertEqual(r["anomalies"]["read_above_hw"][0]["kind"], "vanished")

    # -- committed offsets ------------------------------------------------

    def test_committed_offset_regression(self):
        h = History()
        a = h.send(1, 0, 0)
        h.commit("g", {0: 1})
        h.commit("g", {0: 0}, process=OBSERVER, f="committed")
        h.drain({0: [a]})
        self.assertOnly(h.check(), "committed_regression", 1)

    # -- replicas -------------------------------------------------------------

    def test_replica_mismatch(self):
        h = History()
        a = h.send(1, 0, 0)
        b = h.send(1, 0, typ="info")
        h.drain({0: [a, b]})
        dumps = dumps_of({"0": [a, b]})
        dumps["0"]["replicas"]["3"][1][1] = "9:9"
        r = h.check(dumps)
        self.assertOnly(r, "replica_mismatch", 1)
        self.assertEqual(r["anomalies"]["replica_mismatch"][0]["offset"], 1)

    def test_replica_missing_ack(self):
        h = History()
        a = h.send(1, 0, 0)
        b = h.send(1, 0, 1)
        h.drain({0: [a, b]})
        r = h.check(dumps_of({"0": [a]}))   # HW 1 on disk: b on no replica
        self.assertOnly(r, "replica_missing_ack", 3)

    # -- metadata -------------------------------------------------------------

    def metadata_history(self, *reads):
        h = History()
        a = h.send(1, 0, 0)
        for parts in reads:
            h.metadata(parts)
        h.drain({0: [a]})
        return h.check()

    def test_leader_epoch_regression(self):
        r = self.metadata_history({0: (1, 2, [1, 2, 3], [1, 2, 3])},
                                  {0: (1, 1, [1, 2, 3], [1, 2, 3])})
        self.assertOnly(r, "epoch_regression", 1)

    def test_two_leaders_in_one_epoch(self):
        r = self.metadata_history({0: (1, 1, [1, 2, 3], [1, 2, 3])},
                                  {0: (2, 1, [1, 2, 3], [1, 2, 3])})
        self.assertOnly(r, "epoch_conflict", 1)

    def test_leader_not_in_isr(self):
        r = self.metadata_history({0: (1, 1, [1, 2, 3], [2, 3])})
        self.assertOnly(r, "leader_not_in_isr", 1)

    def test_isr_outside_replicas(self):
        r = self.metadata_history({0: (1, 1, [1, 2, 3], [1, 4])})
        self.assertOnly(r, "isr_outside_replicas", 1)

    def test_no_leader_is_not_an_anomaly(self):
        r = self.metadata_history({0: (-1, 1, [1, 2, 3], [])})
        self.assertEqual(r["verdict"], "valid")

    # -- drain completeness --------------------------------------------------

    def test_inconclusive_drain_short_of_acks(self):
        h = History()
        a = h.send(1, 0, 0)
        b = h.send(1, 0, 1)
        h.drain({0: [a]})
        r = h.check()
        self.assertEqual(found(r), set())
        self.assertEqual(r["verdict"], "inconclusive")
        self.assertEqual(r["exit_code"], 2)
        self.assertEqual([e["value"] for e in r["unseen"]], [b])

    def test_inconclusive_drain_short_of_hw(self):
        h = History()
        a = h.send(1, 0, 0)
        h.send(1, 0, typ="info")
        h.watermarks({0: (0, 2)})
        h.drain({0: [a]})
        r = h.check()
        self.assertEqual(r["verdict"], "inconclusive")
        self.assertEqual(r["drain"]["incomplete"], ["0"])

    def test_inconclusive_without_drain(self):
        h = History()
        a = h.send(1, 0, 0)
        h.assign(CONSUMER, {0: 0})
        h.poll(CONSUMER, {0: [(0, a)]})
        r = h.check()
        self.assertEqual(r["verdict"], "inconclusive")
        self.assertFalse(r["drain"]["present"])

    def test_anomaly_beats_incomplete_drain(self):
        h = History()
        a = h.send(1, 0, 0)
        h.send(1, 0, 1)
        h.drain({0: [a, a]})
        self.assertEqual(h.check()["verdict"], "invalid")

    # -- malformed histories --------------------------------------------------

    def assertMalformed(self, lines):
        r, _ = checker.check_records(lines)
        self.assertEqual(r["verdict"], "malformed")
        self.assertEqual(r["exit_code"], 2)
        self.assertTrue(r["malformed"])
        return r

    def test_malformed_double_invoke(self):
        h, _ = clean_history()
        h.invoke(1, "send", {"key": 0, "value": "1:100"})
        h.invoke(1, "send", {"key": 0, "value": "1:101"})
        self.assertMalformed(h.lines)

    def test_malformed_completion_without_invoke(self):
        h, _ = clean_history()
        h.complete(5, "ok", "poll", {"records": {}})
        self.assertMalformed(h.lines)

    def test_malformed_retired_process_reappears(self):
        h, _ = clean_history()
        h.send(2, 0, 5)   # process 2 was retired by an info send
        self.assertMalformed(h.lines)

    def test_malformed_time_goes_back(self):
        h, _ = clean_history()
        h.lines[5]["time"] = 1
        self.assertMalformed(h.lines)

    def test_malformed_value_sent_twice(self):
        h, _ = clean_history()
        h.send(4, 0, 3, value="1:1")
        self.assertMalformed(h.lines)

    def test_malformed_fields(self):
        for bad in ({"index": "x"}, {"type": "done"}, {"f": "frobnicate"},
                    {"process": None}, {"value": {"records": 3}}):
            h = History()
            h.assign(CONSUMER, {0: 0})
            h.poll(CONSUMER, {})
            h.lines[-1].update(bad)
            with self.subTest(bad=bad):
                self.assertMalformed(h.lines)

    def test_malformed_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "h.jsonl")
            with open(path, "w") as fh:
                fh.write('{"header": true}\n{"index": 0, "time": 1,\n')
            with redirect_stdout(io.StringIO()) as out:
                rc = checker.main([path, "--quiet"])
            self.assertEqual(rc, 2)
            self.assertIn("verdict=malformed", out.getvalue())

    def test_malformed_dumps(self):
        h, _ = clean_history()
        r, _ = checker.check_records(h.lines, dumps={"0": {"hw": "x"}})
        self.assertEqual(r["verdict"], "malformed")

    def test_missing_file(self):
        with redirect_stdout(io.StringIO()) as out:
            rc = checker.main(["/nonexistent/history.jsonl", "--quiet"])
        self.assertEqual(rc, 2)
        self.assertIn("verdict=malformed", out.getvalue())

    # -- the command ----------------------------------------------------------

    def run_command(self, h, dumps=None):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "h.jsonl")
            with open(path, "w") as fh:
                fh.write(json.dumps({"header": True, "seed": 7}) + "\n")
                for ln in h.lines:
                    fh.write(json.dumps(ln) + "\n")
            args = [path, "--json", os.path.join(d, "r.json")]
            if dumps is not None:
                with open(os.path.join(d, "d.json"), "w") as fh:
                    json.dump(dumps, fh)
                args += ["--dumps", os.path.join(d, "d.json")]
            with redirect_stdout(io.StringIO()) as out:
                rc = checker.main(args)
            with open(os.path.join(d, "r.json")) as fh:
                return rc, out.getvalue(), json.load(fh)

    def test_command_valid(self):
        h, logs = clean_history()
        rc, out, result = self.run_command(h, dumps_of(logs))
        self.assertEqual(rc, 0)
        first = out.splitlines()[0]
        self.assertTrue(first.startswith("CHECK verdict=valid "), first)
        fields = dict(f.split("=", 1) for f in first.split()[1:])
        self.assertEqual(fields["sends_ok"], "5")
        self.assertEqual(fields["lost"], "0")
        self.assertEqual(fields["drain"], "complete")
        self.assertEqual(result["header"], {"header": True, "seed": 7})
        self.assertEqual(result["verdict"], "valid")

    def test_command_invalid_shows_examples(self):
        h = History()
        a = h.send(1, 0, 0)
        h.drain({0: [a, a]})
        rc, out, result = self.run_command(h)
        self.assertEqual(rc, 1)
        self.assertIn("duplicates=1", out.splitlines()[0])
        self.assertIn("duplicate: 1", out)
        self.assertIn('"1:1"', out)
        self.assertEqual(result["counts"]["duplicate"], 1)


if __name__ == "__main__":
    unittest.main()
