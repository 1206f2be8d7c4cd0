/* The file I/O seam and its faults (common/io.h). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/rc.h"

#include "common/io.h"

struct io__rule {
    struct io_fault f;
    uint64_t seen;  /* matching calls so far */
    uint64_t hits;
};

static pthread_mutex_t io__mu = PTHREAD_MUTEX_INITIALIZER;
static struct io__rule io__rules[IO_FAULTS_MAX];
static atomic_size_t io__n_rules;          /* 0: the fast path */
static atomic_bool io__usr1;               /* SIGUSR1 came */
static atomic_bool io__usr2;               /* SIGUSR2 came */
static const struct io_backend *io__backend; /* NULL: the system's calls */

void io_backend_set(const struct io_backend *b)
{
    io__backend = b;
}

int io_fault_add(const struct io_fault *f)
{
    ASSERT(f->op < IO_OP__COUNT);
    pthread_mutex_lock(&io__mu);
    size_t n = atomic_load(&io__n_rules);
    int rv = RC_FULL;
    if (n < IO_FAULTS_MAX) {
        io__rules[n] = (struct io__rule){.f = *f};
        io__rules[n].f.path[IO_FAULT_PATH_BYTES_MAX - 1] = '\0';
        atomic_store(&io__n_rules, n + 1);
        rv = RC_OK;
    }
    pthread_mutex_unlock(&io__mu);
    return rv;
}

void io_fault_clear(void)
{
    pthread_mutex_lock(&io__mu);
    atomic_store(&io__n_rules, 0);
    atomic_store(&io__usr1, false);
    atomic_store(&io__usr2, false);
    pthread_mutex_unlock(&io__mu);
}

uint64_t io_fault_hits(size_t i)
{
    pthread_mutex_lock(&io__mu);
    uint64_t hits = i < atomic_load(&io__n_rules) ? io__rules[i].hits : 0;
    pthread_mutex_unlock(&io__mu);
    return hits;
}

void io_fault_release(int signum)
{
    atomic_store(signum == SIGUSR1 ? &io__usr1 : &io__usr2, true);
}

static bool released(int signum)
{
    return signum == 0 ||
           atomic_load(signum == SIGUSR1 ? &io__usr1 : &io__usr2);
}

/* The path of an open fd, for rules limited to a path (only while a
 * fault is armed, so the cost is a test's). */
static const char *fd_path(int fd, char *buf, size_t cap)
{
    if (io__backend != NULL) {
        buf[0] = '\0';
        io__backend->path(io__backend->ctx, fd, buf, cap);
        return buf;
    }
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, buf, cap - 1);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

/* The rule that hits this call, or NULL. Counts the call for every rule
 * it matches. Caller holds io__mu. */
static struct io__rule *match(enum io_op op, int fd, const char *path)
{
    struct io__rule *hit = NULL;
    char buf[PATH_MAX];
    size_t n = atomic_load(&io__n_rules);
    for (size_t i = 0; i < n; i++) {
        struct io__rule *r = &io__rules[i];
        if (r->f.op != op) {
            continue;
        }
        if (!released(r->f.on_signal)) {
            continue; /* before the path: a held fault costs no readlink */
        }
        if (r->f.path[0] != '\0') {
            if (path == NULL && fd >= 0) {
                path = fd_path(fd, buf, sizeof buf);
            }
            if (path == NULL || strstr(path, r->f.path) == NULL) {
                continue;
            }
        }
        r->seen++;
        if (hit != NULL || r->seen <= r->f.after ||
            (r->f.times > 0 && r->hits >= r->f.times)) {
            continue;
        }
        r->hits++;
        hit = r;
    }
    return hit;
}

/* The fault for this call, copied out, or false for none. */
static bool fault_for(enum io_op op, int fd, const char *path,
                      struct io_fault *out)
{
    if (atomic_load_explicit(&io__n_rules, memory_order_relaxed) == 0) {
        return false;
    }
    pthread_mutex_lock(&io__mu);
    struct io__rule *r = match(op, fd, path);
    if (r != NULL) {
        *out = r->f;
    }
    pthread_mutex_unlock(&io__mu);
    return r != NULL;
}

bool io_fault_check(enum io_op op, const char *path, int *err)
{
    struct io_fault f;
    if (!fault_for(op, -1, path, &f) || f.kind != IO_FAULT_ERRNO) {
        return false;
    }
    *err = f.err;
    return true;
}

/* --- The power-loss journal (tests only) -------------------------------- */

#define IO__JOURNAL_FILES_MAX 512

struct io__file {
    char path[PATH_MAX];
    int64_t synced;       /* bytes a sync made durable */
    bool entry_durable;   /* its name survives a power loss */
};

static struct io__file *io__files; /* NULL: the journal is off */
static size_t io__n_files;
static atomic_bool io__journal_on;  /* checked without the lock */

void io_journal_begin(void)
{
    pthread_mutex_lock(&io__mu);
    free(io__files);
    io__files = calloc(IO__JOURNAL_FILES_MAX, sizeof *io__files);
    ASSERT(io__files != NULL);
    io__n_files = 0;
    atomic_store(&io__journal_on, true);
    pthread_mutex_unlock(&io__mu);
}

/* The journal's entry for path, added (as existed says) if new; NULL
 * when the journal is off or full. Caller holds io__mu. */
static struct io__file *journal_file(const char *path, bool existed,
                                     int64_t size)
{
    if (io__files == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < io__n_files; i++) {
        if (strcmp(io__files[i].path, path) == 0) {
            return &io__files[i];
        }
    }
    if (io__n_files == IO__JOURNAL_FILES_MAX) {
        return NULL;
    }
    struct io__file *f = &io__files[io__n_files++];
    snprintf(f->path, sizeof f->path, "%s", path);
    f->synced = existed ? size : 0;
    f->entry_durable = existed;
    return f;
}

static void journal_forget(const char *path)
{
    for (size_t i = 0; i < io__n_files; i++) {
        if (strcmp(io__files[i].path, path) == 0) {
            io__files[i] = io__files[--io__n_files];
            return;
        }
    }
}

static void journal_open(const char *path, bool existed, int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        return;
    }
    pthread_mutex_lock(&io__mu);
    journal_file(path, existed, (int64_t)st.st_size);
    pthread_mutex_unlock(&io__mu);
}

/* A sync of fd succeeded: a file's size is durable; a directory's
 * entries are. */
static void journal_synced(int fd)
{
    struct stat st;
    char path[PATH_MAX];
    if (fstat(fd, &st) != 0) {
        return;
    }
    pthread_mutex_lock(&io__mu);
    if (io__files != NULL) {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, path, sizeof path - 1);
        path[n > 0 ? n : 0] = '\0';
        size_t len = strlen(path);
        for (size_t i = 0; S_ISDIR(st.st_mode) && i < io__n_files; i++) {
            if (strncmp(io__files[i].path, path, len) == 0 &&
                io__files[i].path[len] == '/' &&
                strchr(io__files[i].path + len + 1, '/') == NULL) {
                io__files[i].entry_durable = true;
            }
        }
        struct io__file *f = S_ISDIR(st.st_mode)
                                 ? NULL
                                 : journal_file(path, false, 0);
        if (f != NULL) {
            f->synced = (int64_t)st.st_size;
        }
    }
    pthread_mutex_unlock(&io__mu);
}

void io_journal_crash(void)
{
    pthread_mutex_lock(&io__mu);
    for (size_t i = 0; io__files != NULL && i < io__n_files; i++) {
        const struct io__file *f = &io__files[i];
        if (!f->entry_durable) {
            unlink(f->path);
        } else if (truncate(f->path, (off_t)f->synced) != 0) {
            ASSERT(errno == ENOENT); /* removed since, durably or not */
        }
    }
    free(io__files);
    io__files = NULL;
    io__n_files = 0;
    atomic_store(&io__journal_on, false);
    pthread_mutex_unlock(&io__mu);
}

int io_rc(int err)
{
    return err == ENOSPC || err == EDQUOT ? RC_NO_SPACE : RC_IO;
}

static int fail(int err)
{
    errno = err;
    return -1;
}

int io_open(const char *path, int flags, mode_t mode)
{
    struct io_fault f;
    if (fault_for(IO_OP_OPEN, -1, path, &f) && f.kind == IO_FAULT_ERRNO) {
        return fail(f.err);
    }
    if (io__backend != NULL) {
        return io__backend->open(io__backend->ctx, path, flags, mode);
    }
    bool journal = atomic_load_explicit(&io__journal_on,
                                        memory_order_relaxed);
    bool existed = journal && access(path, F_OK) == 0;
    int fd;
    do {
        fd = open(path, flags, mode);
    } while (fd < 0 && errno == EINTR);
    if (journal && fd >= 0) {
        journal_open(path, existed, fd);
    }
    return fd;
}

int io_fsize(int fd, off_t *size)
{
    if (io__backend != NULL) {
        return io__backend->size(io__backend->ctx, fd, size);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        return -1;
    }
    *size = st.st_size;
    return 0;
}

int io_drop_cache(int fd)
{
    if (io__backend != NULL) {
        return io__backend->drop_cache(io__backend->ctx, fd);
    }
    int err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    return err == 0 ? 0 : fail(err);
}

int io_mkdir(const char *path, mode_t mode)
{
    if (io__backend != NULL) {
        return io__backend->mkdir(io__backend->ctx, path, mode);
    }
    return mkdir(path, mode);
}

int io_list_dir(const char *dir, void (*each)(void *arg, const char *name),
                void *arg)
{
    if (io__backend != NULL) {
        return io__backend->list(io__backend->ctx, dir, each, arg);
    }
    /* getdents64() into the stack, not opendir(): its 32 KiB buffer on
     * the heap cost a malloc and page faults per directory, about 15% of
     * the time to open 100,000 logs at start. A failed read is an error
     * (readdir() would have ended the listing as if it were complete). */
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    _Alignas(struct dirent64) char buf[8192];
    for (;;) {
        ssize_t got = getdents64(fd, buf, sizeof buf);
        if (got <= 0) {
            int err = errno;
            (void)close(fd);
            errno = err;
            return got == 0 ? 0 : -1;
        }
        for (ssize_t at = 0; at < got;) {
            const struct dirent64 *e =
                (const struct dirent64 *)(void *)(buf + at);
            if (e->d_reclen == 0) { /* never from a sound kernel */
                (void)close(fd);
                errno = EIO;
                return -1;
            }
            at += e->d_reclen;
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
                each(arg, e->d_name);
            }
        }
    }
}

int io_close(int fd)
{
    if (io__backend != NULL) {
        return io__backend->close(io__backend->ctx, fd);
    }
    return close(fd);
}

/* One bit of the middle byte of what was read. */
static void flip(void *buf, size_t n)
{
    if (n > 0) {
        ((uint8_t *)buf)[n / 2] ^= 0x10;
    }
}

static ssize_t read_at(int fd, void *buf, size_t n, off_t offset,
                       bool positioned)
{
    struct io_fault f;
    bool hit = fault_for(IO_OP_READ, fd, NULL, &f);
    if (hit && f.kind == IO_FAULT_ERRNO) {
        return fail(f.err);
    }
    ssize_t got;
    if (io__backend != NULL) {
        got = io__backend->read(io__backend->ctx, fd, buf, n,
                                positioned ? offset : -1);
    } else {
        do {
            got = positioned ? pread(fd, buf, n, offset) : read(fd, buf, n);
        } while (got < 0 && errno == EINTR);
    }
    if (hit && f.kind == IO_FAULT_FLIP_READ && got > 0) {
        flip(buf, (size_t)got);
    }
    return got;
}

ssize_t io_pread(int fd, void *buf, size_t n, off_t offset)
{
    return read_at(fd, buf, n, offset, true);
}

ssize_t io_read(int fd, void *buf, size_t n)
{
    return read_at(fd, buf, n, 0, false);
}

static ssize_t raw_write(int fd, const void *buf, size_t n, off_t offset,
                         bool positioned)
{
    if (io__backend != NULL) {
        return io__backend->write(io__backend->ctx, fd, buf, n,
                                  positioned ? offset : -1);
    }
    ssize_t put;
    do {
        put = positioned ? pwrite(fd, buf, n, offset) : write(fd, buf, n);
    } while (put < 0 && errno == EINTR);
    return put;
}

/* A write under a fault: half of it and an error, or a flipped copy. */
static ssize_t faulty_write(int fd, const void *buf, size_t n, off_t offset,
                            bool positioned, const struct io_fault *f)
{
    if (f->kind == IO_FAULT_SHORT) {
        if (n > 1) {
            ssize_t put = raw_write(fd, buf, n / 2, offset, positioned);
            (void)put; /* torn: whatever landed stays */
        }
        return fail(f->err != 0 ? f->err : ENOSPC);
    }
    uint8_t *copy = malloc(n == 0 ? 1 : n);
    if (copy == NULL) {
        return fail(ENOMEM);
    }
    memcpy(copy, buf, n);
    flip(copy, n);
    ssize_t put = raw_write(fd, copy, n, offset, positioned);
    free(copy);
    return put;
}

static ssize_t write_at(int fd, const void *buf, size_t n, off_t offset,
                        bool positioned)
{
    struct io_fault f;
    if (fault_for(IO_OP_WRITE, fd, NULL, &f)) {
        if (f.kind == IO_FAULT_ERRNO) {
            return fail(f.err);
        }
        if (f.kind == IO_FAULT_SHORT || f.kind == IO_FAULT_FLIP_WRITE) {
            return faulty_write(fd, buf, n, offset, positioned, &f);
        }
    }
    return raw_write(fd, buf, n, offset, positioned);
}

ssize_t io_pwrite(int fd, const void *buf, size_t n, off_t offset)
{
    return write_at(fd, buf, n, offset, true);
}

ssize_t io_write(int fd, const void *buf, size_t n)
{
    return write_at(fd, buf, n, 0, false);
}

/* This thread's deferred syncs (io_sync_defer_begin()). */
static _Thread_local bool io__deferring;
static _Thread_local bool io__owed;

void io_sync_defer_begin(void)
{
    ASSERT(!io__deferring);
    io__deferring = true;
    io__owed = false;
}

bool io_sync_defer_end(void)
{
    ASSERT(io__deferring);
    io__deferring = false;
    return io__owed;
}

static int sync_fd(int fd, bool data_only)
{
    struct io_fault f;
    if (fault_for(IO_OP_SYNC, fd, NULL, &f) && f.kind == IO_FAULT_ERRNO) {
        if (io__backend != NULL) {
            io__backend->sync_failed(io__backend->ctx, fd);
        }
        return fail(f.err);
    }
    if (io__deferring) {
        io__owed = true;
        return 0;
    }
    if (io__backend != NULL) {
        return io__backend->sync(io__backend->ctx, fd);
    }
    int rv;
    do {
        rv = data_only ? fdatasync(fd) : fsync(fd);
    } while (rv < 0 && errno == EINTR);
    if (rv == 0 && atomic_load_explicit(&io__journal_on,
                                        memory_order_relaxed)) {
        journal_synced(fd);
    }
    return rv;
}

int io_fdatasync(int fd)
{
    return sync_fd(fd, true);
}

int io_fsync(int fd)
{
    return sync_fd(fd, false);
}

/* A syncfs succeeded: every file the journal knows is durable as it
 * stands, name and size. */
static void journal_synced_all(void)
{
    pthread_mutex_lock(&io__mu);
    for (size_t i = 0; io__files != NULL && i < io__n_files; i++) {
        struct stat st;
        if (stat(io__files[i].path, &st) == 0) {
            io__files[i].synced = (int64_t)st.st_size;
            io__files[i].entry_durable = true;
        }
    }
    pthread_mutex_unlock(&io__mu);
}

int io_syncfs(int fd)
{
    struct io_fault f;
    if (fault_for(IO_OP_SYNC, fd, NULL, &f) && f.kind == IO_FAULT_ERRNO) {
        return fail(f.err);
    }
    if (io__backend != NULL) {
        return io__backend->syncfs(io__backend->ctx, fd);
    }
    int rv;
    do {
        rv = syncfs(fd);
    } while (rv < 0 && errno == EINTR);
    if (rv == 0 && atomic_load_explicit(&io__journal_on,
                                        memory_order_relaxed)) {
        journal_synced_all();
    }
    return rv;
}

int io_rename(const char *from, const char *to)
{
    struct io_fault f;
    if (fault_for(IO_OP_RENAME, -1, from, &f) && f.kind == IO_FAULT_ERRNO) {
        return fail(f.err);
    }
    if (io__backend != NULL) {
        return io__backend->rename(io__backend->ctx, from, to);
    }
    int rv = rename(from, to);
    if (rv == 0 && atomic_load(&io__journal_on)) {
        pthread_mutex_lock(&io__mu);
        journal_forget(to);
        for (size_t i = 0; i < io__n_files; i++) {
            if (strcmp(io__files[i].path, from) == 0) {
                snprintf(io__files[i].path, sizeof io__files[i].path, "%s",
                         to);
                io__files[i].entry_durable = false; /* until the dir sync */
            }
        }
        pthread_mutex_unlock(&io__mu);
    }
    return rv;
}

int io_ftruncate(int fd, off_t length)
{
    struct io_fault f;
    if (fault_for(IO_OP_TRUNCATE, fd, NULL, &f) &&
        f.kind == IO_FAULT_ERRNO) {
        return fail(f.err);
    }
    if (io__backend != NULL) {
        return io__backend->truncate(io__backend->ctx, fd, length);
    }
    int rv;
    do {
        rv = ftruncate(fd, length);
    } while (rv < 0 && errno == EINTR);
    return rv;
}

int io_unlink(const char *path)
{
    struct io_fault f;
    if (fault_for(IO_OP_UNLINK, -1, path, &f) && f.kind == IO_FAULT_ERRNO) {
        return fail(f.err);
    }
    if (io__backend != NULL) {
        return io__backend->unlink(io__backend->ctx, path);
    }
    int rv = unlink(path);
    if (rv == 0 && atomic_load(&io__journal_on)) {
        pthread_mutex_lock(&io__mu);
        journal_forget(path);
        pthread_mutex_unlock(&io__mu);
    }
    return rv;
}

/* --- Specs -------------------------------------------------------------- */

static const char *const io__op_names[IO_OP__COUNT] = {
    "open", "read", "write", "sync", "rename", "truncate", "unlink"};

static int parse_op(const char *s, enum io_op *out)
{
    for (int i = 0; i < IO_OP__COUNT; i++) {
        if (strcmp(s, io__op_names[i]) == 0) {
            *out = (enum io_op)i;
            return RC_OK;
        }
    }
    return RC_INVALID;
}

static int parse_error(const char *s, struct io_fault *f)
{
    static const struct { const char *name; int err; } errs[] = {
        {"eio", EIO}, {"enospc", ENOSPC}, {"edquot", EDQUOT},
        {"erofs", EROFS}};
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
        if (strcmp(s, errs[i].name) == 0) {
            f->kind = IO_FAULT_ERRNO;
            f->err = errs[i].err;
            return RC_OK;
        }
    }
    if (strcmp(s, "short") == 0) {
        f->kind = IO_FAULT_SHORT;
        f->err = ENOSPC;
        return RC_OK;
    }
    if (strcmp(s, "flip") == 0 &&
        (f->op == IO_OP_READ || f->op == IO_OP_WRITE)) {
        f->kind = f->op == IO_OP_READ ? IO_FAULT_FLIP_READ
                                      : IO_FAULT_FLIP_WRITE;
        return RC_OK;
    }
    return RC_INVALID;
}

static int parse_count(const char *s, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-') {
        return RC_INVALID;
    }
    *out = (uint64_t)v;
    return RC_OK;
}

static int parse_key(char *kv, struct io_fault *f)
{
    char *eq = strchr(kv, '=');
    if (eq == NULL) {
        return RC_INVALID;
    }
    *eq = '\0';
    const char *v = eq + 1;
    if (strcmp(kv, "after") == 0) {
        return parse_count(v, &f->after);
    }
    if (strcmp(kv, "times") == 0) {
        return parse_count(v, &f->times);
    }
    if (strcmp(kv, "path") == 0) {
        size_t n = strlen(v);
        if (n == 0 || n >= sizeof f->path) {
            return RC_INVALID;
        }
        memcpy(f->path, v, n + 1);
        return RC_OK;
    }
    if (strcmp(kv, "armed") == 0 && strcmp(v, "sigusr1") == 0) {
        f->on_signal = SIGUSR1;
        return RC_OK;
    }
    if (strcmp(kv, "armed") == 0 && strcmp(v, "sigusr2") == 0) {
        f->on_signal = SIGUSR2;
        return RC_OK;
    }
    return RC_INVALID;
}

/* One "op:error[:key=value]..." rule, parsed in place. */
static int parse_rule(char *rule, struct io_fault *f)
{
    *f = (struct io_fault){0};
    char *save = NULL;
    char *op = strtok_r(rule, ":", &save);
    char *err = op != NULL ? strtok_r(NULL, ":", &save) : NULL;
    if (err == NULL || parse_op(op, &f->op) != RC_OK ||
        parse_error(err, f) != RC_OK) {
        return RC_INVALID;
    }
    for (char *kv = strtok_r(NULL, ":", &save); kv != NULL;
         kv = strtok_r(NULL, ":", &save)) {
        if (parse_key(kv, f) != RC_OK) {
            return RC_INVALID;
        }
    }
    return RC_OK;
}

int io_fault_parse(const char *spec)
{
    char copy[1024];
    size_t len = strlen(spec);
    if (len >= sizeof copy) {
        return RC_INVALID;
    }
    memcpy(copy, spec, len + 1);
    struct io_fault rules[IO_FAULTS_MAX];
    size_t n = 0;
    char *save = NULL;
    for (char *r = strtok_r(copy, ";", &save); r != NULL;
         r = strtok_r(NULL, ";", &save)) {
        if (n == IO_FAULTS_MAX || parse_rule(r, &rules[n]) != RC_OK) {
            return RC_INVALID;
        }
        n++;
    }
    if (n + atomic_load(&io__n_rules) > IO_FAULTS_MAX) {
        return RC_INVALID;
    }
    for (size_t i = 0; i < n; i++) {
        int rv = io_fault_add(&rules[i]);
        ASSERT(rv == RC_OK); /* room was checked above */
    }
    return RC_OK;
}

static void signal_cb(int signum)
{
    io_fault_release(signum); /* a lock-free store: safe in a handler */
}

int io_fault_from_env(void)
{
    const char *spec = getenv("CAIRN_IO_FAULTS");
    if (spec == NULL || spec[0] == '\0') {
        return RC_OK;
    }
    int rv = io_fault_parse(spec);
    if (rv != RC_OK) {
        return rv;
    }
    struct sigaction sa = {.sa_handler = signal_cb};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGUSR1, &sa, NULL) != 0 ||
        sigaction(SIGUSR2, &sa, NULL) != 0) {
        return RC_IO;
    }
    return RC_OK;
}
