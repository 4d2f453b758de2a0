"""The `report` stage: reports/report.md, its figures and reports/report.html (the same report on
one page that opens offline, pictures embedded), from tracked files only.

It reads each stage's record (metrics/<stage>_detail.json), tables (metrics/*.csv) and the
papers' tables (papers.yaml), never the headline files (metrics/<stage>.json, for
`dvc exp show`), and it imports no system package: `SECTIONS` names where each section is,
imported on first use. A system's section lives in its own package (`regula.<system>.report`),
the shared ones in `sections/`; each reads its stage's artifacts only, through the helpers here
(`tables`, `papers`, `html`), which import no section. A stage that has not run leaves its
section out (the demonstrations' is needed).
"""
from __future__ import annotations

import importlib
from functools import lru_cache
from typing import Callable

from regula.errors import RegulaError
from regula.io import write_atomic
from regula.stages import Paths, Work

from . import html

# The report's sections, in order: `module:function`, the function of the paths giving markdown
# lines. A new system adds its line here.
SECTIONS = (
    "regula.report.sections.demos:section",
    "regula.report.sections.minihack:section",
    "regula.report.sections.minihack:shield",
    "regula.report.sections.minihack:dive",
    "regula.report.sections.minihack:cedar",
    "regula.report.sections.feedback:section",
    "regula.report.sections.laws:section",
    "regula.report.sections.automata_eval:section",
    "regula.report.sections.specs:section",
    "regula.ltlcrit.report:section",
    "regula.dive.report:section",
    "regula.report.sections.attribution:section",
    "regula.report.sections.readers:section",
    "regula.report.sections.census:section",
    "regula.cedar.report:section",
    "regula.cedar.report_skills:section",
    "regula.cedar.report_household:section",
    "regula.e2cl.report:section",
    "regula.report.sections.llm_runs:section",
    "regula.report.sections.demos:reference",
)


def resolve(entry: str) -> Callable[[Paths], list[str]]:
    """The function a `SECTIONS` entry names, its module imported now."""
    module, _, name = entry.partition(":")
    if not module or not name.isidentifier():
        raise RegulaError(f"report section {entry!r}: write it as 'module:function'")
    try:
        found = getattr(importlib.import_module(module), name, None)
    except ModuleNotFoundError as e:
        if e.name is None or not (module == e.name or module.startswith(e.name + ".")):
            raise  # the module exists; something it imports does not
        raise RegulaError(f"report section {entry!r}: no module {module}") from None
    if not callable(found):
        raise RegulaError(f"report section {entry!r}: {module} has no function {name}")
    return found


# (not `sections`: importing the subpackage `sections` sets that name on this package)
@lru_cache(maxsize=1)
def section_functions() -> tuple[Callable[[Paths], list[str]], ...]:
    """`SECTIONS` resolved, in order (on first use, so importing the report imports no section)."""
    return tuple(resolve(entry) for entry in SECTIONS)


def build_report(paths: Paths, title: str = "regula report"):
    """reports/report.md, its PNG figures and reports/report.html; returns report.md's path."""
    paths.reports.mkdir(parents=True, exist_ok=True)
    lines = [f"# {title}", "", "Built by `dvc repro` from tracked files only (`data/demos/`, `metrics/`).", ""]
    for section in section_functions():
        lines += section(paths)
    path = write_atomic(paths.reports / "report.md", "\n".join(lines))
    html.write(path)
    return path


def run(params, paths: Paths, work: Work) -> dict:
    """The `report` stage. It writes no metrics file, so its headline is empty."""
    path = build_report(paths, params.report.title)
    work.progress(f"report: {path}")
    return {}
