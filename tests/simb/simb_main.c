/* The broker simulation's seed loop (tests/simb/simb.h).
 *
 *     SEEDS=<n> SEED_BASE=<b>   run n seeds from b (default 20 from 1)
 *     SEED=<n>                  replay one seed; SIMB_TRACE=1 prints its
 *                               events and the brokers' log lines
 *     SIMB_EXPECT_CAUGHT=1      a negative control (a build with a planted
 *                               bug): passes only if some seed fails */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tests/simb/simb.h"

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? strtoull(v, NULL, 10) : dflt;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
    const char *seed_env = getenv("SEED");
    bool one = seed_env != NULL && *seed_env != '\0';
    uint64_t base = one ? env_u64("SEED", 1) : env_u64("SEED_BASE", 1);
    uint64_t count = one ? 1 : env_u64("SEEDS", 20);
    bool trace = one && env_u64("SIMB_TRACE", 0) != 0;
    static struct simb_world w;
    int passed = 0;
    int failed = 0;
    long crashes = 0;
    long dir_failed = 0;
    long ctl_kills = 0;
    long elections = 0;
    long acked = 0;
    double t0 = now_s();
    for (uint64_t seed = base; seed < base + count; seed++) {
        if (simb_run(&w, seed, trace)) {
            passed++;
        } else {
            failed++;
            printf("simb seed=%" PRIu64 " FAILED: %s (replay with SEED=%"
                   PRIu64 ")\n", seed, w.why, seed);
        }
        crashes += w.n_crashes;
        dir_failed += w.n_dir_failed;
        ctl_kills += w.n_controller_kills;
        elections += w.n_elections;
        for (int k = 0; k < SIMB_PARTITIONS; k++) {
            acked += (long)w.n_acks[k];
        }
        if (one) {
            printf("simb seed=%" PRIu64 " produced=%d refused=%d "
                   "acked=%zu+%zu crashes=%d disk_faults=%d dir_failed=%d "
                   "controller_kills=%d reassignments=%d proposals=%d "
                   "elections=%d "
                   "fetched=%" PRId64 "\n", seed, w.n_produced,
                   w.n_refused, w.n_acks[0], w.n_acks[1], w.n_crashes,
                   w.n_disk_faults, w.n_dir_failed, w.n_controller_kills,
                   w.n_reassignments,
                   w.q.n_proposals, w.n_elections, w.n_fetched_bytes);
        }
    }
    double dt = now_s() - t0;
    printf("sim_brokers: %" PRIu64 " seeds in %.2f s, %.1f seeds/s; "
           "acked=%ld crashes=%ld dir_failed=%ld controller_kills=%ld "
           "elections=%ld\n", count, dt, dt > 0 ? (double)count / dt : 0.0,
           acked, crashes, dir_failed, ctl_kills, elections);
    printf("sim_brokers: %d passed, %d failed\n", passed, failed);
    /* The floor: whole-cluster seeds at 10 a second or more. */
    double rate = dt > 0 ? (double)count / dt : 0.0;
    printf("RESULT bench=sim_brokers seeds=%" PRIu64 " seconds=%.2f seeds_per_s=%.1f "
           "floor=10 ratio=%.1f met=%s\n", count, dt, rate, rate / 10.0,
           rate >= 10.0 ? "yes" : "no");
    if (env_u64("SIMB_EXPECT_CAUGHT", 0) != 0) {
        printf("sim_brokers: control %s\n",
               failed > 0 ? "caught" : "NOT caught");
        return failed > 0 ? 0 : 1;
    }
    return failed == 0 ? 0 : 1;
}
