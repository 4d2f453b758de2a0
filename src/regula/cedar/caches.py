"""The MQ and EQ caches (CEDAR §3.1's C_MQ and C_EQ): one JSON file per skill each, sorted keys,
rewritten atomically after every equivalence round, so a run killed halfway loses at most the
round it was in and a rerun takes up every answer and rollout already recorded.

* MQ: teacher -> word -> sample -> answer. The teacher's name holds what makes its answers
  differ (backend, noise, seed; the LLM's model), so a changed teacher never reads another's
  answers. An LLM teacher's answers are also in the LLM cache; this one is the readable record
  of the labelled words a skill was learned from (its D).
* EQ: hypothesis -> world -> rollout (word, the world's label, steps). A hypothesis is named by
  the hash of its minimal DFA, so one language played on one world is played once.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from regula.automata.dfa import DFA
from regula.automata.ops import minimize
from regula.errors import DataError
from regula.io import write_atomic

WORD_SEP = " "  # letters are identifiers (`collect_wood`): a space cannot occur in one


def word_key(word) -> str:
    return WORD_SEP.join(word)


def key_word(key: str) -> tuple:
    return tuple(key.split(WORD_SEP)) if key else ()


def hypothesis_key(dfa: DFA) -> str:
    return hashlib.sha256(minimize(dfa).dumps().encode()).hexdigest()[:16]


class JsonCache:
    """A nested dict kept in one JSON file; `save` writes it when something was added."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.data: dict = {}
        self.dirty = False
        if self.path.exists():
            try:
                self.data = json.loads(self.path.read_text())
            except json.JSONDecodeError as exc:
                raise DataError(f"{self.path}: not valid JSON ({exc.msg}, line {exc.lineno}); "
                                "delete it to record the cache again") from None
            if not isinstance(self.data, dict):
                raise DataError(f"{self.path}: expected a JSON object")

    def save(self) -> None:
        if self.dirty:
            write_atomic(self.path, dumps(self.data))
            self.dirty = False


def dumps(data: dict) -> str:
    """Sorted keys, two levels of nesting on their own lines, each entry beneath on one line:
    a cache kept in git diffs by entry (and a word is not spread over a line per letter)."""
    def one(v):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    out = ["{"]
    for i, (a, inner) in enumerate(sorted(data.items())):
        out.append(f"{one(a)}:{{")
        out += [f"  {one(b)}:{one(v)}{',' if j < len(inner) - 1 else ''}" for j, (b, v) in enumerate(sorted(inner.items()))]
        out.append("}" + ("," if i < len(data) - 1 else ""))
    return "\n".join(out + ["}"]) + "\n"


class MQCache(JsonCache):
    def get(self, teacher: str, word, sample: int) -> bool | None:
        return self.data.get(teacher, {}).get(word_key(word), {}).get(str(sample))

    def put(self, teacher: str, word, sample: int, answer: bool) -> None:
        self.data.setdefault(teacher, {}).setdefault(word_key(word), {})[str(sample)] = bool(answer)
        self.dirty = True


class EQCache(JsonCache):
    def get(self, hypothesis: str, world: int) -> dict | None:
        return self.data.get(hypothesis, {}).get(str(world))

    def put(self, hypothesis: str, world: int, rollout: dict) -> None:
        self.data.setdefault(hypothesis, {})[str(world)] = rollout
        self.dirty = True


class RecordedTeacher:
    """A teacher whose answers go through the MQ cache: asked once per (word, sample), ever."""

    def __init__(self, teacher, name: str, cache: MQCache):
        self.teacher, self.name, self.cache = teacher, name, cache
        self.asked = self.replayed = 0

    def member(self, word, sample: int = 0) -> bool:
        got = self.cache.get(self.name, word, sample)
        if got is not None:
            self.replayed += 1
            if getattr(self.teacher, "uses_llm", False):
                # Asked through the LLM layer all the same: its cache replays the answer and
                # accounts what it cost when asked, so a replay's LLM rows are the first run's.
                self.teacher.member(tuple(word), sample)
            return got
        answer = bool(self.teacher.member(tuple(word), sample))
        self.asked += 1
        self.cache.put(self.name, word, sample, answer)
        return answer
