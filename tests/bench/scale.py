#!/usr/bin/python3
"""What a cluster costs as its partitions grow: for each count, a local
three-node cluster of its own (deploy/cluster.sh on free ports, a
temporary data directory, BUILD_DIR's binaries) gets topics of that
many partitions at replication factor 3, nothing produced, and this
measures

  create_s     the CreateTopics calls alone, until the controller answered;
  ready_s      creating the topics until every broker has opened the logs
               of all of them, they are all led and none is under-
               replicated (the brokers' /metrics gauges);
  expired      brokers fenced meanwhile for a session that lapsed (none
               was stopped: each is a broker too busy to be heard);
  rss_mb, fds  per broker (the largest of the three) once ready;
  kb_per_replica  what each hosted replica adds to a broker's RSS: the
               largest growth from the idle broker (measured before the
               topics exist) to ready, over the replicas it hosts;
  idle_cpu     per broker, percent of a core, over IDLE_S seconds;
  busy_mb_s    a saturating producer (librdkafka's defaults, acks=all,
               100-byte records) on one more partition beside the idle
               ones: the ratio line compares it with the smallest count
               (run with 1 as the smallest for "no others");
  failover_s   a SIGKILLed broker: from the kill until the two others
               lead every partition between them, as each has applied
               it (its /metrics/summary, polled every 20 ms by a thread
               of its own), beyond the session timeout (3 s here);
  rejoin_s     that broker started again: until the same holds again (it
               hosts them all, and is back in every ISR);
  walk_s       the baseline of rejoin_s: listing each of that broker's
               partition directories and opening its last segment, from
               Python, once it is back (the least a rejoin pays).

    tests/bench/scale.py BUILD_DIR [COUNT...]     (default 1000 10000)

SCALE_KEEP=1 keeps each cluster's data directory (the nodes' logs) for
a look afterwards. Prints one RESULT line per count, then, for each
smaller count, one with each figure of the largest count as a ratio to
that count's (measured in the same run, as the figures drift with the
machine): run with 1 first for the busy partition's "no others", and
with 1000 for the issue's 3x bounds. Topics hold at most 10,000
partitions each: larger counts are several topics. A figure not reached within its
deadline is printed as timeout. Stops only the processes it started."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SESSION_S = 3.0   # broker.session.timeout.ms of deploy/cluster.sh
IDLE_S = float(os.environ.get("SCALE_IDLE_S", "20"))
# A run of seconds, not one: a shorter one swung 20-90 MB/s on this machine,
# and 1,000,000 records (about a second at 100 MB/s) swung 70-120 MB/s
# from one run to the next on the same cluster.
BUSY_RECORDS = int(os.environ.get("SCALE_BUSY_RECORDS", "5000000"))
BUSY_RECORD_BYTES = 100
DEADLINE_S = float(os.environ.get("SCALE_DEADLINE_S", "600"))
TICK = os.sysconf("SC_CLK_TCK")
PER_TOPIC = 10000  # partitions of one topic at most (META_PARTITIONS_MAX)


def pick_base():
    out = subprocess.run(["bash", "-c", "source deploy/ports.sh; pick_base"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


class Cluster:
    def __init__(self, build):
        self.base = pick_base()
        self.data = tempfile.mkdtemp(prefix="cairn-scale-")
        self.env = dict(os.environ, CAIRN_BASE_PORT=str(self.base),
                        CAIRN_DATA=self.data, CAIRN_BIN=os.path.abspath(build))
        self.cairn = [os.path.join(os.path.abspath(build), "cairn"),
                      "--bootstrap-servers",
                      ",".join("127.0.0.1:%d" % (self.base + 91 + i)
                               for i in range(3)),
                      "--controllers",
                      ",".join("%d@127.0.0.1:%d" % (101 + i, self.base + 101 + i)
                               for i in range(3))]

    def sh(self, *args, check=True):
        r = subprocess.run([os.path.join(ROOT, "deploy/cluster.sh")] +
                           list(args), cwd=ROOT, env=self.env,
                           capture_output=True, text=True, timeout=300)
        if check and r.returncode != 0:
            raise RuntimeError("cluster.sh %s: %s%s" % (" ".join(args),
                                                       r.stdout, r.stderr))
        return r.stdout

    def cli(self, *args, timeout=120):
        return subprocess.run(self.cairn + list(args), cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def pid(self, node):
        return int(self.sh("pid", node).strip())

    def gauges(self, broker, names):
        """The named gauges of broker's /metrics/summary (its series
        per partition left out: at 100,000 partitions they are megabytes
        rendered on the broker's loop at every poll), or None."""
        try:
            with urllib.request.urlopen(
                    "http://127.0.0.1:%d/metrics/summary" % (
                        self.base + 93 + broker), timeout=10) as r:
                text = r.read().decode()
        except OSError:
            return None
        out = {}
        for n in names:
            m = re.search(r"(?m)^%s (\S+)$" % n, text)
            if m is None:
                return None
            out[n] = float(m.group(1))
        return out

    def settled(self, count, brokers=(1, 2, 3)):
        """Every broker hosts count partitions (logs open), they lead
        count between them, none of them under-replicated."""
        names = ("kafka_server_replicamanager_partitioncount",
                 "kafka_server_replicamanager_leadercount",
                 "kafka_server_replicamanager_underreplicatedpartitions")
        gs = [self.gauges(b, names) for b in brokers]
        if any(g is None for g in gs):
            return False
        return (all(g[names[0]] == count for g in gs) and
                sum(g[names[1]] for g in gs) == count and
                sum(g[names[2]] for g in gs) == 0)

    def led_by(self, count, brokers, deadline_s):
        """Seconds (time.monotonic()) at which the brokers led count
        partitions between them, as each of them had applied it (their
        /metrics gauges; a Metadata request of every partition takes
        seconds at 100,000), or None past the deadline. Each broker is
        polled by its own thread, so one that is slow to answer (busy
        taking its new roles) does not hold back reading the others; a
        survivor of a failover only gains leaderships, so when the latest
        counts add up, every partition was led by the latest of those
        readings."""
        name = "kafka_server_replicamanager_leadercount"
        latest = {}
        stop = threading.Event()

        def poll(b):
            while not stop.is_set():
                g = self.gauges(b, (name,))
                if g is not None:
                    latest[b] = (g[name], time.monotonic())
                time.sleep(0.02)

        threads = [threading.Thread(target=poll, args=(b,), daemon=True)
                   for b in brokers]
        for t in threads:
            t.start()
        t0 = time.monotonic()
        led = None
        try:
            while led is None and time.monotonic() - t0 < deadline_s:
                got = [latest.get(b) for b in brokers]
                if (all(x is not None for x in got) and
                        sum(x[0] for x in got) == count):
                    led = max(x[1] for x in got)
                time.sleep(0.01)
        finally:
            stop.set()
            for t in threads:
                t.join()
        return led

    def expired(self):
        """Brokers fenced for an expired session so far (no broker was
        stopped: each one is a session the cluster let lapse)."""
        n = 0
        for i in (101, 102, 103):
            path = os.path.join(self.data, "controller-%d" % i,
                                "controller-%d.log" % i)
            try:
                with open(path) as f:
                    n += len(re.findall(r"event: broker \d+ fenced \(session "
                                        r"expired", f.read()))
            except OSError:
                pass
        return n

    def down(self):
        self.sh("down", check=False)
        if os.environ.get("SCALE_KEEP"):
            print("kept %s" % self.data, file=sys.stderr)
            return
        shutil.rmtree(self.data, ignore_errors=True)


def wait(check, deadline_s):
    """Seconds until check() holds, or None past the deadline."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < deadline_s:
        if check():
            return time.monotonic() - t0
        time.sleep(0.25)
    return None


def proc_cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def proc_rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        m = re.search(r"VmRSS:\s+(\d+) kB", f.read())
    return int(m.group(1)) / 1024.0


def proc_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def measure(build, count):
    c = Cluster(build)
    res = {"partitions": count}
    try:
        c.sh("up")
        brokers = ["broker-%d" % i for i in (1, 2, 3)]
        base_rss = {b: proc_rss_mb(c.pid(b)) for b in brokers}
        t0 = time.monotonic()
        c.topics = []
        for k in range(0, count, PER_TOPIC):
            name = "scale-%d" % (k // PER_TOPIC)
            r = c.cli("topics", "create", name, "--partitions",
                      str(min(PER_TOPIC, count - k)), "--replication-factor",
                      "3", timeout=300)
            if r.returncode != 0:
                raise RuntimeError("create: %s%s" % (r.stdout, r.stderr))
            c.topics.append(name)
        res["create_s"] = time.monotonic() - t0

        waited = wait(lambda: c.settled(count), DEADLINE_S)
        res["ready_s"] = None if waited is None else time.monotonic() - t0
        res["expired"] = c.expired()
        pids = [c.pid(b) for b in brokers]
        res["rss_mb"] = max(proc_rss_mb(p) for p in pids)
        # RF 3 on three brokers: each hosts every partition.
        res["kb_per_replica"] = max(
            (proc_rss_mb(c.pid(b)) - base_rss[b]) * 1024.0 / count
            for b in brokers)
        res["fds"] = max(proc_fds(p) for p in pids)
        before = [proc_cpu_s(p) for p in pids]
        time.sleep(IDLE_S)  # a measuring window, not a wait for a state
        after = [proc_cpu_s(p) for p in pids]
        res["idle_cpu"] = max(100.0 * (a - b) / IDLE_S
                              for a, b in zip(after, before))
        res["busy_mb_s"] = busy_throughput(c)
        t1 = time.monotonic()  # before the kill: its own time counts
        c.sh("kill", "broker-1")
        hosted = count + (1 if res["busy_mb_s"] is not None else 0)
        led = c.led_by(hosted, (2, 3), DEADLINE_S)
        res["failover_s"] = None if led is None else max(
            0.0, led - t1 - SESSION_S)
        c.sh("start", "broker-1")
        back = wait(lambda: c.settled(hosted), DEADLINE_S)
        res["rejoin_s"] = back
        res["walk_s"] = walk_logs(os.path.join(c.data, "broker-1", "logs"))
    finally:
        c.down()
    return res


def walk_logs(logs):
    """Seconds to list every partition directory under logs and open,
    fstat and close its last segment: what any rejoin pays at least to
    look at each partition once (warm cache, as after the rejoin)."""
    t0 = time.monotonic()
    with os.scandir(logs) as top:
        for d in top:
            if not d.is_dir():
                continue
            segs = [e.name for e in os.scandir(d.path)
                    if e.name.endswith(".log")]
            if segs:
                fd = os.open(os.path.join(d.path, max(segs)), os.O_RDONLY)
                os.fstat(fd)
                os.close(fd)
    return time.monotonic() - t0


def busy_throughput(c):
    """MB/s of a saturating producer (librdkafka's defaults, acks=all)
    on one more partition, beside the idle ones; None if it failed."""
    r = c.cli("topics", "create", "busy", "--partitions", "1",
              "--replication-factor", "3", timeout=120)
    if r.returncode != 0:
        return None
    r = c.cli("bench", "produce", "--topic", "busy", "--records",
              str(BUSY_RECORDS), "--record-size", str(BUSY_RECORD_BYTES),
              "--acks", "all", timeout=600)
    m = re.search(r"RESULT .*\brecords=(\d+) record_bytes=(\d+).*"
                  r"\bseconds=([\d.]+)", r.stdout)
    if r.returncode != 0 or m is None:
        return None
    return int(m.group(1)) * int(m.group(2)) / float(m.group(3)) / 1e6


def fmt(v):
    if v is None:
        return "timeout"
    return "%.2f" % v if isinstance(v, float) else str(v)


KEYS = ("create_s", "ready_s", "expired", "rss_mb", "kb_per_replica", "fds", "idle_cpu",
        "busy_mb_s", "failover_s", "rejoin_s", "walk_s")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    build = sys.argv[1]
    counts = [int(a) for a in sys.argv[2:]] or [1000, 10000]
    results = []
    for n in counts:
        r = measure(build, n)
        results.append(r)
        print("RESULT bench=scale partitions=%d %s" % (
            n, " ".join("%s=%s" % (k, fmt(r.get(k))) for k in KEYS)),
            flush=True)
    hi = results[-1]
    for lo in results[:-1]:
        print_ratio(lo, hi)
    return 0


def print_ratio(lo, hi):
    ratios = []
    for k in KEYS:
        if k == "expired":
            continue  # a count of faults, not a cost
        a, b = lo.get(k), hi.get(k)
        if a is None or b is None:
            ratios.append("%s=timeout" % k)
        else:
            # Sub-second figures are compared with a floor of 0.1 s.
            ratios.append("%s=%.2f" % (k, max(b, 0.1) / max(a, 0.1)))
    print("RESULT bench=scale_ratio from=%d to=%d %s" % (
        lo["partitions"], hi["partitions"], " ".join(ratios)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
