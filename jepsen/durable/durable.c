/*
 * libcairn-durable.so: preloaded into a broker by the fault harness, it
 * records from outside the broker what the broker asked the disk to make
 * durable, so that a simulated power failure (jepsen/powerloss.py) can cut
 * every file back to what the disk had promised. The broker's own
 * bookkeeping (HW checkpoints, recovery points) is never consulted.
 *
 * Environment:
 *   CAIRN_DURABLE_JOURNAL  the file records are appended to (else inert)
 *   CAIRN_DURABLE_ROOT     only paths under this directory are recorded
 *   CAIRN_DURABLE_SLOW     a control file: while it exists and holds a
 *                          number N, each fsync/fdatasync first sleeps N ms
 *                          (the harness's slow disk)
 *
 * One record per line, tab-separated, appended with one write(2) after the
 * call succeeded:
 *   C path        a file created (open with O_CREAT of a missing name)
 *   E path size   an existing file opened for writing, with its size
 *   S path size   fsync/fdatasync succeeded; size is the length before the
 *                 call, all of which the call made durable
 *   D path        a directory fsync'd: its entries are durable
 *   R old new X   renamed; X is 1 if new replaced an existing file
 *   U path        unlinked, or a directory removed
 *   T path size   truncated to size
 *   M path        a directory created
 *
 * Writes are not recorded: only their effect on the length matters to the
 * model, and the length is read at each sync.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DURABLE_LINE_MAX (2 * PATH_MAX + 64)

static int journal_fd = -1;
static char root[PATH_MAX];
static size_t root_len;
static const char *slow_path;

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_rename)(const char *, const char *);
static int (*real_renameat)(int, const char *, int, const char *);
static int (*real_unlink)(const char *);
static int (*real_unlinkat)(int, const char *, int);
static int (*real_rmdir)(const char *);
static int (*real_ftruncate)(int, off_t);
static int (*real_truncate)(const char *, off_t);
static int (*real_mkdir)(const char *, mode_t);
static int (*real_remove)(const char *);

/* POSIX's way to store dlsym's answer in a function pointer. */
#define LOOKUP(var, name) (*(void **)&(var) = dlsym(RTLD_NEXT, (name)))

__attribute__((constructor)) static void durable_init(void)
{
    LOOKUP(real_open, "open");
    LOOKUP(real_open64, "open64");
    LOOKUP(real_openat, "openat");
    LOOKUP(real_fsync, "fsync");
    LOOKUP(real_fdatasync, "fdatasync");
    LOOKUP(real_rename, "rename");
    LOOKUP(real_renameat, "renameat");
    LOOKUP(real_unlink, "unlink");
    LOOKUP(real_unlinkat, "unlinkat");
    LOOKUP(real_rmdir, "rmdir");
    LOOKUP(real_ftruncate, "ftruncate");
    LOOKUP(real_truncate, "truncate");
    LOOKUP(real_mkdir, "mkdir");
    LOOKUP(real_remove, "remove");

    const char *journal = getenv("CAIRN_DURABLE_JOURNAL");
    const char *r = getenv("CAIRN_DURABLE_ROOT");
    slow_path = getenv("CAIRN_DURABLE_SLOW");
    if (journal == NULL || r == NULL || real_open == NULL) {
        return;
    }
    if (realpath(r, root) == NULL) {
        return;
    }
    root_len = strlen(root);
    journal_fd = real_open(journal, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                           0644);
}

/* The absolute form of path relative to dirfd; false if it cannot be
 * known. Paths are not normalised: the broker builds clean ones. */
static bool absolute(int dirfd, const char *path, char *out)
{
    char base[PATH_MAX];
    if (path[0] == '/') {
        return snprintf(out, PATH_MAX, "%s", path) < PATH_MAX;
    }
    if (dirfd == AT_FDCWD) {
        if (getcwd(base, sizeof base) == NULL) {
            return false;
        }
    } else {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, base, sizeof base - 1);
        if (n < 0) {
            return false;
        }
        base[n] = '\0';
    }
    return snprintf(out, PATH_MAX, "%s/%s", base, path) < PATH_MAX;
}

static bool under_root(const char *abs)
{
    return journal_fd >= 0 && strncmp(abs, root, root_len) == 0 &&
           (abs[root_len] == '/' || abs[root_len] == '\0');
}

/* The path an fd refers to now; false for deleted or unknown files. */
static bool fd_path(int fd, char *out)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, PATH_MAX - 1);
    if (n < 0) {
        return false;
    }
    out[n] = '\0';
    return strstr(out, " (deleted)") == NULL;
}

static void record(const char *fmt, ...)
{
    char line[DURABLE_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof line) {
        int saved = errno;
        ssize_t w = write(journal_fd, line, (size_t)n);
        (void)w;
        errno = saved;
    }
}

/* ---------------------------------------------------------------- open */

struct pending_open {
    bool tracked;
    bool existed;
    off_t size;
    char abs[PATH_MAX];
};

static mode_t open_mode(int flags, va_list ap)
{
    if (flags & (O_CREAT | O_TMPFILE)) {
        return (mode_t)va_arg(ap, int);
    }
    return 0;
}

static void before_open(struct pending_open *p, int dirfd, const char *path)
{
    struct stat st;
    p->tracked = journal_fd >= 0 && absolute(dirfd, path, p->abs) &&
                 under_root(p->abs);
    p->existed = p->tracked && stat(p->abs, &st) == 0;
    p->size = p->existed ? st.st_size : 0;
}

static int after_open(const struct pending_open *p, int fd, int flags)
{
    if (!p->tracked || fd < 0 || (flags & (O_WRONLY | O_RDWR)) == 0) {
        return fd;
    }
    if (!p->existed) {
        record("C\t%s\n", p->abs);
    } else if (flags & O_TRUNC) {
        record("E\t%s\t%lld\nT\t%s\t0\n", p->abs, (long long)p->size,
               p->abs);
    } else {
        record("E\t%s\t%lld\n", p->abs, (long long)p->size);
    }
    return fd;
}

#define OPEN_WRAPPER(call, ...)                                              \
    {                                                                        \
        va_list ap;                                                          \
        va_start(ap, flags);                                                 \
        mode_t mode = open_mode(flags, ap);                                  \
        va_end(ap);                                                          \
        struct pending_open p;                                               \
        before_open(&p, __VA_ARGS__);                                        \
        int fd = call;                                                       \
        return after_open(&p, fd, flags);                                    \
    }

int open(const char *path, int flags, ...)
    OPEN_WRAPPER(real_open(path, flags, mode), AT_FDCWD, path)

int open64(const char *path, int flags, ...)
    OPEN_WRAPPER(real_open64(path, flags, mode), AT_FDCWD, path)

int openat(int dirfd, const char *path, int flags, ...)
    OPEN_WRAPPER(real_openat(dirfd, path, flags, mode), dirfd, path)

int openat64(int dirfd, const char *path, int flags, ...)
    OPEN_WRAPPER(real_openat(dirfd, path, flags, mode), dirfd, path)

int creat(const char *path, mode_t mode)
{
    return open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

/* ---------------------------------------------------------------- sync */

/* The slow disk: the delay the control file names, if it exists. */
static void slow_disk(void)
{
    if (slow_path == NULL) {
        return;
    }
    int fd = real_open(slow_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return;
    }
    char buf[16] = {0};
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    long ms = n > 0 ? strtol(buf, NULL, 10) : 0;
    if (ms > 0 && ms <= 10000) {
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
}

static int sync_common(int (*fn)(int), int fd)
{
    int saved = errno;
    slow_disk();
    errno = saved;
    char path[PATH_MAX];
    struct stat st;
    /* The length before the call: bytes appended while it runs may not be
     * covered by it. */
    bool tracked = journal_fd >= 0 && fstat(fd, &st) == 0 &&
                   fd_path(fd, path) && under_root(path);
    int rv = fn(fd);
    if (rv == 0 && tracked) {
        if (S_ISDIR(st.st_mode)) {
            record("D\t%s\n", path);
        } else if (S_ISREG(st.st_mode)) {
            record("S\t%s\t%lld\n", path, (long long)st.st_size);
        }
    }
    return rv;
}

int fsync(int fd)
{
    return sync_common(real_fsync, fd);
}

int fdatasync(int fd)
{
    return sync_common(real_fdatasync, fd);
}

/* ----------------------------------------------------- names and sizes */

static bool tracked_path(int dirfd, const char *path, char *abs)
{
    return journal_fd >= 0 && absolute(dirfd, path, abs) && under_root(abs);
}

/* Records a rename that succeeded, with whether it replaced a file. */
static int after_rename(int rv, bool ta, bool tb, bool existed,
                        const char *a, const char *b)
{
    if (rv == 0 && (ta || tb)) {
        record("R\t%s\t%s\t%d\n", a, b, existed);
    }
    return rv;
}

int rename(const char *from, const char *to)
{
    char a[PATH_MAX] = "", b[PATH_MAX] = "";
    bool ta = tracked_path(AT_FDCWD, from, a);
    bool tb = tracked_path(AT_FDCWD, to, b);
    struct stat st;
    bool existed = tb && stat(b, &st) == 0;
    return after_rename(real_rename(from, to), ta, tb, existed, a, b);
}

int renameat(int fromfd, const char *from, int tofd, const char *to)
{
    char a[PATH_MAX] = "", b[PATH_MAX] = "";
    bool ta = tracked_path(fromfd, from, a);
    bool tb = tracked_path(tofd, to, b);
    struct stat st;
    bool existed = tb && stat(b, &st) == 0;
    return after_rename(real_renameat(fromfd, from, tofd, to), ta, tb,
                        existed, a, b);
}

static int after_removal(int rv, bool tracked, const char *abs)
{
    if (rv == 0 && tracked) {
        record("U\t%s\n", abs);
    }
    return rv;
}

int unlink(const char *path)
{
    char abs[PATH_MAX];
    bool t = tracked_path(AT_FDCWD, path, abs);
    return after_removal(real_unlink(path), t, abs);
}

int unlinkat(int dirfd, const char *path, int flags)
{
    char abs[PATH_MAX];
    bool t = tracked_path(dirfd, path, abs);
    return after_removal(real_unlinkat(dirfd, path, flags), t, abs);
}

int rmdir(const char *path)
{
    char abs[PATH_MAX];
    bool t = tracked_path(AT_FDCWD, path, abs);
    return after_removal(real_rmdir(path), t, abs);
}

int ftruncate(int fd, off_t size)
{
    char path[PATH_MAX];
    bool t = journal_fd >= 0 && fd_path(fd, path) && under_root(path);
    int rv = real_ftruncate(fd, size);
    if (rv == 0 && t) {
        record("T\t%s\t%lld\n", path, (long long)size);
    }
    return rv;
}

int ftruncate64(int fd, off_t size)
{
    return ftruncate(fd, size);
}

int truncate(const char *path, off_t size)
{
    char abs[PATH_MAX];
    bool t = tracked_path(AT_FDCWD, path, abs);
    int rv = real_truncate(path, size);
    if (rv == 0 && t) {
        record("T\t%s\t%lld\n", abs, (long long)size);
    }
    return rv;
}

int mkdir(const char *path, mode_t mode)
{
    char abs[PATH_MAX];
    bool t = tracked_path(AT_FDCWD, path, abs);
    int rv = real_mkdir(path, mode);
    if (rv == 0 && t) {
        record("M\t%s\n", abs);
    }
    return rv;
}

int truncate64(const char *path, off_t size)
{
    return truncate(path, size);
}

int remove(const char *path)
{
    char abs[PATH_MAX];
    bool t = tracked_path(AT_FDCWD, path, abs);
    return after_removal(real_remove(path), t, abs);
}
