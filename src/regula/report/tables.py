"""What every report section uses: markdown tables, number formats, figures, stage records."""
from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on CI machines
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from regula.errors import DataError  # noqa: E402
from regula.stages import detail_path  # noqa: E402


def md(df: pd.DataFrame) -> str:
    """Markdown table without the optional `tabulate` dependency."""
    cols = list(df.columns)
    out = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        out.append("| " + " | ".join("" if pd.isna(v) else str(v) for v in row) + " |")
    return "\n".join(out)


def read_detail(metrics_dir: Path, stage: str) -> dict | None:
    """A stage's record (metrics/<stage>_detail.json), or None when the stage has not run."""
    path = detail_path(metrics_dir, stage)
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a stage record ({exc}); rerun the stage (dvc repro -f {stage})") from None
    if not isinstance(record, dict):
        raise DataError(f"{path}: not a stage record (a JSON object); rerun the stage (dvc repro -f {stage})")
    return record


def read_with_table(metrics_dir: Path, stage: str, table: str) -> tuple[dict, pd.DataFrame] | None:
    """A stage's record and one of its CSV tables (metrics/<table>), or None when either is missing."""
    record, path = read_detail(metrics_dir, stage), Path(metrics_dir) / table
    return (record, pd.read_csv(path)) if record is not None and path.exists() else None


def llm_table(accounting: dict) -> pd.DataFrame:
    """The papers' "LLM queries" columns and what answering cost, per stage and role: which model
    at which endpoint answered in which structured form, questions, HTTP calls (re-asks
    included), answers still unusable after the re-asks (and their share), tokens, model time."""
    rows = [{"stage": stage, "role": role, "model": row["model"], "endpoint": row["endpoint"],
             "structured": row["structured"], "questions": row["questions"], "calls": row["calls"],
             "re-asks": row["reasks"], "unusable": f"{row['unusable']} ({pct(row['unusable'] / row['questions'])})"
             if row["questions"] else "0", "tokens in / out": f"{row['tokens_in']} / {row['tokens_out']}",
             "model time (s)": fmt(row["latency_s"])}
            for stage, roles in sorted(accounting.items()) for role, row in sorted(roles.items())]
    return pd.DataFrame(rows)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of k successes in n (a formula, not worth a dependency)."""
    p, d = k / n, 1 + z * z / n
    centre, half = (p + z * z / (2 * n)) / d, z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / d
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_difference(both: int, first_only: int, second_only: int, neither: int,
                      z: float = 1.96) -> tuple[float, float]:
    """The 95% interval of p1 - p2 for two rates measured on the same units (each unit a success
    of both, of the first only, of the second only, or of neither): Newcombe's (1998) method 10,
    Wilson intervals combined with the pairs' correlation (a formula, as `wilson`)."""
    a, b, c, d = both, first_only, second_only, neither
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    (l1, u1), (l2, u2) = wilson(a + b, n, z), wilson(a + c, n, z)
    den = ((a + b) * (c + d) * (a + c) * (b + d)) ** 0.5
    # the pairs' correlation with Newcombe's correction: ad - bc shrunk by n/2 when positive
    cross = a * d - b * c
    phi = (max(cross - n / 2, 0) if cross > 0 else cross) / den if den else 0.0
    lower = ((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2) ** 0.5
    upper = ((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2) ** 0.5
    return max(-1.0, p1 - p2 - lower), min(1.0, p1 - p2 + upper)


def rate(k: int, n: int) -> str:
    """`k/n (lo-hi%)`: a rate with its count and 95% Wilson interval."""
    if not n:
        return "–"
    lo, hi = wilson(k, n)
    return f"{k}/{n} ({100 * lo:.0f}-{100 * hi:.0f}%)"


def pct(v):
    return "–" if v is None else f"{100 * v:.0f}%"


def fmt(v, digits=1):
    return "–" if v is None else (f"{v:.{digits}f}" if isinstance(v, float) else str(v))


def groups_text(a: dict) -> str:
    """How the score's groups of worlds were made (the demonstrations' and DiVE's sections):
    `n` groups of consecutive worlds, their sizes."""
    sizes = [len(g) for g in np.array_split(range(a["episodes"]), len(a["score_groups"]))]
    size = f"{sizes[0]}" if len(set(sizes)) == 1 else f"{min(sizes)}–{max(sizes)}"
    return f"{len(sizes)} groups of {size} consecutive worlds"


def two_panels(path: Path, draw) -> None:
    """A figure of two side-by-side panels, `draw(left, right)` fills them; saved as PNG."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    draw(left, right)
    left.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
