"""A project's DVC experiments, each set beside its baseline: the params it changed and the
headline metrics that moved (`regula exp show`), in one screen where `dvc exp show` prints
every param, metric and dependency (hundreds of columns here).

DVC keeps an experiment as a git ref, `refs/exps/<baseline sha as 2/38>/<name>`; it is read
with git and compared with `regula.diff` (params by key, metrics by value within a tolerance),
so there is no DVC import and no checkout. A stage's headline metrics are its `metrics:` files
in dvc.yaml; the rest of metrics/ (records, tables) is `regula diff`'s.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import yaml

from .diff import diff_revisions
from .diff.revisions import EXPS, _git, git_root, open_revision
from .diff.tables import TOLERANCE
from .errors import DataError

_REF = re.compile(r"^refs/exps/(?P<a>[0-9a-f]{2})/(?P<b>[0-9a-f]{38})/(?P<name>[^/]+)$")


def headline_files(root: Path) -> list[str]:
    """The `metrics:` files of dvc.yaml's stages, in the order they are declared."""
    path = root / "dvc.yaml"
    try:
        pipeline = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise DataError(f"{path} not found: `regula exp show` reads the pipeline's metrics files from it") from None
    except yaml.YAMLError as exc:
        raise DataError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    out = []
    for stage in (pipeline.get("stages") or {}).values():
        for entry in stage.get("metrics") or []:
            out += [entry] if isinstance(entry, str) else list(entry)
    return list(dict.fromkeys(out))


def listed(root: Path) -> list[dict]:
    """Every experiment: name, ref, baseline commit, commit, creation time (UTC), oldest first."""
    fmt = "%(refname)%09%(objectname)%09%(committerdate:unix)"
    out = []
    for line in _git(root, "for-each-ref", f"--format={fmt}", EXPS).decode().splitlines():
        ref, sha, stamp = line.split("\t")
        m = _REF.match(ref)
        if m:
            created = datetime.fromtimestamp(int(stamp), timezone.utc).strftime("%Y-%m-%d %H:%M")
            out.append({"name": m["name"], "ref": ref, "baseline": m["a"] + m["b"], "commit": sha,
                        "created": created})
    return sorted(out, key=lambda e: (e["created"], e["name"]))


def _label(row: dict) -> str:
    stem = Path(row["file"]).stem
    return row["key"] if row["key"].startswith(stem) else f"{stem}.{row['key']}"


def compare(root: str | Path = ".", tolerance: float = TOLERANCE) -> dict:
    """{head, experiments: [{name, baseline, created, params: [row], metrics: [row]}]}: each
    experiment against its baseline commit; a metrics row carries `label` (`stage.key`)."""
    root = git_root(Path(root))
    head = _git(root, "rev-parse", "HEAD").decode().strip()
    headline = set(headline_files(root))
    opened: dict = {}
    out = []
    for exp in listed(root):
        if exp["baseline"] not in opened:
            opened[exp["baseline"]] = open_revision(root, exp["baseline"])
        result = diff_revisions(opened[exp["baseline"]], open_revision(root, exp["ref"]), ("params", "metrics"),
                                tolerance=tolerance)
        metrics = [{**r, "label": _label(r)} for r in result["kinds"]["metrics"] if r["file"] in headline]
        out.append({"name": exp["name"], "baseline": exp["baseline"][:7] + (" (HEAD)" if exp["baseline"] == head
                                                                             else ""),
                    "created": exp["created"], "params": result["kinds"]["params"], "metrics": metrics,
                    "unavailable": result["unavailable"]})
    return {"head": head[:7], "experiments": out}


def _value(v) -> str:
    return "-" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)


def change(row: dict, key: str = "key") -> str:
    return f"{row.get('label', row[key])}: {_value(row['old'])} → {_value(row['new'])}"


def markdown(result: dict) -> str:
    lines = ["| experiment | baseline | created (UTC) | params changed | headline metrics changed |",
             "|---|---|---|---|---|"]
    for e in result["experiments"]:
        cells = [e["name"], e["baseline"], e["created"],
                 "<br>".join(change(r) for r in e["params"]) or "none",
                 "<br>".join(change(r) for r in e["metrics"]) or "none"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    if not result["experiments"]:
        return "No experiments (`regula exp run` makes one)."
    return "\n".join(lines)


def table(result: dict):
    """A rich Table: one row per experiment, its changes one per line in two columns."""
    from rich.table import Table

    t = Table(title=f"experiments (HEAD {result['head']})", show_lines=True)
    for column in ("experiment", "baseline", "created (UTC)", "params changed", "headline metrics changed"):
        t.add_column(column, overflow="fold")
    for e in result["experiments"]:
        t.add_row(e["name"], e["baseline"], e["created"], "\n".join(change(r) for r in e["params"]) or "none",
                  "\n".join(change(r) for r in e["metrics"]) or "none")
    return t
