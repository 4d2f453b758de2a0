"""regula.io: the one writer of artifacts (exact bytes, atomic, no temporaries left)."""
import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from dvc.fs import LocalFileSystem
from dvc.ignore import DvcIgnoreFilter

from regula import io

ROOT = Path(__file__).resolve().parent.parent


def test_write_json_exact_bytes(tmp_path):
    path = io.write_json(tmp_path / "sub" / "m.json", {"b": 1, "a": {"y": [1, 2.5], "x": None}, "é": "ü"})
    assert path == tmp_path / "sub" / "m.json"
    assert path.read_bytes() == (b'{\n  "a": {\n    "x": null,\n    "y": [\n      1,\n      2.5\n    ]\n  },\n'
                                 b'  "b": 1,\n  "\\u00e9": "\\u00fc"\n}\n')
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)


def test_write_json_failure_keeps_old_file_and_leaves_no_temporary(tmp_path):
    path = io.write_json(tmp_path / "m.json", {"ok": True})
    before = path.read_bytes()
    with pytest.raises(TypeError):
        io.write_json(path, {"bad": object()})  # not serialisable: fails before any write
    with pytest.raises(TypeError):
        io.write_atomic(path, 123)  # fails while writing the temporary
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


def test_write_jsonl_and_csv(tmp_path):
    rows = [{"b": 1, "a": "x"}, {"b": 2, "a": "y,z"}]
    assert io.write_jsonl(tmp_path / "r.jsonl", rows).read_text() == '{"a": "x", "b": 1}\n{"a": "y,z", "b": 2}\n'
    assert io.write_csv(tmp_path / "r.csv", rows).read_bytes() == b'b,a\n1,x\n2,"y,z"\n'
    assert io.write_csv(tmp_path / "e.csv", []).read_bytes() == b""
    frame = pd.DataFrame(rows)
    assert io.write_csv(tmp_path / "f.csv", frame).read_text() == frame.to_csv(index=False)


def test_a_killed_writer_leaves_a_temporary_that_git_and_dvc_ignore_and_the_next_write_removes(tmp_path):
    """SIGKILL between writing the temporary and renaming it (a subprocess killed mid-write):
    the leftover is named so that .gitignore and .dvcignore ignore it, and the next write into
    the folder (another process, as a rerun is) removes it; a live writer's temporary stays."""
    folder = tmp_path / "data" / "demos"
    kill = ("import os, signal, sys; from regula import io; "
            "os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL); io.write_atomic(sys.argv[1], 'x' * 100000)")
    proc = subprocess.Popen([sys.executable, "-c", kill, str(folder / "episode_00000.jsonl")])
    assert proc.wait() == -signal.SIGKILL
    [leftover] = folder.iterdir()
    assert leftover.name.startswith(f".tmp-{proc.pid}-") and leftover.stat().st_size == 100000

    relative = f"data/demos/{leftover.name}"
    assert subprocess.run(["git", "check-ignore", "-q", "--no-index", relative], cwd=ROOT).returncode == 0
    (tmp_path / ".dvcignore").write_text((ROOT / ".dvcignore").read_text())
    assert DvcIgnoreFilter(LocalFileSystem(), str(tmp_path)).is_ignored_file(str(leftover))

    live = folder / f".tmp-{os.getpid()}-other.tmp"  # this process's: a writer still at work
    live.write_text("half")
    io.write_json(folder / "episode_00001.jsonl", {"ok": True})
    assert sorted(p.name for p in folder.iterdir()) == sorted(["episode_00001.jsonl", live.name])
