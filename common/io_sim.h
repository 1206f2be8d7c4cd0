/* A simulated disk behind the I/O seam (common/io.h), for the simulation:
 * files live in memory, and each keeps two images.
 *
 * - What reads see (the page cache): every write, at once.
 * - What a power loss leaves (the platter): the cache as the file's last
 *   successful fdatasync/fsync found it. A sync copies the extents written
 *   since the previous one and sets the size; bytes the platter never got
 *   read back as zeros.
 *
 * A failed sync (an injected IO_OP_SYNC fault) drops the extents written
 * since the last good one, as Linux does after a failed writeback
 * (fsyncgate): the cache still shows them, the platter never will. A
 * later good sync then makes the file's size durable with a hole of zeros
 * where they were.
 *
 * A file's name survives a power loss once its directory has been synced
 * (io_open(dir, O_DIRECTORY) and io_fsync); a renamed file's new name
 * waits for that sync again. Directories themselves need no creating.
 *
 * The seam's faults (io_fault_add, io_fault_parse) apply as they do to
 * real files: path rules match the simulated paths. Deterministic and
 * single-threaded: for a simulation that runs on one thread. */
#ifndef CAIRN_COMMON_IO_SIM_H
#define CAIRN_COMMON_IO_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "common/assert.h"

#define IO_SIM_FD_BASE 1000000 /* simulated fds never look like real ones */

struct io_sim;

/* An empty disk. RC_NOMEM. */
MUST_CHECK int io_sim_new(struct io_sim **out);
/* Frees the disk (uninstall it first). */
void io_sim_free(struct io_sim *d);

/* Sends the seam's calls to d until io_sim_uninstall(). */
void io_sim_install(struct io_sim *d);
void io_sim_uninstall(void);

/* A power loss of the files whose path starts with prefix ("" for all):
 * their open fds are closed (the process died), every file whose name
 * is not durable is gone, and every other one is its platter image. */
void io_sim_power_loss(struct io_sim *d, const char *prefix);

/* Bit rot: flips the bits of mask in byte pos of path, on the platter and
 * in the cache alike (the damaged sector is read back). RC_NOT_FOUND when
 * there is no such file or byte. */
MUST_CHECK int io_sim_rot(struct io_sim *d, const char *path, int64_t pos,
                          uint8_t mask);

/* The size reads see and the size a power loss would leave; RC_NOT_FOUND
 * for no such file. */
MUST_CHECK int io_sim_sizes(const struct io_sim *d, const char *path,
                            int64_t *cached, int64_t *durable);

#endif
