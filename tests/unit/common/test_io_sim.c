/* Tests for common/io_sim.c, the simulated disk behind the I/O seam: what
 * reads see, what a power loss leaves (synced bytes, durable names), what
 * a failed sync costs (fsyncgate: a hole once a later sync succeeds), bit
 * rot, and the seam's faults on simulated paths. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "common/io.h"
#include "common/io_sim.h"
#include "common/rc.h"

static struct io_sim *disk;

static void setup(void)
{
    io_fault_clear();
    cr_assert_eq(io_sim_new(&disk), RC_OK);
    io_sim_install(disk);
}

static void teardown(void)
{
    io_fault_clear();
    io_sim_uninstall();
    io_sim_free(disk);
}

TestSuite(io_sim, .init = setup, .fini = teardown);

/* Opens path (created) and makes its name durable. */
static int open_durable(const char *path)
{
    int fd = io_open(path, O_RDWR | O_CREAT, 0644);
    cr_assert_geq(fd, IO_SIM_FD_BASE);
    int dfd = io_open("d", O_RDONLY | O_DIRECTORY, 0);
    cr_assert_geq(dfd, 0);
    cr_assert_eq(io_fsync(dfd), 0);
    cr_assert_eq(io_close(dfd), 0);
    return fd;
}

static void read_is(int fd, off_t at, const char *want)
{
    char buf[64] = {0};
    size_t n = strlen(want);
    cr_assert_eq(io_pread(fd, buf, n, at), (ssize_t)n);
    cr_assert_eq(memcmp(buf, want, n), 0, "read %.*s, want %s", (int)n, buf,
                 want);
}

Test(io_sim, reads_see_every_write_at_once)
{
    int fd = io_open("d/a", O_RDWR | O_CREAT, 0644);
    cr_assert_eq(io_pwrite(fd, "hello", 5, 0), 5);
    cr_assert_eq(io_write(fd, "xy", 2), 2); /* at the fd's position, 0 */
    read_is(fd, 0, "xyllo");
    char buf[8];
    cr_assert_eq(io_read(fd, buf, 3), 3); /* position 2 after the write */
    cr_assert_eq(memcmp(buf, "llo", 3), 0);
    cr_assert_eq(io_pread(fd, buf, 8, 5), 0);
    cr_assert_eq(io_ftruncate(fd, 2), 0);
    cr_assert_eq(io_pread(fd, buf, 8, 0), 2);
    cr_assert_eq(io_close(fd), 0);
    cr_assert_eq(io_pread(fd, buf, 1, 0), -1);
    cr_assert_eq(errno, EBADF);
    cr_assert_eq(io_open("d/none", O_RDONLY, 0), -1);
    cr_assert_eq(errno, ENOENT);
}

Test(io_sim, a_power_loss_keeps_synced_bytes_under_durable_names)
{
    int fd = io_open("e/new", O_RDWR | O_CREAT, 0644);
    cr_assert_eq(io_pwrite(fd, "abc", 3, 0), 3);
    cr_assert_eq(io_fdatasync(fd), 0); /* its name is not durable yet */
    int kept = open_durable("d/kept");
    cr_assert_eq(io_pwrite(kept, "12345", 5, 0), 5);
    cr_assert_eq(io_fdatasync(kept), 0);
    cr_assert_eq(io_pwrite(kept, "67", 2, 5), 2); /* never synced */
    cr_assert_eq(io_pwrite(kept, "X", 1, 0), 1);  /* neither */
    int64_t cached = 0;
    int64_t durable = 0;
    cr_assert_eq(io_sim_sizes(disk, "d/kept", &cached, &durable), RC_OK);
    cr_assert_eq(cached, 7);
    cr_assert_eq(durable, 5);

    io_sim_power_loss(disk, "");
    cr_assert_eq(io_pread(kept, &cached, 1, 0), -1, "fds die with it");
    cr_assert_eq(io_open("e/new", O_RDONLY, 0), -1);
    cr_assert_eq(errno, ENOENT);
    fd = io_open("d/kept", O_RDONLY, 0);
    cr_assert_geq(fd, 0);
    char buf[8];
    cr_assert_eq(io_pread(fd, buf, 8, 0), 5);
    cr_assert_eq(memcmp(buf, "12345", 5), 0);
}

Test(io_sim, a_power_loss_spares_other_paths)
{
    int a = open_durable("d/a");
    int fd = io_open("e/b", O_RDWR | O_CREAT, 0644);
    cr_assert_eq(io_pwrite(a, "aa", 2, 0), 2);
    cr_assert_eq(io_pwrite(fd, "bb", 2, 0), 2);
    io_sim_power_loss(disk, "d/");
    read_is(fd, 0, "bb");
    int64_t cached = 0;
    int64_t durable = 0;
    cr_assert_eq(io_sim_sizes(disk, "d/a", &cached, &durable), RC_OK);
    cr_assert_eq(cached, 0);
}

Test(io_sim, a_failed_sync_loses_its_writes_and_a_later_sync_leaves_a_hole)
{
    int fd = open_durable("d/log");
    cr_assert_eq(io_pwrite(fd, "AAAA", 4, 0), 4);
    cr_assert_eq(io_fdatasync(fd), 0);
    cr_assert_eq(io_pwrite(fd, "BBBB", 4, 4), 4);
    cr_assert_eq(io_fault_parse("sync:eio:times=1"), RC_OK);
    cr_assert_eq(io_fdatasync(fd), -1);
    cr_assert_eq(errno, EIO);
    read_is(fd, 4, "BBBB"); /* the cache still shows them */
    cr_assert_eq(io_pwrite(fd, "CCCC", 4, 8), 4);
    cr_assert_eq(io_fdatasync(fd), 0, "a retried sync succeeds");

    io_sim_power_loss(disk, "d/");
    fd = io_open("d/log", O_RDONLY, 0);
    char buf[12];
    cr_assert_eq(io_pread(fd, buf, 12, 0), 12);
    cr_assert_eq(memcmp(buf, "AAAA\0\0\0\0CCCC", 12), 0);
}

Test(io_sim, rot_flips_a_durable_byte_for_every_later_read)
{
    int fd = open_durable("d/seg");
    cr_assert_eq(io_pwrite(fd, "abcd", 4, 0), 4);
    cr_assert_eq(io_sim_rot(disk, "d/seg", 1, 0x01), RC_NOT_FOUND,
                 "nothing durable yet");
    cr_assert_eq(io_fdatasync(fd), 0);
    cr_assert_eq(io_sim_rot(disk, "d/seg", 1, 0x01), RC_OK);
    read_is(fd, 0, "accd");
    io_sim_power_loss(disk, "");
    fd = io_open("d/seg", O_RDONLY, 0);
    read_is(fd, 0, "accd");
    cr_assert_eq(io_sim_rot(disk, "d/none", 0, 1), RC_NOT_FOUND);
}

Test(io_sim, faults_match_simulated_paths)
{
    cr_assert_eq(io_fault_parse("write:enospc:path=n2/;read:flip:path=n1/"),
                 RC_OK);
    int n1 = io_open("n1/log", O_RDWR | O_CREAT, 0644);
    int n2 = io_open("n2/log", O_RDWR | O_CREAT, 0644);
    cr_assert_eq(io_pwrite(n2, "x", 1, 0), -1);
    cr_assert_eq(errno, ENOSPC);
    cr_assert_eq(io_pwrite(n1, "abc", 3, 0), 3);
    char buf[3];
    cr_assert_eq(io_pread(n1, buf, 3, 0), 3);
    cr_assert_neq(memcmp(buf, "abc", 3), 0, "a flipped read");
    cr_assert_eq(io_fault_hits(0), 1);
    cr_assert_eq(io_fault_hits(1), 1);
}

Test(io_sim, a_torn_write_keeps_half)
{
    int fd = open_durable("d/t");
    cr_assert_eq(io_fault_parse("write:short:times=1"), RC_OK);
    cr_assert_eq(io_pwrite(fd, "12345678", 8, 0), -1);
    cr_assert_eq(errno, ENOSPC);
    char buf[8];
    cr_assert_eq(io_pread(fd, buf, 8, 0), 4);
    cr_assert_eq(memcmp(buf, "1234", 4), 0);
}

Test(io_sim, a_renamed_name_waits_for_its_directory_sync)
{
    int fd = open_durable("d/tmp");
    cr_assert_eq(io_pwrite(fd, "v1", 2, 0), 2);
    cr_assert_eq(io_fdatasync(fd), 0);
    cr_assert_eq(io_rename("d/tmp", "d/cp"), 0);
    cr_assert_eq(io_open("d/tmp", O_RDONLY, 0), -1);
    io_sim_power_loss(disk, "d/");
    cr_assert_eq(io_open("d/cp", O_RDONLY, 0), -1, "rename not durable");

    fd = open_durable("d/tmp");
    cr_assert_eq(io_pwrite(fd, "v2", 2, 0), 2);
    cr_assert_eq(io_fdatasync(fd), 0);
    cr_assert_eq(io_rename("d/tmp", "d/cp"), 0);
    int dfd = io_open("d", O_RDONLY | O_DIRECTORY, 0);
    cr_assert_eq(io_fsync(dfd), 0);
    io_sim_power_loss(disk, "d/");
    fd = io_open("d/cp", O_RDONLY, 0);
    cr_assert_geq(fd, 0);
    read_is(fd, 0, "v2");
    cr_assert_eq(io_unlink("d/cp"), 0);
    cr_assert_eq(io_open("d/cp", O_RDONLY, 0), -1);
}

/* Deferred syncs (a broker creating many logs at once) do nothing
 * until one syncfs of the directory they lie under; that makes every
 * name and byte under it durable, and nothing outside it. */
Test(io_sim, deferred_syncs_wait_for_one_syncfs_of_their_directory)
{
    int outside = io_open("e/x", O_RDWR | O_CREAT, 0644);
    cr_assert_eq(io_pwrite(outside, "ee", 2, 0), 2);
    io_sync_defer_begin();
    int fd = io_open("d/t-0/seg", O_RDWR | O_CREAT, 0644);
    cr_assert_geq(fd, 0);
    cr_assert_eq(io_pwrite(fd, "abc", 3, 0), 3);
    cr_assert_eq(io_fdatasync(fd), 0);
    cr_assert(io_sync_defer_end(), "a sync is owed");
    int64_t cached = 0;
    int64_t durable = 0;
    cr_assert_eq(io_sim_sizes(disk, "d/t-0/seg", &cached, &durable), RC_OK);
    cr_assert_eq(durable, 0, "the deferred fdatasync did nothing");
    int dfd = io_open("d", O_RDONLY | O_DIRECTORY, 0);
    cr_assert_geq(dfd, 0);
    cr_assert_eq(io_syncfs(dfd), 0);
    cr_assert_eq(io_close(dfd), 0);
    cr_assert_eq(io_sim_sizes(disk, "d/t-0/seg", &cached, &durable), RC_OK);
    cr_assert_eq(durable, 3);
    io_sim_power_loss(disk, "");
    fd = io_open("d/t-0/seg", O_RDONLY, 0);
    cr_assert_geq(fd, 0, "its name, two levels down, is durable");
    read_is(fd, 0, "abc");
    cr_assert_eq(io_open("e/x", O_RDONLY, 0), -1, "e is another directory");
}

/* Deferring leaves the faults armed: a sync that would fail fails. */
Test(io_sim, a_deferred_sync_still_meets_its_fault)
{
    struct io_fault f = {.op = IO_OP_SYNC, .kind = IO_FAULT_ERRNO,
                         .err = EIO};
    cr_assert_eq(io_fault_add(&f), RC_OK);
    int fd = io_open("d/a", O_RDWR | O_CREAT, 0644);
    io_sync_defer_begin();
    cr_assert_eq(io_fdatasync(fd), -1);
    cr_assert_eq(errno, EIO);
    cr_assert_not(io_sync_defer_end(), "nothing owed: it failed");
    int dfd = io_open("d", O_RDONLY | O_DIRECTORY, 0);
    cr_assert_eq(io_syncfs(dfd), -1, "and a syncfs meets it too");
    cr_assert_eq(errno, EIO);
}
