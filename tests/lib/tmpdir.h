/* Test helper: a fresh temporary directory per test, removed afterwards. */
#ifndef CAIRN_TESTS_TMPDIR_H
#define CAIRN_TESTS_TMPDIR_H

#include <stddef.h>

/* Creates $TMPDIR/cairn-test-XXXXXX (or /tmp); path has room for 4096. */
void tmpdir_make(char *path, size_t cap);
/* rm -r path. */
void tmpdir_remove(const char *path);

#endif
