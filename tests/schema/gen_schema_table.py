#!/usr/bin/env python3
"""Writes tests/unit/common/kafka/kafka_schema_table.c: the field lists of
the Kafka APIs Cairn serves, as Apache Kafka's JSON message schemas describe
them, for the schema cross-check of Cairn's hand-written codec
(tests/unit/common/kafka/schema_walk.c walks bytes by this table,
tests/unit/common/kafka/test_kafka_schema.c runs Cairn's encoders and
decoders against it).

The schemas are apache/kafka's clients/src/main/resources/common/message/
<Name>Request.json and <Name>Response.json (JSON with // comments). They
are read from a checkout of a Kafka release and never copied into this
repository; the table holds only facts from them: per API and direction
validVersions and flexibleVersions, and per field its name, type (arrays,
structs and commonStructs resolved), versions, nullableVersions,
taggedVersions and tag. Kafka 3.8's files are the reference, because
Kafka 4.0 dropped the old versions Cairn still serves (Metadata v0,
ListOffsets v0, OffsetCommit v0...).

Each API also gets two facts that are not in the JSON: the newest version
a Kafka 3.8 broker advertises (the ApiVersions capture given with --tsv,
whose maxima cap validVersions) and the oldest version Kafka 3.9 serves
(validVersions' minimum in 3.9's files, given with --dir39; 3.8's when
absent).

Regenerate (Python 3, standard library only):

    git clone --branch 3.8.0 --depth 1 https://github.com/apache/kafka \\
        /tmp/kafka-3.8.0
    git clone --branch 3.9 --depth 1 https://github.com/apache/kafka \\
        /tmp/kafka-3.9
    m=clients/src/main/resources/common/message
    python3 tests/schema/gen_schema_table.py \\
        --dir /tmp/kafka-3.8.0/$m --dir39 /tmp/kafka-3.9/$m \\
        --tsv kafka-3.8.0-api-versions.tsv --kafka-version 3.8.0 \\
        --kafka39-version "3.9 ($(git -C /tmp/kafka-3.9 log -1 \\
            --format='%h, %cs'))" \\
        > tests/unit/common/kafka/kafka_schema_table.c

The --tsv file is a Kafka 3.8.0 broker's ApiVersions answer, one API a
line, tab-separated: ApiKey, name, request versions ("0-11"), request
flexible versions, response versions, response flexible versions,
listeners.

What the table is checked for (test_kafka_schema.c): for every API and
version in Cairn's codec range, a body filled from the schema decodes with
Cairn's decoder and Cairn's re-encoding walks by the schema to the last
byte; without tagged fields the re-encoding is the same bytes; and each
API's range ends at Kafka 3.8's newest version and starts at Kafka 3.9's
oldest (Produce at 3 and Fetch at 4, whose older versions carry message
formats v0/v1).

The API list is KAFKA_APIS of common/kafka/kafka_codec.h (read from the
tree this script sits in), so an API added there is added here by
regenerating.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SCALARS = {
    "bool": "KS_BOOL", "int8": "KS_INT8", "int16": "KS_INT16",
    "uint16": "KS_UINT16", "int32": "KS_INT32", "uint32": "KS_UINT32",
    "int64": "KS_INT64", "float64": "KS_FLOAT64", "uuid": "KS_UUID",
    "string": "KS_STRING", "bytes": "KS_BYTES", "records": "KS_RECORDS",
}
FIELD_KEYS = {"name", "type", "versions", "about", "nullableVersions",
              "taggedVersions", "tag", "ignorable", "default", "entityType",
              "mapKey", "fields", "zeroCopy"}
NO_MAX = 0x7fff


def die(msg):
    sys.stderr.write("gen_schema_table: %s\n" % msg)
    sys.exit(1)


def load_json(path):
    """Kafka's schema files are JSON with // line comments."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = []
    for line in text.splitlines():
        # A // inside a string would be cut too; the schemas have none
        # outside "about" texts, which are checked below to parse.
        in_str = False
        cut = len(line)
        i = 0
        while i < len(line):
            c = line[i]
            if c == '"' and (i == 0 or line[i - 1] != "\\"):
                in_str = not in_str
            elif not in_str and line.startswith("//", i):
                cut = i
                break
            i += 1
        out.append(line[:cut])
    return json.loads("\n".join(out))


def vrange(spec, what):
    """"0+", "3-5", "7", "none" -> (min, max); none is (-1, -1)."""
    if spec is None or spec == "none":
        return (-1, -1)
    m = re.fullmatch(r"(\d+)\+", spec)
    if m:
        return (int(m.group(1)), NO_MAX)
    m = re.fullmatch(r"(\d+)-(\d+)", spec)
    if m:
        return (int(m.group(1)), int(m.group(2)))
    m = re.fullmatch(r"(\d+)", spec)
    if m:
        return (int(m.group(1)), int(m.group(1)))
    die("bad version range %r in %s" % (spec, what))


def codec_apis():
    """(key, Kafka name) of every row of KAFKA_APIS in kafka_codec.h."""
    path = os.path.join(ROOT, "common/kafka/kafka_codec.h")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.index("#define KAFKA_APIS(X)")
    end = text.index("\n\n", start)
    rows = re.findall(r'X\(\s*\w+,\s*(\d+),\s*"(\w+)"', text[start:end])
    if not rows:
        die("no KAFKA_APIS rows in %s" % path)
    return [(int(k), n) for k, n in rows]


class Emitter:
    def __init__(self):
        self.arrays = []    # C text of each field array, children first
        self.count = 0

    def ident(self, path):
        self.count += 1
        return "s%d" % self.count, ".".join(path)

    def fields(self, fields, path, common, what):
        """Emits the array of `fields`; returns (identifier, count)."""
        rows = []
        for fd in fields:
            extra = set(fd) - FIELD_KEYS
            if extra:
                die("%s.%s: unknown keys %s" % (what, fd.get("name"),
                                                sorted(extra)))
            rows.append(self.field(fd, path, common, what))
        ident, dotted = self.ident(path)
        text = ["/* %s */" % dotted,
                "static const struct kafka_schema_field %s[] = {" % ident]
        for r in rows:
            text.extend(r)
        text.append("};")
        self.arrays.append("\n".join(text))
        return ident, len(rows)

    def field(self, fd, path, common, what):
        name = fd["name"]
        typ = fd["type"]
        array = typ.startswith("[]")
        elem = typ[2:] if array else typ
        sub = "NONE"
        if elem in SCALARS:
            ctype = SCALARS[elem]
            if "fields" in fd:
                die("%s.%s: scalar with fields" % (what, name))
        else:
            ctype = "KS_STRUCT"
            sub_fields = fd.get("fields")
            if sub_fields is None:
                if elem not in common:
                    die("%s.%s: no fields for struct %s" % (what, name, elem))
                sub_fields = common[elem]
            sub, _ = self.fields(sub_fields, path + [name], common,
                                 what + "." + name)
            sub = "SUB(%s)" % sub
        ver = vrange(fd.get("versions"), what + "." + name)
        if ver[0] < 0:
            die("%s.%s: no versions" % (what, name))
        nul = vrange(fd.get("nullableVersions"), what + "." + name)
        tag = vrange(fd.get("taggedVersions"), what + "." + name)
        tagno = fd.get("tag", -1)
        if (tag[0] >= 0) != (tagno >= 0):
            die("%s.%s: tag without taggedVersions" % (what, name))
        head = '    {"%s", %s, %s, ' % (name, ctype,
                                        "true" if array else "false")
        tail = "%s, %s, %s, %d, %s}," % (
            rng(ver), rng(nul), rng(tag), tagno, sub)
        if len(head) + len(tail) <= 80:
            return [head + tail]
        return [head.rstrip(), "     " + tail]


def vmax(v):
    return "MAX" if v == NO_MAX else str(v)


def rng(r):
    return "N" if r[0] < 0 else "R(%d, %s)" % (r[0], vmax(r[1]))


def message(em, d, kind, api_key, name):
    path = os.path.join(d, "%s%s.json" % (name, kind))
    if not os.path.exists(path):
        die("missing %s" % path)
    js = load_json(path)
    if js.get("apiKey") != api_key or js.get("type") != kind.lower():
        die("%s: apiKey %r type %r" % (path, js.get("apiKey"),
                                       js.get("type")))
    common = {}
    for cs in js.get("commonStructs", []):
        common[cs["name"]] = cs["fields"]
    valid = vrange(js["validVersions"], path)
    flex = vrange(js.get("flexibleVersions"), path)
    ident, n = em.fields(js["fields"], [name + kind], common, name + kind)
    return valid, flex, ident, n


def read_tsv(path):
    """ApiKey -> (request max, response max) from the ApiVersions capture
    (key, name, request versions, request flexible, response versions,
    response flexible, listeners)."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 5 or not cols[0].isdigit():
                continue
            out[int(cols[0])] = (vrange(cols[2], path)[1],
                                 vrange(cols[4], path)[1])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True,
                    help="Kafka's common/message folder (3.8.x)")
    ap.add_argument("--dir39", help="the same folder of Kafka 3.9.x")
    ap.add_argument("--kafka39-version", default="3.9",
                    help="what --dir39 is, for the table's header")
    ap.add_argument("--tsv", required=True,
                    help="a Kafka 3.8 broker's ApiVersions capture")
    ap.add_argument("--kafka-version", required=True)
    args = ap.parse_args()

    tsv = read_tsv(args.tsv)
    em = Emitter()
    rows = []
    for key, name in codec_apis():
        req = message(em, args.dir, "Request", key, name)
        resp = message(em, args.dir, "Response", key, name)
        if key not in tsv:
            die("%s (%d) not in %s" % (name, key, args.tsv))
        kmax = min(tsv[key][0], req[0][1], resp[0][1])
        kmin = req[0][0]
        if args.dir39:
            kmin = load_json(os.path.join(
                args.dir39, name + "Request.json"))["validVersions"]
            kmin = vrange(kmin, name)[0]
        rows.append((key, name, kmin, kmax, req, resp))

    out = sys.stdout
    out.write(HEADER % {"ver": args.kafka_version,
                        "ver39": "Kafka %s's files" % args.kafka39_version
                        if args.dir39 else "the same files"})
    out.write("\n\n".join(em.arrays))
    out.write("\n\nconst struct kafka_schema_api kafka_schema_apis[] = {\n")
    for key, name, kmin, kmax, req, resp in rows:
        out.write('    {%d, "%s", %d, %d,\n' % (key, name, kmin, kmax))
        for (valid, flex, ident, n) in (req, resp):
            out.write("     {%s, %s, SUB(%s)},\n" % (rng(valid), rng(flex),
                                                   ident))
        out.write("    },\n")
    out.write("};\n\nconst size_t kafka_schema_apis_count =\n"
              "    sizeof(kafka_schema_apis) / sizeof(kafka_schema_apis[0]);"
              "\n")


HEADER = """\
/* GENERATED by tests/schema/gen_schema_table.py from Apache Kafka
 * %(ver)s's JSON message schemas (clients/src/main/resources/common/
 * message/<Name>Request.json and <Name>Response.json); do not edit.
 * Regenerate with the command in the script's header comment, after
 * adding an API to KAFKA_APIS (common/kafka/kafka_codec.h) or to move to
 * another Kafka release.
 *
 * Facts only: per API and direction validVersions and flexibleVersions,
 * and per field its name, type, versions, nullableVersions,
 * taggedVersions and tag (R(min, max); N is none, MAX open; SUB the
 * fields of a struct).
 * Per API also the newest version a Kafka 3.8 broker advertises (its
 * ApiVersions response, validVersions capped by it) and the oldest
 * version Kafka 3.9 serves (validVersions' minimum), read from
 * %(ver39)s.
 *
 * tests/unit/common/kafka/schema_walk.c walks bytes by this table and
 * fills messages from it; tests/unit/common/kafka/test_kafka_schema.c
 * checks Cairn's codec against it in both directions, and its version
 * ranges against the two facts above. */
#include <stddef.h>

#include "tests/unit/common/kafka/schema_walk.h"

#define MAX KAFKA_SCHEMA_VERSION_OPEN
#define R(lo, hi) {(lo), (hi)}
#define N R(-1, -1)
#define SUB(fields) (fields), sizeof(fields) / sizeof((fields)[0])
#define NONE NULL, 0

"""

if __name__ == "__main__":
    main()
