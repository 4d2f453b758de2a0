"""The LTLCrit loop: rollouts -> critic -> laws -> rollouts, until nothing new is accepted or
the metric stops improving; every iteration's laws, critic verdicts and episodes are files.

Layout (per actor): `<laws_dir>/<actor>/iteration_<k>.yaml` (the laws iteration k ran under),
`<laws_dir>/<actor>/critic_<k>.json` (accepted, rejected with reasons, removed, notes),
`<runs_dir>/<actor>/iteration_<k>.jsonl` (a header, then one episode per line, appended as
each finishes). A rerun keeps the episodes whose header still matches (same laws, seeds,
settings), so a run killed halfway loses at most the episode in progress.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from regula import envs
from regula.io import write_atomic
from regula.logic.laws import save_laws
from regula.params import fingerprint

from .actors import Actor
from .critic import Evidence, from_demo
from .gate import gate
from .model import MILESTONES, CrafterModel
from .rollout import RolloutConfig, rollout, summarize

CRAFTER = envs.get("crafter")

FORMAT = 1


@dataclass(frozen=True)
class LoopConfig:
    seeds: tuple
    iterations: int = 5
    patience: int = 2
    hard_laws: bool = True
    critic_reads_demos: bool = True


@dataclass
class ActorRun:
    actor: str
    history: list = field(default_factory=list)  # one summary per iteration
    stop: str = ""
    laws: int = 0  # critic laws in the final set

    def to_json(self) -> dict:
        return asdict(self)


def _score(summary: dict) -> tuple:
    goal = summary["goal"]["task_actions"]
    return (summary["success_rate"] or 0.0, -(goal if goal is not None else 1e9))


def improve(actor: Actor, critic, model: CrafterModel, rcfg: RolloutConfig, cfg: LoopConfig,
            demos: list, laws_dir: Path, runs_dir: Path, progress=None) -> ActorRun:
    laws_dir, runs_dir = Path(laws_dir) / actor.name, Path(runs_dir) / actor.name
    laws_dir.mkdir(parents=True, exist_ok=True)
    runs_dir.mkdir(parents=True, exist_ok=True)
    hard = model.hard_laws() if cfg.hard_laws else []
    soft: list = []
    read = [{"origin": "demo", "seed": e["header"]["seed"], "log": [from_demo(s) for s in e["steps"]]}
            for e in demos] if cfg.critic_reads_demos else []
    conflicts: list = []
    run = ActorRun(actor.name)
    best, stale = None, 0
    for k in range(cfg.iterations + 1):
        laws = hard + soft
        if laws:
            save_laws(laws_dir / f"iteration_{k}.yaml", laws)
        episodes = _episodes(actor, laws, model, rcfg, cfg.seeds, runs_dir / f"iteration_{k}.jsonl",
                             lambda done, ep: progress and progress(actor.name, k, done, len(cfg.seeds), ep))
        summary = {"iteration": k, "critic_laws": len(soft), **summarize(episodes)}
        run.history.append(summary)
        score = _score(summary)
        if best is None or score > best:
            best, stale = score, 0
        else:
            stale += 1
        if k == cfg.iterations:
            run.stop = f"iteration budget ({cfg.iterations} critic rounds)"
            break
        if stale >= cfg.patience:
            run.stop = f"no improvement in {stale} iterations"
            break
        read += [{"origin": "rollout", "seed": e["seed"], "iteration": k, "log": e["log"]} for e in episodes]
        conflicts += [c for e in episodes for c in e["conflicts"]]
        evidence = Evidence(model, read, hard, soft, conflicts)
        proposed = critic.propose(evidence)
        verdict = gate(proposed, evidence, k, critic.name)
        report = {"iteration": k, "critic": critic.name, **verdict.to_json(),
                  "notes": sorted(set(proposed.notes))}
        write_atomic(laws_dir / f"critic_{k}.json", json.dumps(report, indent=1, sort_keys=True) + "\n")
        if not verdict.accepted and not verdict.removed:
            run.stop = f"converged: the critic's round {k} changed no law"
            break
        soft = verdict.laws
    run.laws = len(soft)
    return run


def _episodes(actor, laws, model, rcfg, seeds, path: Path, progress) -> list[dict]:
    header = {"format": FORMAT, "actor": actor.name, "inputs": fingerprint(
        [law.to_json() for law in laws], list(seeds), asdict(rcfg), model.goal, asdict(model.symbols))}
    done = _resume(path, header)
    if not done:
        write_atomic(path, json.dumps(header, sort_keys=True) + "\n")
    with path.open("a") as fh:
        for i, seed in enumerate(seeds, 1):
            if seed not in done:
                done[seed] = rollout(actor, laws, seed, model, rcfg)
                fh.write(json.dumps(done[seed], sort_keys=True) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            progress(i, done[seed])
    return [done[s] for s in seeds]


def _resume(path: Path, header: dict) -> dict:
    """Finished episodes of an earlier run with the same inputs; a torn last line is dropped."""
    if not path.exists():
        return {}
    lines = path.read_text().splitlines()
    try:
        if not lines or json.loads(lines[0]) != header:
            return {}
    except json.JSONDecodeError:
        return {}
    out, good = {}, [lines[0]]
    for line in lines[1:]:
        try:
            ep = json.loads(line)
        except json.JSONDecodeError:
            break  # the line a killed run was writing
        out[ep["seed"]] = ep
        good.append(line)
    if len(good) < len(lines):
        write_atomic(path, "\n".join(good) + "\n")
    return out


def expert_baseline(model: CrafterModel, seeds, rcfg: RolloutConfig, progress=None) -> list[dict]:
    """The scripted expert on the same worlds, measured the same way."""
    out = []
    for i, seed in enumerate(seeds, 1):
        world = CRAFTER.make(seed, length=rcfg.length, symbols=model.symbols,
                             max_skill_steps=rcfg.max_skill_steps, explore_steps=rcfg.explore_steps)
        expert = CRAFTER.Expert(world, CRAFTER.ExpertConfig(goal=model.goal, max_steps=rcfg.max_steps,
                                            max_skills=rcfg.max_skills))
        result = expert.play()
        first_step = {a: j for j, p in enumerate(world.primitive_log, 1) for a in p["unlocked"]}
        actions = task = 0
        first_actions, first_task = {}, {}
        for k, ev in enumerate(world.events):
            upkeep = k in expert.reflex_events  # drinking, eating, fighting, walling in: as the actors' upkeep
            actions += not upkeep
            task += not upkeep and model.is_task_action(ev.skill)
            for a in ev.unlocked:
                first_actions.setdefault(a, actions)
                first_task.setdefault(a, task)
        out.append({"seed": seed, "success": result.success, "end": result.end, "steps": result.steps,
                    "milestones": {name: {"step": first_step.get(a), "actions": first_actions.get(a),
                                          "task_actions": first_task.get(a)}
                                   for name, a in {**MILESTONES, "goal": model.goal}.items()}})
        if progress:
            progress("expert", 0, i, len(seeds), out[-1])
    return out
