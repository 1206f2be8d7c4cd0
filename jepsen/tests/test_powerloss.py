"""Tests of the power-loss model: jepsen/durable/durable.c preloaded into
real processes (Python's os calls go through the same libc functions as
the broker's), then jepsen/powerloss.py applied to what they left.

The library is $CAIRN_DURABLE_LIB, else build/debug/libcairn-durable.so
(`make jepsen-smoke` builds it first).

Run: /usr/bin/python3 -m unittest discover -s jepsen/tests
"""

import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))
import powerloss  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
LIB = os.path.abspath(os.environ.get(
    "CAIRN_DURABLE_LIB",
    os.path.join(ROOT, "build", "debug", "libcairn-durable.so")))

PRELUDE = textwrap.dedent("""
    import os
    def write(path, data, sync=False, flags=os.O_CREAT | os.O_WRONLY):
        fd = os.open(path, flags | os.O_APPEND, 0o644)
        os.write(fd, data)
        if sync:
            os.fdatasync(fd)
        os.close(fd)
    def sync(path):
        fd = os.open(path, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
""")


class PowerLoss(unittest.TestCase):

    def setUp(self):
        self.assertTrue(os.path.exists(LIB),
                        "%s is missing: run make jepsen-smoke" % LIB)
        self.tmp = tempfile.mkdtemp(prefix="cairn-powerloss-")
        self.root = os.path.join(self.tmp, "root")
        os.mkdir(self.root)
        self.journal = os.path.join(self.tmp, "journal")
        self.slow = os.path.join(self.tmp, "slow")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_preloaded(self, body):
        env = dict(os.environ, LD_PRELOAD=LIB,
                   CAIRN_DURABLE_JOURNAL=self.journal,
                   CAIRN_DURABLE_ROOT=self.root,
                   CAIRN_DURABLE_SLOW=self.slow)
        subprocess.run([sys.executable, "-c",
                        PRELUDE + textwrap.dedent(body)],
                       cwd=self.tmp, env=env, check=True, timeout=60)

    def path(self, name):
        return os.path.join(self.root, name)

    def size(self, name):
        return os.path.getsize(self.path(name))

    def test_a_file_keeps_what_its_last_sync_covered(self):
        self.run_preloaded("""
            write("root/a.log", b"x" * 100, sync=True)
            write("root/a.log", b"y" * 50)
            sync("root")
        """)
        self.assertEqual(self.size("a.log"), 150)
        stats = powerloss.apply(self.journal)
        self.assertEqual(self.size("a.log"), 100)
        self.assertEqual(stats["bytes_dropped"], 50)

    def test_a_new_name_needs_its_directory_synced(self):
        self.run_preloaded("""
            write("root/unsynced-dir.log", b"x" * 10, sync=True)
        """)
        powerloss.apply(self.journal)
        self.assertFalse(os.path.exists(self.path("unsynced-dir.log")))
        self.run_preloaded("""
            write("root/synced-dir.log", b"x" * 10, sync=True)
            sync("root")
        """)
        powerloss.apply(self.journal)
        self.assertEqual(self.size("synced-dir.log"), 10)

    def test_names_are_durable_at_once_when_not_strict(self):
        self.run_preloaded("""
            write("root/a.log", b"x" * 10, sync=True)
            write("root/a.log", b"y" * 10)
        """)
        powerloss.apply(self.journal, strict=False)
        self.assertEqual(self.size("a.log"), 10)

    def test_a_directory_not_synced_in_its_parent_vanishes_whole(self):
        self.run_preloaded("""
            os.mkdir("root/topic-0")
            write("root/topic-0/0.log", b"x" * 10, sync=True)
            sync("root/topic-0")
            os.mkdir("root/topic-1")
            write("root/topic-1/0.log", b"x" * 10, sync=True)
            sync("root/topic-1")
            sync("root")
            os.mkdir("root/topic-2")
            write("root/topic-2/0.log", b"x" * 10, sync=True)
            sync("root/topic-2")
        """)
        powerloss.apply(self.journal)
        self.assertEqual(self.size("topic-0/0.log"), 10)
        self.assertEqual(self.size("topic-1/0.log"), 10)
        self.assertFalse(os.path.exists(self.path("topic-2")))

    def test_write_sync_rename_sync_directory(self):
        self.run_preloaded("""
            write("root/cp.tmp", b"first", sync=True)
            os.rename("root/cp.tmp", "root/cp")
            sync("root")
            write("root/cp.tmp", b"second!", sync=True)
            os.rename("root/cp.tmp", "root/cp")
            write("root/new.tmp", b"never", sync=True)
            os.rename("root/new.tmp", "root/new")
        """)
        powerloss.apply(self.journal)
        with open(self.path("cp"), "rb") as f:
            # Replaced names are kept with the new contents (see the model).
            self.assertEqual(f.read(), b"second!")
        self.assertFalse(os.path.exists(self.path("new")))
        self.assertFalse(os.path.exists(self.path("new.tmp")))

    def test_unsynced_bytes_survive_a_restart_but_not_a_power_loss(self):
        self.run_preloaded("""
            write("root/a.log", b"x" * 100, sync=True)
            sync("root")
            write("root/a.log", b"y" * 100)
        """)
        # A second life of the process opens the file and syncs nothing.
        self.run_preloaded("""
            write("root/a.log", b"z" * 1)
        """)
        self.assertEqual(self.size("a.log"), 201)
        powerloss.apply(self.journal)
        self.assertEqual(self.size("a.log"), 100)

    def test_truncation_is_durable_and_a_later_sync_counts(self):
        self.run_preloaded("""
            write("root/a.log", b"x" * 100, sync=True)
            sync("root")
            os.truncate("root/a.log", 40)
            write("root/a.log", b"y" * 30, sync=True)
            write("root/a.log", b"z" * 30)
        """)
        powerloss.apply(self.journal)
        self.assertEqual(self.size("a.log"), 70)

    def test_torn_keeps_part_of_the_unsynced_tail(self):
        self.run_preloaded("""
            write("root/a.log", b"x" * 100, sync=True)
            sync("root")
            write("root/a.log", b"y" * 1000)
        """)
        powerloss.apply(self.journal, rng=random.Random(7), torn=True)
        self.assertGreaterEqual(self.size("a.log"), 100)
        self.assertLessEqual(self.size("a.log"), 1100)

    def test_apply_empties_the_journal(self):
        self.run_preloaded("""
            write("root/a.log", b"x" * 100, sync=True)
            sync("root")
        """)
        self.assertGreater(os.path.getsize(self.journal), 0)
        powerloss.apply(self.journal)
        self.assertEqual(os.path.getsize(self.journal), 0)
        with open(self.path("a.log"), "ab") as f:
            f.write(b"later, outside any recorded process")
        self.assertEqual(powerloss.apply(self.journal)["files_cut"], 0)

    def test_files_outside_the_root_are_not_recorded(self):
        self.run_preloaded("""
            write("outside.log", b"x" * 10, sync=True)
            write("root/a.log", b"x" * 10, sync=True)
        """)
        with open(self.journal) as f:
            text = f.read()
        self.assertIn(self.path("a.log"), text)
        self.assertNotIn("outside.log", text)

    def test_unlinked_files_stay_gone(self):
        self.run_preloaded("""
            os.mkdir("root/d")
            write("root/d/a.log", b"x" * 10, sync=True)
            sync("root/d")
            sync("root")
            os.unlink("root/d/a.log")
            os.rmdir("root/d")
        """)
        powerloss.apply(self.journal)
        self.assertFalse(os.path.exists(self.path("d")))

    def test_a_slow_disk_delays_each_sync(self):
        with open(self.slow, "w") as f:
            f.write("300")
        start = time.monotonic()
        self.run_preloaded("""
            write("root/a.log", b"x", sync=True)
        """)
        self.assertGreaterEqual(time.monotonic() - start, 0.3)
        os.unlink(self.slow)
        self.run_preloaded("""
            write("root/b.log", b"x", sync=True)
        """)
        with open(self.journal) as f:
            self.assertEqual(f.read().count("\nS\t"), 2)


if __name__ == "__main__":
    unittest.main()
