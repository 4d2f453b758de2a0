"""Who reads the ground truth (Crafter's data.yaml) by design, and who may not (readers.yaml).

The guard test enforces this list and the report prints it: one list, so what is printed is
what is checked.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

SCOPES = ("own", "callers", "serves")


@dataclass(frozen=True)
class Part:
    name: str
    modules: tuple  # paths under src/regula
    why: str = ""
    scope: str = ""  # SCOPES, for an allowed part
    serves: tuple = ()  # scope `serves`: the modules it is the interface of


@lru_cache(maxsize=1)
def _load() -> dict:
    return yaml.safe_load(Path(__file__).with_name("readers.yaml").read_text())


def _parts(key: str) -> list[Part]:
    return [Part(p["name"], tuple(p["modules"]), p.get("why", ""), p.get("scope", ""), tuple(p.get("serves", ())))
            for p in _load()[key]]


def allowed() -> list[Part]:
    """The parts that read data.yaml by design, with why and whose read it is (`scope`)."""
    return _parts("allowed")


def forbidden() -> list[Part]:
    """The learners and verifiers, which must not read it."""
    return _parts("forbidden")
