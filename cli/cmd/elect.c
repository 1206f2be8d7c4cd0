/* `cairn elect` (cli/cmd/elect.h): ElectLeaders through the first broker of
 * the bootstrap list that answers, one line per partition. */
#include "cli/cmd/elect.h"

#include <stdlib.h>
#include <string.h>

#include "cli/util/cli.h"
#include "cli/util/opts.h"
#include "common/kafka/kafka_client.h"
#include "common/kafka/kafka_codec.h"
#include "common/limits.h"
#include "common/net/addr.h"
#include "common/rc.h"

/* One broker at a time, from the bootstrap list. */
#define ELECT__BROKERS_MAX 16

static const struct opts_cmd elect_cmd = {"elect", elect_usage};

void elect_usage(FILE *out)
{
    fputs("  elect [--type preferred|unclean] [--topic T [--partition P]]\n"
          "      Leader elections (Kafka's ElectLeaders, as\n"
          "      kafka-leader-election.sh runs them). preferred (the\n"
          "      default) makes each partition's first replica its leader\n"
          "      where it is alive and in sync; unclean elects a live\n"
          "      replica, in sync or not, for partitions with no leader.\n"
          "      Without --topic every partition is considered and only\n"
          "      those that needed an election are shown; --topic alone\n"
          "      means all of T's partitions. Prints one line per\n"
          "      partition: TOPIC-P and elected, or the error. Exits 1\n"
          "      when an election failed (not for 'not needed').\n",
          out);
}

int elect_parse(int argc, char **argv, struct elect_opts *o)
{
    const char *type = NULL;
    int32_t partition = -1;
    *o = (struct elect_opts){.type = KAFKA_ELECTION_PREFERRED,
                             .partition = -1};
    const struct opts_spec specs[] = {
        {"--type", OPTS_STRING, &type, 0, 0},
        {"--topic", OPTS_STRING, &o->topic, 0, 0},
        {"--partition", OPTS_INT32, &partition, 0, META_PARTITIONS_MAX - 1},
    };
    int n_pos = 0;
    int rc = opts_parse(&elect_cmd, argc, argv, 1, specs, ARRAY_LEN(specs),
                        &n_pos);
    if (rc >= 0) {
        return rc;
    }
    if (n_pos > 0) {
        return opts_usage_error(&elect_cmd, "unexpected argument '%s'",
                                argv[1]);
    }
    if (type != NULL && strcmp(type, "unclean") == 0) {
        o->type = KAFKA_ELECTION_UNCLEAN;
    } else if (type != NULL && strcmp(type, "preferred") != 0) {
        return opts_usage_error(&elect_cmd,
                                "--type: expected preferred or "
                                "unclean, got '%s'",
                                type);
    }
    if (partition >= 0 && o->topic == NULL) {
        return opts_usage_error(&elect_cmd, "--partition needs --topic");
    }
    o->partition = partition;
    return -1;
}

/* One request and its response body (malloc'd) from kc. */
static int call(struct kafka_client *kc, int16_t key, int16_t version,
                const struct writer *w, uint8_t **body, size_t *len)
{
    return kafka_client_call(kc, key, version, w, body, len);
}

/* The partition count of topic from the broker kc talks to (Metadata v4,
 * no auto-creation); 0 when it does not know the topic, -1 on failure. */
static int32_t partition_count(struct kafka_client *kc, const char *topic)
{
    struct kafka_MetadataRequestTopic t = {.Name = slice_from_str(topic)};
    struct kafka_MetadataRequest rq = {.Topics = &t, .TopicsCnt = 1};
    struct writer w;
    writer_init(&w, REQUEST_BYTES_MAX);
    uint8_t *body = NULL;
    size_t len = 0;
    int rv = kafka_metadata_request_encode(&w, 4, &rq);
    if (rv == RC_OK) {
        rv = call(kc, KAFKA_API_METADATA, 4, &w, &body, &len);
    }
    writer_free(&w);
    int32_t n = -1;
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, body, len);
    struct kafka_MetadataResponse resp;
    if (rv == RC_OK &&
        kafka_metadata_response_decode(&r, 4, &a, &resp) == RC_OK &&
        resp.TopicsCnt == 1) {
        n = resp.Topics[0].ErrorCode == KAFKA_ERROR_NONE
                ? resp.Topics[0].PartitionsCnt
                : 0;
    }
    arena_free(&a);
    free(body);
    return n;
}

/* Prints each partition's result; returns the exit code. */
static int report(const struct kafka_ElectLeadersResponse *resp, bool all)
{
    int rc = CLI_EXIT_OK;
    int shown = 0;
    if (resp->ErrorCode != KAFKA_ERROR_NONE) {
        cli_error("ElectLeaders: %s", kafka_error_name(resp->ErrorCode));
        rc = CLI_EXIT_FAILED;
    }
    for (int32_t i = 0; i < resp->ReplicaElectionResultsCnt; i++) {
        const struct kafka_ReplicaElectionResult *t =
            &resp->ReplicaElectionResults[i];
        for (int32_t k = 0; k < t->PartitionResultCnt; k++) {
            const struct kafka_ElectLeadersPartitionResult *p =
                &t->PartitionResult[k];
            shown++;
            if (p->ErrorCode == KAFKA_ERROR_NONE) {
                printf("%.*s-%d: elected\n", (int)t->Topic.len,
                       (const char *)t->Topic.ptr, (int)p->PartitionId);
                continue;
            }
            if (p->ErrorCode != KAFKA_ERROR_ELECTION_NOT_NEEDED) {
                rc = CLI_EXIT_FAILED;
            }
            const char *name = kafka_error_name(p->ErrorCode);
            printf("%.*s-%d: %s", (int)t->Topic.len,
                   (const char *)t->Topic.ptr, (int)p->PartitionId, name);
            if (!slice_is_null(p->ErrorMessage) && p->ErrorMessage.len > 0) {
                printf(": %.*s", (int)p->ErrorMessage.len,
                       (const char *)p->ErrorMessage.ptr);
            }
            printf("\n");
        }
    }
    if (all && shown == 0) {
        printf("no election needed: every partition has its leader\n");
    }
    return rc;
}

/* Every partition of topic, 0 to n - 1, in a new *list. 0, or
 * CLI_EXIT_FAILED (said why). */
static int all_partitions(struct kafka_client *kc, const char *topic,
                          int32_t **list, int32_t *n)
{
    *n = partition_count(kc, topic);
    if (*n < 0) {
        cli_error("Metadata of %s: %s", topic, kc->error);
        return CLI_EXIT_FAILED;
    }
    if (*n == 0) {
        cli_error("%s: UNKNOWN_TOPIC_OR_PARTITION: %s", topic,
                  cli_kafka_error_text(KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION,
                                       NULL));
        return CLI_EXIT_FAILED;
    }
    *list = calloc((size_t)*n, sizeof **list);
    if (*list == NULL) {
        cli_error("out of memory");
        return CLI_EXIT_FAILED;
    }
    for (int32_t p = 0; p < *n; p++) {
        (*list)[p] = p;
    }
    return 0;
}

/* The election through kc; the exit code. */
static int elect_via(struct kafka_client *kc, const struct elect_opts *o)
{
    int32_t ids[1];
    int32_t *list = ids;
    struct kafka_ElectLeadersTopicPartitions t = {
        .Topic = slice_from_str(o->topic != NULL ? o->topic : "")};
    struct kafka_ElectLeadersRequest rq = {.ElectionType = o->type,
                                           .TopicPartitionsCnt = -1,
                                           .TimeoutMs = ELECT_TIMEOUT_MS};
    if (o->topic != NULL && o->partition >= 0) {
        ids[0] = o->partition;
        t.Partitions = ids;
        t.PartitionsCnt = 1;
    } else if (o->topic != NULL) {
        int32_t n = 0;
        if (all_partitions(kc, o->topic, &list, &n) != 0) {
            return CLI_EXIT_FAILED;
        }
        t.Partitions = list;
        t.PartitionsCnt = n;
    }
    if (o->topic != NULL) {
        rq.TopicPartitions = &t;
        rq.TopicPartitionsCnt = 1;
    }
    struct writer w;
    writer_init(&w, REQUEST_BYTES_MAX);
    uint8_t *body = NULL;
    size_t len = 0;
    int rv = kafka_elect_leaders_request_encode(&w, ELECT_VERSION, &rq);
    if (rv == RC_OK) {
        kafka_client_set_timeout(kc, ELECT_TIMEOUT_MS + 5000);
        rv =
            call(kc, KAFKA_API_ELECT_LEADERS, ELECT_VERSION, &w, &body, &len);
    }
    writer_free(&w);
    if (list != ids) {
        free(list);
    }
    if (rv != RC_OK) {
        cli_error("ElectLeaders: %s", kc->error);
        free(body);
        return CLI_EXIT_FAILED;
    }
    struct arena a;
    arena_init(&a, ARENA_BYTES_MAX);
    struct reader r;
    reader_init(&r, body, len);
    struct kafka_ElectLeadersResponse resp;
    int rc;
    if (kafka_elect_leaders_response_decode(&r, ELECT_VERSION, &a, &resp) !=
        RC_OK) {
        cli_error("ElectLeaders: a response that does not decode");
        rc = CLI_EXIT_FAILED;
    } else {
        rc = report(&resp, o->topic == NULL);
    }
    arena_free(&a);
    free(body);
    return rc;
}

int elect_run(const struct kclient_opts *k, const struct elect_opts *o)
{
    const char *s = k->bootstrap;
    char why[KAFKA_CLIENT_ERROR_BYTES + META_HOST_BYTES_MAX + 16] =
        "no broker in the list";
    for (int n = 0; s != NULL && *s != '\0' && n < ELECT__BROKERS_MAX; n++) {
        size_t len = strcspn(s, ",");
        struct addr ad;
        if (addr_parse(s, len, &ad) == RC_OK) {
            struct kafka_client kc;
            if (kafka_client_open(&kc, ad.host, ad.port, CLI_KAFKA_CLIENT_ID,
                                  CLI_CALL_TIMEOUT_MS * 2) == RC_OK) {
                int rc = elect_via(&kc, o);
                kafka_client_close(&kc);
                return cli_finish_output(rc);
            }
            snprintf(why, sizeof why, "%s:%d: %s", ad.host, ad.port,
                     kc.error);
            kafka_client_close(&kc);
        }
        s += len;
        s += *s == ',' ? 1 : 0;
    }
    cli_error("no broker answered (%s)", why);
    return CLI_EXIT_FAILED;
}
