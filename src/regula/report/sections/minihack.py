"""The minihack_demos stage's section: the scripted expert's demonstrations on MiniHack."""
from __future__ import annotations

import pandas as pd

from regula.stages import Paths

from ..tables import md, read_detail


def section(paths: Paths) -> list[str]:
    m = read_detail(paths.metrics, "minihack_demos")
    if not m or not m["demos"]:
        return []
    table = pd.DataFrame([{
        "task": r["task"], "seed": r["seed"], "skills": r["skills"], "steps": r["steps"],
        "achievements": f"{len(r['achievements'])}/{r['of']}: {', '.join(r['achievements'])}",
        "success": "yes" if r["success"] else f"no ({r['end']})"} for r in m["demos"]])
    lo, hi = m["eval_seeds"]
    return ["## MiniHack demonstrations (DiVE §4.2, issue 38)", "",
            "One scripted demonstration per task, as the DiVE paper gives its learner: the adapter's expert "
            "(`regula.envs.minihack`, docs/minihack.md) plays it in skills, recorded in the common episode log "
            f"(`data/minihack/demos/<task>/`). Seed{'s' if len(m['demo_seeds']) > 1 else ''} "
            f"{', '.join(map(str, m['demo_seeds']))}: apart from the "
            f"held-out seeds {lo}-{hi - 1} the MiniHack tables report on. Steps are primitive actions, "
            "prompts' answers included.", "", md(table), ""]
