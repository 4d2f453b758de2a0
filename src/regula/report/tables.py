"""What every report section uses: markdown tables, number formats, figures, stage records."""
from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on CI machines
import matplotlib.pyplot as plt  # noqa: E402
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
    """The papers' "LLM queries" columns: per stage and role, which model at which endpoint
    answered in which structured form, questions and what they cost when asked."""
    rows = [{"stage": stage, "role": role, **{k: row.get(k, "") for k in ("model", "endpoint", "structured")},
             **{k: row[k] for k in ("questions", "unusable", "calls", "reasks", "tokens_in", "tokens_out")}}
            for stage, roles in sorted(accounting.items()) for role, row in sorted(roles.items())]
    return pd.DataFrame(rows)


def pct(v):
    return "–" if v is None else f"{100 * v:.0f}%"


def fmt(v, digits=1):
    return "–" if v is None else (f"{v:.{digits}f}" if isinstance(v, float) else str(v))


def two_panels(path: Path, draw) -> None:
    """A figure of two side-by-side panels, `draw(left, right)` fills them; saved as PNG."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    draw(left, right)
    left.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
