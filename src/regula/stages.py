"""A pipeline stage, as the library sees it: a module with `run(params, paths, work) -> metrics`.

Each system's stage module (`STAGES` below) defines, where `params` is the validated, typed model
(`regula.params.validate`: `params.demos.episodes`, never a dict):

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

A stage in `LLM_STAGES` has a twin, `<name>_llm`: the same module on the params with
`llm_runs.<section>` laid over the stage's params section (`section(name)`: the stage's name, or
`SECTIONS[name]` for a stage that reads a section of another name, as cedar_skills reads `cedar`;
its roles set to the LLM backends, budgets a small local model answers in minutes), writing under
its own name (`Paths.stage`): data/<name>_llm/, metrics/<name>_llm*.json, its caches. Both run in
one `dvc repro`, so the report sets the model's rows beside the stand-ins'.
"""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Protocol, TypeVar

from .errors import UnknownNameError
from .io import write_json
from .params import twin_section

# stage name -> the module defining its `run` (imported on first use, like regula.envs' adapters)
STAGES = {
    "demos": "regula.demos",
    "minihack_demos": "regula.minihack_demos",
    "minihack_shield": "regula.minihack_shield",
    "minihack_dive": "regula.minihack_dive",
    "minihack_cedar": "regula.minihack_cedar",
    "feedback": "regula.feedback",
    "laws": "regula.laws",
    "membership": "regula.membership",
    "automata_eval": "regula.automata.stage",
    "ltlcrit": "regula.ltlcrit.stage",
    "dive": "regula.dive.stage",
    "cedar_skills": "regula.cedar.stage",
    "specs": "regula.specs.stage",  # after cedar_skills: its studies play that stage's library
    "household": "regula.cedar.household_stage",
    "e2cl": "regula.e2cl.stage",
    "report": "regula.report",
}
# stages with an `_llm` twin (see above), in the order the twins run, after the stand-ins
LLM_STAGES = ("feedback", "membership", "ltlcrit", "dive", "cedar_skills", "e2cl")
TWIN = "_llm"
# a stage whose params section is not named after it (every other stage reads `params.<stage>`)
SECTIONS = {"cedar_skills": "cedar", "minihack_demos": "minihack", "minihack_shield": "minihack",
            "minihack_dive": "minihack", "minihack_cedar": "minihack"}

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Paths:
    """Where a stage reads and writes, under the project root; `stage` is the name it writes
    under (a twin's differs from its module's), set by `execute` and the flow."""

    root: Path
    stage: str = ""

    @property
    def data(self) -> Path:
        return Path(self.root) / "data"

    @property
    def metrics(self) -> Path:
        return Path(self.root) / "metrics"

    @property
    def reports(self) -> Path:
        return Path(self.root) / "reports"

    def llm_cache(self, params) -> Path:
        """The LLM answer cache (`llm.cache_dir`, one folder per stage beneath it)."""
        return Path(self.root) / params.llm.cache_dir


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
    """Every stage, in the pipeline's order (the report last)."""
    *first, last = STAGES
    return [*first, *(name + TWIN for name in LLM_STAGES), last]


def base(name: str) -> str:
    """The stage whose module a stage runs (itself, or a twin's original)."""
    if name not in names():
        raise UnknownNameError("stage", name, names())
    return name.removesuffix(TWIN) if name.endswith(TWIN) else name


def get(name: str):
    """The stage's module (it has `run`, maybe `prepare`, `workers`)."""
    return importlib.import_module(STAGES[base(name)])


def section(name: str) -> str:
    """The params section a stage (or a twin, its original) reads: `cedar` for cedar_skills; the
    key of its twin's overlay in `llm_runs`."""
    original = base(name)
    return SECTIONS.get(original, original)


def params_for(name: str, params):
    """The params a stage runs on (the validated model, `regula.params.Params`): for a twin,
    `llm_runs.<section>` over its original's section."""
    if base(name) == name:
        return params
    key = section(name)
    return params.model_copy(update={key: twin_section(params, key)})


def world_seeds(params, worlds: str, count: int) -> tuple:
    """The worlds an evaluation plays: the first `count` seeds of the range `seeds.<worlds>`
    (params.validate checks there are that many)."""
    r = getattr(params.seeds, worlds)
    return tuple(range(r.start, r.start + count))


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


def headline_for(stage: str, headline: dict, compares: Callable[[str], bool]) -> dict:
    """A stage's headline, or a twin's: the entries of its original's that compare models
    (`compares(key)`), named after the twin so that no column of `dvc exp show` repeats another."""
    if base(stage) == stage:
        return headline
    return {f"{stage}_{key}": value for key, value in headline.items() if compares(key)}


def one(work: Work, fn: Callable[[], R], *, name: str) -> R:
    """A single unit of work (not cached: `fn` is a closure, not a value to key a cache on)."""
    return next(iter(work.map(lambda _: fn(), [None], name=name)))


def execute(name: str, params, paths: Paths, work: Work | None = None) -> dict:
    """A stage here, without Prefect or DVC (what `regula ltlcrit` and `regula dive` do)."""
    module, params, paths = get(name), params_for(name, params), Paths(paths.root, name)
    if hasattr(module, "prepare"):
        module.prepare(params, paths)
    return module.run(params, paths, work or SerialWork())
