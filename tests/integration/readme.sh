#!/usr/bin/env bash
# The README's shell and python blocks, in order, run as a reader would
# run them (tests/integration/clients/readme_blocks.py says how each is
# rewritten, waited for and checked), on a cluster of the test's own:
# free ports, a temporary data directory and BUILD_DIR's binaries, so it
# passes beside `make cluster`.
#     tests/integration/readme.sh BUILD_DIR
set -uo pipefail

TEST_NAME=readme
source "$(dirname "$0")/lib.sh"
# The README's `make cluster` starts the cluster (deploy/cluster.sh up).
cluster_up "${1:-}" prepare
command -v kcat >/dev/null || give_up "kcat not found (apt-get install kcat)"
command -v curl >/dev/null || give_up "curl not found (apt-get install curl)"

run_flow readme_blocks 400 /usr/bin/python3 \
    "$ROOT/tests/integration/clients/readme_blocks.py" "$ROOT/README.md"

# A paused node left behind would keep `down` waiting.
for f in "$DATA"/*/pid; do
    [ -f "$f" ] && kill -CONT "$(cat "$f")" 2>/dev/null
done
summary
