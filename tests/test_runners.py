"""Where a stage's units run (params' `runner`) changes no byte of what it writes: the demos
stage's flow on Prefect's default runner and on a local Dask cluster of 2 workers writes the same
episode files and metrics; in the slow tier so do CEDAR's, LTLCrit's and DiVE's stages, and the
demos stage on a scheduler and workers started apart (`runner.address`). A runner that cannot be
had ends in one line naming the param."""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import flows
from regula import params as params_mod
from regula.errors import ParamsError, RegulaError, UnknownNameError
from stage_configs import changed, params_text

ROOT = Path(__file__).resolve().parent.parent

# One stage's flow in a process of its own, as `python -m flows STAGE` runs it, on a root of the
# test's. Prints the task runner's class, so a run that silently fell back to another is seen.
RUN = """
import json, sys
import flows
from regula import params as params_mod, stages
dumped, root, runner, stage = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
module = stages.get(stage)
flow = flows.flow_for(stage, module.workers(params_mod.typed(dumped)) if hasattr(module, "workers") else 1, runner)
print(type(flow.task_runner).__name__, flush=True)
state = flow(stage, dumped, root, return_state=True)
assert state.is_completed(), state.message
"""


def run_stage(stage: str, params, root: Path, runner: dict, prefect_api: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    # Each run its own Prefect home (results, so no cached unit is read back) and nothing read
    # from any cache: every unit runs on the runner under test.
    env.update(PREFECT_API_URL=prefect_api, PREFECT_HOME=str(root / "prefect"), PREFECT_TASKS_REFRESH_CACHE="true",
               PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'src'}")
    out = subprocess.run([sys.executable, "-c", RUN, json.dumps(params.model_dump()), str(root), json.dumps(runner),
                          stage],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split()[0]


def written(root: Path) -> dict:
    """Every file a stage wrote under data/ and metrics/, by its path."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for folder in ("data", "metrics") for p in sorted((root / folder).rglob("*")) if p.is_file()}


def test_default_and_dask_runners_write_the_same_bytes(tmp_path, small_params, prefect_api):
    small_params = changed(small_params, {"demos": {"episodes": 4, "max_steps": 300, "max_skills": 60}})
    runs = {}
    for name, runner in {"default": {"kind": "default"},
                         "dask": {"kind": "dask", "workers": 2, "address": None}}.items():
        root = tmp_path / name
        root.mkdir()
        runs[name] = run_stage("demos", small_params, root, runner, prefect_api), written(root)
    assert runs["default"][0] == "ThreadPoolTaskRunner" and runs["dask"][0] == "DaskTaskRunner"
    files = runs["default"][1]
    assert sorted(f for f in files if f.startswith("data/")) == [
        f"data/demos/episode_{s:05d}.jsonl" for s in range(4)]
    assert "metrics/demos.json" in files and "metrics/demos_episodes.csv" in files
    assert runs["dask"][1] == files


SMALL = {  # each system's rollouts on a small budget (tests/test_pipeline.py's)
    "cedar_skills": {"cedar": {"skills": ["collect_wood", "place_table"], "explore_worlds": 6, "rollouts": 3,
                               "max_skills": 25, "worlds": "dev", "episodes": 3, "mutants": 2, "simulations": 4,
                               "tasks": {"trials": 0}}},
    "ltlcrit": {"ltlcrit": {"episodes": 2, "iterations": 1, "max_skills": 20, "actors": ["random", "greedy"],
                            "demos_ablation": ["greedy"]}},
    "dive": {"dive": {"explore_episodes": 1, "explore_max_skills": 30, "agent_episodes": 1, "agent_max_skills": 40,
                      "conditions": ["dive", "no_dynamics"]}},
}


@pytest.mark.slow
@pytest.mark.parametrize("stage", sorted(SMALL))
def test_each_systems_rollouts_on_dask_write_the_same_bytes(tmp_path, small_params, prefect_api, stage):
    """CEDAR's held-out rollouts, the expert's and Table 5's simulations, LTLCrit's actors and
    expert baseline, DiVE's exploration, as Dask units: the same files as on the default runner
    (30-70 s each)."""
    from regula import demos, stages

    small_params = changed(small_params, SMALL[stage])
    runs = {}
    for name, runner in {"default": {"kind": "default"},
                         "dask": {"kind": "dask", "workers": 2, "address": None}}.items():
        root = tmp_path / name
        demos.generate(small_params, root / "data" / "demos", root / "metrics")
        stages.get(stage).prepare(small_params, stages.Paths(root, stage))
        run_stage(stage, small_params, root, runner, prefect_api)
        runs[name] = written(root)
    assert f"metrics/{stage}.json" in runs["default"]
    assert runs["dask"] == runs["default"]


@pytest.mark.slow
def test_an_existing_scheduler_and_its_workers_run_the_units(tmp_path, small_params, prefect_api):
    """`runner.address`: a scheduler and workers started as docs/pipeline.md says (from the checkout,
    the project importable: the scheduler unpickles the task graph too), the same bytes (~40 s)."""
    from regula.children import stop

    small_params = changed(small_params, {"demos": {"episodes": 4, "max_steps": 300, "max_skills": 60}})
    address = f"tcp://127.0.0.1:{_closed_port()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PREFECT_API_URL=prefect_api, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'src'}")
    dask = str(Path(sys.executable).parent / "dask")
    log = open(tmp_path / "dask.log", "w")
    cluster = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                                 "--dashboard-address", ":0"], cwd=ROOT, env=env, stdout=log, stderr=log)]
    try:
        cluster.append(subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--nworkers", "2",
                                         "--no-dashboard"], cwd=ROOT, env=env, stdout=log, stderr=log))
        flows.check_scheduler(address, timeout=60)
        runs = {}
        for name, runner in {"default": {"kind": "default"},
                             "remote": {"kind": "dask", "workers": 1, "address": address}}.items():
            (tmp_path / name).mkdir()
            runs[name] = run_stage("demos", small_params, tmp_path / name, runner, prefect_api), written(tmp_path / name)
    finally:
        for proc in reversed(cluster):
            stop(proc)
        log.close()
    assert runs["remote"][0] == "DaskTaskRunner"
    assert len(runs["default"][1]) > 4 and runs["remote"][1] == runs["default"][1]


def test_the_runner_param_picks_prefects_task_runner():
    from prefect.task_runners import ProcessPoolTaskRunner, ThreadPoolTaskRunner
    from prefect_dask import DaskTaskRunner

    assert params_mod.defaults()["runner"] == {"kind": "default", "workers": 2, "address": None}
    assert isinstance(flows.task_runner(1, params_mod.defaults()["runner"]), ThreadPoolTaskRunner)
    assert isinstance(flows.task_runner(3, {"kind": "default"}), ProcessPoolTaskRunner)  # demos.workers, as before
    local = flows.task_runner(1, {"kind": "dask", "workers": 2, "address": None})
    assert isinstance(local, DaskTaskRunner) and local.cluster_kwargs["n_workers"] == 2
    remote = flows.task_runner(1, {"kind": "dask", "workers": 2, "address": "tcp://10.0.0.5:8786"})
    assert remote.address == "tcp://10.0.0.5:8786"


def test_a_changed_runner_keeps_the_flow_runs_name():
    p = params_mod.defaults()
    dask = {**p, "runner": {"kind": "dask", "workers": 4, "address": None}}
    assert flows.run_name("demos", p) == flows.run_name("demos", dask)
    assert flows.run_name("demos", p) != flows.run_name("demos", {**p, "seed": 1})


@pytest.mark.parametrize("runner, message", [
    ({"kind": "spark"}, "params: runner.kind: 'spark' is not one of dask, default"),
    ({"kind": "dask", "address": "localhost:8786"},
     "params: runner.address must be a Dask scheduler's address such as tcp://10.0.0.5:8786 (what `dask scheduler` "
     "prints), or null for a local cluster, got 'localhost:8786'"),
    ({"workers": 0}, "params: runner.workers must be >= 1, got 0"),
])
def test_a_bad_runner_is_one_line_naming_the_param(runner, message):
    with pytest.raises(ParamsError) as err:
        params_mod.validate({"runner": runner})
    assert str(err.value) == message


def test_an_unknown_kind_past_params_is_named():
    with pytest.raises(UnknownNameError, match="runner.kind"):
        flows.task_runner(1, {"kind": "spark"})


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_scheduler_stops_the_stage_before_prefect(tmp_path, monkeypatch):
    address = f"tcp://127.0.0.1:{_closed_port()}"
    (tmp_path / "params.yaml").write_text(params_text({"runner": {"kind": "dask", "address": address}}))
    monkeypatch.setattr(flows, "ROOT", tmp_path)
    monkeypatch.setattr(flows, "SCHEDULER_TIMEOUT", 1.0)
    with pytest.raises(RegulaError) as err:
        flows.main(["demos"])
    assert str(err.value).startswith(f"params: runner.address {address}: no Dask scheduler answers there (")
    assert str(err.value).endswith("); start one with `dask scheduler` (docs/pipeline.md: Rollouts on Dask), or set "
                                   "runner.address: null for a local cluster")
    assert "\n" not in str(err.value)
    assert not (tmp_path / "data").exists()  # nothing ran


def test_a_scheduler_that_answers_passes_the_check():
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as cluster:
        flows.check_scheduler(cluster.scheduler_address, timeout=5)


def test_the_cli_offers_the_benchmarks_runners():
    import flows.bench
    from regula import cli
    assert cli.BENCH_RUNNERS == tuple(flows.bench.RUNNERS)
    assert "PREFECT_TASKS_REFRESH_CACHE" not in os.environ  # set by the benchmark's main only


def test_bench_runners_names_an_unknown_runner():
    from cli_run import invoke
    result = invoke(["bench", "runners", "--runner", "spark"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("error: unknown runner 'spark'; valid runners: dask_1, dask_2, default, "
                             "default_processes_2\n")
