#!/usr/bin/env bash
# DescribeCluster and DescribeLogDirs on a local Cairn cluster: raw-wire
# checks of every field from every broker, sizes against the segment files
# on disk and totals against statvfs (tests/integration/clients/
# cluster_flow.py), then @platformatic/kafka's Admin.describeLogDirs and
# its DescribeCluster request functions (clients/cluster_platformatic.mjs;
# librdkafka 2.0.2, confluent-kafka 1.7.0 and kafkajs 2.2.4 have neither
# API). Own free ports and data directory.
#     tests/integration/describe_cluster.sh BUILD_DIR
set -uo pipefail

TEST_NAME=describe_cluster
source "$(dirname "$0")/lib.sh"
cluster_up "${1:-}" prepare
platformatic_ready
cluster_start_or_give_up

run_flow cluster_flow 180 /usr/bin/python3 "$CLIENTS/cluster_flow.py" \
    "$BOOT" "$DATA"
run_flow cluster_platformatic 180 env BOOTSTRAP="$BOOT" TOPIC=dirs \
    node "$CLIENTS/cluster_platformatic.mjs"

summary
