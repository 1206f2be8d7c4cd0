#!/usr/bin/env bash
# Test hosts on this machine: network namespaces joined by one bridge, so
# that each Cairn node has its own address and the links between nodes
# can be cut (nftables inside each namespace). Root only. Nothing leaves
# the machine: the namespaces have no default route, the bridge no
# uplink.
#
#   deploy/netns.sh up NAME N        bridge NAME-br with 10.231.S.1/24 (S
#                                    from NAME), namespaces NAME-h1..hN at
#                                    10.231.S.11..; prints "hostI=ADDR"
#   deploy/netns.sh down NAME        removes them (and their rules)
#   deploy/netns.sh addr NAME I      host I's address
#   deploy/netns.sh exec NAME I CMD...   runs CMD inside host I
#   deploy/netns.sh cut NAME I ADDR...   host I drops packets to and from
#                                    each ADDR (both directions)
#   deploy/netns.sh cut-out NAME I ADDR...   only host I's packets to ADDR
#                                    (a one-way partition)
#   deploy/netns.sh heal NAME [I]    removes the cut rules (of host I)
#   deploy/netns.sh isolate NAME I   host I's bridge port goes down
#   deploy/netns.sh rejoin NAME I    and up again
set -euo pipefail

[ "$(id -u)" -eq 0 ] || { echo "netns.sh: needs root" >&2; exit 1; }

cmd=${1:-}
name=${2:-}
[ -n "$cmd" ] && [ -n "$name" ] || {
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}
case "$name" in
    *[!a-z0-9]*|"") echo "netns.sh: NAME must be [a-z0-9]+" >&2; exit 2 ;;
esac
[ ${#name} -le 8 ] || { echo "netns.sh: NAME at most 8 characters" >&2; exit 2; }

# The /24 of this set of hosts, from its name (10.231.1 to 10.231.250).
subnet() {
    local sum=0 i
    for ((i = 0; i < ${#name}; i++)); do
        sum=$(( (sum * 31 + $(printf '%d' "'${name:i:1}")) % 250 ))
    done
    echo "10.231.$((sum + 1))"
}
NET=$(subnet)
BR=$name-br
ns() { echo "$name-h$1"; }
addr() { echo "$NET.$((10 + $1))"; }

nft_in() {
    ip netns exec "$(ns "$1")" nft "${@:2}"
}

ensure_table() {
    nft_in "$1" list table inet cairn >/dev/null 2>&1 && return 0
    nft_in "$1" add table inet cairn
    nft_in "$1" add chain inet cairn out '{ type filter hook output priority 0; }'
    nft_in "$1" add chain inet cairn in '{ type filter hook input priority 0; }'
}

case "$cmd" in
up)
    n=${3:?N}
    ip link show "$BR" >/dev/null 2>&1 || {
        ip link add "$BR" type bridge
        ip addr add "$NET.1/24" dev "$BR"
        ip link set "$BR" up
    }
    for ((i = 1; i <= n; i++)); do
        h=$(ns "$i")
        if ! ip netns list | grep -qw "$h"; then
            ip netns add "$h"
            # A link left over from an earlier set whose namespace a
            # process still held.
            ip link del "$name-v$i" 2>/dev/null || true
            ip link add "$name-v$i" type veth peer name eth0 netns "$h"
            ip link set "$name-v$i" master "$BR" up
            ip netns exec "$h" ip addr add "$(addr "$i")/24" dev eth0
            ip netns exec "$h" ip link set eth0 up
            ip netns exec "$h" ip link set lo up
        fi
        echo "host$i=$(addr "$i")"
    done
    ;;
down)
    for h in $(ip netns list | awk '{print $1}' | grep "^$name-h[0-9]*$" || true); do
        ip netns del "$h"
    done
    # Host links outlive a namespace that a process still holds.
    for l in $(ip -br link | sed -n "s/^\($name-v[0-9]*\)@.*/\1/p"); do
        ip link del "$l" 2>/dev/null || true
    done
    ip link del "$BR" 2>/dev/null || true
    ;;
addr)
    addr "${3:?I}"
    ;;
exec)
    i=${3:?I}
    shift 3
    exec ip netns exec "$(ns "$i")" "$@"
    ;;
cut|cut-out)
    i=${3:?I}
    shift 3
    ensure_table "$i"
    for a in "$@"; do
        nft_in "$i" add rule inet cairn out ip daddr "$a" drop
        [ "$cmd" = cut ] && nft_in "$i" add rule inet cairn in ip saddr "$a" drop
    done
    ;;
heal)
    if [ -n "${3:-}" ]; then
        hosts=$3
    else
        hosts=$(ip netns list | awk '{print $1}' | sed -n "s/^$name-h\([0-9]*\)$/\1/p")
    fi
    for i in $hosts; do
        nft_in "$i" delete table inet cairn 2>/dev/null || true
    done
    ;;
isolate)
    ip link set "$name-v${3:?I}" down
    ;;
rejoin)
    ip link set "$name-v${3:?I}" up
    ;;
*)
    echo "netns.sh: unknown command $cmd" >&2
    exit 2
    ;;
esac
