/* Seed loop of the replication simulation (tests/sim/sim.h). Environment:
 * SEED=N replays one seed (SIM_TRACE=1 prints its events); otherwise
 * SEEDS=count seeds from SEED_BASE (default 1). Each run prints
 * `sim seed=N` before it starts, a violation with its step and time, and
 * a closing `sim_replication: N passed, M failed` line with seeds/s.
 * SIM_QUIET=1 prints only failing seeds (an assertion still names its
 * seed).
 *
 * Negative controls: SIM_UNSAFE_FSYNC=1 makes brokers count a failed
 * fdatasync as done, SIM_NO_CRC=1 serves frames without checking their
 * CRC. With SIM_EXPECT_CAUGHT=1 the run passes only if some seed fails:
 * the checks must catch what the control broke. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tests/sim/sim.h"

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

static volatile uint64_t current_seed;
static bool quiet;

/* An ASSERT in the model or the core aborts: say which seed it was. */
static void abort_cb(int sig)
{
    (void)sig;
    char buf[64];
    int k = snprintf(buf, sizeof buf, "\nsim seed=%" PRIu64 " aborted\n",
                     (uint64_t)current_seed);
    fflush(stdout);
    if (write(2, buf, (size_t)k) < 0) {
        _exit(134);
    }
}

/* Runs one seed; true when every check held. */
static bool run_seed(uint64_t seed, const struct sim_options *opt,
                     uint64_t *steps)
{
    bool trace = opt->trace;
    current_seed = seed;
    if (!quiet) {
        printf("sim seed=%" PRIu64, seed);
        fflush(stdout);
    }
    if (trace) {
        printf("\n");
    }
    static struct sim_world w;
    sim_world_init(&w, seed, opt);
    while (sim_world_step(&w)) {
    }
    sim_check_end(&w);
    *steps += w.step;
    if (w.failed) {
        if (quiet) {
            printf("sim seed=%" PRIu64, seed);
        }
        printf(" FAILED %s\n", w.why);
    } else if (!quiet) {
        printf(" ok steps=%" PRIu64 " produced=%" PRId64 " acked=%" PRId64
               " refused=%" PRId64 " truncated=%" PRId64 " crashes=%d"
               " (double %d) cutoffs=%d elections=%d leaders=%d"
               " isr_changes=%d disk_faults=%d rot=%d dir_failed=%d"
               " corrupt_found=%d offline_damaged=%d consumed=%" PRId64
               "\n",
               w.step, w.n_produced, w.n_acked, w.n_refused, w.n_truncated,
               w.n_crashes, w.n_double_crashes, w.n_isolations,
               w.n_elections, w.ctl.n_leader_changes, w.ctl.n_isr_changes,
               w.n_disk_faults, w.n_rot, w.n_dir_failed, w.n_corrupt_found,
               w.n_offline_damaged, w.n_consumed);
    }
    bool ok = !w.failed;
    sim_world_free(&w);
    return ok;
}

int main(void)
{
    bool one = getenv("SEED") != NULL && *getenv("SEED") != '\0';
    uint64_t base = one ? env_u64("SEED", 1) : env_u64("SEED_BASE", 1);
    uint64_t count = one ? 1 : env_u64("SEEDS", 2000);
    struct sim_options opt = {
        .trace = one && env_u64("SIM_TRACE", 0) != 0,
        .unsafe_fsync = env_u64("SIM_UNSAFE_FSYNC", 0) != 0,
        .no_crc = env_u64("SIM_NO_CRC", 0) != 0,
    };
    bool expect_caught = env_u64("SIM_EXPECT_CAUGHT", 0) != 0;
    quiet = !one && env_u64("SIM_QUIET", 0) != 0;
    signal(SIGABRT, abort_cb);
    int passed = 0;
    int failed = 0;
    uint64_t steps = 0;
    double t0 = now_s();
    for (uint64_t s = base; s < base + count; s++) {
        if (run_seed(s, &opt, &steps)) {
            passed++;
        } else {
            failed++;
        }
    }
    double dt = now_s() - t0;
    printf("sim_replication: %" PRIu64 " seeds in %.2f s, %.1f seeds/s, "
           "%.0f steps/s\n", count, dt, (double)count / dt,
           (double)steps / dt);
    printf("sim_replication: %d passed, %d failed\n", passed, failed);
    if (expect_caught) {
        printf("sim_replication: control %s\n",
               failed > 0 ? "caught" : "NOT caught");
        return failed > 0 ? 0 : 1;
    }
    return failed == 0 ? 0 : 1;
}
