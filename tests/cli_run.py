"""Run the `regula` console entry in-process (as the installed command would, error handling
included), and the check every bad input of the corpus must pass."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from regula.cli import main


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def invoke(args, input: str | None = None, env: dict | None = None) -> Result:
    with CliRunner().isolation(input=input, env=env) as (out, err, _):
        code = main([str(a) for a in args])
        return Result(code, out.getvalue().decode(), err.getvalue().decode())


def snapshot(root: Path) -> dict:
    """Every file under root and its hash: what "no artifact changed" compares."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(root).rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def assert_one_line_error(result: Result, *expected: str) -> str:
    """Exit status 2, nothing but one `error: ...` line on stderr naming what is wrong, no traceback."""
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output, result.output
    for text in expected:
        assert text in lines[0], (text, lines[0])
    return lines[0]


def check_bad_input(args, root: Path, *expected: str, input: str | None = None, env: dict | None = None) -> str:
    """A bad input ends in one line (see above), and every file under `root` is unchanged."""
    before = snapshot(root)
    line = assert_one_line_error(invoke(args, input=input, env=env), *expected)
    assert snapshot(root) == before, "a bad input changed files on disk"
    return line
