"""Episode logs: one format and one store for every episode any agent plays.

An episode is one JSON Lines file (`episode_<seed>.jsonl`, one compact JSON object with sorted
keys per line):

* a header: `{"type": "episode", "format", "seed", "source" (who played: expert, explorer,
  human, ltlcrit:<actor>, dive:<condition>), "goal", "inputs" (a fingerprint of everything the
  episode depends on), "propositions" (the names its states are written in)}`;
* one line per high-level step: `{"type": "step", **the environment's step record (t, obs,
  skill, success, reason, cause, actions, steps, props_before, props_after, inventory,
  inventory_delta, unlocked, reward, primitives: one record per primitive action, with `hurt`
  (how much health it took and why) on those that took some), "by" (who chose the step: expert, survival,
  explorer, random, actor, ...), **what the agent adds (LTLCrit's refused, conflict,
  thought)}`. A failure's `cause` (None on success) is the environment's structured reason
  (`regula.envs.CAUSE_KINDS`); `reason` is the same for people;
* a summary line: `{"type": "summary", **how the episode went}` (the agent's own summary).

Files are written atomically (`regula.io`) once the episode ends, so a file that exists is
complete; their contents depend only on the episode's inputs (no clocks, no paths), so two runs
write the same bytes. Reading checks the shape and names the file and line of any damage.

`EpisodeStore` is a folder of episodes, one per seed, with the one resume rule every stage
uses: a complete file whose header `inputs` match the episode's inputs is kept; anything else
(missing, truncated, other inputs) is played again.
"""
from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .agents import SURVIVAL
from .errors import DataError, EmptyEpisodeError
from .io import sweep, write_jsonl
from .params import fingerprint

FORMAT = 3  # 3: a primitive that took health says how much and why (`hurt`)


def header(seed: int, source: str, inputs, propositions: list[str], goal: str = "") -> dict:
    """The header line; `inputs` (everything the episode depends on) is kept as its fingerprint."""
    return {"type": "episode", "format": FORMAT, "seed": seed, "source": source, "goal": goal,
            "inputs": fingerprint(inputs), "propositions": list(propositions)}


def steps(env, notes: dict | None = None, by: str = "") -> list[dict]:
    """The episode's step lines: each environment record with the agent's note for it
    (`regula.agents.run_episode` fills `notes`); a step without a note was chosen `by`."""
    notes = notes or {}
    return [{"type": "step", "by": by, **e.to_json(), **notes.get(i, {})} for i, e in enumerate(env.events)]


def unlocks_by(episodes: list[dict]) -> dict[str, int]:
    """Achievements unlocked over `episodes`, counted by who chose the step that unlocked them
    (each step's `by`: the agent, or a scripted part such as the survival layer)."""
    out: dict[str, int] = {}
    for ep in episodes:
        for s in ep["steps"]:
            if s["unlocked"]:
                out[s["by"]] = out.get(s["by"], 0) + len(s["unlocked"])
    return dict(sorted(out.items()))


def attribution(episodes: list[dict], survival: str = SURVIVAL) -> dict:
    """Whose unlocks: per achievement, the episodes that unlocked it (`unlocked`) and those of
    them whose unlocking step the agent's own decision chose (`own`), not the survival layer
    (`survival`: each step's `by`). A skill the survival layer interrupts is still its
    chooser's: an unlock belongs to whoever chose the step it came in. Achievements no episode
    unlocked are left out; the counts add over records (`add_attribution`)."""
    unlocked: dict[str, int] = {}
    own: dict[str, int] = {}
    for ep in episodes:
        for s in ep["steps"]:
            for a in s["unlocked"]:
                unlocked[a] = unlocked.get(a, 0) + 1
                if s["by"] != survival:
                    own[a] = own.get(a, 0) + 1
    return {"unlocked": dict(sorted(unlocked.items())), "own": dict(sorted(own.items()))}


def add_attribution(records) -> dict:
    """The `attribution` of several records' episodes together."""
    out: dict = {"unlocked": {}, "own": {}}
    for r in records:
        for kind in out:
            for a, k in r.get(kind, {}).items():
                out[kind][a] = out[kind].get(a, 0) + k
    return {kind: dict(sorted(v.items())) for kind, v in out.items()}


def episode(head: dict, step_lines: list[dict], summary: dict) -> dict:
    """The JSON-able episode: {"header", "steps", "summary"}."""
    return {"header": head, "steps": step_lines, "summary": {"type": "summary", **summary}}


def record(env, inputs, summary: dict, source: str, notes: dict | None = None, goal: str = "") -> dict:
    """An episode just played on `env`: header, its steps with the agent's notes, summary."""
    head = header(inputs["seed"], source, inputs, env.proposition_names(), goal or summary.get("goal", ""))
    return episode(head, steps(env, notes, by=source), summary)


NEVER_ACTED = ("the agent never acted (every action it chose failed at once or was refused), so {it} "
               "nothing; fix the agent or its settings before reporting it")


def check_moved(steps: int, stage: str, who: str, world: int) -> None:
    """Every reported episode took a primitive step: one that took none is an agent that never
    acted (each action refused or failing at once), an error rather than a failure counted."""
    if steps == 0:
        raise EmptyEpisodeError(f"{stage}: {who} on world {world} took 0 primitive steps: "
                                + NEVER_ACTED.format(it="the episode measures"))


# What `EpisodeStore.play` does with an episode that took no primitive step: `error`, raise; `row`,
# raise only when every episode of the call did (the row measures nothing), else return it for the
# caller to count apart (LTLCrit's actors: a short skill budget can leave a random or LLM actor
# on failing actions in some worlds, a result about the actor, not a broken row).
IDLE = ("error", "row")


def primitive_steps(ep: dict) -> int:
    """The primitive steps an episode took, from its step lines (every source writes them)."""
    return sum(s["steps"] for s in ep["steps"])


def path(directory: Path, seed: int) -> Path:
    return Path(directory) / f"episode_{seed:05d}.jsonl"


def write(directory: Path, ep: dict) -> Path:
    """Write an episode atomically to its file in `directory` (whole, or not at all)."""
    return write_file(path(directory, ep["header"]["seed"]), ep)


def write_file(file: Path, ep: dict) -> Path:
    """Write an episode atomically to `file` (whole, or not at all)."""
    return write_jsonl(file, [ep["header"], *ep["steps"], ep["summary"]], fsync=True)


HEADER_KEYS = ("format", "seed", "source", "goal", "inputs", "propositions")


def read(file: Path) -> dict:
    """Parse and check one episode file; errors name the file and the line."""
    file = Path(file)
    try:
        with open(file, encoding="utf-8") as fh:
            return _parse(file, fh)
    except UnicodeDecodeError:
        raise DataError(f"{file}: not UTF-8 text (an episode file is JSON lines)") from None
    except OSError as exc:
        raise DataError(f"{file}: cannot read it ({exc.strerror})") from None


def _check_header(file: Path, rec: dict) -> dict:
    missing = [k for k in HEADER_KEYS if k not in rec]
    if missing:
        raise DataError(f"{file}:1: the episode header lacks {', '.join(missing)}")
    if rec["format"] != FORMAT:
        raise DataError(f"{file}:1: episode format {rec['format']!r}, this version reads format {FORMAT}; "
                        f"rerun the stage that wrote it")
    return rec


def _parse(file: Path, fh) -> dict:
    head, step_lines, summary = None, [], None
    for n, line in enumerate(fh, 1):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{file}:{n}: not valid JSON ({exc.msg})") from None
        kind = rec.get("type") if isinstance(rec, dict) else None
        if n == 1 and kind != "episode":
            raise DataError(f"{file}:1: expected the episode header, got {kind!r}")
        if summary is not None:
            raise DataError(f"{file}:{n}: a {kind!r} line after the summary line")
        if kind == "episode" and n == 1:
            head = _check_header(file, rec)
        elif kind == "step":
            step_lines.append(rec)
        elif kind == "summary":
            summary = rec
        else:
            raise DataError(f"{file}:{n}: unknown record type {kind!r}")
    if head is None:
        raise DataError(f"{file}: empty file")
    if summary is None:
        raise DataError(f"{file}: truncated (no summary line after line {len(step_lines) + 1})")
    return {"header": head, "steps": step_lines, "summary": summary}


_FORKED: Callable | None = None  # in a `forked_map` worker: the function it calls


def _set_forked(fn: Callable) -> None:
    global _FORKED
    _FORKED = fn


def _call_forked(item):
    return _FORKED(item)


def forked_map(fn: Callable, items: list, workers: int = 1) -> Iterator:
    """`fn` over `items`, results in the order of `items`, each as soon as it and those before it
    are done: here when `workers` is 1 (or one item, no `fork` on this system, or this process a
    daemon, as a Dask worker is, which may start none: its cluster runs the units at once), else in
    `workers` forked processes. A worker inherits `fn` as it is (a closure needs no pickling)
    and the process's state at the fork; the results are pickled back. So `fn` must return
    plain data and depend on its item alone, never on what earlier calls left behind (no call
    sees another's). A closed generator (the caller stopped early) cancels the items not begun."""
    if workers <= 1 or len(items) < 2 or "fork" not in multiprocessing.get_all_start_methods() \
            or multiprocessing.current_process().daemon:
        yield from map(fn, items)
        return
    from concurrent.futures import ProcessPoolExecutor

    # A dead worker (killed for memory) is a BrokenProcessPool error, where a Pool would hang.
    with ProcessPoolExecutor(min(workers, len(items)), mp_context=multiprocessing.get_context("fork"),
                             initializer=_set_forked, initargs=(fn,)) as pool:
        try:
            yield from pool.map(_call_forked, items)
        finally:
            pool.shutdown(cancel_futures=True)


def read_all(directory: Path) -> list[dict]:
    """Every episode in a folder, by seed."""
    return [read(p) for p in sorted(Path(directory).glob("episode_*.jsonl"))]


class EpisodeStore:
    """A folder of episode files, one per seed, and the one way to resume playing them."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def path(self, seed: int) -> Path:
        return path(self.directory, seed)

    def write(self, ep: dict) -> Path:
        return write(self.directory, ep)

    def read_all(self) -> list[dict]:
        return read_all(self.directory)

    def finished(self, inputs: dict) -> dict | None:
        """The stored episode for exactly these inputs (`inputs["seed"]` names the file), or
        None: no file, a damaged or truncated one, or one played with other inputs."""
        try:
            ep = read(self.path(inputs["seed"]))
        except (OSError, DataError):
            return None
        return ep if ep["header"].get("inputs") == fingerprint(inputs) and ep["header"].get("format") == FORMAT \
            else None

    def tidy(self, seeds: Iterable[int]) -> None:
        """Remove the temporaries a killed run left, and the files of seeds not wanted now."""
        self.directory.mkdir(parents=True, exist_ok=True)
        sweep(self.directory)
        wanted = {self.path(s).name for s in seeds}
        for stale in self.directory.glob("episode_*.jsonl"):
            if stale.name not in wanted:
                stale.unlink()

    def play(self, inputs: list[dict], play: Callable[[dict], dict], *, resume: bool = True, work=None,
             name: str = "episode", cache: bool = False, progress: Callable | None = None,
             idle: str = "error", workers: int = 1, warm: Callable[[dict], object] | None = None) -> list[dict]:
        """Every episode of `inputs` (each a JSON-able dict with its "seed"), in their order:
        kept from its file when `resume` and `finished`, else played by `play(inputs) -> episode`
        and written as soon as it ends, so a killed run keeps every episode it finished.

        `work` (a `regula.stages.Work`) runs the plays as its units (`cache`: Prefect may
        return an earlier result for the same inputs and code). `progress(done, total,
        episode)` is told of each episode, kept or played. Returns the episodes as read back
        from their files, so a resumed run and a fresh one see the same data. An episode that took
        no primitive step (kept or played) is an `EmptyEpisodeError` naming its file; with
        `idle="row"` only when every episode did (`IDLE`). `workers` > 1 (without `work`): the
        plays run in that many forked processes (`forked_map`); `play` must then depend on its
        inputs alone, as every episode here does (seeded from its world), and ask no LLM (an
        answer's accounting would stay in the worker). `warm(inputs)`, with workers, runs here on
        each input to play before the workers fork: what it leaves in this process's caches
        (Crafter's generated worlds, envs/crafter/env.py: ~0.12 s each, ~1 ms once kept) every
        worker inherits, batch after batch, where each would otherwise build it again."""
        if idle not in IDLE:
            raise ValueError(f"idle must be one of {IDLE}, got {idle!r}")
        self.tidy(i["seed"] for i in inputs)
        kept = {i["seed"]: ep for i in inputs if resume and (ep := self.finished(i)) is not None}
        todo = [i for i in inputs if i["seed"] not in kept]
        if work is None:
            if warm is not None and workers > 1:
                for i in todo:
                    warm(i)
            played = forked_map(play, todo, workers)
        else:
            played = iter(work.map(play, todo, name=name, label=lambda i: f"seed={i['seed']}", cache=cache))
        out = []
        for n, i in enumerate(inputs, 1):
            ep = kept.get(i["seed"])
            if ep is None:
                ep = next(played)
                if ep["header"]["seed"] != i["seed"]:
                    raise DataError(f"{name}: asked for seed {i['seed']}, got seed {ep['header']['seed']}")
                ep = read(self.write(ep))
            if idle == "error":  # written first, so that the episode that never acted can be read
                check_moved(primitive_steps(ep), str(self.path(i["seed"])), ep["header"]["source"], i["seed"])
            out.append(ep)
            if progress:
                progress(n, len(inputs), ep)
        if out and not any(primitive_steps(ep) for ep in out):
            raise EmptyEpisodeError(f"{self.directory}: {out[0]['header']['source']} took 0 primitive steps on every "
                                    f"one of its {len(out)} worlds: " + NEVER_ACTED.format(it="the row measures"))
        return out
