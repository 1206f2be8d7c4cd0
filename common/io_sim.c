/* The simulated disk (common/io_sim.h). */
#include "common/io_sim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "common/io.h"
#include "common/rc.h"

#define IO_SIM__FDS_MAX 4096

struct io_sim__extent {
    int64_t pos;
    int64_t len;
};

struct io_sim__file {
    char *path;
    bool is_dir;
    bool entry_durable;  /* the name survives a power loss */
    uint8_t *data;       /* the cache */
    int64_t size;
    int64_t cap;
    uint8_t *disk;       /* the platter */
    int64_t disk_size;
    int64_t disk_cap;
    struct io_sim__extent *dirty; /* written since the last sync */
    size_t n_dirty;
    size_t cap_dirty;
    int opens;           /* fds on it */
    bool unlinked;       /* freed when the last fd closes */
};

struct io_sim__fd {
    struct io_sim__file *f; /* NULL: free */
    int64_t pos;
};

struct io_sim {
    struct io_sim__file **files;
    size_t n_files;
    size_t cap_files;
    struct io_sim__fd fds[IO_SIM__FDS_MAX];
};

static struct io_sim *io_sim__installed;

static int fail(int err)
{
    errno = err;
    return -1;
}

static void file_free(struct io_sim__file *f)
{
    free(f->path);
    free(f->data);
    free(f->disk);
    free(f->dirty);
    free(f);
}

static struct io_sim__file *find(const struct io_sim *d, const char *path)
{
    for (size_t i = 0; i < d->n_files; i++) {
        if (strcmp(d->files[i]->path, path) == 0) {
            return d->files[i];
        }
    }
    return NULL;
}

/* Takes f off the name table; freed now, or by its last close. */
static void forget(struct io_sim *d, struct io_sim__file *f)
{
    for (size_t i = 0; i < d->n_files; i++) {
        if (d->files[i] == f) {
            d->files[i] = d->files[--d->n_files];
            break;
        }
    }
    if (f->opens > 0) {
        f->unlinked = true;
    } else {
        file_free(f);
    }
}

static struct io_sim__file *create(struct io_sim *d, const char *path,
                                   bool is_dir)
{
    if (d->n_files == d->cap_files) {
        size_t cap = d->cap_files == 0 ? 16 : d->cap_files * 2;
        void *p = realloc(d->files, cap * sizeof *d->files);
        if (p == NULL) {
            return NULL;
        }
        d->files = p;
        d->cap_files = cap;
    }
    struct io_sim__file *f = calloc(1, sizeof *f);
    if (f == NULL || (f->path = strdup(path)) == NULL) {
        free(f);
        return NULL;
    }
    f->is_dir = is_dir;
    f->entry_durable = is_dir;
    d->files[d->n_files++] = f;
    return f;
}

static bool reserve(uint8_t **buf, int64_t *cap, int64_t need)
{
    if (need <= *cap) {
        return true;
    }
    int64_t c = *cap == 0 ? 4096 : *cap;
    while (c < need) {
        c *= 2;
    }
    uint8_t *p = realloc(*buf, (size_t)c);
    if (p == NULL) {
        return false;
    }
    *buf = p;
    *cap = c;
    return true;
}

/* Sets a buffer's size, zero-filling what it grows into. */
static bool resize(uint8_t **buf, int64_t *cap, int64_t *size, int64_t to)
{
    if (!reserve(buf, cap, to)) {
        return false;
    }
    if (to > *size) {
        memset(*buf + *size, 0, (size_t)(to - *size));
    }
    *size = to;
    return true;
}

static struct io_sim__fd *fd_get(struct io_sim *d, int fd)
{
    int i = fd - IO_SIM_FD_BASE;
    if (i < 0 || i >= IO_SIM__FDS_MAX || d->fds[i].f == NULL) {
        return NULL;
    }
    return &d->fds[i];
}

static int sim_open(void *ctx, const char *path, int flags, mode_t mode)
{
    (void)mode;
    struct io_sim *d = ctx;
    struct io_sim__file *f = find(d, path);
    bool dir = (flags & O_DIRECTORY) != 0;
    if (f == NULL && dir) {
        f = create(d, path, true);
    } else if (f == NULL && (flags & O_CREAT) != 0) {
        f = create(d, path, false);
    } else if (f == NULL) {
        return fail(ENOENT);
    } else if ((flags & O_CREAT) != 0 && (flags & O_EXCL) != 0) {
        return fail(EEXIST);
    }
    if (f == NULL) {
        return fail(ENOMEM);
    }
    if (f->is_dir != dir && dir) {
        return fail(ENOTDIR);
    }
    for (int i = 0; i < IO_SIM__FDS_MAX; i++) {
        if (d->fds[i].f == NULL) {
            if ((flags & O_TRUNC) != 0 && !f->is_dir) {
                f->size = 0;
            }
            d->fds[i] = (struct io_sim__fd){.f = f};
            f->opens++;
            return IO_SIM_FD_BASE + i;
        }
    }
    return fail(EMFILE);
}

static int sim_close(void *ctx, int fd)
{
    struct io_sim *d = ctx;
    struct io_sim__fd *h = fd_get(d, fd);
    if (h == NULL) {
        return fail(EBADF);
    }
    struct io_sim__file *f = h->f;
    h->f = NULL;
    if (--f->opens == 0 && f->unlinked) {
        file_free(f);
    }
    return 0;
}

static ssize_t sim_read(void *ctx, int fd, void *buf, size_t n,
                        off_t offset)
{
    struct io_sim__fd *h = fd_get(ctx, fd);
    if (h == NULL) {
        return fail(EBADF);
    }
    if (h->f->is_dir) {
        return fail(EISDIR);
    }
    int64_t at = offset < 0 ? h->pos : (int64_t)offset;
    int64_t k = at >= h->f->size ? 0 : h->f->size - at;
    k = k < (int64_t)n ? k : (int64_t)n;
    memcpy(buf, h->f->data + at, (size_t)k);
    if (offset < 0) {
        h->pos += k;
    }
    return (ssize_t)k;
}

/* Notes [pos, pos + len) as written since the last sync. */
static bool note_dirty(struct io_sim__file *f, int64_t pos, int64_t len)
{
    if (f->n_dirty > 0) {
        struct io_sim__extent *last = &f->dirty[f->n_dirty - 1];
        if (pos >= last->pos && pos <= last->pos + last->len) {
            int64_t end = pos + len;
            if (end > last->pos + last->len) {
                last->len = end - last->pos;
            }
            return true;
        }
    }
    if (f->n_dirty == f->cap_dirty) {
        size_t cap = f->cap_dirty == 0 ? 8 : f->cap_dirty * 2;
        void *p = realloc(f->dirty, cap * sizeof *f->dirty);
        if (p == NULL) {
            return false;
        }
        f->dirty = p;
        f->cap_dirty = cap;
    }
    f->dirty[f->n_dirty++] = (struct io_sim__extent){pos, len};
    return true;
}

static ssize_t sim_write(void *ctx, int fd, const void *buf, size_t n,
                         off_t offset)
{
    struct io_sim__fd *h = fd_get(ctx, fd);
    if (h == NULL) {
        return fail(EBADF);
    }
    struct io_sim__file *f = h->f;
    if (f->is_dir) {
        return fail(EISDIR);
    }
    int64_t at = offset < 0 ? h->pos : (int64_t)offset;
    int64_t end = at + (int64_t)n;
    if ((end > f->size && !resize(&f->data, &f->cap, &f->size, end)) ||
        !note_dirty(f, at, (int64_t)n)) {
        return fail(ENOMEM);
    }
    memcpy(f->data + at, buf, n);
    if (offset < 0) {
        h->pos = end;
    }
    return (ssize_t)n;
}

/* A directory's sync makes the names in it durable. */
static void sync_dir(struct io_sim *d, const struct io_sim__file *dir)
{
    size_t len = strlen(dir->path);
    for (size_t i = 0; i < d->n_files; i++) {
        struct io_sim__file *f = d->files[i];
        if (strncmp(f->path, dir->path, len) == 0 && f->path[len] == '/' &&
            strchr(f->path + len + 1, '/') == NULL) {
            f->entry_durable = true;
        }
    }
}

static int sync_file(struct io_sim__file *f)
{
    if (!resize(&f->disk, &f->disk_cap, &f->disk_size, f->size)) {
        return fail(ENOMEM);
    }
    for (size_t i = 0; i < f->n_dirty; i++) {
        int64_t pos = f->dirty[i].pos;
        int64_t end = pos + f->dirty[i].len;
        end = end < f->size ? end : f->size;
        if (pos < end) {
            memcpy(f->disk + pos, f->data + pos, (size_t)(end - pos));
        }
    }
    f->n_dirty = 0;
    return 0;
}

static int sim_sync(void *ctx, int fd)
{
    struct io_sim *d = ctx;
    struct io_sim__fd *h = fd_get(d, fd);
    if (h == NULL) {
        return fail(EBADF);
    }
    struct io_sim__file *f = h->f;
    if (f->is_dir) {
        sync_dir(d, f);
        return 0;
    }
    return sync_file(f);
}

/* Everything under fd's directory, at any depth: names and data. */
static int sim_syncfs(void *ctx, int fd)
{
    struct io_sim *d = ctx;
    struct io_sim__fd *h = fd_get(d, fd);
    if (h == NULL || !h->f->is_dir) {
        return fail(h == NULL ? EBADF : ENOTDIR);
    }
    size_t len = strlen(h->f->path);
    for (size_t i = 0; i < d->n_files; i++) {
        struct io_sim__file *f = d->files[i];
        if (strncmp(f->path, h->f->path, len) != 0 || f->path[len] != '/') {
            continue;
        }
        f->entry_durable = true;
        if (!f->is_dir && sync_file(f) != 0) {
            return -1;
        }
    }
    return 0;
}

static void sim_sync_failed(void *ctx, int fd)
{
    struct io_sim__fd *h = fd_get(ctx, fd);
    if (h != NULL) {
        h->f->n_dirty = 0; /* never to reach the platter */
    }
}

/* POSIX_FADV_DONTNEED: the clean pages go, so reads see the platter again
 * except where writes wait for a sync (those pages are dirty and stay). A
 * range whose sync failed is clean and goes too: that is the point. */
static int sim_drop_cache(void *ctx, int fd)
{
    struct io_sim__fd *h = fd_get(ctx, fd);
    if (h == NULL) {
        return fail(EBADF);
    }
    struct io_sim__file *f = h->f;
    if (f->is_dir || f->size == 0) {
        return 0;
    }
    uint8_t *fresh = calloc((size_t)f->size, 1);
    if (fresh == NULL) {
        return fail(ENOMEM);
    }
    int64_t n = f->disk_size < f->size ? f->disk_size : f->size;
    if (n > 0) {
        memcpy(fresh, f->disk, (size_t)n);
    }
    for (size_t i = 0; i < f->n_dirty; i++) {
        int64_t pos = f->dirty[i].pos;
        int64_t end = pos + f->dirty[i].len;
        end = end < f->size ? end : f->size;
        if (pos < end) {
            memcpy(fresh + pos, f->data + pos, (size_t)(end - pos));
        }
    }
    memcpy(f->data, fresh, (size_t)f->size);
    free(fresh);
    return 0;
}

static int sim_rename(void *ctx, const char *from, const char *to)
{
    struct io_sim *d = ctx;
    struct io_sim__file *f = find(d, from);
    if (f == NULL) {
        return fail(ENOENT);
    }
    char *p = strdup(to);
    if (p == NULL) {
        return fail(ENOMEM);
    }
    struct io_sim__file *old = find(d, to);
    if (old != NULL && old != f) {
        forget(d, old);
    }
    free(f->path);
    f->path = p;
    f->entry_durable = false; /* until its directory's sync */
    return 0;
}

static int sim_truncate(void *ctx, int fd, off_t length)
{
    struct io_sim__fd *h = fd_get(ctx, fd);
    if (h == NULL) {
        return fail(EBADF);
    }
    if (length < 0) {
        return fail(EINVAL);
    }
    struct io_sim__file *f = h->f;
    if (!resize(&f->data, &f->cap, &f->size, (int64_t)length)) {
        return fail(ENOMEM);
    }
    return 0; /* the platter's size follows at the next sync */
}

static int sim_unlink(void *ctx, const char *path)
{
    struct io_sim *d = ctx;
    struct io_sim__file *f = find(d, path);
    if (f == NULL || f->is_dir) {
        return fail(f == NULL ? ENOENT : EISDIR);
    }
    forget(d, f);
    return 0;
}

static void sim_path(void *ctx, int fd, char *buf, size_t cap)
{
    struct io_sim__fd *h = fd_get(ctx, fd);
    if (h != NULL && cap > 0) {
        size_t n = strlen(h->f->path);
        n = n < cap - 1 ? n : cap - 1;
        memcpy(buf, h->f->path, n);
        buf[n] = '\0';
    }
}

static int sim_size(void *ctx, int fd, off_t *size)
{
    struct io_sim__fd *h = fd_get(ctx, fd);
    if (h == NULL) {
        return fail(EBADF);
    }
    *size = (off_t)h->f->size;
    return 0;
}

static int sim_mkdir(void *ctx, const char *path, mode_t mode)
{
    (void)mode;
    struct io_sim *d = ctx;
    if (find(d, path) != NULL) {
        return fail(EEXIST);
    }
    return create(d, path, true) != NULL ? 0 : fail(ENOMEM);
}

/* The name of f if it is an entry of dir (len bytes), else NULL. */
static const char *entry_of(const struct io_sim__file *f, const char *dir,
                            size_t len)
{
    if (strncmp(f->path, dir, len) != 0 || f->path[len] != '/') {
        return NULL;
    }
    const char *name = f->path + len + 1;
    return *name != '\0' && strchr(name, '/') == NULL ? name : NULL;
}

static int sim_list(void *ctx, const char *dir,
                    void (*each)(void *arg, const char *name), void *arg)
{
    struct io_sim *d = ctx;
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') {
        len--;
    }
    /* Names first: each() may unlink what it is given. */
    size_t n = 0;
    char **names = calloc(d->n_files + 1, sizeof *names);
    if (names == NULL) {
        return fail(ENOMEM);
    }
    for (size_t i = 0; i < d->n_files; i++) {
        const char *name = entry_of(d->files[i], dir, len);
        if (name != NULL && (names[n] = strdup(name)) != NULL) {
            n++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        each(arg, names[i]);
        free(names[i]);
    }
    free(names);
    return 0;
}

static struct io_backend io_sim__backend = {
    .open = sim_open,
    .close = sim_close,
    .read = sim_read,
    .write = sim_write,
    .sync = sim_sync,
    .sync_failed = sim_sync_failed,
    .syncfs = sim_syncfs,
    .rename = sim_rename,
    .truncate = sim_truncate,
    .unlink = sim_unlink,
    .path = sim_path,
    .size = sim_size,
    .mkdir = sim_mkdir,
    .list = sim_list,
    .drop_cache = sim_drop_cache,
};

int io_sim_new(struct io_sim **out)
{
    *out = calloc(1, sizeof **out);
    return *out == NULL ? RC_NOMEM : RC_OK;
}

void io_sim_free(struct io_sim *d)
{
    if (d == NULL) {
        return;
    }
    ASSERT(io_sim__installed != d);
    for (int i = 0; i < IO_SIM__FDS_MAX; i++) {
        struct io_sim__file *f = d->fds[i].f;
        if (f != NULL && --f->opens == 0 && f->unlinked) {
            file_free(f);
        }
    }
    for (size_t i = 0; i < d->n_files; i++) {
        file_free(d->files[i]);
    }
    free(d->files);
    free(d);
}

void io_sim_install(struct io_sim *d)
{
    io_sim__installed = d;
    io_sim__backend.ctx = d;
    io_backend_set(&io_sim__backend);
}

void io_sim_uninstall(void)
{
    io_backend_set(NULL);
    io_sim__installed = NULL;
}

static bool under(const char *path, const char *prefix)
{
    return strncmp(path, prefix, strlen(prefix)) == 0;
}

void io_sim_power_loss(struct io_sim *d, const char *prefix)
{
    for (int i = 0; i < IO_SIM__FDS_MAX; i++) {
        if (d->fds[i].f != NULL && under(d->fds[i].f->path, prefix)) {
            int rv = sim_close(d, IO_SIM_FD_BASE + i);
            ASSERT(rv == 0);
        }
    }
    for (size_t i = 0; i < d->n_files;) {
        struct io_sim__file *f = d->files[i];
        if (!under(f->path, prefix) || f->is_dir) {
            i++;
            continue;
        }
        if (!f->entry_durable) {
            forget(d, f); /* moves the last file here */
            continue;
        }
        /* The cache has held every size the platter has: no allocation. */
        ASSERT(f->disk_size <= f->cap);
        if (f->disk_size > 0) {
            memcpy(f->data, f->disk, (size_t)f->disk_size);
        }
        f->size = f->disk_size;
        f->n_dirty = 0;
        i++;
    }
}

int io_sim_rot(struct io_sim *d, const char *path, int64_t pos,
               uint8_t mask)
{
    struct io_sim__file *f = find(d, path);
    if (f == NULL || pos < 0 || pos >= f->disk_size) {
        return RC_NOT_FOUND;
    }
    f->disk[pos] ^= mask;
    if (pos < f->size) {
        f->data[pos] ^= mask;
    }
    return RC_OK;
}

int io_sim_sizes(const struct io_sim *d, const char *path, int64_t *cached,
                 int64_t *durable)
{
    const struct io_sim__file *f = find(d, path);
    if (f == NULL) {
        return RC_NOT_FOUND;
    }
    *cached = f->size;
    *durable = f->disk_size;
    return RC_OK;
}
