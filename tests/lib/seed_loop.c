/* The simulations' seed loop (tests/lib/seed_loop.h). */
#include "tests/lib/seed_loop.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

static bool env_on(const char *prefix, const char *what)
{
    char name[64];
    snprintf(name, sizeof name, "%s_%s", prefix, what);
    return env_u64(name, 0) != 0;
}

void seed_loop_init(struct seed_loop *l, const char *name,
                    const char *prefix, uint64_t default_count)
{
    const char *seed = getenv("SEED");
    *l = (struct seed_loop){.name = name, .prefix = prefix};
    l->one = seed != NULL && *seed != '\0';
    l->base = l->one ? env_u64("SEED", 1) : env_u64("SEED_BASE", 1);
    l->count = l->one ? 1 : env_u64("SEEDS", default_count);
    l->trace = l->one && env_on(prefix, "TRACE");
    l->t0 = now_s();
}

int seed_loop_finish(struct seed_loop *l, const char *totals)
{
    double dt = now_s() - l->t0;
    double rate = dt > 0 ? (double)l->count / dt : 0.0;
    printf("%s: %" PRIu64 " seeds in %.2f s, %.1f seeds/s; %s\n", l->name,
           l->count, dt, rate, totals);
    printf("%s: %d passed, %d failed\n", l->name, l->passed, l->failed);
    /* The floor: whole-cluster seeds at 10 a second or more. */
    printf("RESULT bench=%s seeds=%" PRIu64 " seconds=%.2f seeds_per_s=%.1f "
           "floor=10 ratio=%.1f met=%s\n", l->name, l->count, dt, rate,
           rate / 10.0, rate >= 10.0 ? "yes" : "no");
    if (env_on(l->prefix, "EXPECT_CAUGHT")) {
        printf("%s: control %s\n", l->name,
               l->failed > 0 ? "caught" : "NOT caught");
        return l->failed > 0 ? 0 : 1;
    }
    return l->failed == 0 ? 0 : 1;
}
