"""Issue 19's scheduled runs: `regula schedule serve|create|list|remove` over a local Prefect
server, each run a DVC experiment of a tiny project made here (its own git repository, one fast
stage with a param, a metrics file and a DVC-cached report), not this repository's pipeline."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REGULA = "import sys; from regula.cli import main; sys.exit(main())"  # the `regula` command
TRAIN = '''import json, os, time, yaml
train = yaml.safe_load(open("params.yaml"))["train"]
rate = train["rate"]
time.sleep(train["sleep"])  # a run still in flight when serve is stopped
os.makedirs("metrics", exist_ok=True)
os.makedirs("reports", exist_ok=True)
json.dump({"score": rate * 2, "rate": rate}, open("metrics/train.json", "w"))
open("reports/report.md", "w").write(f"# tiny report\\n\\nscore {rate * 2}\\n")
'''
PARAMS = "train:\n  rate: 1\n  sleep: 0\n"
DVC_YAML = '''stages:
  train:
    cmd: python train.py
    deps: [train.py]
    params: [train.rate, train.sleep]
    outs: [reports/report.md]
    metrics:
      - metrics/train.json:
          cache: false
'''


def run(cmd, cwd, env, timeout=120):
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def ok(cmd, cwd, env):
    proc = run(cmd, cwd, env)
    assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def tiny_project(repo: Path, env: dict) -> str:
    """The project, committed after one `dvc repro`; its HEAD."""
    repo.mkdir()
    (repo / "train.py").write_text(TRAIN)
    (repo / "params.yaml").write_text(PARAMS)
    (repo / "dvc.yaml").write_text(DVC_YAML)
    ok(["git", "init", "-q", "-b", "main"], repo, env)
    ok(["dvc", "init", "-q"], repo, env)
    ok(["dvc", "repro", "-q"], repo, env)
    ok(["git", "add", "-A"], repo, env)
    ok(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tiny"], repo, env)
    return ok(["git", "rev-parse", "HEAD"], repo, env).strip()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(url: str, path: str, body: dict) -> list[dict]:
    request = urllib.request.Request(f"{url}/{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def marked(marker: str) -> list[int]:
    """The live processes whose environment holds `marker`: every one the test started, however deep."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in environ.read_bytes():
                stat = (environ.parent / "stat").read_text()
                if stat.rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(environ.parent.name))
        except (OSError, IndexError):
            continue
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return "(gone)"


def test_schedule_arguments_are_checked_before_any_server_is_asked(tmp_path):
    from flows import schedule
    from regula.errors import RegulaError
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "dvc.yaml").write_text(DVC_YAML)
    (repo / ".git").mkdir()
    cases = [
        (("Nightly", "0 3 * * *", None, []), "schedule name 'Nightly': use 1-40 lowercase letters, digits and dashes"),
        (("n", "0 3 * * *", None, ["train.rate"]),
         "--set 'train.rate': write it as KEY=VALUE (a params.yaml key, e.g. demos.episodes=4)"),
        (("n", None, None, []), "give one of --cron EXPR or --interval SECONDS"),
        (("n", "0 3 * * *", 5.0, []), "give one of --cron EXPR or --interval SECONDS"),
        (("n", None, 0.0, []), "--interval must be a positive number of seconds, not 0"),
        (("n", "0 3 * *", None, []), "--cron '0 3 * *' is not a cron expression (five fields, e.g. '0 3 * * *')"),
    ]
    for (name, cron, interval, sets), message in cases:
        with pytest.raises(RegulaError) as caught:
            schedule.create(name, cron, interval, sets, repo, port=9)
        assert str(caught.value) == message
    (repo / "params.yaml").write_text("train:\n  rate: 1\n")
    with pytest.raises(RegulaError) as caught:
        schedule.create("n", "0 3 * * *", None, ["train.rate=2", "train.rte=2"], repo, port=9)
    assert str(caught.value) == f"--set train.rte=...: {repo / 'params.yaml'} has no key 'train.rte'"
    with pytest.raises(RegulaError) as caught:
        schedule.create("n", "0 3 * * *", None, [], tmp_path, port=9)
    assert str(caught.value) == f"{tmp_path}: not a DVC project in a git repository (no dvc.yaml or .git there)"
    with pytest.raises(RegulaError) as caught:  # port 9: nothing listens
        schedule.create("n", "0 3 * * *", None, [], repo, port=9)
    assert str(caught.value) == ("no Prefect server answers at http://127.0.0.1:9/api: start one with "
                                 "`regula schedule serve` (it runs the schedules) and keep it running")


def test_an_experiment_is_found_by_name_and_its_metrics_flattened():
    from flows import schedule
    from datetime import datetime, timezone
    shown = [{"rev": "workspace", "experiments": None},
             {"rev": "abc", "experiments": [{"revs": [{"rev": "e1", "name": "nightly-20260101-030000", "data": {
                 "metrics": {"m/b.json": {"data": {"acc": 0.5, "nested": {"n": 3, "label": "x", "flag": True}}},
                             "m/a.json": {"data": {"z": 1}}}}}]}]}]
    exp = schedule.find_experiment(shown, "nightly-20260101-030000")
    assert exp["rev"] == "e1"
    assert schedule.flat_metrics(exp["data"]) == {"m/a.json:z": 1, "m/b.json:acc": 0.5, "m/b.json:nested.n": 3}
    with pytest.raises(Exception, match="dvc exp show lists no experiment named 'other'"):
        schedule.find_experiment(shown, "other")
    assert schedule.experiment_name("nightly", datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)) == \
        "nightly-20260102-030405"


@pytest.mark.slow
class Serve:
    """`regula schedule serve` in a session of its own (as from a shell's background), its output
    read as it comes."""

    def __init__(self, regula, where, repo, env):
        self.proc = subprocess.Popen([str(c) for c in [*regula, "serve", *where]], cwd=repo, env=env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True)
        self.reader.start()
        started = time.monotonic()
        while not any(line.startswith("serving schedules from") for line in self.lines):
            assert self.proc.poll() is None and time.monotonic() - started < 120, self.text()
            time.sleep(0.2)

    def text(self) -> str:
        return "".join(self.lines)

    def stop(self, how, marker: str) -> int:
        """Stop it (`how`: the signal and whom it goes to) within 60 s; its exit status."""
        how(self.proc.pid)
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError("serve still running 60 s after the signal; processes: " + "; ".join(
                f"{p}: {cmdline(p)}" for p in marked(marker)) + "\n" + self.text()) from None
        self.reader.join(timeout=10)
        assert self.lines[-1] == "stopped: server, worker and runs\n", self.text()
        return code


def wait_for(what: str, done, limit: float, serve: Serve):
    deadline = time.monotonic() + limit
    while True:
        try:
            if done():
                return
        except TimeoutError:  # the server (SQLite) busy a moment: ask again
            pass
        assert time.monotonic() < deadline, f"{what}:\n{serve.text()}"
        time.sleep(1)


def test_a_scheduled_run_becomes_a_dvc_experiment_and_everything_stops(tmp_path):
    """serve, create (every 10 s, one override), list; one scheduled run completes: its artifacts
    name the git revision, the experiment and its metrics, the report is one too, and `dvc exp
    show` lists the experiment; remove; Ctrl-C while another schedule's run is in flight: serve
    marks that run cancelled and stops within 60 s, and no process the test started is left.
    Started again, serve runs the next schedule's runs (the stopped run holds no concurrency
    slot), `list` shows each schedule's last run with its state and why; SIGTERM mid-run stops
    it the same way."""
    marker = f"REGULA_SCHEDULE_TEST={uuid.uuid4().hex}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "DVC_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",  # this venv's dvc
               PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'src'}", DVC_NO_ANALYTICS="1",
               PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_SERVER_ANALYTICS_ENABLED="false",
               PREFECT_WORKER_QUERY_SECONDS="1")  # the worker looks for due runs every second (default 10)
    env[marker.split("=")[0]] = marker.split("=")[1]
    repo = tmp_path / "tiny"
    head = tiny_project(repo, env)
    port = free_port()
    url = f"http://127.0.0.1:{port}/api"
    regula = [sys.executable, "-c", REGULA, "schedule"]
    where = ["--port", port, "--root", repo]

    no_server = run([*regula, "create", "--interval", "10", *where], repo, env)
    assert (no_server.returncode, no_server.stderr) == (2, f"error: no Prefect server answers at {url}: start one "
                                                           "with `regula schedule serve` (it runs the schedules) "
                                                           "and keep it running\n")

    def completed(schedule: str) -> list[dict]:
        """The schedule's completed runs; none of its runs failed or crashed."""
        ids = [d["id"] for d in api(url, "deployments/filter", {"deployments": {"name": {"any_": [schedule]}}})]
        runs = api(url, "flow_runs/filter", {"deployments": {"id": {"any_": ids}},  # ended runs only: few
                                             "flow_runs": {"state": {"type": {"any_": ["COMPLETED", "FAILED",
                                                                                      "CRASHED"]}}}})
        bad = [r for r in runs if r["state_type"] in ("FAILED", "CRASHED")]
        assert not bad, f"{bad[0]['state']['message']}"
        return [r for r in runs if r["state_type"] == "COMPLETED"]

    def slow_run_going() -> bool:
        return any("train.py" in cmdline(p) for p in marked(marker))

    try:
        serve = Serve(regula, where, repo, env)
        created = ok([*regula, "create", "--interval", "10", "--set", "train.rate=3", "--name", "tiny", *where],
                     repo, env)
        assert created == (f"schedule 'tiny': every 10 s, dvc exp run in {repo} with train.rate=3 "
                           "(runs while `regula schedule serve` runs)\n")
        again = run([*regula, "create", "--cron", "0 3 * * *", "--name", "tiny", *where], repo, env)
        assert (again.returncode, again.stderr) == (2, "error: a schedule named 'tiny' exists: `regula schedule "
                                                       "remove tiny` first, or pick another --name\n")
        assert ok([*regula, "list", *where], repo, env).startswith(f"tiny\tevery 10 s\t{repo}\ttrain.rate=3\tlast: ")

        # the first run is due at once; later ones wait for it (never two at a time)
        wait_for("no scheduled run completed", lambda: completed("tiny"), 150, serve)

        [summary] = api(url, "artifacts/filter", {"artifacts": {"key": {"any_": ["tiny-run"]}}, "limit": 1,
                                                  "sort": "CREATED_DESC"})
        text = summary["data"]
        assert f"- git revision: {head}\n" in text
        name = text.split("\n")[0].removeprefix("# Scheduled run ")
        assert name.startswith("tiny-") and f"- DVC experiment: {name} (commit " in text
        assert "| metrics/train.json:rate | 3 |\n| metrics/train.json:score | 6 |\n" in text
        [report] = api(url, "artifacts/filter", {"artifacts": {"key": {"any_": ["tiny-report"]}}, "limit": 1,
                                                 "sort": "CREATED_DESC"})
        assert report["data"] == "# tiny report\n\nscore 6\n"  # the DVC-cached output of the experiment
        wait_for("serve did not print the run's end", lambda: any(
            re.fullmatch(r"run \S+ COMPLETED at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n", line) for line in serve.lines),
            30, serve)
        listed = ok([*regula, "list", *where], repo, env)
        assert re.search(r"\tlast: \S+ (COMPLETED|RUNNING) at [^\t]+\tnext: \d{4}-", listed), listed

        assert ok([*regula, "remove", "tiny", *where], repo, env) == "schedule 'tiny' removed\n"
        gone = run([*regula, "remove", "tiny", *where], repo, env)
        assert (gone.returncode, gone.stderr) == (2, "error: unknown schedule 'tiny'; valid schedules: (none)\n")
        assert ok([*regula, "list", *where], repo, env) == "no schedules\n"

        # Ctrl-C while a run is in flight (its stage sleeps): the run is stopped too, within the bound
        ok([*regula, "create", "--interval", "10", "--set", "train.sleep=600", "--name", "slow", *where], repo, env)
        wait_for("the slow run never started", slow_run_going, 300, serve)
        assert serve.stop(lambda pid: os.killpg(pid, signal.SIGINT), marker) == 0  # Ctrl-C: the whole group
        assert any(line.startswith("marked cancelled, in flight: ") for line in serve.lines), serve.text()
        deadline = time.monotonic() + 10
        while marked(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marked(marker) == [], "processes left: " + ", ".join(cmdline(p) for p in marked(marker))

        # Started again: the stopped run is on record as such, and the next runs are not blocked by it.
        serve = Serve(regula, where, repo, env)
        listed = ok([*regula, "list", *where], repo, env)
        assert re.search(r"^slow\t.*\tlast: \S+ CANCELLED at [^\t]+: serve was stopped \(Ctrl-C or SIGTERM\) "
                         r"while this run was in flight\t", listed, re.M), listed
        ok([*regula, "remove", "slow", *where], repo, env)
        ok([*regula, "create", "--interval", "10", "--set", "train.rate=4", "--name", "after", *where], repo, env)
        wait_for("no run completed after the restart", lambda: completed("after"), 150, serve)
        ok([*regula, "remove", "after", *where], repo, env)

        # SIGTERM to serve alone mid-run (what a service manager sends): the same clean stop
        ok([*regula, "create", "--interval", "10", "--set", "train.sleep=600", "--name", "slow2", *where], repo, env)
        wait_for("the second slow run never started", slow_run_going, 300, serve)
        assert serve.stop(lambda pid: os.kill(pid, signal.SIGTERM), marker) == 143
        assert any(line.startswith("marked cancelled, in flight: ") for line in serve.lines), serve.text()
        deadline = time.monotonic() + 10
        while marked(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marked(marker) == [], "processes left: " + ", ".join(cmdline(p) for p in marked(marker))
    finally:
        for pid in marked(marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # it ended since it was listed
                pass

    shown = json.loads(ok(["dvc", "exp", "show", "--json"], repo, env))
    [baseline] = [b for b in shown if b["rev"] == head]
    experiments = {r["name"]: r["data"] for group in baseline["experiments"] for r in group["revs"]}
    assert experiments[name]["metrics"]["metrics/train.json"]["data"] == {"score": 6, "rate": 3}
    assert experiments[name]["params"]["params.yaml"]["data"] == {"train": {"rate": 3, "sleep": 0}}
    assert (repo / "params.yaml").read_text() == PARAMS  # --temp: the workspace is left alone
