/* `cairn status [--json]`: asks every controller for DescribeCluster and
 * shows the controllers, then the brokers and partitions of the active
 * controller's metadata image (or the freshest one any controller sent),
 * each partition with its HW, its replicas' log end offsets and its flags,
 * asked of the brokers over the Kafka protocol (cli/client/health.h). One
 * thread. */
#ifndef CAIRN_CLI_STATUS_H
#define CAIRN_CLI_STATUS_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/client/ctl_client.h"
#include "cli/cmd/status/watch.h"

struct status_opts {
    bool json;
    bool all;   /* --all: every partition, however many are healthy */
    bool watch; /* --watch: cli/cmd/status/watch.h */
    struct watch_opts w;
};

/* Lines of the usage text for this command. */
void status_usage(FILE *out);

/* Parses argv[1..argc) (argv[0] is "status"). Returns -1 to go on and
 * run, or the exit code to stop with (--help: 0; a usage error: 2, with
 * the message and usage printed). */
MUST_CHECK int status_parse(int argc, char **argv, struct status_opts *o);

/* Runs the command; returns the exit code: 0 when some controller sent
 * metadata (whether or not one is active), 1 when none did. */
MUST_CHECK int status_run(struct ctl_client *cc, const struct status_opts *o);

/* The document of `status --json`, written to out; the exit code as
 * status_run's. */
MUST_CHECK int status_json_write(struct ctl_client *cc, FILE *out);

#endif
