#!/usr/bin/python3
"""An HTML report of one fault-injection run, for reading what happened.

    report.py RUN_DIR

Reads RUN_DIR/history.jsonl (the merged history, jepsen/checker.py's
format), RUN_DIR/result.json (the checker's result; if it is missing the
checker is run here) and RUN_DIR/dumps.json when present, writes
RUN_DIR/report.html and prints its path. The file is self-contained: inline
CSS and inline SVG drawn here, no scripts, no external resources.

What it shows:

  1. the run's seed, the faults injected, the verdict, the checker's
     counts, and for every anomaly kind found a one-line explanation and
     its first examples with the history lines involved;
  2. acknowledged sends per second and send latency (p50, p99) per second,
     with every fault drawn as a shaded band (from the nemesis kill/pause
     invocation to the completion of its start/resume/heal);
  3. per partition, from the observer's metadata and watermark reads: the
     leader over time (a colour per broker, with its leader epoch), the
     ISR size and the high watermark;
  4. a table of the faults: per affected partition, when the ISR shrank,
     when a leader with a higher epoch took over, when the high watermark
     moved again and how long acknowledged writes stopped;
  5. the verification: acknowledged writes found at their offsets in the
     final drain, the final high watermarks, the replica logs compared,
     and the checker's summary line.

Times are seconds since the run started (the history's clock). An
observation (metadata, watermarks) counts from its completion, and only
observations invoked after a fault began are taken as its consequences.
"""

import bisect
import html
import json
import math
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import checker  # noqa: E402  (jepsen/checker.py)

NS = 1e9
EXAMPLES = 3             # examples shown per anomaly kind
MAX_BINS = 1000          # time bins of the per-second charts at most
VALUE_CHARS = 160        # a history value shown in a table is cut here

# Chart geometry (SVG user units; the SVG scales to the page width).
WIDTH = 1200
LEFT = 78
RIGHT = 24
PLOT_W = WIDTH - LEFT - RIGHT

# Broker colours keep clear of the red and orange of the fault bands.
BROKER_COLOURS = ["#4c78a8", "#54a24b", "#8e6bbf", "#17a2b8", "#9d755d",
                  "#d45087", "#6b6b6b", "#bcbd22"]
PARTITION_COLOURS = ["#6f4e9c", "#17877b", "#a0522d", "#c2185b", "#33691e",
                     "#0d47a1"]
NO_LEADER = "#c8c8c8"
VERDICT_COLOURS = {"valid": "#1b7f3b", "invalid": "#c62828",
                   "inconclusive": "#b26a00", "malformed": "#6a1b9a"}
FAULT_FILL = {"kill": "#e53935", "pause": "#fb8c00", "partition": "#1e88e5",
              "power-loss": "#6d4c41", "slow-disk": "#8e24aa"}
UNDO = {"kill": "start", "pause": "resume", "partition": "heal",
        "power-loss": "start", "slow-disk": "heal"}

EXPLAIN = {
    "lost": "an acknowledged write (acks=all said it was safe) is missing "
            "from the final log",
    "duplicate": "one value is in a partition at two offsets: a retried "
                 "produce was appended twice",
    "misplaced": "the offset a send's acknowledgement named holds another "
                 "value, or the value was read at another offset",
    "inconsistent": "two different values were seen at one offset: the log "
                    "was rewritten (two leaders diverged)",
    "misrouted": "a value was read from a partition it was not sent to",
    "aborted_read": "a consumer read a value whose send definitely failed",
    "unexpected": "a consumer read a value that no producer ever sent",
    "offset_hole": "the final log skips offsets: records vanished from the "
                   "middle of a log",
    "nonmonotonic_poll": "a consumer's position went backwards, or skipped "
                         "records other consumers saw",
    "nonmonotonic_send": "a producer's later write got a lower offset than "
                         "its earlier one in the same partition",
    "hw_regression": "the high watermark went down between two reads, one "
                     "after the other in real time",
    "ack_above_hw": "a write was acknowledged before the high watermark "
                    "covered it (acknowledged before it was committed)",
    "read_above_hw": "a consumer read a record above the high watermark (a "
                     "record that was not committed yet, or never was)",
    "committed_regression": "a consumer group's committed offset went "
                            "backwards",
    "replica_mismatch": "replicas hold different records at one offset "
                        "below the final high watermark",
    "replica_missing_ack": "an acknowledged value is missing from a "
                           "replica's log after the cluster healed",
    "epoch_regression": "a partition's leader epoch went backwards",
    "epoch_conflict": "two different leaders were reported for one leader "
                      "epoch (split brain)",
    "raft_term_conflict": "two controllers each logged that they became the "
                          "active controller in the same Raft term",
    "leader_not_in_isr": "the reported leader was not in the in-sync "
                         "replica set",
    "isr_outside_replicas": "the ISR named a broker that is not a replica "
                            "of the partition",
}


def esc(x):
    return html.escape(str(x), quote=True)


def key_order(k):
    try:
        return (0, int(k), "")
    except (TypeError, ValueError):
        return (1, 0, str(k))


def secs(t_ns):
    """A history time (ns) as seconds with ms precision."""
    return "%.3f s" % (t_ns / NS)


def is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def broker_colour(b):
    if not is_num(b) or b < 0:
        return NO_LEADER
    return BROKER_COLOURS[(int(b) - 1) % len(BROKER_COLOURS)]


def partition_colour(i):
    return PARTITION_COLOURS[i % len(PARTITION_COLOURS)]


def short(value, limit=VALUE_CHARS):
    s = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if len(s) > limit:
        s = s[:limit] + "\u2026 (%d chars)" % len(s)
    return s


def percentile(sorted_values, q):
    """Nearest-rank percentile of a sorted, non-empty list."""
    i = max(0, min(len(sorted_values) - 1,
                   int(math.ceil(q * len(sorted_values))) - 1))
    return sorted_values[i]


# ---------------------------------------------------------------------------
# Reading a run


def load_history(path):
    """(header, lines): the header line (or None) and every op line that
    parses and has a numeric time; other lines are skipped."""
    header, lines = None, []
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            if obj.get("header") is True and header is None and not lines:
                header = obj
                continue
            if is_num(obj.get("time")) and isinstance(obj.get("type"), str):
                lines.append(obj)
    return header, lines


def load_json(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def node_ids(targets, kind):
    """The ids of "broker-N" (kind "broker") or "controller-N" targets."""
    out = []
    for t in targets if isinstance(targets, list) else []:
        head, _, tail = str(t).rpartition("-")
        if head == kind and tail.isdigit():
            out.append(int(tail))
    return out


class Fault:
    """One nemesis fault (a kill, pause, network partition, power loss or
    slow disk), until its undo completed."""

    def __init__(self, number, line):
        v = line.get("value") if isinstance(line.get("value"), dict) else {}
        self.number = number
        self.verb = line["f"]
        self.kind = v.get("fault") or self.verb
        self.targets = v.get("targets") if isinstance(
            v.get("targets"), list) else []
        self.start = line["time"]
        self.effect = None      # the kill/pause completed
        self.undo_f = None      # start, resume or heal
        self.undo_start = None
        self.end = None         # the undo completed

    @property
    def brokers(self):
        return node_ids(self.targets, "broker")

    @property
    def controllers(self):
        return node_ids(self.targets, "controller")

    def label(self):
        return "F%d %s %s" % (self.number, self.kind,
                              ",".join(map(str, self.targets)))


class Run:
    """Everything the report draws, extracted from one pass over the
    history."""

    def __init__(self, header, lines, result, dumps):
        self.header = header or (result or {}).get("header") or {}
        self.result = result or {}
        self.dumps = dumps if isinstance(dumps, dict) else None
        self.lines = lines
        self.by_index = {}
        self.invoke_of = {}      # completion index -> its invocation line
        self.sends = []          # (t0, t1, type, key, value, offset)
        self.metadata = defaultdict(list)  # key -> [(t0, t1, part dict)]
        self.metadata_times = []           # t1 of every ok metadata op
        self.metadata_failed = []          # t1 of failed metadata ops
        self.hw_obs = defaultdict(list)    # key -> [(t0, t1, hw)]
        self.final = defaultdict(dict)     # key -> {offset: value}
        self.faults = []
        self.heals = []                    # times of heal completions
        self.drain_start = None
        self.partitions = set()
        self.t_end = 0
        self._read()

    def _read(self):
        pending = {}
        open_faults = []
        for ln in self.lines:
            if "index" in ln:
                self.by_index[ln["index"]] = ln
            t = ln["time"]
            self.t_end = max(self.t_end, t)
            if ln.get("final") and self.drain_start is None:
                self.drain_start = t
            if ln.get("process") == "nemesis":
                self._nemesis(ln, open_faults)
                continue
            p = ln.get("process")
            if ln["type"] == "invoke":
                pending[p] = ln
                continue
            inv = pending.pop(p, None)
            if inv is None or inv.get("f") != ln.get("f"):
                continue
            if "index" in ln:
                self.invoke_of[ln["index"]] = inv
            self._op(inv, ln)
        for fa in self.faults:
            if fa.end is None:
                fa.end = fa.undo_start if fa.undo_start is not None \
                    else self.t_end
        for k in self.hw_obs:
            self.hw_obs[k].sort(key=lambda o: o[1])
        self.sends.sort(key=lambda s: s[1])
        self.partitions = sorted(self.partitions, key=key_order)

    def _nemesis(self, ln, open_faults):
        f, typ, t = ln.get("f"), ln["type"], ln["time"]
        v = ln.get("value") if isinstance(ln.get("value"), dict) else {}
        if f in FAULT_FILL:
            if typ == "invoke":
                fa = Fault(len(self.faults) + 1, ln)
                self.faults.append(fa)
                open_faults.append(fa)
            else:
                for fa in reversed(open_faults):
                    if fa.verb == f and fa.effect is None:
                        fa.effect = t
                        # A partition names its hosts once it is cut.
                        if not fa.targets and isinstance(v.get("targets"),
                                                         list):
                            fa.targets = v["targets"]
                        break
            return
        if f not in ("start", "resume", "heal"):
            return
        targets = v.get("targets")
        if typ == "invoke":
            for fa in open_faults:
                if fa.undo_start is not None:
                    continue
                hit = isinstance(targets, list) and \
                    set(map(str, targets)) & set(map(str, fa.targets))
                if f == "heal" or targets == "all" or (
                        UNDO.get(fa.verb) == f and hit):
                    fa.undo_f, fa.undo_start = f, t
            return
        if f == "heal":
            self.heals.append(t)
        for fa in list(open_faults):
            if fa.undo_f == f and fa.end is None:
                fa.end = t
                open_faults.remove(fa)

    def _op(self, inv, comp):
        f, typ = comp.get("f"), comp["type"]
        v = comp.get("value")
        if f == "send":
            iv = inv.get("value") if isinstance(inv.get("value"), dict) else {}
            key = str(iv.get("key"))
            offset = v.get("offset") if isinstance(v, dict) else None
            self.sends.append((inv["time"], comp["time"], typ, key,
                               iv.get("value"), offset))
            self.partitions.add(key)
        elif f == "metadata":
            if typ != "ok" or not isinstance(v, dict):
                self.metadata_failed.append(comp["time"])
                return
            parts = v.get("partitions")
            if not isinstance(parts, dict):
                return
            self.metadata_times.append(comp["time"])
            for k, p in parts.items():
                if not isinstance(p, dict):
                    continue
                k = str(k)
                self.partitions.add(k)
                self.metadata[k].append((inv["time"], comp["time"], p))
                if is_num(p.get("hw")):
                    self.hw_obs[k].append((inv["time"], comp["time"],
                                           p["hw"]))
        elif f == "watermarks" and typ == "ok" and isinstance(v, dict):
            for k, lh in v.items():
                if isinstance(lh, list) and len(lh) == 2 and is_num(lh[1]):
                    self.partitions.add(str(k))
                    self.hw_obs[str(k)].append((inv["time"], comp["time"],
                                                lh[1]))
        elif f == "poll" and typ == "ok" and isinstance(v, dict) and (
                inv.get("final") or comp.get("final")):
            for k, recs in (v.get("records") or {}).items():
                at = self.final[str(k)]
                for r in recs if isinstance(recs, list) else []:
                    if isinstance(r, list) and len(r) == 2:
                        at.setdefault(r[0], r[1])

    # -- derived series ------------------------------------------------------

    def ok_sends(self, key=None):
        return [s for s in self.sends if s[2] == "ok" and
                (key is None or s[3] == key)]

    def bin_width(self):
        """Seconds per bin of the per-second charts (1, 2, 4...)."""
        width, span = 1, max(1.0, self.t_end / NS)
        while span / width > MAX_BINS:
            width *= 2
        return width

    def send_series(self):
        """Per bin: acks/s in total and per partition, failed or
        indefinite sends/s, and latency p50/p99 in ms."""
        width = self.bin_width()
        n = int(self.t_end / NS / width) + 1
        total = [0] * n
        bad = [0] * n
        per = {k: [0] * n for k in self.partitions}
        lat = [[] for _ in range(n)]
        for t0, t1, typ, key, _, _ in self.sends:
            b = min(n - 1, int(t1 / NS / width))
            if typ == "ok":
                total[b] += 1
                if key in per:
                    per[key][b] += 1
                lat[b].append((t1 - t0) / 1e6)
            else:
                bad[b] += 1
        p50, p99 = [], []
        for ls in lat:
            if ls:
                ls.sort()
                p50.append(percentile(ls, 0.50))
                p99.append(percentile(ls, 0.99))
            else:
                p50.append(None)
                p99.append(None)
        scale = 1.0 / width
        return {"width": width, "n": n,
                "total": [c * scale for c in total],
                "bad": [c * scale for c in bad],
                "per": {k: [c * scale for c in v] for k, v in per.items()},
                "p50": p50, "p99": p99}

    def acked_end(self, key):
        """Per bin: one past the highest acknowledged offset so far."""
        width = self.bin_width()
        n = int(self.t_end / NS / width) + 1
        out, top = [None] * n, None
        by_bin = defaultdict(int)
        for _, t1, typ, k, _, off in self.sends:
            if typ == "ok" and k == key and is_num(off):
                b = min(n - 1, int(t1 / NS / width))
                by_bin[b] = max(by_bin[b], off + 1)
        for b in range(n):
            if b in by_bin:
                top = max(top or 0, by_bin[b])
            out[b] = top
        return out

    def leader_at(self, key, t):
        """The last metadata observation of a partition completed by t."""
        obs = self.metadata.get(key, [])
        i = bisect.bisect_right([o[1] for o in obs], t)
        return obs[i - 1][2] if i else None


# ---------------------------------------------------------------------------
# What happened at each fault


def _first_after(obs, start, until, test):
    """The first observation (t0, t1, x) invoked in [start, until) with
    test(x) true."""
    for o in obs:
        if o[0] < start:
            continue
        if o[0] >= until:
            return None
        if test(o[-1]):
            return o
    return None


def fault_rows(run):
    """Per fault, its affected partitions and the times of the ISR shrink,
    the new leader, the high watermark moving and the next ack."""
    acks, acked_top = defaultdict(list), defaultdict(list)
    for s in run.ok_sends():
        top = acked_top[s[3]]
        end = s[5] + 1 if is_num(s[5]) else -1
        top.append(max(top[-1], end) if top else end)
        acks[s[3]].append(s[1])
    out = []
    for i, fa in enumerate(run.faults):
        until = run.faults[i + 1].start if i + 1 < len(run.faults) \
            else math.inf
        brokers, whole = fa.brokers, bool(fa.controllers)
        before = {k: run.leader_at(k, fa.start) for k in run.partitions}
        affected = []
        for k in run.partitions:
            p = before[k] or {}
            if whole:
                affected.append((k, "controller fault" if not brokers
                                 else "all nodes"))
            elif p.get("leader") in brokers:
                affected.append((k, "leader broker %s" % p.get("leader")))
        if not affected and not whole:
            for k in run.partitions:
                p = before[k] or {}
                hit = [b for b in brokers if b in (p.get("isr") or [])]
                if hit or not p:
                    affected.append((k, "follower broker %s" % ",".join(
                        map(str, hit)) if hit else "leader unknown"))
        parts = []
        for k, role in affected:
            p = before[k] or {}
            obs = [(o[0], o[1], o[2]) for o in run.metadata.get(k, [])]
            row = {"key": k, "role": role}
            isr0 = p.get("isr") if isinstance(p.get("isr"), list) else None
            if isr0 is not None:
                hit = _first_after(obs, fa.start, until, lambda x: isinstance(
                    x.get("isr"), list) and len(x["isr"]) < len(isr0))
                if hit:
                    row["isr"] = (hit[1], "%d\u2192%d" % (
                        len(isr0), len(hit[2]["isr"])))
            ep0 = p.get("leader_epoch")
            if is_num(ep0):
                hit = _first_after(obs, fa.start, until, lambda x: is_num(
                    x.get("leader_epoch")) and x["leader_epoch"] > ep0)
                if hit:
                    row["leader"] = (hit[1], "broker %s, epoch %s" % (
                        hit[2].get("leader"), hit[2].get("leader_epoch")))
            # The HW at the fault's start: at least the last HW read before
            # it and one past every offset acknowledged before it.
            hws = run.hw_obs.get(k, [])
            base = [o[2] for o in hws if o[1] <= fa.start]
            j = bisect.bisect_right(acks.get(k, []), fa.start)
            if j and acked_top[k][j - 1] >= 0:
                base.append(acked_top[k][j - 1])
            if base:
                hw0 = max(base)
                hit = _first_after(hws, fa.start, until, lambda x: x > hw0)
                if hit:
                    row["hw"] = (hit[1], "%s\u2192%s" % (hw0, hit[2]))
            ts = acks.get(k, [])
            j = bisect.bisect_right(ts, fa.effect if fa.effect is not None
                                    else fa.start)
            if j < len(ts):
                row["gap"] = (ts[j], ts[j] - fa.start)
            parts.append(row)
        out.append((fa, parts))
    return out


# ---------------------------------------------------------------------------
# SVG drawing


def x_of(t_ns, span):
    return LEFT + (t_ns / NS) / span * PLOT_W


def nice_step(span, ticks):
    raw = span / max(1, ticks)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def fmt_num(v):
    if v == int(v):
        return "%d" % v
    return ("%.2f" % v).rstrip("0").rstrip(".")


def time_axis(span, y, top):
    """Ticks and labels in seconds along y, with grid lines up to top."""
    step = nice_step(span, 14)
    out = ['<line x1="%d" y1="%d" x2="%d" y2="%d" class="axis"/>' % (
        LEFT, y, LEFT + PLOT_W, y)]
    t = 0.0
    while t <= span + 1e-9:
        x = LEFT + t / span * PLOT_W
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="grid"/>'
                   % (x, top, x, y))
        out.append('<text x="%.1f" y="%d" class="tick" text-anchor="middle">'
                   '%s</text>' % (x, y + 14, fmt_num(t)))
        t += step
    out.append('<text x="%d" y="%d" class="tick" text-anchor="end">'
               'seconds since run start</text>' % (LEFT + PLOT_W, y + 28))
    return out


LABEL_STRIP = 26   # room above a plot for two rows of fault labels


def fault_bands(run, span, top, bottom, labels=True):
    """Every fault as a shaded band from top to bottom, labelled in the
    strip of LABEL_STRIP units above top; heal and the final drain as
    dashed lines."""
    out = []
    for i, fa in enumerate(run.faults):
        x0, x1 = x_of(fa.start, span), x_of(fa.end, span)
        colour = FAULT_FILL.get(fa.verb, "#888")
        tip = "%s: %s at %s until %s %s" % (
            fa.label(), fa.verb, secs(fa.start), fa.undo_f or "the end",
            secs(fa.end))
        band_top = top - LABEL_STRIP if labels else top
        out.append('<g class="band"><title>%s</title><rect x="%.1f" y="%d" '
                   'width="%.1f" height="%d" fill="%s" fill-opacity="0.16" '
                   'stroke="%s" stroke-opacity="0.5"/>' % (
                       esc(tip), x0, band_top, max(1.0, x1 - x0),
                       bottom - band_top, colour, colour))
        if labels:
            out.append('<text x="%.1f" y="%d" class="bandlabel" fill="%s">'
                       '%s</text>' % (x0 + 2, band_top + 10 + (i % 2) * 11,
                                      colour, esc(fa.label())))
        out.append('</g>')
    for t in run.heals:
        x = x_of(t, span)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="mark">'
                   '<title>heal (everything resumed and restarted) at %s'
                   '</title></line>' % (x, top, x, bottom, secs(t)))
        if labels:
            out.append(mark_label(x, bottom - 3, "heal"))
    if run.drain_start is not None:
        x = x_of(run.drain_start, span)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="mark">'
                   '<title>final drain from %s</title></line>' % (
                       x, top, x, bottom, secs(run.drain_start)))
        if labels:
            out.append(mark_label(x, bottom - 13, "final drain"))
    return out


def mark_label(x, y, text):
    """A label beside a dashed line at x: right of it, or left of it near
    the plot's right edge."""
    if x > LEFT + PLOT_W - 6 * len(text) - 4:
        return ('<text x="%.1f" y="%d" class="marklabel" text-anchor="end">'
                '%s</text>' % (x - 2, y, esc(text)))
    return '<text x="%.1f" y="%d" class="marklabel">%s</text>' % (
        x + 2, y, esc(text))


def bin_x(i, width, span):
    """The x of the point i + 1/2 bins in, clamped to the plot."""
    return min(LEFT + PLOT_W, LEFT + ((i + 0.5) * width) / span * PLOT_W)


def path_of(points):
    """An SVG path through (x, y) points; None breaks the line."""
    parts, pen = [], False
    for pt in points:
        if pt is None:
            pen = False
            continue
        parts.append("%s%.1f %.1f" % ("L" if pen else "M", pt[0], pt[1]))
        pen = True
    return "".join(parts)


def decimate(points):
    """Points (x, y) sorted by x: at most one per x pixel (the last)."""
    out = []
    for pt in points:
        if out and int(out[-1][0]) == int(pt[0]):
            out[-1] = pt
        else:
            out.append(pt)
    return out


def y_axis(values, top, bottom, log=False, unit=""):
    """(scale function, SVG elements) for a y axis over the values."""
    vals = [v for v in values if v is not None]
    out = []
    if log:
        lo = min([v for v in vals if v > 0] or [1.0])
        hi = max(vals or [10.0])
        e0 = math.floor(math.log10(max(lo, 0.01)))
        e1 = max(e0 + 1, math.ceil(math.log10(max(hi, 0.01))))

        def scale(v):
            v = max(v, 10 ** e0)
            return bottom - (math.log10(v) - e0) / (e1 - e0) * (bottom - top)
        ticks = [10 ** e for e in range(e0, e1 + 1)]
    else:
        hi = max(vals or [1.0])
        step = nice_step(hi or 1.0, 4)
        top_v = step * math.ceil((hi or 1.0) / step)

        def scale(v):
            return bottom - v / top_v * (bottom - top)
        ticks, v = [], 0.0
        while v <= top_v + 1e-9:
            ticks.append(v)
            v += step
    for v in ticks:
        y = scale(v)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="grid"/>'
                   % (LEFT, y, LEFT + PLOT_W, y))
        out.append('<text x="%d" y="%.1f" class="tick" text-anchor="end">'
                   '%s%s</text>' % (LEFT - 5, y + 4, fmt_num(v), unit))
    return scale, out


def svg(height, body, label):
    return ('<svg viewBox="0 0 %d %d" width="100%%" role="img" '
            'aria-label="%s">%s</svg>' % (WIDTH, height, esc(label),
                                          "".join(body)))


def series_chart(run, span, series, title, log=False, unit="", ylabel=""):
    """A line chart over the time bins: series is [(name, colour, values,
    dash)] with one value (or None) per bin."""
    top, bottom = 8 + LABEL_STRIP, 200
    scale, body = y_axis([v for _, _, vs, _ in series for v in vs],
                         top, bottom, log, unit)
    width = run.bin_width()
    body.extend(fault_bands(run, span, top, bottom))
    for name, colour, values, dash in series:
        pts = [None if v is None else (bin_x(i, width, span), scale(v))
               for i, v in enumerate(values)]
        body.append('<path d="%s" fill="none" stroke="%s" stroke-width="%s"'
                    '%s><title>%s</title></path>' % (
                        path_of(pts), colour, "2" if dash is None else "1.3",
                        ' stroke-dasharray="%s"' % dash if dash else "",
                        esc(name)))
    body.extend(time_axis(span, bottom, top))
    if ylabel:
        body.append('<text x="%d" y="%d" class="lane" text-anchor="end">%s'
                    '</text>' % (LEFT - 5, top - 12, esc(ylabel)))
    return svg(bottom + 34, body, title)


def legend(items):
    return '<div class="legend">%s</div>' % "".join(
        '<span><i style="background:%s"></i>%s</span>' % (c, esc(n))
        for n, c in items)


def partition_chart(run, span, key):
    """Leader lane, ISR size lane and high watermark lane of a partition."""
    obs = run.metadata.get(key, [])
    lead_top, lead_bot = LABEL_STRIP + 22, LABEL_STRIP + 48
    isr_top, isr_bot = lead_bot + 30, lead_bot + 80
    hw_top, hw_bot = isr_bot + 30, isr_bot + 160
    body = fault_bands(run, span, lead_top - 20, hw_bot)
    for name, y0 in (("leader (broker \u00b7 epoch)", lead_top),
                     ("ISR size", isr_top), ("high watermark", hw_top)):
        body.append('<text x="%d" y="%d" class="lane">%s</text>' % (
            LEFT, y0 - 8, esc(name)))
    # Leader segments: each observation holds until the next one.
    segs = []
    for i, (_, t1, p) in enumerate(obs):
        t_next = obs[i + 1][1] if i + 1 < len(obs) else t1
        leader, epoch = p.get("leader"), p.get("leader_epoch")
        if segs and segs[-1][2] == leader and segs[-1][3] == epoch:
            segs[-1][1] = t_next
        else:
            segs.append([t1, t_next, leader, epoch])
    for t0, t1, leader, epoch in segs:
        x0, x1 = x_of(t0, span), x_of(t1, span)
        w = max(1.0, x1 - x0)
        has = is_num(leader) and leader >= 0
        text = ("broker %s \u00b7 e%s" % (leader, epoch) if has
                else "no leader")
        body.append('<g><title>%s from %s to %s</title><rect x="%.1f" y="%d" '
                    'width="%.1f" height="%d" fill="%s"/>' % (
                        esc(text), secs(t0), secs(t1), x0, lead_top, w,
                        lead_bot - lead_top, broker_colour(leader)))
        short_text = text if w > 7 * len(text) else (
            str(leader) if has and w > 12 else "")
        if short_text:
            body.append('<text x="%.1f" y="%d" class="segtext" '
                        'text-anchor="middle">%s</text>' % (
                            x0 + w / 2, lead_bot - 8, esc(short_text)))
        body.append('</g>')
    # Long stretches without a status read: the leader shown is stale.
    gaps = [b[1] - a[1] for a, b in zip(obs, obs[1:])]
    if gaps:
        limit = max(2 * NS, 2.5 * sorted(gaps)[len(gaps) // 2])
        for a, b in zip(obs, obs[1:]):
            if b[1] - a[1] > limit:
                x0, x1 = x_of(a[1], span), x_of(b[1], span)
                body.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" '
                            'class="stale"><title>no status read of this '
                            'partition from %s to %s</title></rect>' % (
                                x0, lead_top, x1 - x0, lead_bot - lead_top,
                                secs(a[1]), secs(b[1])))
    for t in run.metadata_failed:
        x = x_of(t, span)
        body.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" '
                    'class="failtick"><title>status read failed at %s</title>'
                    '</line>' % (x, lead_bot, x, lead_bot + 5, secs(t)))
    # ISR size as a step line.
    rmax = max([len(p.get("replicas") or []) for _, _, p in obs] +
               [len(p.get("isr") or []) for _, _, p in obs] + [1])
    for v in range(rmax + 1):
        y = isr_bot - v / rmax * (isr_bot - isr_top)
        body.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="grid"/>'
                    '<text x="%d" y="%.1f" class="tick" text-anchor="end">%d'
                    '</text>' % (LEFT, y, LEFT + PLOT_W, y, LEFT - 5, y + 4,
                                 v))
    pts, last = [], None
    for _, t1, p in obs:
        isr = p.get("isr")
        if not isinstance(isr, list):
            continue
        y = isr_bot - len(isr) / rmax * (isr_bot - isr_top)
        x = x_of(t1, span)
        if last is not None and last != y:
            pts.append((x, last))
        if last != y:
            pts.append((x, y))
        last = y
    if pts and obs:
        pts.append((x_of(obs[-1][1], span), last))
    body.append('<path d="%s" fill="none" stroke="#333" stroke-width="2">'
                '<title>ISR size</title></path>' % path_of(pts))
    # High watermark and acknowledged end.
    hws = run.hw_obs.get(key, [])
    acked = run.acked_end(key)
    scale, axis = y_axis([o[2] for o in hws] + acked, hw_top, hw_bot)
    body.extend(axis)
    width = run.bin_width()
    apts = [None if v is None else (bin_x(i, width, span), scale(v))
            for i, v in enumerate(acked)]
    body.append('<path d="%s" fill="none" stroke="#9e9e9e" stroke-width="1.3" '
                'stroke-dasharray="4 3"><title>acknowledged end (highest '
                'acknowledged offset + 1)</title></path>' % path_of(apts))
    hpts = decimate([(x_of(t1, span), scale(h)) for _, t1, h in hws])
    body.append('<path d="%s" fill="none" stroke="%s" stroke-width="2">'
                '<title>high watermark</title></path>' % (
                    path_of(hpts), "#1565c0"))
    body.extend(time_axis(span, hw_bot, hw_bot))
    return svg(hw_bot + 34, body, "partition %s timeline" % key)


# ---------------------------------------------------------------------------
# HTML sections


CSS = """
body{font:14px/1.45 -apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,
sans-serif;color:#222;margin:0 auto;max-width:1240px;padding:16px 24px 48px}
h1{font-size:24px;margin:8px 0 4px}h2{font-size:19px;margin:32px 0 6px;
border-bottom:1px solid #ddd;padding-bottom:3px}h3{font-size:15px;
margin:18px 0 4px}
p.note{color:#555;margin:4px 0 10px;max-width:70em}
.verdict{display:inline-block;font-size:34px;font-weight:700;color:#fff;
padding:6px 22px;border-radius:8px;letter-spacing:.04em;margin:8px 0}
.meta span{margin-right:18px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;
vertical-align:top}th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.none{color:#999;text-align:center}
tr.fault td.faultcell{background:#fafafa}
.counts td.zero{color:#aaa}.counts td.hit{color:#c62828;font-weight:700}
code,pre{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
pre{background:#f6f6f6;padding:6px 8px;overflow-x:auto;white-space:pre-wrap}
.anomaly{border-left:4px solid #c62828;padding:2px 10px;margin:10px 0}
.legend span{margin-right:16px;font-size:12px}.legend i{display:inline-block;
width:18px;height:10px;margin-right:5px;vertical-align:middle}
svg{display:block;margin:2px 0 10px}
svg text{font-family:inherit}
.axis{stroke:#444;stroke-width:1}.grid{stroke:#eee;stroke-width:1}
.tick{font-size:11px;fill:#555}.lane{font-size:12px;fill:#333;
font-weight:600}.bandlabel{font-size:10px;font-weight:600}
.segtext{font-size:11px;fill:#fff;font-weight:600}
.mark{stroke:#555;stroke-dasharray:3 3;stroke-width:1}
.marklabel{font-size:10px;fill:#555}.stale{fill:#fff;opacity:.6}
.failtick{stroke:#000;stroke-width:1.5}
.ok{color:#1b7f3b;font-weight:600}.bad{color:#c62828;font-weight:600}
"""


def op_row(idx, ln):
    """A history line as a table row: index, time, process, type, f,
    value (and error)."""
    return ('<tr><td class="num">#%s</td><td class="num">%s</td><td>%s</td>'
            '<td>%s</td><td>%s</td><td><code>%s</code>%s</td></tr>' % (
                esc(idx), secs(ln["time"]), esc(ln.get("process")),
                esc(ln.get("type")), esc(ln.get("f")),
                esc(short(ln.get("value"))),
                (" <i>error: %s</i>" % esc(short(ln["error"], 120))
                 if ln.get("error") else "")))


def example_ops(run, refs):
    """The history lines of an anomaly example: each op's invocation and
    completion, after the last fault that began before the first of
    them."""
    rows, first = [], None
    for idx in refs:
        ln = run.by_index.get(idx)
        if ln is None:
            rows.append('<tr><td class="num">#%s</td><td colspan="5">not in '
                        'the history</td></tr>' % esc(idx))
            continue
        inv = run.invoke_of.get(idx)
        if inv is not None and inv is not ln:
            rows.append(op_row(inv.get("index", "?"), inv))
            first = inv["time"] if first is None else min(first, inv["time"])
        rows.append(op_row(idx, ln))
        first = ln["time"] if first is None else min(first, ln["time"])
    if not rows:
        return ""
    before = [fa for fa in run.faults if first is not None and
              fa.start <= first]
    note = ""
    if before:
        fa = before[-1]
        note = ('<p class="note">The last fault before: %s at %s (%s at '
                '%s).</p>' % (esc(fa.label()), secs(fa.start),
                              esc(fa.undo_f or "never undone"),
                              secs(fa.end)))
    return ('<table><tr><th>line</th><th>time</th><th>process</th>'
            '<th>type</th><th>f</th><th>value</th></tr>%s</table>%s' % (
                "".join(rows), note))


def section_header(run):
    r, h = run.result, run.header
    verdict = r.get("verdict", "unknown")
    colour = VERDICT_COLOURS.get(verdict, "#555")
    injected = h.get("injected") or {}
    if not injected:
        for fa in run.faults:
            injected[fa.kind] = injected.get(fa.kind, 0) + 1
    faults = ", ".join("%s \u00d7%d" % (k, n) for k, n in
                       sorted(injected.items())) or "none"
    out = ['<h1>Fault-injection run, seed %s</h1>' % esc(h.get("seed", "?"))]
    meta = [("seed", h.get("seed", "?")), ("faults injected", faults),
            ("fault time", "%s s" % h.get("time_s", "?")),
            ("topic", "%s (%s partitions)" % (h.get("topic", "?"),
                                              h.get("partitions", "?"))),
            ("mode", "UNSAFE negative control (acks=1, unclean election)"
             if h.get("unsafe") else "safe (acks=all, idempotent)")]
    out.append('<div class="meta">%s</div>' % "".join(
        "<span><b>%s:</b> %s</span>" % (esc(k), esc(v)) for k, v in meta))
    out.append('<div class="verdict" style="background:%s">%s</div>' % (
        colour, esc(verdict.upper())))
    reasons = r.get("reasons") or []
    out.append('<p>%s</p>' % esc("; ".join(reasons) if reasons else
                                 "no anomaly, and the final drain read "
                                 "every partition to its end"
                                 if verdict == "valid" else ""))
    s = r.get("stats") or {}
    d = r.get("drain") or {}
    drain = ("none" if not d.get("present") else "incomplete (%s)" %
             ",".join(d.get("incomplete")) if d.get("incomplete")
             else "complete")
    out.append('<table class="counts"><tr>%s</tr><tr>%s</tr></table>' % (
        "".join("<th>%s</th>" % x for x in (
            "history lines", "sends ok", "sends indefinite", "sends failed",
            "recovered", "unseen", "final drain", "malformed lines")),
        "".join('<td class="num">%s</td>' % esc(x) for x in (
            s.get("lines", len(run.lines)), s.get("sends_ok", "?"),
            s.get("sends_info", "?"), s.get("sends_fail", "?"),
            s.get("recovered", "?"), s.get("unseen", "?"), drain,
            len(r.get("malformed") or [])))))
    counts = r.get("counts") or {}
    cells = []
    for name in checker.ANOMALY_NAMES:
        n = counts.get(name, 0)
        cells.append('<td class="%s">%s <b>%s</b></td>' % (
            "hit" if n else "zero", esc(name), esc(n)))
    rows = ["<tr>%s</tr>" % "".join(cells[i:i + 5])
            for i in range(0, len(cells), 5)]
    out.append('<h3>Anomalies found by the checker</h3>'
               '<table class="counts">%s</table>' % "".join(rows))
    anomalies = r.get("anomalies") or {}
    for name in checker.ANOMALY_NAMES:
        n = counts.get(name, 0)
        if not n:
            continue
        out.append('<div class="anomaly"><b>%s \u00d7%s</b>: %s.' % (
            esc(name), esc(n), esc(EXPLAIN.get(name, "see checker.py"))))
        for ex in (anomalies.get(name) or [])[:EXAMPLES]:
            fields = {k: v for k, v in ex.items() if k != "ops"}
            out.append('<pre>%s</pre>' % esc(short(fields, 400)))
            out.append(example_ops(run, ex.get("ops") or []))
        more = len(anomalies.get(name) or []) - EXAMPLES
        if more > 0:
            out.append('<p class="note">\u2026 and %d more examples in '
                       'result.json</p>' % more)
        out.append('</div>')
    bad = r.get("malformed") or []
    if bad:
        out.append('<h3>Malformed history</h3><pre>%s</pre>' % esc("\n".join(
            "%s: %s" % (e.get("index", e.get("line")), e.get("error"))
            for e in bad[:20])))
    return "\n".join(out)


def section_traffic(run, span):
    s = run.send_series()
    unit = "per second" if s["width"] == 1 else \
        "per second, averaged over %d s bins" % s["width"]
    series = [("all partitions", "#222", s["total"], None)]
    for i, k in enumerate(run.partitions):
        if k in s["per"]:
            series.append(("partition %s" % k, partition_colour(i),
                           s["per"][k], "5 3"))
    if any(s["bad"]):
        series.append(("failed or indefinite sends", "#c62828", s["bad"],
                       "2 2"))
    out = ['<h2>Throughput and latency</h2>',
           '<p class="note">Acknowledged sends (%s, by the time the '
           'acknowledgement arrived). Each shaded band is one fault, from the '
           'nemesis\' kill or pause until its start, resume or heal completed '
           '(red: kill, orange: pause); hover a band for its times. While a '
           'partition\'s leader is down its line drops to zero until a new '
           'leader takes over; since each producer sends one record at a '
           'time, a producer stuck on that partition stops writing to the '
           'others too.</p>' % unit,
           legend([(n, c) for n, c, _, _ in series]),
           series_chart(run, span, series, "acknowledged sends per second",
                        ylabel="acks/s"),
           '<p class="note">Send latency, invocation to acknowledgement, '
           'of the sends acknowledged in each bin (log scale, ms). A send '
           'caught by a fault waits for the new leader, so p99 jumps.</p>',
           legend([("p50", "#1565c0"), ("p99", "#c62828")]),
           series_chart(run, span, [("p50 latency", "#1565c0", s["p50"],
                                     None),
                                    ("p99 latency", "#c62828", s["p99"],
                                     None)],
                        "send latency p50 and p99", log=True, unit=" ms",
                        ylabel="latency")]
    return "\n".join(out)


def section_partitions(run, span):
    brokers = set()
    for obs in run.metadata.values():
        for _, _, p in obs:
            for b in (p.get("replicas") or []) + [p.get("leader")]:
                if is_num(b) and b >= 0:
                    brokers.add(b)
    out = ['<h2>Partitions: leader, ISR and high watermark</h2>',
           '<p class="note">From the observer\'s status reads (about one a '
           'second) and watermark reads. Top lane: the leader, a colour per '
           'broker, with its leader epoch (e1 = epoch 1); a new epoch means '
           'a new leader was elected. Black ticks under it: status reads '
           'that failed. Middle: how many replicas are in sync (the ISR); '
           'with acks=all a write is acknowledged only once every ISR member '
           'has it. Bottom: '
           'the high watermark (HW, the end of the committed log, blue) and '
           'the end of the acknowledged writes (dashed grey).</p>',
           legend([("broker %s" % b, broker_colour(b))
                   for b in sorted(brokers)] + [("no leader", NO_LEADER)])]
    for k in run.partitions:
        obs = run.metadata.get(k, [])
        epochs = sorted({p.get("leader_epoch") for _, _, p in obs
                         if is_num(p.get("leader_epoch"))})
        isrs = [len(p.get("isr")) for _, _, p in obs
                if isinstance(p.get("isr"), list)]
        leaders = []
        for _, _, p in obs:
            if not leaders or leaders[-1] != p.get("leader"):
                leaders.append(p.get("leader"))
        out.append('<section id="partition-%s"><h3>Partition %s</h3>' % (
            esc(k), esc(k)))
        out.append('<p class="note">%d status reads; leaders in turn: %s; '
                   'leader epochs %s; smallest ISR seen %s.</p>' % (
                       len(obs), esc(" \u2192 ".join(
                           "none" if not is_num(x) or x < 0 else str(x)
                           for x in leaders) or "none seen"),
                       esc(", ".join(map(str, epochs)) or "none"),
                       esc(min(isrs) if isrs else "?")))
        out.append(partition_chart(run, span, k))
        out.append('</section>')
    return "\n".join(out)


def when(entry, start, extra=True):
    """A table cell for (time, detail) or a dash."""
    if entry is None:
        return '<td class="none">\u2014</td>'
    t, detail = entry
    return '<td class="num">%s <small>(+%.3f)</small>%s</td>' % (
        secs(t), (t - start) / NS,
        "<br><small>%s</small>" % esc(detail) if extra and detail else "")


def section_faults(run):
    rows = fault_rows(run)
    out = ['<h2>What happened at each fault</h2>',
           '<p class="note">One row per fault, and under it the partitions '
           'it hit: those whose leader was a target (all of them for a '
           'controller fault; those with a target in their ISR when no '
           'leader was hit). Times are seconds since the run started '
           '(+seconds after the fault began). ISR shrank: the first status '
           'read showing a smaller ISR than before the fault. New leader: the '
           'first read with a higher leader epoch. HW moved: the first '
           'watermark or status read with a HW above the HW at the '
           'fault\'s start (the last HW read before it, or one past the '
           'highest offset acknowledged before it if that is more). Write '
           'gap: from the fault\'s start to the first acknowledged send of '
           'the partition after the fault took effect. '
           'Only reads invoked after the fault began and before the next '
           'fault count; \u2014 means it was not seen.</p>']
    if not rows:
        out.append('<p>No faults were injected.</p>')
        return "\n".join(out)
    out.append('<table class="faults"><tr><th>fault</th><th>started</th>'
               '<th>undone</th><th>partition</th><th>ISR shrank</th>'
               '<th>new leader</th><th>HW moved</th><th>write gap</th></tr>')
    for fa, parts in rows:
        n = max(1, len(parts))
        undo = ('%s <small>(%s, +%.3f)</small>' % (
            secs(fa.end), esc(fa.undo_f or "never undone"),
            (fa.end - fa.start) / NS))
        head = ('<td class="faultcell" rowspan="%d"><b>F%d</b> %s<br><small>'
                '%s %s</small></td><td class="num faultcell" rowspan="%d">%s'
                '</td><td class="num faultcell" rowspan="%d">%s</td>' % (
                    n, fa.number, esc(fa.kind), esc(fa.verb),
                    esc(", ".join(map(str, fa.targets))), n, secs(fa.start),
                    n, undo))
        if not parts:
            out.append('<tr class="fault" id="fault-%d">%s<td colspan="5" '
                       'class="none">no partition known</td></tr>' % (
                           fa.number, head))
            continue
        for i, row in enumerate(parts):
            gap = row.get("gap")
            gap_cell = ('<td class="none">\u2014</td>' if gap is None else
                        '<td class="num">%.3f s<br><small>next ack %s</small>'
                        '</td>' % (gap[1] / NS, secs(gap[0])))
            out.append('<tr class="fault"%s>%s<td>%s<br><small>%s</small>'
                       '</td>%s%s%s%s</tr>' % (
                           ' id="fault-%d"' % fa.number if i == 0 else "",
                           head if i == 0 else "", esc(row["key"]),
                           esc(row["role"]), when(row.get("isr"), fa.start),
                           when(row.get("leader"), fa.start),
                           when(row.get("hw"), fa.start), gap_cell))
    out.append('</table>')
    return "\n".join(out)


def replica_summary(d):
    """(hw, {replica: (records, records below hw)}, identical below hw)."""
    hw = d.get("hw")
    reps = d.get("replicas") if isinstance(d.get("replicas"), dict) else {}
    counts, below = {}, []
    for b in sorted(reps, key=key_order):
        recs = reps[b] if isinstance(reps[b], list) else []
        under = [r for r in recs if isinstance(r, list) and len(r) == 2
                 and is_num(hw) and is_num(r[0]) and r[0] < hw]
        counts[b] = (len(recs), len(under))
        below.append(under)
    same = all(x == below[0] for x in below) if below else None
    return hw, counts, same


def section_verification(run):
    r = run.result
    drain = (r.get("drain") or {}).get("partitions") or {}
    counts = r.get("counts") or {}
    out = ['<h2>The checker\'s verification</h2>',
           '<p class="note">After the run a fresh consumer read every '
           'partition from offset 0 (the final drain). Every acknowledged '
           'send must be in it, at the offset its acknowledgement named. '
           'With the cluster down, each replica\'s log was then read from '
           'its segment files: below the final HW all replicas must hold '
           'the same records.</p>',
           '<table><tr><th>partition</th><th>acknowledged sends</th>'
           '<th>verified at their offset</th><th>elsewhere</th>'
           '<th>not in final log</th><th>final HW</th><th>drain reached</th>'
           '<th>replica logs (records below HW)</th></tr>']
    keys = sorted(set(run.partitions) | set(drain) |
                  set(run.dumps or {}), key=key_order)
    for k in keys:
        final = run.final.get(k, {})
        values = set(final.values())
        oks = run.ok_sends(k)
        at = sum(1 for s in oks if is_num(s[5]) and final.get(s[5]) == s[4])
        elsewhere = sum(1 for s in oks if not (
            is_num(s[5]) and final.get(s[5]) == s[4]) and s[4] in values)
        missing = len(oks) - at - elsewhere
        d = drain.get(k) or {}
        hw = d.get("final_hw")
        if hw is None and run.hw_obs.get(k):
            hw = max(o[2] for o in run.hw_obs[k])
        reach = ("%s of %s %s" % (d.get("reach"), d.get("target"),
                                  "complete" if d.get("complete")
                                  else "INCOMPLETE") if d else
                 "%d records" % len(final))
        dump = (run.dumps or {}).get(k)
        if isinstance(dump, dict):
            dhw, reps, same = replica_summary(dump)
            rep = "; ".join("broker %s: %d (%d)" % (b, n, u)
                            for b, (n, u) in reps.items())
            rep += ' \u2014 <span class="%s">%s</span>' % (
                "ok" if same else "bad",
                "identical below HW %s" % dhw if same else
                "DIFFER below HW %s" % dhw) if reps else " none"
            want = dhw - (d.get("log_start") or 0) if is_num(dhw) else None
            short_of = sorted(b for b, (_, u) in reps.items()
                              if want is not None and u < want)
            if short_of:
                rep += ('; <span class="bad">fewer records than the %d '
                        'offsets below HW on broker %s</span>' % (
                            want, ", ".join(map(esc, short_of))))
            skipped = dump.get("skipped_tail_bytes") or {}
            if skipped:
                rep += "; torn tails skipped: %s" % esc(json.dumps(skipped))
        else:
            rep = "no dump"
        out.append('<tr><td>%s</td><td class="num">%d</td><td class="num '
                   '%s">%d</td><td class="num">%d</td><td class="num %s">%d'
                   '</td><td class="num">%s</td><td>%s</td><td>%s</td></tr>'
                   % (esc(k), len(oks), "ok" if at == len(oks) else "bad", at,
                      elsewhere, "bad" if missing else "", missing,
                      esc(hw if hw is not None else "?"), esc(reach), rep))
    out.append('</table>')
    out.append('<p>Replica checks: replica_mismatch=%s, '
               'replica_missing_ack=%s; lost=%s, unseen=%s.</p>' % (
                   esc(counts.get("replica_mismatch", "?")),
                   esc(counts.get("replica_missing_ack", "?")),
                   esc(counts.get("lost", "?")),
                   esc((r.get("stats") or {}).get("unseen", "?"))))
    try:
        line = checker.summary_line(r)
    except (KeyError, TypeError):
        line = "CHECK verdict=%s" % r.get("verdict", "unknown")
    verdict = r.get("verdict", "unknown")
    out.append('<p>Verdict: <span class="verdict" style="font-size:20px;'
               'background:%s">%s</span></p><pre>%s</pre>' % (
                   VERDICT_COLOURS.get(verdict, "#555"),
                   esc(verdict.upper()), esc(line)))
    return "\n".join(out)


def render(run):
    span = max(1.0, run.t_end / NS)
    verdict = run.result.get("verdict", "unknown")
    parts = [
        '<!DOCTYPE html>',
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<title>Run seed %s: %s</title>' % (esc(run.header.get("seed", "?")),
                                            esc(verdict)),
        '<style>%s</style></head><body>' % CSS,
        section_header(run),
        section_traffic(run, span),
        section_partitions(run, span),
        section_faults(run),
        section_verification(run),
        '</body></html>',
    ]
    return "\n".join(parts) + "\n"


def report(run_dir):
    """Write run_dir/report.html; return its path."""
    history = os.path.join(run_dir, "history.jsonl")
    header, lines = load_history(history)
    result = load_json(os.path.join(run_dir, "result.json"))
    dumps_path = os.path.join(run_dir, "dumps.json")
    dumps = load_json(dumps_path) if os.path.exists(dumps_path) else None
    if not isinstance(result, dict):
        result, _ = checker.check_file(
            history, dumps_path if dumps is not None else None)
    run = Run(header, lines, result, dumps)
    out = os.path.join(run_dir, "report.html")
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(render(run))
    os.replace(tmp, out)
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__.split("\n\n")[1].strip() if argv else __doc__)
        return 2
    run_dir = argv[0]
    if not os.path.exists(os.path.join(run_dir, "history.jsonl")):
        print("report: no history.jsonl in %s" % run_dir, file=sys.stderr)
        return 2
    print(report(run_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
