#!/usr/bin/python3
"""Checker for the fault-injection harness: is a run's history safe?

Reads a merged history (one JSON object per line, optionally preceded by a
header line with "header": true) of the queue workload: producers send
unique values "process:counter" to partitions ("keys") of one topic,
consumers assign partitions and poll them, an observer reads watermarks,
metadata and committed group offsets, and the nemesis injects faults. The
optional dumps file holds each replica's records below the final high
watermark, read from disk after the run.

The analyses, in Kafka terms:

  well-formedness      every line parses; each client process alternates
                       invoke and completion; a producer retired by an
                       indefinite ("info") send never reappears; indexes
                       increase and times never go back; values are unique.
  log reconstruction   per partition, the offset -> value map seen by polls.
                       Two values at one offset: "inconsistent"; one value
                       at two offsets: "duplicate"; a value polled from a
                       partition it was not sent to: "misrouted".
  final log            what the final drain (ops with "final": true) read;
                       a gap in its offsets is an "offset_hole" (no
                       transactions or compaction, so none is legitimate).
  lost                 an acknowledged send absent from the final log; split
                       per producer and partition into prefix, middle and
                       postfix by the producer's counter.
  ack integrity        an acknowledged offset that consumers saw holding
                       another value, or the value polled at another offset:
                       "misplaced".
  aborted / unexpected a polled value whose send definitely failed / that no
                       producer ever sent.
  consumer order       inside one poll offsets go up by exactly one, and the
                       next poll starts where the last stopped unless an
                       assign or crash came between: "nonmonotonic_poll".
                       A producer's acknowledged offsets in one partition
                       increase: "nonmonotonic_send".
  high watermark       watermark reads never go down in real time; an
                       acknowledged offset, or a polled one, is below the
                       high watermark of every read invoked after the ack or
                       poll completed; a polled record past the end of a
                       complete final drain was read above the HW too.
  committed offsets    a group's committed offset of a partition never goes
                       down in real time.
  replicas             replicas agree record for record below the final high
                       watermark, agree with the final drain there, and each
                       holds every acknowledged value.
  metadata             leader epochs never go down in real time, one leader
                       per epoch, the leader is in the ISR, the ISR is a
                       subset of the replicas.
  liveness             time from each heal/start/resume to the next
                       acknowledged send per partition (reported only).

Verdict: "malformed" (exit 2) if the history breaks its format, else
"invalid" (exit 1) if any safety anomaly was found, else "inconclusive"
(exit 2) if there was no final drain or it stopped short of both the final
high watermark and one past the highest acknowledged offset of a partition,
else "valid" (exit 0).

Result (the --json file): {"verdict", "exit_code", "reasons": [text],
"header": the history's header line or null, "counts": {anomaly: n},
"anomalies": {anomaly: [example, ...]} (every example has "ops", the
history indexes of the lines involved, plus fields naming the key,
offset, value...), "lost_positions": {"prefix"|"middle"|"postfix": n},
"drain": {"present", "incomplete": [key], "partitions": {key: {"log_start",
"final_hw", "max_acked_offset", "reach", "target", "complete"}}},
"unseen": [{"key", "value", "offset", "ops"}], "malformed": [{"index" or
"line", "error"}], "stats": {"lines", "ops": {f: {type: n}}, "faults":
{f: n}, "sends_ok", "sends_fail", "sends_info", "recovered", "unseen"},
"liveness": {"events": [{"index", "f", "time", "delays_ms": {key: ms or
null}}], "max_delay_ms": {key: ms}, "partitions_without_write_after": n}}.

Usage: checker.py HISTORY.jsonl [--dumps DUMPS.json] [--json OUT.json]
"""

import argparse
import bisect
import json
import math
import sys
from collections import Counter, defaultdict

CLIENT_FS = frozenset(("send", "poll", "assign", "crash", "watermarks",
                       "metadata", "commit", "committed"))
TYPES = frozenset(("invoke", "ok", "fail", "info"))
LIVENESS_FS = frozenset(("heal", "start", "resume"))

# (anomaly name in the result, its counter in the summary line), in the
# order the summary prints them. Every one of these makes a run invalid.
ANOMALIES = (
    ("lost", "lost"),
    ("duplicate", "duplicates"),
    ("misplaced", "misplaced"),
    ("inconsistent", "inconsistent"),
    ("misrouted", "misrouted"),
    ("aborted_read", "aborted_reads"),
    ("unexpected", "unexpected"),
    ("offset_hole", "holes"),
    ("nonmonotonic_poll", "nonmonotonic_polls"),
    ("nonmonotonic_send", "nonmonotonic_sends"),
    ("hw_regression", "hw_regressions"),
    ("ack_above_hw", "acks_above_hw"),
    ("read_above_hw", "reads_above_hw"),
    ("committed_regression", "committed_regressions"),
    ("replica_mismatch", "replica_mismatches"),
    ("replica_missing_ack", "replica_missing_acks"),
    ("epoch_regression", "epoch_regressions"),
    ("epoch_conflict", "epoch_conflicts"),
    ("leader_not_in_isr", "leaders_not_in_isr"),
    ("isr_outside_replicas", "isr_outside_replicas"),
    ("raft_term_conflict", "raft_term_conflicts"),
)
ANOMALY_NAMES = tuple(name for name, _ in ANOMALIES)

EXIT_CODES = {"valid": 0, "invalid": 1, "inconclusive": 2, "malformed": 2}


# ---------------------------------------------------------------------------
# Small helpers


def is_int(x):
    """True for a JSON integer (bool is not one)."""
    return isinstance(x, int) and not isinstance(x, bool)


def is_time(x):
    """True for a finite, non-negative JSON number."""
    return (isinstance(x, (int, float)) and not isinstance(x, bool)
            and math.isfinite(x) and x >= 0)


def is_record(r):
    """True for [offset, value]: an integer offset and a scalar value."""
    return (isinstance(r, list) and len(r) == 2 and is_int(r[0])
            and (r[1] is None or isinstance(r[1], (str, int, float))))


def sort_values(values):
    """Values (strings, maybe null or numbers) in a stable printable order."""
    return sorted(values, key=lambda v: (type(v).__name__, str(v)))


def key_of(k):
    """Normalise a partition key (int or digit string) to a string, or None."""
    if is_int(k):
        return str(k)
    if isinstance(k, str) and k.lstrip("-").isdigit():
        return str(int(k))
    return None


def key_order(k):
    """Sort key for partition keys: numerically."""
    return int(k)


def producer_of(value):
    """Split a value "process:counter" into (process, counter), or None."""
    if not isinstance(value, str):
        return None
    head, sep, tail = value.rpartition(":")
    if not sep or not tail.isdigit():
        return None
    return head, int(tail)


def anomaly(ops=(), **fields):
    """One anomaly example: its fields plus the history lines it involves."""
    fields["ops"] = sorted(set(i for i in ops if i is not None))
    return fields


# ---------------------------------------------------------------------------
# Parsing and well-formedness


class Op:
    """One operation: an invocation and its completion (None while open).

    `ref` is the index of the line that carries the result (the
    completion, or the invocation of an open op); anomalies cite it.
    """

    __slots__ = ("process", "f", "inv", "comp", "type", "t0", "t1", "final",
                 "ref", "key", "val", "offset", "records")

    def __init__(self, inv, comp):
        self.process = inv["process"]
        self.f = inv["f"]
        self.inv = inv
        self.comp = comp
        self.type = comp["type"] if comp is not None else "open"
        self.t0 = inv["time"]
        self.t1 = comp["time"] if comp is not None else math.inf
        self.final = bool(inv.get("final") or (comp or {}).get("final"))
        self.ref = (comp or inv)["index"]
        self.key = self.val = self.offset = self.records = None

    @property
    def value(self):
        """The completion's value if there is one, else the invocation's."""
        if self.comp is not None and self.comp.get("value") is not None:
            return self.comp["value"]
        return self.inv.get("value")


def _offsets_map(m, what, allow_none=True):
    """Validate a {key: offset} map; return an error string or None."""
    if not isinstance(m, dict):
        return what + " is not an object"
    for k, o in m.items():
        if key_of(k) is None:
            return "%s has a non-partition key %r" % (what, k)
        if not (is_int(o) or (allow_none and o is None)):
            return "%s[%s] is not an integer offset" % (what, k)
    return None


def _value_error(line):
    """Check a client line's value against the d.5 shape for its f/type."""
    f, typ, v = line["f"], line["type"], line.get("value")
    if f == "send":
        if typ == "invoke":
            if not isinstance(v, dict) or key_of(v.get("key")) is None:
                return "send invoke without a partition key"
            if not isinstance(v.get("value"), str):
                return "send invoke without a string value"
        elif v is not None:
            if not isinstance(v, dict):
                return "send completion value is not an object"
            if not (v.get("offset") is None or is_int(v.get("offset"))):
                return "send offset is neither an integer nor null"
        return None
    if typ != "ok" and f != "assign":
        return None
    if f == "poll":
        if not isinstance(v, dict) or not isinstance(v.get("records"), dict):
            return "poll ok without a records object"
        for k, recs in v["records"].items():
            if key_of(k) is None or not isinstance(recs, list):
                return "poll records[%r] is not a list of a partition" % k
            for r in recs:
                if not is_record(r):
                    return "poll record %r is not [offset, value]" % (r,)
        return None
    if f == "assign":
        if v is None:
            return None
        if not isinstance(v, dict):
            return "assign value is not an object"
        if "offsets" in v:
            return _offsets_map(v["offsets"], "assign offsets")
        return None
    if f == "watermarks":
        if not isinstance(v, dict):
            return "watermarks ok value is not an object"
        for k, lh in v.items():
            if key_of(k) is None or not (isinstance(lh, list) and len(lh) == 2
                                         and is_int(lh[0]) and is_int(lh[1])):
                return "watermarks[%r] is not [low, high]" % k
        return None
    if f == "metadata":
        if not isinstance(v, dict) or not isinstance(v.get("partitions"), dict):
            return "metadata ok without a partitions object"
        for k, p in v["partitions"].items():
            if key_of(k) is None or not isinstance(p, dict):
                return "metadata partitions[%r] is not an object" % k
            for field in ("replicas", "isr"):
                if not isinstance(p.get(field, []), list):
                    return "metadata partitions[%r].%s is not a list" % (k, field)
        return None
    if f in ("commit", "committed"):
        if not isinstance(v, dict) or "group" not in v:
            return f + " ok without a group"
        return _offsets_map(v.get("offsets"), f + " offsets")
    return None


def line_error(line):
    """Check one history line's fields; return an error string or None."""
    if not isinstance(line, dict):
        return "line is not a JSON object"
    if line.get("header") is True:
        return "header line after the first line"
    if not is_int(line.get("index")):
        return "missing or non-integer index"
    if not is_time(line.get("time")):
        return "missing or invalid time"
    p = line.get("process")
    if not (is_int(p) or p == "nemesis"):
        return "process is neither an integer nor \"nemesis\""
    if line.get("type") not in TYPES:
        return "type is not one of invoke, ok, fail, info"
    if not isinstance(line.get("f"), str):
        return "missing f"
    if p != "nemesis" and line["f"] not in CLIENT_FS:
        return "unknown client operation f=%r" % line["f"]
    if not isinstance(line.get("final", False), bool):
        return "final is not a boolean"
    return None


def value_error(line):
    """Check a client line's value shape; return an error string or None."""
    if line["process"] == "nemesis":
        return None
    return _value_error(line)


def parse_lines(text_lines):
    """Parse JSON lines into (header, records, errors); blank lines skipped."""
    header, records, errors = None, [], []
    for n, raw in enumerate(text_lines, 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError as e:
            errors.append({"line": n, "error": "not JSON: %s" % e})
            continue
        if not records and header is None and isinstance(obj, dict) \
                and obj.get("header") is True:
            header = obj
            continue
        records.append(obj)
    return header, records, errors


class Model:
    """The history, paired into operations, with the indexes analyses share."""

    def __init__(self, records, header=None, dumps=None):
        self.header = header
        self.dumps = dumps
        self.errors = []
        self.lines = []
        self.by_index = {}
        self._validate_lines(records)
        self.ops, self.nemesis = self._pair()
        self.by_ref = {op.ref: op for op in self.ops + self.nemesis}
        self.partitions = set()
        self.sends = {}          # value -> send Op
        self.ok_sends = []       # ok send Ops, history order
        self.polls = []          # ok poll Ops, history order
        self._index_ops()

    def error(self, index, message):
        """Record a well-formedness error at history index `index`."""
        self.errors.append({"index": index, "error": message})

    def _validate_lines(self, records):
        last_index, last_time = None, None
        for n, rec in enumerate(records):
            msg = line_error(rec)
            if msg is not None:
                where = rec.get("index") if isinstance(rec, dict) else None
                self.error(where, "record %d dropped: %s" % (n + 1, msg))
                continue
            line = dict(rec)
            msg = value_error(line)
            if msg is not None:
                self.error(line["index"], msg)
                line["value"] = None
            if last_index is not None and line["index"] <= last_index:
                self.error(line["index"], "index does not increase")
            if last_time is not None and line["time"] < last_time:
                self.error(line["index"], "time goes back")
            last_index, last_time = line["index"], line["time"]
            if line["index"] in self.by_index:
                continue
            self.by_index[line["index"]] = line
            self.lines.append(line)

    def _pair(self):
        """Pair invocations with completions per process.

        A client process runs one op at a time; an indefinite ("info") send
        retires the producer, which must not appear again (its successor has
        a new process id). Nemesis lines pair leniently: an invocation and
        the next nemesis completion with the same f, else single events.
        """
        ops, nemesis = [], []
        pending, retired, nem_pending = {}, set(), None
        for line in self.lines:
            p = line["process"]
            if p == "nemesis":
                if line["type"] == "invoke":
                    if nem_pending is not None:
                        nemesis.append(Op(nem_pending, None))
                    nem_pending = line
                elif nem_pending is not None and nem_pending["f"] == line["f"]:
                    nemesis.append(Op(nem_pending, line))
                    nem_pending = None
                else:
                    nemesis.append(Op(line, line))
                continue
            if p in retired:
                self.error(line["index"], "process %s appears after an info "
                           "send retired it" % p)
                continue
            if line["type"] == "invoke":
                if p in pending:
                    self.error(line["index"], "process %s invokes while an op "
                               "is pending" % p)
                    ops.append(Op(pending.pop(p), None))
                pending[p] = line
                continue
            inv = pending.pop(p, None)
            if inv is None:
                self.error(line["index"], "completion without an invocation")
                continue
            if inv["f"] != line["f"]:
                self.error(line["index"], "completion f=%s of an invoked %s"
                           % (line["f"], inv["f"]))
                ops.append(Op(inv, None))
                continue
            ops.append(Op(inv, line))
            if line["type"] == "info" and line["f"] == "send":
                retired.add(p)
        if nem_pending is not None:
            nemesis.append(Op(nem_pending, None))
        ops.extend(Op(inv, None) for inv in pending.values())
        ops.sort(key=lambda o: o.inv["index"])
        nemesis.sort(key=lambda o: o.inv["index"])
        return ops, nemesis

    def _index_ops(self):
        """Extract send keys/values/offsets and poll records; note partitions."""
        parts = self.partitions
        for op in self.ops:
            v = op.value
            if op.f == "send":
                iv = op.inv.get("value")
                if not isinstance(iv, dict):
                    continue
                op.key, op.val = key_of(iv.get("key")), iv.get("value")
                if op.val in self.sends:
                    self.error(op.inv["index"], "value %r sent twice" % op.val)
                    continue
                self.sends[op.val] = op
                parts.add(op.key)
                cv = op.comp.get("value") if op.comp is not None else None
                if isinstance(cv, dict) and is_int(cv.get("offset")):
                    op.offset = cv["offset"]
                if op.type == "ok":
                    self.ok_sends.append(op)
            elif op.type != "ok" or not isinstance(v, dict):
                continue
            elif op.f == "poll":
                op.records = {key_of(k): [(r[0], r[1]) for r in recs]
                              for k, recs in v["records"].items()}
                parts.update(op.records)
                self.polls.append(op)
            elif op.f == "watermarks":
                parts.update(key_of(k) for k in v)
            elif op.f == "metadata":
                parts.update(key_of(k) for k in v.get("partitions") or {})
        for k in (self.dumps or {}):
            parts.add(k)

    def ops_of(self, f, typ="ok"):
        """Client ops with this f (and completion type, None for any)."""
        return [op for op in self.ops if op.f == f
                and (typ is None or op.type == typ)
                and isinstance(op.value, dict)]


# ---------------------------------------------------------------------------
# Log reconstruction from polls


class Reads:
    """What consumers saw: per partition, offset -> {value: first poll ref}."""

    def __init__(self, polls):
        self.at = defaultdict(lambda: defaultdict(dict))
        self.where = defaultdict(lambda: defaultdict(set))  # key->val->offsets
        self.keys_of = defaultdict(set)                       # val -> keys
        self.max_offset = {}
        for op in polls:
            for k, recs in op.records.items():
                at, where = self.at[k], self.where[k]
                for o, v in recs:
                    at[o].setdefault(v, op.ref)
                    where[v].add(o)
                    self.keys_of[v].add(k)
                    if o > self.max_offset.get(k, -1):
                        self.max_offset[k] = o


def check_inconsistent(m, reads):
    """Two values at one offset of a partition.

    Kafka gives each offset of a partition exactly one record, forever; two
    consumers (or one consumer twice) seeing different values at one offset,
    or two acknowledgements naming the same offset, mean the log was
    rewritten (truncation without epoch fencing, split-brain).
    """
    out = []
    for k in sorted(reads.at, key=key_order):
        for o in sorted(reads.at[k]):
            vals = reads.at[k][o]
            if len(vals) > 1:
                out.append(anomaly(vals.values(), key=k, offset=o,
                                   values=sort_values(vals), source="polls"))
    acked = defaultdict(dict)
    for op in m.ok_sends:
        if op.offset is None:
            continue
        other = acked[op.key].setdefault(op.offset, op)
        if other is not op and other.val != op.val:
            out.append(anomaly([other.ref, op.ref], key=op.key,
                               offset=op.offset, values=[other.val, op.val],
                               source="acks"))
    return out


def check_duplicates(reads):
    """One value at two or more offsets of a partition.

    Values are unique, so one value at two offsets means the broker appended
    one produce twice (a retried batch the idempotent producer's sequence
    window should have caught).
    """
    out = []
    for k in sorted(reads.where, key=key_order):
        for v, offs in reads.where[k].items():
            if len(offs) > 1:
                refs = [reads.at[k][o][v] for o in offs]
                out.append(anomaly(refs, key=k, value=v, offsets=sorted(offs)))
    return out


def check_misrouted(m, reads):
    """A value polled from a partition other than the one it was sent to."""
    out = []
    for v, keys in reads.keys_of.items():
        send = m.sends.get(v)
        if send is None:
            continue
        for k in sorted(keys - {send.key}, key=key_order):
            o = min(reads.where[k][v])
            out.append(anomaly([send.ref, reads.at[k][o][v]], value=v,
                               sent_to=send.key, read_from=k, offset=o))
    return out


def check_read_values(m, reads):
    """Aborted reads and unexpected values; counts recovered sends.

    An aborted read polls a value whose send definitely failed (the client
    reported an error that proves the record was never written). An
    unexpected value was never sent by any producer: a phantom record.
    A recovered send completed "info" (unknown) but was read: not an error.
    """
    aborted, unexpected, recovered = [], [], 0
    for v, keys in reads.keys_of.items():
        k = min(keys, key=key_order)
        o = min(reads.where[k][v])
        ref = reads.at[k][o][v]
        send = m.sends.get(v)
        if send is None:
            unexpected.append(anomaly([ref], value=v, key=k, offset=o))
        elif send.type == "fail":
            aborted.append(anomaly([send.ref, ref], value=v, key=k, offset=o))
        elif send.type in ("info", "open"):
            recovered += 1
    return aborted, unexpected, recovered


# ---------------------------------------------------------------------------
# Final log, holes, lost writes, acknowledgement integrity


def final_high_watermarks(m):
    """Per partition: (log start, highest high watermark) over all reads."""
    out = {}
    for op in m.ops_of("watermarks"):
        for k, (low, high) in op.value.items():
            k = key_of(k)
            start, hw = out.get(k, (low, high))
            out[k] = (min(start, low), max(hw, high))
    return out


def drain_status(m, final):
    """Did the final drain read far enough in every partition?

    The target of a partition is the larger of the final high watermark
    and one past its highest acknowledged offset; the drain reached it if
    the final polls read an offset at or past target - 1.
    """
    hws = final_high_watermarks(m)
    max_ack = {}
    for op in m.ok_sends:
        if op.offset is not None:
            max_ack[op.key] = max(max_ack.get(op.key, -1), op.offset)
    status = {}
    for k in sorted(m.partitions, key=key_order):
        start, hw = hws.get(k, (0, None))
        target = max(hw or 0, max_ack.get(k, -1) + 1)
        reach = final.max_offset.get(k, start - 1) + 1
        status[k] = {"log_start": start, "final_hw": hw,
                     "max_acked_offset": max_ack.get(k),
                     "reach": reach, "target": target,
                     "complete": reach >= target}
    return status


def check_holes(final, drain):
    """Offsets missing from the final log between the log start and the
    highest offset the drain read.

    Without transactions or compaction a Kafka log has no invisible
    records, so every offset from the log start up holds a record a
    consumer reads; a gap means records vanished from the middle of a log.
    Each example is a range [first, end) of missing offsets.
    """
    out = []
    for k in sorted(final.at, key=key_order):
        prev = drain[k]["log_start"] - 1
        for o in sorted(final.at[k]):
            if o > prev + 1:
                out.append(anomaly([], key=k, first=prev + 1, end=o,
                                   count=o - prev - 1))
            prev = max(prev, o)
    return out


def check_lost(m, reads, final, drain, has_drain):
    """Acknowledged sends absent from the final log.

    Kafka's promise: with acks=all, an acknowledged record survives any
    failure that leaves one in-sync replica. A send counts as lost if the
    final drain of its partition was complete, or reached past its offset,
    or (Jepsen's rule) nobody ever read it although a poll read a higher
    offset of the partition. Otherwise it is only "unseen".

    Lost values are classified per producer and partition by the
    producer's counter: "prefix" (before the first of that producer's
    values in the final log), "middle" (between its first and last: a
    later write survived an earlier one), "postfix" (after the last, or
    none of them survived).
    """
    lost, unseen = [], []
    if not has_drain:
        return lost, [anomaly([op.ref], key=op.key, value=op.val,
                              offset=op.offset) for op in m.ok_sends]
    for op in m.ok_sends:
        if op.val in final.where[op.key]:
            continue
        d = drain[op.key]
        below = op.offset is not None and op.offset < d["reach"]
        jepsen = (op.offset is not None and op.val not in reads.where[op.key]
                  and op.offset < reads.max_offset.get(op.key, -1))
        entry = anomaly([op.ref], key=op.key, value=op.val, offset=op.offset)
        (lost if d["complete"] or below or jepsen else unseen).append(entry)
    survived = {}
    for k, vals in final.where.items():
        for v in vals:
            pc = producer_of(v)
            if pc is not None:
                lo, hi = survived.get((pc[0], k), (pc[1], pc[1]))
                survived[(pc[0], k)] = (min(lo, pc[1]), max(hi, pc[1]))
    for e in lost:
        pc = producer_of(e["value"])
        if pc is None:
            e["position"] = "unknown"
            continue
        e["producer"], e["counter"] = pc
        lo, hi = survived.get((pc[0], e["key"]), (math.inf, -math.inf))
        e["position"] = ("postfix" if pc[1] > hi else
                         "prefix" if pc[1] < lo else "middle")
    return lost, unseen


def check_misplaced(m, reads):
    """Acknowledged offsets that disagree with what consumers read.

    The delivery report of an acks=all send names the offset of the
    record; consumers must find that value there. Misplaced: the value was
    polled at another offset only, or its acknowledged offset was polled
    holding another value (spurious offsets such as a reused offset 0).
    """
    out = []
    for op in m.ok_sends:
        if op.offset is None:
            continue
        seen_at = reads.where[op.key].get(op.val, set())
        if op.offset in seen_at:
            continue
        there = reads.at[op.key].get(op.offset, {})
        if seen_at:
            o = min(seen_at)
            out.append(anomaly([op.ref, reads.at[op.key][o][op.val]],
                               key=op.key, value=op.val, offset=op.offset,
                               read_at=sorted(seen_at)))
        elif there:
            out.append(anomaly([op.ref] + list(there.values()), key=op.key,
                               value=op.val, offset=op.offset,
                               read_there=sort_values(there)))
    return out


# ---------------------------------------------------------------------------
# Per-process order


def known_offsets(reads):
    """Per partition, the sorted offsets some poll saw holding a record."""
    return {k: sorted(at) for k, at in reads.at.items()}


def _skips_known(known, k, lo, hi):
    """True if some known offset o has lo <= o < hi."""
    offs = known.get(k, ())
    i = bisect.bisect_left(offs, lo)
    return i < len(offs) and offs[i] < hi


def check_poll_order(m, reads):
    """A consumer's reads of a partition move forward one offset at a time.

    With assign() and no transactions, Kafka hands a consumer the records
    of a partition in offset order without gaps: inside one poll each
    offset is one more than the last, and the next poll starts where the
    previous one stopped. An assign or crash resets the position (to the
    assign's start offsets, when given); a failed or unknown poll makes the
    position unknown. Kinds: "rewind" (starts at or before the previous
    end), "skip" (jumps over offsets some poll saw holding a record; a jump
    over offsets no poll ever saw is a hole or a loss, reported as such),
    and their "internal-" variants inside one poll.
    """
    known = known_offsets(reads)
    out, expected = [], defaultdict(dict)
    for op in m.ops:
        pos = expected[op.process]
        if op.f == "crash":
            pos.clear()
        elif op.f == "assign":
            pos.clear()
            offs = (op.value or {}).get("offsets") if isinstance(
                op.value, dict) else None
            for k, start in (offs or {}).items():
                if is_int(start) and start >= 0:
                    pos[key_of(k)] = start
        elif op.f == "poll" and op.type != "ok":
            pos.clear()
        elif op.f == "poll" and op.records is not None:
            for k, recs in op.records.items():
                prev = pos.get(k)
                for i, (o, _) in enumerate(recs):
                    kind = None
                    if prev is not None and o < prev:
                        kind = "rewind"
                    elif prev is not None and o > prev and _skips_known(
                            known, k, prev, o):
                        kind = "skip"
                    if kind is not None:
                        out.append(anomaly(
                            [op.ref], process=op.process, key=k, offset=o,
                            expected=prev,
                            kind=kind if i == 0 else "internal-" + kind))
                    prev = o + 1
                if recs:
                    pos[k] = prev
    return out


def check_send_order(m):
    """One producer's acknowledged offsets in a partition increase.

    A producer sends one record at a time and waits for its delivery
    report, so each later record of it lands after its earlier ones.
    """
    out, last = [], {}
    for op in m.ok_sends:
        if op.offset is None:
            continue
        prev = last.get((op.process, op.key))
        if prev is not None and op.offset <= prev.offset:
            out.append(anomaly([prev.ref, op.ref], process=op.process,
                               key=op.key, offset=op.offset,
                               previous_offset=prev.offset))
        last[(op.process, op.key)] = op
    return out


# ---------------------------------------------------------------------------
# Real-time checks: watermarks, committed offsets, metadata epochs


def real_time_regressions(entries):
    """Entries (t0, t1, value, ref): find each one whose value is below that
    of an entry that completed before it was invoked.

    Returns (earlier, later) pairs, `earlier` being the highest such entry.
    Sorting makes it n log n.
    """
    by_end = sorted(entries, key=lambda e: e[1])
    out, best, j = [], None, 0
    for e in sorted(entries, key=lambda e: e[0]):
        while j < len(by_end) and by_end[j][1] < e[0]:
            if best is None or by_end[j][2] > best[2]:
                best = by_end[j]
            j += 1
        if best is not None and e[2] < best[2]:
            out.append((best, e))
    return out


class LaterMinimum:
    """Answers: of the entries (t0, value, ref) invoked strictly after time
    t, which has the smallest value?"""

    def __init__(self, entries):
        entries = sorted(entries)
        self.starts = [e[0] for e in entries]
        self.suffix = [None] * len(entries)
        best = None
        for i in range(len(entries) - 1, -1, -1):
            if best is None or entries[i][1] < best[1]:
                best = entries[i]
            self.suffix[i] = best

    def after(self, t):
        """The minimal entry invoked after t, or None."""
        i = bisect.bisect_right(self.starts, t)
        return self.suffix[i] if i < len(self.suffix) else None


# A deposed leader (or group coordinator) that clients can still reach
# answers from its old state until it learns of the new epoch: Kafka serves
# such stale reads too (a client that sends its current leader epoch,
# KIP-320, is refused by the deposed broker; librdkafka 2.0 does not send
# it for ListOffsets). A leader is deposed while alive when it is cut off
# (a network partition), stopped (a pause), or cannot reach the
# controllers in time (a fault that hits controllers: its session lapses
# and it is fenced). The committed offsets a client reads from such a
# fault until this long after its undo (the header's stale_grace_ns, else
# STALE_GRACE_NS) are left out of the committed-offset register; every
# write-side check keeps them. (The HW checks use the controller-named
# leader's answers only: check_high_watermark.)
STALE_FAULTS = ("partition", "pause")
FAULT_FS = ("kill", "pause", "partition", "power-loss")
STALE_UNDO = ("heal", "resume", "start")
STALE_GRACE_NS = 5 * 10 ** 9


def stale_windows(m):
    """(start, end) intervals in which a read may reach a deposed node."""
    grace = STALE_GRACE_NS
    if isinstance(m.header, dict) and is_int(m.header.get("stale_grace_ns")):
        grace = m.header["stale_grace_ns"]
    wins = []
    for i, ev in enumerate(m.nemesis):
        v = ev.value if isinstance(ev.value, dict) else {}
        targets = v.get("targets") if isinstance(v.get("targets"), list) \
            else []
        hits_controller = any(str(t).startswith("controller")
                              for t in targets)
        if ev.f not in STALE_FAULTS and not (ev.f in FAULT_FS and
                                             hits_controller):
            continue
        end = math.inf
        for later in m.nemesis[i + 1:]:
            if later.f in STALE_UNDO:
                end = later.t1 + grace
                break
        wins.append((ev.t0, end))
    return wins


def in_windows(wins, t0, t1):
    return any(t0 <= e and t1 >= s for s, e in wins)


def leader_hw_reads(m):
    """Per partition, the HW the controller-named leader reported to the
    observer (its metadata ops, from `cairn status`), as (t0, t1, hw,
    ref)."""
    out = defaultdict(list)
    for op in m.ops_of("metadata"):
        for k, p in (op.value.get("partitions") or {}).items():
            if isinstance(p, dict) and is_int(p.get("hw")) and p["hw"] >= 0:
                out[key_of(k)].append((op.t0, op.t1, p["hw"], op.ref))
    return out


def check_high_watermark(m):
    """High watermark monotonicity and the acks and reads it must cover.

    hw_regression: a read of a partition's high watermark returns less than
    a read that completed before it began (KIP-207: list-offsets must never
    go back, even across leader changes).
    ack_above_hw: an acknowledged offset not below the high watermark of a
    read invoked after the acknowledgement (acks=all acknowledged before
    the record was committed to the ISR).
    read_above_hw: a polled offset not below the high watermark of a read
    invoked after the poll (a consumer saw an uncommitted record); kind
    "above-later-hw".
    The reads are the HW the controller-named leader reported in the
    observer's metadata (`cairn status`). A client's own watermark read
    (librdkafka's ListOffsets to the leader it has cached) may be answered
    by a deposed leader that has not yet learnt of the new epoch, from its
    frozen state, for as long as it cannot reach the controllers; Kafka
    answers so too, so those reads are recorded and drawn, not judged.
    """
    regress, acks, polls = [], [], []
    reads = leader_hw_reads(m)
    for k in sorted(reads, key=key_order):
        for a, b in real_time_regressions(reads[k]):
            regress.append(anomaly([a[3], b[3]], key=k, high=b[2],
                                   earlier_high=a[2]))
    later = {k: LaterMinimum([(e[0], e[2], e[3]) for e in es])
             for k, es in reads.items()}
    for op in m.ok_sends:
        hit = later[op.key].after(op.t1) if (
            op.offset is not None and op.key in later) else None
        if hit is not None and op.offset >= hit[1]:
            acks.append(anomaly([op.ref, hit[2]], key=op.key, value=op.val,
                                offset=op.offset, high=hit[1]))
    for op in m.polls:
        for k, recs in op.records.items():
            if not recs or k not in later:
                continue
            top = max(o for o, _ in recs)
            hit = later[k].after(op.t1)
            if hit is not None and top >= hit[1]:
                polls.append(anomaly([op.ref, hit[2]], key=k, offset=top,
                                     high=hit[1], process=op.process,
                                     kind="above-later-hw"))
    return regress, acks, polls


def check_reads_survive(reads, final, drain):
    """Polled records past the end of a complete final drain.

    A consumer may only see committed records, and committed records stay.
    A record polled during the run at an offset the complete final drain
    never reached was uncommitted when read, then vanished (a read above
    the HW that no later watermark read happened to expose). Reported as
    read_above_hw of kind "vanished", once per partition and offset. (A
    read record missing below the drain's end is a hole; another value
    there is an inconsistent offset.)
    """
    out = []
    for k in sorted(reads.at, key=key_order):
        d = drain.get(k)
        if not final.keys_of or d is None or not d["complete"]:
            continue
        for o in sorted(reads.at[k]):
            if o >= d["reach"]:
                vals = reads.at[k][o]
                out.append(anomaly(vals.values(), key=k, offset=o,
                                   values=sort_values(vals),
                                   final_end=d["reach"], kind="vanished"))
    return out


def check_committed(m):
    """A consumer group's committed offset never goes back in real time.

    Commits (acknowledged writes of a group's offsets) and committed reads
    form one register per group and partition; once a commit or read of a
    value has completed, no later read may return less. Reads in a
    stale window (see STALE_FAULTS) are left out. This assumes the
    workload commits only forward (a deliberate rewind uses a new group).
    """
    series = defaultdict(list)
    wins = stale_windows(m)
    for op in m.ops:
        v = op.value
        if op.f == "committed" and in_windows(wins, op.t0, op.t1):
            continue  # may have met a deposed coordinator
        if op.f in ("commit", "committed") and op.type == "ok" \
                and isinstance(v, dict):
            for k, o in (v.get("offsets") or {}).items():
                if is_int(o) and o >= 0:
                    series[(str(v.get("group")), key_of(k))].append(
                        (op.t0, op.t1, o, op.ref))
    out = []
    for (g, k) in sorted(series, key=lambda gk: (gk[0], key_order(gk[1]))):
        for a, b in real_time_regressions(series[(g, k)]):
            out.append(anomaly([a[3], b[3]], group=g, key=k, offset=b[2],
                               earlier_offset=a[2]))
    return out


def check_metadata(m):
    """Partition metadata: epochs, leaders, ISR.

    epoch_regression: a partition's leader epoch goes down in real time.
    epoch_conflict: two different leaders reported for one leader epoch
    (the controller hands out each epoch once: split-brain otherwise).
    leader_not_in_isr: the leader is not in the ISR.
    isr_outside_replicas: an ISR member is not a replica.
    """
    epochs = defaultdict(list)
    leaders = {}    # (key, epoch) -> {leader: first ref}
    conflicts, not_in_isr, outside = [], [], []
    for op in m.ops_of("metadata"):
        for k, p in (op.value.get("partitions") or {}).items():
            k = key_of(k)
            leader, epoch = p.get("leader"), p.get("leader_epoch")
            isr, replicas = p.get("isr") or [], p.get("replicas") or []
            has_leader = is_int(leader) and leader >= 0
            if is_int(epoch) and epoch >= 0:
                epochs[k].append((op.t0, op.t1, epoch, op.ref))
                seen = leaders.setdefault((k, epoch), {})
                if has_leader and leader not in seen:
                    if seen:
                        conflicts.append(anomaly(
                            list(seen.values()) + [op.ref], key=k,
                            epoch=epoch, leaders=sorted(seen) + [leader]))
                    seen[leader] = op.ref
            if has_leader and "isr" in p and leader not in isr:
                not_in_isr.append(anomaly([op.ref], key=k, leader=leader,
                                          isr=isr, epoch=epoch))
            extra = [b for b in isr if b not in replicas]
            if extra and "replicas" in p:
                outside.append(anomaly([op.ref], key=k, isr=isr,
                                       replicas=replicas, outside=extra))
    regress = []
    for k in sorted(epochs, key=key_order):
        for a, b in real_time_regressions(epochs[k]):
            regress.append(anomaly([a[3], b[3]], key=k, epoch=b[2],
                                   earlier_epoch=a[2]))
    return regress, conflicts, not_in_isr, outside


def check_raft(m):
    """raft_term_conflict: two controllers each became the active
    controller in one Raft term (at most one leader per term is Raft's
    election safety). The harness adds what each controller logged as
    nemesis lines f=raft-leader with value {"node", "term"}."""
    claims = {}     # term -> {node: first ref}
    out = []
    for ev in m.nemesis:
        if ev.f != "raft-leader":
            continue
        v = ev.value if isinstance(ev.value, dict) else {}
        node, term = v.get("node"), v.get("term")
        if not (is_int(node) and is_int(term)):
            continue
        seen = claims.setdefault(term, {})
        if node not in seen:
            if seen:
                out.append(anomaly(list(seen.values()) + [ev.ref], term=term,
                                   nodes=sorted(seen) + [node]))
            seen[node] = ev.ref
    return out


# ---------------------------------------------------------------------------
# Replica dumps


def dumps_error(dumps):
    """Check the dumps file's shape; return an error string or None."""
    if not isinstance(dumps, dict):
        return "dumps is not an object"
    for k, d in dumps.items():
        if key_of(k) is None or not isinstance(d, dict):
            return "dumps[%r] is not a partition object" % k
        if not is_int(d.get("hw")) or not isinstance(d.get("replicas"), dict):
            return "dumps[%r] needs an integer hw and a replicas object" % k
        for b, recs in d["replicas"].items():
            if not isinstance(recs, list) or not all(map(is_record, recs)):
                return "dumps[%r].replicas[%r] is not [[offset, value]...]" % (k, b)
    return None


def normalise_dumps(dumps):
    """{key: {"hw": H, "replicas": {broker: {offset: [values]}}}}."""
    out = {}
    for k, d in dumps.items():
        reps = {}
        for b, recs in d["replicas"].items():
            at = defaultdict(list)
            for o, v in recs:
                at[o].append(v)
            reps[str(b)] = at
        out[key_of(k)] = {"hw": d["hw"], "replicas": reps}
    return out


def check_replicas(m, final):
    """Replica logs after the run, from the offline dumps.

    replica_mismatch: below the final high watermark every replica must
    hold the same record at every offset (Kafka's ReplicaVerificationTool
    check), one record per offset, equal to what the final drain read
    there. replica_missing_ack: an acknowledged value absent from a
    replica's committed log (acknowledged with acks=all, yet not on every
    replica once the cluster healed).
    """
    mismatch, missing = [], []
    if not m.dumps:
        return mismatch, missing
    for k in sorted(m.dumps, key=key_order):
        hw, reps = m.dumps[k]["hw"], m.dumps[k]["replicas"]
        if not reps:
            continue
        offsets = set(o for o in final.at.get(k, {}) if o < hw)
        for at in reps.values():
            offsets.update(o for o in at if o < hw)
        for o in sorted(offsets):
            held = {b: at.get(o, []) for b, at in reps.items()}
            drained = sort_values(final.at.get(k, {}).get(o, {}))
            distinct = {tuple(vs) for vs in held.values()}
            if len(distinct) > 1 or any(len(vs) != 1 for vs in held.values()) \
                    or (drained and [held[next(iter(held))][0]] != drained):
                refs = final.at.get(k, {}).get(o, {}).values()
                mismatch.append(anomaly(refs, key=k, offset=o, hw=hw,
                                        replicas=held, drained=drained))
        values = {b: {v for vs in at.values() for v in vs}
                  for b, at in reps.items()}
        below = {b: {v for o, vs in at.items() if o < hw for v in vs}
                 for b, at in reps.items()}
        for op in m.ok_sends:
            if op.key != k:
                continue
            for b in sorted(reps):
                if op.val not in below[b]:
                    missing.append(anomaly(
                        [op.ref], key=k, value=op.val, offset=op.offset,
                        replica=b, hw=hw, above_hw=op.val in values[b]))
    return mismatch, missing


# ---------------------------------------------------------------------------
# Liveness and statistics


def liveness(m):
    """Time from each heal/start/resume to the next acknowledged send of
    each partition (a stalled partition after healing is a liveness bug;
    reported, never failing the run)."""
    acks = defaultdict(list)
    for op in m.ok_sends:
        acks[op.key].append(op.t1)
    for ts in acks.values():
        ts.sort()
    events, worst, never = [], {}, 0
    for ev in m.nemesis:
        if ev.f not in LIVENESS_FS:
            continue
        t = ev.t1 if ev.comp is not None else ev.t0
        delays = {}
        for k in sorted(acks, key=key_order):
            i = bisect.bisect_right(acks[k], t)
            if i < len(acks[k]):
                delays[k] = round((acks[k][i] - t) / 1e6, 3)
                worst[k] = max(worst.get(k, 0), delays[k])
            else:
                delays[k] = None
                never += 1
        events.append({"index": ev.ref, "f": ev.f, "time": t,
                       "delays_ms": delays})
    return {"events": events, "max_delay_ms": worst,
            "partitions_without_write_after": never}


def statistics(m, recovered, unseen):
    """Counts of ok/fail/info/open per operation and faults by kind."""
    ops = defaultdict(Counter)
    for op in m.ops:
        ops[op.f][op.type] += 1
    faults = Counter(ev.f for ev in m.nemesis)
    return {"ops": {f: dict(c) for f, c in sorted(ops.items())},
            "faults": dict(sorted(faults.items())),
            "lines": len(m.lines),
            "sends_ok": ops["send"]["ok"],
            "sends_fail": ops["send"]["fail"],
            "sends_info": ops["send"]["info"] + ops["send"]["open"],
            "recovered": recovered,
            "unseen": len(unseen)}


# ---------------------------------------------------------------------------
# The whole check


def check_records(records, header=None, dumps=None, parse_errors=()):
    """Run every analysis over parsed history records; return the result."""
    errors = list(parse_errors)
    if dumps is not None:
        msg = dumps_error(dumps)
        if msg:
            errors.append({"index": None, "error": msg})
            dumps = None
        else:
            dumps = normalise_dumps(dumps)
    m = Model(records, header, dumps)
    errors.extend(m.errors)
    if not m.ops:
        errors.append({"index": None, "error": "history has no client operations"})

    reads = Reads(m.polls)
    final = Reads([op for op in m.polls if op.final])
    has_drain = any(op.final for op in m.polls)
    drain = drain_status(m, final)
    found = {name: [] for name in ANOMALY_NAMES}
    found["inconsistent"] = check_inconsistent(m, reads)
    found["duplicate"] = check_duplicates(reads)
    found["misrouted"] = check_misrouted(m, reads)
    found["aborted_read"], found["unexpected"], recovered = \
        check_read_values(m, reads)
    found["offset_hole"] = check_holes(final, drain)
    found["lost"], unseen = check_lost(m, reads, final, drain, has_drain)
    found["misplaced"] = check_misplaced(m, reads)
    found["nonmonotonic_poll"] = check_poll_order(m, reads)
    found["nonmonotonic_send"] = check_send_order(m)
    (found["hw_regression"], found["ack_above_hw"],
     found["read_above_hw"]) = check_high_watermark(m)
    found["read_above_hw"] += check_reads_survive(reads, final, drain)
    found["committed_regression"] = check_committed(m)
    found["replica_mismatch"], found["replica_missing_ack"] = \
        check_replicas(m, final)
    (found["epoch_regression"], found["epoch_conflict"],
     found["leader_not_in_isr"], found["isr_outside_replicas"]) = \
        check_metadata(m)
    found["raft_term_conflict"] = check_raft(m)

    counts = {name: sum(e.get("count", 1) for e in found[name])
              for name in ANOMALY_NAMES}
    lost_by = Counter(e.get("position") for e in found["lost"])
    incomplete = [k for k, d in drain.items() if not d["complete"]]
    reasons = []
    if errors:
        verdict = "malformed"
        reasons.append("%d well-formedness error(s)" % len(errors))
    elif any(counts.values()):
        verdict = "invalid"
        reasons.extend("%s=%d" % (n, c) for n, c in counts.items() if c)
    elif not has_drain or incomplete:
        verdict = "inconclusive"
        reasons.append("no final drain" if not has_drain else
                       "final drain incomplete for partition(s) "
                       + ",".join(incomplete))
    else:
        verdict = "valid"
    result = {
        "verdict": verdict,
        "exit_code": EXIT_CODES[verdict],
        "reasons": reasons,
        "header": header,
        "counts": counts,
        "lost_positions": {p: lost_by.get(p, 0)
                           for p in ("prefix", "middle", "postfix")},
        "drain": {"present": has_drain, "incomplete": incomplete,
                  "partitions": drain},
        "anomalies": found,
        "unseen": unseen,
        "malformed": errors,
        "stats": statistics(m, recovered, unseen),
        "liveness": liveness(m),
    }
    return result, m


def check_file(path, dumps_path=None):
    """Check a history file (and optional dumps file); return (result, model).

    Unreadable files raise OSError; a dumps file that is not JSON counts as
    malformed input.
    """
    with open(path, encoding="utf-8") as fh:
        header, records, errors = parse_lines(fh)
    dumps = None
    if dumps_path is not None:
        with open(dumps_path, encoding="utf-8") as fh:
            try:
                dumps = json.load(fh)
            except ValueError as e:
                errors.append({"index": None, "error": "dumps not JSON: %s" % e})
    return check_records(records, header, dumps, errors)


# ---------------------------------------------------------------------------
# Output


def summary_line(result):
    """The one-line summary: CHECK verdict=... counter=N ..."""
    s = result["stats"]
    parts = ["verdict=" + result["verdict"], "lines=%d" % s["lines"],
             "sends_ok=%d" % s["sends_ok"], "sends_info=%d" % s["sends_info"],
             "sends_fail=%d" % s["sends_fail"]]
    for name, label in ANOMALIES:
        parts.append("%s=%d" % (label, result["counts"][name]))
    lp = result["lost_positions"]
    parts.extend("lost_%s=%d" % (p, lp[p]) for p in ("prefix", "middle",
                                                      "postfix"))
    parts.append("unseen=%d" % s["unseen"])
    parts.append("recovered=%d" % s["recovered"])
    d = result["drain"]
    parts.append("drain=" + ("none" if not d["present"] else
                             "incomplete" if d["incomplete"] else "complete"))
    parts.append("malformed=%d" % len(result["malformed"]))
    return "CHECK " + " ".join(parts)


def _show_line(m, index):
    """One history line as compact text: #index time process type f value."""
    line = m.by_index.get(index)
    if line is None:
        return "#%s (not in history)" % index
    extra = {k: line[k] for k in ("error", "node", "final") if k in line}
    value = json.dumps(line.get("value"), sort_keys=True)
    if len(value) > 300:
        value = value[:300] + "... (%d chars)" % len(value)
    return "#%d t=%.3fs %s %s %s %s%s" % (
        index, line["time"] / 1e9, line["process"], line["type"], line["f"],
        value, (" " + json.dumps(extra, sort_keys=True)) if extra else "")


def _context(m, refs):
    """History lines around an anomaly: each op's invocation and completion,
    and the last nemesis event before the earliest of them."""
    out, first = [], None
    for ref in refs:
        op = m.by_ref.get(ref)
        idxs = [ref] if op is None else sorted({op.inv["index"], op.ref})
        out.extend(idxs)
        first = idxs[0] if first is None else min(first, idxs[0])
    nem = [ev.ref for ev in m.nemesis if first is not None and ev.ref < first]
    lines = ["      " + _show_line(m, i) for i in out]
    if nem:
        lines.insert(0, "      last fault before: " + _show_line(m, nem[-1]))
    return lines


def details(result, m, examples=5):
    """Human-readable details: verdict reasons, drain, anomaly examples."""
    out = ["verdict: %s (%s)" % (result["verdict"],
                                 "; ".join(result["reasons"]) or "no anomaly")]
    for e in result["malformed"][:examples * 4]:
        out.append("  malformed at %s: %s" % (e.get("index", e.get("line")),
                                             e["error"]))
    out.append("final drain:")
    for k, d in result["drain"]["partitions"].items():
        out.append("  partition %s: log_start=%s final_hw=%s max_acked=%s "
                   "reach=%s target=%s %s" % (
                       k, d["log_start"], d["final_hw"], d["max_acked_offset"],
                       d["reach"], d["target"],
                       "complete" if d["complete"] else "INCOMPLETE"))
    for name, _ in ANOMALIES:
        found = result["anomalies"][name]
        if not found:
            continue
        out.append("%s: %d" % (name, result["counts"][name]))
        for e in found[:examples]:
            fields = {k: v for k, v in e.items() if k != "ops"}
            out.append("  - " + json.dumps(fields, sort_keys=True))
            out.extend(_context(m, e["ops"]))
        if len(found) > examples:
            out.append("  ... and %d more" % (len(found) - examples))
    s = result["stats"]
    out.append("ops: " + json.dumps(s["ops"], sort_keys=True))
    out.append("faults: " + json.dumps(s["faults"], sort_keys=True))
    live = result["liveness"]
    out.append("liveness (not failing): max ms from heal/start/resume to the "
               "next ok send per partition %s; %d partition-events with no "
               "write after" % (json.dumps(live["max_delay_ms"], sort_keys=True),
                                live["partitions_without_write_after"]))
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("history", help="merged history, one JSON object a line")
    ap.add_argument("--dumps", help="replica dumps JSON")
    ap.add_argument("--json", help="write the full result as JSON here")
    ap.add_argument("--examples", type=int, default=5,
                    help="examples shown per anomaly (default 5)")
    ap.add_argument("--quiet", action="store_true",
                    help="print only the summary line")
    args = ap.parse_args(argv)
    try:
        result, m = check_file(args.history, args.dumps)
    except OSError as e:
        print("CHECK verdict=malformed error=%r" % str(e))
        return 2
    print(summary_line(result))
    if not args.quiet:
        print(details(result, m, args.examples))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1, sort_keys=True)
            fh.write("\n")
    return result["exit_code"]


if __name__ == "__main__":
    sys.exit(main())
