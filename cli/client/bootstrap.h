/* Where the Kafka commands (produce, consume, topics, bench) find the
 * cluster when --bootstrap-servers and $CAIRN_BOOTSTRAP are not given but
 * the controllers are (--controllers or $CAIRN_CONTROLLERS): the Kafka
 * listeners of the brokers registered in the controllers' metadata image,
 * so scripts that name only a cluster's controllers keep working. The
 * brokers' own Metadata then tells librdkafka about the rest. One
 * thread. */
#ifndef CAIRN_CLI_BOOTSTRAP_H
#define CAIRN_CLI_BOOTSTRAP_H

#include <stddef.h>

#include "cli/client/ctl_client.h"
#include "common/assert.h"

/* The local cluster's brokers (deploy/cluster.sh, base port 19000). */
#define BOOTSTRAP_DEFAULT "127.0.0.1:19091,127.0.0.1:19092,127.0.0.1:19093"

/* Enough brokers to bootstrap from; librdkafka learns the others. */
#define BOOTSTRAP_BROKERS_MAX 16

/* "host:port," of each, as "[v6]:port" at worst. */
#define BOOTSTRAP_BYTES (BOOTSTRAP_BROKERS_MAX * CTL_CLIENT_ADDR_BYTES)

/* Asks the controllers for their metadata image and writes up to
 * BOOTSTRAP_BROKERS_MAX unfenced brokers as "host:port,..." into out (cap
 * bytes). RC_OK; RC_NOT_FOUND when no controller sent an image or it
 * lists no unfenced broker; RC_INVALID for a bad controller list; RC_NOMEM.
 * err (errcap bytes) says why on failure. */
MUST_CHECK int bootstrap_from_controllers(const char *controllers, char *out,
                                          size_t cap, char *err,
                                          size_t errcap);

#endif
