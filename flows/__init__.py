"""The Prefect flow that runs a stage: `python -m flows <stage>` (what each dvc.yaml cmd is).

One flow for every stage: it loads and validates params.yaml, lets the stage check what it
needs (`prepare`) before Prefect starts, then runs the stage's `run` as a flow named after the
stage, with units of work as Prefect tasks (`tasks.PrefectWork`), and publishes the stage's
headline (what `run` returns and writes to metrics/<stage>.json) as a markdown artifact.

Prefect's settings are in `prefect.toml` at the repository root, which Prefect reads from
the current directory (DVC runs stages there). What that file cannot hold is here:
"""
import logging
import os
import sys
from pathlib import Path

from regula.params import fingerprint

ROOT = Path(__file__).resolve().parent.parent

# DO_NOT_TRACK is not a Prefect setting: Prefect's client telemetry reads it from the
# environment. Set before any flow runs; child processes (the server, dvc's stages) inherit it.
os.environ.setdefault("DO_NOT_TRACK", "1")


def venv_env(env: dict | None = None) -> dict:
    """`env` (default: this process's) with this venv's bin first on PATH: `dvc`, and the `python`
    of dvc.yaml's `python -m flows ...`, are the venv's whether or not it is activated."""
    env = dict(os.environ if env is None else env)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def run_name(stage: str, params: dict) -> str:
    """A flow run's name: the stage and a short hash of the params it ran with, so runs of
    one setting share a name in Prefect's UI (`laws-1a2b3c4d`); `runner` (where the units ran,
    not what they computed) is left out."""
    return f"{stage}-{fingerprint({k: v for k, v in params.items() if k != 'runner'})[:8]}"


def _cell(value) -> str:
    return "–" if value is None else str(value).replace("|", "\\|")


def metrics_markdown(headline: dict) -> str:
    """A two-column markdown table, one row per headline metric."""
    return "| metric | value |\n|---|---|\n" + "".join(f"| {_cell(k)} | {_cell(v)} |\n" for k, v in headline.items())


def artifact_key(stage: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    return f"{stage.replace('_', '-')}-metrics"


def publish_metrics(stage: str, headline: dict) -> None:
    """The stage's headline as a markdown table, a Prefect artifact keyed `<stage>-metrics`:
    the same numbers as metrics/<stage>.json (the rest: metrics/<stage>_detail.json and tables)."""
    from prefect.artifacts import create_markdown_artifact
    create_markdown_artifact(markdown=metrics_markdown(headline), key=artifact_key(stage),
                             description=f"{stage}: headline metrics (metrics/{stage}.json)")


def stage_flow(stage: str, params: dict, root: str) -> dict:
    """The body of every stage's flow run (see `flow_for`): `params` is the stage's params dumped
    (a flow's parameters are plain values, shown in Prefect's UI), typed again for the stage."""
    from prefect.states import Failed

    from regula import stages
    from regula.errors import RegulaError
    from regula.params import typed
    from tasks import PrefectWork

    try:
        headline = stages.get(stage).run(typed(params), stages.Paths(Path(root), stage), PrefectWork())
    except RegulaError as exc:
        # A mistake a user can make (missing demonstrations, a replay miss): the run fails with
        # its one line, and no traceback (Prefect logs one for an exception that leaves a flow).
        return Failed(message=str(exc))
    if headline:
        publish_metrics(stage, headline)
    return headline


def flow_for(stage: str, workers: int = 1, runner: dict | None = None):
    """The Prefect flow of one stage: named after it, its runs after it and its params' hash.
    Its units run on `runner` (params' `runner` section): by default on `workers` processes
    (Crafter is pure Python: threads would share one core), else one thread; with `kind: dask`
    on a Dask cluster, the one at `address` or a local one of `runner.workers` processes."""
    from prefect import flow

    return flow(stage_flow, name=stage, flow_run_name=lambda: run_name(stage, _run_params()),
                task_runner=task_runner(workers, runner))


def task_runner(workers: int = 1, runner: dict | None = None):
    """Prefect's task runner for `runner` (params' `runner` section; None: the default)."""
    from prefect.task_runners import ProcessPoolTaskRunner, ThreadPoolTaskRunner

    runner = runner or {"kind": "default"}
    if runner["kind"] == "default":
        return ProcessPoolTaskRunner(max_workers=workers) if workers > 1 else ThreadPoolTaskRunner(max_workers=1)
    if runner["kind"] != "dask":
        from regula.errors import UnknownNameError
        raise UnknownNameError("runner.kind", runner["kind"], ["dask", "default"])
    from prefect_dask import DaskTaskRunner

    if runner.get("address"):
        return DaskTaskRunner(address=runner["address"])
    # One thread a process, as the default runner's pool: Crafter holds the GIL. No dashboard:
    # its port may be taken (a second stage, a second user), and nothing here reads it.
    return DaskTaskRunner(cluster_class=local_cluster, cluster_kwargs={
        "n_workers": runner["workers"], "threads_per_worker": 1, "processes": True, "dashboard_address": ":0"})


def local_cluster(**kwargs):
    """A local Dask cluster whose workers report to this run's Prefect API. Without
    PREFECT_API_URL that is the temporary server this process started: a worker would
    otherwise start one of its own (Prefect's process pool passes its settings on; Dask's
    workers get only the environment)."""
    from distributed import LocalCluster
    from prefect.settings import PREFECT_API_URL

    api = PREFECT_API_URL.value()
    if not api:
        from prefect.server.api.server import SubprocessASGIServer
        api = SubprocessASGIServer().api_url
    # Dask's INFO lines (a scheduler started, a worker closed) are not the stage's progress.
    logging.getLogger("distributed").setLevel(logging.WARNING)
    return LocalCluster(**kwargs, silence_logs=logging.WARNING,
                        env={"PREFECT_API_URL": api, "DASK_LOGGING__DISTRIBUTED": "warning"})


SCHEDULER_TIMEOUT = 10.0  # seconds to wait for a Dask scheduler to accept a connection


def check_scheduler(address: str, timeout: float | None = None) -> None:
    """A RegulaError naming `runner.address` unless a Dask scheduler answers there: checked before
    Prefect starts, where an unreachable one would end the flow in a crash and a traceback."""
    import asyncio

    from distributed.comm import connect

    from regula.errors import RegulaError

    async def probe():
        comm = await connect(address, timeout=timeout or SCHEDULER_TIMEOUT)
        await comm.close()

    try:
        asyncio.run(probe())
    except Exception as exc:  # refused, timed out, or something that is not a Dask scheduler answered
        why = str(exc).split("\n")[0] if isinstance(exc, (OSError, asyncio.TimeoutError)) else "not a Dask scheduler"
        raise RegulaError(f"params: runner.address {address}: no Dask scheduler answers there ({why}); start one "
                          f"with `dask scheduler` (docs/pipeline.md: Rollouts on Dask), or set runner.address: null for a "
                          f"local cluster") from None


def _run_params() -> dict:
    from prefect.runtime import flow_run
    return flow_run.parameters["params"]


def main(argv: list[str]) -> dict:
    from regula import params as params_mod, stages
    from regula.errors import RegulaError

    if len(argv) != 1:
        raise RegulaError(f"usage: python -m flows STAGE (one of {', '.join(stages.names())})")
    name = argv[0]
    module = stages.get(name)
    params = stages.params_for(name, params_mod.load(ROOT / "params.yaml"))
    paths = stages.Paths(ROOT, name)
    if hasattr(module, "prepare"):
        module.prepare(params, paths)  # a mistake stops the stage before Prefect starts
    workers = module.workers(params) if hasattr(module, "workers") else 1
    if params.runner.kind == "dask" and params.runner.address:
        check_scheduler(params.runner.address)
    state = flow_for(name, workers, params.runner.model_dump())(name, params.model_dump(), str(ROOT),
                                                                return_state=True)
    if state.is_failed() and state.message and not isinstance(state.result(raise_on_failure=False), BaseException):
        raise RegulaError(state.message)
    return state.result()
