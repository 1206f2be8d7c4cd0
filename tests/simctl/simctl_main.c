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

#include "tests/lib/seed_loop.h"
#include "tests/simctl/simctl.h"

int main(void)
{
    struct seed_loop l;
    seed_loop_init(&l, "sim_controllers", "SIMCTL", 100);
    static struct simctl s;
    long proposals = 0;
    long kills = 0;
    long crashes = 0;
    long alters = 0;
    for (uint64_t seed = l.base; seed < l.base + l.count; seed++) {
        if (simctl_run(&s, seed, l.trace)) {
            l.passed++;
        } else {
            l.failed++;
            printf("simctl seed=%" PRIu64 " FAILED: %s (replay with "
                   "SEED=%" PRIu64 ")\n", seed, s.why, seed);
        }
        proposals += s.q.n_proposals;
        kills += s.n_kills;
        crashes += s.n_broker_crashes;
        alters += s.n_alters;
        if (l.one) {
            printf("simctl seed=%" PRIu64 " proposals=%d failed_proposals=%d"
                   " controller_kills=%d net_partitions=%d broker_crashes=%d"
                   " alters=%d elections=%d epochs=%zu\n", seed,
                   s.q.n_proposals, s.q.n_lost, s.n_kills,
                   s.n_partitions_net, s.n_broker_crashes, s.n_alters,
                   s.n_elections, s.n_epochs);
        }
    }
    char totals[256];
    snprintf(totals, sizeof totals, "proposals=%ld controller_kills=%ld "
             "broker_crashes=%ld alters=%ld", proposals, kills, crashes,
             alters);
    return seed_loop_finish(&l, totals);
}
