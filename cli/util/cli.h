/* Shared pieces of the cairn command (cli/main.c): exit codes, the time
 * bounds of controller calls, option parsing, Kafka error texts, error
 * printing, printable strings and the clock. The CLI is one thread;
 * nothing here is thread-safe. */
#ifndef CAIRN_CLI_CLI_H
#define CAIRN_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/assert.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILED 1 /* the operation failed */
#define CLI_EXIT_USAGE 2  /* bad command line */

/* One call to one controller; a controller that does not answer within
 * this is shown as unreachable, or the next one is tried. */
#define CLI_CALL_TIMEOUT_MS 1000u

/* Finding the active controller (redirects, failover, elections) gives
 * up after this. */
#define CLI_ACTIVE_BUDGET_MS 10000u

/* The first lines of every usage text. */
#define CLI_USAGE_LINE                                                       \
    "usage: cairn [--bootstrap-servers HOST:PORT,...] [-X KEY=VALUE]...\n"   \
    "             [--controllers ID@HOST:PORT,...] COMMAND [ARGS]\n"

/* Matches argv[*i] as "--name VALUE" or "--name=VALUE". Returns 1 on a
 * match (*value set, *i left on the last argument used), 0 when argv[*i]
 * is another argument, -1 when the value is missing. */
MUST_CHECK int cli_option(int argc, char **argv, int *i, const char *name,
                          const char **value);

/* A whole decimal number in [min, max]; false otherwise. */
MUST_CHECK bool cli_parse_int32(const char *s, int32_t min, int32_t max,
                                int32_t *out);

/* A whole decimal number in [min, max]; false otherwise. */
MUST_CHECK bool cli_parse_int64(const char *s, int64_t min, int64_t max,
                                int64_t *out);

/* "cairn: MESSAGE\n" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Kafka's own description of an error code (Errors.java), for the codes
 * the CLI meets; NULL for others. */
const char *cli_kafka_description(int16_t code);

/* The text to show for a Kafka error: the controller's message when it
 * says more than the code's name, else Kafka's own description of the
 * code (Errors.java). Never NULL. */
const char *cli_kafka_error_text(int16_t code, const char *message);

/* The client id of the CLI's own Kafka requests
 * (common/kafka/kafka_client.h). */
#define CLI_KAFKA_CLIENT_ID "cairn"

/* Copies s into out (cap > 0 bytes, cut to fit), replacing each byte
 * outside printable ASCII with '?'. */
void cli_printable(const char *s, char *out, size_t cap);

/* Monotonic nanoseconds (CLOCK_MONOTONIC). */
int64_t cli_clock_ns(void);
/* The monotonic clock in ms; the wall clock in ms since the epoch. */
int64_t cli_mono_ms(void);
int64_t cli_wall_ms(void);

/* Flushes stdout. Returns rc, or CLI_EXIT_FAILED (message printed) when
 * writing the output failed. */
MUST_CHECK int cli_finish_output(int rc);

#endif
