"""The programs `virtualhome-eval` ships (ActivityPrograms run in TrimmedTestScene1), and their graphs.

Each program is a text file (task name, description, a blank line, one script line a line) with
a JSON file beside it in `init_and_final_graphs/` holding the scene graph before and after the
program. Ids in the files read `(1.319)`: the simulator wants the node id `(319)`, so lines are
normalised on loading (then 516 of the 518 programs execute end to end).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import virtualhome_eval

from regula.errors import DataError, UnknownNameError

from .script import ScriptLineError, parse_line

PACKAGE = Path(virtualhome_eval.__file__).resolve().parent
DATASET = PACKAGE / "dataset" / "programs_processed_precond_nograb_morepreconds"
SCRIPTS = DATASET / "executable_programs"
GRAPHS = DATASET / "init_and_final_graphs"
RESOURCES = PACKAGE / "resources"

_SCENE_ID = re.compile(r"\((\d+)\.(\d+)\)")  # `(1.319)`: scene 1, node 319


@dataclass(frozen=True)
class Program:
    """One recorded program: ground truth (scoring, expert data), never a learner's input as is."""

    id: str  # the file's stem, e.g. "file1003_2"
    task: str  # the task name, e.g. "Drink"
    description: str
    lines: tuple[str, ...]  # script lines, ids normalised: "[WALK] <dining_room> (201)"
    script_path: Path
    graph_path: Path

    def graphs(self) -> dict:
        """{"init_graph": ..., "final_graph": ...} as shipped (read from disk on each call)."""
        return _read_graphs(self.graph_path)


def normalise(line: str) -> str:
    """`[WALK] <chair> (1.356)` -> `[WALK] <chair> (356)`."""
    return _SCENE_ID.sub(r"(\2)", line.strip())


def read_program(path: Path, graphs: Path) -> Program:
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"{path}: cannot read the program ({e})") from None
    head = text.split("\n")
    if len(head) < 3 or not head[0].strip():
        raise DataError(f"{path}: a program starts with a task name and a description line")
    lines = []
    for number, raw in enumerate(head[2:], start=3):
        if not raw.strip():
            continue
        line = normalise(raw)
        try:
            parse_line(line)
        except ScriptLineError as e:
            raise DataError(f"{path}:{number}: {e}") from None
        lines.append(line)
    if not lines:
        raise DataError(f"{path}: the program has no script lines")
    return Program(path.stem, head[0].strip(), head[1].strip(), tuple(lines), path, graphs)


def _read_graphs(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
        for key in ("init_graph", "final_graph"):
            if not isinstance(data[key]["nodes"], list) or not isinstance(data[key]["edges"], list):
                raise TypeError(f"{key} lacks its node or edge list")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise DataError(f"{path}: not a graph file with init_graph and final_graph ({e})") from None
    return data


@lru_cache(maxsize=None)
def programs() -> dict[str, Program]:
    """Every shipped program by id, sorted by id (the graphs are read when an episode needs them)."""
    out = {}
    for path in sorted(SCRIPTS.glob("*/*/*.txt")):
        graph = GRAPHS / path.relative_to(SCRIPTS).with_suffix(".json")
        if not graph.exists():
            raise DataError(f"{path}: no graph file {graph} beside it")
        program = read_program(path, graph)
        if program.id in out:
            raise DataError(f"{path}: a second program with id {program.id}")
        out[program.id] = program
    if not out:
        raise DataError(f"{SCRIPTS}: no programs found (is virtualhome-eval installed whole?)")
    return dict(sorted(out.items()))


def program(program_id: str) -> Program:
    table = programs()
    if program_id not in table:
        raise UnknownNameError("program", program_id, table)
    return table[program_id]


@lru_cache(maxsize=None)
def resource(name: str):
    """A JSON file of the simulator's resources (vocabulary.json, class_name_equivalence.json, ...)."""
    return json.loads((RESOURCES / name).read_text())
