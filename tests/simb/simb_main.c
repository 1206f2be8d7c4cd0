/* The broker simulation's seed loop (tests/simb/simb.h).
 *
 *     SEEDS=<n> SEED_BASE=<b>   run n seeds from b (default 20 from 1)
 *     SEED=<n>                  replay one seed; SIMB_TRACE=1 prints its
 *                               events and the brokers' log lines
 *     SIMB_EXPECT_CAUGHT=1      a negative control (a build with a planted
 *                               bug): passes only if some seed fails */
#include <inttypes.h>
#include <stdio.h>

#include "broker/log/log.h"
#include "tests/lib/seed_loop.h"
#include "tests/simb/simb.h"

int main(void)
{
    struct seed_loop l;
    seed_loop_init(&l, "sim_brokers", "SIMB", 20);
    static struct simb_world w;
    long crashes = 0;
    long dir_failed = 0;
    long ctl_kills = 0;
    long elections = 0;
    long acked = 0;
    long consumed = 0;
    long rot = 0;
    long found = 0;
    long disk_faults = 0;
    for (uint64_t seed = l.base; seed < l.base + l.count; seed++) {
        if (simb_run(&w, seed, l.trace)) {
            l.passed++;
        } else {
            l.failed++;
            printf("simb seed=%" PRIu64 " FAILED: %s (replay with SEED=%"
                   PRIu64 ")\n", seed, w.why, seed);
        }
        crashes += w.n_crashes;
        dir_failed += w.n_dir_failed;
        ctl_kills += w.n_controller_kills;
        elections += w.n_elections;
        consumed += w.n_consumed;
        rot += w.n_rot;
        found += w.n_corrupt_found;
        disk_faults += w.n_disk_faults;
        for (int k = 0; k < SIMB_PARTITIONS; k++) {
            acked += (long)w.n_acks[k];
        }
        if (l.one) {
            printf("simb seed=%" PRIu64 " produced=%d refused=%d "
                   "acked=%zu+%zu acks1=%d consumed=%ld crashes=%d "
                   "disk_faults=%d dir_failed=%d "
                   "controller_kills=%d reassignments=%d proposals=%d "
                   "elections=%d fetched=%" PRId64 "\n", seed, w.n_produced,
                   w.n_refused, w.n_acks[0], w.n_acks[1], w.n_acked_weak,
                   w.n_consumed, w.n_crashes,
                   w.n_disk_faults, w.n_dir_failed, w.n_controller_kills,
                   w.n_reassignments, w.q.n_proposals, w.n_elections,
                   w.n_fetched_bytes);
        }
    }
    char totals[320];
    snprintf(totals, sizeof totals, "acked=%ld consumed=%ld crashes=%ld "
             "disk_faults=%ld rot=%ld corrupt_found=%ld dir_failed=%ld "
             "controller_kills=%ld elections=%ld log_reopens=%" PRIu64,
             acked, consumed, crashes, disk_faults, rot, found, dir_failed,
             ctl_kills, elections, log_fds_reopens());
    return seed_loop_finish(&l, totals);
}
