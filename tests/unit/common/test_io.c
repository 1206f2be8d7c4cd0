/* Tests for common/io.c: with no fault armed the calls do what the system
 * calls do; each fault kind hits the call it names, after the calls it
 * lets pass, as many times as it says, only on files whose path matches,
 * and only once released when it waits for SIGUSR2. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"
#include "common/rc.h"
#include "tests/lib/tmpdir.h"

static char dir[4096];

static void setup(void)
{
    io_fault_clear();
    tmpdir_make(dir, sizeof dir);
}

static void teardown(void)
{
    io_fault_clear();
    tmpdir_remove(dir);
}

static int open_in(const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = io_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    cr_assert_geq(fd, 0);
    return fd;
}

TestSuite(io, .init = setup, .fini = teardown);

Test(io, without_faults_calls_do_what_the_system_does)
{
    int fd = open_in("a.log");
    cr_assert_eq(io_pwrite(fd, "hello", 5, 0), 5);
    cr_assert_eq(io_fdatasync(fd), 0);
    char buf[8] = {0};
    cr_assert_eq(io_pread(fd, buf, 5, 0), 5);
    cr_assert_str_eq(buf, "hello");
    cr_assert_eq(io_ftruncate(fd, 2), 0);
    cr_assert_eq(io_pread(fd, buf, 5, 0), 2);
    cr_assert_eq(io_close(fd), 0);
}

Test(io, sync_fails_after_the_calls_it_lets_pass)
{
    cr_assert_eq(io_fault_parse("sync:eio:after=2:times=1"), RC_OK);
    int fd = open_in("a.log");
    cr_assert_eq(io_fdatasync(fd), 0);
    cr_assert_eq(io_fsync(fd), 0);
    errno = 0;
    cr_assert_eq(io_fdatasync(fd), -1);
    cr_assert_eq(errno, EIO);
    cr_assert_eq(io_fdatasync(fd), 0, "times=1: spent after one hit");
    cr_assert_eq(io_fault_hits(0), 1);
    io_close(fd);
}

Test(io, a_path_limits_a_fault_to_the_files_opened_under_it)
{
    cr_assert_eq(io_fault_parse("write:enospc:path=.log"), RC_OK);
    int seg = open_in("0.log");
    int idx = open_in("0.index");
    cr_assert_eq(io_pwrite(idx, "x", 1, 0), 1);
    errno = 0;
    cr_assert_eq(io_pwrite(seg, "x", 1, 0), -1);
    cr_assert_eq(errno, ENOSPC);
    io_close(seg);
    io_close(idx);
}

Test(io, a_short_write_stores_half_then_fails)
{
    cr_assert_eq(io_fault_parse("write:short:times=1"), RC_OK);
    int fd = open_in("a.log");
    errno = 0;
    cr_assert_eq(io_pwrite(fd, "abcdefgh", 8, 0), -1);
    cr_assert_eq(errno, ENOSPC);
    char buf[16];
    cr_assert_eq(io_pread(fd, buf, sizeof buf, 0), 4, "torn: half landed");
    cr_assert_eq(memcmp(buf, "abcd", 4), 0);
    io_close(fd);
}

Test(io, flips_a_bit_of_what_is_read_or_written)
{
    int fd = open_in("a.log");
    cr_assert_eq(io_pwrite(fd, "aaaa", 4, 0), 4);
    cr_assert_eq(io_fault_parse("read:flip:times=1"), RC_OK);
    char buf[4];
    cr_assert_eq(io_pread(fd, buf, 4, 0), 4);
    cr_assert_neq(memcmp(buf, "aaaa", 4), 0, "the read saw a flipped bit");
    cr_assert_eq(io_pread(fd, buf, 4, 0), 4);
    cr_assert_eq(memcmp(buf, "aaaa", 4), 0, "the file itself is intact");

    io_fault_clear();
    cr_assert_eq(io_fault_parse("write:flip:times=1"), RC_OK);
    cr_assert_eq(io_pwrite(fd, "bbbb", 4, 0), 4);
    io_fault_clear();
    cr_assert_eq(io_pread(fd, buf, 4, 0), 4);
    cr_assert_neq(memcmp(buf, "bbbb", 4), 0, "the stored bytes differ");
    io_close(fd);
}

Test(io, a_held_fault_waits_for_its_release)
{
    cr_assert_eq(io_fault_parse("sync:eio:armed=sigusr2"), RC_OK);
    int fd = open_in("a.log");
    cr_assert_eq(io_fdatasync(fd), 0);
    io_fault_release(SIGUSR1);
    cr_assert_eq(io_fdatasync(fd), 0, "held for the other signal");
    io_fault_release(SIGUSR2);
    cr_assert_eq(io_fdatasync(fd), -1);
    cr_assert_eq(io_fdatasync(fd), -1, "no times: every call after");
    io_close(fd);
}

Test(io, the_environment_arms_faults_and_sigusr2_releases_them)
{
    setenv("CAIRN_IO_FAULTS", "sync:eio:armed=sigusr2", 1);
    cr_assert_eq(io_fault_from_env(), RC_OK);
    unsetenv("CAIRN_IO_FAULTS");
    int fd = open_in("a.log");
    cr_assert_eq(io_fdatasync(fd), 0);
    cr_assert_eq(raise(SIGUSR2), 0);
    cr_assert_eq(io_fdatasync(fd), -1);
    io_close(fd);
}

Test(io, bad_specs_are_refused_and_arm_nothing)
{
    const char *bad[] = {
        "sync", "sync:", "fsync:eio", "sync:ebadf", "sync:flip",
        "sync:eio:after=-1", "sync:eio:after=x", "sync:eio:bogus=1",
        "sync:eio:path=", "sync:eio:armed=sighup",
        "sync:eio;write:eio;read:eio;open:eio;rename:eio;unlink:eio;"
        "truncate:eio;sync:eio;write:eio",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(io_fault_parse(bad[i]), RC_INVALID, "%s", bad[i]);
    }
    int fd = open_in("a.log");
    cr_assert_eq(io_fdatasync(fd), 0, "nothing was armed");
    io_close(fd);
}

Test(io, open_rename_and_unlink_fail_as_told)
{
    cr_assert_eq(io_fault_parse("open:eio:path=b.log;rename:erofs;"
                                "unlink:eio"), RC_OK);
    char path[4200];
    snprintf(path, sizeof path, "%s/b.log", dir);
    errno = 0;
    cr_assert_eq(io_open(path, O_RDWR | O_CREAT, 0644), -1);
    cr_assert_eq(errno, EIO);
    int fd = open_in("a.log");
    char from[4200];
    snprintf(from, sizeof from, "%s/a.log", dir);
    errno = 0;
    cr_assert_eq(io_rename(from, path), -1);
    cr_assert_eq(errno, EROFS);
    cr_assert_eq(io_unlink(from), -1);
    cr_assert_eq(access(from, F_OK), 0, "still there");
    io_close(fd);
}

/* For I/O outside the seam (libraft's): a rule hits by path, counts as a
 * call of its kind, and gives its errno. */
Test(io, a_check_by_path_hits_like_a_call)
{
    cr_assert_eq(io_fault_parse("write:enospc:path=meta:after=1:times=1"),
                 RC_OK);
    int err = 0;
    cr_assert_not(io_fault_check(IO_OP_WRITE, "/d/logs", &err));
    cr_assert_not(io_fault_check(IO_OP_WRITE, "/d/meta", &err), "passes");
    cr_assert_not(io_fault_check(IO_OP_SYNC, "/d/meta", &err), "not a sync");
    cr_assert(io_fault_check(IO_OP_WRITE, "/d/meta", &err));
    cr_assert_eq(err, ENOSPC);
    cr_assert_not(io_fault_check(IO_OP_WRITE, "/d/meta", &err), "spent");
    cr_assert_eq(io_fault_hits(0), 1);
}

/* On the system's disk: a deferred fdatasync is not done (a power loss
 * takes the file), a syncfs of the directory does it for every file. */
Test(io, deferred_syncs_are_left_to_one_syncfs)
{
    io_journal_begin();
    io_sync_defer_begin();
    int fd = open_in("a.log");
    cr_assert_eq(io_pwrite(fd, "hello", 5, 0), 5);
    cr_assert_eq(io_fdatasync(fd), 0);
    cr_assert(io_sync_defer_end());
    cr_assert_eq(io_close(fd), 0);
    io_journal_crash();
    char path[4200];
    snprintf(path, sizeof path, "%s/a.log", dir);
    cr_assert_eq(io_open(path, O_RDONLY, 0), -1, "never synced: gone");

    io_journal_begin();
    io_sync_defer_begin();
    fd = open_in("b.log");
    cr_assert_eq(io_pwrite(fd, "hello", 5, 0), 5);
    cr_assert_eq(io_fdatasync(fd), 0);
    cr_assert(io_sync_defer_end());
    int dfd = io_open(dir, O_RDONLY | O_DIRECTORY, 0);
    cr_assert_geq(dfd, 0);
    cr_assert_eq(io_syncfs(dfd), 0);
    cr_assert_eq(io_close(dfd), 0);
    cr_assert_eq(io_close(fd), 0);
    io_journal_crash();
    snprintf(path, sizeof path, "%s/b.log", dir);
    fd = io_open(path, O_RDONLY, 0);
    cr_assert_geq(fd, 0, "the syncfs made it durable");
    char buf[8] = {0};
    cr_assert_eq(io_pread(fd, buf, 8, 0), 5);
    cr_assert_eq(io_close(fd), 0);
}

Test(io, a_syncfs_meets_the_sync_faults)
{
    cr_assert_eq(io_fault_parse("sync:eio"), RC_OK);
    int dfd = io_open(dir, O_RDONLY | O_DIRECTORY, 0);
    cr_assert_geq(dfd, 0);
    cr_assert_eq(io_syncfs(dfd), -1);
    cr_assert_eq(errno, EIO);
    cr_assert_eq(io_close(dfd), 0);
}

#define LISTED_FILES 600 /* ~48 KiB of entries: several reads */
#define LISTED_NAME "file-with-a-long-name-to-fill-the-buffer-%d"

struct listed {
    int n;
    bool seen[LISTED_FILES];
    bool other;
};

static void list_cb(void *arg, const char *name)
{
    struct listed *l = arg;
    int i = -1;
    if (sscanf(name, LISTED_NAME, &i) == 1 && i >= 0 && i < LISTED_FILES &&
        !l->seen[i]) {
        l->seen[i] = true;
        l->n++;
    } else {
        l->other = true; /* ".", "..", or a name twice */
    }
}

Test(io, a_listing_names_every_entry_once_past_one_buffer)
{
    for (int i = 0; i < LISTED_FILES; i++) {
        char name[96];
        snprintf(name, sizeof name, LISTED_NAME, i);
        cr_assert_eq(io_close(open_in(name)), 0);
    }
    static struct listed l;
    memset(&l, 0, sizeof l);
    cr_assert_eq(io_list_dir(dir, list_cb, &l), 0);
    cr_assert_eq(l.n, LISTED_FILES);
    cr_assert_not(l.other, "only the files, each once");

    char missing[4200];
    snprintf(missing, sizeof missing, "%s/none", dir);
    memset(&l, 0, sizeof l);
    errno = 0;
    cr_assert_eq(io_list_dir(missing, list_cb, &l), -1);
    cr_assert_eq(errno, ENOENT);
    cr_assert_eq(l.n, 0);
}
