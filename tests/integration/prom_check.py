#!/usr/bin/python3
"""Fetches a Cairn process's /metrics and checks it is valid Prometheus
text exposition (version 0.0.4): every sample's family has its HELP and
TYPE first, names and labels are well formed, values are numbers. Prints
the samples as "name{labels} value" lines for the caller to grep.

    prom_check.py URL
Exit 0 valid, 1 invalid (the reason on stderr), 2 unreachable.
"""
import re
import sys
import urllib.request

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
SAMPLE = re.compile(r"^(%s)(\{(%s(?:,%s)*)?\})? (\S+)$" % (NAME, LABEL, LABEL))
HELP = re.compile(r"^# HELP (%s) .+$" % NAME)
TYPE = re.compile(r"^# TYPE (%s) (counter|gauge|histogram|summary|untyped)$"
                  % NAME)


def histogram_family(name, typed):
    """The histogram family a _bucket/_sum/_count sample belongs to."""
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)]
        if name.endswith(suffix) and typed.get(base) == "histogram":
            return base
    return None


class Histograms:
    """Per histogram series (family and labels without le): buckets
    cumulative in increasing le, ending with +Inf equal to _count."""

    def __init__(self):
        self.series = {}

    def sample(self, family, name, labels, value):
        pairs = re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"',
                           labels)
        le = [v for k, v in pairs if k == "le"]
        key = (family, tuple((k, v) for k, v in pairs if k != "le"))
        s = self.series.setdefault(key, {"buckets": [], "count": None})
        v = float(value)
        if name.endswith("_bucket"):
            if len(le) != 1:
                return "%s without one le label" % name
            s["buckets"].append((float(le[0]), v))
        elif name.endswith("_count"):
            s["count"] = v
        return None

    def check(self):
        for (family, labels), s in self.series.items():
            b = s["buckets"]
            if not b or b[-1][0] != float("inf"):
                return "%s%s: no +Inf bucket last" % (family, labels)
            for (le0, c0), (le1, c1) in zip(b, b[1:]):
                if le1 <= le0 or c1 < c0:
                    return "%s%s: buckets not cumulative" % (family, labels)
            if s["count"] != b[-1][1]:
                return "%s%s: _count %r != +Inf bucket %r" % (
                    family, labels, s["count"], b[-1][1])
        return None


def main():
    try:
        with urllib.request.urlopen(sys.argv[1], timeout=10) as r:
            ctype = r.headers.get("Content-Type", "")
            text = r.read().decode()
    except OSError as e:
        print("unreachable: %s" % e, file=sys.stderr)
        return 2
    if not ctype.startswith("text/plain") or "version=0.0.4" not in ctype:
        print("Content-Type %r" % ctype, file=sys.stderr)
        return 1
    helped, typed, out = set(), {}, []
    hist = Histograms()
    for n, line in enumerate(text.splitlines(), 1):
        m = HELP.match(line)
        if m:
            helped.add(m.group(1))
            continue
        m = TYPE.match(line)
        if m:
            if m.group(1) in typed:
                print("line %d: second TYPE for %s" % (n, m.group(1)),
                      file=sys.stderr)
                return 1
            typed[m.group(1)] = m.group(2)
            continue
        m = SAMPLE.match(line)
        if not m:
            print("line %d: not exposition text: %r" % (n, line),
                  file=sys.stderr)
            return 1
        name = m.group(1)
        family = histogram_family(name, typed)
        if family is not None:
            err = hist.sample(family, name, m.group(3) or "", m.group(4))
            if err:
                print("line %d: %s" % (n, err), file=sys.stderr)
                return 1
            name = family
        if name not in typed or name not in helped:
            print("line %d: %s has no HELP/TYPE before it" % (n, name),
                  file=sys.stderr)
            return 1
        try:
            float(m.group(4))
        except ValueError:
            print("line %d: value %r" % (n, m.group(4)), file=sys.stderr)
            return 1
        if typed[name] == "counter" and not name.endswith("_total"):
            print("line %d: counter %s without _total" % (n, name),
                  file=sys.stderr)
            return 1
        out.append(line)
    if not out:
        print("no samples", file=sys.stderr)
        return 1
    err = hist.check()
    if err:
        print(err, file=sys.stderr)
        return 1
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
