/* The controller simulation's seed loop (tests/simctl/simctl.h).
 *
 *     SEEDS=<n> SEED_BASE=<b>   run n seeds from b (default 100 from 1)
 *     SEED=<n>                  replay one seed; SIMCTL_TRACE=1 prints its
 *                               events
 *     SIMCTL_EXPECT_CAUGHT=1    a negative control (a build with a planted
 *                               bug): passes only if some seed fails
 *
 * Prints one line per failed seed, then how many passed and how fast. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tests/simctl/simctl.h"

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
    uint64_t count = one ? 1 : env_u64("SEEDS", 100);
    bool trace = one && env_u64("SIMCTL_TRACE", 0) != 0;
    static struct simctl s;
    int passed = 0;
    int failed = 0;
    long proposals = 0;
    long kills = 0;
    long crashes = 0;
    long alters = 0;
    double t0 = now_s();
    for (uint64_t seed = base; seed < base + count; seed++) {
        if (simctl_run(&s, seed, trace)) {
            passed++;
        } else {
            failed++;
            printf("simctl seed=%" PRIu64 " FAILED: %s (replay with "
                   "SEED=%" PRIu64 ")\n", seed, s.why, seed);
        }
        proposals += s.q.n_proposals;
        kills += s.n_kills;
        crashes += s.n_broker_crashes;
        alters += s.n_alters;
        if (one) {
            printf("simctl seed=%" PRIu64 " proposals=%d failed_proposals=%d"
                   " controller_kills=%d net_partitions=%d broker_crashes=%d"
                   " alters=%d elections=%d epochs=%zu\n", seed,
                   s.q.n_proposals, s.q.n_lost, s.n_kills,
                   s.n_partitions_net, s.n_broker_crashes, s.n_alters,
                   s.n_elections, s.n_epochs);
        }
    }
    double dt = now_s() - t0;
    printf("sim_controllers: %" PRIu64 " seeds in %.2f s, %.1f seeds/s; "
           "proposals=%ld controller_kills=%ld broker_crashes=%ld "
           "alters=%ld\n", count, dt, dt > 0 ? (double)count / dt : 0.0,
           proposals, kills, crashes, alters);
    printf("sim_controllers: %d passed, %d failed\n", passed, failed);
    /* The floor: whole-cluster seeds at 10 a second or more. */
    double rate = dt > 0 ? (double)count / dt : 0.0;
    printf("RESULT bench=sim_controllers seeds=%" PRIu64 " seconds=%.2f seeds_per_s=%.1f "
           "floor=10 ratio=%.1f met=%s\n", count, dt, rate, rate / 10.0,
           rate >= 10.0 ? "yes" : "no");
    if (env_u64("SIMCTL_EXPECT_CAUGHT", 0) != 0) {
        printf("sim_controllers: control %s\n",
               failed > 0 ? "caught" : "NOT caught");
        return failed > 0 ? 0 : 1;
    }
    return failed == 0 ? 0 : 1;
}
