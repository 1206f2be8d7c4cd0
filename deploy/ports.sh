# Free ports for a cluster of deploy/cluster.sh, for the lessons
# (deploy/scenarios/) and the tests that start their own clusters.
# Source it; pick_base prints a base.

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A base port whose cluster ports are free (brokers +91..93, controller
# RPC +101..103, Raft +201..203, metrics +94..96 and +104..106, cairn web
# +90), below the kernel's ephemeral range (so no outgoing connection
# holds one).
pick_base() {
    local base p ok
    for _ in $(seq 1 50); do
        base=$(( (RANDOM % 120) * 100 + 20000 ))
        ok=1
        for p in 90 91 92 93 94 95 96 101 102 103 104 105 106 201 202 203; do
            port_free $((base + p)) || { ok=0; break; }
        done
        [ $ok = 1 ] && { echo "$base"; return 0; }
    done
    return 1
}
