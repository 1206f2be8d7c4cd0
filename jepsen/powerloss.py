"""Power loss, applied to a broker's files after its process was killed.

jepsen/durable/durable.c, preloaded into the broker, appends to a journal
what the broker asked the disk to make durable (file lengths at each
successful fsync/fdatasync, creates, renames, truncations, directory
fsyncs). apply() replays that journal and cuts the files back to what the
disk had promised, as if the machine had lost power at the moment of the
kill:

- A file keeps the length it had when its last successful fsync or
  fdatasync began; bytes after that are dropped (with torn=True a random
  part of that unsynced tail is kept instead, as a disk that wrote some
  of it would).
- strict=True (the default): a name is durable only once its parent
  directory has been fsync'd after the name appeared. Files and
  directories created since their parent's last fsync disappear, with
  everything in them, however well their own contents were synced. With
  strict=False names are durable at once (what ext4's journal usually
  gives within seconds).
- Truncations and unlinks are taken as durable at once.

Not modelled: reordering or corruption within a synced range, bytes
overwritten in place after a sync (only lengths are tracked), a rename
that replaced an existing file being undone (the old contents are gone;
the new name is kept), deleted files coming back, and canonical/raft's
own files on the controllers (it writes with O_DIRECT and RWF_DSYNC
through Linux AIO, which a preloaded library cannot see): controllers are
killed, not power-failed.

The journal spans process restarts (page-cache data a killed process left
behind is still lost at a later power failure); apply() empties it, since
after the cut everything on disk is durable.
"""

import os
import shutil


def parent(path):
    return os.path.dirname(path.rstrip("/"))


class Model:
    """The journal's view of the files: current names, durable lengths,
    and names not yet durable."""

    def __init__(self, strict=True):
        self.strict = strict
        self.names = {}       # path -> file id
        self.length = {}      # file id -> durable length (None: keep all)
        self.pending = set()  # paths (files and dirs) whose name is not durable
        self.next_id = 0

    def new_file(self, path, length):
        self.next_id += 1
        self.names[path] = self.next_id
        self.length[self.next_id] = length
        return self.next_id

    def file(self, path, length_if_new):
        fid = self.names.get(path)
        return fid if fid is not None else self.new_file(path, length_if_new)

    def name_appears(self, path):
        if self.strict:
            self.pending.add(path)

    def forget(self, path):
        self.names.pop(path, None)
        prefix = path.rstrip("/") + "/"
        for p in [p for p in self.names if p.startswith(prefix)]:
            del self.names[p]
        self.pending = {p for p in self.pending
                        if p != path and not p.startswith(prefix)}

    def event(self, fields):
        op = fields[0]
        if op == "C":
            self.new_file(fields[1], 0)
            self.name_appears(fields[1])
        elif op == "M":
            self.name_appears(fields[1])
        elif op == "E":
            self.file(fields[1], int(fields[2]))
        elif op == "S":
            fid = self.file(fields[1], 0)
            if self.length[fid] is not None:
                self.length[fid] = max(self.length[fid], int(fields[2]))
        elif op == "T":
            fid = self.file(fields[1], int(fields[2]))
            if self.length[fid] is not None:
                self.length[fid] = min(self.length[fid], int(fields[2]))
        elif op == "R":
            src, dst, replaced = fields[1], fields[2], fields[3] == "1"
            fid = self.names.pop(src, None)
            self.forget(dst)
            self.pending.discard(src)
            if fid is None:
                fid = self.new_file(dst, None)
            self.names[dst] = fid
            # A rename over an existing name keeps that name durable (the
            # old contents are gone; see the module note); a new name is
            # durable once its directory is synced.
            if not replaced:
                self.name_appears(dst)
        elif op == "U":
            self.forget(fields[1])
        elif op == "D":
            d = fields[1].rstrip("/")
            self.pending = {p for p in self.pending if parent(p) != d}
        else:
            raise ValueError("unknown journal record %r" % (fields,))

    def cut(self, rng=None, torn=False):
        """Applies the model to the files on disk; returns what it did."""
        stats = {"files_cut": 0, "bytes_dropped": 0, "names_dropped": 0}
        for path in sorted(self.pending, key=len):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
                stats["names_dropped"] += 1
            elif os.path.lexists(path):
                os.unlink(path)
                stats["names_dropped"] += 1
        for path, fid in sorted(self.names.items()):
            keep = self.length[fid]
            if keep is None or not os.path.isfile(path):
                continue
            size = os.path.getsize(path)
            if size <= keep:
                continue
            if torn and rng is not None:
                keep += rng.randint(0, size - keep)
            os.truncate(path, keep)
            stats["files_cut"] += 1
            stats["bytes_dropped"] += size - keep
        return stats


def load(journal, strict=True):
    model = Model(strict)
    if os.path.exists(journal):
        with open(journal) as f:
            for line in f:
                line = line.rstrip("\n")
                if line:
                    model.event(line.split("\t"))
    return model


def apply(journal, rng=None, torn=False, strict=True):
    """Cuts a killed broker's files back to what its journal says was
    durable, then empties the journal. Returns the counts of what it
    dropped."""
    stats = load(journal, strict).cut(rng, torn)
    if os.path.exists(journal):
        with open(journal, "w"):
            pass
    return stats
