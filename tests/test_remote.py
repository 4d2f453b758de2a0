"""Issue 19's team workflow over the remotes teams use: an S3-compatible server (moto's, on
localhost) and a shared folder. Two people clone one git repository whose DVC remote holds the
LLM answer cache: A runs live and pushes, B pulls and replays with zero calls; then both ask new
questions (one of them answered differently), both push, nothing is lost, and `regula cache
merge` makes the union and names the conflict; the union, pushed, replays with zero calls.

The project is small: one DVC stage, the pipeline's `membership` with the outputs and params
dvc.yaml declares (its answer cache a DVC-cached, persisted output), run by regula's stage
runner without Prefect, its teacher asking the stub LLM server."""
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cli_run import invoke
from regula import params as params_mod
from regula.llm.stub_server import StubLLMServer

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path("data/cache/llm/membership")
RUN_STAGE = '''"""`python -m flows NAME` without Prefect: one regula stage on params.yaml, here."""
import sys
from pathlib import Path

from regula import params, stages

stages.execute(sys.argv[1], params.load("params.yaml"), stages.Paths(Path.cwd()), stages.SerialWork())
'''
REGULA = "import sys; from regula.cli import main; sys.exit(main())"  # the `regula` command


def run(cmd, cwd, env, check=True):
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def git(args, cwd, env):
    return run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd, env)


def base_env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PREFECT_", "DVC_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # this venv's dvc
    env["PYTHONPATH"] = str(ROOT / "src")
    env["DVC_NO_ANALYTICS"] = "1"
    # no one's real AWS configuration or credentials: moto accepts any key
    env.update(AWS_CONFIG_FILE=str(tmp_path / "no-aws-config"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-aws"),
               AWS_ACCESS_KEY_ID="team-key", AWS_SECRET_ACCESS_KEY="team-secret", AWS_DEFAULT_REGION="us-east-1")
    return env


@pytest.fixture
def s3_server(monkeypatch):
    """moto's S3 server on a free localhost port, with an empty bucket `regula-team`."""
    import boto3
    from moto.server import ThreadedMotoServer
    monkeypatch.setattr(logging.getLogger("werkzeug"), "level", logging.ERROR)  # no line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="team-key",
                      aws_secret_access_key="team-secret")
    s3.create_bucket(Bucket="regula-team")
    yield url, lambda: sorted((o["Key"], o["ETag"]) for page in s3.get_paginator("list_objects_v2")
                              .paginate(Bucket="regula-team") for o in page.get("Contents", []))
    server.stop()


def set_params(repo: Path, **sections) -> None:
    p = yaml.safe_load((repo / "params.yaml").read_text())
    for section, values in sections.items():
        p[section].update(values)
    (repo / "params.yaml").write_text(yaml.safe_dump(p, sort_keys=False))


def new_project(repo: Path, origin: Path, stub: StubLLMServer, env: dict, remote: list[list[str]]) -> None:
    """A's first commit: dvc.yaml's membership stage, params asking the stub, the team remote;
    pushed to the bare repository `origin` everyone clones."""
    stage = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["membership"]
    assert {str(CACHE): {"persist": True}} in stage["outs"]  # the pipeline's cache is DVC-cached and kept
    stage.update(cmd="python run_stage.py membership", deps=["run_stage.py"])
    repo.mkdir()
    (repo / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"membership": stage}}, sort_keys=False))
    (repo / "run_stage.py").write_text(RUN_STAGE)
    # endpoint_id names the team's endpoint in every answer's key, whichever URL reaches it
    p = params_mod.validate({"llm": {"base_url": stub.base_url, "model": stub.model, "endpoint_id": "team-llm",
                                     "retries": 0},
                             # the per-word teacher only: its questions are the ones counted below
                             "membership": {"backend": "openai", "goals": ["place_table"], "words": 6,
                                            "formula": False}})
    (repo / "params.yaml").write_text(yaml.safe_dump(p.model_dump(), sort_keys=False))
    run(["git", "init", "-q", "-b", "main"], repo, env)
    run(["dvc", "init", "-q"], repo, env)
    for cmd in remote:
        run(cmd, repo, env)
    git(["add", "-A"], repo, env)
    git(["commit", "-qm", "membership with its LLM teacher"], repo, env)
    run(["git", "init", "-q", "--bare", "-b", "main", origin], repo.parent, env)
    git(["remote", "add", "origin", origin], repo, env)
    git(["push", "-q", "origin", "main"], repo, env)


def entries(repo_or_folder: Path) -> dict[str, str]:
    """The cache's answer files (key -> text), its ledger of calls left out."""
    root = repo_or_folder / CACHE if (repo_or_folder / CACHE).is_dir() else repo_or_folder
    return {p.stem: p.read_text() for p in sorted(root.rglob("*.json"))}


def folder(repo: Path) -> dict[str, bytes]:
    """Every file of the cache folder, the ledger of calls (calls.jsonl) included."""
    return {str(p.relative_to(repo / CACHE)): p.read_bytes() for p in sorted((repo / CACHE).rglob("*")) if p.is_file()}


def answer(text: str) -> str:
    return json.loads(text)["response"]["content"]


def canonical(text: str) -> str:
    return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def outputs(repo: Path) -> dict[str, bytes]:
    return {name: (repo / name).read_bytes() for name in
            ("data/membership/answers.jsonl", "metrics/membership.json", "metrics/membership_detail.json")}


def live_run(repo: Path, stub: StubLLMServer, env: dict, goals: list[str], branch: str) -> int:
    """Ask what the cache lacks, push the answers to the DVC remote and the commit to origin;
    the stub's calls it took."""
    git(["checkout", "-q", "-b", branch], repo, env)
    set_params(repo, llm={"base_url": stub.base_url, "mode": "live"}, membership={"goals": goals})
    before = stub.calls
    run(["dvc", "repro", "-q"], repo, env)
    run(["dvc", "push", "-q"], repo, env)
    git(["add", "-A"], repo, env)
    git(["commit", "-qm", f"membership asked about {goals}"], repo, env)
    git(["push", "-q", "origin", branch], repo, env)
    return stub.calls - before


def replay(repo: Path, env: dict, goals: list[str]) -> None:
    """Rerun with `llm.mode: replay` against a port where nothing listens: a call would fail."""
    set_params(repo, llm={"mode": "replay", "base_url": "http://127.0.0.1:9/v1"}, membership={"goals": goals})
    out = run(["dvc", "repro"], repo, env)
    assert "Running stage 'membership'" in out.stdout


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["s3", "directory"])
def test_two_clones_share_llm_answers_through_a_remote(kind, tmp_path, request):
    env = base_env(tmp_path)
    if kind == "s3":
        url, remote_objects = request.getfixturevalue("s3_server")
        # the bucket and endpoint are the team's settings (committed); the keys stay in each
        # person's environment (or `dvc remote modify --local`), never in git
        remote = [["dvc", "remote", "add", "-d", "team", "s3://regula-team/dvc"],
                  ["dvc", "remote", "modify", "team", "endpointurl", url]]
    else:
        store = tmp_path / "shared" / "dvc-store"
        remote = [["dvc", "remote", "add", "-d", "team", store]]
        remote_objects = lambda: sorted((str(p.relative_to(store)), p.read_bytes())  # noqa: E731
                                        for p in store.rglob("*") if p.is_file()) if store.exists() else []
    a, b, origin = tmp_path / "a", tmp_path / "b", tmp_path / "origin.git"
    with StubLLMServer() as stub_a, StubLLMServer() as stub_b:
        # A: a live run asks the 6 questions, pushes the answers and the commit
        new_project(a, origin, stub_a, env, remote)
        assert remote_objects() == []
        assert live_run(a, stub_a, env, ["place_table"], "first") == 6
        assert len(entries(a)) == 6 and remote_objects() != []
        assert "team-key" not in (a / ".dvc" / "config").read_text()

        # B: clone, pull, replay: zero calls, the same bytes
        run(["git", "clone", "-q", "-b", "first", origin, b], tmp_path, env)
        assert not (b / CACHE).exists()
        run(["dvc", "pull", "-q"], b, env)
        pulled = folder(b)
        assert pulled == folder(a) and len(entries(b)) == 6
        replay(b, env, ["place_table"])
        assert stub_a.calls == 6 and stub_b.calls == 0
        assert outputs(b) == outputs(a) and folder(b) == pulled  # a replay writes nothing in the cache
        git(["checkout", "-q", "--", "."], b, env)

        # Both ask new questions and push. One question both ask (collect_wood's shortest plan,
        # the first asked) gets another answer from B's endpoint: a model that is not deterministic.
        assert live_run(a, stub_a, env, ["place_table", "collect_wood", "collect_stone"], "a") == 12
        pushed_by_a = remote_objects()
        stub_b.script = ['{"answer": "no"}']
        assert live_run(b, stub_b, env, ["place_table", "collect_wood", "make_wood_pickaxe"], "b") == 12
        assert not stub_b.script
        mine_a, mine_b = entries(a), entries(b)
        conflict, = [k for k in mine_a.keys() & mine_b.keys() if answer(mine_a[k]) != answer(mine_b[k])]
        assert answer(mine_a[conflict]) == '{"answer": "yes"}' and answer(mine_b[conflict]) == '{"answer": "no"}'
        assert len(mine_a) == len(mine_b) == 18 and len(mine_a.keys() | mine_b.keys()) == 24

        # Nothing lost: B's push added to the remote and removed nothing; each branch's cache
        # comes back whole from the remote, read through the shared git repository
        assert set(pushed_by_a) < set(remote_objects())
        for branch, mine in (("a", mine_a), ("b", mine_b)):
            got = tmp_path / f"got-{branch}"
            run(["dvc", "get", "-q", origin, CACHE, "--rev", branch, "-o", got], tmp_path, env)
            assert entries(got) == mine

        # Before merging, B sees the difference: A's answers fetched, `regula diff` by key
        run(["git", "fetch", "-q", "origin"], b, env)
        git(["branch", "-q", "a", "origin/a"], b, env)
        run(["dvc", "fetch", "-q", "--all-branches"], b, env)
        diff = run([sys.executable, "-c", REGULA, "diff", "a", "b", "--kind", "caches", "--format", "json"], b, env, check=False)
        assert diff.returncode == 1, diff.stderr  # 1: they differ
        rows = json.loads(diff.stdout)["kinds"]["caches"]
        assert sorted((r["change"], r["key"]) for r in rows if r["change"] == "conflict") == [("conflict", conflict)]
        assert {r["key"] for r in rows if r["change"] == "removed"} == mine_a.keys() - mine_b.keys()
        assert {r["key"] for r in rows if r["change"] == "added"} == mine_b.keys() - mine_a.keys()

        # B takes A's answers: a union, the conflict named with both answers
        theirs = tmp_path / "theirs"
        run(["dvc", "get", "-q", origin, CACHE, "--rev", "a", "-o", theirs], b, env)
        merged = invoke(["cache", "merge", theirs, b / CACHE])
        assert merged.exit_code == 0, merged.output
        lines = merged.stdout.splitlines()
        assert json.loads(lines[-1]) == {"copied": 6, "already_there": 11, "conflicts": 1}
        # kept: the entry whose canonical JSON sorts first, whoever merges
        kept, dropped = sorted((mine_a[conflict], mine_b[conflict]), key=canonical)
        assert lines[:-1] == [f"conflict {conflict}: kept {answer(kept)!r}, dropped {answer(dropped)!r}"]
        union = entries(b)
        assert union.keys() == mine_a.keys() | mine_b.keys() and union[conflict] == kept
        # every key's entry, taken by the same rule where both hold it (times and latencies differ)
        assert union == {k: min((m[k] for m in (mine_a, mine_b) if k in m), key=canonical) for k in union}

        # The union, committed and pushed from B, replays every goal on A's machine with no call
        run(["dvc", "commit", "-q", "-f", "membership"], b, env)
        run(["dvc", "push", "-q"], b, env)
        git(["commit", "-qam", "membership: A's answers merged in"], b, env)
        git(["push", "-q", "origin", "b"], b, env)
        run(["git", "fetch", "-q", "origin"], a, env)
        git(["checkout", "-q", "-B", "b", "origin/b"], a, env)
        run(["dvc", "pull", "-q"], a, env)
        assert entries(a) == union
        pulled, calls = folder(a), (stub_a.calls, stub_b.calls)
        replay(a, env, ["place_table", "collect_wood", "collect_stone", "make_wood_pickaxe"])
        assert (stub_a.calls, stub_b.calls) == calls and folder(a) == pulled
        answers = [json.loads(line) for line in (a / "data/membership/answers.jsonl").read_text().splitlines()]
        assert len(answers) == 24 and all(r["answer"] is not None for r in answers)
