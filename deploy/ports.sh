# Free ports for a cluster of deploy/cluster.sh, for the lessons
# (deploy/scenarios/) and the tests that start their own clusters.
# Source it; pick_base prints a base.

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A base port whose cluster ports (+91..93, +101..103, +201..203) are free,
# below the kernel's ephemeral range (so no outgoing connection holds one).
pick_base() {
    local base p ok
    for _ in $(seq 1 50); do
        base=$(( (RANDOM % 120) * 100 + 20000 ))
        ok=1
        for p in 91 92 93 101 102 103 201 202 203; do
            port_free $((base + p)) || { ok=0; break; }
        done
        [ $ok = 1 ] && { echo "$base"; return 0; }
    done
    return 1
}
