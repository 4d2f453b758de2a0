"""The `ltlcrit` stage without Prefect or DVC: expert baseline, every actor through the loop,
metrics beside the paper's tables. `flows/ltlcrit.py` and `regula ltlcrit` both call `run`."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

from regula import demos as demos_mod, envs, roles
from regula.atomic import write_atomic
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.logic import resolve_backend

from .loop import ActorRun, LoopConfig, expert_baseline, improve
from .model import MILESTONES, CrafterModel
from .rollout import RolloutConfig, milestone_summary

CRAFTER = envs.get("crafter")

# The paper's numbers (Gokhale et al., Tables 1 and 2; Minecraft, 5 runs each): mean primitive
# actions to each subgoal, and failed / critic-blocked action rates.
PAPER_TABLE1 = {  # subgoal -> (mean primitive actions, runs that reached it)
    "SayCan": {"wood tool": (None, "0/5"), "stone tool": (None, "0/5"), "iron tool": (None, "0/5"),
               "diamond": (None, "0/5")},
    "SayCan + LTLCrit": {"wood tool": (12.6, "5/5"), "stone tool": (17.6, "5/5"), "iron tool": (37.8, "5/5"),
                         "diamond": (45.4, "5/5")},
    "InnerMonologue": {"wood tool": (12.2, "5/5"), "stone tool": (18.2, "5/5"), "iron tool": (43.25, "4/5"),
                       "diamond": (45.5, "4/5")},
    "InnerMonologue + LTLCrit": {"wood tool": (9.4, "5/5"), "stone tool": (14.4, "5/5"), "iron tool": (32.0, "5/5"),
                                 "diamond": (35.8, "5/5")},
}
PAPER_TABLE2 = {"InnerMonologue": {"failed_actions_pct": 23.0, "critic_blocked_pct": None},
                "InnerMonologue + LTLCrit": {"failed_actions_pct": 4.5, "critic_blocked_pct": 15.0}}


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
    root: Path
    model: CrafterModel
    rollout: RolloutConfig
    loop: LoopConfig
    accounting: Accounting
    client: LLMClient | None
    critic: object

    @property
    def seeds(self) -> tuple:
        return self.loop.seeds


def context(params: dict, root: Path) -> Context:
    check(params)
    root = Path(root)
    cfg = params["ltlcrit"]
    rcfg = RolloutConfig(max_skills=cfg["max_skills"], max_steps=cfg["max_steps"], max_replans=cfg["max_replans"],
                         upkeep=cfg["upkeep"], length=params["env"]["length"],
                         max_skill_steps=params["env"]["skills"]["max_steps"],
                         explore_steps=params["env"]["skills"]["explore_steps"],
                         backend=resolve_backend(params["logic"]["backend"]))
    lcfg = LoopConfig(seeds=tuple(range(cfg["seed"], cfg["seed"] + cfg["episodes"])), iterations=cfg["iterations"],
                      patience=cfg["patience"], hard_laws=cfg["hard_laws"],
                      critic_reads_demos=cfg["critic_reads_demos"])
    accounting, client = Accounting(), None
    if roles.uses_llm("critic", cfg["critic"]) or any(roles.uses_llm("actor", a) for a in cfg["actors"]):
        llm = LLMConfig.from_params({**params["llm"], "cache_dir": str(root / params["llm"]["cache_dir"])})
        client = LLMClient(llm.replace(max_tokens=cfg["max_tokens"]), "ltlcrit", accounting)
    critic = roles.make("critic", cfg["critic"], client=client)
    return Context(params, root, model_from(params), rcfg, lcfg, accounting, client, critic)


def run_expert(ctx: Context, progress=None) -> list[dict]:
    return expert_baseline(ctx.model, ctx.seeds, ctx.rollout, progress)


def run_actor(ctx: Context, name: str, progress=None) -> ActorRun:
    demos = (demos_mod.read_episodes(ctx.root / "data" / "demos")
             if ctx.loop.critic_reads_demos else [])
    actor = roles.make("actor", name, client=ctx.client, model=ctx.model, history=ctx.params["ltlcrit"]["history"])
    return improve(actor, ctx.critic, ctx.model, ctx.rollout, ctx.loop, demos,
                   ctx.root / "data" / "laws" / "ltlcrit", ctx.root / "data" / "ltlcrit", progress)


def run(params: dict, root: Path, progress=None) -> dict:
    ctx = context(params, root)
    expert = run_expert(ctx, progress)
    runs = {name: run_actor(ctx, name, progress) for name in params["ltlcrit"]["actors"]}
    return metrics(ctx.model, ctx.seeds, expert, runs, params["ltlcrit"], ctx.accounting.to_dict())


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


def table_rows(m: dict) -> list[dict]:
    """One row per actor and condition (and the expert): Table 1 and Table 2 quantities."""
    rows = []

    def row(actor, condition, s):
        r = {"actor": actor, "condition": condition, "success_rate": s["success_rate"]}
        for name in MILESTONES:
            r[f"{name} steps"] = s[name]["steps"]
            r[f"{name} reached"] = s[name]["reached"]
        r["goal actions"] = s["goal"]["actions"]
        r["goal task actions"] = s["goal"]["task_actions"]
        r["task actions / optimum"] = (round(s["goal"]["task_actions"] / m["optimum"]["goal"], 3)
                                       if s["goal"]["task_actions"] is not None else None)
        for k in ("failed_actions_pct", "critic_blocked_pct", "hard_blocked_pct", "critic_laws"):
            r[k] = s.get(k)
        return r

    rows.append(row("expert", "scripted", m["expert"]))
    for name, a in m["actors"].items():
        rows.append(row(name, "without critic", a["without_critic"]))
        rows.append(row(name, f"with critic ({a['iterations']} rounds)", a["with_critic"]))
    return rows


def write_metrics(m: dict, metrics_dir: Path) -> None:
    metrics_dir = Path(metrics_dir)
    metrics_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(metrics_dir / "ltlcrit.json", json.dumps(m, indent=2, sort_keys=True) + "\n")
    rows = [{"actor": name, **{k: v for k, v in h.items() if not isinstance(v, dict) and k != "success_seeds"},
             **{f"{ms} steps": h[ms]["steps"] for ms in list(MILESTONES)},
             "goal task actions": h["goal"]["task_actions"]}
            for name, a in m["actors"].items() for h in a["history"]]
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    write_atomic(metrics_dir / "ltlcrit.csv", buf.getvalue())
