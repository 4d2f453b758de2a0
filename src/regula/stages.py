"""A pipeline stage, as the library sees it: a module with `run(params, paths, work) -> metrics`.

Each system's stage module (`STAGES` below) defines:

* `run(params, paths, work)`: does the stage's work, writes its outputs under `paths`, and
  returns its headline: exactly what it writes to `metrics/<stage>.json` (`write_metrics`),
  which is what `dvc exp show` and the flow run's Prefect artifact show;
* optionally `prepare(params, paths)`: what must hold or exist before any work starts (a
  backend that must import here, a cache folder DVC expects), so a mistake stops the stage
  before Prefect even starts.

`work` decides how the stage's units of work run and where its progress goes. `SerialWork`
runs them here, one after another; the Prefect layer (`flows/`, `tasks/`) supplies one that
runs each unit as a task, cached on its inputs and the code where the stage asks for it. The
library never imports Prefect or DVC.

Adding a stage: its module with `run`, a line in `STAGES`, its params section, its dvc.yaml
entry (`python -m flows <name>`).
"""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Protocol, TypeVar

from .errors import UnknownNameError
from .io import write_json

# stage name -> the module defining its `run` (imported on first use, like regula.envs' adapters)
STAGES = {
    "demos": "regula.demos",
    "feedback": "regula.feedback",
    "laws": "regula.laws",
    "automata_eval": "regula.automata.stage",
    "ltlcrit": "regula.ltlcrit.stage",
    "dive": "regula.dive.stage",
    "report": "regula.report",
}

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Paths:
    """Where a stage reads and writes, under the project root."""

    root: Path

    @property
    def data(self) -> Path:
        return Path(self.root) / "data"

    @property
    def metrics(self) -> Path:
        return Path(self.root) / "metrics"

    @property
    def reports(self) -> Path:
        return Path(self.root) / "reports"

    def llm_cache(self, params: dict) -> Path:
        """The LLM answer cache (`llm.cache_dir`, one folder per stage beneath it)."""
        return Path(self.root) / params["llm"]["cache_dir"]


class Work(Protocol):
    def map(self, fn: Callable[[T], R], items: Iterable[T], *, name: str,
            label: Callable[[T], str] | None = None, cache: bool = False) -> Iterator[R]:
        """`fn` over `items`, each a unit of work named `name` (and `label(item)`); results in
        the order of `items`, each as soon as it and those before it are done. `cache`: a
        unit whose inputs (the item's value, never a path) and code are unchanged may return
        its earlier result; `fn` must then be a module-level function (the cache is keyed on
        its name), as it must for a stage that runs units in other processes (`workers`)."""

    def progress(self, line: str) -> None:
        """One line of progress, for the person watching."""


class SerialWork:
    """Every unit here, in order; progress lines to stderr (or to `progress`)."""

    def __init__(self, progress: Callable[[str], None] | None = None):
        self._progress = progress

    def map(self, fn, items, *, name: str, label=None, cache: bool = False):
        for item in items:
            yield fn(item)

    def progress(self, line: str) -> None:
        if self._progress is not None:
            self._progress(line)
        else:
            print(line, file=sys.stderr, flush=True)


def names() -> list[str]:
    return list(STAGES)


def get(name: str):
    """The stage's module (it has `run`, maybe `prepare`, `workers`)."""
    if name not in STAGES:
        raise UnknownNameError("stage", name, STAGES)
    return importlib.import_module(STAGES[name])


def metrics_path(metrics_dir: Path, name: str) -> Path:
    """`metrics/<stage>.json`: the stage's headline, a DVC metrics file."""
    return Path(metrics_dir) / f"{name}.json"


def detail_path(metrics_dir: Path, name: str) -> Path:
    """`metrics/<stage>_detail.json`: the stage's record that is not a table, a plain DVC output
    (cache: false, kept in git) that the report reads."""
    return Path(metrics_dir) / f"{name}_detail.json"


def check_headline(headline: dict) -> dict:
    """A headline is flat: a name and a number (or None where there is none, such as a mean over
    no successes) per entry, so each entry is one column of `dvc exp show`."""
    for key, value in headline.items():
        if not isinstance(key, str) or isinstance(value, bool) or not (value is None or isinstance(value, (int, float))):
            raise TypeError(f"headline entry {key!r}: {value!r} is not a number")
    return headline


def write_metrics(metrics_dir: Path, name: str, headline: dict, detail: dict | None = None) -> dict:
    """A stage's metrics: `metrics/<stage>.json` the headline (a few numbers a reader compares
    across experiments), `metrics/<stage>_detail.json` the rest of its record that is not a table
    (tables are CSV files of their own, declared as DVC plots). The detail is the whole record
    the headline was picked from, so the report reads one file per stage. Returns the headline:
    what `run` returns."""
    write_json(metrics_path(metrics_dir, name), check_headline(headline))
    if detail is not None:
        write_json(detail_path(metrics_dir, name), detail)
    return headline


def one(work: Work, fn: Callable[[], R], *, name: str) -> R:
    """A single unit of work (not cached: `fn` is a closure, not a value to key a cache on)."""
    return next(iter(work.map(lambda _: fn(), [None], name=name)))


def execute(name: str, params: dict, paths: Paths, work: Work | None = None) -> dict:
    """A stage here, without Prefect or DVC (what `regula ltlcrit` and `regula dive` do)."""
    module = get(name)
    if hasattr(module, "prepare"):
        module.prepare(params, paths)
    return module.run(params, paths, work or SerialWork())
