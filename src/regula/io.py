"""Writing artifacts: every text artifact the pipeline writes goes through here (figures are
matplotlib's PNGs).

Writes are atomic: a temporary file in the same folder, renamed into place. Readers (and a
rerun after a kill) see either the old file or the whole new one, never a half-written one;
concurrent writers of one path each rename a complete file. A temporary is named
`.tmp-<pid>-<random>.tmp`: .gitignore and .dvcignore ignore the names, and the first write
into a folder (per process) removes those whose writer is gone, which a killed run leaves.
JSON is written with sorted keys and a final newline, CSV with "\n" line ends, so two runs
with the same inputs write the same bytes.
"""
from __future__ import annotations

import csv
import io
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable


TEMP_PREFIX = ".tmp-"
_swept: set[Path] = set()


def _writer_gone(temp: Path) -> bool:
    """Whether the process that named `temp` (`.tmp-<pid>-...`) no longer runs."""
    pid = temp.name[len(TEMP_PREFIX):].split("-", 1)[0]
    if not pid.isdigit():
        return True  # not one of ours, or an older name without the pid
    try:
        os.kill(int(pid), 0)  # signal 0: only asks whether it exists
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # it exists, another user's
    return False


def sweep(folder: str | Path) -> None:
    """Remove the temporaries in `folder` whose writer is gone (a killed run's); a live
    writer's, this process's other threads' included, stay."""
    for temp in Path(folder).glob(TEMP_PREFIX + "*"):
        if _writer_gone(temp):
            if temp.is_dir():  # a folder written whole, then renamed (a saved model)
                shutil.rmtree(temp, ignore_errors=True)
            else:
                temp.unlink(missing_ok=True)


def write_atomic(path: str | Path, text: str, fsync: bool = False) -> Path:
    """Write `text` to `path` (parents created) through a temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent not in _swept:
        sweep(path.parent)
        _swept.add(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def dumps_json(obj: Any) -> str:
    """The artifact layout of a JSON document: sorted keys, indent 2, final newline."""
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"


def write_json(path: str | Path, obj: Any) -> Path:
    """`obj` as JSON (sorted keys, indent 2, final newline), written atomically. Nothing is
    written (and no temporary is left) when `obj` does not serialise."""
    return write_atomic(path, dumps_json(obj))


def write_jsonl(path: str | Path, records: Iterable[Any], fsync: bool = False) -> Path:
    """One compact JSON object (sorted keys) per line, written atomically."""
    return write_atomic(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in records), fsync=fsync)


def write_csv(path: str | Path, table) -> Path:
    """A table as CSV, written atomically: a pandas DataFrame (`to_csv(index=False)`) or a list
    of dicts (columns in the first row's key order, "\n" line ends; no rows: an empty file)."""
    if hasattr(table, "to_csv"):
        text = table.to_csv(index=False)
    else:
        rows = list(table)
        buf = io.StringIO()
        if rows:
            writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        text = buf.getvalue()
    return write_atomic(path, text)
