"""Reads the records of a partition straight from its replicas' segment
files (the "<base>.log" files of each replica's partition directory, and
its "cleaner-offset-checkpoint"), without any broker in the way, and
checks what log compaction left on each of them.

A segment file is a sequence of RecordBatch v2 (common/kafka/
record_batch.h): a 61-byte header, then recordCount records, each Kafka's
DefaultRecord (varint length, attributes, varlong timestamp delta, varint
offset delta, varint key length and key, varint value length and value,
varint header count and headers). Every batch's CRC-32C is checked;
compressed batches (codec bits 0-2) are inflated (gzip here; a segment
with another codec is reported, not guessed at). A batch cut short at the
end of the last segment is one being written: it ends the read.

    segment_records.py [--dump FILE] [--expect UPDATES KEYS DELETED
                       kept|gone] [--extra-key K] NAME=DIR ...
Prints, per replica, its segments, cleaner checkpoint, batches and
records. --dump writes every record of every replica (name, offset, key,
value; "null" for a null value) to FILE ("-": stdout). --expect checks
the customer-profile example (UPDATES records "cust-<i % KEYS>" =
"profile-<i>" written in order, then tombstones for cust-0 ..
cust-<DELETED - 1>; records of the key K, default "zz-roll", written
afterwards, are set apart), on each replica separately:
  - every customer record lies below the replica's cleaner checkpoint
    (the replica has cleaned all of them);
  - it holds exactly one record per customer: the latest profile of the
    live ones, and a tombstone for the deleted ones while they are
    "kept" (none once "gone");
  - below the checkpoint, no key appears twice (a cleaned range keeps no
    superseded record, K's records included);
then across the replicas: the batches holding customer records are the
same byte sequence on every replica (same offsets, same header fields,
same records); every replica has cut its cleaned range into segments at
the same offsets (segments roll by size and by the batches' timestamps,
so replicas cut alike), and every segment file that all replicas have
cleaned whole is the same bytes on each (those holding a record of K
aside: each replica cleans K's newest records as far as its own
checkpoint). Exit 0 when all of that holds, 1 otherwise.
"""
import argparse
import os
import struct
import sys
import zlib

from crc32c import crc32c

HEADER = 61
CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


class Bad(Exception):
    pass


class Reader:
    def __init__(self, buf):
        self.buf, self.pos = buf, 0

    def raw(self, n):
        if n < 0 or self.pos + n > len(self.buf):
            raise Bad("record runs past its batch")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def i8(self):
        return struct.unpack(">b", self.raw(1))[0]

    def varlong(self):
        shift, u = 0, 0
        while True:
            b = self.raw(1)[0]
            u |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
            if shift > 63:
                raise Bad("varint too long")
        return (u >> 1) ^ -(u & 1)

    def nullable(self):
        n = self.varlong()
        return None if n < 0 else bytes(self.raw(n))


def inflate(codec, body):
    if codec == 0:
        return body
    if codec == 1:
        return zlib.decompress(body, 16 + zlib.MAX_WBITS)
    raise Bad("codec %s batch: no decoder here" % CODECS.get(codec, codec))


def records_of(h, body):
    """The records of one batch: (offset, timestamp, key, value)."""
    r = Reader(inflate(h["attributes"] & 7, body))
    out = []
    for _ in range(h["count"]):
        rec = Reader(r.raw(r.varlong()))
        rec.i8()  # attributes
        ts_delta = rec.varlong()
        off_delta = rec.varlong()
        key = rec.nullable()
        value = rec.nullable()
        for _ in range(rec.varlong()):
            rec.raw(rec.varlong())
            rec.nullable()
        if rec.pos != len(rec.buf):
            raise Bad("bytes after a record's headers")
        if not 0 <= off_delta <= h["last_delta"]:
            raise Bad("offset delta %d outside the batch" % off_delta)
        out.append((h["base"] + off_delta, h["base_ts"] + ts_delta, key,
                    value))
    if r.pos != len(r.buf):
        raise Bad("bytes after the last record")
    return out


def read_segment(path, data, last):
    """The batches of one segment file (its bytes: data): dicts with the
    header fields, the batch bytes and the records."""
    batches, pos = [], 0
    while pos < len(data):
        if len(data) - pos < HEADER:
            if last:
                break
            raise Bad("%s: %d stray bytes at %d" % (path, len(data) - pos,
                                                    pos))
        (base, length, epoch, magic, crc, attrs, last_delta, base_ts,
         _, pid, _, _, count) = struct.unpack(
             ">qiibIhiqqqhii", data[pos:pos + HEADER])
        size = length + 12
        if magic != 2 or size < HEADER:
            raise Bad("%s: batch at %d: magic %d, length %d" %
                      (path, pos, magic, length))
        if pos + size > len(data):
            if last:
                break
            raise Bad("%s: batch at %d cut short" % (path, pos))
        raw = data[pos:pos + size]
        if crc32c(raw[21:]) != crc:
            raise Bad("%s: batch at %d (offset %d): CRC-32C mismatch" %
                      (path, pos, base))
        h = {"base": base, "last_delta": last_delta, "attributes": attrs,
             "base_ts": base_ts, "count": count, "epoch": epoch,
             "producer_id": pid, "bytes": raw}
        h["control"] = bool(attrs & 0x20)
        h["records"] = [] if h["control"] else records_of(h, raw[HEADER:])
        batches.append(h)
        pos += size
    return batches


def read_replica(d):
    """Segments (base offset -> file bytes, batches), checkpoint, batches
    of one replica."""
    names = sorted(n for n in os.listdir(d) if n.endswith(".log"))
    bases = [int(n[:-4]) for n in names]
    segs, batches = {}, []
    for i, n in enumerate(names):
        with open(os.path.join(d, n), "rb") as f:
            data = f.read()
        mine = read_segment(os.path.join(d, n), data, i == len(names) - 1)
        segs[bases[i]] = (data, mine)
        for b in mine:
            if batches and b["base"] <= batches[-1]["base"] + \
                    batches[-1]["last_delta"]:
                raise Bad("%s: batch at offset %d overlaps the one before" %
                          (n, b["base"]))
            if b["base"] < bases[i] or (i + 1 < len(bases) and
                                        b["base"] >= bases[i + 1]):
                raise Bad("%s: batch at offset %d outside its segment" %
                          (n, b["base"]))
            batches.append(b)
    checkpoint = 0
    try:
        with open(os.path.join(d, "cleaner-offset-checkpoint")) as f:
            checkpoint = int(f.read().split()[1])
    except FileNotFoundError:
        pass
    return segs, checkpoint, batches


def text(b):
    return "null" if b is None else b.decode("utf-8", "replace")


def check_replica(name, checkpoint, batches, want, extra):
    """Per-replica checks (see the module comment); problems as strings,
    one per kind, with a count and the first example."""
    seen, got = {}, {}
    kinds = {}  # kind -> [count, first example]

    def note(kind, example):
        kinds.setdefault(kind, [0, example])[0] += 1

    for b in batches:
        for off, _, key, value in b["records"]:
            if key is None:
                continue
            if off < checkpoint:
                if key in seen:
                    note("superseded records kept below the checkpoint",
                         "%s at %d, again at %d" % (text(key), seen[key],
                                                    off))
                seen[key] = off
            if key == extra:
                continue
            if off >= checkpoint:
                note("customer records at or above its cleaner checkpoint "
                     "%d (not cleaned yet)" % checkpoint,
                     "%s at %d" % (text(key), off))
            got.setdefault(key, []).append((off, value))
    for key, recs in got.items():
        if key not in want:
            note("keys absent from the expected view",
                 "%s at %d" % (text(key), recs[0][0]))
        elif [v for _, v in recs] != [want[key]]:
            shown = ["%s at %d" % (text(v), o) for o, v in recs]
            if len(shown) > 3:
                shown[1:-1] = ["... (%d records)" % len(shown)]
            note("keys not held as exactly their latest value",
                 "%s = %s, want only %s" %
                 (text(key), ", ".join(shown), text(want[key])))
    for key in want:
        if key not in got:
            note("keys missing", text(key))
    return ["%s: %d %s (first: %s)" % (name, n, kind, ex)
            for kind, (n, ex) in kinds.items()]


def bounds(segs):
    """(base, next base) of each segment but the last."""
    bases = sorted(segs)
    return set(zip(bases, bases[1:]))


def compare_files(reps, extra):
    """The segment files every replica has cleaned whole and bounds alike
    (and holding no record of the extra key, whose newest records each
    replica cleans as far as its own checkpoint): their bytes must be the
    same. Returns (compared, problems, bounds differing)."""
    floor = min(checkpoint for _, _, checkpoint, _ in reps)
    common = set.intersection(*(bounds(segs) for _, segs, _, _ in reps))
    apart = set.union(*(bounds(segs) for _, segs, _, _ in reps)) - common
    apart = sorted(b for b in apart if b[1] <= floor)
    compared, bad = 0, []
    for base, end in sorted(common):
        if end > floor:
            continue
        if any(k == extra for _, segs, _, _ in reps
               for b in segs[base][1] for _, _, k, _ in b["records"]):
            continue
        compared += 1
        first = reps[0][1][base][0]
        for name, segs, _, _ in reps[1:]:
            if segs[base][0] != first:
                bad.append("segment %d: %s and %s files differ" %
                           (base, reps[0][0], name))
    return compared, bad, apart


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump")
    ap.add_argument("--expect", nargs=4,
                    metavar=("UPDATES", "KEYS", "DELETED", "TOMBSTONES"))
    ap.add_argument("--extra-key", default="zz-roll")
    ap.add_argument("replicas", nargs="+", metavar="NAME=DIR")
    a = ap.parse_args()
    extra = a.extra_key.encode()
    reps = []
    for arg in a.replicas:
        name, d = arg.split("=", 1)
        try:
            reps.append((name,) + read_replica(d))
        except (Bad, OSError, zlib.error) as e:
            print("%s: unreadable: %s" % (name, e))
            return 1
    if a.dump:
        f = sys.stdout if a.dump == "-" else open(a.dump, "w")
        for name, _, _, batches in reps:
            for b in batches:
                for off, _, key, value in b["records"]:
                    f.write("%s %d %s %s\n" % (name, off, text(key),
                                               text(value)))
        if f is not sys.stdout:
            f.close()
    # the batches holding the example's records (not only the extra key's)
    work = [[b for b in batches
             if any(k is not None and k != extra for _, _, k, _ in
                    b["records"])] for _, _, _, batches in reps]
    for (name, segs, checkpoint, batches), mine in zip(reps, work):
        recs = [r for b in batches for r in b["records"]]
        cust = [r for b in mine for r in b["records"] if r[2] != extra]
        print("%s: %d segments (%d bytes), cleaner checkpoint %d, %d "
              "batches, %d records: %d customer records (%d tombstones) in "
              "%d batches, %d %s" %
              (name, len(segs), sum(len(d) for d, _ in segs.values()),
               checkpoint, len(batches), len(recs), len(cust),
               sum(1 for r in cust if r[3] is None), len(mine),
               sum(1 for r in recs if r[2] == extra), a.extra_key))
    if not a.expect:
        return 0
    updates, keys, deleted = (int(x) for x in a.expect[:3])
    want = {}
    for i in range(updates):
        want[b"cust-%d" % (i % keys)] = b"profile-%d" % i
    for k in range(deleted):
        if a.expect[3] == "kept":
            want[b"cust-%d" % k] = None
        else:
            del want[b"cust-%d" % k]
    bad = []
    for (name, _, checkpoint, batches) in reps:
        bad += check_replica(name, checkpoint, batches, want, extra)
    first = reps[0][0]
    streams = [b"".join(b["bytes"] for b in mine) for mine in work]
    for (name, _, _, _), mine, stream in zip(reps[1:], work[1:], streams[1:]):
        if stream == streams[0]:
            continue
        for x, y in zip(work[0], mine):
            if x["bytes"] != y["bytes"]:
                bad.append("%s and %s differ from the batch at offset %d/%d"
                           % (first, name, x["base"], y["base"]))
                break
        else:
            bad.append("%s holds %d customer batches, %s %d" %
                       (first, len(work[0]), name, len(mine)))
    compared, file_bad, apart = compare_files(reps, extra)
    bad += file_bad
    if apart:
        bad.append("%d segments below every checkpoint are cut differently "
                   "on different replicas (first %d-%d)"
                   % ((len(apart),) + apart[0]))
    if not bad:
        print("every replica: %d customer records (latest values%s), "
              "cleaned; their %d batches (%d bytes) byte-identical across "
              "%d replicas" % (len(want), ", tombstones" if deleted and
                               a.expect[3] == "kept" else "",
                               len(work[0]), len(streams[0]), len(reps)))
        print("segments cut at the same offsets on every replica; %d "
              "segment files cleaned everywhere, byte-identical" % compared)
    for line in bad[:10]:
        print("differ: " + line)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
