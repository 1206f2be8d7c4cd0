#!/usr/bin/env bash
# kafka-python 2.0.2 (Debian's python3-kafka) against a local Cairn
# cluster, with its defaults: 50 fresh clients detect the broker's version
# (ApiVersions v0, then Metadata v0 on the same socket) and none takes it
# for 0.8/0.9; producers with the detected version and with api_version
# pinned to 2.0.0 write keyed records with headers, read back whole; a
# group commits and its next member resumes there. The steps and checks
# are in tests/integration/clients/kafka_python_flow.py. The brokers must
# not have closed a connection for a request version they lack.
#     tests/integration/kafka_python.sh BUILD_DIR
set -uo pipefail

TEST_NAME=kafka_python
source "$(dirname "$0")/lib.sh"
/usr/bin/python3 -c "import kafka" 2>/dev/null ||
    give_up "python3-kafka is not installed (make deps)"
cluster_up "${1:-}"

check "kafka-python: version detection, produce, consume, group resume" \
    timeout 300 /usr/bin/python3 \
    "$ROOT/tests/integration/clients/kafka_python_flow.py" "$BOOT" kp-topic
closed() {
    cat "$DATA"/broker-*/broker-*.log | grep -c "closing: unsupported api version"
}
check "no connection closed for an unsupported version ($(closed) seen)" \
    test "$(closed)" = 0
summary
