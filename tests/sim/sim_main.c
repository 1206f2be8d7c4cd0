/* Seed loop of the replication simulation (tests/sim/sim.h). Environment:
 * SEED=N replays one seed (SIM_TRACE=1 prints its events); otherwise
 * SEEDS=count seeds from SEED_BASE (default 1). Each run prints
 * `sim seed=N` before it starts, a violation with its step and time, and
 * a closing `sim_replication: N passed, M failed` line with seeds/s.
 * SIM_QUIET=1 prints only failing seeds (an assertion still names its
 * seed). */
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
static bool run_seed(uint64_t seed, bool trace, uint64_t *steps)
{
    current_seed = seed;
    if (!quiet) {
        printf("sim seed=%" PRIu64, seed);
        fflush(stdout);
    }
    if (trace) {
        printf("\n");
    }
    static struct sim_world w;
    sim_world_init(&w, seed, trace);
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
               " isr_changes=%d\n",
               w.step, w.n_produced, w.n_acked, w.n_refused, w.n_truncated,
               w.n_crashes, w.n_double_crashes, w.n_isolations,
               w.n_elections, w.ctl.n_leader_changes, w.ctl.n_isr_changes);
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
    bool trace = one && env_u64("SIM_TRACE", 0) != 0;
    quiet = !one && env_u64("SIM_QUIET", 0) != 0;
    signal(SIGABRT, abort_cb);
    int passed = 0;
    int failed = 0;
    uint64_t steps = 0;
    double t0 = now_s();
    for (uint64_t s = base; s < base + count; s++) {
        if (run_seed(s, trace, &steps)) {
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
    return failed == 0 ? 0 : 1;
}
