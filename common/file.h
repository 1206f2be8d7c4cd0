/* Small-file helpers for the partition log: crash-safe replacement of a
 * checkpoint (write a temporary, fsync, rename, fsync the directory),
 * bounded reads of small files, and directory fsync. Blocking; called on
 * the loop thread only for rare events (open, close, leader change) or from
 * the threadpool by the group-commit job. */
#ifndef CAIRN_COMMON_FILE_H
#define CAIRN_COMMON_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/assert.h"

/* Checked text files (checkpoints): the text, then one last line
 *     crc32c <8 lowercase hex digits>\n
 * holding the CRC-32C of every byte before that line, so the file stays
 * readable with cat while a torn, cut or flipped one is told apart from
 * a good one. Bytes the checksum line adds, at most. */
#define FILE_CHECK_LINE_BYTES 16

/* Writes len bytes of data to fd whole (short writes and EINTR retried):
 * RC_OK, or RC_IO. */
MUST_CHECK int file_write_all(int fd, const void *data, size_t len);

/* Replaces dir/name with len bytes of data, durably. */
MUST_CHECK int file_write_atomic(const char *dir, const char *name,
                                 const void *data, size_t len);

/* Reads dir/name into buf (at most cap bytes, NUL-terminated, so cap must
 * leave room). RC_NOT_FOUND when the file does not exist, RC_TOO_LARGE when
 * it does not fit. A read that returns less than asked ends the file, as
 * it does for a regular file (no read past it to see 0): one read for a
 * checkpoint, not two, for each of a broker's partitions at start. */
MUST_CHECK int file_read_small(const char *dir, const char *name,
                               char *buf, size_t cap, size_t *len_out);

/* file_write_atomic() of text (which should end with a newline) followed
 * by its checksum line. */
MUST_CHECK int file_write_checked(const char *dir, const char *name,
                                  const char *text, size_t len);

/* Reads dir/name as written by file_write_checked() into buf (cap bytes,
 * room for the checksum line and a NUL included): on RC_OK, buf holds the
 * text without the checksum line, NUL-terminated, *len_out its length.
 * RC_NOT_FOUND when the file does not exist; RC_CORRUPT when it is empty,
 * does not end with a newline (cut short), or its checksum line does not
 * parse or match; RC_TOO_LARGE, RC_IO. A file whose last line is no
 * checksum line at all (written before checksums were) is returned whole
 * with *unchecked set: the caller parses it strictly, then rewrites it;
 * otherwise *unchecked is false. */
MUST_CHECK int file_read_checked(const char *dir, const char *name,
                                 char *buf, size_t cap, size_t *len_out,
                                 bool *unchecked);

/* fsync(2) on a directory, making creations, renames and unlinks in it
 * durable. */
MUST_CHECK int file_sync_dir(const char *dir);

/* syncfs(2) of the file system that holds dir (common/io.h: io_syncfs):
 * everything written on it durable. RC_FULL when dir cannot be opened
 * for want of a descriptor or memory (nothing was synced, and nothing
 * says the disk failed), RC_IO for any other failure. */
MUST_CHECK int file_sync_fs(const char *dir);

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
