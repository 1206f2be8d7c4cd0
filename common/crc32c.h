/* CRC-32C (Castagnoli, the iSCSI CRC: reflected polynomial 0x82F63B78,
 * initial value and final XOR all ones), as RecordBatch v2 uses it.
 * Computed by libisal's crc32_iscsi, which picks SSE4.2/PCLMUL code at run
 * time. Pure, any thread. */
#ifndef CAIRN_COMMON_CRC32C_H
#define CAIRN_COMMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C of len bytes at p. */
uint32_t crc32c(const void *p, size_t len);

/* Continues a CRC: crc32c_extend(crc32c(a), b) == crc32c(a || b).
 * Start from crc = 0 for an empty prefix. */
uint32_t crc32c_extend(uint32_t crc, const void *p, size_t len);

#endif
