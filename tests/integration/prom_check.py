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
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
