#!/usr/bin/env bash
# Debian packages Cairn needs to build, test and run.
#   deploy/deps.sh check    exit 0 when all are installed (quick, no network)
#   deploy/deps.sh install  install the missing ones (needs root); prints them
# Without root, install stops with the exact apt-get line to run.
set -euo pipefail

PACKAGES=(
    build-essential pkg-config
    libraft-dev libuv1-dev libprotobuf-c-dev protobuf-c-compiler
    libcriterion-dev librdkafka-dev liblz4-dev libzstd-dev libsnappy-dev
    zlib1g-dev libisal-dev libssl-dev
    kcat python3 python3-confluent-kafka python3-kafka nodejs nftables
    golang-go golang-github-shopify-sarama-dev burrow zookeeper
    iproute2 chromium
    clang libclang-rt-dev clang-format
)

missing() {
    local p status
    for p in "${PACKAGES[@]}"; do
        status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
        case "$status" in
            *" installed") ;;
            *) printf '%s\n' "$p" ;;
        esac
    done
}

cmd=${1:-check}
mapfile -t need < <(missing)

case "$cmd" in
check)
    if [ ${#need[@]} -eq 0 ]; then
        exit 0
    fi
    echo "deps: missing Debian packages: ${need[*]}" >&2
    exit 1
    ;;
install)
    if [ ${#need[@]} -eq 0 ]; then
        echo "deps: all ${#PACKAGES[@]} packages present, nothing to install"
        exit 0
    fi
    line="apt-get install -y ${need[*]}"
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            SUDO=sudo
        else
            echo "deps: missing packages and not root; run:" >&2
            echo "    sudo apt-get update && sudo $line" >&2
            exit 1
        fi
    else
        SUDO=
    fi
    echo "deps: installing: ${need[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
    mapfile -t still < <(missing)
    if [ ${#still[@]} -ne 0 ]; then
        echo "deps: still missing after install: ${still[*]}" >&2
        exit 1
    fi
    echo "deps: done"
    ;;
*)
    echo "usage: $0 check|install" >&2
    exit 2
    ;;
esac
