/* Assertion failure: print where, then abort (common/assert.h). */
#include "common/assert.h"
#include "common/trace.h"

#include <stdio.h>
#include <stdlib.h>

void assert_fail(const char *expr, const char *file, int line)
{
    trace_batch_flush();
    fprintf(stderr, "ASSERTION FAILED %s:%d: %s\n", file, line, expr);
    fflush(stderr);
    abort();
}
