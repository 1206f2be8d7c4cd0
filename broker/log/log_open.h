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

/* log_open() in two halves, for a broker opening thousands of logs on
 * worker threads: the files (any thread; the log is not yet usable),
 * then the loop's part (the loop thread, before any other call on the
 * log, log_close() included). */
MUST_CHECK int log_open_detached(struct log **out, const char *dir,
                                 const struct log_config *cfg,
                                 struct tracer *tracer);
void log_attach(struct log *l, uv_loop_t *loop);

#endif
