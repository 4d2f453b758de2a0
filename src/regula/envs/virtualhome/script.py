"""Script lines, `[ACTION] <class> (id)` with zero to two objects, parsed by regula (not the simulator).

`parse_line` is the strict reading: text that is not of that shape raises `ScriptLineError`
naming the line. An episode's `run_skill` reads an agent's output with it and turns the error
into a failed step (an agent's garbled line is an outcome, not a bug); the program loader turns it
into a `DataError` naming the file and line (a corrupt dataset is).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from regula.errors import RegulaError

_LINE = re.compile(r"^\[(?P<action>[A-Za-z_]+)\](?P<objects>(?:\s*<[^<>()]+>\s*\(\s*\d+\s*\))*)\s*$")
_OBJECT = re.compile(r"<(?P<name>[^<>()]+)>\s*\(\s*(?P<id>\d+)\s*\)")


class ScriptLineError(RegulaError):
    """A line that is not `[ACTION] <class> (id) ...`; the message quotes the line."""


@dataclass(frozen=True)
class ScriptLine:
    action: str  # upper case, e.g. "PUTBACK"
    objects: tuple[tuple[str, int], ...]  # ((class name, node id), ...), zero to two

    def __str__(self) -> str:
        return " ".join([f"[{self.action}]"] + [f"<{name}> ({node})" for name, node in self.objects])


def parse_line(text: str) -> ScriptLine:
    if not isinstance(text, str):
        raise TypeError(f"a script line is a str, not {type(text).__name__}: {text!r}")
    match = _LINE.match(text.strip())
    if match is None:
        raise ScriptLineError(f"cannot parse script line {text!r}: expected '[ACTION] <class> (id)' "
                              "with zero to two objects, e.g. '[GRAB] <cup> (1000)'")
    objects = tuple((m["name"].strip().lower().replace(" ", "_"), int(m["id"]))
                    for m in _OBJECT.finditer(match["objects"]))
    if len(objects) > 2:
        raise ScriptLineError(f"cannot parse script line {text!r}: at most two objects, got {len(objects)}")
    return ScriptLine(match["action"].upper(), objects)
