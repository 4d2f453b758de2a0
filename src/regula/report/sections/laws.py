"""The laws stage's section: Crafter's hard laws and how the demonstrations fared under them."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from regula.stages import Paths

from ..tables import md, read_detail


def section(paths: Paths) -> list[str]:
    metrics_dir, laws_dir = paths.metrics, paths.data / "laws" / "crafter"
    m = read_detail(metrics_dir, "laws")
    law_file = Path(laws_dir) / "crafter_hard.yaml"
    if m is None or not law_file.exists():
        return []
    import yaml
    laws = yaml.safe_load(law_file.read_text())["laws"]
    table = pd.DataFrame([{"law": f"`{law['formula']}`", "why": law.get("explanation", ""),
                           "blocked in demos": m["blocks_per_law"].get(law.get("name") or law["formula"], 0)}
                          for law in laws])
    return ["## Laws: Crafter's preconditions as LTLf hard laws", "",
            f"{m['laws']} laws derived from data.yaml (`data/laws/crafter/`, automata as DOT beside them), "
            f"monitored with the `{m['backend']}` backend. Replayed through the shield, the "
            f"demonstrations' {m['steps']} skill choices were blocked {m['blocked']} times; "
            f"{m['blocked_but_succeeded']} blocked choices had in fact succeeded (a wrong law would show here).",
            "", md(table), ""]
