#!/usr/bin/env bash
# The tree's rules, checked by `make test`:
#   - include directions: common/ includes only common/ (and the generated
#     protobuf-c headers); cli/ and controller/ include nothing from
#     broker/; broker/ includes nothing from controller/ or cli/; nothing
#     outside tests/ includes from tests/;
#   - file size: a source file of the product (common, broker, controller,
#     cli) stays within SOURCE_LINES_MAX lines, a test file within
#     TEST_LINES_MAX, so that a reader can hold one file in mind; split by
#     concern before crossing it.
# Prints one line per violation and a closing "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."

SOURCE_LINES_MAX=1300
TEST_LINES_MAX=1400

failed=0
passed=0

check() { # name, violations (one per line; empty when none)
    local name=$1 out=$2
    if [ -n "$out" ]; then
        printf '[FAIL] %s\n%s\n' "$name" "$out"
        failed=$((failed + 1))
    else
        printf '[PASS] %s\n' "$name"
        passed=$((passed + 1))
    fi
}

# includes DIR: every `#include "x/..."` of DIR's sources as FILE:LINE:PATH
includes() {
    grep -rnoE '^#include "[^"]+"' --include='*.[ch]' "$1" |
        sed -E 's/#include "([^"]+)"/\1/'
}

# too_long MAX DIR...: files of DIRs longer than MAX lines
too_long() {
    local max=$1
    shift
    find "$@" -name '*.[ch]' -print0 | xargs -0 wc -l |
        awk -v max="$max" \
            '$2 != "total" && $1 > max { print $2 ": " $1 " lines > " max }'
}

check "common/ includes only common/" "$(includes common |
    grep -vE ':(common/[^:]*|[a-z_]+\.pb-c\.h)$')"
check "cli/ includes nothing from broker/ or controller/" \
    "$(includes cli | grep -E ':(broker|controller)/')"
check "controller/ includes nothing from broker/ or cli/" \
    "$(includes controller | grep -E ':(broker|cli)/')"
check "broker/ includes nothing from controller/ or cli/" \
    "$(includes broker | grep -E ':(controller|cli)/')"
check "only tests/ includes tests/" "$(for d in common broker controller cli
    do includes "$d"; done | grep -E ':tests/')"
check "product sources within $SOURCE_LINES_MAX lines" \
    "$(too_long "$SOURCE_LINES_MAX" common broker controller cli)"
check "test sources within $TEST_LINES_MAX lines" \
    "$(too_long "$TEST_LINES_MAX" tests)"

echo "layout_check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
