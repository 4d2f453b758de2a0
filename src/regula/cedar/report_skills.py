"""The skills CEDAR learned, each with a link to its drawn DFA (data/cedar_skills/skills/<skill>.svg,
an output of the cedar_skills stage); report.html shows each drawing in place of its link."""
from __future__ import annotations

import os
from pathlib import Path

from regula.errors import DataError
from regula.report.tables import read_detail
from regula.stages import Paths

STAGE = "cedar_skills"


def drawings(paths: Paths) -> list[tuple[dict, Path]]:
    """Each skill of the stage's record with its drawing, in the order they were learned; none
    when the stage has not run or its outputs are not in this checkout (`dvc pull`)."""
    record, folder = read_detail(paths.metrics, STAGE), paths.data / STAGE / "skills"
    if record is None or not folder.is_dir():
        return []
    out = [(run, folder / f"{run['skill']}.svg") for run in record["skills"]]
    missing = [str(svg) for _, svg in out if not svg.is_file()]
    if missing:
        raise DataError(f"{', '.join(missing)} missing beside metrics/{STAGE}_detail.json; "
                        f"rerun the stage (dvc repro -f {STAGE}) or `dvc checkout {paths.data / STAGE}`")
    return out


def section(paths: Paths) -> list[str]:
    skills = drawings(paths)
    if not skills:
        return []
    items = []
    for run, svg in skills:
        link = Path(os.path.relpath(svg, paths.reports)).as_posix()  # from reports/, where report.md lies
        learned = f"learned in {run['eq_rounds']} EQ rounds" if run["reached"] else "not learned"
        states = f"{run['states']} state" + "s" * (run["states"] != 1)
        items.append(f"- **{run['skill']}** (\"{run['text']}\"): {states}, {learned}; drawing: [{svg.name}]({link})")
    return ["## Learned skill automata", "",
            f"The DFA each skill of `{STAGE}` ended with, as drawn by Graphviz (the stage writes its DOT and JSON "
            "beside it); a skill not learned keeps the one-state DFA it started from.", "", *items, ""]
