"""The `specs` stage: specifications learned as DFAs like skills (CEDAR §3.4, A.5), replayed.

For each spec of `params.specs.items`: the formula teacher (its `teacher` clauses, compiled by
the logic core) answers the membership queries and the person's recorded answers
(`<specs.answers>/<name>.eq.jsonl`, tracked in git: a person's words are the data here) the
equivalence queries; a hypothesis with no recorded answer stops the stage with one line naming
the file (`regula spec learn ... --out <answers>` records them, in a terminal or with a
stand-in, `--person-formula`). The learned DFA (data/specs/dfas/<name>.json, .dot, .svg) is
compared with what the person meant (`meant`, LTLf: equal, or a shortest word they differ on)
and checked against every demonstration (words over its letters that it rejects). Beside it,
the baseline with no person: whether the teacher's clauses alone are what was meant.

Then the studies (`params.specs.studies`, seed 000 §4.1, Figs. 4 and 5; `study.py`): an agent (a
skill of the cedar_skills stage's library, played again and again; or the explore-and-collect agent)
shielded by a learned spec's DFA against the same agent without it, on seeds.eval's first worlds; per time bin
metrics/specs_studies.csv, totals and per-trial numbers in metrics/specs_detail.json (`studies`).
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from regula import stages
from regula.automata.ops import equivalent
from regula.automata.teachers import NoisyTeacher, formula_dfa
from regula.errors import RegulaError
from regula.stages import Paths, Work

from .learn import learn_spec
from .logs import log_words
from .person import EqCache, PersonOracle

if TYPE_CHECKING:
    from regula.params import Params


def _answers(params: Params, paths: Paths, name: str) -> Path:
    return Path(paths.root) / params.specs.answers / f"{name}.eq.jsonl"


def _library(paths: Paths) -> Path:
    return paths.data / "cedar_skills"


def prepare(params: Params, paths: Paths) -> None:
    if any(study.goal is not None for study in params.specs.studies):
        from regula.cedar.library import Library
        library = Library.load(_library(paths))  # no library: one line naming the stage to run
        for study in params.specs.studies:
            if study.goal is not None:  # the collect agent has none: the environment's skills
                library.skill(study.goal)  # a goal the library lacks: one line naming the skills it has
    for item in params.specs.items:
        path = _answers(params, paths, item.name)
        if not path.exists():
            raise RegulaError(f"specs: no recorded answers for {item.name!r} ({path}): record them with "
                              f"`regula spec learn \"{item.instruction}\" --name {item.name} --letters "
                              f"{','.join(item.letters)} --out {params.specs.answers}` and its teacher's "
                              "--formula clauses")
        formula_dfa(item.teacher, tuple(item.letters))  # a bad clause stops here, before any learning
        formula_dfa(item.meant, tuple(item.letters))


def run(params: Params, paths: Paths, work: Work) -> dict:
    out = paths.data / "specs" / "dfas"
    shutil.rmtree(out, ignore_errors=True)  # a spec no longer listed leaves no file
    out.mkdir(parents=True)
    rows, learned = [], {}
    for item in params.specs.items:
        letters = tuple(item.letters)
        told = formula_dfa(item.teacher, letters)
        teacher = NoisyTeacher(told.accepts, 0.0)
        person = PersonOracle(letters, EqCache(_answers(params, paths, item.name)))  # replay: never asks
        result = learn_spec(item.name, item.instruction, letters, teacher, person, out)
        learned[item.name] = result.dfa
        meant = formula_dfa(item.meant, letters)
        same, witness = equivalent(result.dfa, meant)
        alone, apart = equivalent(told, meant)  # the baseline: the teacher's answer with no person
        words = log_words([paths.data / "demos"], letters)
        rejected = sorted(f.name for f, word in words if not result.dfa.accepts(word))
        rows.append({"name": item.name, "instruction": item.instruction, "letters": list(letters),
                     "states": result.dfa.size, "rounds": result.rounds, "teacher_askings": result.queries,
                     "person_answers": result.rounds, "equals_meant": same,
                     "differs_on": None if same else list(witness),
                     "teacher_alone_equals_meant": alone, "teacher_alone_differs_on": None if alone else list(apart),
                     "demos": len(words), "demos_violating": len(rejected), "violating": rejected})
        work.progress(f"specs: {item.name}: {result.dfa.size} states after {result.rounds} of the person's "
                      f"answers and {result.queries} teacher askings; "
                      f"{'equals' if same else 'differs from'} what the person meant; "
                      f"{len(rejected)} of {len(words)} demonstrations violate it")
    record = {"specs": rows, "studies": _studies(params, paths, work, learned)}
    return stages.write_metrics(paths.metrics, "specs", headline(record), record)


def _studies(params: Params, paths: Paths, work: Work, learned: dict) -> dict:
    """Each study played (`study.run_study`); its bins to metrics/specs_studies.csv, its record returned."""
    from regula.cedar.library import Library
    from regula.io import write_csv

    from .study import budget, run_study
    out, table = {}, []
    library = Library.load(_library(paths)) if any(s.goal is not None for s in params.specs.studies) else None
    for study in params.specs.studies:
        rows, record = run_study(study, params, library, learned[study.spec], budget(params))
        table += [{"study": study.name, **r} for r in rows]
        out[study.name] = record
        a, b = record["agents"]["without"], record["agents"]["with"]
        work.progress(f"specs: study {study.name}: violations {a['violations']} without the spec, {b['violations']} "
                      f"with it ({b['changed']} decisions it changed); diamonds {a['diamonds']} / {b['diamonds']}; "
                      f"objects gained {a['gained']} / {b['gained']}; survived {a['survived']} / {b['survived']} "
                      f"of {study.trials}")
    write_csv(paths.metrics / "specs_studies.csv", table)  # no study: an empty file (a DVC output)
    return out


def headline(record: dict) -> dict:
    """What metrics/specs.json holds: how many specs equal what the person meant (per spec, the
    person's answers, the teacher's askings and the baseline with no person:
    metrics/specs_detail.json; the metrics files keep to 70 numbers, and the household stage took
    the person's answers' place)."""
    return {"specs_equal_to_meant": sum(r["equals_meant"] for r in record["specs"])}
