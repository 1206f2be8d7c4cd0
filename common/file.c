/* Small-file helpers for the partition log (common/file.h). */
#include "common/file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crc32c.h"
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

/* sync (io_fsync or io_syncfs) on directory dir. */
static int sync_dir_with(const char *dir, int (*sync)(int fd))
{
    int fd = io_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0) {
        return sync == io_syncfs && (errno == EMFILE || errno == ENFILE ||
                                     errno == ENOMEM)
                   ? RC_FULL
                   : RC_IO;
    }
    int rv = sync(fd) == 0 ? RC_OK : RC_IO;
    io_close(fd);
    return rv;
}

int file_sync_dir(const char *dir)
{
    return sync_dir_with(dir, io_fsync);
}

int file_sync_fs(const char *dir)
{
    return sync_dir_with(dir, io_syncfs);
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
        size_t want = cap - 1 - len;
        ssize_t got = io_read(fd, buf + len, want);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            rv = RC_IO;
            break;
        }
        len += (size_t)got;
        if ((size_t)got < want) {
            break; /* short from a regular file: its end (see file.h) */
        }
    }
    io_close(fd);
    buf[len] = '\0';
    *len_out = len;
    return rv;
}

#define FILE__CHECK_PREFIX "crc32c "
#define FILE__CHECK_PREFIX_BYTES 7
#define FILE__CHECK_HEX_BYTES 8

int file_write_checked(const char *dir, const char *name, const char *text,
                       size_t len)
{
    char *buf = malloc(len + FILE_CHECK_LINE_BYTES + 1);
    if (buf == NULL) {
        return RC_NOMEM;
    }
    memcpy(buf, text, len);
    int n = snprintf(buf + len, FILE_CHECK_LINE_BYTES + 1,
                     FILE__CHECK_PREFIX "%08" PRIx32 "\n", crc32c(text, len));
    ASSERT(n == FILE_CHECK_LINE_BYTES);
    int rv = file_write_atomic(dir, name, buf, len + (size_t)n);
    free(buf);
    return rv;
}

/* Parses the checksum line at line (line_len bytes, its newline
 * included) and checks it against the text before it. */
static int check_line(const char *buf, size_t text_len, const char *line,
                      size_t line_len)
{
    if (line_len != FILE_CHECK_LINE_BYTES) {
        return RC_CORRUPT;
    }
    uint32_t want = 0;
    for (size_t i = 0; i < FILE__CHECK_HEX_BYTES; i++) {
        char c = line[FILE__CHECK_PREFIX_BYTES + i];
        uint32_t v = 0;
        if (c >= '0' && c <= '9') {
            v = (uint32_t)(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            v = (uint32_t)(c - 'a' + 10);
        } else {
            return RC_CORRUPT;
        }
        want = want << 4 | v;
    }
    return crc32c(buf, text_len) == want ? RC_OK : RC_CORRUPT;
}

int file_read_checked(const char *dir, const char *name, char *buf,
                      size_t cap, size_t *len_out, bool *unchecked)
{
    size_t len = 0;
    *unchecked = false;
    int rv = file_read_small(dir, name, buf, cap, &len);
    if (rv != RC_OK) {
        return rv;
    }
    if (len == 0 || buf[len - 1] != '\n') {
        return RC_CORRUPT;
    }
    size_t line = len - 1; /* start of the last line */
    while (line > 0 && buf[line - 1] != '\n') {
        line--;
    }
    if (strncmp(buf + line, FILE__CHECK_PREFIX,
                FILE__CHECK_PREFIX_BYTES) != 0) {
        *unchecked = true;
        *len_out = len;
        return RC_OK;
    }
    rv = check_line(buf, line, buf + line, len - line);
    if (rv != RC_OK) {
        return rv;
    }
    buf[line] = '\0';
    *len_out = line;
    return RC_OK;
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
    if (io_mkdir(path, 0755) == 0) {
        return sync_parent(path); /* only the last was missing */
    }
    if (errno == EEXIST) {
        return RC_OK;
    }
    if (errno != ENOENT) {
        return RC_IO;
    }
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0') {
            continue;
        }
        char saved = path[i];
        path[i] = '\0';
        if (io_mkdir(path, 0755) == 0) {
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
