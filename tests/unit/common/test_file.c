/* Tests for common/file.c: directories created by file_mkdirs() are made
 * durable (their parent fsync'd) before it returns. fsync(2) is spied on
 * for this test binary: the wrapper below records which directory each
 * fsync was for while a test asks it to, then calls the real one. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file.h"
#include "common/rc.h"
#include "tests/lib/tmpdir.h"

#define SPY_PATHS_MAX 16

static struct {
    bool on;
    char paths[SPY_PATHS_MAX][PATH_MAX];
    int n;
} spy;

int fsync(int fd);

int fsync(int fd)
{
    static int (*real)(int);
    if (real == NULL) {
        *(void **)&real = dlsym(RTLD_NEXT, "fsync"); /* POSIX's idiom */
    }
    if (spy.on && spy.n < SPY_PATHS_MAX) {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, spy.paths[spy.n], PATH_MAX - 1);
        spy.paths[spy.n][n > 0 ? n : 0] = '\0';
        spy.n++;
    }
    return real(fd);
}

static bool synced(const char *path)
{
    char want[PATH_MAX];
    cr_assert_not_null(realpath(path, want), "%s", path);
    for (int i = 0; i < spy.n; i++) {
        if (strcmp(spy.paths[i], want) == 0) {
            return true;
        }
    }
    return false;
}

static char dir[4096];

static void setup(void)
{
    tmpdir_make(dir, sizeof dir);
    memset(&spy, 0, sizeof spy);
}

static void teardown(void)
{
    spy.on = false;
    tmpdir_remove(dir);
}

TestSuite(file, .init = setup, .fini = teardown);

Test(file, mkdirs_syncs_the_parent_of_every_directory_it_creates)
{
    char leaf[4200];
    char mid[4200];
    snprintf(mid, sizeof mid, "%s/logs", dir);
    snprintf(leaf, sizeof leaf, "%s/logs/topic-0", dir);
    spy.on = true;
    cr_assert_eq(file_mkdirs(leaf), RC_OK);
    spy.on = false;
    struct stat st;
    cr_assert_eq(stat(leaf, &st), 0);
    cr_assert(synced(dir), "the parent of logs/ was not fsync'd");
    cr_assert(synced(mid), "the parent of topic-0/ was not fsync'd");
}

Test(file, mkdirs_of_existing_directories_syncs_nothing)
{
    char leaf[4200];
    snprintf(leaf, sizeof leaf, "%s/a/b", dir);
    cr_assert_eq(file_mkdirs(leaf), RC_OK);
    spy.on = true;
    cr_assert_eq(file_mkdirs(leaf), RC_OK);
    spy.on = false;
    cr_assert_eq(spy.n, 0, "%d fsyncs", spy.n);
}
