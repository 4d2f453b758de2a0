"""Prefect tasks: the units of work a stage asks for (`regula.stages.Work`), run as tasks.

`PrefectWork.map` submits each unit as a task run named after the unit; a unit the stage
marks `cache` is keyed on its function, its input's value (never a file path: DVC decides
when a stage reruns, and a rerun with unchanged inputs gets the same result back) and the
library's code, so an edited expert never hits an old result and a run killed halfway
replays its finished units. Progress lines are logged through Prefect's run logger.

Prefect's settings (project-local home, no telemetry, log level) come from `prefect.toml`
at the repository root. A unit that fails with a `RegulaError` (a user's mistake) keeps
Prefect's lines about its failed run, a traceback among them, off the terminal
(`QuietUserErrors`): the stage ends in that error's one line.
"""
from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.context import TaskRunContext
from prefect.logging import get_run_logger
from prefect.logging.handlers import PrefectConsoleHandler

import regula
from regula.errors import RegulaError
from regula.params import fingerprint

PROGRESS_LOGGER = "progress"
_CODE = Path(regula.__file__).parent


def code_fingerprint() -> str:
    """Hash of the library: its code and the data it reads (catalogues, prompts, the papers'
    tables), so a cached unit's result is only reused by the same library."""
    h = hashlib.sha256()
    for path in sorted(p for p in _CODE.rglob("*") if p.suffix in (".py", ".yaml")):
        h.update(path.relative_to(_CODE).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def log_progress(line: str) -> None:
    """One progress line of a stage, logged as INFO through the current flow or task run's
    Prefect logger: it shows on the terminal and in the run's logs in Prefect's UI.

    Prefect logs at WARNING (prefect.toml), which hides its own INFO lines ("Beginning
    flow run", "Finished in state ...") that share the run logger. The line goes to a child
    of the run logger (`prefect.flow_runs.progress` / `prefect.task_runs.progress`, with
    the run's metadata) whose level is INFO. The level is set here, at log time, because
    Prefect's logging set-up resets the level of child loggers that exist before it runs,
    and no setting of Prefect's names a logger level.
    """
    logger = get_run_logger().getChild(PROGRESS_LOGGER)
    if logger.logger.level != logging.INFO:
        logger.logger.setLevel(logging.INFO)
    logger.info(line)


def _unit_key(context, parameters) -> str:
    fn = parameters["fn"]
    return f"{parameters['name']}-{fingerprint(f'{fn.__module__}.{fn.__qualname__}', parameters['item'], code_fingerprint())}"


class QuietUserErrors(logging.Filter):
    """On Prefect's console handler: drops the task engine's own records (`prefect.task_runs`,
    not a stage's progress lines beneath it) about the task runs in `runs`, those that failed
    with a RegulaError. Prefect's API, and so its UI, still gets them."""

    runs: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "prefect.task_runs" and getattr(record, "task_run_id", None) in self.runs)

    @classmethod
    def quiet(cls, task_run_id: str) -> None:
        """Silence the rest of this task run on the terminal (in this process: a task runs, and
        logs, in a worker process where the stage has `workers`)."""
        cls.runs.add(task_run_id)
        for handler in logging.getLogger().handlers:
            if isinstance(handler, PrefectConsoleHandler) and not any(isinstance(f, cls) for f in handler.filters):
                handler.addFilter(cls())


def _call(fn, item, name: str):
    try:
        return fn(item)
    except RegulaError:
        QuietUserErrors.quiet(str(TaskRunContext.get().task_run.id))
        raise


_uncached = task(_call, cache_policy=NO_CACHE)
_cached = task(_call, cache_key_fn=_unit_key, persist_result=True)


class PrefectWork:
    """`regula.stages.Work` on Prefect: each unit a task run of the flow in progress."""

    def map(self, fn, items, *, name: str, label=None, cache: bool = False):
        runner = _cached if cache else _uncached
        futures = [runner.with_options(name=name, task_run_name=f"{name} {label(item)}" if label else name)
                   .submit(fn, item, name) for item in items]
        for future in futures:
            yield future.result()

    def progress(self, line: str) -> None:
        log_progress(line)
