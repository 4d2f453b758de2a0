"""A person as CEDAR's equivalence oracle for a specification, and the cache of their answers.

The person looks at the hypothesis (its shortest accepted words and its transitions as a
table, with the DOT and SVG written beside) and answers in one of the paper's ways (A.5):
`ok` (it is right), a word it gets wrong (`sym sym ; yes|no`), or the number of a recorded
trajectory (an episode log, a `regula play` recording, read as a word over the letters) whose
verdict is wrong. Each answer is stored under the hypothesis it answered (a digest of its
JSON) in the spec's EQ cache, a JSON-lines file, so the same learning replays with no person:
the teacher's answers come from their own cache, the hypotheses follow, and each is looked up.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

from regula.automata.dfa import DFA
from regula.automata.learning import Counterexample
from regula.automata.ops import shortest_accepted
from regula.errors import DataError, RegulaError
from regula.io import write_jsonl

SHOW_WORDS = 8  # accepted words shown to the person, shortest first
UNANSWERED = object()  # `EqCache.get` of a hypothesis nobody answered (None is an answer: "it is right")


def hypothesis_key(dfa: DFA) -> str:
    """The hypothesis's name in the cache: a digest of its canonical JSON."""
    return hashlib.sha256(dfa.dumps().encode()).hexdigest()[:16]


class EqCache:
    """{hypothesis key: the person's answer} in a JSON-lines file: `{"hypothesis", "answer":
    null (the hypothesis is right) | {"word": [...], "label": bool, "how": "word" | "trajectory"}}`."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.records: list[dict] = []
        if self.path.exists():
            for n, line in enumerate(self.path.read_text().splitlines(), 1):
                try:
                    rec = json.loads(line)
                    if not isinstance(rec, dict) or not {"hypothesis", "answer"} <= rec.keys():
                        raise ValueError
                except (json.JSONDecodeError, ValueError):
                    raise DataError(f"{self.path}:{n}: not an EQ cache record (a JSON object with "
                                    "`hypothesis` and `answer`)") from None
                self.records.append(rec)
        self.answers = {r["hypothesis"]: r["answer"] for r in self.records}

    def get(self, key: str):
        return self.answers.get(key, UNANSWERED)

    def put(self, key: str, answer) -> None:
        """Store an answer and write the file at once (a run that dies keeps every answer given)."""
        self.answers[key] = answer
        self.records.append({"hypothesis": key, "answer": answer})
        write_jsonl(self.path, self.records, fsync=True)


def describe(dfa: DFA, trajectories: list[tuple[str, tuple]]) -> list[str]:
    """What the person is shown: the shortest accepted words, the transitions as a table, and
    the hypothesis's verdict on each recorded trajectory."""
    lines = [f"hypothesis: {dfa.size} states over {', '.join(dfa.alphabet)}"]
    words = _shortest_words(dfa, SHOW_WORDS)
    lines.append("it accepts, shortest first: " + ("; ".join(", ".join(w) or "(the empty word)" for w in words)
                                                    if words else "nothing"))
    lines.append("state | accepting | " + " | ".join(dfa.alphabet))
    for s, row in enumerate(dfa.delta):
        lines.append(f"{s}{' (start)' if s == dfa.initial else ''} | {'yes' if s in dfa.accepting else 'no'} | "
                     + " | ".join(map(str, row)))
    for i, (name, word) in enumerate(trajectories, 1):
        lines.append(f"#{i} {name}: {', '.join(word) or '(nothing)'} -> "
                     f"{'accepted' if dfa.accepts(word) else 'rejected'}")
    return lines


def _shortest_words(dfa: DFA, n: int) -> list[tuple]:
    """Up to `n` accepted words in length-then-alphabet order (a BFS over words, bounded)."""
    if shortest_accepted(dfa) is None:
        return []
    out, frontier = [], [((), dfa.initial)]
    for _ in range(12):
        nxt = []
        for word, s in frontier:
            if s in dfa.accepting:
                out.append(word)
                if len(out) == n:
                    return out
            nxt += [(word + (a,), t) for a, t in zip(dfa.alphabet, dfa.delta[s])]
        frontier = nxt[:4096]
    return out


class PersonOracle:
    """`observe(hypothesis)`: the cached answer, else (with `ask`) the person's, stored; with
    no `ask` (replaying) a hypothesis nobody answered is an error naming the cache. `by`, when
    given, is stored with each new answer: who gave it when it was not a person."""

    def __init__(self, alphabet, cache: EqCache, ask: Callable[[str], str] | None = None,
                 say: Callable[[str], None] = print, trajectories: list[tuple[str, tuple]] = (),
                 show: Callable[[DFA], None] | None = None, by: str | None = None):
        self.alphabet, self.cache, self.ask, self.say = tuple(alphabet), cache, ask, say
        self.trajectories = list(trajectories)
        self.show, self.by = show, by
        self.asked = 0  # answers the person gave in this run (not from the cache)

    def observe(self, hypothesis: DFA) -> list[Counterexample]:
        key = hypothesis_key(hypothesis)
        answer = self.cache.get(key)
        if answer is UNANSWERED:
            if self.ask is None:
                raise RegulaError(f"no answer recorded for hypothesis {key} in {self.cache.path}: run "
                                  "`regula spec learn` in a terminal to give it")
            answer = self._ask(hypothesis)
            if answer is not None and self.by is not None:
                answer = {**answer, "by": self.by}
            self.cache.put(key, answer)
            self.asked += 1
        if answer is None:
            return []
        return [Counterexample(tuple(answer["word"]), bool(answer["label"]))]

    def _ask(self, hypothesis: DFA):
        if self.show is not None:
            self.show(hypothesis)
        for line in describe(hypothesis, self.trajectories):
            self.say(line)
        while True:
            line = self.ask("ok, a word it gets wrong (sym sym ; yes|no), or #N for a trajectory it judges wrong: ")
            try:
                return self._parse(line.strip(), hypothesis)
            except ValueError as exc:
                self.say(str(exc))

    def _parse(self, line: str, hypothesis: DFA):
        if line.lower() == "ok":
            return None
        if line.startswith("#"):
            try:
                name, word = self.trajectories[int(line[1:]) - 1]
            except (ValueError, IndexError):
                raise ValueError(f"no trajectory {line} (there are {len(self.trajectories)})") from None
            return {"word": list(word), "label": not hypothesis.accepts(word), "how": "trajectory",
                    "trajectory": name}
        if ";" not in line:
            raise ValueError("write ok, the symbols then `; yes` or `; no`, or #N")
        symbols, label = line.rsplit(";", 1)
        if label.strip().lower() not in ("yes", "no"):
            raise ValueError("after the semicolon: yes or no")
        word = tuple(symbols.split())
        bad = [a for a in word if a not in self.alphabet]
        if bad:
            raise ValueError(f"{bad[0]} is not a letter ({', '.join(self.alphabet)})")
        label = label.strip().lower() == "yes"
        if hypothesis.accepts(word) == label:
            raise ValueError("the hypothesis already answers that; give a word it gets wrong")
        return {"word": list(word), "label": label, "how": "word"}


class FormulaPerson:
    """A stand-in for the person, who means the LTLf `clauses` (compiled by the logic core): it
    answers as a person types, `ok` when the hypothesis's language is the formula's, else the
    shortest word the hypothesis gets wrong. Give `show` and `ask` to a `PersonOracle`."""

    def __init__(self, clauses, alphabet):
        from regula.automata.teachers import formula_dfa
        self.clauses = list(clauses)
        self.meant = formula_dfa(self.clauses, tuple(alphabet))
        self.hypothesis: DFA | None = None

    @property
    def name(self) -> str:
        return "formula: " + " & ".join(self.clauses)

    def show(self, hypothesis: DFA) -> None:
        self.hypothesis = hypothesis

    def ask(self, prompt: str) -> str:
        from regula.automata.ops import equivalent
        same, word = equivalent(self.hypothesis, self.meant)
        if same:
            return "ok"
        return f"{' '.join(word)} ; {'yes' if self.meant.accepts(word) else 'no'}"
