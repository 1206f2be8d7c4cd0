/* Small-file helpers for the partition log: crash-safe replacement of a
 * checkpoint (write a temporary, fsync, rename, fsync the directory),
 * bounded reads of small files, and directory fsync. Blocking; called on
 * the loop thread only for rare events (open, close, leader change) or from
 * the threadpool by the group-commit job. */
#ifndef CAIRN_COMMON_FILE_H
#define CAIRN_COMMON_FILE_H

#include <stddef.h>

#include "common/assert.h"

/* Writes len bytes of data to fd whole (short writes and EINTR retried):
 * RC_OK, or RC_IO. */
MUST_CHECK int file_write_all(int fd, const void *data, size_t len);

/* Replaces dir/name with len bytes of data, durably. */
MUST_CHECK int file_write_atomic(const char *dir, const char *name,
                                 const void *data, size_t len);

/* Reads dir/name into buf (at most cap bytes, NUL-terminated, so cap must
 * leave room). RC_NOT_FOUND when the file does not exist, RC_TOO_LARGE when
 * it does not fit. */
MUST_CHECK int file_read_small(const char *dir, const char *name,
                               char *buf, size_t cap, size_t *len_out);

/* fsync(2) on a directory, making creations, renames and unlinks in it
 * durable. */
MUST_CHECK int file_sync_dir(const char *dir);

/* mkdir -p; each directory it creates is made durable by fsyncing its
 * parent before this returns (a power loss must not lose a partition's
 * directory, and with it acknowledged writes). */
MUST_CHECK int file_mkdirs(const char *dir);

/* Checks that dir still takes writes: creates, writes, fdatasyncs and
 * removes a small probe file in it. RC_OK; RC_FULL when the process or
 * system is out of file descriptors or memory (the directory is not to
 * blame); RC_IO when the directory itself fails (missing, not a
 * directory, read-only, full, I/O errors). */
MUST_CHECK int file_probe_dir(const char *dir);

/* Formats dir/name into out (LOG_PATH_BYTES_MAX); RC_TOO_LARGE if cut. */
MUST_CHECK int file_path(char *out, const char *dir, const char *name);

#endif
