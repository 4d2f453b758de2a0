"""A specification learned like a skill: the teacher answers membership queries about the
instruction, a person (`person.PersonOracle`) answers the equivalence queries, and the result
is written as the stages write a skill's DFA (`<name>.json`, `.dot`, `.svg`) beside the EQ cache
(`<name>.eq.jsonl`) that lets the same learning replay without the person."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from regula.automata.dfa import DFA
from regula.automata.learning import Learner
from regula.roles import Teacher

from .person import PersonOracle


@dataclass
class SpecResult:
    dfa: DFA
    rounds: int
    queries: int  # teacher askings
    person_answers: int  # answers the person gave in this run (the rest came from the EQ cache)
    files: list


def learn_spec(name: str, instruction: str, alphabet, teacher: Teacher, person: PersonOracle, out: Path,
               max_queries: int = 5_000, max_rounds: int = 50, svg: bool = True) -> SpecResult:
    """Learn the instruction's language over `alphabet` (KV; the person's words are trusted and
    pin their labels over the teacher's), then write it under `out`."""
    learner = Learner(tuple(alphabet), teacher, person, max_queries=max_queries, max_rounds=max_rounds)
    result = learner.learn()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = [result.dfa.save(out / f"{name}.json")]
    files += result.dfa.save_dot(out / f"{name}.dot", instruction.replace('"', "'"), svg=svg)
    return SpecResult(result.dfa, result.rounds, result.teacher_queries, person.asked, files)
