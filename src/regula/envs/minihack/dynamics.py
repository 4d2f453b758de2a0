"""The ground-truth dynamics of the MiniHack tasks (`dynamics.yaml`), for scoring only.

Each fact names the adapter's own words: a skill, a thing `go_to` finds or a terrain, one of
`ATTRIBUTES`, and an argument of the kind that attribute takes (a proposition, a creature,
...). `load` checks every fact against the adapter's vocabularies (`symbols`) and the tasks
(`tasks.yaml`), so a renamed proposition or skill breaks the file loudly, in one line naming
the fact. The family's `ground_truth(task)` (spec.py) is how the rest of the project reads it.
No NetHack import.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import yaml

from regula.errors import DataError

from .symbols import DIRECTIONS, PROPOSITIONS, THINGS, skill_names

PATH = Path(__file__).with_name("dynamics.yaml")
TERRAINS = ("lava",)
CREATURES = ("agent", "minotaur")
# attribute -> the words its argument may be
ATTRIBUTES = {
    "requires": tuple(PROPOSITIONS), "prevented_by": tuple(PROPOSITIONS), "gives": tuple(PROPOSITIONS),
    "removes": tuple(PROPOSITIONS), "crossable_when": tuple(PROPOSITIONS), "kills": CREATURES,
    "freezes": TERRAINS, "reaches": ("squares",), "ends": ("success",),
}
CODES = ("NetHack 3.6.6", "nle 1.3.0", "minihack 1.0.2")  # NetHack as built into nle 1.3.0
KEYS = ("id", "tasks", "element", "attribute", "arg", "value", "when", "unless", "text", "sources")


def skill_element(skill: str) -> str:
    """A skill as a fact names it: `zap wand e` -> `zap wand`, `move e` -> `move`."""
    *head, last = skill.split(" ")
    return " ".join(head) if head and last in DIRECTIONS else skill


def skill_elements() -> tuple[str, ...]:
    """The skills as a fact names them: `zap wand` and `move` for every direction."""
    out: list[str] = []
    for name in skill_names():
        name = skill_element(name)
        if name not in out:
            out.append(name)
    return tuple(out)


def elements() -> tuple[str, ...]:
    return skill_elements() + tuple(THINGS) + TERRAINS


@dataclass(frozen=True)
class Source:
    code: str  # one of CODES
    file: str  # NetHack: src/<file>.c; nle / MiniHack: the file in the installed package
    function: str  # a C function, or Class.method in Python

    def text(self) -> str:
        return f"{self.code} {self.file} {self.function}()"


@dataclass(frozen=True)
class Fact:
    id: str
    tasks: tuple[str, ...]
    element: str
    attribute: str
    arg: str
    text: str
    sources: tuple[Source, ...]
    value: int | None = None  # `reaches`: how many squares
    when: tuple[str, ...] = ()  # propositions that must hold for the fact to apply
    unless: tuple[str, ...] = ()  # propositions under which it does not

    def statement(self) -> str:
        """The fact in a line: `put_on ring gives levitating`, `lava kills agent unless levitating`."""
        out = f"{self.element} {self.attribute} {self.arg}" + (f" {self.value}" if self.value is not None else "")
        out += f" when {' & '.join(self.when)}" if self.when else ""
        return out + (f" unless {' | '.join(self.unless)}" if self.unless else "")


def load(tasks: Iterable[str], path: Path = PATH) -> tuple[Fact, ...]:
    """Every fact of the file, checked against the adapter's words and `tasks` (the task names,
    `spec.TASKS`); a mistake is a DataError naming the file and the fact."""
    tasks = tuple(tasks)
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise DataError(f"{path}: cannot read the dynamics ({type(exc).__name__})") from None
    if not isinstance(raw, dict) or set(raw) != {"facts"} or not isinstance(raw["facts"], list) or not raw["facts"]:
        raise DataError(f"{path}: must hold one key, facts, a list of facts")
    facts: list[Fact] = []
    for n, item in enumerate(raw["facts"], 1):
        fact = _fact(item, tasks, lambda msg, n=n, item=item: DataError(
            f"{path}: fact {n}{' (' + str(item.get('id')) + ')' if isinstance(item, dict) and item.get('id') else ''}: "
            f"{msg}"))
        if any(f.id == fact.id for f in facts):
            raise DataError(f"{path}: fact {n} ({fact.id}): the id is given twice")
        facts.append(fact)
    return tuple(facts)


def _names(value, allowed, what: str, bad) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad(f"{what} must be a list of names")
    unknown = [v for v in value if v not in allowed]
    if unknown:
        raise bad(f"{what}: {unknown[0]!r} is not one of {', '.join(sorted(allowed))}")
    return tuple(value)


def _fact(item, tasks, bad) -> Fact:
    if not isinstance(item, dict):
        raise bad("must be a mapping")
    extra = sorted(set(item) - set(KEYS))
    if extra:
        raise bad(f"unknown key {extra[0]!r}; known keys: {', '.join(KEYS)}")
    missing = [k for k in ("id", "tasks", "element", "attribute", "arg", "text", "sources") if k not in item]
    if missing:
        raise bad(f"lacks {', '.join(missing)}")
    if not isinstance(item["id"], str) or not re.fullmatch(r"[a-z][a-z0-9_]*", item["id"]):
        raise bad("id must be a snake_case name")
    task_names = _names(item["tasks"], tasks, "tasks", bad)
    if not task_names:
        raise bad("tasks must name at least one task")
    element, attribute, arg = item["element"], item["attribute"], item["arg"]
    if element not in elements():
        raise bad(f"element {element!r} is not a skill, a thing or a terrain of the adapter: "
                  f"{', '.join(elements())}")
    if attribute not in ATTRIBUTES:
        raise bad(f"attribute {attribute!r} is not one of {', '.join(ATTRIBUTES)}")
    if arg not in ATTRIBUTES[attribute]:
        raise bad(f"{attribute} takes one of {', '.join(ATTRIBUTES[attribute])}, got {arg!r}")
    value = item.get("value")
    if (attribute == "reaches") != (value is not None) or (value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1)):
        raise bad("value (a whole number >= 1) goes with `reaches` and only with it")
    if not isinstance(item["text"], str) or not item["text"].strip() or "\n" in item["text"]:
        raise bad("text must be one line")
    sources = item["sources"]
    if not isinstance(sources, list) or not sources:
        raise bad("sources must list the code that establishes the fact")
    return Fact(item["id"], task_names, element, attribute, arg, item["text"], tuple(_source(s, bad) for s in sources),
                value, _names(item.get("when", []), PROPOSITIONS, "when", bad),
                _names(item.get("unless", []), PROPOSITIONS, "unless", bad))


def _source(s, bad) -> Source:
    if not isinstance(s, dict) or set(s) != {"code", "file", "function"}:
        raise bad("a source is {code, file, function}")
    if s["code"] not in CODES:
        raise bad(f"source code {s['code']!r} is not one of {', '.join(CODES)}")
    c = s["code"].startswith("NetHack")
    if not isinstance(s["file"], str) or not re.fullmatch(r"src/\w+\.c" if c else r"[\w/]+\.py", s["file"]):
        raise bad(f"source file {s['file']!r}: NetHack's are src/<name>.c, nle's and MiniHack's <path>.py")
    if not isinstance(s["function"], str) or not re.fullmatch(r"\w+" if c else r"\w+(\.\w+)?", s["function"]):
        raise bad(f"source function {s['function']!r}: a function name{'' if c else ' or Class.method'}")
    return Source(s["code"], s["file"], s["function"])
