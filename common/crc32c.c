/* CRC-32C through libisal (common/crc32c.h). libisal's crc32_iscsi takes
 * the running register without the final inversion and an int length, so
 * large inputs go in chunks. */
#include "common/crc32c.h"

#include <isa-l/crc.h>
#include <limits.h>

uint32_t crc32c_extend(uint32_t crc, const void *p, size_t len)
{
    unsigned char *bytes = (unsigned char *)(uintptr_t)p; /* isal: no const */
    unsigned int reg = ~crc;
    while (len > 0) {
        size_t n = len > (size_t)INT_MAX ? (size_t)INT_MAX : len;
        reg = crc32_iscsi(bytes, (int)n, reg);
        bytes += n;
        len -= n;
    }
    return ~reg;
}

uint32_t crc32c(const void *p, size_t len)
{
    return crc32c_extend(0, p, len);
}
