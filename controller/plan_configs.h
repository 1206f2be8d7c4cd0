/* The planner of IncrementalAlterConfigs and AlterConfigs, and the check
 * of CreateTopics' configs (controller/plan_configs.c): Kafka's validation
 * of topic configs and of the broker configs Kafka changes at runtime
 * (KIP-226; resource "" is the cluster-wide default, "N" broker N), by
 * the topic config registry (common/topic_config.h), and the
 * ConfigRecords that take a resource's dynamic configs from what they
 * are to what the request asks. Pure, like the rest of
 * controller/plan.h; loop thread of the active controller. */
#ifndef CAIRN_CONTROLLER_PLAN_CONFIGS_H
#define CAIRN_CONTROLLER_PLAN_CONFIGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/meta/meta.h"
#include "controller/plan.h"

/* Kafka's AlterConfigOp types. */
#define PLAN_CONFIG_SET 0
#define PLAN_CONFIG_DELETE 1
#define PLAN_CONFIG_APPEND 2
#define PLAN_CONFIG_SUBTRACT 3

struct plan_config_op {
    const char *name;  /* NULL counts as "" */
    int32_t op;        /* PLAN_CONFIG_* */
    const char *value; /* NULL: null */
};

struct plan_config_resource {
    int32_t type;      /* META_RESOURCE_* */
    const char *name;
    const struct plan_config_op *ops;
    size_t n_ops;
};

struct plan_config_result {
    int16_t error;
    char message[PLAN_CONFIG_MESSAGE_BYTES]; /* "" with no error */
};

/* CreateTopics' check of a new topic's configs[0..n), as Kafka's
 * controller makes it before writing anything: every name known, every
 * value present and valid by topic_config_check(), no name twice.
 * NONE, or INVALID_CONFIG with the first failure's message in msg:
 * topic_config_check()'s, "Null value not supported for topic
 * configs: x" or "Error due to duplicate config keys". */
int16_t plan_topic_configs_check(const struct plan_config *configs,
                                 size_t n,
                                 char msg[PLAN_CONFIG_MESSAGE_BYTES]);

/* Plans res[0..n): results[i] answers res[i]; the records of every
 * resource without an error are appended (none with validate_only).
 * replace (AlterConfigs): the SETs given become the whole set of the
 * resource's dynamic configs. Errors, per resource, first match wins:
 *   INVALID_REQUEST   a resource given more than once (each time), a
 *                     resource type other than topic and broker, a
 *                     broker name neither "" nor an id, a key given
 *                     twice, a broker config Kafka changes only with a
 *                     restart ("Cannot update these configs
 *                     dynamically: Set(x)"), an unknown operation, a
 *                     null value to SET, APPEND or SUBTRACT, a DELETE in
 *                     replace mode;
 *   UNKNOWN_TOPIC_OR_PARTITION  no such topic;
 *   INVALID_CONFIG    an unknown name or bad value (the message says
 *                     which), APPEND or SUBTRACT on a key that is not a
 *                     list;
 *   THROTTLING_QUOTA_EXCEEDED   the records do not fit in this batch.
 * RC_NOMEM leaves out as it was. */
MUST_CHECK int plan_alter_configs(const struct meta_image *img,
                                  const struct plan_config_resource *res,
                                  size_t n, bool replace, bool validate_only,
                                  struct plan_records *out,
                                  struct plan_config_result *results);

#endif
