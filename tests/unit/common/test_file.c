/* Tests for common/file.c: directories created by file_mkdirs() are made
 * durable (their parent fsync'd) before it returns. fsync(2) is spied on
 * for this test binary: the wrapper below records which directory each
 * fsync was for while a test asks it to, then calls the real one.
 * Checked files (file_write_checked/file_read_checked) read back what was
 * written, and a flipped, cut or garbage file is never taken as good. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file.h"
#include "common/io.h"
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
    io_fault_clear();
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

/* A new partition's directory under an existing log dir: one mkdir, and
 * its parent is synced. */
Test(file, mkdirs_of_only_the_last_directory_syncs_its_parent)
{
    char mid[4200];
    char leaf[4200];
    snprintf(mid, sizeof mid, "%s/logs", dir);
    snprintf(leaf, sizeof leaf, "%s/logs/t-0", dir);
    cr_assert_eq(file_mkdirs(mid), RC_OK);
    spy.on = true;
    cr_assert_eq(file_mkdirs(leaf), RC_OK);
    spy.on = false;
    struct stat st;
    cr_assert_eq(stat(leaf, &st), 0);
    cr_assert_eq(spy.n, 1, "%d fsyncs", spy.n);
    cr_assert(synced(mid), "the parent of t-0/ was not fsync'd");
}

#define TEXT "0\n12345\n"

static void write_raw(const char *name, const void *p, size_t n)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *out = fopen(path, "wb");
    cr_assert_not_null(out);
    cr_assert_eq(fwrite(p, 1, n, out), n);
    fclose(out);
}

static size_t read_raw(const char *name, char *buf, size_t cap)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *in = fopen(path, "rb");
    cr_assert_not_null(in);
    size_t n = fread(buf, 1, cap, in);
    fclose(in);
    return n;
}

Test(file, checked_file_reads_back_its_text_and_stays_readable)
{
    cr_assert_eq(file_write_checked(dir, "cp", TEXT, strlen(TEXT)), RC_OK);
    char raw[64] = {0};
    size_t n = read_raw("cp", raw, sizeof raw);
    cr_assert_eq(n, strlen(TEXT) + FILE_CHECK_LINE_BYTES);
    cr_assert_eq(strncmp(raw + strlen(TEXT), "crc32c ", 7), 0, "%s", raw);
    char buf[64];
    size_t len = 0;
    bool unchecked = true;
    cr_assert_eq(file_read_checked(dir, "cp", buf, sizeof buf, &len,
                                   &unchecked), RC_OK);
    cr_assert_not(unchecked);
    cr_assert_eq(len, strlen(TEXT));
    cr_assert_str_eq(buf, TEXT);
}

/* Every flipped bit and every cut is caught: RC_CORRUPT, or (when the
 * checksum line itself is hit or cut off whole) a file without one, which
 * the caller parses strictly: a flip leaves bytes the text does not have,
 * a cut whole lines of it only (the formats count their lines, so a
 * strict parse refuses a prefix). */
Test(file, every_flip_and_every_cut_of_a_checked_file_is_caught)
{
    cr_assert_eq(file_write_checked(dir, "cp", TEXT, strlen(TEXT)), RC_OK);
    char good[64];
    size_t n = read_raw("cp", good, sizeof good);
    for (size_t i = 0; i < n * 8; i++) {
        char bad[64];
        memcpy(bad, good, n);
        bad[i / 8] = (char)(bad[i / 8] ^ (1 << (i % 8)));
        write_raw("cp", bad, n);
        char buf[64];
        size_t len = 0;
        bool unchecked = false;
        int rv = file_read_checked(dir, "cp", buf, sizeof buf, &len,
                                   &unchecked);
        cr_assert(rv == RC_CORRUPT || (rv == RC_OK && unchecked &&
                                       strcmp(buf, TEXT) != 0),
                  "bit %zu: rv %d", i, rv);
    }
    for (size_t cut = 0; cut < n; cut++) {
        write_raw("cp", good, cut);
        char buf[64];
        size_t len = 0;
        bool unchecked = false;
        int rv = file_read_checked(dir, "cp", buf, sizeof buf, &len,
                                   &unchecked);
        cr_assert(rv == RC_CORRUPT ||
                      (rv == RC_OK && unchecked && len <= strlen(TEXT) &&
                       strncmp(buf, TEXT, len) == 0),
                  "cut at %zu: rv %d", cut, rv);
    }
}

Test(file, file_without_a_checksum_line_is_read_as_unchecked)
{
    write_raw("cp", TEXT, strlen(TEXT));
    char buf[64];
    size_t len = 0;
    bool unchecked = false;
    cr_assert_eq(file_read_checked(dir, "cp", buf, sizeof buf, &len,
                                   &unchecked), RC_OK);
    cr_assert(unchecked);
    cr_assert_str_eq(buf, TEXT);
    bool missing = false;
    cr_assert_eq(file_read_checked(dir, "none", buf, sizeof buf, &len,
                                   &missing), RC_NOT_FOUND);
}

Test(file, failed_checked_write_leaves_the_old_file)
{
    cr_assert_eq(file_write_checked(dir, "cp", TEXT, strlen(TEXT)), RC_OK);
    const char *specs[] = {"write:eio:path=cp", "rename:eio",
                           "sync:eio:path=cp"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        io_fault_clear();
        cr_assert_eq(io_fault_parse(specs[i]), RC_OK);
        cr_assert_neq(file_write_checked(dir, "cp", "0\n9\n", 4), RC_OK,
                      "%s", specs[i]);
        io_fault_clear();
        char buf[64];
        size_t len = 0;
        bool unchecked = true;
        cr_assert_eq(file_read_checked(dir, "cp", buf, sizeof buf, &len,
                                       &unchecked), RC_OK, "%s", specs[i]);
        cr_assert_not(unchecked);
        cr_assert_str_eq(buf, TEXT, "%s", specs[i]);
    }
}
