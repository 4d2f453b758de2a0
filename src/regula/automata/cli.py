"""`regula bench learning`: the `automata_eval` stage's learners, timed; `regula dfa`: skills
and specifications composed and checked (`compose.py`)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from regula.cli_common import COUNT, SEED
from regula.schema import MAX_COUNT

# Issue #40's table: two sizes, each noiseless and at three noisy conditions.
GRID_SIZES = ((30, 10), (50, 10))
GRID_CONDITIONS = ((0.0, "persistent"), (0.1, "persistent"), (0.1, "independent"), (0.2, "persistent"))


def _odd(value: int) -> int:
    if value < 1 or value % 2 == 0:
        raise typer.BadParameter(f"must be odd and >= 1 (a majority vote never ties), got {value}")
    return value


def bench_learning(states: int = typer.Option(30, **COUNT), letters: int = typer.Option(10, **COUNT),
                   targets: int = typer.Option(10, **COUNT),
                   first_target: int = typer.Option(1000, **SEED, help="the targets' first generator seed (0-9: dev)"),
                   noise: float = typer.Option(0.1, help="teacher error rate"),
                   kind: str = typer.Option("persistent", help="independent | persistent"),
                   grid: bool = typer.Option(False, "--grid", help="issue #40's grid: 30x10 and 50x10, noiseless, "
                                             "10% persistent, 10% independent, 20% persistent (--states, --letters, "
                                             "--noise and --kind unused)"),
                   oracle: list[str] = typer.Option(["exact", "batch"], help="exact | batch (repeatable)"),
                   votes: int = typer.Option(5, help="askings per word under independent noise (odd; regula)",
                                             callback=_odd),
                   max_queries: int = typer.Option(200_000, **COUNT), max_rounds: int = typer.Option(1000, **COUNT),
                   witnesses: int = typer.Option(11, min=0, max=MAX_COUNT,
                                                 help="regula's witness check: words per answer, 0 off"),
                   method: list[str] = typer.Option(["regula", "regula_adaptive", "aalpy_lstar", "aalpy_kv"],
                                                    help="regula | regula_adaptive | aalpy_lstar | aalpy_kv "
                                                         "(repeatable)")):
    """Exact recovery of random DFAs, noiseless and noisy: regula's learner told the noise kind,
    its adaptive mode told nothing, AALpy's L* and KV (each word asked once, no repair); median
    teacher askings and equivalence rounds, each also as a multiple of the same method's
    noiseless median (`queries_x`, `rounds_x`), and the median wall time per cell (`seconds`:
    measured here, never in an artifact). Then the same as a grid, a row per method."""
    from .evaluate import METHODS, evaluate, summary
    from .evaluate import grid as as_grid
    bad = [m for m in method if m not in METHODS]
    if bad:
        from regula.errors import UnknownNameError
        raise UnknownNameError("learning method", bad[0], METHODS)
    sizes = GRID_SIZES if grid else ((states, letters),)
    conditions = GRID_CONDITIONS if grid else ((0.0, kind), (noise, kind))
    table = evaluate(sizes=sizes, conditions=conditions, oracles=tuple(oracle), targets=targets,
                     first_target=first_target, methods=tuple(method), votes=votes, max_queries=max_queries,
                     max_rounds=max_rounds, witnesses=witnesses)
    summ = summary(table, seconds=True)
    typer.echo(summ.to_string(index=False))
    typer.echo("")
    typer.echo(as_grid(summ).to_string())


dfa_app = typer.Typer(no_args_is_help=True, help="Compose skill and specification DFAs (JSON as the stages "
                                                   "write them) and check words against specifications.")
DFA_FILE = typer.Argument(..., help="a DFA's JSON (e.g. data/cedar_skills/skills/<skill>.json)")


def _write(dfa, out: Path, title: str, svg: bool) -> None:
    from regula.errors import RegulaError
    if out.suffix != ".json":
        raise RegulaError(f"--out must name a .json file (the DOT and SVG go beside it), got {out}")
    out.parent.mkdir(parents=True, exist_ok=True)
    written = [dfa.save(out)] + dfa.save_dot(out.with_suffix(".dot"), title.replace('"', "'"), svg=svg)
    typer.echo(f"{dfa.size} states over {len(dfa.alphabet)} letters: " + ", ".join(map(str, written)))


@dfa_app.command("comply")
def dfa_comply(skill: Path = DFA_FILE, spec: Path = DFA_FILE,
               out: Path = typer.Option(..., help="the compliant policy's JSON (DOT and SVG beside it)"),
               svg: bool = typer.Option(True, help="draw the SVG too (needs Graphviz's dot)")):
    """A compliant policy: the skill's words the specification accepts (alphabets merged).

    Each automaton reads the other's letters past; CEDAR's verifier makes one on a violation."""
    from .compose import comply
    from .dfa import DFA
    _write(comply(DFA.load(skill), DFA.load(spec)), out, f"{skill.stem} complying with {spec.stem}", svg)


@dfa_app.command("chain")
def dfa_chain(first: Path = DFA_FILE, second: Path = DFA_FILE,
              out: Path = typer.Option(..., help="the chain's JSON (DOT and SVG beside it)"),
              svg: bool = typer.Option(True, help="draw the SVG too (needs Graphviz's dot)")):
    """Skills chained: a word of the first, then one of the second (alphabets merged)."""
    from .compose import chain
    from .dfa import DFA
    _write(chain(DFA.load(first), DFA.load(second)), out, f"{first.stem} then {second.stem}", svg)


@dfa_app.command("formula")
def dfa_formula(clauses: list[str] = typer.Argument(..., help="LTLf clauses in the law syntax (docs/logic.md), "
                                                         "all of which must hold, e.g. 'F collect_diamond'"),
                letters: str = typer.Option(..., help="the alphabet, comma-separated: each letter is one action "
                                                      "of a word"),
                out: Path = typer.Option(..., help="the specification's JSON (DOT and SVG beside it)"),
                svg: bool = typer.Option(True, help="draw the SVG too (needs Graphviz's dot)")):
    """A specification given as a formula: its minimal DFA over the letters (finite words, one
    action a step; the empty word is rejected), to compare with a learned one (`equal`)."""
    from regula.errors import RegulaError

    from .teachers import formula_dfa
    alphabet = tuple(dict.fromkeys(x.strip() for x in letters.split(",") if x.strip()))
    if not alphabet:
        raise RegulaError("--letters names no letter")
    _write(formula_dfa(clauses, alphabet), out, " & ".join(clauses), svg)


@dfa_app.command("check")
def dfa_check(word: Optional[str] = typer.Argument(None, help="letters separated by commas, e.g. "
                                                           "is_night,sleep,collect_iron (or --log)"),
              spec: list[Path] = typer.Option(..., help="a specification DFA's JSON (repeatable; named by its "
                                                        "file's stem)"),
              log: Optional[list[Path]] = typer.Option(None, help="an episode log (JSON lines, as the stages write "
                                                                  "them) or a folder of them (episode_*.jsonl; "
                                                                  "repeatable): its word over each spec's letters "
                                                                  "is checked")):
    """Which specifications a word, or each logged episode, violates, and at which letter; exit
    1 if any. A log's word over a spec's letters is CEDAR's extraction (`cedar/words.py`): each
    succeeded skill that is a letter, then each event letter (`is_night`) as it becomes true."""
    from regula.errors import RegulaError

    from .compose import check
    from .dfa import DFA
    if (word is None) == (not log):
        raise RegulaError("give a word or --log episode files (one of the two)")
    specs = {p.stem: DFA.load(p) for p in spec}
    if word is not None:
        letters = tuple(x.strip() for x in word.split(",") if x.strip())
        words = {"": {name: letters for name in specs}}
    else:
        words = _log_words(log, specs)
    violated = 0
    for where, per_spec in words.items():
        found = [v for name, w in per_spec.items() for v in check(w, {name: specs[name]})]
        violated += bool(found)
        for v in found:
            typer.echo(f"{where}: {v}" if where else str(v))
    if word is not None:
        typer.echo(f"{len(specs)} specification(s) checked: the word violates "
                   f"{len(found) if violated else 'none'}")
    else:
        typer.echo(f"{len(specs)} specification(s) checked: {violated} of {len(words)} episodes violate one or more")
    raise typer.Exit(1 if violated else 0)


def _log_words(logs: list[Path], specs: dict) -> dict:
    """{log: {spec: the log's word over the spec's letters}}."""
    from regula.specs.logs import log_words
    out: dict = {}
    for name, dfa in specs.items():
        for path, word in log_words(logs, dfa.alphabet):
            out.setdefault(str(path), {})[name] = word
    return out


@dfa_app.command("equal")
def dfa_equal(first: Path = DFA_FILE, second: Path = DFA_FILE,
              longest: int = typer.Option(8, min=0, max=20, help="count differing words up to this length")):
    """Whether two DFAs accept the same words; if not, a shortest word in each difference and how
    many words up to --longest they disagree on; exit 1 if they differ. Over different alphabets
    both are compared on the merged one, each reading the other's letters past."""
    from .compose import lift, merged_alphabet
    from .dfa import DFA
    from .ops import language_diff
    a, b = DFA.load(first), DFA.load(second)
    sigma = merged_alphabet(a, b)
    diff = language_diff(lift(a, sigma), lift(b, sigma), longest)
    if diff["equal"]:
        typer.echo("equal: the same language")
        raise typer.Exit(0)
    for key, name in (("only_in_first", first), ("only_in_second", second)):
        if diff[key] is not None:
            typer.echo(f"only {name} accepts: {', '.join(diff[key]) or '(the empty word)'}")
    typer.echo(f"{diff['differing_words']} words of length <= {longest} are accepted by exactly one")
    raise typer.Exit(1)


def register(app: typer.Typer, bench: typer.Typer) -> None:
    bench.command("learning")(bench_learning)
    app.add_typer(dfa_app, name="dfa")
