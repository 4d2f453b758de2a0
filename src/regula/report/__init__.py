"""The `report` stage: reports/report.md, its figures and reports/report.html (the same report on
one page that opens offline, pictures embedded), from tracked files only.

It reads each stage's record (metrics/<stage>_detail.json), tables (metrics/*.csv) and the
papers' tables (papers.yaml), never the headline files (metrics/<stage>.json, for
`dvc exp show`), and it imports no system package: each stage's section is a module of its
own in `sections/`, reading that stage's artifacts only. A stage that has not run leaves its
section out (the demonstrations' is needed).
"""
from __future__ import annotations

from regula.io import write_atomic
from regula.stages import Paths, Work

from . import html
from .sections import (attribution, automata_eval, cedar, census, demos, dive, e2cl, feedback, laws, llm_runs,
                       ltlcrit, readers, skill_automata)

# The report's sections, in order: each a function of the paths giving markdown lines.
SECTIONS = (demos.section, feedback.section, laws.section, automata_eval.section, ltlcrit.section,
            dive.section, attribution.section, readers.section, census.section, cedar.section, skill_automata.section, e2cl.section,
            llm_runs.section, demos.reference)


def build_report(paths: Paths, title: str = "regula report"):
    """reports/report.md, its PNG figures and reports/report.html; returns report.md's path."""
    paths.reports.mkdir(parents=True, exist_ok=True)
    lines = [f"# {title}", "", "Built by `dvc repro` from tracked files only (`data/demos/`, `metrics/`).", ""]
    for section in SECTIONS:
        lines += section(paths)
    path = write_atomic(paths.reports / "report.md", "\n".join(lines))
    html.write(path)
    return path


def run(params: dict, paths: Paths, work: Work) -> dict:
    """The `report` stage. It writes no metrics file, so its headline is empty."""
    path = build_report(paths, params["report"]["title"])
    work.progress(f"report: {path}")
    return {}
