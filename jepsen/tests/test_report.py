"""Tests of jepsen/report.py: small synthetic run directories with a
planted leader kill (ISR 3 -> 2, a new leader epoch, the high watermark
moving again) whose times must appear in the report, a lost write whose
explanation and example must appear, and the report of a real run
(/tmp/sample-run, skipped when absent) parsed as HTML.

Run: /usr/bin/python3 -m unittest discover -s jepsen/tests
"""

import html.parser
import io
import json
import os
import re
import shutil
import sys
import tempfile
import time
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir))
import checker  # noqa: E402
import report  # noqa: E402

MS = 10 ** 6
SAMPLE = "/tmp/sample-run"
OBSERVER, CONSUMER, DRAINER = 6, 4, 99
REPLICAS = [1, 2, 3]

# The planted times (ms since the run started).
KILL, KILL_OK = 5000, 5010
ISR_SHRINK = 6013     # status read: ISR [2, 3], no leader
NEW_LEADER = 7021     # status read: leader 2, epoch 1
HW_MOVED = 7512       # watermark read: HW one above the HW at the kill
STALLED_ACK = 7600    # the send caught by the kill is acknowledged
START, START_OK = 9000, 9100
ISR_BACK = 10013
HEAL, HEAL_OK = 15500, 15600


class RunBuilder:
    """A history in the harness's format, written line by line with
    explicit times; indexes follow the order of the lines after sorting
    by time."""

    def __init__(self):
        self.lines = []
        self.acked = {"0": [], "1": []}     # key -> [values], offset order

    def line(self, t_ms, process, typ, f, value=None, **extra):
        ln = {"time": int(round(t_ms * MS)), "process": process,
              "type": typ, "f": f}
        if value is not None:
            ln["value"] = value
        ln.update(extra)
        self.lines.append(ln)

    def send(self, t_ms, t_ok_ms, process, key):
        value = "%d:%d" % (process, sum(len(v) for v in self.acked.values()))
        offset = len(self.acked[key])
        self.acked[key].append(value)
        self.line(t_ms, process, "invoke", "send",
                  {"key": key, "value": value})
        self.line(t_ok_ms, process, "ok", "send",
                  {"key": key, "value": value, "offset": offset})

    def hw_at(self, key, t_ms):
        """One past the highest offset acknowledged by t_ms."""
        n = 0
        for ln in self.lines:
            if ln["f"] == "send" and ln["type"] == "ok" and \
                    ln["value"]["key"] == key and ln["time"] <= t_ms * MS:
                n = max(n, ln["value"]["offset"] + 1)
        return n

    def metadata(self, t_ms, parts):
        """parts: {key: (leader, epoch, isr, hw)}; completes 10 ms later."""
        value = {"partitions": {
            k: {"leader": ld, "leader_epoch": ep, "partition_epoch": ep,
                "replicas": REPLICAS, "isr": isr, "hw": hw,
                "end_offsets": [{"id": b, "end_offset": hw} for b in isr]}
            for k, (ld, ep, isr, hw) in parts.items()}, "controller": 102}
        self.line(t_ms - 10, OBSERVER, "invoke", "metadata")
        self.line(t_ms, OBSERVER, "ok", "metadata", value)

    def watermarks(self, t_ms, marks, process=OBSERVER, final=False):
        extra = {"final": True} if final else {}
        self.line(t_ms - 2, process, "invoke", "watermarks", **extra)
        self.line(t_ms, process, "ok", "watermarks",
                  {k: [0, hi] for k, hi in marks.items()}, **extra)

    def nemesis(self, t_ms, typ, f, value):
        self.line(t_ms, "nemesis", typ, f, value)

    def write(self, run_dir, header, drop=None, result=True):
        """history.jsonl, dumps.json and (from the checker) result.json.

        drop: (key, offset) of an acknowledged record left out of the
        final drain and the replica logs.
        """
        lines = sorted(self.lines, key=lambda ln: ln["time"])
        for i, ln in enumerate(lines):
            ln["index"] = i
        history = os.path.join(run_dir, "history.jsonl")
        with open(history, "w") as fh:
            fh.write(json.dumps(dict(header, header=True)) + "\n")
            for ln in lines:
                fh.write(json.dumps(ln) + "\n")
        dumps = {}
        for k, vals in self.acked.items():
            recs = [[o, v] for o, v in enumerate(vals) if drop != (k, o)]
            dumps[k] = {"hw": len(vals), "skipped_tail_bytes": {},
                        "replicas": {str(b): recs for b in REPLICAS}}
        with open(os.path.join(run_dir, "dumps.json"), "w") as fh:
            json.dump(dumps, fh)
        if result:
            res, _ = checker.check_file(history,
                                        os.path.join(run_dir, "dumps.json"))
            with open(os.path.join(run_dir, "result.json"), "w") as fh:
                json.dump(res, fh)
            return res
        return None


HEADER = {"seed": 42, "time_s": 10, "faults": ["kill-leader"],
          "unsafe": False, "topic": "jepsen", "partitions": 2,
          "injected": {"kill-leader": 1}}


def leader_kill_run(run_dir, drop=None, result=True):
    """Two partitions; broker 1 leads partition 0 and is killed at 5 s.

    Partition 0 then shows, in order: the ISR shrinking to [2, 3] with no
    leader (6.013 s), broker 2 elected with epoch 1 (7.021 s), the HW
    moving one past the HW at the kill (7.512 s), the send that was
    caught by the kill acknowledged (7.6 s), broker 1 restarted (9 s) and
    back in the ISR (10.013 s). Partition 1 (leader 2) never stops.
    """
    b = RunBuilder()
    t = 1000
    while t < 15000:                      # partition 1: every 100 ms
        b.send(t, t + 4, 2, "1")
        t += 100
    t = 1050
    while t < 4950:                       # partition 0 before the kill
        b.send(t, t + 5, 1, "0")
        t += 100
    b.send(4990, STALLED_ACK, 1, "0")     # caught by the kill
    t = 7700
    while t < 15000:                      # partition 0 after
        b.send(t, t + 5, 1, "0")
        t += 100
    b.nemesis(KILL, "invoke", "kill",
              {"fault": "kill-leader", "targets": ["broker-1"]})
    b.nemesis(KILL_OK, "ok", "kill",
              {"fault": "kill-leader", "targets": ["broker-1"]})
    b.nemesis(START, "invoke", "start", {"targets": ["broker-1"]})
    b.nemesis(START_OK, "ok", "start", {"targets": ["broker-1"]})
    b.nemesis(HEAL, "invoke", "heal", {"targets": "all"})
    b.nemesis(HEAL_OK, "ok", "heal", {"targets": "all"})
    hw_kill = b.hw_at("0", KILL)
    full = [1, 2, 3]
    for s in range(1, 16):
        t = NEW_LEADER if s == 7 else s * 1000 + 13
        p1 = (2, 0, [2, 3, 1], b.hw_at("1", t - 10))
        if t < KILL:
            p0 = (1, 0, full, b.hw_at("0", t - 10))
        elif t < ISR_SHRINK:
            p0 = (1, 0, full, hw_kill)
        elif t < NEW_LEADER:
            p0 = (-1, 0, [2, 3], None)
        elif t < ISR_BACK:
            p0 = (2, 1, [2, 3], max(hw_kill, b.hw_at("0", t - 10)))
        else:
            p0 = (2, 1, [2, 3, 1], b.hw_at("0", t - 10))
        b.metadata(t, {"0": p0, "1": p1})
        if s != 7:
            w = t + 3
            b.watermarks(w, {"0": hw_kill if KILL < w < HW_MOVED
                             else b.hw_at("0", w - 2),
                             "1": b.hw_at("1", w - 2)})
    b.watermarks(HW_MOVED, {"0": hw_kill + 1, "1": b.hw_at("1", HW_MOVED)})
    # A consumer reads the start of both partitions.
    b.line(2500, CONSUMER, "invoke", "assign",
           {"keys": ["0", "1"], "offsets": {"0": 0, "1": 0}})
    b.line(2501, CONSUMER, "ok", "assign",
           {"keys": ["0", "1"], "offsets": {"0": 0, "1": 0}})
    b.line(2502, CONSUMER, "invoke", "poll")
    b.line(2503, CONSUMER, "ok", "poll", {"records": {
        k: [[o, v] for o, v in enumerate(b.acked[k][:3])] for k in b.acked}})
    # The final drain.
    t = 16000
    for k in ("0", "1"):
        b.watermarks(t, {k: len(b.acked[k])}, DRAINER, final=True)
        t += 5
    offsets = {"0": 0, "1": 0}
    b.line(t, DRAINER, "invoke", "assign", {"keys": ["0", "1"],
                                            "offsets": offsets}, final=True)
    b.line(t + 1, DRAINER, "ok", "assign", {"keys": ["0", "1"],
                                            "offsets": offsets}, final=True)
    recs = {k: [[o, v] for o, v in enumerate(vals) if drop != (k, o)]
            for k, vals in b.acked.items()}
    b.line(t + 2, DRAINER, "invoke", "poll", final=True)
    b.line(t + 3, DRAINER, "ok", "poll", {"records": recs}, final=True)
    return b, b.write(run_dir, HEADER, drop, result)


class StrictHTML(html.parser.HTMLParser):
    """Collects nesting errors: every element closed, in order."""

    VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base",
            "col", "embed", "source", "track", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.tags = [], [], 0

    def handle_starttag(self, tag, attrs):
        self.tags += 1
        if tag not in self.VOID:
            self.stack.append((tag, self.getpos()))

    def handle_startendtag(self, tag, attrs):
        self.tags += 1

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.errors.append("</%s> at %s closes %s" % (
                tag, self.getpos(), self.stack[-1] if self.stack else None))
            return
        self.stack.pop()

    def check(self, text):
        self.feed(text)
        self.close()
        if self.stack:
            self.errors.append("unclosed: %s" % self.stack[-5:])
        return self.errors


def fault_table(page):
    """The HTML of the fault table."""
    i = page.index('<table class="faults">')
    return page[i:page.index("</table>", i)]


def no_external(test, page):
    """No URL, script or fetched resource anywhere in the page."""
    test.assertIsNone(re.search(r"(?i)\b(https?|ftp|file|data):", page))
    for bad in ("<script", "<link", "<img", "<iframe", "@import", "url(",
                " src=", " href="):
        test.assertNotIn(bad, page.lower())


class ReportTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="report-test-")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def make(self, **kw):
        b, result = leader_kill_run(self.dir, **kw)
        self.acked = b.acked
        path = report.report(self.dir)
        self.assertEqual(path, os.path.join(self.dir, "report.html"))
        with open(path, encoding="utf-8") as fh:
            return fh.read(), result

    def test_synthetic_history_is_valid_to_the_checker(self):
        _, result = leader_kill_run(self.dir)
        self.assertEqual(result["verdict"], "valid", result["reasons"])

    def test_header_and_verdict(self):
        page, _ = self.make()
        self.assertIn('class="verdict"', page)
        self.assertIn(">VALID<", page)
        self.assertIn("seed 42", page)
        self.assertIn("kill-leader \u00d71", page)
        self.assertIn("CHECK verdict=valid", page)

    def test_fault_band_on_every_chart(self):
        page, _ = self.make()
        charts = page.count("<svg ")
        self.assertEqual(charts, 2 + 2)   # throughput, latency, 2 partitions
        self.assertEqual(page.count('<g class="band">'), charts)
        self.assertEqual(page.count(">F1 kill-leader broker-1</text>"),
                         charts)
        self.assertIn("F1 kill-leader broker-1: kill at 5.000 s until start "
                      "9.100 s", page)

    def test_fault_table_has_the_planted_times(self):
        page, _ = self.make()
        table = fault_table(page)
        rows = re.findall(r"<tr class=\"fault\".*?</tr>", table, re.S)
        self.assertEqual(len(rows), 1, "only partition 0 had broker 1 "
                         "as its leader")
        row = rows[0]
        self.assertIn("<b>F1</b> kill-leader", row)
        self.assertIn("5.000 s", row)                    # started
        self.assertIn("9.100 s", row)                    # undone
        self.assertIn("leader broker 1", row)
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        isr, leader, hw, gap = cells[-4:]
        self.assertIn("6.013 s", isr)
        self.assertIn("3\u21922", isr)
        self.assertIn("7.021 s", leader)
        self.assertIn("broker 2, epoch 1", leader)
        self.assertIn("7.512 s", hw)
        self.assertIn("2.600 s", gap)                    # 5.000 -> 7.600
        self.assertIn("next ack 7.600 s", gap)

    def test_fault_never_followed_by_a_change_shows_a_dash(self):
        b = RunBuilder()
        for i in range(30):
            b.send(1000 + i * 100, 1005 + i * 100, 1, "0")
        for s in (1, 2, 3, 4):
            b.metadata(s * 1000 + 13, {"0": (1, 0, [1, 2, 3],
                                             b.hw_at("0", s * 1000))})
        b.nemesis(2500, "invoke", "pause", {"fault": "pause-follower",
                                            "targets": ["broker-3"]})
        b.nemesis(2510, "ok", "pause", {"fault": "pause-follower",
                                        "targets": ["broker-3"]})
        b.nemesis(3500, "invoke", "resume", {"targets": ["broker-3"]})
        b.nemesis(3510, "ok", "resume", {"targets": ["broker-3"]})
        b.write(self.dir, HEADER, result=False)
        with open(report.report(self.dir), encoding="utf-8") as fh:
            page = fh.read()
        table = fault_table(page)
        self.assertIn("follower broker 3", table)
        self.assertIn("F1</b> pause-follower", table)
        self.assertGreaterEqual(table.count('<td class="none">\u2014</td>'),
                                2)   # no ISR shrink, no new leader

    def test_power_loss_partition_and_slow_disk_are_faults_too(self):
        b = RunBuilder()
        for i in range(60):
            b.send(1000 + i * 100, 1005 + i * 100, 1, "0")
        for s in range(1, 7):
            b.metadata(s * 1000 + 13, {"0": (1, 0, [1, 2, 3],
                                             b.hw_at("0", s * 1000))})
        b.nemesis(1500, "invoke", "power-loss",
                  {"fault": "power-loss-leader", "targets": ["broker-1"]})
        b.nemesis(1600, "ok", "power-loss",
                  {"fault": "power-loss-leader", "targets": ["broker-1"]})
        b.nemesis(2000, "invoke", "start", {"targets": ["broker-1"]})
        b.nemesis(2100, "ok", "start", {"targets": ["broker-1"]})
        b.nemesis(2500, "invoke", "partition",
                  {"fault": "partition-leader"})
        b.nemesis(2510, "ok", "partition", {"fault": "partition-leader",
                                            "isolated": 1,
                                            "targets": ["broker-1",
                                                        "controller-101"]})
        b.nemesis(3000, "invoke", "heal", {"targets": "network"})
        b.nemesis(3010, "ok", "heal", {"targets": "network"})
        b.nemesis(4000, "invoke", "slow-disk",
                  {"fault": "slow-disk-follower", "targets": ["broker-3"]})
        b.nemesis(4010, "ok", "slow-disk",
                  {"fault": "slow-disk-follower", "targets": ["broker-3"]})
        b.nemesis(5000, "invoke", "heal", {"targets": ["broker-3"]})
        b.nemesis(5010, "ok", "heal", {"targets": ["broker-3"]})
        b.write(self.dir, HEADER, result=False)
        with open(report.report(self.dir), encoding="utf-8") as fh:
            page = fh.read()
        table = fault_table(page)
        self.assertIn("F1</b> power-loss-leader", table)
        self.assertIn("F2</b> partition-leader", table)
        self.assertIn("F2 partition-leader broker-1,controller-101", page)
        self.assertIn("F3</b> slow-disk-follower", table)
        self.assertIn("F1 power-loss-leader broker-1: power-loss at 1.500 s "
                      "until start 2.100 s", page)

    def test_partition_sections(self):
        page, _ = self.make()
        for k in ("0", "1"):
            self.assertIn('<section id="partition-%s">' % k, page)
            self.assertIn("<h3>Partition %s</h3>" % k, page)
        sec = page[page.index('id="partition-0"'):
                   page.index('id="partition-1"')]
        self.assertIn("leaders in turn: 1 \u2192 none \u2192 2", sec)
        self.assertIn("leader epochs 0, 1", sec)
        self.assertIn("smallest ISR seen 2", sec)
        self.assertIn("broker 2 \u00b7 e1", sec)

    def test_verification_table(self):
        page, _ = self.make()
        i = page.index("The checker's verification")
        sec = page[i:]
        self.assertIn("identical below HW", sec)
        self.assertIn("broker 3:", sec)
        self.assertNotIn("DIFFER", sec)

    def test_no_external_urls_or_scripts(self):
        page, _ = self.make()
        no_external(self, page)

    def test_lost_write_is_explained_with_its_example(self):
        page, result = self.make(drop=("0", 5))
        self.assertEqual(result["verdict"], "invalid")
        self.assertIn(">INVALID<", page)
        self.assertIn("<b>lost \u00d71</b>", page)
        self.assertIn(report.EXPLAIN["lost"], page)
        lost = result["anomalies"]["lost"][0]
        self.assertIn("&quot;value&quot;: &quot;%s&quot;" % lost["value"],
                      page)
        # The op involved: its time, process, type and f.
        self.assertRegex(page, r'<td class="num">#%d</td><td class="num">'
                         r'[0-9.]+ s</td><td>1</td><td>ok</td><td>send</td>'
                         % lost["ops"][0])
        self.assertRegex(page, r'<td class="num">#%d</td><td class="num">'
                         r'[0-9.]+ s</td><td>1</td><td>invoke</td>'
                         r'<td>send</td>' % (lost["ops"][0] - 1))
        self.assertNotIn("The last fault before", page)
        sec = page[page.index("The checker's verification"):]
        self.assertIn("fewer records than the %d offsets below HW on "
                      "broker 1, 2, 3" % len(self.acked["0"]), sec)
        self.assertIn("lost=1", sec)

    def test_anomaly_example_names_the_last_fault_before_it(self):
        page, result = self.make(drop=("0", 45))     # sent after the kill
        self.assertEqual(result["counts"]["lost"], 1)
        self.assertIn("The last fault before: F1 kill-leader broker-1 at "
                      "5.000 s (start at 9.100 s)", page)

    def test_replicas_that_differ(self):
        same = {"hw": 2, "replicas": {"1": [[0, "a"], [1, "b"]],
                                      "2": [[0, "a"], [1, "b"], [2, "c"]]}}
        self.assertTrue(report.replica_summary(same)[2])
        differ = {"hw": 2, "replicas": {"1": [[0, "a"], [1, "b"]],
                                        "2": [[0, "a"], [1, "x"]]}}
        hw, counts, identical = report.replica_summary(differ)
        self.assertEqual((hw, counts, identical),
                         (2, {"1": (2, 2), "2": (2, 2)}, False))

    def test_missing_result_runs_the_checker(self):
        leader_kill_run(self.dir, result=False)
        with open(report.report(self.dir), encoding="utf-8") as fh:
            page = fh.read()
        self.assertIn(">VALID<", page)

    def test_command_line(self):
        leader_kill_run(self.dir)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            self.assertEqual(report.main([self.dir + "/nowhere"]), 2)
            self.assertEqual(report.main([self.dir]), 0)
        self.assertIn("no history.jsonl", err.getvalue())
        self.assertEqual(out.getvalue().strip(),
                         os.path.join(self.dir, "report.html"))

    def test_html_nests(self):
        page, _ = self.make(drop=("1", 3))
        self.assertEqual(StrictHTML().check(page), [])

    def test_large_history_is_fast_and_small(self):
        b = RunBuilder()
        # ~40,000 lines: 3 producers, 400 s of status and watermark reads.
        t = 1000.0
        while len(b.lines) < 36000:
            for p in (1, 2, 3):
                b.send(t + p, t + p + 3, p, str(p % 2))
            t += 20
        for s in range(1, int(t / 1000)):
            b.metadata(s * 1000 + 13, {
                "0": (1 + s // 50 % 3, s // 50, [1, 2, 3], s * 25),
                "1": (2, 0, [1, 2, 3], s * 25)})
            b.watermarks(s * 1000 + 16, {"0": s * 25, "1": s * 25})
        for s in range(10, int(t / 1000), 40):
            b.nemesis(s * 1000, "invoke", "kill",
                      {"fault": "kill-broker", "targets": ["broker-3"]})
            b.nemesis(s * 1000 + 10, "ok", "kill",
                      {"fault": "kill-broker", "targets": ["broker-3"]})
            b.nemesis(s * 1000 + 5000, "invoke", "start",
                      {"targets": ["broker-3"]})
            b.nemesis(s * 1000 + 5010, "ok", "start",
                      {"targets": ["broker-3"]})
        b.write(self.dir, HEADER, result=False)
        with open(os.path.join(self.dir, "result.json"), "w") as fh:
            json.dump({"verdict": "valid", "counts": {}, "reasons": []}, fh)
        t0 = time.monotonic()
        path = report.report(self.dir)
        took = time.monotonic() - t0
        self.assertLess(took, 5.0)
        self.assertLess(os.path.getsize(path), 3 * 10 ** 6)


@unittest.skipUnless(os.path.exists(os.path.join(SAMPLE, "history.jsonl")),
                     "no sample run in %s" % SAMPLE)
class SampleRunTest(unittest.TestCase):

    def test_sample_run_report_parses(self):
        with tempfile.TemporaryDirectory(prefix="report-sample-") as d:
            for name in ("history.jsonl", "result.json", "dumps.json"):
                if os.path.exists(os.path.join(SAMPLE, name)):
                    shutil.copy(os.path.join(SAMPLE, name), d)
            path = report.report(d)
            with open(path, encoding="utf-8") as fh:
                page = fh.read()
        parser = StrictHTML()
        self.assertEqual(parser.check(page), [])
        self.assertGreater(parser.tags, 100)
        no_external(self, page)
        with open(os.path.join(SAMPLE, "result.json")) as fh:
            verdict = json.load(fh).get("verdict", "unknown")
        self.assertIn(">%s<" % verdict.upper(), page)
        self.assertIn('<table class="faults">', page)


if __name__ == "__main__":
    unittest.main()
