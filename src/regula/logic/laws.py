"""Laws: an LTL formula with its kind, source, explanation and provenance; law files.

A law file is YAML or JSON (UTF-8, at most MAX_FILE_BYTES): a list of laws, or a mapping with
a `laws` list; a law is a formula text or a mapping with a `formula`. It is checked on load:
each field has its type, each formula parses within the limits and each law's automaton is
built within the bounds (formula.py), no law repeats another's formula or name, formulas
use only atoms the environment defines, and the hard laws do not contradict each other. Any
problem stops with one line naming the file and the law.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from regula.errors import RegulaError
from regula.io import write_atomic, write_json

from .formula import Formula, FormulaError, binary
from .monitor import NativeMonitor
from .parser import parse

KINDS = ("hard", "soft")  # hard safety | soft efficiency
SOURCES = ("hand", "environment_failure", "efficiency", "over_constraint")
FIELDS = ("formula", "kind", "source", "explanation", "name", "provenance")
MAX_FILE_BYTES = 1_000_000
MAX_LAWS = 200  # hard laws are checked in pairs: 200 laws sharing an atom take about 2 s


class LawError(RegulaError):
    """A law file or a law that cannot be used; the message names the file and the law."""


def _field_problem(fields: dict) -> str | None:
    """What is wrong with a law's fields other than its formula, if anything."""
    for key in ("kind", "source", "explanation", "name"):
        if key in fields and not isinstance(fields[key], str):
            return f"{key} must be text, got {_what(fields[key])}"
    if fields.get("kind", "hard") not in KINDS:
        return f"kind must be one of {', '.join(KINDS)}, got {fields['kind']!r}"
    if fields.get("source", "hand") not in SOURCES:
        return f"source must be one of {', '.join(SOURCES)}, got {fields['source']!r}"
    if not isinstance(fields.get("provenance", {}), dict):
        return f"provenance must be a mapping, got {_what(fields['provenance'])}"
    return None


def _what(value) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, (list, dict, str)) and not value:
        return f"an empty {type(value).__name__}"
    return type(value).__name__


@dataclass(frozen=True)
class Law:
    formula: str
    kind: str = "hard"
    source: str = "hand"
    explanation: str = ""
    name: str = ""
    provenance: dict = field(default_factory=dict, compare=False, hash=False)  # run, episode, step

    def __post_init__(self):
        problem = _field_problem({key: getattr(self, key) for key in FIELDS[1:]})
        if problem:
            raise LawError(f"law {self.label}: {problem}")
        object.__setattr__(self, "parsed", parse(self.formula))

    @property
    def label(self) -> str:
        return self.name or self.formula

    def describe(self) -> str:
        text = f"{self.formula} [{self.kind}, {self.source}]"
        return f"{text}: {self.explanation}" if self.explanation else text

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v not in ("", {}, None)}


@contextmanager
def named(what: str):
    """A formula past the limits while checking or monitoring a law: one LawError naming `what`."""
    try:
        yield
    except FormulaError as exc:
        raise LawError(f"{what}: {exc}") from None


def check_atoms(laws: list[Law], atoms: set[str] | frozenset, where: str = "") -> None:
    for i, law in enumerate(laws, 1):
        unknown = sorted(law.parsed.atoms() - set(atoms))
        if unknown:
            raise LawError(f"{where}law {i} ({law.label}) uses unknown atom{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(unknown)}; the environment defines: {', '.join(sorted(atoms))}")


def conjunction(laws: list[Law]) -> Formula:
    """The laws joined by `&` as a balanced tree: it nests log2(n) deeper than the deepest law, not n."""
    fs = [law.parsed for law in laws]
    while len(fs) > 1:
        fs = [binary("and", *fs[k:k + 2]) if k + 1 < len(fs) else fs[k] for k in range(0, len(fs), 2)]
    return fs[0]


def _satisfiable(laws: list[Law], actions) -> bool:
    """One law's automaton is built whole, never lazily (past the bounds the law is refused here,
    when it is loaded, not while it monitors: laws are drawn, compared and peeked at every action);
    a conjunction's is only searched as far as the answer needs."""
    return NativeMonitor(conjunction(laws), actions, compiled=len(laws) == 1, lazy=False).can_still_be_satisfied()


def _contradict(laws: list[Law], actions) -> bool:
    """No trace satisfies them all. Where deciding that would pass the limits, they are not checked."""
    try:
        return not _satisfiable(laws, actions)
    except FormulaError:
        return False


def check_consistent(laws: list[Law], actions: frozenset | None = None, where: str = "") -> None:
    """Hard laws that no trace can satisfy are an error naming the smallest culprits: each law
    alone (any law past the bounds is an error too), each pair that shares an atom, then all together."""
    hard = [(i, law) for i, law in enumerate(laws, 1) if law.kind == "hard"]
    for i, law in enumerate(laws, 1):  # soft ones too: past the bounds, refused on load, not in a shield
        with named(f"{where}law {i} ({law.label})"):
            ok = _satisfiable([law], actions)
        if not ok and law.kind == "hard":
            raise LawError(f"{where}law {i} ({law.label}) can never be satisfied")
    for k, (i, a) in enumerate(hard):
        for j, b in hard[k + 1:]:
            if a.parsed.atoms() & b.parsed.atoms() and _contradict([a, b], actions):
                raise LawError(f"{where}hard laws {i} ({a.label}) and {j} ({b.label}) contradict each other")
    if len(hard) > 2 and _contradict([law for _, law in hard], actions):
        raise LawError(f"{where}the {len(hard)} hard laws together can never be satisfied")


def _read(path: Path):
    """The file's YAML or JSON data; what keeps it from being read is a LawError."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise LawError(f"law file {path} not found") from None
    except OSError as exc:
        raise LawError(f"cannot read law file {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise LawError(f"law file {path} is larger than {MAX_FILE_BYTES:,} bytes (the limit)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LawError(f"{path}: not UTF-8 text (byte {exc.start + 1})") from None
    if not text.strip():
        raise LawError(f"law file {path} is empty")
    kind = "JSON" if path.suffix == ".json" else "YAML"
    try:
        return json.loads(text) if kind == "JSON" else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise LawError(f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise LawError(f"{path}: not valid YAML at line {mark.line + 1}, column {mark.column + 1}: "
                       f"{exc.problem}") from None
    except yaml.YAMLError as exc:
        raise LawError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise LawError(f"{path}: nests too deeply to read as {kind}") from None


def load_laws(path: str | Path, atoms=None, actions: frozenset | None = None) -> list[Law]:
    path = Path(path)
    where = f"{path}: "
    data = _read(path)
    if isinstance(data, dict):
        extra = sorted(map(str, set(data) - {"laws"}))
        if extra:
            raise LawError(f"{where}unknown key{'s' if len(extra) > 1 else ''} {', '.join(extra)}; "
                           "a law file is a list of laws or a mapping with a `laws` list")
        data = data.get("laws")
    if not isinstance(data, list) or not data:
        raise LawError(f"{where}expected a list of laws (or a mapping with a `laws` list), got {_what(data)}")
    if len(data) > MAX_LAWS:
        raise LawError(f"{where}{len(data):,} laws; the limit is {MAX_LAWS}")
    laws, formulas, names = [], {}, {}
    for i, item in enumerate(data, 1):
        if isinstance(item, str):
            item = {"formula": item}
        if not isinstance(item, dict):
            raise LawError(f"{where}law {i} is {_what(item)}: a law is a formula or a mapping with a `formula`")
        if "formula" not in item:
            raise LawError(f"{where}law {i} has no `formula`")
        extra = sorted(map(str, set(item) - set(FIELDS)))
        if extra:
            raise LawError(f"{where}law {i} has unknown field{'s' if len(extra) > 1 else ''} {', '.join(extra)}; "
                           f"the fields are {', '.join(FIELDS)}")
        problem = _field_problem(item)
        if problem:
            raise LawError(f"{where}law {i}: {problem}")
        try:
            law = Law(**item)
        except FormulaError as exc:
            raise LawError(f"{where}law {i}: {exc}") from None
        if law.parsed in formulas:
            j = formulas[law.parsed]
            raise LawError(f"{where}law {i} ({law.formula}) repeats law {j} ({laws[j - 1].formula})")
        if law.name in names:
            raise LawError(f"{where}law {i} has the same name as law {names[law.name]} ({law.name})")
        formulas[law.parsed] = i
        if law.name:
            names[law.name] = i
        laws.append(law)
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
