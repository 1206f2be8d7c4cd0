/* Assertion failure: print where, then abort (common/assert.h). */
#include "common/assert.h"

#include <stdio.h>
#include <stdlib.h>

void (*assert_before_abort)(void);

void assert_fail(const char *expr, const char *file, int line)
{
    if (assert_before_abort != NULL) {
        assert_before_abort();
    }
    fprintf(stderr, "ASSERTION FAILED %s:%d: %s\n", file, line, expr);
    fflush(stderr);
    abort();
}
