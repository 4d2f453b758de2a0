"""Scheduled reproducible runs: the pipeline as a DVC experiment on a cron or interval schedule.

    python -m flows.schedule serve  [--port 4200]     # the Prefect server and a worker, until Ctrl-C
    python -m flows.schedule create (--cron EXPR | --interval SECONDS) [--set KEY=VALUE ...] [--name NAME]
    python -m flows.schedule list
    python -m flows.schedule remove NAME

(`regula schedule ...` runs these.) A schedule is a Prefect deployment of the `scheduled-run`
flow below, in the process work pool `regula-schedules`, on the project's local Prefect server:
it lives in that server's database (`<PREFECT_HOME>/prefect.db`, `.prefect/` by prefect.toml), so
it outlives the server. Scheduled runs need a long-running process, `serve`: the server (on
127.0.0.1:PORT, or the one PREFECT_API_URL names) and a worker that runs what comes due. `create`,
`list` and `remove` talk to that server and stop with one line when none answers. Each run is
`dvc exp run --temp` (the workspace is left alone) named `<schedule>-<UTC time>`; runs of one
schedule never overlap (a run that comes due while one is going is cancelled).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import flows  # noqa: F401  (DO_NOT_TRACK for the server, the worker and the runs)
from regula.errors import RegulaError, UnknownNameError

FLOW = "scheduled-run"
POOL = "regula-schedules"
PORT = 4200  # Prefect's own default
STOP_SECONDS = 10.0  # on Ctrl-C: SIGTERM to everything below serve, SIGKILL what is left after this
WATCH_SECONDS = 5.0  # how often serve looks at the runs' states (and prints what changed)
NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")  # a Prefect artifact key's alphabet, a valid git ref
REPORT = "reports/report.md"


# --- the flow ------------------------------------------------------------------------------

def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def experiment_name(schedule: str, now: datetime | None = None) -> str:
    """`<schedule>-<UTC time to the second>`: one name per run, in order, a valid git ref."""
    return f"{schedule}-{(now or datetime.now(timezone.utc)):%Y%m%d-%H%M%S}"


def find_experiment(shown: list[dict], name: str) -> dict:
    """The experiment `name` in `dvc exp show --json`'s answer."""
    for baseline in shown:
        for group in baseline.get("experiments") or ():
            for rev in group.get("revs") or ():
                if rev.get("name") == name:
                    return rev
    raise RegulaError(f"dvc exp show lists no experiment named {name!r}")


def flat_metrics(data: dict) -> dict:
    """{"<file>:<dotted key>": value} of every number in an experiment's metrics files."""
    out = {}

    def walk(prefix: str, value) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[prefix] = value
    for file, content in sorted((data.get("metrics") or {}).items()):
        for key, value in sorted(((content or {}).get("data") or {}).items()):
            walk(f"{file}:{key}", value)
    return out


def run_markdown(record: dict) -> str:
    """The run's record as the markdown of its Prefect artifact."""
    from flows import metrics_markdown
    lines = [f"# Scheduled run {record['experiment']}", "",
             f"- schedule: {record['schedule']}",
             f"- git revision: {record['git_rev']}" + (" (with uncommitted changes)" if record["dirty"] else ""),
             f"- DVC experiment: {record['experiment']} (commit {record['experiment_rev']})",
             f"- overrides: {' '.join(record['overrides']) or 'none'}", "", "## Metrics", ""]
    return "\n".join(lines) + "\n" + metrics_markdown(record["metrics"])


def scheduled_run(project: str, schedule: str, overrides: list[str] | None = None) -> dict:
    """Run the project's pipeline as a DVC experiment and publish what it ran on and gave."""
    from prefect.artifacts import create_markdown_artifact
    from prefect.states import Failed

    from regula.children import die_with_parent
    root = Path(project)
    overrides = list(overrides or ())
    record = {"schedule": schedule, "git_rev": _git(root, "rev-parse", "HEAD"),
              "dirty": bool(_git(root, "status", "--porcelain", "--untracked-files=no")),
              "experiment": experiment_name(schedule), "overrides": overrides}
    command = ["dvc", "exp", "run", "--temp", "--name", record["experiment"]]
    for override in overrides:
        command += ["-S", override]
    # dvc dies with this flow run: a stopped worker leaves no pipeline running
    done = subprocess.run(command, cwd=root, capture_output=True, text=True,
                          preexec_fn=die_with_parent(os.getpid()))
    if done.returncode != 0:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        return Failed(message=f"{' '.join(command)} exited with status {done.returncode}: {tail}")
    shown = json.loads(subprocess.run(["dvc", "exp", "show", "--json"], cwd=root, capture_output=True, text=True,
                                      check=True).stdout)
    experiment = find_experiment(shown, record["experiment"])
    record.update(experiment_rev=experiment["rev"], metrics=flat_metrics(experiment["data"]))
    create_markdown_artifact(markdown=run_markdown(record), key=f"{schedule}-run",
                             description=f"scheduled run {record['experiment']}: revision and metrics")
    report = _read_at(root, REPORT, experiment["rev"])
    if report is not None:
        create_markdown_artifact(markdown=report, key=f"{schedule}-report",
                                 description=f"{REPORT} of scheduled run {record['experiment']}")
    return record


def _read_at(root: Path, path: str, rev: str) -> str | None:
    """A file (git- or DVC-tracked) as the experiment's commit has it; None where it has none."""
    import dvc.api
    try:
        return dvc.api.read(path, repo=str(root), rev=rev)
    except FileNotFoundError:
        return None


def _flow():
    from prefect import flow
    return flow(scheduled_run, name=FLOW, flow_run_name="{schedule}", validate_parameters=False)


def __getattr__(name: str):
    # `flows.schedule.scheduled_run_flow` is the deployments' entrypoint; built on first use so
    # that importing this module for `list` or `remove` does not build a flow.
    if name == "scheduled_run_flow":
        return _flow()
    raise AttributeError(name)


# --- schedules: Prefect deployments on the local server ------------------------------------

def api_url(port: int) -> str:
    return os.environ.get("PREFECT_API_URL") or f"http://127.0.0.1:{port}/api"


# A server that is up answers /health in milliseconds, one that is down refuses at once; the wait
# is for a busy one (a scheduled `dvc exp run` on the 2 cores held one past 5 s in the test suite)
HEALTH_TIMEOUT = 30.0


def _require_server(url: str) -> None:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=HEALTH_TIMEOUT):
            return
    except OSError:
        raise RegulaError(f"no Prefect server answers at {url}: start one with `regula schedule serve` "
                          "(it runs the schedules) and keep it running") from None


def _schedule_of(cron: str | None, interval: float | None):
    from prefect.client.schemas.schedules import CronSchedule, IntervalSchedule
    if (cron is None) == (interval is None):
        raise RegulaError("give one of --cron EXPR or --interval SECONDS")
    if interval is not None:
        if interval <= 0:
            raise RegulaError(f"--interval must be a positive number of seconds, not {interval:g}")
        return IntervalSchedule(interval=interval)
    try:
        return CronSchedule(cron=cron)
    except ValueError:  # pydantic's ValidationError is one
        raise RegulaError(f"--cron {cron!r} is not a cron expression (five fields, e.g. '0 3 * * *')") from None


def _read_params(root: Path, tries: int = 25) -> dict:
    """The workspace's params.yaml. A scheduled run that is starting rewrites it for a moment
    (`dvc exp run --temp` writes its overrides there, stashes them and checks the file out again),
    so a file found missing or empty is read again a little later before it counts as empty."""
    import yaml
    path = root / "params.yaml"
    for _ in range(tries):
        text = path.read_text() if path.is_file() else ""
        if text.strip():
            return yaml.safe_load(text) or {}
        time.sleep(0.2)
    return {}


def _check_keys(root: Path, overrides: list[str]) -> None:
    """Each override's key is in the project's params.yaml: a typo fails here, not at 3 a.m.
    (A key naming another file, `FILE:KEY=VALUE`, is left to DVC.)"""
    keys = [o.split("=", 1)[0] for o in overrides if ":" not in o.split("=", 1)[0]]
    if not keys:
        return
    params = _read_params(root)
    for key in keys:
        node = params
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                raise RegulaError(f"--set {key}=...: {root / 'params.yaml'} has no key {key!r}")
            node = node[part]


def describe(schedule) -> str:
    if getattr(schedule, "cron", None):
        return f"cron {schedule.cron} ({schedule.timezone or 'UTC'})"
    return f"every {schedule.interval.total_seconds():g} s"


def _client(url: str):
    from prefect.client.orchestration import SyncPrefectClient
    return SyncPrefectClient(url)


def create(name: str, cron: str | None, interval: float | None, overrides: list[str], root: Path,
           port: int) -> str:
    if not NAME.fullmatch(name):
        raise RegulaError(f"schedule name {name!r}: use 1-40 lowercase letters, digits and dashes")
    for override in overrides:
        if not re.fullmatch(r"[^=\s]+=.*", override):
            raise RegulaError(f"--set {override!r}: write it as KEY=VALUE (a params.yaml key, e.g. demos.episodes=4)")
    if not (root / "dvc.yaml").is_file() or not (root / ".git").exists():
        raise RegulaError(f"{root}: not a DVC project in a git repository (no dvc.yaml or .git there)")
    _check_keys(root, overrides)
    schedule = _schedule_of(cron, interval)
    url = api_url(port)
    _require_server(url)
    from prefect.client.schemas.actions import DeploymentScheduleCreate, WorkPoolCreate
    from prefect.client.schemas.objects import ConcurrencyLimitStrategy, ConcurrencyOptions
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
    from prefect.workers.process import ProcessWorker
    with _client(url) as client:
        try:
            client.read_deployment_by_name(f"{FLOW}/{name}")
            raise RegulaError(f"a schedule named {name!r} exists: `regula schedule remove {name}` first, "
                              "or pick another --name")
        except ObjectNotFound:
            pass
        try:
            client.create_work_pool(WorkPoolCreate(name=POOL, type="process",
                                                   base_job_template=ProcessWorker.get_default_base_job_template()))
        except ObjectAlreadyExists:
            pass
        client.create_deployment(
            flow_id=client.create_flow_from_name(FLOW), name=name, work_pool_name=POOL,
            entrypoint="flows.schedule.scheduled_run_flow",
            # the run starts in the project, where `flows` imports from (as `python -m flows` does)
            pull_steps=[{"prefect.deployments.steps.set_working_directory": {"directory": str(root)}}],
            parameters={"project": str(root), "schedule": name, "overrides": overrides},
            schedules=[DeploymentScheduleCreate(schedule=schedule)],
            concurrency_limit=1,
            concurrency_options=ConcurrencyOptions(collision_strategy=ConcurrencyLimitStrategy.CANCEL_NEW),
            description=f"regula: the pipeline of {root} as a DVC experiment")
    return f"schedule {name!r}: {describe(schedule)}, dvc exp run in {root}" + \
        (f" with {' '.join(overrides)}" if overrides else "") + f" (runs while `regula schedule serve` runs)"


def listing(port: int) -> list[dict]:
    """Each schedule with its last run (name, state, when, why) and its next one."""
    url = api_url(port)
    _require_server(url)
    from prefect.client.schemas.filters import FlowFilter, FlowFilterName
    rows = []
    with _client(url) as client:
        found = client.read_deployments(flow_filter=FlowFilter(name=FlowFilterName(any_=[FLOW])))
        for d in sorted(found, key=lambda d: d.name):
            # the last run that ran (run_count > 0): not one cancelled as it came due while another ran
            done = [r for r in _runs(client, STARTED, limit=20, deployment=d.id) if r.run_count]
            due = _runs(client, ("SCHEDULED",), limit=1, deployment=d.id, oldest_first=True)
            rows.append({"name": d.name, "schedules": [describe(s.schedule) for s in d.schedules],
                         "project": (d.parameters or {}).get("project"),
                         "overrides": (d.parameters or {}).get("overrides") or [],
                         "last": _outcome(done[0]) if done else "no run yet",
                         "next": _when(due[0].expected_start_time) if due else "-"})
    return rows


def remove(name: str, port: int) -> str:
    url = api_url(port)
    _require_server(url)
    from prefect.exceptions import ObjectNotFound
    with _client(url) as client:
        try:
            deployment = client.read_deployment_by_name(f"{FLOW}/{name}")
        except ObjectNotFound:
            raise UnknownNameError("schedule", name, [d["name"] for d in listing(port)]) from None
        client.delete_deployment(deployment.id)
    return f"schedule {name!r} removed"


IN_FLIGHT = ("PENDING", "RUNNING", "CANCELLING")
STARTED = ("RUNNING", "CANCELLING", "COMPLETED", "FAILED", "CANCELLED", "CRASHED")  # not SCHEDULED, PENDING, PAUSED
STOPPED = "serve was stopped (Ctrl-C or SIGTERM) while this run was in flight"
LEFT = "found in flight when serve started again: the serve that ran it was stopped or died"


def _runs(client, states=None, limit: int = 200, deployment=None, oldest_first: bool = False):
    """Runs of the scheduled-run flow (of one deployment, if given), newest expected start first
    (only `states`, if given: a schedule has many runs SCHEDULED ahead)."""
    from prefect.client.schemas.filters import (DeploymentFilter, DeploymentFilterId, FlowFilter, FlowFilterName,
                                                FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType)
    from prefect.client.schemas.sorting import FlowRunSort
    run_filter = FlowRunFilter(state=FlowRunFilterState(type=FlowRunFilterStateType(any_=list(states)))) if states else None
    of = DeploymentFilter(id=DeploymentFilterId(any_=[deployment])) if deployment is not None else None
    order = FlowRunSort.EXPECTED_START_TIME_ASC if oldest_first else FlowRunSort.EXPECTED_START_TIME_DESC
    return client.read_flow_runs(flow_filter=FlowFilter(name=FlowFilterName(any_=[FLOW])), flow_run_filter=run_filter,
                                 deployment_filter=of, sort=order, limit=limit)


def settle(url: str, state: str, message: str) -> list[str]:
    """Mark every run of the flow still pending or running as `state` (CANCELLED or CRASHED)
    with `message`: a run whose serve is gone would otherwise stay RUNNING in the server's
    database, and the deployment's one-run-at-a-time limit would cancel every later run.
    Returns what it did, one entry per run (a run the server will not change, such as one whose
    schedule was removed while it ran, is named as such)."""
    from prefect.exceptions import PrefectHTTPStatusError
    from prefect.states import Cancelled, Crashed
    make = {"CANCELLED": Cancelled, "CRASHED": Crashed}[state]
    done = []
    with _client(url) as client:
        for run in _runs(client, IN_FLIGHT):
            try:
                client.set_flow_run_state(run.id, make(message=message), force=True)
                done.append(run.name)
            except PrefectHTTPStatusError as exc:
                done.append(f"{run.name} (the server refused: {exc.response.status_code})")
    return done


def _when(moment) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC") if moment else "-"


def _outcome(run) -> str:
    """`<run> <STATE> at <time>` and the state's message, one line."""
    state = run.state
    text = f"{run.name} {state.type.value if state else '?'} at {_when(run.end_time or run.start_time or run.expected_start_time)}"
    message = " ".join((state.message or "").split()) if state else ""
    return f"{text}: {message}" if message else text


# --- serve: the server and a worker, stopped together ---------------------------------------

class RunWatch:
    """What serve prints about the runs: each one's start and end, with the state's message (why a
    run failed or was cancelled), once. Runs that ended before serve started are not repeated."""

    def __init__(self, url: str):
        self.url, self.seen, self.quiet = url, {}, True
        self.news()
        self.quiet = False

    def news(self) -> list[str]:
        with _client(self.url) as client:
            runs = _runs(client, STARTED, limit=50)
        lines = []
        for run in reversed(runs):  # oldest first
            kind = run.state.type.value if run.state else None
            if kind is None or self.seen.get(run.id) == kind:
                continue
            self.seen[run.id] = kind
            if not self.quiet:
                lines.append(f"run {run.name} started" if kind == "RUNNING" else f"run {_outcome(run)}")
        return lines


def serve(port: int) -> None:
    import socket

    from flows.serve import _wait_healthy
    from regula.children import become_subreaper, die_with_parent, sigterm_as_exit, stop_descendants

    # Ctrl-C must stop serve wherever it was started: a shell starts a background job with SIGINT
    # ignored and exec keeps that, so serve (and the worker it starts, which re-sends SIGINT to itself
    # with its inherited handler) would ignore it. Seen: the test suite run in the background, whose
    # Ctrl-C left serve, worker and run alive.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    external = os.environ.get("PREFECT_API_URL")
    url = api_url(port)
    become_subreaper()  # each flow run gets a session of its own: it is found and stopped all the same
    server = worker = log = None
    with sigterm_as_exit():
        try:
            if external:
                _require_server(url)
            else:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        raise RegulaError(f"127.0.0.1:{port} is taken (another `regula schedule serve`?): "
                                          "pick another --port")
                from prefect.settings import get_current_settings
                home = get_current_settings().home
                home.mkdir(parents=True, exist_ok=True)
                log = open(home / "schedule-server.log", "w")
                server = subprocess.Popen(
                    [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                    preexec_fn=die_with_parent(os.getpid()))
                try:
                    _wait_healthy(url, server)
                except RuntimeError as exc:
                    raise RegulaError(f"{exc} (its log: {home / 'schedule-server.log'})") from None
            left = settle(url, "CRASHED", LEFT)
            if left:
                print(f"marked crashed, left in flight by an earlier serve: {', '.join(left)}", flush=True)
            worker = subprocess.Popen(
                [sys.executable, "-m", "prefect", "worker", "start", "--pool", POOL, "--type", "process",
                 "--name", f"regula-{os.getpid()}"],
                env={**os.environ, "PREFECT_API_URL": url}, preexec_fn=die_with_parent(os.getpid()))
            print(f"serving schedules from {url}, pool {POOL} (Ctrl-C to stop)", flush=True)
            watch = RunWatch(url)
            while (code := worker.poll()) is None:
                for line in watch.news():
                    print(line, flush=True)
                time.sleep(WATCH_SECONDS)
            raise RegulaError(f"the Prefect worker exited with status {code}")
        except KeyboardInterrupt:
            pass
        finally:
            # a second Ctrl-C or SIGTERM must not cut the clean-up short
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            if worker is not None:  # the server still answers (its own session: Ctrl-C did not reach it)
                import httpx
                try:
                    stopped = settle(url, "CANCELLED", STOPPED)
                except (httpx.HTTPError, OSError) as exc:  # a server already gone: the next start settles them
                    print(f"could not mark the runs in flight ({type(exc).__name__}); the next serve will",
                          flush=True)
                else:
                    if stopped:
                        print(f"marked cancelled, in flight: {', '.join(stopped)}", flush=True)
            # One sweep with one deadline: worker, server, runs in flight and their children all get
            # SIGTERM at once. Stopped one after another, each with its own grace period (a run in
            # flight reports to a server already gone, a server waits for its clients), the waits added
            # up past 90 s under load.
            stop_descendants(timeout=STOP_SECONDS)
            if log is not None:
                log.close()
            print("stopped: server, worker and runs", flush=True)


# --- command line --------------------------------------------------------------------------

def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m flows.schedule", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("serve", "create", "list", "remove"):
        p = sub.add_parser(name)
        p.add_argument("--port", type=int, default=PORT, help="the local Prefect server's port")
        if name == "create":
            p.add_argument("--cron")
            p.add_argument("--interval", type=float)
            p.add_argument("--set", dest="overrides", action="append", default=[])
            p.add_argument("--name", default="pipeline")
            p.add_argument("--root", type=Path, default=Path("."))
        if name == "remove":
            p.add_argument("name")
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args.port)
    elif args.command == "create":
        print(create(args.name, args.cron, args.interval, args.overrides, args.root.resolve(), args.port))
    elif args.command == "list":
        rows = listing(args.port)
        for row in rows:
            print(f"{row['name']}\t{'; '.join(row['schedules'])}\t{row['project']}\t{' '.join(row['overrides'])}\t"
                  f"last: {row['last']}\tnext: {row['next']}")
        if not rows:
            print("no schedules")
    else:
        print(remove(args.name, args.port))


if __name__ == "__main__":
    from regula.cli_support import run_main
    sys.exit(run_main(main, sys.argv[1:]))
