"""Tests of jepsen/run's own checks: a run whose workers never completed
an operation the checker needs is flagged (a group member that never
committed once made the committed-offset checks vacuous).

Run: /usr/bin/python3 -m unittest discover -s jepsen/tests
"""

import importlib.machinery
import importlib.util
import json
import os
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
_loader = importlib.machinery.SourceFileLoader(
    "jepsen_run", os.path.join(HERE, os.pardir, "run"))
_spec = importlib.util.spec_from_loader("jepsen_run", _loader)
run = importlib.util.module_from_spec(_spec)
_loader.exec_module(run)


def history(fs, typ="ok"):
    fd, path = tempfile.mkstemp(prefix="jepsen-run-test-", suffix=".jsonl")
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps({"header": True}) + "\n")
        for i, name in enumerate(fs):
            f.write(json.dumps({"index": 2 * i, "time": i, "process": 1,
                                "type": "invoke", "f": name}) + "\n")
            f.write(json.dumps({"index": 2 * i + 1, "time": i, "process": 1,
                                "type": typ, "f": name}) + "\n")
    return path


class Coverage(unittest.TestCase):

    def test_every_needed_operation_completed(self):
        path = history(run.NEEDED_OPS)
        self.addCleanup(os.unlink, path)
        self.assertEqual(run.uncovered(path), [])

    def test_a_group_that_never_committed_is_named(self):
        path = history([f for f in run.NEEDED_OPS if f != "commit"])
        self.addCleanup(os.unlink, path)
        self.assertEqual(run.uncovered(path), ["commit"])

    def test_only_ok_completions_count(self):
        path = history(run.NEEDED_OPS, typ="fail")
        self.addCleanup(os.unlink, path)
        self.assertEqual(run.uncovered(path), list(run.NEEDED_OPS))


if __name__ == "__main__":
    unittest.main()
