"""The global alphabet Σ_global of an environment and its sub-alphabets (CEDAR §3.1).

Σ_global is three disjoint kinds of symbols (actions, objects, events), each with one line of
English, read from the environment's data file (`EnvSpec.global_alphabet()`). A sub-alphabet Σ
is grounded into a DFA's letters through the environment's skill names: the verb `v` and the
object `n` give the letter `v_n` when that is a skill, a verb that is a skill by itself
(`explore`) is a letter, and every event is a letter.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from functools import lru_cache

from regula.errors import DataError, UnknownNameError

KINDS = ("actions", "objects", "events")
KIND_OF = {"actions": "action", "objects": "object", "events": "event"}  # for messages


@dataclass(frozen=True)
class SubAlphabet:
    """Σ ⊆ Σ_global: sorted tuples of symbol names per kind."""

    actions: tuple = ()
    objects: tuple = ()
    events: tuple = ()

    def __post_init__(self):
        for f in fields(self):
            object.__setattr__(self, f.name, tuple(sorted(set(getattr(self, f.name)))))

    def symbols(self) -> set[str]:
        return set(self.actions) | set(self.objects) | set(self.events)

    def __len__(self) -> int:
        return len(self.actions) + len(self.objects) + len(self.events)

    def __or__(self, other: "SubAlphabet") -> "SubAlphabet":
        return SubAlphabet(*(getattr(self, k) + getattr(other, k) for k in KINDS))

    def to_json(self) -> dict:
        return {k: list(getattr(self, k)) for k in KINDS}

    @classmethod
    def from_json(cls, data: dict) -> "SubAlphabet":
        extra = sorted(set(data) - set(KINDS))
        if extra:
            raise DataError(f"sub-alphabet: unknown key {extra[0]!r}; keys: {', '.join(KINDS)}")
        return cls(**{k: tuple(data.get(k, ())) for k in KINDS})

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)


class GlobalAlphabet:
    """Σ_global of one environment: `describe`, `kind`, `check`, `letters`."""

    def __init__(self, symbols: dict[str, dict[str, str]], skills):
        self.by_kind = {k: dict(symbols.get(k) or {}) for k in KINDS}
        self.kinds = {name: kind for kind in KINDS for name in self.by_kind[kind]}
        if len(self.kinds) != sum(len(v) for v in self.by_kind.values()):
            raise DataError("global alphabet: a symbol is listed under two kinds")
        self.skills = frozenset(skills)

    @classmethod
    def of(cls, env: str) -> "GlobalAlphabet":
        return _load(env)

    def names(self, kind: str) -> tuple[str, ...]:
        return tuple(self.by_kind[kind])

    def describe(self, name: str) -> str:
        return self.by_kind[self.kind(name)][name]

    def kind(self, name: str) -> str:
        if name not in self.kinds:
            raise UnknownNameError("symbol", name, self.kinds)
        return self.kinds[name]

    def check(self, sub: SubAlphabet) -> SubAlphabet:
        """`sub` itself when each of its symbols is known under its kind; else UnknownNameError."""
        for kind in KINDS:
            for name in getattr(sub, kind):
                if name not in self.by_kind[kind]:
                    raise UnknownNameError(KIND_OF[kind], name, self.by_kind[kind])
        return sub

    def letters(self, sub: SubAlphabet) -> tuple[str, ...]:
        """The DFA's letters of Σ, sorted."""
        self.check(sub)
        out = {f"{v}_{n}" for v in sub.actions for n in sub.objects if f"{v}_{n}" in self.skills}
        out |= {v for v in sub.actions if v in self.skills}
        out |= set(sub.events)
        return tuple(sorted(out))

    def split_skill(self, skill: str) -> SubAlphabet:
        """The verb and object a skill name grounds from (`collect_wood`: collect, wood)."""
        if skill not in self.skills:
            raise UnknownNameError("skill", skill, self.skills)
        if skill in self.by_kind["actions"]:
            return SubAlphabet(actions=(skill,))
        verb, _, noun = skill.partition("_")
        return self.check(SubAlphabet(actions=(verb,), objects=(noun,)))


@lru_cache(maxsize=None)
def _load(env: str) -> GlobalAlphabet:
    from regula import envs
    spec = envs.get(env)
    return GlobalAlphabet(spec.global_alphabet(), spec.skill_names())
