/* The seed loop the simulations share: which seeds to run (SEEDS=<n>
 * SEED_BASE=<b>, or SEED=<n> alone to replay one), the count of those that
 * passed, and the closing lines: how many passed and how fast, a RESULT
 * line against the floor of 10 seeds a second, and for a negative control
 * (<PREFIX>_EXPECT_CAUGHT=1, a build with a planted bug) whether some seed
 * failed, as it must. */
#ifndef CAIRN_TESTS_SEED_LOOP_H
#define CAIRN_TESTS_SEED_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct seed_loop {
    const char *name;   /* "sim_brokers" */
    const char *prefix; /* "SIMB": its _TRACE and _EXPECT_CAUGHT switches */
    uint64_t base;
    uint64_t count;
    bool one;           /* SEED=<n>: one seed, told in full */
    bool trace;         /* <PREFIX>_TRACE=1 with SEED */
    double t0;
    int passed;
    int failed;
};

void seed_loop_init(struct seed_loop *l, const char *name,
                    const char *prefix, uint64_t default_count);
/* Prints the closing lines (totals: the simulation's own counts, one
 * line) and returns the process's exit status. */
int seed_loop_finish(struct seed_loop *l, const char *totals);

#endif
