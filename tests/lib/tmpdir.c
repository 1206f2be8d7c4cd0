/* Test helper: temporary directories (tests/lib/tmpdir.h). */
#include "tests/lib/tmpdir.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/assert.h"

void tmpdir_make(char *path, size_t cap)
{
    const char *base = getenv("TMPDIR");
    int n = snprintf(path, cap, "%s/cairn-test-XXXXXX",
                     base != NULL && base[0] != '\0' ? base : "/tmp");
    ASSERT(n > 0 && (size_t)n < cap);
    ASSERT(mkdtemp(path) != NULL);
}

static int remove_cb(const char *path, const struct stat *st, int flag,
                     struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void tmpdir_remove(const char *path)
{
    nftw(path, remove_cb, 16, FTW_DEPTH | FTW_PHYS);
}
