"""Reads a stopped cluster's partition logs straight from disk, so the
checker can compare the replicas without trusting any broker: every
segment file (<log.dirs>/<topic>-<partition>/*.log) of every broker,
parsed as Kafka's RecordBatch v2 (uncompressed: the harness's producers
do not compress), as [offset, value] per record.

    dump_cluster(data_dir, topic, partitions, brokers, hw)
        -> {"0": {"hw": H, "replicas": {"1": [[offset, value], ...], ...}}}

Only records below each partition's hw are kept (what the replicas must
agree on). A torn or corrupt tail stops the reading of that file (the
broker's recovery cuts it too); the dump says how many bytes it skipped.
"""

import os
import struct

BATCH_HEADER = 61  # bytes from baseOffset through recordsCount


def varint(buf, pos):
    """Zig-zag varint at pos: (value, new pos); ValueError past the end."""
    shift, raw = 0, 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("varint past the end")
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    return (raw >> 1) ^ -(raw & 1), pos


def records(batch, base_offset, count):
    """The [offset, value] of each record of an uncompressed batch body."""
    out, pos = [], 0
    for _ in range(count):
        length, pos = varint(batch, pos)
        end = pos + length
        pos += 1  # attributes
        _, pos = varint(batch, pos)  # timestamp delta
        delta, pos = varint(batch, pos)
        klen, pos = varint(batch, pos)
        pos += max(klen, 0)
        vlen, pos = varint(batch, pos)
        value = batch[pos:pos + vlen].decode() if vlen >= 0 else None
        out.append([base_offset + delta, value])
        pos = end
    return out


def read_segment(path):
    """Records of one segment file, and the bytes left unread at its end."""
    with open(path, "rb") as f:
        data = f.read()
    out, pos = [], 0
    while pos + BATCH_HEADER <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        size = 12 + length
        if length < BATCH_HEADER - 12 or pos + size > len(data):
            break
        attributes = struct.unpack_from(">h", data, pos + 21)[0]
        count = struct.unpack_from(">i", data, pos + 57)[0]
        control = attributes & 0x20
        if attributes & 0x07 == 0 and not control:
            try:
                out.extend(records(data[pos + BATCH_HEADER:pos + size],
                                   base, count))
            except (ValueError, UnicodeDecodeError):
                break
        pos += size
    return out, len(data) - pos


def read_log(part_dir):
    segs = sorted(f for f in os.listdir(part_dir) if f.endswith(".log"))
    out, skipped = [], 0
    for s in segs:
        recs, left = read_segment(os.path.join(part_dir, s))
        out.extend(recs)
        skipped += left
    return out, skipped


def dump_cluster(data_dir, topic, partitions, brokers, hw):
    result = {}
    for p in range(partitions):
        h = hw.get(str(p), 0)
        replicas, skipped = {}, {}
        for b in brokers:
            d = os.path.join(data_dir, "broker-%d" % b, "logs",
                             "%s-%d" % (topic, p))
            if not os.path.isdir(d):
                continue
            recs, left = read_log(d)
            replicas[str(b)] = [r for r in recs if r[0] < h]
            if left:
                skipped[str(b)] = left
        result[str(p)] = {"hw": h, "replicas": replicas,
                          "skipped_tail_bytes": skipped}
    return result
