#!/usr/bin/env bash
# The cluster page of `cairn web`, rendered by headless Chromium (Debian's
# chromium): it shows a partition with its full ISR; after its leader is
# killed, the rendered page shows the broker fenced, the leader moved, the
# ISR shrunk and the controller's events saying why. Saves a screenshot as
# BUILD_DIR/web-page.png.
#     tests/integration/web_page.sh BUILD_DIR
set -uo pipefail

TEST_NAME=web_page
source "$(dirname "$0")/lib.sh"
command -v chromium >/dev/null 2>&1 || give_up "chromium not found (make deps)"
cluster_up "${1:-}"
base=$CAIRN_BASE_PORT
page=http://127.0.0.1:$((base + 90))/
shot=$BIN/web-page.png

web_pid=
stop_all() {
    [ -n "$web_pid" ] && kill "$web_pid" 2>/dev/null && wait "$web_pid" 2>/dev/null
    cluster_cleanup
}
trap stop_all EXIT

"$BIN/cairn" topics create page --partitions 1 --replication-factor 3 \
    --config min.insync.replicas=2 >/dev/null || give_up "topics create"
seq 1 50 | "$BIN/cairn" produce page >/dev/null 2>&1 || give_up "produce"
"$BIN/cairn" web --for-ms 300000 >"$DATA/web.log" 2>&1 &
web_pid=$!
deadline=$((SECONDS + 20))
until /usr/bin/python3 -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=5).read()' "$page" >/dev/null 2>&1; do
    [ $SECONDS -ge $deadline ] && give_up "cairn web did not serve $page"
    kill -0 "$web_pid" 2>/dev/null || give_up "cairn web exited: $(cat "$DATA/web.log")"
    sleep 0.2
done

"$BIN/cairn" consume page --group pagegroup --from-beginning --count 30 \
    >/dev/null 2>&1 || give_up "consume in group pagegroup"

# render [ARGS]: the page's DOM after 4 s of the page's own time (its
# polls run once a second), with a fresh profile each time.
render() {
    local profile
    profile=$(mktemp -d "$DATA/chromium-XXXXXX")
    timeout 90 chromium --headless --no-sandbox --disable-gpu \
        --user-data-dir="$profile" --hide-scrollbars \
        --virtual-time-budget=4000 "$@" "$page" 2>/dev/null
}

# dom_query EXPR: python over the DOM on stdin, with rows (tr.partition
# attributes of topic page), brokers (id -> state), events (li texts),
# groups (id -> div.group attributes), offsets (tr.group-offset
# attributes) and polls (completed polls).
dom_query() {
    /usr/bin/python3 -c '
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.rows = []; s.brokers = {}; s.events = []
        s.in_event = False; s.polls = 0; s.groups = {}; s.offsets = []
    def handle_starttag(s, tag, attrs):
        a = dict(attrs); cls = (a.get("class") or "").split()
        if tag == "body": s.polls = int(a.get("data-polls") or 0)
        if tag == "tr" and "partition" in cls and a.get("data-topic") == "page":
            s.rows.append(a)
        if tag == "tr" and "broker" in cls:
            s.brokers[int(a["data-id"])] = a["data-state"]
        if tag == "li" and "event" in cls:
            s.in_event = True; s.events.append("")
        if tag == "div" and "group" in cls:
            s.groups[a["data-group"]] = a
        if tag == "tr" and "group-offset" in cls:
            s.offsets.append(a)
    def handle_endtag(s, tag):
        if tag == "li": s.in_event = False
    def handle_data(s, d):
        if s.in_event: s.events[-1] += d
p = P(); p.feed(sys.stdin.read())
rows, brokers, events, polls = p.rows, p.brokers, p.events, p.polls
groups, offsets = p.groups, p.offsets
ok = eval(sys.argv[1])
if not ok:
    print("page: rows=%r brokers=%r polls=%d groups=%r offsets=%r events=%r" %
          (rows, brokers, polls, groups, offsets, events[:8]), file=sys.stderr)
sys.exit(0 if ok else 1)' "$1"
}

dom=$(render --dump-dom)
check "the page polled the cluster" dom_query 'polls >= 2' <<< "$dom"
check "the page shows the partition with a full ISR" dom_query \
    'len(rows) == 1 and len(rows[0]["data-isr"].split(",")) == 3 and int(rows[0]["data-hw"]) == 50' <<< "$dom"
check "the page shows every broker unfenced" dom_query \
    'brokers == {1: "unfenced", 2: "unfenced", 3: "unfenced"}' <<< "$dom"
check "the page shows group pagegroup, empty, with 30 committed and lag 20" dom_query \
    'groups.get("pagegroup", {}).get("data-state") == "Empty" and [(o["data-committed"], o["data-lag"]) for o in offsets if o["data-group"] == "pagegroup" and o["data-topic"] == "page"] == [("30", "20")]' <<< "$dom"
leader=$(/usr/bin/python3 -c '
import re, sys
m = re.search(r"data-topic=\"page\" data-partition=\"0\" data-leader=\"(\d+)\"", sys.stdin.read())
print(m.group(1) if m else "")' <<< "$dom")
[ -n "$leader" ] || give_up "no leader on the page"

"$ROOT/deploy/cluster.sh" kill "broker-$leader" >/dev/null 2>&1 ||
    give_up "kill broker-$leader"
# The controller fences it once its session expires (3 s here).
deadline=$((SECONDS + 30))
until "$BIN/cairn" status --json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
p = [p for t in s["topics"] if t["name"] == "page" for p in t["partitions"]][0]
sys.exit(0 if p["leader"] not in (-1, int(sys.argv[1])) else 1)' "$leader"; do
    [ $SECONDS -ge $deadline ] && give_up "the leader never moved off broker $leader"
    sleep 0.2
done

dom=$(render --dump-dom)
check "the page shows broker $leader fenced" dom_query \
    "brokers[$leader] == 'fenced'" <<< "$dom"
check "the page shows the leader moved off broker $leader" dom_query \
    "len(rows) == 1 and int(rows[0]['data-leader']) not in (-1, $leader)" <<< "$dom"
check "the page shows the ISR without broker $leader" dom_query \
    "len(rows) == 1 and '$leader' not in rows[0]['data-isr'].split(',') and len(rows[0]['data-isr'].split(',')) == 2" <<< "$dom"
check "the page's events say the leader moved because broker $leader was fenced" dom_query \
    "any('page-0 leader $leader -> ' in e and 'broker $leader fenced: session expired' in e for e in events)" <<< "$dom"

rm -f "$shot"
render --window-size=1400,1000 --screenshot="$shot" >/dev/null
check "a screenshot of the page was saved ($shot)" test -s "$shot"
summary
