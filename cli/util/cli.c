/* Shared pieces of the cairn command (cli/util/cli.h). */
#include "cli/util/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/kafka/kafka_error.h"

int cli_option(int argc, char **argv, int *i, const char *name,
               const char **value)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0) {
        return 0;
    }
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0') {
        return 0;
    }
    if (*i + 1 >= argc) {
        return -1;
    }
    *i += 1;
    *value = argv[*i];
    return 1;
}

bool cli_parse_int32(const char *s, int32_t min, int32_t max, int32_t *out)
{
    int64_t v = 0;
    if (!cli_parse_int64(s, min, max, &v)) {
        return false;
    }
    *out = (int32_t)v;
    return true;
}

bool cli_parse_int64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || v < min || v > max) {
        return false;
    }
    *out = (int64_t)v;
    return true;
}

int64_t cli_clock_ns(void)
{
    struct timespec ts;
    int rv = clock_gettime(CLOCK_MONOTONIC, &ts);
    ASSERT(rv == 0);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t cli_mono_ms(void)
{
    return cli_clock_ns() / 1000000;
}

int64_t cli_wall_ms(void)
{
    struct timespec ts;
    int rv = clock_gettime(CLOCK_REALTIME, &ts);
    ASSERT(rv == 0);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cli_error(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cairn: %s\n", line);
}

const char *cli_kafka_description(int16_t code)
{
    switch (code) {
    case KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION:
        return "This server does not host this topic-partition.";
    case KAFKA_ERROR_REQUEST_TIMED_OUT:
        return "The request timed out.";
    case KAFKA_ERROR_INVALID_TOPIC_EXCEPTION:
        return "The request attempted to perform an operation on an "
               "invalid topic.";
    case KAFKA_ERROR_TOPIC_ALREADY_EXISTS:
        return "Topic with this name already exists.";
    case KAFKA_ERROR_INVALID_PARTITIONS:
        return "Number of partitions is below 1.";
    case KAFKA_ERROR_INVALID_REPLICATION_FACTOR:
        return "Replication factor is below 1 or larger than the number "
               "of available brokers.";
    case KAFKA_ERROR_INVALID_CONFIG:
        return "Configuration is invalid.";
    case KAFKA_ERROR_NOT_CONTROLLER:
        return "This is not the correct controller for this cluster.";
    case KAFKA_ERROR_INVALID_REQUEST:
        return "The request was malformed or not understood.";
    case KAFKA_ERROR_POLICY_VIOLATION:
        return "Request parameters do not satisfy the configured policy.";
    case KAFKA_ERROR_THROTTLING_QUOTA_EXCEEDED:
        return "The throttling quota has been exceeded.";
    case KAFKA_ERROR_UNKNOWN_SERVER_ERROR:
        return "The server experienced an unexpected error when "
               "processing the request.";
    default:
        return NULL;
    }
}

const char *cli_kafka_error_text(int16_t code, const char *message)
{
    if (message != NULL && message[0] != '\0' &&
        strcmp(message, kafka_error_name(code)) != 0) {
        return message;
    }
    const char *text = cli_kafka_description(code);
    return text != NULL
               ? text
               : cli_kafka_description(KAFKA_ERROR_UNKNOWN_SERVER_ERROR);
}

int cli_finish_output(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "cairn: writing the output failed: %s\n",
                strerror(errno));
        return CLI_EXIT_FAILED;
    }
    return rc;
}

void cli_printable(const char *s, char *out, size_t cap)
{
    ASSERT(cap > 0);
    size_t i = 0;
    for (; s[i] != '\0' && i + 1 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    out[i] = '\0';
}
