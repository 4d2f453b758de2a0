"""Laws: an LTL formula with its kind, source, explanation and provenance; law files.

A law file is YAML or JSON: a list of laws, or a mapping with a `laws` list. It is checked
on load: each formula parses, uses only atoms the environment defines, and the hard laws
do not contradict each other.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from regula.errors import RegulaError
from regula.io import write_atomic, write_json

from .formula import Formula, binary
from .monitor import NativeMonitor
from .parser import FormulaError, parse

KINDS = ("hard", "soft")  # hard safety | soft efficiency
SOURCES = ("hand", "environment_failure", "efficiency", "over_constraint")


class LawError(RegulaError):
    """A law file or a law that cannot be used; the message names the file and the law."""


@dataclass(frozen=True)
class Law:
    formula: str
    kind: str = "hard"
    source: str = "hand"
    explanation: str = ""
    name: str = ""
    provenance: dict = field(default_factory=dict, compare=False, hash=False)  # run, episode, step

    def __post_init__(self):
        if self.kind not in KINDS:
            raise LawError(f"law {self.label}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.source not in SOURCES:
            raise LawError(f"law {self.label}: source must be one of {', '.join(SOURCES)}, got {self.source!r}")
        object.__setattr__(self, "parsed", parse(self.formula))

    @property
    def label(self) -> str:
        return self.name or self.formula

    def describe(self) -> str:
        text = f"{self.formula} [{self.kind}, {self.source}]"
        return f"{text}: {self.explanation}" if self.explanation else text

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v not in ("", {}, None)}


def check_atoms(laws: list[Law], atoms: set[str] | frozenset, where: str = "") -> None:
    for i, law in enumerate(laws, 1):
        unknown = sorted(law.parsed.atoms() - set(atoms))
        if unknown:
            raise LawError(f"{where}law {i} ({law.label}) uses unknown atom{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(unknown)}; the environment defines: {', '.join(sorted(atoms))}")


def conjunction(laws: list[Law]) -> Formula:
    f = laws[0].parsed
    for law in laws[1:]:
        f = binary("and", f, law.parsed)
    return f


# Satisfiability is decided over the explicit alphabet, 2^k letters for k plain atoms: every
# law alone and every pair is checked; all hard laws together only while that stays small.
JOINT_ATOMS_LIMIT = 12


def _satisfiable(laws: list[Law], actions) -> bool:
    return NativeMonitor(conjunction(laws), actions).can_still_be_satisfied()


def check_consistent(laws: list[Law], actions: frozenset | None = None, where: str = "") -> None:
    """Hard laws that no trace can satisfy together are an error naming the smallest culprits."""
    hard = [law for law in laws if law.kind == "hard"]
    for law in hard:
        if not _satisfiable([law], actions):
            raise LawError(f"{where}law {law.label} can never be satisfied")
    for i, a in enumerate(hard):
        for b in hard[i + 1:]:
            if (a.parsed.atoms() & b.parsed.atoms()) and not _satisfiable([a, b], actions):
                raise LawError(f"{where}hard laws contradict each other: {a.label} and {b.label}")
    atoms = frozenset().union(*(law.parsed.atoms() for law in hard)) if hard else frozenset()
    plain = len(atoms - (actions or frozenset()))
    if len(hard) > 2 and plain <= JOINT_ATOMS_LIMIT and not _satisfiable(hard, actions):
        raise LawError(f"{where}the {len(hard)} hard laws together can never be satisfied")


def load_laws(path: str | Path, atoms=None, actions: frozenset | None = None) -> list[Law]:
    path = Path(path)
    where = f"{path}: "
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise LawError(f"law file {path} not found") from None
    if not text.strip():
        raise LawError(f"law file {path} is empty")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise LawError(f"{where}not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}") from None
    items = data.get("laws") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise LawError(f"{where}expected a list of laws (or a mapping with a `laws` list)")
    laws = []
    for i, item in enumerate(items, 1):
        if isinstance(item, str):
            item = {"formula": item}
        if not isinstance(item, dict) or "formula" not in item:
            raise LawError(f"{where}law {i} has no `formula`")
        extra = set(item) - {"formula", "kind", "source", "explanation", "name", "provenance"}
        if extra:
            raise LawError(f"{where}law {i} has unknown field{'s' if len(extra) > 1 else ''} "
                           f"{', '.join(sorted(extra))}")
        try:
            laws.append(Law(**item))
        except FormulaError as exc:
            raise LawError(f"{where}law {i}: {exc}") from None
        except LawError as exc:
            raise LawError(f"{where}{exc}") from None
    if atoms is not None:
        check_atoms(laws, atoms, where)
    check_consistent(laws, actions, where)
    return laws


def save_laws(path: str | Path, laws: list[Law]) -> None:
    payload = {"laws": [law.to_json() for law in laws]}
    if Path(path).suffix == ".json":
        write_json(path, payload)
    else:
        write_atomic(path, yaml.safe_dump(payload, sort_keys=True, allow_unicode=True))
