"""regula.io: the one writer of artifacts (exact bytes, atomic, no temporaries left)."""
import pandas as pd
import pytest

from regula import io


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
