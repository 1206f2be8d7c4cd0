#!/usr/bin/env bash
# Sarama 1.22 (Debian's golang-github-shopify-sarama-dev, built offline
# from /usr/share/gocode) against a local Cairn cluster. The steps and
# checks are in tests/integration/clients/sarama_flow.go: with
# Config.Version = V2_1_0_0, ClusterAdmin, a SyncProducer (acks all) of
# keyed records with headers, partition consumers, a ConsumerGroup that
# commits and a new member resuming at the commit; with the default
# V0_8_2_0, Metadata v0 works and Produce v0 / Fetch v0 (gone in Kafka 4.0)
# end in a client-side error, not a hang. The program is built into
# BUILD_DIR/go, never into the source tree.
#     tests/integration/sarama.sh BUILD_DIR
set -uo pipefail

TEST_NAME=sarama
source "$(dirname "$0")/lib.sh"
GOPATH_DEB=/usr/share/gocode
command -v go >/dev/null 2>&1 || give_up "go not found (make deps: golang-go)"
[ -f "$GOPATH_DEB/src/github.com/Shopify/sarama/sarama.go" ] ||
    give_up "sarama not in $GOPATH_DEB (make deps: golang-github-shopify-sarama-dev)"
cluster_up "${1:-}" prepare

# Debian's Go packages only: no modules, no network.
mkdir -p "$BIN/go"
FLOW=$BIN/go/sarama_flow
if ! GO111MODULE=off GOPATH=$GOPATH_DEB GOCACHE=$BIN/go/cache GOFLAGS= \
    GOPROXY=off nice go build -o "$FLOW" \
    "$ROOT/tests/integration/clients/sarama_flow.go" >"$DATA/build.out" 2>&1; then
    tail -n 20 "$DATA/build.out"
    give_up "go build of sarama_flow.go failed"
fi

cluster_start_or_give_up

# The flow prints its own [PASS]/[FAIL] lines; they count here.
run_flow sarama_flow 180 "$FLOW" "$BOOT" sarama-topic

# The refusals are the broker closing the connection on a version it does
# not serve, as Kafka does: Produce v0 (api_key 0), and Fetch v0 (1) or,
# if ListOffsets v0 (2) is ever dropped as Kafka 4.0 dropped it, the
# ListOffsets v0 sarama sends before fetching. The V2_1_0_0 client never
# met one.
closed() { # API_KEY VERSION
    cat "$DATA"/broker-*/broker-*.log |
        grep "closing: unsupported api version" |
        grep -c "api_key=$1 api_version=$2 "
}
all_closed() {
    cat "$DATA"/broker-*/broker-*.log | grep -c "closing: unsupported api version"
}
p0=$(closed 0 0) f0=$(closed 1 0) l0=$(closed 2 0)
check "brokers closed connections on Produce v0 ($p0) and Fetch v0 ($f0) or ListOffsets v0 ($l0)" \
    test "$p0" -ge 1 -a $((f0 + l0)) -ge 1
check "no other version was refused ($(all_closed) closings in all)" \
    test "$(all_closed)" = $((p0 + f0 + l0))
summary
