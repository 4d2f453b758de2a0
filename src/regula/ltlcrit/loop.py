"""The LTLCrit loop: rollouts -> critic -> laws -> rollouts, until nothing new is accepted or
the metric stops improving; every iteration's laws, critic verdicts and episodes are files.

Layout (per run: an actor's name, `<actor>_demos` for its demos ablation):
`<laws_dir>/<actor>/iteration_<k>.yaml` (the laws iteration k ran under),
`<laws_dir>/<actor>/critic_<k>.json` (accepted, rejected with reasons, removed, notes),
`<runs_dir>/<actor>/iteration_<k>/episode_<seed>.jsonl` (one `regula.episodes` file per
episode, written as each finishes); the expert baseline's in `<runs_dir>/expert/`. A rerun
keeps the episodes whose inputs still match (same laws, seed, settings), so a run killed
halfway loses at most the episode in progress.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from regula import envs, episodes as episodes_mod
from regula.io import write_atomic
from regula.logic.laws import save_laws
from regula.stages import world_seeds

from .actors import Actor
from .critic import Evidence
from .gate import gate
from .model import CrafterModel
from .rollout import RolloutConfig, milestones, rollout, rollout_inputs, summarize

if TYPE_CHECKING:
    from regula.params import Params

CRAFTER = envs.get("crafter")


@dataclass(frozen=True)
class LoopConfig:
    """The critic's rounds (`ltlcrit`'s iterations, patience, hard_laws) on the evaluation worlds;
    `workers`: processes that play a round's episodes (never in an episode's inputs: the
    episodes are the same for any count)."""

    seeds: tuple
    iterations: int
    patience: int
    hard_laws: bool
    workers: int

    @classmethod
    def from_params(cls, params: Params) -> "LoopConfig":
        cfg = params.ltlcrit
        return cls(seeds=world_seeds(params, cfg.worlds, cfg.episodes), iterations=cfg.iterations,
                   patience=cfg.patience, hard_laws=cfg.hard_laws, workers=cfg.workers)


@dataclass
class ActorRun:
    actor: str
    history: list = field(default_factory=list)  # one summary per iteration
    stop: str = ""
    laws: int = 0  # critic laws in the final set
    final: list = field(default_factory=list)  # the laws (hard and critic) the last iteration ran under

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "final"}


def _score(summary: dict) -> tuple:
    goal = summary["goal"]["task_actions"]
    return (summary["success_rate"] or 0.0, -(goal if goal is not None else 1e9))


def improve(actor: Actor, critic, model: CrafterModel, rcfg: RolloutConfig, cfg: LoopConfig,
            demos: list, laws_dir: Path, runs_dir: Path, progress=None, run_name: str = "") -> ActorRun:
    """The actor's iterations under the critic, which reads the actor's rollouts and, for the
    demos ablation, `demos` too (the paper's critic reads the actor's trajectories only)."""
    run_name = run_name or actor.name
    laws_dir, runs_dir = Path(laws_dir) / run_name, Path(runs_dir) / run_name
    laws_dir.mkdir(parents=True, exist_ok=True)
    runs_dir.mkdir(parents=True, exist_ok=True)
    hard = model.hard_laws() if cfg.hard_laws else []
    soft: list = []
    read = [{"origin": "demo", "seed": e["header"]["seed"], "steps": e["steps"]} for e in demos]
    conflicts: list = []
    run = ActorRun(run_name)
    best, stale = None, 0
    for k in range(cfg.iterations + 1):
        laws = run.final = hard + soft
        if laws:
            save_laws(laws_dir / f"iteration_{k}.yaml", laws)
        episodes = _episodes(actor, laws, model, rcfg, cfg, runs_dir / f"iteration_{k}",
                             lambda done, total, ep: progress and progress(run_name, k, done, total, ep["summary"]))
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
        read += [{"origin": "rollout", "seed": e["header"]["seed"], "iteration": k, "steps": e["steps"]}
                 for e in episodes]
        conflicts += [c for e in episodes for c in e["summary"]["conflicts"]]
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


def under_laws(actor: Actor, run: ActorRun, model: CrafterModel, rcfg: RolloutConfig, cfg: LoopConfig,
               runs_dir: Path, progress=None) -> list[dict]:
    """`actor` (the simplest baseline: random) under `run`'s final laws on the same worlds, its
    episodes in `<runs_dir>/<run>/<actor>_under_final_laws/`: what the laws achieve without the
    actor's choices."""
    name = f"{actor.name}_under_final_laws"
    return _episodes(actor, run.final, model, rcfg, cfg, Path(runs_dir) / run.actor / name,
                     lambda done, total, ep: progress and progress(f"{run.actor}: {name}", len(run.history) - 1,
                                                                   done, total, ep["summary"]))


def _episodes(actor, laws, model, rcfg, cfg: LoopConfig, directory: Path, progress) -> list[dict]:
    """One iteration's episodes, one file each; those whose inputs match are kept. An episode in
    which the actor never acted is counted apart (`summarize`'s idle_episodes); every one of
    them idle is an error (`episodes.IDLE`). They play in `cfg.workers` processes, except an
    LLM actor's (its client counts its calls here)."""
    inputs = [rollout_inputs(actor, laws, seed, model, rcfg) for seed in cfg.seeds]
    workers = 1 if getattr(actor, "client", None) is not None else cfg.workers
    return episodes_mod.EpisodeStore(directory).play(
        inputs, lambda i: rollout(actor, laws, i["seed"], model, rcfg), name="rollout", progress=progress,
        idle="row", workers=workers, warm=_warm)


def _warm(inputs: dict) -> None:
    """The episode's world generated here, before `workers` processes fork (`EpisodeStore.play`)."""
    CRAFTER.make(inputs["seed"])


def expert_inputs(model: CrafterModel, seed: int, rcfg: RolloutConfig) -> dict:
    """Everything one expert-baseline episode depends on."""
    return {"seed": seed, "goal": model.goal, "symbols": asdict(model.symbols), "length": rcfg.length,
            "max_skill_steps": rcfg.max_skill_steps, "explore_steps": rcfg.explore_steps,
            "max_steps": rcfg.max_steps, "max_skills": rcfg.max_skills}


def expert_episode(inputs: dict, model: CrafterModel) -> dict:
    """The scripted expert on one world, measured as the actors are (its survival layer's steps are
    left out of the action counts, as the actors' upkeep is)."""
    world = CRAFTER.make(inputs["seed"], length=inputs["length"], symbols=model.symbols,
                         max_skill_steps=inputs["max_skill_steps"], explore_steps=inputs["explore_steps"])
    expert = CRAFTER.Expert(world, CRAFTER.ExpertConfig(goal=model.goal, max_steps=inputs["max_steps"],
                                                        max_skills=inputs["max_skills"]))
    notes: dict = {}
    result = CRAFTER.play_episode(world, expert, notes)
    steps = episodes_mod.steps(world, notes)
    summary = {**asdict(result), "milestones": milestones(steps, model)}
    head = episodes_mod.header(inputs["seed"], "expert", inputs, world.proposition_names(), model.goal)
    return episodes_mod.episode(head, steps, summary)


def expert_baseline(model: CrafterModel, seeds, rcfg: RolloutConfig, directory: Path, progress=None,
                    workers: int = 1) -> list[dict]:
    """The scripted expert on the same worlds, measured the same way; its episodes are in
    `directory`. Returns their summaries (seed, success, end, steps, milestones, ...), each with
    its `unlocks_by` (`regula.episodes.unlocks_by`), its `attribution` (`regula.metrics`) and its
    death census (`deaths`, `alive`). They play in `workers` processes."""
    inputs = [expert_inputs(model, seed, rcfg) for seed in seeds]
    played = episodes_mod.EpisodeStore(directory).play(
        inputs, lambda i: expert_episode(i, model), name="expert", workers=workers, warm=_warm,
        progress=progress and (lambda done, total, ep: progress("expert", 0, done, total, ep["summary"])))
    return [{**ep["summary"], "unlocks_by": episodes_mod.unlocks_by([ep]),
             "attribution": episodes_mod.attribution([ep]), **CRAFTER.census([ep])} for ep in played]
