/* Small-file helpers for the partition log (common/file.h). */
#include "common/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"
#include "common/limits.h"
#include "common/rc.h"

int file_path(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, LOG_PATH_BYTES_MAX, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= LOG_PATH_BYTES_MAX) {
        return RC_TOO_LARGE;
    }
    return RC_OK;
}

int file_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = io_write(fd, p, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return RC_IO;
        }
        p += n;
        len -= (size_t)n;
    }
    return RC_OK;
}

int file_sync_dir(const char *dir)
{
    int fd = io_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0) {
        return RC_IO;
    }
    int rv = io_fsync(fd) == 0 ? RC_OK : RC_IO;
    io_close(fd);
    return rv;
}

#define FILE__PROBE_NAME ".cairn-probe"

int file_probe_dir(const char *dir)
{
    char path[LOG_PATH_BYTES_MAX];
    int rv = file_path(path, dir, FILE__PROBE_NAME);
    if (rv != RC_OK) {
        return RC_IO;
    }
    int fd = io_open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {
        return errno == EMFILE || errno == ENFILE || errno == ENOMEM
                   ? RC_FULL
                   : RC_IO;
    }
    static const char byte = 'x';
    rv = io_write(fd, &byte, 1) == 1 && io_fdatasync(fd) == 0 ? RC_OK : RC_IO;
    io_close(fd);
    if (io_unlink(path) != 0) {
        rv = RC_IO;
    }
    return rv;
}

int file_write_atomic(const char *dir, const char *name,
                      const void *data, size_t len)
{
    char tmp_name[256];
    char tmp[LOG_PATH_BYTES_MAX];
    char path[LOG_PATH_BYTES_MAX];
    int n = snprintf(tmp_name, sizeof tmp_name, "%s.tmp", name);
    if (n < 0 || (size_t)n >= sizeof tmp_name) {
        return RC_TOO_LARGE;
    }
    int rv = file_path(tmp, dir, tmp_name);
    if (rv == RC_OK) {
        rv = file_path(path, dir, name);
    }
    if (rv != RC_OK) {
        return rv;
    }
    int fd = io_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return RC_IO;
    }
    rv = file_write_all(fd, data, len);
    if (rv == RC_OK && io_fdatasync(fd) != 0) {
        rv = RC_IO;
    }
    io_close(fd);
    if (rv == RC_OK && io_rename(tmp, path) != 0) {
        rv = RC_IO;
    }
    if (rv != RC_OK) {
        io_unlink(tmp);
        return rv;
    }
    return file_sync_dir(dir);
}

int file_read_small(const char *dir, const char *name, char *buf,
                    size_t cap, size_t *len_out)
{
    char path[LOG_PATH_BYTES_MAX];
    int rv = file_path(path, dir, name);
    if (rv != RC_OK) {
        return rv;
    }
    int fd = io_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        return errno == ENOENT ? RC_NOT_FOUND : RC_IO;
    }
    size_t len = 0;
    rv = RC_OK;
    for (;;) {
        if (len + 1 >= cap) {
            char probe;
            rv = io_read(fd, &probe, 1) == 0 ? RC_OK : RC_TOO_LARGE;
            break;
        }
        ssize_t got = io_read(fd, buf + len, cap - 1 - len);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            rv = RC_IO;
            break;
        }
        if (got == 0) {
            break;
        }
        len += (size_t)got;
    }
    io_close(fd);
    buf[len] = '\0';
    *len_out = len;
    return rv;
}

/* fsyncs the directory holding path ("." for a bare name). */
static int sync_parent(const char *path)
{
    char parent[LOG_PATH_BYTES_MAX];
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        return file_sync_dir(".");
    }
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    memcpy(parent, path, n);
    parent[n] = '\0';
    return file_sync_dir(parent);
}

int file_mkdirs(const char *dir)
{
    char path[LOG_PATH_BYTES_MAX];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) {
        return RC_INVALID;
    }
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0') {
            continue;
        }
        char saved = path[i];
        path[i] = '\0';
        if (mkdir(path, 0755) == 0) {
            /* A new entry is durable only once its parent is synced. */
            int rv = sync_parent(path);
            if (rv != RC_OK) {
                return rv;
            }
        } else if (errno != EEXIST) {
            return RC_IO;
        }
        path[i] = saved;
    }
    return RC_OK;
}
