/* The one seam for file I/O. Every file the broker and the controller keep
 * (segments, indexes, checkpoints, producer state, the probe) is opened,
 * read, written, synced, renamed, truncated and removed through these
 * calls, so that a test can make any one of them fail the way a disk
 * does.
 *
 * The calls have the shape of the POSIX calls they wrap (a result, or -1
 * with errno set), so code reads as it would without the seam. Each retries
 * EINTR itself. With no fault armed a call costs one relaxed atomic load
 * on top of the system call.
 *
 * Faults (io_fault_add): fail the Nth call of a kind with an errno, write
 * short, flip a byte of what a read returns or of what a write stores.
 * A fault may be limited to files whose path contains a string (an fd's
 * path is looked up while faults are armed), may let some calls pass
 * first, and may be
 * held until the process gets SIGUSR1 or SIGUSR2 (so a real-process test
 * can start a disk failure in the middle of a run). Daemons read faults from the
 * environment at start (io_fault_from_env), which is how the integration
 * tests and jepsen/ inject them:
 *
 *   CAIRN_IO_FAULTS="sync:eio:path=.log:armed=sigusr2;write:enospc:after=5"
 *
 * Thread-safe: faults are checked under a mutex (the group-commit job
 * syncs from the threadpool).
 *
 * The calls go to the system's, or to another implementation of the seam
 * set with io_backend_set(): common/io_sim.h is a simulated disk in memory,
 * for the simulation. Faults apply the same to either. */
#ifndef CAIRN_COMMON_IO_H
#define CAIRN_COMMON_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/assert.h"

enum io_op {
    IO_OP_OPEN,     /* io_open (files and directories) */
    IO_OP_READ,     /* io_pread, io_read */
    IO_OP_WRITE,    /* io_pwrite, io_write */
    IO_OP_SYNC,     /* io_fdatasync, io_fsync */
    IO_OP_RENAME,   /* io_rename */
    IO_OP_TRUNCATE, /* io_ftruncate */
    IO_OP_UNLINK,   /* io_unlink */
    IO_OP__COUNT
};

enum io_fault_kind {
    IO_FAULT_ERRNO,      /* the call fails with err; nothing is done */
    IO_FAULT_SHORT,      /* a write stores half of what it was given */
    IO_FAULT_FLIP_READ,  /* a read returns its bytes with one bit flipped */
    IO_FAULT_FLIP_WRITE, /* a write stores its bytes with one bit flipped */
};

#define IO_FAULT_PATH_BYTES_MAX 64
#define IO_FAULTS_MAX 8 /* rules armed at once; a test needs one or two */

struct io_fault {
    enum io_op op;
    enum io_fault_kind kind;
    int err;          /* IO_FAULT_ERRNO: EIO, ENOSPC, EDQUOT, ... */
    uint64_t after;   /* calls of this kind that pass first */
    uint64_t times;   /* calls it hits, then it is spent; 0: every one */
    int on_signal;    /* held until this signal (SIGUSR1 or SIGUSR2)
                       * comes, with io_fault_from_env(); 0: armed */
    char path[IO_FAULT_PATH_BYTES_MAX]; /* "" any file, else a substring */
};

/* An implementation of the seam. Each member has the shape of its POSIX
 * call (a result, or -1 with errno set); ctx is passed back to each. */
struct io_backend {
    void *ctx;
    int (*open)(void *ctx, const char *path, int flags, mode_t mode);
    int (*close)(void *ctx, int fd);
    /* offset < 0: at the fd's position, which moves (read(2)). */
    ssize_t (*read)(void *ctx, int fd, void *buf, size_t n, off_t offset);
    ssize_t (*write)(void *ctx, int fd, const void *buf, size_t n,
                     off_t offset);
    int (*sync)(void *ctx, int fd);
    /* A sync of fd failed (an injected fault): what it was to make
     * durable never will be, as Linux marks dirty pages clean after a
     * failed writeback (fsyncgate). */
    void (*sync_failed)(void *ctx, int fd);
    /* io_syncfs(): what fd's directory holds, at any depth, durable. */
    int (*syncfs)(void *ctx, int fd);
    int (*rename)(void *ctx, const char *from, const char *to);
    int (*truncate)(void *ctx, int fd, off_t length);
    int (*unlink)(void *ctx, const char *path);
    /* fd's path into buf, "" when unknown. */
    void (*path)(void *ctx, int fd, char *buf, size_t cap);
    /* fd's size in bytes (fstat's st_size). */
    int (*size)(void *ctx, int fd, off_t *size);
    int (*mkdir)(void *ctx, const char *path, mode_t mode);
    /* Calls each(arg, name) for every entry of dir but "." and ".."; an
     * entry's removal by each is allowed. -1 with errno when dir cannot
     * be read. */
    int (*list)(void *ctx, const char *dir,
                void (*each)(void *arg, const char *name), void *arg);
    /* posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED). */
    int (*drop_cache)(void *ctx, int fd);
};

/* Sends every later call to b (borrowed until io_backend_set(NULL), which
 * goes back to the system's calls). Set it before any file is opened and
 * from one thread; the power-loss journal is for the system's files only. */
void io_backend_set(const struct io_backend *b);

/* Arms f. RC_FULL when IO_FAULTS_MAX are armed. */
MUST_CHECK int io_fault_add(const struct io_fault *f);
/* Disarms every fault. */
void io_fault_clear(void);
/* Calls a fault has hit so far (rule index in the order added). */
uint64_t io_fault_hits(size_t i);
/* Releases faults held for signum (what that signal does). */
void io_fault_release(int signum);

/* For I/O done outside the seam (libraft's): whether an armed rule of
 * kind op hits a call on path now (counted as such a call); *err is its
 * errno. Only IO_FAULT_ERRNO rules hit. */
bool io_fault_check(enum io_op op, const char *path, int *err);

/* Parses a spec (grammar in the header comment; ops: open read write sync
 * rename truncate unlink; errors: eio enospc edquot erofs, or short,
 * flip (a flipped byte: on read for read, on write for write); keys:
 * after=N times=N path=S armed=sigusr1|sigusr2) and arms its faults. RC_INVALID,
 * and nothing armed, on a bad spec. */
MUST_CHECK int io_fault_parse(const char *spec);

/* A power loss, for unit tests. While the journal is on, the seam notes
 * for every file opened through it the size its last fsync/fdatasync
 * made durable, and whether its directory entry is durable (the file
 * existed when it was first opened, or its directory was fsync'd since).
 * io_journal_crash() then does to the files what a power loss would: a
 * file whose entry is not durable is removed, every other one is cut
 * back to its durable size. (A rename counts as the new name's entry, so
 * a crash between a rename and its directory's fsync loses the file
 * rather than bringing the old one back.) Not for daemons. */
void io_journal_begin(void);
void io_journal_crash(void);

/* Arms CAIRN_IO_FAULTS if set, installing SIGUSR1 and SIGUSR2 handlers
 * that release the faults held for each. RC_INVALID on a bad spec (the
 * daemon refuses to start). */
MUST_CHECK int io_fault_from_env(void);

/* The RC_* for a failed call's errno: RC_NO_SPACE for ENOSPC and EDQUOT
 * (the device or the quota is full), RC_IO for the rest. */
int io_rc(int err);

int io_open(const char *path, int flags, mode_t mode);
ssize_t io_pread(int fd, void *buf, size_t n, off_t offset);
ssize_t io_read(int fd, void *buf, size_t n);
ssize_t io_pwrite(int fd, const void *buf, size_t n, off_t offset);
ssize_t io_write(int fd, const void *buf, size_t n);
int io_fdatasync(int fd);
int io_fsync(int fd);
/* syncfs(2) of the file system that holds fd: every file's written data
 * and every directory entry on it made durable by one journal commit,
 * where an fsync each would cost one commit per file. The simulated disk
 * (io_sim.h) makes durable what lies under fd's directory only: code may
 * rely on no more than that. A failure is final, as an fsync's. */
int io_syncfs(int fd);

/* Deferred syncs, for work that creates many files at once (a broker
 * opening thousands of new logs): from io_sync_defer_begin() to
 * io_sync_defer_end(), this thread's io_fsync() and io_fdatasync()
 * check their faults as usual but leave the sync itself undone, owed.
 * Nothing written meanwhile may be relied on as durable (no answer sent
 * on it, no offset acknowledged) until the caller has made it so with
 * one io_syncfs() of the directory it lies under. io_sync_defer_end()
 * says whether any sync is owed. Not nested. */
void io_sync_defer_begin(void);
bool io_sync_defer_end(void);
int io_rename(const char *from, const char *to);
int io_ftruncate(int fd, off_t length);
int io_unlink(const char *path);
/* close(2). */
int io_close(int fd);
/* fstat(2)'s st_size: 0, or -1 with errno. */
int io_fsize(int fd, off_t *size);
/* mkdir(2). */
int io_mkdir(const char *path, mode_t mode);
/* Asks the kernel to drop fd's clean cached pages
 * (posix_fadvise(POSIX_FADV_DONTNEED)), so that the next reads come from
 * the device. After a failed writeback Linux marks the pages it could not
 * write clean, yet keeps serving their contents: reads after a restart
 * would see data the device never got. 0, or -1 with errno. */
int io_drop_cache(int fd);
/* Calls each(arg, name) for every entry of dir but "." and ".." (the names
 * are borrowed for the call, which may unlink the entry): 0, or -1 with
 * errno when dir cannot be opened. */
int io_list_dir(const char *dir, void (*each)(void *arg, const char *name),
                void *arg);

#endif
