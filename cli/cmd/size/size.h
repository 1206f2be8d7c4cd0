/* `cairn size`: the disk a topic needs, bytes = message size x messages
 * per second x retention in seconds x replication factor, across the
 * cluster, per broker and with headroom. 64-bit and overflow-checked: a
 * product that does not fit is an error, never a wrapped number. Only
 * --topic asks the cluster (cli/cmd/size/size_topic.h). */
#ifndef CAIRN_CLI_SIZE_H
#define CAIRN_CLI_SIZE_H

#include <stdio.h>

void size_usage(FILE *out);

/* argv[0] is "size"; controllers (id@host:port,...) for --topic.
 * Returns the exit code. */
int size_main(int argc, char **argv, const char *controllers);

#endif
