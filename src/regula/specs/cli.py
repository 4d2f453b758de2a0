"""`regula spec learn`: a specification learned in a terminal, the person answering the
equivalence queries; replayed from its EQ cache with no person (`--replay`, or no terminal)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from regula.cli_common import COUNT

spec_app = typer.Typer(no_args_is_help=True, help="Specifications learned as DFAs, a person answering the "
                                                  "equivalence queries (docs/cedar.md).")
TEACHERS = ("formula", "openai")


@spec_app.command("learn")
def spec_learn(instruction: str = typer.Argument(..., help='the specification in words, e.g. "shelter at night"'),
               name: str = typer.Option(..., help="the spec's file name (letters, digits, _ and -)"),
               letters: str = typer.Option(..., help="its alphabet, comma-separated (Crafter skills and events "
                                                     "such as is_night: `regula info`)"),
               teacher: str = typer.Option("formula", help="who answers the membership queries: formula (the "
                                                           "clauses of --formula: a stand-in for a model's one "
                                                           "answer) | openai (the LLM of params.yaml, asked per word)"),
               formula: Optional[list[str]] = typer.Option(None, help="an LTLf clause for the formula teacher "
                                                                      "(repeatable; all must hold)"),
               log: Optional[list[Path]] = typer.Option(None, help="episode logs or `regula play` recordings (a "
                                                                   "file or a folder of episode_*.jsonl; "
                                                                   "repeatable) shown as words to mark wrong"),
               out: Path = typer.Option(Path("data/specs"), help="where the DFA and its EQ cache are written",
                                        file_okay=False),
               replay: bool = typer.Option(False, "--replay", help="no person: every equivalence answer from the "
                                                                   "EQ cache (also without a terminal)"),
               person_formula: Optional[list[str]] = typer.Option(
                   None, help="no person either: a stand-in who means these LTLf clauses (repeatable) answers "
                              "each new hypothesis with its shortest wrong word, recorded with `by`"),
               params_file: Path = typer.Option(Path("params.yaml"), "--params", help="for --teacher openai"),
               max_queries: int = typer.Option(5_000, **COUNT), max_rounds: int = typer.Option(50, **COUNT),
               svg: bool = typer.Option(True, help="draw the SVG too (needs Graphviz's dot)")):
    """Learn a specification as a DFA: the teacher answers membership queries, you answer each
    hypothesis (ok, a word it gets wrong, or a recorded trajectory it judges wrong); every
    answer is kept in OUT/NAME.eq.jsonl, so the run replays without you."""
    import re

    from regula.errors import RegulaError, UnknownNameError

    from .learn import learn_spec
    from .person import EqCache, PersonOracle
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise RegulaError(f"--name must be letters, digits, _ and -: {name!r}")
    if teacher not in TEACHERS:
        raise UnknownNameError("spec teacher", teacher, TEACHERS)
    alphabet = tuple(dict.fromkeys(x.strip() for x in letters.split(",") if x.strip()))
    if not alphabet:
        raise RegulaError("--letters names no letter")
    if teacher == "formula":
        if not formula:
            raise RegulaError("--teacher formula needs at least one --formula clause")
        from regula.automata.teachers import NoisyTeacher, formula_dfa
        target = formula_dfa(formula, alphabet)
        asker = NoisyTeacher(target.accepts, 0.0)
    else:
        asker = _llm_teacher(params_file, instruction)
    trajectories = _trajectories(log or [], alphabet)
    cache = EqCache(out / f"{name}.eq.jsonl")
    if person_formula and not replay:
        from .person import FormulaPerson
        stand_in = FormulaPerson(person_formula, alphabet)
        person = PersonOracle(alphabet, cache, ask=stand_in.ask, say=lambda line: None, show=stand_in.show,
                              by=stand_in.name)
    else:
        interactive = not replay and sys.stdin.isatty()
        person = PersonOracle(alphabet, cache, ask=input if interactive else None, say=typer.echo,
                              trajectories=trajectories)
    result = learn_spec(name, instruction, alphabet, asker, person, out, max_queries, max_rounds, svg)
    typer.echo(f"{name}: {result.dfa.size} states, {result.rounds} equivalence rounds, {result.queries} "
               f"teacher askings, {result.person_answers} new answers from "
               f"{'the stand-in person' if person.by else 'you'} "
               f"(EQ cache: {person.cache.path}); " + ", ".join(map(str, result.files)))


def _llm_teacher(params_file: Path, instruction: str):
    from regula.automata.teachers import LLMTeacher
    from regula.cli_common import load_params
    from regula.llm import Accounting, LLMClient, LLMConfig
    params = load_params(params_file, {})
    llm = LLMConfig.from_params(params.llm, cache_dir=str(Path("data/cache/llm")))
    return LLMTeacher(LLMClient(llm, "specs", Accounting()), instruction)


def _trajectories(logs: list[Path], alphabet) -> list[tuple[str, tuple]]:
    from .logs import log_words
    return [(path.name, word) for path, word in log_words(logs, alphabet)] if logs else []


def register(app: typer.Typer, bench: typer.Typer) -> None:
    app.add_typer(spec_app, name="spec")
