/* The wall clock, for what is measured against record timestamps (ms since
 * the epoch). Loop time (uv_now) is monotonic and says nothing about the
 * date; code that must run under a simulated clock takes its time from its
 * caller instead of calling this. */
#ifndef CAIRN_COMMON_CLOCK_H
#define CAIRN_COMMON_CLOCK_H

#include <stdint.h>

/* CLOCK_REALTIME in ms since the epoch. */
int64_t clock_wall_ms(void);

#endif
