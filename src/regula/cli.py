"""The `regula` command line."""
from __future__ import annotations

import importlib
import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer

from .cli_common import COUNT, FOLDER, PROJECT, SEED, load_params
from .errors import RegulaError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="regula: LLM-guided agents that learn and obey formal structure.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks that print numbers.")
app.add_typer(bench_app, name="bench")
cache_app = typer.Typer(no_args_is_help=True, help="The LLM query cache (data/cache/llm).")
app.add_typer(cache_app, name="cache")
llm_app = typer.Typer(no_args_is_help=True, help="The LLM endpoint.")
app.add_typer(llm_app, name="llm")
laws_app = typer.Typer(no_args_is_help=True, help="Temporal-logic laws: check, draw, derive.")
app.add_typer(laws_app, name="laws")
schedule_app = typer.Typer(no_args_is_help=True, help="Scheduled runs of the pipeline as DVC experiments (Prefect).")
app.add_typer(schedule_app, name="schedule")
exp_app = typer.Typer(no_args_is_help=True, help="DVC experiments: run one with its params checked first; show them "
                                               "beside their baselines.")
app.add_typer(exp_app, name="exp")


def _read_trace(path: Path) -> list[frozenset]:
    """Letters from a JSON list of atom lists, or from an episode JSONL (state + skill per step)."""
    from . import episodes
    if path.suffix == ".jsonl":
        if not path.exists():
            raise RegulaError(f"trace file {path} not found")
        episode = episodes.read(path)
        return [frozenset(s["props_before"]) | {s["skill"]} for s in episode["steps"]]
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise RegulaError(f"trace file {path} not found") from None
    except json.JSONDecodeError as exc:
        raise RegulaError(f"{path}: not valid JSON ({exc.msg})") from None
    if (not isinstance(data, list) or not all(isinstance(x, list) for x in data)
            or not all(isinstance(a, str) for x in data for a in x)):
        raise RegulaError(f"{path}: a trace is a JSON list of lists of atoms (names), e.g. [[\"s\"], [\"a\"]]")
    return [frozenset(x) for x in data]


def _check_trace(path: Path, letters: list[frozenset], known: set, where: str) -> None:
    """A trace with no step, or naming an atom `known` lacks (a typo would hold nowhere and
    violate nothing), is refused."""
    if not letters:
        raise RegulaError(f"{path}: the trace has no step")
    for i, letter in enumerate(letters, 1):
        unknown = sorted(letter - known)
        if unknown:
            import difflib
            close = difflib.get_close_matches(unknown[0], sorted(known), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; the atoms {where}: {', '.join(sorted(known))}"
            raise RegulaError(f"{path}: step {i}: unknown atom {unknown[0]!r} (not one of the atoms {where}){hint}")


def _laws_and_alphabet(file: Path, crafter: bool):
    """The law file, checked against Crafter's propositions and skills (or only in itself), and
    the action alphabet its monitors run over."""
    from . import envs
    from .logic import load_laws
    state_atoms, actions = envs.get("crafter").atoms()
    alphabet = frozenset(actions) if crafter else None
    return load_laws(file, set(state_atoms) | set(actions) if crafter else None, alphabet), alphabet


@contextmanager
def _writing(path: Path):
    """An OSError while writing `path` is one line naming it."""
    try:
        yield
    except OSError as exc:
        raise RegulaError(f"cannot write {path}: {exc.strerror or exc}") from None


@laws_app.command("check")
def laws_check(file: Path = typer.Argument(..., help="law file (YAML or JSON)"),
               trace: Path = typer.Option(..., "--trace", help="JSON list of letters, or an episode .jsonl"),
               backend: str = typer.Option("auto", help="auto | native | spot"),
               crafter: bool = typer.Option(True, help="check atoms against Crafter's propositions and skills")):
    """Run the laws over a trace and print the first violation (exit 1 if there is one)."""
    from . import envs
    from .logic import Verdict, monitor, resolve_backend
    from .logic.laws import named
    resolve_backend(backend)
    laws, alphabet = _laws_and_alphabet(file, crafter)
    letters = _read_trace(trace)
    if crafter:
        state_atoms, actions = envs.get("crafter").atoms()
        _check_trace(trace, letters, set(state_atoms) | set(actions), "of Crafter")
    else:
        _check_trace(trace, letters, {a for law in laws for a in law.parsed.atoms()}, "of the laws")
    first = None
    for n, law in enumerate(laws, 1):
        with named(f"{file}: law {n} ({law.label})"):
            m = monitor(law.parsed, backend, alphabet)
            for i, letter in enumerate(letters, 1):
                if m.step(letter) == Verdict.VIOLATED:
                    if first is None or i < first[0]:
                        first = (i, law, letter)
                    break
    if first is None:
        typer.echo(f"no law violated in {len(letters)} steps ({len(laws)} laws)")
        return
    i, law, letter = first
    typer.echo(f"step {i}: violated {law.describe()}")
    typer.echo(f"  letter: {', '.join(sorted(letter & law.parsed.atoms())) or '(none of its atoms)'}")
    raise typer.Exit(1)


@laws_app.command("dot")
def laws_dot(file: Path = typer.Argument(..., help="law file"),
             out: Path = typer.Option(Path("."), help="folder for law_<n>.dot and .svg"),
             backend: str = typer.Option("auto", help="auto | native | spot"),
             crafter: bool = typer.Option(True, help="check atoms against Crafter's propositions and skills")):
    """Draw each law's automaton as DOT and SVG."""
    from .io import write_atomic
    from .logic import monitor, resolve_backend
    from .logic.laws import named
    from .logic.render import to_dot, write_svg
    resolve_backend(backend)
    laws, alphabet = _laws_and_alphabet(file, crafter)
    dots = []
    for n, law in enumerate(laws, 1):  # every law drawn before any file is written
        with named(f"{file}: law {n} ({law.label})"):
            dots.append(to_dot(monitor(law.parsed, backend, alphabet), law.label))
    if out.exists() and not out.is_dir():
        raise RegulaError(f"--out {out} is a file, not a folder")
    for n, (law, dot) in enumerate(zip(laws, dots), 1):
        path = out / f"law_{n}.dot"
        with _writing(path):
            write_atomic(path, dot)
        write_svg(dot, path.with_suffix(".svg"))
        typer.echo(f"{path} (+ .svg): {law.formula}")


@laws_app.command("crafter")
def laws_crafter(out: Path = typer.Argument(Path("laws/crafter_hard.yaml"))):
    """Write Crafter's hard laws (data.yaml's inventory preconditions and map affordances)."""
    from . import envs
    from .logic import save_laws
    crafter = envs.get("crafter")
    laws, skipped = crafter.precondition_laws()
    laws += crafter.affordance_laws()
    with _writing(out):
        save_laws(out, laws)
    typer.echo(f"{len(laws)} laws in {out}" + (f"; not expressible with the thresholds: {', '.join(skipped)}"
                                                if skipped else ""))


def _folder_for_writing(path: Path, what: str) -> None:
    """A folder a command will create or write into (`what`: the option and its value): fails
    now, in one line, if it or a parent is a file (rather than after the work)."""
    for part in (path, *path.parents):
        if part.exists():
            if not part.is_dir():
                raise RegulaError(f"{what}: {part} is a file, not a folder")
            return


def _first_few(names: list[str]) -> str:
    shown = ", ".join(names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _one_line(value: str) -> str:
    if not value.strip() or "\n" in value:
        raise typer.BadParameter(f"must be one line of text, got {value!r}")
    return value


@app.command()
def demos(episodes: Optional[int] = typer.Option(None, help="number of episodes (demos.episodes)"),
          goal: Optional[str] = typer.Option(None, help="an achievement, or `all` (demos.goal)"),
          seed: Optional[int] = typer.Option(None, help="first seed (seed)"),
          params: Path = typer.Option(Path("params.yaml"), help="params file"),
          out: Path = typer.Option(Path("data/demos"), help="episode directory", **FOLDER),
          metrics: Path = typer.Option(Path("metrics"), help="metrics directory", **FOLDER),
          resume: bool = typer.Option(False, help="keep finished episodes of a killed run"),
          force: bool = typer.Option(False, help="replace or delete episodes and metrics of other settings")):
    """Play scripted-expert episodes (the `demos` stage without Prefect or DVC).

    It writes where the stage does (data/demos, metrics/) unless told otherwise, so it
    refuses to replace or delete what another setting wrote there (the tracked
    demonstrations, say) without --force."""
    from rich.progress import Progress

    from . import demos as demos_mod
    p = load_params(params, {"demos.episodes": episodes, "demos.goal": goal, "seed": seed})
    _folder_for_writing(out, f"--out {out}")
    _folder_for_writing(metrics, f"--metrics {metrics}")
    clash = [] if force else demos_mod.overwrites(p, out, metrics)
    if clash:
        raise RegulaError(f"this run would replace or delete {_first_few([str(c) for c in clash])}, written with "
                          f"other params; pass --force to overwrite, or --out DIR and --metrics DIR to write elsewhere")
    with Progress(transient=True) as bar:
        task = bar.add_task("episodes", total=p.demos.episodes)
        result = demos_mod.generate(p, out, metrics,
                                    progress=lambda done, total, s: bar.update(task, completed=done),
                                    resume=resume)
    typer.echo(f"{p.demos.episodes} episodes in {out}: success rate {result['success_rate']:.2f}, "
               f"Crafter score {result['crafter_score']:.2f}%; metrics in {metrics}/demos.json")


@app.command()
def report(root: Path = typer.Option(Path("."), help="project root with data/ and metrics/", **PROJECT),
           title: str = typer.Option("regula report", help="the report's heading", callback=_one_line)):
    """Render reports/report.md, its plots and reports/report.html from data/ and metrics/."""
    from . import report as report_mod, stages
    _folder_for_writing(root / "reports", f"--root {root}")
    try:
        path = report_mod.build_report(stages.Paths(root), title)
    except FileNotFoundError as exc:
        raise RegulaError(f"{exc.filename} not found: run `regula demos` or `dvc repro` first") from None
    typer.echo(f"report: {path}")


DIFF_FORMATS = ("auto", "json", "markdown", "table")
DIFF_TOLERANCE = 5e-5  # regula.diff.TOLERANCE (a test checks); the diff itself is imported on use


@app.command("diff")
def diff_cmd(a: str = typer.Argument("HEAD", help="a git revision or a DVC experiment name"),
             b: str = typer.Argument("workspace", help="a git revision, a DVC experiment name, or `workspace`"),
             kind: Optional[list[str]] = typer.Option(None, help="params | laws | dfas | dynamics | metrics | caches "
                                                              "(repeatable; default: all)"),
             output: str = typer.Option("auto", "--format", help="table | markdown | json; auto: a table on a "
                                                                 "terminal, Markdown into a pipe or a file"),
             tolerance: float = typer.Option(DIFF_TOLERANCE, min=0.0, help="numbers in metrics at most this far "
                                             "apart are the same (default: half a unit of the report's 4th decimal)"),
             root: Path = typer.Option(Path("."), help="the project (a git repository)", **PROJECT),
             backend: str = typer.Option("auto", help="logic backend for laws: auto | native | spot"),
             fill: str = typer.Option("auto", help="outputs a revision lacks in the local DVC cache: auto (fetch "
                                      "them from the DVC remote, else replay that revision's pipeline in a "
                                      "temporary worktree) | remote | replay | none (leave them out)")):
    """Compare the tracked artifacts of two revisions by meaning, params first; exit 1 if anything differs."""
    from .diff import KINDS, changed, diff
    from .diff.render import markdown, show
    from .errors import UnknownNameError
    from .logic import resolve_backend
    for k in kind or ():
        if k not in KINDS:
            raise UnknownNameError("kind", k, KINDS)
    if output not in DIFF_FORMATS:
        raise UnknownNameError("format", output, DIFF_FORMATS)
    resolve_backend(backend)
    result = diff(root, a, b, tuple(kind or KINDS), backend, tolerance, fill)
    for line in result["notes"] + result["unavailable"]:
        typer.echo(f"note: {line}", err=True)
    _print_result(result, output, markdown, lambda console: show(result, console))
    raise typer.Exit(1 if changed(result) else 0)


def _print_result(result: dict, output: str, markdown, show) -> None:
    """`result` in the format asked (DIFF_FORMATS): JSON, `markdown(result)`, or `show(console)`'s
    table; auto: a table on a terminal, Markdown into a pipe or a file."""
    from rich.console import Console

    if output == "auto":
        output = "table" if sys.stdout.isatty() else "markdown"
    if output == "json":
        typer.echo(json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False))
    elif output == "markdown":
        typer.echo(markdown(result))
    else:
        show(Console(file=sys.stdout))


@app.command()
def plan(goal: str = typer.Argument(..., help="an achievement, e.g. collect_diamond")):
    """Print the shortest high-level plan to an achievement, computed from data.yaml."""
    from . import envs
    steps = envs.get("crafter").shortest_plan(goal)
    for i, skill in enumerate(steps, 1):
        typer.echo(f"{i:3d}. {skill}")


@app.command()
def info():
    """List the skills, propositions and achievements of the Crafter adapter."""
    from . import envs
    crafter = envs.get("crafter")
    typer.echo("skills: " + ", ".join(crafter.skill_names()))
    typer.echo("propositions: " + ", ".join(crafter.proposition_names()))
    typer.echo("achievements: " + ", ".join(crafter.achievement_names()))


@app.command()
def play(seed: int = typer.Option(0, help="world seed", **SEED),
         record: Optional[Path] = typer.Option(None, help="write the session as a demonstration JSONL here",
                                               dir_okay=False),
         params: Optional[Path] = typer.Option(None, help="params file for `env` [default: params.yaml if "
                                                          "there is one, else the defaults]")):
    """Play Crafter in the terminal: on a terminal each key acts at once (`:` then a skill name
    and Enter for a skill), else each line is a key or a skill name; optionally record a
    demonstration."""
    from contextlib import nullcontext

    from . import envs, episodes, params as params_mod
    from .play import keys, lines, play as play_loop

    if params is None and not Path("params.yaml").exists():
        env = params_mod.validate({}).env.model_dump()
    else:
        env = load_params(params or Path("params.yaml"), {}).env.model_dump()
    if record is not None:
        _folder_for_writing(record.parent, f"--record {record}")
    world = envs.get("crafter").from_params(env, seed)
    with keys(sys.stdin, sys.stdout) if sys.stdin.isatty() else nullcontext(lines(sys.stdin)) as read:
        play_loop(world, read, sys.stdout)
    if record is not None:
        summary = {"seed": seed, "goal": "human", "success": False,
                   "end": "died" if world.dead else "player quit", "steps": world.steps,
                   "skills": len(world.events), "reward": round(world.reward_total, 3),
                   "achievements": sorted(world.unlocked), "first_step": {}, "first_skill": {}}
        episode = episodes.record(world, {"seed": seed, "source": "human"}, summary, "human")
        episodes.write_file(record, episode)  # never through episode_<seed>.jsonl: it may be a tracked one
        typer.echo(f"recorded {len(world.events)} steps to {record}")


@bench_app.command("env")
def bench_env(steps: int = typer.Option(2000, **COUNT), episodes: int = typer.Option(5, **COUNT)):
    """Primitive steps per CPU second: crafter.Env (with and without its image), the adapter's
    simulator and the adapter (`CrafterWorld.act`) on the same actions; and the expert's."""
    from .bench import bench_env as run
    result = run(steps, episodes)
    typer.echo(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}, indent=2))


@bench_app.command("minihack")
def bench_minihack(steps: int = typer.Option(2000, **COUNT), seed: int = typer.Option(0, **SEED)):
    """Primitive steps per CPU second on MiniHack's three tasks: the raw env and the adapter
    (`MiniHackEpisode.act`) on the same seeded moves."""
    from .bench import bench_minihack as run
    result = run(steps, seed)
    typer.echo(json.dumps({t: {k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()}
                           for t, r in result.items()}, indent=2))


@bench_app.command("expert")
def bench_expert(episodes: int = typer.Option(40, **COUNT), first_seed: int = typer.Option(100, **SEED),
                 goal: str = typer.Option("collect_diamond"),
                 shelter: bool = typer.Option(True, help="wall in for the night (--no-shelter: the old expert)")):
    """The scripted expert's success and how its episodes end, on consecutive seeds."""
    from .bench import expert_episodes
    result = expert_episodes(episodes, goal, first_seed=first_seed, shelter=shelter)
    typer.echo(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}, indent=2))


@bench_app.command("survival")
def bench_survival(episodes: int = typer.Option(100, **COUNT), first_seed: int = typer.Option(100, **SEED),
                   max_steps: int = typer.Option(10_000, **COUNT), goal: str = typer.Option("all"),
                   home: bool = typer.Option(False, help="build a home by water with plants round it when it can"),
                   retire: bool = typer.Option(False, help="with --home: stay there once it is built"),
                   commute: bool = typer.Option(False, help="build the home first (a cow eaten before when food is "
                                                "under 9, builds started until daylight 0.8) and pursue the goals "
                                                "on daytime trips from it, every night at home; no trips after "
                                                "1,500 steps without an unlock, and none with nothing left"),
                   skeleton_reflex: bool = typer.Option(False, help="meet a skeleton whose line of fire the player is in"),
                   ripe_wait: bool = typer.Option(False, help="with --commute: hungry at home, wait there for a plant "
                                                  "that ripens before food and health (down to 3) run out, "
                                                  "rather than go out for a cow"),
                   max_skills: int = typer.Option(0, help="high-level steps per episode (0: no budget; ltlcrit: 150)",
                                                  min=0),
                   workers: int = typer.Option(1, help="processes", **COUNT)):
    """The expert's long game: alive at the step budget, the death census, the pooled score
    (issue 34's bar: 75% alive at 10,000 steps, pooled >= 50.5; default seeds are dev worlds); with
    one achievement as --goal, how often and when it was reached (issue 34's diamond bar: 80%)."""
    from .bench import survival_episodes
    if retire and not home:
        raise typer.BadParameter("--retire needs --home (a home to retire to)", param_hint="--retire")
    if commute and retire:
        raise typer.BadParameter("--commute and --retire are two ways to live at home: pick one", param_hint="--commute")
    if ripe_wait and not commute:
        raise typer.BadParameter("--ripe-wait needs --commute (it keeps a commuter at home)", param_hint="--ripe-wait")
    # the commute as measured (docs/crafter.md): a cow before the build under food 9, builds
    # started until falling daylight 0.8, living on at home once nothing is left
    extra = {"commute": True, "live_on": True, "home_food": 9, "build_until": 0.8} if commute else {}
    if ripe_wait:
        from . import envs
        extra["ripe_wait"] = envs.get("crafter").RIPE_WAIT
    result = survival_episodes(episodes, first_seed, max_steps, goal, home=home or commute, retire=retire,
                               workers=workers, skeleton_reflex=skeleton_reflex, max_skills=max_skills, **extra)
    typer.echo(json.dumps(result, indent=2))


@bench_app.command("household")
def bench_household(repeats: int = typer.Option(3, **COUNT), k: int = typer.Option(5, **COUNT)):
    """Wall seconds per DFA of CEDAR's household tasks (Table 6; the paper: 18.548 s ± 14.289 per DFA),
    each task's median of REPEATS runs after MiniLM's load, with its calls, queries and rollouts."""
    from .bench import bench_household as run
    result = run(repeats, k)

    def rounded(v):
        return round(v, 3) if isinstance(v, float) else [rounded(x) for x in v] if isinstance(v, list) else \
            {a: rounded(b) for a, b in v.items()} if isinstance(v, dict) else v
    typer.echo(json.dumps(rounded(result), indent=2))


@bench_app.command("cedar-twin")
def bench_cedar_twin(params: Path = typer.Option(Path("params.yaml"), help="the params file"),
                     root: Path = typer.Option(None, help="an empty folder to run in (default: a temporary one)")):
    """CEDAR's LLM twin (cedar_skills_llm) from nothing: no recorded answer, rollout or expert replayed,
    every question to params' `llm` (with the local model: `regula llm serve-local -- regula bench
    cedar-twin`). Wall seconds, LLM calls by role, and per skill the formula teacher's calls (issue 37:
    all 10 skills in under an hour, at most 2 calls per DFA) beside the no-teacher pass."""
    import tempfile

    from .bench import bench_cedar_twin as run
    p = load_params(params, {})
    if root is not None and root.exists() and any(root.iterdir()):
        raise typer.BadParameter(f"{root} is not empty: the twin must start from no cache", param_hint="--root")
    with tempfile.TemporaryDirectory(prefix="cedar_twin_") as tmp:
        result = run(p, root or Path(tmp), progress=lambda line: typer.echo(line, err=True))
    typer.echo(json.dumps(result, indent=2))


@cache_app.command("stats")
def cache_stats(path: Path = typer.Argument(Path("data/cache/llm"), help="a cache folder")):
    """Entries per model, endpoint, role and stage; tokens; corrupt entries; and `ledger`: every
    call made, failed runs' included (calls.jsonl)."""
    from .llm.accounting import read_ledger
    from .llm.cache import LEDGER, QueryCache
    out = {root.name: {**QueryCache(root).stats(), "ledger": read_ledger(root / LEDGER)}
           for root in _stage_folders(path)}
    typer.echo(json.dumps(out, indent=2, sort_keys=True))


@cache_app.command("verify")
def cache_verify(path: Path = typer.Argument(Path("data/cache/llm"), help="a cache folder")):
    """Read every entry and check its shape and key; list the problems (exit 1 if any)."""
    from .llm.cache import QueryCache
    n, bad = 0, []
    for root in _stage_folders(path):
        got = QueryCache(root).verify()
        n, bad = n + got[0], bad + got[1]
    for line in bad:
        typer.echo(line)
    typer.echo(f"{n} entries, {len(bad)} corrupt")
    raise typer.Exit(1 if bad else 0)


@cache_app.command("merge")
def cache_merge(source: Path = typer.Argument(..., help="cache folder to copy from"),
                target: Path = typer.Argument(..., help="cache folder to copy into")):
    """Union: copy into TARGET every entry of SOURCE it lacks (per stage folder). Where both
    hold a key, the entry whose canonical JSON sorts first is kept, whichever way you merge;
    each key whose answers differ is printed as a conflict with both answers."""
    from .llm.cache import merge
    totals = {"copied": 0, "already_there": 0, "conflicts": 0}
    for root in _stage_folders(source):
        got = merge(root, target / root.relative_to(source))
        for c in got["conflicts"]:
            typer.echo(f"conflict {root.relative_to(source) / c['key']}: kept {c['kept']!r}, dropped {c['dropped']!r}")
        totals = {k: totals[k] + (len(got[k]) if k == "conflicts" else got[k]) for k in totals}
    typer.echo(json.dumps(totals, sort_keys=True))


def _stage_folders(path: Path) -> list[Path]:
    """A cache root holds one folder per stage; a stage folder holds two-letter shards."""
    from .llm.cache import CacheError
    if not path.exists():
        raise CacheError(f"LLM cache folder {path} does not exist")
    if not path.is_dir():
        raise CacheError(f"LLM cache folder {path} is not a folder")
    subs = [p for p in sorted(path.iterdir()) if p.is_dir()]
    if not subs or all(len(p.name) == 2 for p in subs):
        return [path]
    return subs


@llm_app.command("stub-server")
def llm_stub_server(port: int = typer.Option(8080, min=0, max=65535, help="port on 127.0.0.1 (0: any free one)"),
                    model: str = typer.Option("regula-stub", help="the one model it serves (set llm.model to it)")):
    """Serve an OpenAI-compatible endpoint on 127.0.0.1 that answers every role's prompt from the
    rule-grounded stand-ins (to try `openai` backends offline)."""
    import time as _time

    from .llm.stub_server import StubLLMServer
    try:
        server = StubLLMServer(port=port, model=model).start()
    except OSError as exc:  # the port is taken, or not ours to bind
        raise RegulaError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    typer.echo(f"stub LLM at {server.base_url}, model {server.model} (Ctrl-C to stop)")
    try:
        while True:
            _time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


@llm_app.command("serve-local")
def llm_serve_local(port: int = typer.Option(8080, min=0, max=65535, help="port on 127.0.0.1 (0: any free one)"),
                    threads: int = typer.Option(1, help="CPU threads for the model", **COUNT),
                    command: Optional[list[str]] = typer.Argument(None, help="a command to serve (after --)")):
    """Serve SmolLM2-135M-Instruct offline (OpenAI-compatible, on 127.0.0.1; needs `make
    llm-local`): until Ctrl-C, or around COMMAND (`regula llm serve-local -- dvc repro`), exiting
    with its status. The server stops in every case."""
    import subprocess

    from .children import sigterm_as_exit, stop
    from .llm.local_server import MODEL, LocalModelError, LocalModelServer
    with sigterm_as_exit(), LocalModelServer(port=port, threads=threads) as server:
        typer.echo(f"local model {MODEL} at {server.base_url}; in params.yaml:\n"
                   f"  llm:\n    base_url: {server.base_url}\n    model: {MODEL}", err=bool(command))
        if command:
            proc = subprocess.Popen(command)
            try:
                code = proc.wait()
            except BaseException:  # Ctrl-C (the command had it too) or SIGTERM: it ends before the server
                stop(proc)
                raise
            raise typer.Exit(code if code >= 0 else 128 - code)  # killed by signal N: 128 + N, as shells say
        typer.echo("(Ctrl-C to stop)")
        try:
            code = server.proc.wait()
        except KeyboardInterrupt:
            return
        raise LocalModelError(f"the local model server exited with status {code}; its last lines: "
                              f"{server.log_tail()}")


def _flows(module: str, args: list[str], root: Path) -> None:
    """`python -m flows.MODULE ARGS` in the project: flows/ is Prefect's (and DVC's) side, which
    the library does not import. Its exit status is this command's."""
    import subprocess

    from .children import sigterm_as_exit
    with sigterm_as_exit():
        proc = subprocess.Popen([sys.executable, "-m", f"flows.{module}", *args], cwd=root)
        try:
            code = proc.wait()
        except KeyboardInterrupt:  # it had the Ctrl-C too: let it stop what it started
            code = proc.wait()
        except SystemExit:  # SIGTERM: passed on, and waited for
            proc.terminate()
            proc.wait()
            raise
    raise typer.Exit(code if code >= 0 else 128 - code)


SCHEDULE_PORT = typer.Option(4200, min=1, max=65535, help="the local Prefect server's port (PREFECT_API_URL, "
                                                          "where set, names the server instead)")


@schedule_app.command("serve")
def schedule_serve(port: int = SCHEDULE_PORT,
                   root: Path = typer.Option(Path("."), help="the project (its prefect.toml, .prefect/)", **PROJECT)):
    """Run the schedules: a local Prefect server and a worker, until Ctrl-C (both stop, with any run)."""
    _flows("schedule", ["serve", "--port", str(port)], root)


@schedule_app.command("create")
def schedule_create(cron: Optional[str] = typer.Option(None, help="a cron expression, e.g. '0 3 * * *' (UTC)"),
                    interval: Optional[float] = typer.Option(None, help="or every this many seconds"),
                    set_: Optional[list[str]] = typer.Option(None, "--set", help="KEY=VALUE: a params.yaml "
                                                             "override for `dvc exp run -S` (repeatable)"),
                    name: str = typer.Option("pipeline", help="the schedule's name (lowercase, digits, dashes)"),
                    port: int = SCHEDULE_PORT,
                    root: Path = typer.Option(Path("."), help="the project to run (a DVC project in git)",
                                              **PROJECT)):
    """Run the pipeline as a DVC experiment on a schedule (needs `regula schedule serve` running)."""
    args = ["create", "--name", name, "--port", str(port), "--root", str(root.resolve())]
    args += ["--cron", cron] if cron is not None else []
    args += ["--interval", repr(interval)] if interval is not None else []
    for override in set_ or ():
        args += ["--set", override]
    _flows("schedule", args, root)


@schedule_app.command("list")
def schedule_list(port: int = SCHEDULE_PORT, root: Path = typer.Option(Path("."), **PROJECT)):
    """List the schedules: name, when, project, overrides."""
    _flows("schedule", ["list", "--port", str(port)], root)


@schedule_app.command("remove")
def schedule_remove(name: str = typer.Argument(..., help="a schedule's name (see `regula schedule list`)"),
                    port: int = SCHEDULE_PORT, root: Path = typer.Option(Path("."), **PROJECT)):
    """Remove a schedule (its experiments stay)."""
    _flows("schedule", ["remove", name, "--port", str(port)], root)


@exp_app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def exp_run(ctx: typer.Context, root: Path = typer.Option(Path("."), help="the project (the repository root)",
                                                          **PROJECT)):
    """`dvc exp run`, its -S overrides checked first, one Prefect server for all its stages.

    Every -S KEY=VALUE is laid over params.yaml as DVC would and validated by the schema: a bad
    one exits 2 with one line, before DVC touches params.yaml or any output. Every other option
    passes to `dvc exp run` (--name, --temp, --queue, targets, ...)."""
    _flows("exp", ["run", *ctx.args], root)


@exp_app.command("push")
def exp_push(git_remote: str = typer.Argument("origin", help="a git remote (name or URL)"),
             names: Optional[list[str]] = typer.Argument(None, help="experiments (default: every one)"),
             root: Path = typer.Option(Path("."), help="the project (the repository root)", **PROJECT)):
    """Share experiments: their git refs, their DVC-cached outputs and DVC's run cache."""
    _flows("exp", ["push", git_remote, *(names or [])], root)


@exp_app.command("pull")
def exp_pull(git_remote: str = typer.Argument("origin", help="a git remote (name or URL)"),
             names: Optional[list[str]] = typer.Argument(None, help="experiments (default: every one)"),
             root: Path = typer.Option(Path("."), help="the project (the repository root)", **PROJECT)):
    """Take a teammate's experiments: their git refs, DVC-cached outputs and DVC's run cache."""
    _flows("exp", ["pull", git_remote, *(names or [])], root)


@exp_app.command("show")
def exp_show(output: str = typer.Option("auto", "--format", help="table | markdown | json; auto: a table on a "
                                                                 "terminal, Markdown into a pipe or a file"),
             tolerance: float = typer.Option(DIFF_TOLERANCE, min=0.0, help="metrics at most this far apart are the "
                                             "same (as `regula diff`)"),
             root: Path = typer.Option(Path("."), help="the project (a git repository)", **PROJECT)):
    """Each experiment beside its baseline: the params it changed, the headline metrics that moved.

    Headline metrics are dvc.yaml's `metrics:` files; experiments are listed oldest first;
    `regula diff BASELINE NAME` shows everything else that differs."""
    from .errors import UnknownNameError
    from .experiments import compare, markdown, table
    if output not in DIFF_FORMATS:
        raise UnknownNameError("format", output, DIFF_FORMATS)
    result = compare(root, tolerance)
    for line in sorted({n for e in result["experiments"] for n in e["unavailable"]}):
        typer.echo(f"note: {line}", err=True)

    def show(console) -> None:
        console.width = min(console.width, 160)
        console.print(table(result) if result["experiments"] else markdown(result))
    _print_result(result, output, markdown, show)


BENCH_RUNNERS = ("default", "default_processes_2", "dask_1", "dask_2")  # flows.bench.RUNNERS (a test checks)


@bench_app.command("runners")
def bench_runners(episodes: int = typer.Option(8, help="expert episodes (seeds first-seed, +1, ...)", **COUNT),
                  max_steps: int = typer.Option(1000, help="primitive steps per episode", **COUNT),
                  first_seed: int = typer.Option(0, **SEED),
                  runner: Optional[list[str]] = typer.Option(
                      None, help="default | default_processes_2 | dask_1 | dask_2 (repeatable; default: all)")):
    """Rollouts/s of the demos stage's flow on Prefect's default runner and on a local Dask cluster
    of 1 and 2 workers, the same episodes each (cluster start-up included; and without it, from a
    run of the first episode alone), and whether they all wrote the same bytes. Runs `python -m
    flows.bench` (Prefect's side) from the repository root, under one Prefect server (`flows.serve`)
    unless PREFECT_API_URL names one."""
    import subprocess

    from .errors import RegulaError, UnknownNameError
    for name in runner or ():
        if name not in BENCH_RUNNERS:
            raise UnknownNameError("runner", name, BENCH_RUNNERS)
    if not Path("flows/bench.py").is_file():
        raise RegulaError("bench runners: run it from the repository root (it runs the pipeline's flows/)")
    command = [sys.executable, "-m", "flows.serve", sys.executable, "-m", "flows.bench", "runners",
               "--episodes", str(episodes), "--max-steps", str(max_steps), "--first-seed", str(first_seed)]
    for name in runner or ():
        command += ["--runner", name]
    raise typer.Exit(subprocess.call(command))


@bench_app.command("cache")
def bench_cache(entries: int = typer.Option(100_000, help="entries to write and look up", **COUNT)):
    """LLM cache writes/s and lookups/s at size, and a warm replay of a stage's questions."""
    from .bench import bench_cache as run
    typer.echo(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in run(entries).items()},
                          indent=2))


@bench_app.command("shared-cache")
def bench_shared_cache(processes: int = typer.Option(4, **COUNT), questions: int = typer.Option(300, **COUNT)):
    """PROCESSES processes ask the same QUESTIONS through one LLM cache folder (a local endpoint
    answering each call differently): calls made, and answers used that the cache does not hold."""
    from .bench import bench_shared_cache as run
    typer.echo(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in run(processes, questions).items()},
                          indent=2))


@bench_app.command("logic")
def bench_logic(steps: int = typer.Option(1000, **COUNT), laws: int = typer.Option(20, **COUNT)):
    """Law-step cost of the native engine and Spot on one workload, and their ratio. Warm: the
    fastest of 5 passes over the trace (one pass of 1,000 steps lasts milliseconds, and a
    preemption on a loaded machine moved the ratio by a fifth)."""
    from .bench import bench_logic as run
    typer.echo(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in run(steps, laws).items()},
                          indent=2))


# Each system's commands, from its own package: `register(app, bench)` adds its stage command
# and its benchmarks. One line per system.
SYSTEM_CLIS = (
    "regula.ltlcrit.cli",
    "regula.dive.cli",
    "regula.e2cl.cli",
    "regula.automata.cli",
    "regula.specs.cli",
)


def _add_systems() -> None:
    """The systems' commands, listed after `demos` (the stages, in pipeline order) and before the
    tools (report, diff, ...); their benchmarks after the shared ones."""
    at = 1 + next(i for i, c in enumerate(app.registered_commands) if c.callback is demos)
    tools = app.registered_commands[at:]
    del app.registered_commands[at:]
    for name in SYSTEM_CLIS:
        importlib.import_module(name).register(app, bench_app)
    app.registered_commands.extend(tools)


_add_systems()


def main(argv: list[str] | None = None) -> int:
    """The console entry (`regula`). A user's mistake, ours (RegulaError) or the command
    line's (Typer's usage errors), is one line on stderr and exit status 2, never a traceback."""
    try:
        code = app(args=argv, prog_name="regula", standalone_mode=False)
    except RegulaError as exc:
        typer.echo(f"error: {exc}", err=True)
        return 2
    except typer.TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # a bare group: its help, as Typer shows it
            typer.echo(exc.format_message(), err=True)
        else:
            typer.echo(f"error: {' '.join(exc.format_message().split())}", err=True)
        return exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("error: interrupted", err=True)
        return 130
    except OSError as exc:  # a file or folder a user named (or the disk): not a bug of ours
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"error: {where}{exc.strerror or exc}", err=True)
        return 2
    return code if isinstance(code, int) else 0
