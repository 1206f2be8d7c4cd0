#!/usr/bin/python3
"""Runs the README's fenced ```sh and ```python blocks in order against a
cluster of the test's own (tests/integration/readme.sh prepares its
ports, data directory and binaries in the environment: CAIRN_BASE_PORT,
CAIRN_DATA, CAIRN_BIN), and prints one [PASS]/[FAIL] line per command and
per block, each naming its README line. Blocks without a language are
sample output and are not run.

    readme_blocks.py README [--list]

A command is one line of a block joined with its `\\` continuations; the
comment lines under it and its inline `# ...` are documentation. Each runs
with bash -c (pipefail), from the checkout's root, under a timeout.

Rewrites, so that the test runs beside `make cluster` (each is printed):
  - `make cluster` becomes `deploy/cluster.sh up`; `make test`, `make
    deps` and the other make targets are skipped;
  - ports 19000..19399 become CAIRN_BASE_PORT + the same offset;
  - `build/debug/` becomes CAIRN_BIN and `data/cluster/` CAIRN_DATA;
  - a section that needs the cluster after the README's `down` starts it
    again with `deploy/cluster.sh up` (a reader would run `make cluster`);
  - the lessons (deploy/scenarios/*.sh) and jepsen/run start clusters of
    their own and take minutes: they are not run here (`make test` runs
    both); the test checks that each lesson is an executable file and
    that jepsen/run takes the options the README gives it.
Every command runs as the README writes it (with the rewrites above).

Where the README's narrative waits ("once the controller has fenced
them", "catches up and rejoins the ISR"), the runner waits after the
command for that condition, with a deadline, in `cairn status --json` or
a node's log (waits_for). Commands the README says fail are in
EXPECT_FAIL; what a command must print is in EXPECT_OUTPUT. Commands that
run until stopped (LONG_RUNNING) pass if, after a few seconds, they still
run and have printed what they should; they are then stopped by their
pid (their process group, which they lead).
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
BASE = int(os.environ["CAIRN_BASE_PORT"])
DATA = os.environ["CAIRN_DATA"]
BIN = os.environ["CAIRN_BIN"]
CMD_TIMEOUT_S = 90

# Command substring -> why it must fail (exit status not 0).
EXPECT_FAIL = {
    "cairn -X retries=0 produce lesson --acks all":
        "two brokers fenced: the ISR is one broker, below min.insync.replicas",
}

# (regex on the command as the README has it, which match from 1) ->
# regex its output (stdout and stderr; for `wc -l`, stdout) must match,
# and what that shows.
EXPECT_OUTPUT = {
    (r"^make cluster\b", 1):
        (r"bootstrap\.servers=127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,"
         r"127\.0\.0\.1:\d+\s*\Z", "bootstrap.servers= last"),
    (r"cairn status$", 2):
        (r"(?m)^lesson +\d .*\b1:-.*UNDER-REPLICATED",
         "lesson's partitions UNDER-REPLICATED, broker 1's end offsets -"),
    (r"cluster\.sh down$", 1):
        (r"\A(?![\s\S]*did not stop)", "no node it had to SIGKILL"),
    ("-X retries=0 produce lesson", 1):
        (r"(?i)not.enough.replicas|not enough in-sync replicas",
         "refused with NOT_ENOUGH_REPLICAS"),
    ("kcat -b 127.0.0.1:19091 -L", 1):
        (r"3 brokers:", "three brokers"),
    ("kcat -b 127.0.0.1:19091 -C -t demo", 1):
        (r"\A1\n2\n3\n4\n5\n", "the 5 records in order"),
    ("kcat -b 127.0.0.1:19091 -G readers", 1):
        (r"(?m)^1$[\s\S]*^5$", "the group reads demo from the start"),
    ("cairn consume orders --from-beginning --count 2 --print-key", 1):
        (r"user-1.*hello[\s\S]*user-2.*world|user-2.*world[\s\S]*user-1.*hello",
         "both keyed records"),
    ("cairn groups describe billing", 1):
        (r"billing", "the group"),
    ("cairn size --message-bytes 1500", 1):
        (r"2,332,800,000,000 bytes", "2,332,800,000,000 bytes at RF 3"),
    ("wc -l", 1): (r"\A\s*2000\s*\Z", "2000: the consumer stops at the HW"),
    ("wc -l", 2): (r"\A\s*2010\s*\Z", "2010: the HW passed the acks=1 records"),
    (r"cairn status$", 4):
        (r"(?m)^lesson +\d +none .*OFFLINE",
         "lesson's partitions OFFLINE: no live replica in the ISR"),
    ("cairn elect --type unclean", 1):
        (r"(?m)^lesson-\d: elected$", "the partitions elected"),
    ("grep truncated", 1):
        (r"broker-1 +lesson-\d truncated \d+ -> \d+ \(leader [23] says",
         "broker 1 cut what the unclean leaders lack"),
    ("wc -l", 3): (r"\A\s*2010\s*\Z",
                   "2010: the acks=1 records 21-30 are gone"),
    ("curl -s 127.0.0.1:19094/metrics", 1):
        (r"(?m)^kafka_server_replicamanager_underreplicatedpartitions ",
         "broker 1's metrics"),
    ("curl -s 127.0.0.1:19104/metrics", 1):
        (r"(?m)^kafka_controller_kafkacontroller_activecontrollercount ",
         "a controller's metrics"),
    ("cairn events --since 10m", 1):
        (r"controller-10[1-3]", "the controllers' events"),
    ("cairn events --since 1m", 1):
        (r"broker 2 asked to be fenced: its log dir .* is offline",
         "the controller fenced broker 2 at its request"),
    ("deploy/cluster.sh start broker-2", 3):
        (r"(?m)^started broker-2 \(pid \d+\)$",
         "it started broker 2 again: the failed one had exited"),
    ("deploy/cluster.sh logs broker-2", 1):
        (r"became leader of [\w.-]+-\d+ at epoch \d+[\s\S]* event: ",
         "'became leader of ... at epoch N' and event lines"),
}
# What the python block must print.
PYTHON_EXPECT = (r"""b'\{"id": 1\}'""", "the record it produced")

# Command substring -> (regex the output must match while it runs, what
# it shows, an extra check or None).
LONG_RUNNING = {
    "cairn web": (r"http://127\.0\.0\.1:\d+/", "says where the page is",
                  "web"),
    "cairn status --watch": (r"(?m)^[0-9:.]+ .*broker 1", "the state, broker 1",
                             None),
    "cairn events --follow": (r"controller-10[1-3]", "controllers' events",
                              None),
}
LONG_RUNNING_S = 20  # to print its first lines

counts = {"pass": 0, "fail": 0}


def result(ok, line, what):
    tag = "PASS" if ok else "FAIL"
    counts["pass" if ok else "fail"] += 1
    print("[%s] README:%d %s" % (tag, line, what), flush=True)
    return ok


def skip(line, what):
    print("[SKIP] README:%d %s" % (line, what), flush=True)


# --- reading the README ------------------------------------------------------

def blocks(path):
    """[(lang, first line number, [(line number, text)])] of the fenced
    sh and python blocks, in order."""
    out = []
    cur = None
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            text = raw.rstrip("\n")
            fence = re.match(r"^(\s*)```(\w*)\s*$", text)
            if cur is None and fence:
                cur = (fence.group(2), n, len(fence.group(1)), [])
            elif cur is not None and fence:
                if cur[0] in ("sh", "python"):
                    out.append((cur[0], cur[1], cur[3]))
                cur = None
            elif cur is not None:
                cur[3].append((n, text[cur[2]:]))
    return out


def strip_comment(line):
    """The line without its shell comment (a # outside quotes, at the
    start or after a blank)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def commands(lines):
    """[(line number, command)] of an sh block."""
    out = []
    pending = None
    for n, text in lines:
        code = strip_comment(text)
        if pending is not None:
            pending = (pending[0], pending[1] + " " + code.strip())
        elif code.strip():
            pending = (n, code.strip())
        else:
            continue
        if pending[1].endswith("\\"):
            pending = (pending[0], pending[1][:-1].rstrip())
            continue
        out.append(pending)
        pending = None
    return out


def rewrite(cmd):
    cmd = re.sub(r"\b19([0-3]\d\d)\b",
                 lambda m: str(BASE + int(m.group(1))), cmd)
    cmd = cmd.replace("build/debug/", BIN + "/")
    cmd = cmd.replace("data/cluster/", DATA + "/")
    if re.match(r"^make cluster\b", cmd):
        cmd = "deploy/cluster.sh up"
    return cmd


# --- the cluster's state -----------------------------------------------------

def status():
    try:
        r = subprocess.run([BIN + "/cairn", "status", "--json"],
                           capture_output=True, text=True, timeout=20)
        return json.loads(r.stdout) if r.returncode == 0 else None
    except (subprocess.TimeoutExpired, ValueError):
        return None


def on_status(pred):
    """A check of `cairn status --json` by pred."""
    def check():
        s = status()
        try:
            return s is not None and pred(s)
        except (KeyError, IndexError, TypeError):
            return False
    return check


def wait_until(check, deadline_s):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.2)
    return False


def log_says(node, pattern):
    def check():
        try:
            with open(os.path.join(DATA, node, node + ".log")) as f:
                return re.search(pattern, f.read()) is not None
        except OSError:
            return False
    return check


def partitions(s):
    return [p for t in s["topics"] for p in t["partitions"]]


def broker(s, n):
    return [b for b in s["brokers"] if b["id"] == n][0]


def fenced_and_moved(n):
    """Broker n fenced, gone from every ISR and leading nothing, but where
    it is the ISR's last member (which stays, the partition offline)."""
    return lambda s: broker(s, n)["fenced"] and all(
        p["isr"] == [n] or (p["leader"] != n and n not in p["isr"])
        for p in partitions(s))


def caught_up(n):
    """Broker n unfenced, in the ISR of every partition it replicates that
    has a leader (an offline one waits for an election), and those
    partitions' HW at every replica's end offset."""
    def pred(s):
        if broker(s, n)["fenced"]:
            return False
        for p in partitions(s):
            if n not in p["replicas"] or p["leader"] < 0:
                continue
            ends = [r["end_offset"] for r in p["end_offsets"]]
            if n not in p["isr"] or any(e != p["hw"] for e in ends):
                return False
        return True
    return pred


def controller_caught_up(n):
    """Controller n answers and has applied the metadata log as far as
    the active controller had when the wait began."""
    target = []

    def pred(s):
        cs = {c["id"]: c for c in s["controllers"]}
        if not target:
            active = [c for c in cs.values() if c.get("active")]
            if not active:
                return False
            target.append(active[0]["applied"])
        c = cs[n]
        return c["reachable"] and c["applied"] >= target[0]
    return pred


def leads_nothing(n):
    return lambda s: all(p["leader"] != n for p in partitions(s))


def preferred_leaders(s):
    """Every partition led by its first replica."""
    return all(p["leader"] == p["replicas"][0] for p in partitions(s))


def one_active_controller(s):
    return sum(1 for c in s["controllers"] if c.get("active")) == 1


# The command as it runs -> [(what the README says follows it, a check,
# deadline s)].
def waits_for(cmd):
    out = []
    for m in re.finditer(r"cluster\.sh kill broker-(\d)", cmd):
        n = int(m.group(1))
        out.append(("broker %d fenced, gone from every ISR, leading nothing" % n,
                    fenced_and_moved(n), 30))
    for m in re.finditer(r"cluster\.sh start broker-(\d)", cmd):
        n = int(m.group(1))
        out.append(("broker %d caught up and back in every ISR" % n,
                    caught_up(n), 60))
    for m in re.finditer(r"cluster\.sh start controller-(\d+)", cmd):
        n = int(m.group(1))
        out.append(("controller %d caught up with the active one's log" % n,
                    controller_caught_up(n), 60))
    for m in re.finditer(r"cluster\.sh stop broker-(\d)", cmd):
        n = int(m.group(1))
        out.append(("broker %d's leaderships moved away" % n,
                    leads_nothing(n), 10))
    m = re.search(r"cairn elect --type unclean --topic (\S+)", cmd)
    if m:
        topic = m.group(1)
        out.append(("every partition of %s led" % topic,
                    lambda s: all(p["leader"] >= 0 for t in s["topics"]
                                  if t["name"] == topic
                                  for p in t["partitions"]), 15))
    if re.search(r"cairn elect$", cmd):
        out.append(("every partition led by its first replica",
                    preferred_leaders, 15))
    if re.search(r"cluster\.sh kill controller-", cmd):
        out.append(("one controller active", one_active_controller, 30))
    return [(says, on_status(pred), deadline) for says, pred, deadline in out]


def fsync_failed(n):
    """What the README says follows a failed fsync on broker n."""
    node = "broker-%d" % n
    return [("broker %d fenced, gone from every ISR, leading nothing" % n,
             on_status(fenced_and_moved(n)), 30),
            ("its log says it stopped: its only log dir failed",
             log_says(node, r"broker=%d stopped: its only log dir .* failed"
                      % n), 30)]


# --- running -----------------------------------------------------------------

def run_long(n, cmd, shown, spec):
    pattern, what, extra = spec
    log = os.path.join(DATA, "readme-long-%d.out" % n)
    with open(log, "w") as f:
        proc = subprocess.Popen(["bash", "-c", "exec " + cmd], cwd=ROOT,
                                stdout=f, stderr=subprocess.STDOUT,
                                start_new_session=True, env=os.environ)
    try:
        return watch_long(n, shown, proc, log, spec)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def watch_long(n, shown, proc, log, spec):
    pattern, what, extra = spec
    ok = False
    end = time.monotonic() + LONG_RUNNING_S
    text = ""
    while time.monotonic() < end:
        with open(log) as f:
            text = f.read()
        if re.search(pattern, text) and proc.poll() is None:
            ok = True
            break
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    if ok and extra == "web":
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/" % (BASE + 90),
                                        timeout=10) as r:
                ok = r.status == 200 and b"<html" in r.read().lower()
            what += ", serves the page"
        except OSError as e:
            what += ", page: %s" % e
            ok = False
    running = proc.poll() is None
    if running:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    result(ok, n, "%s (runs until stopped: %s)" % (shown, what))
    if not ok:
        print("    exit %s; output: %s" % (proc.returncode, text[-2000:]))
    return ok


def run_group(argv):
    """Runs argv in a process group of its own under CMD_TIMEOUT_S; at the
    timeout the group (a pipeline's every process) is killed. Its exit
    status, or a string saying it timed out; stdout; stderr."""
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=os.environ)
    try:
        out, err = proc.communicate(timeout=CMD_TIMEOUT_S)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return "timeout after %d s" % CMD_TIMEOUT_S, out, err
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def run_one(n, raw, cmd, shown, seen, waits=None):
    """Runs one command, then waits for what the README says follows it
    (waits, else waits_for(cmd)); True when all went as it says. raw is
    the command as the README has it, cmd as it runs."""
    for key, spec in LONG_RUNNING.items():
        if key in raw:
            return run_long(n, cmd, shown, spec)
    rc, stdout, stderr = run_group(["bash", "-o", "pipefail", "-c", cmd])
    text = stdout + stderr
    must_fail = [why for key, why in EXPECT_FAIL.items() if key in raw]
    if must_fail:
        ok = isinstance(rc, int) and rc not in (0, 124)
        what = "%s (must fail: %s; exit %s)" % (shown, must_fail[0], rc)
    else:
        ok = rc == 0
        what = "%s (exit %s)" % (shown, rc)
    for key in {k for k, _ in EXPECT_OUTPUT if re.search(k, raw)}:
        seen[key] = seen.get(key, 0) + 1
    for (key, nth), (pattern, says) in EXPECT_OUTPUT.items():
        if re.search(key, raw):
            if seen[key] == nth:
                good = re.search(pattern, stdout if key == "wc -l"
                                 else text) is not None
                ok = ok and good
                what += "; prints %s%s" % (says, "" if good else ": NO")
    result(ok, n, what)
    if not ok:
        print("    output: " + text[-3000:].replace("\n", "\n    "))
    for says, check, deadline in waits if waits is not None else waits_for(cmd):
        t0 = time.monotonic()
        good = wait_until(check, deadline)
        ok = result(good, n, "then: %s (%.1f s, deadline %d s)"
                    % (says, time.monotonic() - t0, deadline)) and ok
    return ok


def run_sh_block(first, lines, seen, state):
    ok = True
    cmds = commands(lines)
    for n, raw in cmds:
        if re.match(r"^make\b", raw) and not re.match(r"^make cluster\b", raw):
            skip(n, "%s (not run here: make targets other than cluster)" % raw)
            continue
        lesson = re.match(r"^(deploy/scenarios/[\w.-]+\.sh)$", raw)
        if lesson:
            path = os.path.join(ROOT, lesson.group(1))
            ok = result(os.access(path, os.X_OK), n,
                        "%s is an executable lesson (not run here: a cluster "
                        "of its own; make test runs every lesson)" % raw) and ok
            continue
        if raw.startswith("jepsen/run"):
            ok = check_jepsen(n, raw) and ok
            continue
        cmd = rewrite(raw)
        if state["down"] and "cluster.sh up" not in cmd:
            ok = bring_up(n) and ok
            state["down"] = False
        shown = raw if cmd == raw else "%s [as: %s]" % (raw, cmd)
        # Armed faults fail the next fsync: the write after the signal
        # makes the broker sync, and what follows is its fencing.
        waits = None
        if state.get("armed") and re.search(r"cairn produce", cmd):
            waits = fsync_failed(state.pop("armed"))
        ok = run_one(n, raw, cmd, shown, seen, waits) and ok
        armed = re.search(r"kill -USR2 \$\(deploy/cluster\.sh pid broker-(\d)\)",
                          raw)
        if armed:
            state["armed"] = int(armed.group(1))
        if re.search(r"cluster\.sh down\b", cmd):
            state["down"] = True
    return ok, len(cmds)


def bring_up(n):
    return run_one(n, "deploy/cluster.sh up", "deploy/cluster.sh up",
                   "deploy/cluster.sh up [added: the README's `down` "
                   "stopped the cluster this section needs]", {})


def check_jepsen(n, raw):
    args = raw.split()[1:]
    r = subprocess.run([os.path.join(ROOT, "jepsen/run"), "--help"],
                       capture_output=True, text=True, timeout=30)
    opts = [a for a in args if a.startswith("--")]
    ok = r.returncode == 0 and all(o in r.stdout for o in opts)
    return result(ok, n, "%s: jepsen/run --help names %s (not run here: a "
                  "cluster of its own and %s s; make test runs a short one)"
                  % (raw, ", ".join(opts), args[args.index("--time") + 1]
                     if "--time" in args else "?"))


def run_python_block(first, lines):
    src = rewrite("\n".join(t for _, t in lines))
    rc, stdout, stderr = run_group(["/usr/bin/python3", "-c", src])
    text = stdout + stderr
    pattern, says = PYTHON_EXPECT
    good = re.search(pattern, text) is not None
    ok = result(rc == 0 and good, first + 1,
                "python block, /usr/bin/python3 (exit %s); prints %s%s"
                % (rc, says, "" if good else ": NO"))
    if not ok:
        print("    output: " + text[-3000:].replace("\n", "\n    "))
    return ok


def main():
    # A timeout's SIGTERM unwinds, so that what runs until stopped stops.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    path = sys.argv[1]
    listing = "--list" in sys.argv[2:]
    seen = {}
    state = {"down": False}
    for lang, first, lines in blocks(path):
        if listing:
            print("%s block at README:%d" % (lang, first))
            if lang == "sh":
                for n, c in commands(lines):
                    print("  %d: %s" % (n, rewrite(c)))
            continue
        print("--- %s block at README:%d" % (lang, first), flush=True)
        t0 = time.monotonic()
        if lang == "python":
            ok = run_python_block(first, lines)
            count = 1
        else:
            ok, count = run_sh_block(first, lines, seen, state)
        result(ok, first, "%s block: %d command(s) (%.1f s)"
               % (lang, count, time.monotonic() - t0))
    if listing:
        return 0
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
