"""The feedback stage's section: predictions against what happened, and the LLM's queries."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from regula.stages import Paths

from ..tables import llm_table, md, read_detail


def section(paths: Paths) -> list[str]:
    metrics_dir = paths.metrics
    fb = read_detail(metrics_dir, "feedback")
    if fb is None:
        return []
    accounting = fb["llm"]
    who = fb["backend"] + (f" ({fb['model']})" if fb.get("model") else "")
    lines = ["## Feedback prediction (E2CL's feedback model as a probe)", "",
             f"Will a recorded skill succeed? Predicted by `{who}` on {fb['n']} sampled steps of "
             "the demonstrations, scored against what happened.", "",
             md(pd.DataFrame([{k: fb[k] for k in ("n", "accuracy", "precision", "recall",
                                                    "failures_recorded", "failures_predicted")}])), ""]
    if accounting:
        lines += ["LLM queries:", "", md(llm_table(accounting)), ""]
    else:
        lines += ["No LLM was asked (the `rules` backend); set `feedback.backend: openai` and "
                  "`llm.base_url` to ask one.", ""]
    return lines
