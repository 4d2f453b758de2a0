"""Metrics files hold headlines only, every table is a plot with its axes and series, and
`dvc plots show` writes a page that loads Vega from local files (no network)."""
from __future__ import annotations

import csv
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from project_copy import make_project, project_env, run

ROOT = Path(__file__).resolve().parent.parent
DVC = yaml.safe_load((ROOT / "dvc.yaml").read_text())
STAGES = DVC["stages"]
PLOTS = DVC["plots"]
MAX_METRIC_COLUMNS = 72  # what `dvc exp show` shows of the metrics files, all stages together (the _llm twins: 15; CEDAR: 8; E2CL: 6;
# minihack_demos: 1, its primitive steps moved to its detail to pay for minihack_shield's 1; demos: 5, its episode
# count moved to its detail to pay for minihack_dive's 1)
VEGA = ROOT / ".tools" / "vega"
VEGA_FILES = ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js")
BUILTIN_TEMPLATES = {"linear", "simple", "scatter", "scatter_jitter", "smooth", "confusion", "confusion_normalized",
                     "bar_horizontal", "bar_horizontal_sorted"}
# The custom templates (.dvc/plots/<name>.json) draw one series per value of a column.


def _path(entry) -> str:
    return next(iter(entry)) if isinstance(entry, dict) else entry


def _options(entry) -> dict:
    return next(iter(entry.values())) or {} if isinstance(entry, dict) else {}


def declared(kind: str) -> dict[str, dict]:
    """Stage-level `metrics` or `outs`: path -> its options."""
    return {_path(e): _options(e) for s in STAGES.values() for e in s.get(kind, []) or []}


def leaves(obj) -> list:
    if isinstance(obj, dict):
        return [leaf for v in obj.values() for leaf in leaves(v)]
    if isinstance(obj, list):
        return [leaf for v in obj for leaf in leaves(v)]
    return [obj]


def flat_keys(obj, prefix="") -> list[str]:
    if isinstance(obj, dict):
        return [k for key, v in obj.items() for k in flat_keys(v, f"{prefix}{key}.")]
    return [prefix.rstrip(".")]


def definitions() -> dict[str, dict]:
    """Top-level plot definitions that draw tables: id -> props (image plots are plain paths)."""
    return {_path(e): _options(e) for e in PLOTS if isinstance(e, dict)}


def images() -> list[str]:
    return [e for e in PLOTS if isinstance(e, str)]


def header(path: str) -> list[str]:
    with open(ROOT / path, newline="") as fh:
        return next(csv.reader(fh))


def test_metrics_files_hold_at_most_50_numbers():
    """`dvc exp show` shows one column per leaf of the metrics files: a stage's headline only."""
    metrics = declared("metrics")
    on_disk = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "metrics").glob("*.json")
                     if not p.name.endswith("_detail.json"))
    assert sorted(metrics) == on_disk, "every metrics/<stage>.json is a DVC metrics file, and only those"
    values = {path: json.loads((ROOT / path).read_text()) for path in metrics}
    numbers = [leaf for v in values.values() for leaf in leaves(v)]
    assert len(numbers) <= MAX_METRIC_COLUMNS, f"{len(numbers)} metric columns: move detail out of metrics/*.json"
    assert all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in numbers)
    names = [k for v in values.values() for k in flat_keys(v)]
    assert len(names) == len(set(names)), "a name in two metrics files: dvc exp show would prefix it with the file"


def test_details_and_tables_are_outputs_kept_in_git():
    """metrics/<stage>_detail.json and metrics/*.csv: plain outputs, not cached by DVC (git keeps
    them), never metrics (`dvc exp show` would make a column of every number in them)."""
    outs = declared("outs")
    for path in sorted((ROOT / "metrics").glob("*")):
        rel = path.relative_to(ROOT).as_posix()
        if path.name.endswith("_detail.json") or path.suffix == ".csv":
            assert outs.get(rel, {}).get("cache") is False, f"{rel}: an out with cache: false"
    for stage, s in STAGES.items():
        assert not s.get("plots"), f"stage {stage!r}: tables are outs; the top-level `plots:` draws them"


def test_every_plot_declares_its_axes_and_series():
    tables = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "metrics").glob("*.csv"))
    plotted = set()
    for plot_id, props in definitions().items():
        assert isinstance(props.get("x"), str) and isinstance(props.get("y"), dict), f"{plot_id}: x and y"
        assert props.get("title"), f"{plot_id}: a title"
        template = props.get("template")
        custom = ROOT / ".dvc" / "plots" / f"{template}.json"
        assert template in BUILTIN_TEMPLATES or custom.exists(), f"{plot_id}: template {template!r}"
        for table, ys in props["y"].items():
            plotted.add(table)
            columns = header(table)
            for y in [ys] if isinstance(ys, str) else ys:
                assert y in columns, f"{plot_id}: {table} has no column {y!r}"
            assert props["x"] in columns, f"{plot_id}: {table} has no column {props['x']!r}"
            if custom.exists():  # its series: a column of the table, one line or bar group per value
                encoding = json.loads(custom.read_text())["encoding"]
                series = encoding["color"]["field"]
                assert series in columns, f"{plot_id}: {template} colours by {series!r}, not a column of {table}"
    assert sorted(plotted) == tables, "every table in metrics/ is plotted"
    series = {plot_id: json.loads((ROOT / ".dvc" / "plots" / f"{p['template']}.json").read_text())["encoding"]["color"]["field"]
              for plot_id, p in definitions().items() if p["template"] not in BUILTIN_TEMPLATES}
    assert series == {"automata_recovery": "method", "ltlcrit_success_rate": "actor", "ltlcrit_critic_laws": "actor",
                      "ltlcrit_fallback_share": "actor", "dive_agents": "condition", "ltlcrit_llm_success_rate": "actor", "dive_llm_agents": "condition",
                      "e2cl_sizes": "condition", "specs_studies_health": "agent", "specs_studies_rest": "agent"}


def test_the_report_figures_are_image_plots_and_outputs():
    report_outs = [_path(e) for e in STAGES["report"]["outs"]]
    pngs = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "reports").glob("*.png"))
    assert sorted(images()) == pngs
    assert sorted(report_outs) == sorted(pngs + ["reports/report.md", "reports/report.html"])


class _Attributes(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str, str]] = []  # (tag, attribute, value)

    def handle_starttag(self, tag, attrs):
        self.found += [(tag, k, v) for k, v in attrs if k in ("src", "href") and v is not None]


def test_dvc_plots_show_writes_a_page_that_loads_nothing_remote(tmp_path):
    """In a copy of the project with the committed tables and figures, `dvc plots show` writes
    dvc_plots/index.html: no src or href leaves the machine, and the Vega scripts it loads are
    files that exist where the page points (relative to the page)."""
    missing = [f for f in VEGA_FILES if not (VEGA / f).exists()]
    assert not missing, f"{', '.join(missing)} missing in .tools/vega/: run `make install` (npm fetches them)"
    dst = make_project(tmp_path / "project", {})
    for rel in [*(p.relative_to(ROOT) for p in (ROOT / "metrics").glob("*.csv")), *map(Path, images())]:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dst / rel)
    shutil.copytree(VEGA, dst / ".tools" / "vega")
    env = project_env(dst)
    run(["dvc", "plots", "show"], dst, env)
    page = dst / "dvc_plots" / "index.html"
    html = page.read_text()

    parser = _Attributes()
    parser.feed(html)
    remote = [v for _, _, v in parser.found if re.match(r"^\s*([a-z][a-z0-9+.-]*:|//)", v, re.I)]
    assert remote == [], f"the page loads {remote}"
    scripts = [v for tag, k, v in parser.found if tag == "script"]
    assert sorted(Path(s).name for s in scripts) == sorted(VEGA_FILES)
    for src in scripts + [v for tag, _, v in parser.found if tag == "img"]:
        target = (page.parent / src).resolve()
        assert target.is_file() and target.is_relative_to(dst), f"{src} does not resolve from {page}"
    assert len([v for tag, _, v in parser.found if tag == "img"]) == len(images())
    # The only URLs left are the specs' `$schema` names, which Vega-Embed reads and never fetches.
    assert set(re.findall(r"https?://[^\s\"'<>]+", html)) <= {"https://vega.github.io/schema/vega-lite/v5.json"}

    specs = [json.loads(s) for s in re.findall(r"var spec = (\{.*?\});\n", html, re.S)]
    assert len(specs) == len(definitions())
    by_actor = [spec for spec in specs if isinstance(spec.get("encoding", {}).get("color"), dict)
                and spec["encoding"]["color"].get("field") == "actor"]
    for spec in by_actor:  # one series per actor of the table the plot's title names
        table = "ltlcrit_llm.csv" if spec["title"].startswith("ltlcrit_llm") else "ltlcrit.csv"
        with open(ROOT / "metrics" / table, newline="") as fh:
            actors = {row["actor"] for row in csv.DictReader(fh)}
        assert {d["actor"] for d in spec["data"]["values"]} == actors, spec["title"]
    assert len(by_actor) == 4
