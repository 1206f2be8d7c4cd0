/* Kafka's message schemas as a table, and a walker over it: an
 * independent reading of Kafka's wire format, for checking Cairn's
 * hand-written codec (common/kafka/kafka_codec*.c) against Kafka's own
 * field lists (tests/unit/common/kafka/test_kafka_schema.c).
 *
 * The table, kafka_schema_apis[], is generated from Apache Kafka's JSON
 * message schemas by tests/schema/gen_schema_table.py into
 * tests/unit/common/kafka/kafka_schema_table.c (see there for the Kafka
 * release and how to regenerate). It knows nothing of Cairn's structs.
 *
 * schema_walk_check() parses a body strictly by the table: classic or
 * compact forms and tagged-field sections as flexibleVersions says, null
 * only where nullableVersions allows, tagged fields by tag and size, and
 * it must end exactly at the last byte. schema_walk_fill() writes a body
 * with every field of the version set to a value of its own (arrays of
 * two elements, nullable fields null or not as asked).
 *
 * Test code: single-threaded, no globals but the const table. */
#ifndef CAIRN_TESTS_UNIT_COMMON_KAFKA_SCHEMA_WALK_H
#define CAIRN_TESTS_UNIT_COMMON_KAFKA_SCHEMA_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/writer.h"

/* "N+" in a schema: no upper bound. */
#define KAFKA_SCHEMA_VERSION_OPEN INT16_MAX

enum kafka_schema_type {
    KS_BOOL,
    KS_INT8,
    KS_INT16,
    KS_UINT16,
    KS_INT32,
    KS_UINT32,
    KS_INT64,
    KS_FLOAT64,
    KS_UUID,
    KS_STRING,
    KS_BYTES,
    KS_RECORDS, /* (compact) nullable bytes on the wire */
    KS_STRUCT,
};

/* A schema version range; min < 0 is "none". */
struct kafka_schema_range {
    int16_t min;
    int16_t max;
};

struct kafka_schema_field {
    const char *name;
    enum kafka_schema_type type;
    bool array; /* "[]type" */
    struct kafka_schema_range versions;
    struct kafka_schema_range nullable;
    struct kafka_schema_range tagged;
    int32_t tag; /* -1 when never tagged */
    const struct kafka_schema_field *fields; /* KS_STRUCT's */
    size_t fields_cnt;
};

struct kafka_schema_message {
    struct kafka_schema_range valid;
    struct kafka_schema_range flexible;
    const struct kafka_schema_field *fields;
    size_t fields_cnt;
};

struct kafka_schema_api {
    int16_t key;
    const char *name;
    int16_t kafka39_min; /* oldest version Kafka 3.9 serves */
    int16_t kafka38_max; /* newest version a Kafka 3.8 broker advertises */
    struct kafka_schema_message request;
    struct kafka_schema_message response;
};

extern const struct kafka_schema_api kafka_schema_apis[];
extern const size_t kafka_schema_apis_count;

/* The row of api_key, or NULL. */
const struct kafka_schema_api *schema_walk_find(int16_t api_key);

/* True if v lies in r. */
bool schema_walk_in(struct kafka_schema_range r, int16_t v);

#define SCHEMA_WALK_PATH_MAX 256

struct schema_walk_result {
    bool ok;
    size_t pos;                      /* where it stopped */
    char path[SCHEMA_WALK_PATH_MAX]; /* e.g. FetchResponse.Responses[0].Topic */
    char why[128];
};

/* Walks len bytes at p as the body of api_key's request (or response) at
 * version; res->ok if they parse and end exactly at len, else res->path
 * and res->why say where and what. False also for an unknown API or a
 * version outside validVersions. */
bool schema_walk_check(int16_t api_key, int16_t version, bool request,
                       const uint8_t *p, size_t len,
                       struct schema_walk_result *res);

/* Appends to w the body of api_key's request (or response) at version
 * with every field present: scalars get values of their own, arrays two
 * elements (the first with non-null nullable fields, the second with
 * null ones), nullable fields of the top level are null if `nulls`, and
 * in flexible versions every tagged field is written if `tagged`.
 * Returns w->rc (RC_INVALID for an unknown API or version). */
int schema_walk_fill(int16_t api_key, int16_t version, bool request,
                     bool nulls, bool tagged, struct writer *w);

/* schema_walk_fill() without tagged fields or nulls, but for one null
 * where the schema has none: in the index'th (from 0) non-nullable
 * string, bytes or array field met, in wire order; its name in *field.
 * False when there are not that many (what w holds is then to be
 * ignored). */
bool schema_walk_fill_bad_null(int16_t api_key, int16_t version,
                               bool request, int32_t index, struct writer *w,
                               const char **field);

#endif
