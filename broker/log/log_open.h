/* Opening a log (broker/log/log.h): the one call that needs the libuv
 * loop the log's group commits run from, kept apart so that the rest of
 * the log's interface, and the cores that use it, stay free of libuv. */
#ifndef CAIRN_BROKER_LOG_OPEN_H
#define CAIRN_BROKER_LOG_OPEN_H

#include <uv.h>

#include "broker/log/log.h"

/* Opens (creating if needed) the log in dir, recovering it. */
MUST_CHECK int log_open(struct log **out, const char *dir,
                        const struct log_config *cfg, uv_loop_t *loop,
                        struct tracer *tracer);

#endif
