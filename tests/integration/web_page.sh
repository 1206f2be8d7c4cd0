#!/usr/bin/env bash
# The cluster page of `cairn web`, rendered by headless Chromium (Debian's
# chromium), through one lesson of its lab bench: it shows a partition
# with its full ISR and the bench's buttons (deploy/cluster.sh up marked
# the cluster); pressing its "kill broker-2" button (cdp_press.py, over
# Chromium's DevTools protocol), under a small acks=all load started by its
# load button, makes the rendered page show broker 2 fenced, the ISR
# shrunk, AT-MIN-ISR and, in the fault panel, the shrink with its cause;
# "start broker-2" brings the ISR back to full, which the panel tells as an
# ISR expand. The bench refuses requests not from the page (403) and
# values off its allowlist (400); a page without the marker has no
# buttons and answers 403. Saves a screenshot taken after the kill as
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
plain_pid=
stop_all() {
    [ -n "$plain_pid" ] && kill "$plain_pid" 2>/dev/null && wait "$plain_pid" 2>/dev/null
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

# post URL_PATH [HEADER]: POSTs to the page as its buttons do (X-Cairn-Lab:
# 1) or with no such header ("-"); prints the HTTP status, then the body.
post() {
    /usr/bin/python3 -c '
import sys, urllib.request, urllib.error
h = {} if sys.argv[2] == "-" else {"X-Cairn-Lab": "1"}
r = urllib.request.Request(sys.argv[1], data=b"", method="POST", headers=h)
try:
    with urllib.request.urlopen(r, timeout=10) as f:
        print(f.status); print(f.read().decode())
except urllib.error.HTTPError as e:
    print(e.code); print(e.read().decode())' "$1" "${2:-page}"
}
# lab_action ACTION [NODE]: the page's request; true when it answered 202.
lab_action() {
    local out
    out=$(post "${page}api/lab/run?action=$1&node=${2:-}")
    echo "lab $1 ${2:-}: $out" >>"$DATA/lab.out"
    [ "$(head -n 1 <<< "$out")" = 202 ]
}
status_is() {
    local out
    out=$(post "$1" "${3:-page}")
    [ "${out%%$'\n'*}" = "$2" ]
}
running() { "$ROOT/deploy/cluster.sh" pid "$1" >/dev/null; }
# press SELECTOR: clicks that button of the page in headless Chromium
# (cdp_press.py) and waits for the bench's answer in #lab-msg, which must
# say the action started.
press() {
    local out
    out=$(timeout 60 /usr/bin/python3 "$ROOT/tests/integration/cdp_press.py" \
        "$DATA" "$page" "$1" "#lab-msg" 2>&1)
    echo "press $1: $out" >>"$DATA/lab.out"
    grep -q "started" <<< "$out"
}

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
# attributes), polls (completed polls), buttons (button.lab-action
# attributes), done (li.lab-done attributes), fault (li.fault-event
# attributes with their text as "text") and marks (line.lab-mark
# attributes of the chart).
dom_query() {
    /usr/bin/python3 -c '
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.rows = []; s.brokers = {}; s.events = []
        s.in_event = False; s.polls = 0; s.groups = {}; s.offsets = []
        s.buttons = []; s.done = []; s.fault = []; s.in_fault = False
        s.marks = []
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
        if tag == "button" and "lab-action" in cls: s.buttons.append(a)
        if tag == "li" and "lab-done" in cls: s.done.append(a)
        if tag == "li" and "fault-event" in cls:
            s.in_fault = True; a["text"] = ""; s.fault.append(a)
        if tag == "line" and "lab-mark" in cls: s.marks.append(a)
    def handle_endtag(s, tag):
        if tag == "li": s.in_event = False; s.in_fault = False
    def handle_data(s, d):
        if s.in_event: s.events[-1] += d
        if s.in_fault: s.fault[-1]["text"] += d
p = P(); p.feed(sys.stdin.read())
rows, brokers, events, polls = p.rows, p.brokers, p.events, p.polls
groups, offsets = p.groups, p.offsets
buttons, done, fault, marks = p.buttons, p.done, p.fault, p.marks
ok = eval(sys.argv[1])
if not ok:
    print("page: rows=%r brokers=%r polls=%d groups=%r offsets=%r events=%r "
          "buttons=%d done=%r fault=%r marks=%r" %
          (rows, brokers, polls, groups, offsets, events[:8], len(buttons),
           done, fault, marks), file=sys.stderr)
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
check "the page shows the lab bench's buttons (cluster.sh up marked the cluster)" dom_query \
    'any(b.get("data-action") == "kill" and b.get("data-node") == "broker-2" for b in buttons) and any(b.get("data-action") == "pause" and b.get("data-node") == "controller-101" for b in buttons)' <<< "$dom"
check "the page's fault panel tells no fencing or ISR shrink before the lesson" dom_query \
    'not any(k in f["data-kinds"].split() for f in fault for k in ("fence", "isr-shrink"))' <<< "$dom"

# The bench takes only the page's own requests, and only allowlisted values.
check "a lab request without the page's header is refused (403)" \
    status_is "${page}api/lab/run?action=kill&node=broker-2" 403 -
check "a lab request for a node off the allowlist is refused (400)" \
    status_is "${page}api/lab/run?action=kill&node=broker-2%3Bid" 400
check "a lab request for a verb off the allowlist is refused (400)" \
    status_is "${page}api/lab/run?action=add&node=broker-4" 400
check "cluster.sh kill broker-2 was not run by the refused requests" \
    running broker-2

# The lesson: a small acks=all load, then "kill broker-2".
check "the page's load button, pressed, starts an acks=all load" press "#lab-load"
# The load is under way once its topic holds acknowledged records.
load_acked() {
    "$BIN/cairn" status --json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
hws = [p.get("hw") or 0 for t in s["topics"] if t["name"] == "lesson"
       for p in t["partitions"]]
sys.exit(0 if hws and max(hws) > 0 else 1)'
}
check "the load's acks=all records are acknowledged" wait_for 30 load_acked
check "the page's kill broker-2 button, pressed, is accepted" \
    press 'button.lab-action[data-action="kill"][data-node="broker-2"]'
# The controller fences it once its session expires (3 s here).
fenced() {
    "$BIN/cairn" status --json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
b = [b for b in s["brokers"] if b["id"] == 2][0]
p = [p for t in s["topics"] if t["name"] == "page" for p in t["partitions"]][0]
sys.exit(0 if b["fenced"] and 2 not in p["isr"] and p["at_min_isr"] else 1)'
}
check "cairn status: broker 2 fenced, page-0 out of its ISR and AT-MIN-ISR" \
    wait_for 30 fenced

dom=$(render --dump-dom)
check "the page shows the kill done, with its node" dom_query \
    'any(d["data-action"] == "kill" and d["data-node"] == "broker-2" and d["data-state"] == "ok" for d in done)' <<< "$dom"
check "the page's chart marks the kill on its timeline" dom_query \
    'any(m["data-action"] == "kill" and m["data-node"] == "broker-2" for m in marks)' <<< "$dom"
check "the page shows broker 2 fenced" dom_query \
    "brokers[2] == 'fenced'" <<< "$dom"
check "the page shows the ISR without broker 2, AT-MIN-ISR, led by another" dom_query \
    "len(rows) == 1 and rows[0]['data-isr'].split(',') != [''] and '2' not in rows[0]['data-isr'].split(',') and len(rows[0]['data-isr'].split(',')) == 2 and 'AT-MIN-ISR' in rows[0]['data-flags'].split(',') and int(rows[0]['data-leader']) not in (-1, 2)" <<< "$dom"
check "the fault panel tells page-0's ISR shrink and its cause: broker 2 fenced" dom_query \
    "any('isr-shrink' in f['data-kinds'].split() and 'page-0 ' in f['text'] and 'broker 2 fenced: session expired' in f['text'] for f in fault)" <<< "$dom"
check "the fault panel tells the fencing and the kill" dom_query \
    "any('fence' in f['data-kinds'].split() for f in fault) and any('lab' in f['data-kinds'].split() and 'kill broker-2' in f['text'] for f in fault)" <<< "$dom"

rm -f "$shot"
render --window-size=1400,1300 --screenshot="$shot" >/dev/null
check "a screenshot of the page after the kill was saved ($shot)" test -s "$shot"

# Restart it: it catches up and the leader takes it back into the ISR.
check "the page's start broker-2 button, pressed, is accepted" \
    press 'button.lab-action[data-action="start"][data-node="broker-2"]'
full() {
    "$BIN/cairn" status --json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
p = [p for t in s["topics"] if t["name"] == "page" for p in t["partitions"]][0]
sys.exit(0 if sorted(p["isr"]) == [1, 2, 3] and not p["at_min_isr"] else 1)'
}
check "cairn status: page-0's ISR is full again" wait_for 60 full
dom=$(render --dump-dom)
check "the page shows the start done" dom_query \
    'any(d["data-action"] == "start" and d["data-node"] == "broker-2" and d["data-state"] == "ok" for d in done)' <<< "$dom"
check "the page shows the ISR full again and broker 2 unfenced" dom_query \
    "len(rows) == 1 and sorted(rows[0]['data-isr'].split(',')) == ['1', '2', '3'] and rows[0]['data-flags'] == '' and brokers[2] == 'unfenced'" <<< "$dom"
check "the fault panel tells page-0's ISR expand" dom_query \
    "any('isr-expand' in f['data-kinds'].split() and 'page-0 ' in f['text'] for f in fault)" <<< "$dom"
check "the page stops the load" lab_action load-stop

# A page for a cluster without the marker (another data directory): no
# buttons, and the bench answers 403 even to the page's own requests.
plain_port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$DATA/unmarked"
CAIRN_DATA=$DATA/unmarked "$BIN/cairn" web --port "$plain_port" --for-ms 120000 \
    >"$DATA/web-plain.log" 2>&1 &
plain_pid=$!
plain=http://127.0.0.1:$plain_port/
wait_for 20 /usr/bin/python3 -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=5).read()' "$plain" ||
    give_up "the second cairn web did not serve $plain"
check "without the marker, the bench refuses the page's own request (403)" \
    status_is "${plain}api/lab/run?action=kill&node=broker-2" 403
check "without the marker, the load is refused too (403)" \
    status_is "${plain}api/lab/run?action=load-start&node=" 403
check "broker 2 still runs" running broker-2
page=$plain
dom=$(render --dump-dom)
check "without the marker, the page has no lab buttons" dom_query \
    'polls >= 2 and buttons == [] and len(rows) == 1' <<< "$dom"
summary
