"""The `ltlcrit` stage without Prefect or DVC: expert baseline, every actor through the loop,
its metrics. `python -m flows ltlcrit` (the DVC stage) and `regula ltlcrit` both call `run`."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from regula import demos as demos_mod, envs, roles, stages
from regula.io import write_csv
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.llm.accounting import merge
from regula.logic import resolve_backend
from regula.episodes import add_attribution
from regula.metrics import with_attributed_scores
from regula.stages import Paths, Work, one

from . import hard_facts
from .loop import ActorRun, LoopConfig, expert_baseline, improve, under_laws
from .model import MILESTONES, CrafterModel
from .rollout import RolloutConfig, milestone_summary, summarize

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.ltlcrit.params import Ltlcrit
    from regula.params import Params

CRAFTER = envs.get("crafter")


def model_from(params: Params) -> CrafterModel:
    """The abstract model from params (symbols from `env.symbols`, the goal from `ltlcrit.goal`)."""
    return CrafterModel(CRAFTER.symbols(params.env.model_dump()), goal=params.ltlcrit.goal)


def check(params: Params) -> None:
    """What the params schema cannot know, before any episode is played: whether the logic
    backend runs here (`spot` needs `import spot` to work), and that the goal is one
    achievement (CrafterModel's milestones)."""
    resolve_backend(params.logic.backend)
    model_from(params)


@dataclass
class Context:
    """Everything the stage's parts need, built from params (cheap; each Prefect task builds one)."""

    params: Params
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


def context(params: Params, paths: Paths) -> Context:
    check(params)
    cfg = params.ltlcrit
    rcfg = RolloutConfig.from_params(params, backend=resolve_backend(params.logic.backend))
    lcfg = LoopConfig.from_params(params)
    accounting, client = Accounting(), None
    if roles.uses_llm("critic", cfg.critic) or any(roles.uses_llm("actor", a) for a in _actors(cfg)):
        llm = LLMConfig.from_params(params.llm, cache_dir=str(paths.llm_cache(params)))
        client = LLMClient(llm.replace(max_tokens=cfg.max_tokens), paths.stage, accounting)
    critic = roles.make("critic", cfg.critic, client=client, efficiency=cfg.efficiency)
    return Context(params, paths, model_from(params), rcfg, lcfg, accounting, client, critic)


def _actors(cfg: Ltlcrit) -> list[str]:
    return [*cfg.actors, *cfg.demos_ablation]


# A demos-ablation run is named after its actor with this suffix (its laws, episodes, metrics).
DEMOS = "_demos"


def run_expert(ctx: Context, progress=None) -> list[dict]:
    return expert_baseline(ctx.model, ctx.seeds, ctx.rollout, ctx.paths.data / ctx.paths.stage / "expert", progress,
                           ctx.loop.workers)


def run_actor(ctx: Context, name: str, progress=None, reads_demos: bool = False) -> ActorRun:
    """The actor improved by the critic; with `reads_demos`, the ablation whose critic reads
    data/demos besides the rollouts (run `<actor>_demos`)."""
    demos = demos_mod.read_episodes(ctx.paths.data / "demos") if reads_demos else []
    actor = roles.make("actor", name, client=ctx.client, history=ctx.params.ltlcrit.history)
    return improve(actor, ctx.critic, ctx.model, ctx.rollout, ctx.loop, demos,
                   ctx.paths.data / "laws" / ctx.paths.stage, ctx.paths.data / ctx.paths.stage, progress,
                   run_name=name + DEMOS if reads_demos else name)


# The baseline every run with a critic is set beside: this actor under the run's final laws.
BASELINE = "random"


def run_baseline(ctx: Context, run: ActorRun, progress=None) -> dict | None:
    """`BASELINE` under `run`'s final laws on the same worlds (its summary, with `pairs`: per
    world whether the run's last iteration and the baseline reached the goal), or None where
    the critic changed no law or the run is the baseline's own (the same actor under the same
    laws plays the same episodes)."""
    if len(run.history) < 2 or run.actor == BASELINE:
        return None
    episodes = under_laws(roles.make("actor", BASELINE), run, ctx.model, ctx.rollout, ctx.loop,
                          ctx.paths.data / ctx.paths.stage, progress)
    mine, theirs = set(run.history[-1]["success_seeds"]), {e["summary"]["seed"] for e in episodes
                                                           if e["summary"]["success"]}
    pairs = {"both": 0, "run_only": 0, "baseline_only": 0, "neither": 0}
    for seed in ctx.seeds:
        pairs[{(True, True): "both", (True, False): "run_only", (False, True): "baseline_only",
               (False, False): "neither"}[(seed in mine, seed in theirs)]] += 1
    return {"actor": BASELINE, "critic_laws": run.laws, **summarize(episodes), "pairs": pairs}


def prepare(params: Params, paths: Paths) -> None:
    check(params)
    if params.ltlcrit.demos_ablation:  # missing: stop before the expert baseline is played
        demos_mod.read_episodes(paths.data / "demos")
    # The stage's LLM cache folder is a DVC output: it must exist even when no call is made.
    (paths.llm_cache(params) / paths.stage).mkdir(parents=True, exist_ok=True)


def run(params: Params, paths: Paths, work: Work) -> dict:
    """The `ltlcrit` stage (or its twin, under `paths.stage`): the expert on the evaluation
    worlds (its episodes in data/<stage>/expert/), then each actor improved by the critic
    reading its rollouts, then each actor of `demos_ablation` with the critic also reading
    data/demos (data/laws/<stage>/, data/<stage>/), metrics/<stage>.json (headline, returned),
    <stage>_detail.json and <stage>.csv (see `write_metrics`). Each run is one unit of work with a
    context of its own, as an actor run alone has."""
    def progress(actor: str, iteration: int, done: int, total: int, episode: dict) -> None:
        what = "expert baseline" if actor == "expert" else f"{actor}, iteration {iteration}"
        work.progress(f"{paths.stage}: {what}: episode {done}/{total} (seed {episode['seed']}): {episode['end']} "
                      f"after {episode['steps']} steps")

    def improve_actor(unit: tuple[str, bool]) -> tuple[ActorRun, dict | None, dict]:
        ctx = context(params, paths)
        actor_run = run_actor(ctx, unit[0], progress, reads_demos=unit[1])
        first, last = actor_run.history[0], actor_run.history[-1]
        work.progress(f"{paths.stage}: {actor_run.actor}: stopped after {len(actor_run.history) - 1} critic rounds "
                      f"({actor_run.stop}); {actor_run.laws} critic laws; success "
                      f"{first['successes']}/{first['episodes']} -> {last['successes']}/{last['episodes']}")
        base = run_baseline(ctx, actor_run, progress)
        if base is not None:
            work.progress(f"{paths.stage}: {BASELINE} under {actor_run.actor}'s final laws: success "
                          f"{base['successes']}/{base['episodes']}")
        return actor_run, base, ctx.accounting.to_dict()

    ctx = context(params, paths)
    cfg = params.ltlcrit
    # A context of its own, as each actor's unit: a unit may run in another process (a Dask
    # worker), and a context holds what does not travel (the LLM accounting's lock).
    expert = one(work, lambda: run_expert(context(params, paths), progress), name="expert-baseline")
    units = [(name, False) for name in cfg.actors] + [(name, True) for name in cfg.demos_ablation]
    runs, baselines, llm = {}, {}, {}
    for actor_run, base, accounting in work.map(improve_actor, units, name="improve-actor",
                                                label=lambda u: u[0] + DEMOS * u[1]):
        runs[actor_run.actor] = actor_run
        baselines[actor_run.actor] = base
        llm = merge(llm, accounting)
    m = metrics(ctx.model, ctx.seeds, expert, runs, params, llm, baselines)
    return write_metrics(m, paths.metrics, paths.stage)


def headline(m: dict) -> dict:
    """What metrics/ltlcrit.json holds (few numbers: `dvc exp show` shows each): the expert's
    success rate on the same worlds; per actor its success rate without the critic (iteration
    0) and with it (the last iteration), `BASELINE`'s under its final laws, and with the critic
    the share of its decisions the actor itself made and its task actions to the goal over the
    optimum; per demos-ablation run its success rate with the critic. The counts, intervals,
    the fallback's share and the ablation's baseline are in the detail."""
    out = {"expert_success_rate": m["expert"]["success_rate"]}
    for name, a in m["actors"].items():
        last = a["with_critic"]
        out.update({f"{name}_success_without_critic": a["without_critic"]["success_rate"],
                    f"{name}_success_with_critic": last["success_rate"],
                    **({f"{name}_{BASELINE}_under_final_laws_success": a["baseline"]["success_rate"]}
                       if a["baseline"] else {}),
                    f"{name}_actor_share": last["actor_share"],
                    f"{name}_task_actions_over_optimum": last["task_actions_over_optimum"]})
    for name, a in m["demos_ablation"].items():
        out[f"{name}_success_with_critic"] = a["with_critic"]["success_rate"]
    return out


def metrics(model: CrafterModel, seeds, expert: list, runs: dict, params: Params, llm: dict,
            baselines: dict | None = None) -> dict:
    """The stage's record: the worlds, the budget, the expert's summary and, per run (`actors`,
    and `demos_ablation` keyed `<actor>_demos`), iteration 0 (no critic), the last iteration
    (critic), every iteration's summary and `baseline`: `BASELINE` under the run's final laws
    (`run_baseline`; None where there is none). Every rate keeps its counts (successes or
    `<milestone>.reached` of `episodes`, the baseline's `pairs`) so that the report computes
    its interval."""
    baselines = baselines or {}
    cfg = params.ltlcrit

    def over_optimum(summary: dict) -> dict:
        task = summary["goal"]["task_actions"]
        return {**summary, "task_actions_over_optimum": round(task / model.optimum["goal"], 4)
                if task is not None else None}

    def record(run: ActorRun) -> dict:
        history = [over_optimum(h) for h in run.history]
        base = baselines.get(run.actor)
        return {"without_critic": history[0], "with_critic": history[-1], "iterations": len(history) - 1,
                "stop": run.stop, "critic_laws": run.laws, "history": history,
                "baseline": over_optimum(base) if base else None}

    ablation = {f"{name}{DEMOS}" for name in cfg.demos_ablation}
    return {"goal": model.goal, "worlds": cfg.worlds, "seeds": [seeds[0], seeds[-1]], "episodes": len(seeds),
            "critic_reads": hard_facts.RULE_READS, "critic": cfg.critic,
            "efficiency": None if roles.uses_llm("critic", cfg.critic) else cfg.efficiency,
            "fallback": cfg.fallback,
            "budget": cfg.model_dump(include={"iterations", "max_replans", "max_skills", "max_steps"}),
            "model": params.llm.model if roles.uses_llm("critic", cfg.critic) or any(
                roles.uses_llm("actor", a) for a in _actors(cfg)) else None,
            "optimum": model.optimum, "expert": {**over_optimum(milestone_summary(expert)),
                                                 "unlocks_by": _summed(e.get("unlocks_by", {}) for e in expert),
                                                 "attribution": add_attribution(e.get("attribution", {}) for e in expert),
                                                 **{k: _summed(e.get(k, {}) for e in expert) for k in ("deaths", "alive")}},
            "actors": {name: record(run) for name, run in runs.items() if name not in ablation},
            "demos_ablation": {name: record(run) for name, run in runs.items() if name in ablation},
            "llm": llm}


def _summed(counts) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return dict(sorted(out.items()))


def history_rows(m: dict) -> list[dict]:
    """metrics/ltlcrit.csv: one row per run (actor, or `<actor>_demos`) and iteration, the whole
    per-iteration summary (each milestone's fields as `<milestone> <field>`, the seeds that
    succeeded space-separated), then the run's baseline (`random under <run>'s final laws`, at
    the run's last iteration) where it has one."""
    rows = []
    for name, a in {**m["actors"], **m["demos_ablation"]}.items():
        labelled = [(name, h) for h in a["history"]]
        if a["baseline"]:
            labelled.append((f"{BASELINE} under {name}'s final laws", {**a["baseline"], "iteration": a["iterations"]}))
        for who, h in labelled:
            row = {"actor": who, **{k: v for k, v in h.items() if not isinstance(v, (dict, list)) and k != "actor"}}
            for ms in [*MILESTONES, "goal"]:
                for field in ("reached", "steps", "actions", "task_actions"):
                    row[f"{ms} {field.replace('_', ' ')}"] = h[ms][field]
            row["success seeds"] = " ".join(map(str, h["success_seeds"]))
            rows.append(row)
    return rows


def write_metrics(m: dict, metrics_dir: Path, stage: str = "ltlcrit") -> dict:
    """metrics/ltlcrit.json (the headline, returned), ltlcrit.csv (the per-iteration history of
    every run) and ltlcrit_detail.json (the record without the histories: worlds, budget,
    critic, fallback, the expert's summary and each run's first and last iteration, the LLM's
    accounting); a twin's under its own name."""
    write_csv(Path(metrics_dir) / f"{stage}.csv", history_rows(m))
    detail = with_attributed_scores(
        {**m, **{part: {name: {k: v for k, v in a.items() if k != "history"} for name, a in m[part].items()}
                 for part in ("actors", "demos_ablation")}})
    return stages.write_metrics(metrics_dir, stage, stages.headline_for(stage, headline(m), compares), detail)


def compares(key: str) -> bool:
    """What a twin's headline keeps: each actor's success with the critic's laws."""
    return key.endswith("_success_with_critic")
