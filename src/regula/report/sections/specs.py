"""The specs stage's section: specifications learned with the person's recorded answers."""
from __future__ import annotations

import pandas as pd

from regula.stages import Paths

from ..tables import md, read_detail


def section(paths: Paths) -> list[str]:
    m = read_detail(paths.metrics, "specs")
    if not m or not m["specs"]:
        return []
    table = pd.DataFrame([{
        "spec": r["name"], "instruction": r["instruction"], "letters": ", ".join(r["letters"]),
        "states": r["states"], "person's answers": r["person_answers"], "teacher askings": r["teacher_askings"],
        "= what the person meant": "yes" if r["equals_meant"] else f"no: `{' '.join(r['differs_on']) or 'ε'}`",
        "the teacher alone (no person)": "= meant" if r["teacher_alone_equals_meant"]
        else f"wrong on `{' '.join(r['teacher_alone_differs_on']) or 'ε'}`",
        "demos violating": f"{r['demos_violating']}/{r['demos']}"} for r in m["specs"]])
    return ["## Specifications learned with a person (CEDAR §3.4, A.5)", "",
            "Each specification is learned like a skill: the formula teacher (its clauses in params.yaml's "
            "`specs`, a stand-in for a model's one answer) answers the membership queries, the person's "
            "recorded answers (`data/specs/answers/`, replayed) the equivalence queries. The answers recorded "
            "here are a stand-in person's, who means the `meant` clauses and types each hypothesis's shortest "
            "wrong word (`\"by\"` in each answer says so); the learned DFA is then compared with those clauses, and "
            "so is the teacher's formula alone (the baseline with no person: what the answers added). "
            "DFAs in `data/specs/dfas/` (JSON, DOT, SVG); a demonstration violates a spec when its word over "
            "the spec's letters is rejected.", "", md(table), ""]
