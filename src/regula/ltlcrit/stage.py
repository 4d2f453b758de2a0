"""The `ltlcrit` stage without Prefect or DVC: expert baseline, every actor through the loop,
its metrics. `python -m flows ltlcrit` (the DVC stage) and `regula ltlcrit` both call `run`."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from regula import demos as demos_mod, envs, roles, stages
from regula.io import write_csv
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.llm.accounting import merge
from regula.logic import resolve_backend
from regula.stages import Paths, Work, one, world_seeds

from .loop import ActorRun, LoopConfig, expert_baseline, improve
from .model import MILESTONES, CrafterModel
from .rollout import RolloutConfig, milestone_summary

CRAFTER = envs.get("crafter")


def model_from(params: dict) -> CrafterModel:
    """The abstract model from params (symbols from `env.symbols`, the goal from `demos.goal`)."""
    return CrafterModel(CRAFTER.symbols(params["env"]), goal=params["demos"]["goal"])


def check(params: dict) -> None:
    """What the params schema cannot know, before any episode is played: whether the logic
    backend runs here (`spot` needs `import spot` to work), and that the goal is one
    achievement (CrafterModel's milestones; `demos.goal: all` is fine for the demos alone)."""
    resolve_backend(params["logic"]["backend"])
    model_from(params)


@dataclass
class Context:
    """Everything the stage's parts need, built from params (cheap; each Prefect task builds one)."""

    params: dict
    paths: Paths
    model: CrafterModel
    rollout: RolloutConfig
    loop: LoopConfig
    accounting: Accounting
    client: LLMClient | None
    critic: object

    @property
    def seeds(self) -> tuple:
        return self.loop.seeds


def context(params: dict, paths: Paths) -> Context:
    check(params)
    cfg = params["ltlcrit"]
    rcfg = RolloutConfig(max_skills=cfg["max_skills"], max_steps=cfg["max_steps"], max_replans=cfg["max_replans"],
                         upkeep=cfg["upkeep"], length=params["env"]["length"],
                         max_skill_steps=params["env"]["skills"]["max_steps"],
                         explore_steps=params["env"]["skills"]["explore_steps"],
                         backend=resolve_backend(params["logic"]["backend"]))
    lcfg = LoopConfig(seeds=world_seeds(params, "ltlcrit", "episodes"), iterations=cfg["iterations"],
                      patience=cfg["patience"], hard_laws=cfg["hard_laws"],
                      critic_reads_demos=cfg["critic_reads_demos"])
    accounting, client = Accounting(), None
    if roles.uses_llm("critic", cfg["critic"]) or any(roles.uses_llm("actor", a) for a in cfg["actors"]):
        llm = LLMConfig.from_params({**params["llm"], "cache_dir": str(paths.llm_cache(params))})
        client = LLMClient(llm.replace(max_tokens=cfg["max_tokens"]), paths.stage, accounting)
    critic = roles.make("critic", cfg["critic"], client=client)
    return Context(params, paths, model_from(params), rcfg, lcfg, accounting, client, critic)


def run_expert(ctx: Context, progress=None) -> list[dict]:
    return expert_baseline(ctx.model, ctx.seeds, ctx.rollout, ctx.paths.data / ctx.paths.stage / "expert", progress)


def run_actor(ctx: Context, name: str, progress=None) -> ActorRun:
    demos = (demos_mod.read_episodes(ctx.paths.data / "demos")
             if ctx.loop.critic_reads_demos else [])
    actor = roles.make("actor", name, client=ctx.client, model=ctx.model, history=ctx.params["ltlcrit"]["history"])
    return improve(actor, ctx.critic, ctx.model, ctx.rollout, ctx.loop, demos,
                   ctx.paths.data / "laws" / ctx.paths.stage, ctx.paths.data / ctx.paths.stage, progress)


def prepare(params: dict, paths: Paths) -> None:
    check(params)
    if params["ltlcrit"]["critic_reads_demos"]:  # missing: stop before the expert baseline is played
        demos_mod.read_episodes(paths.data / "demos")
    # The stage's LLM cache folder is a DVC output: it must exist even when no call is made.
    (paths.llm_cache(params) / paths.stage).mkdir(parents=True, exist_ok=True)


def run(params: dict, paths: Paths, work: Work) -> dict:
    """The `ltlcrit` stage (or its twin, under `paths.stage`): the expert on the evaluation
    worlds, then each actor improved by the critic (data/laws/ltlcrit/, data/ltlcrit/),
    metrics/ltlcrit.json (headline, returned), ltlcrit_detail.json and ltlcrit.csv (see
    `write_metrics`). Each actor is one unit of work with a context of its own, as an actor run
    alone has."""
    def progress(actor: str, iteration: int, done: int, total: int, episode: dict) -> None:
        what = "expert baseline" if actor == "expert" else f"{actor}, iteration {iteration}"
        work.progress(f"{paths.stage}: {what}: episode {done}/{total} (seed {episode['seed']}): {episode['end']} "
                      f"after {episode['steps']} steps")

    def improve_actor(name: str) -> tuple[ActorRun, dict]:
        ctx = context(params, paths)
        actor_run = run_actor(ctx, name, progress)
        work.progress(f"{paths.stage}: {name}: stopped after {len(actor_run.history) - 1} critic rounds "
                      f"({actor_run.stop}); {actor_run.laws} critic laws; success "
                      f"{actor_run.history[0]['success_rate']} -> {actor_run.history[-1]['success_rate']}")
        return actor_run, ctx.accounting.to_dict()

    ctx = context(params, paths)
    expert = one(work, lambda: run_expert(ctx, progress), name="expert-baseline")
    runs, llm = {}, {}
    names = params["ltlcrit"]["actors"]
    for name, (actor_run, accounting) in zip(names, work.map(improve_actor, names, name="improve-actor", label=str)):
        runs[name] = actor_run
        llm = merge(llm, accounting)
    m = metrics(ctx.model, ctx.seeds, expert, runs, params["ltlcrit"], llm)
    return write_metrics(m, paths.metrics, paths.stage)


def headline(m: dict) -> dict:
    """What metrics/ltlcrit.json holds: the expert's success rate, and per actor its success rate
    without and with the critic's laws and the issue's bar (`done_when`): the share of the
    expert's successful worlds it also wins, and task actions to the goal over the optimum."""
    out = {"expert_success_rate": m["expert"]["success_rate"]}
    for name, a in m["actors"].items():
        out.update({f"{name}_success_without_critic": a["without_critic"]["success_rate"],
                    f"{name}_success_with_critic": a["with_critic"]["success_rate"],
                    f"{name}_share_of_expert_worlds": a["done_when"]["share_of_expert_worlds"],
                    f"{name}_task_actions_over_optimum": a["done_when"]["task_actions_over_optimum"]})
    return out


def metrics(model: CrafterModel, seeds, expert: list, runs: dict, cfg: dict, llm: dict) -> dict:
    expert_ok = [e["seed"] for e in expert if e["success"]]
    out = {"goal": model.goal, "seeds": [seeds[0], seeds[-1]], "episodes": len(seeds),
           "critic": cfg["critic"], "critic_reads_demos": cfg["critic_reads_demos"],
           "optimum": model.optimum, "expert": {**milestone_summary(expert), "success_seeds": expert_ok},
           "actors": {}, "llm": llm}
    for name, run in runs.items():
        first, last = run.history[0], run.history[-1]
        out["actors"][name] = {"without_critic": first, "with_critic": last, "iterations": len(run.history) - 1,
                               "stop": run.stop, "critic_laws": run.laws, "history": run.history}
        out["actors"][name]["done_when"] = done_when(model, expert_ok, last, run)
    return out


def done_when(model: CrafterModel, expert_ok: list, last: dict, run) -> dict:
    """The issue's bar: success on >= 90% of the expert's successful worlds, and task actions to
    the goal <= 1.25x the shortest plan. Both readings of the first are given."""
    ok = set(last.get("success_seeds", []))
    on_expert = len(ok & set(expert_ok))
    task = last["goal"]["task_actions"]
    return {"expert_successes": len(expert_ok), "actor_successes": len(ok),
            "actor_on_expert_worlds": on_expert,
            "share_of_expert_worlds": round(on_expert / len(expert_ok), 4) if expert_ok else None,
            "successes_vs_expert": round(len(ok) / len(expert_ok), 4) if expert_ok else None,
            "task_actions_over_optimum": round(task / model.optimum["goal"], 4) if task is not None else None}


def history_rows(m: dict) -> list[dict]:
    """metrics/ltlcrit.csv: one row per actor and iteration, the whole per-iteration summary
    (each milestone's fields as `<milestone> <field>`, the seeds that succeeded space-separated)."""
    rows = []
    for name, a in m["actors"].items():
        for h in a["history"]:
            row = {"actor": name, **{k: v for k, v in h.items() if not isinstance(v, (dict, list))},
                   **{f"{ms} steps": h[ms]["steps"] for ms in MILESTONES},
                   "goal task actions": h["goal"]["task_actions"]}
            for ms in [*MILESTONES, "goal"]:
                for field in ("reached", "steps", "actions", "task_actions"):
                    row.setdefault(f"{ms} {field.replace('_', ' ')}", h[ms][field])
            row["success seeds"] = " ".join(map(str, h["success_seeds"]))
            rows.append(row)
    return rows


def write_metrics(m: dict, metrics_dir: Path, stage: str = "ltlcrit") -> dict:
    """metrics/ltlcrit.json (the headline, returned), ltlcrit.csv (the per-iteration history of
    every actor) and ltlcrit_detail.json (the record without the history: goal, seeds, critic, the
    expert's and each actor's first and last iteration, `done_when`, the LLM's accounting); a
    twin's under its own name."""
    write_csv(Path(metrics_dir) / f"{stage}.csv", history_rows(m))
    detail = {**m, "actors": {name: {k: v for k, v in a.items() if k != "history"} for name, a in m["actors"].items()}}
    return stages.write_metrics(metrics_dir, stage, stages.headline_for(stage, headline(m), compares), detail)


def compares(key: str) -> bool:
    """What a twin's headline keeps: each actor's success with the critic's laws."""
    return key.endswith("_success_with_critic")
