"""Who reads the ground truth (Crafter's data.yaml) by design: the list the guard test enforces
(`regula.readers`) and what LTLCrit's critic reads of the hard laws (its stage record). The
unlocks the survival layer, a reader by design, made for each agent: `attribution.py`."""
from __future__ import annotations

import pandas as pd

from regula import readers
from regula.stages import Paths

from ..tables import md, read_detail


def section(paths: Paths) -> list[str]:
    ltlcrit = read_detail(paths.metrics, "ltlcrit")
    allowed = pd.DataFrame([{"part": p.name, "modules (src/regula/)": ", ".join(p.modules), "why": p.why}
                            for p in readers.allowed()])
    forbidden = "; ".join(f"{p.name} ({', '.join(p.modules)})" for p in readers.forbidden())
    lines = ["## Ground truth: who reads data.yaml", "",
             "Crafter's rules (data.yaml) are read by scoring and by the parts below, by design; the learners and "
             f"verifiers may not read them: {forbidden}. The guard test (tests/test_ground_truth_readers.py) "
             "enforces this same list (src/regula/readers.yaml).", "", md(allowed), ""]
    if ltlcrit and ltlcrit.get("critic_reads"):
        lines += ["What LTLCrit's critic reads of the hard laws, through its one declared interface "
                  "(`regula.ltlcrit.hard_facts`):", ""]
        lines += [f"- `{name}`: {why}" for name, why in ltlcrit["critic_reads"].items()] + [""]
    return lines
