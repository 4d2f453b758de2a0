"""The `dive` stage without Prefect or DVC: exploration episodes, discovery steps over the
demonstrations, verification, scores against data.yaml (the paper's Fig. 3-4, Table 5).

Discovery step i reads the first i demonstrations (the candidates of all steps so far are
the discovered set); the Verifier checks them against fresh experience: the same
demonstrations and the exploration episodes."""
from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from regula import demos as demos_mod, envs, episodes, roles, stages
from regula.errors import DataError
from regula.io import write_atomic, write_csv, write_jsonl
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.llm.accounting import merge
from regula.metrics import with_attributed_scores
from regula.stages import Paths, Work, one, world_seeds

from . import agent as agent_mod
from . import hierarchy
from .banks import build
from .dynamics import ground_truth, score
from .hallucinate import KINDS, inject
from .explore import explore_episode, explore_inputs
from .verify import Verifier

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.params import Params


def _warm(inputs: dict) -> None:
    """The episode's world generated here, before `dive.workers` processes fork (`EpisodeStore.play`)."""
    envs.get("crafter").make(inputs["seed"])


def exploration(params: Params, out_dir: Path, progress=None) -> list[dict]:
    """Exploration episodes, one file each (`regula.episodes`; resumed by their inputs)."""
    cfg = params.dive
    inputs = [explore_inputs(params.env.model_dump(), cfg.explore_seed + i, cfg.epsilon, cfg.explore_max_steps,
                             cfg.explore_max_skills) for i in range(cfg.explore_episodes)]
    return episodes.EpisodeStore(out_dir).play(
        inputs, explore_episode, name="explore", workers=cfg.workers, warm=_warm,
        progress=progress and (lambda done, total, ep: progress("explore", done, total, ep["summary"])))


def make_client(params: Params, paths: Paths, accounting: Accounting) -> LLMClient:
    llm = LLMConfig.from_params(params.llm, cache_dir=str(paths.llm_cache(params)))
    return LLMClient(llm.replace(max_tokens=params.dive.max_tokens), paths.stage, accounting)


def make_discoverer(params: Params, paths: Paths, accounting: Accounting, log=print):
    cfg = params.dive
    client = make_client(params, paths, accounting) if roles.uses_llm("discoverer", cfg.discoverer) else None
    return roles.make("discoverer", cfg.discoverer, client=client, samples=cfg.samples, seed=params.seed,
                      log=log)


def make_evolver(params: Params, paths: Paths, accounting: Accounting):
    name = params.dive.evolver
    client = make_client(params, paths, accounting) if roles.uses_llm("evolver", name) else None
    return roles.make("evolver", name, client=client)


def discover_and_verify(params: Params, demos: list[dict], explored: list[dict], discoverer,
                        progress=None) -> tuple[list[dict], dict, object]:
    """Per discovery step: (rows of P/R, final candidates by dynamic, final verdicts). Each
    step, `dive.inject` wrong candidates (`hallucinate.py`) per new discovered one join the
    candidates the Verifier checks; the discoverer never sees them."""
    if not demos:
        raise DataError("dive: data/demos has no episodes to discover from")
    cfg = params.dive
    verifier = Verifier(cfg.verify_samples, params.seed, cfg.chance)
    truth = ground_truth()
    found: dict = {}
    rows, verdicts = [], None
    steps = min(cfg.steps or len(demos), len(demos))
    for i in range(1, steps + 1):
        banks = build(demos[:i])
        own = [c for c in discoverer.discover(banks, step=i) if c.dynamic not in found]
        for c in own + inject(own, banks, cfg.inject, random.Random(f"inject:{params.seed}:{i}"), i):
            found.setdefault(c.dynamic, c)
        verdicts = verifier.verify(list(found.values()), build(demos[:i] + explored), step=i)
        within = set(banks.actions)
        injected = {d for d, c in found.items() if c.origin != "discovered"}
        d, v = set(found) - injected, {c.dynamic for c in verdicts.verified}
        row = {"step": i}
        for name, s in (("discovered", d), ("verified", v)):
            full, seen = score(s, truth), score(s, truth, within)
            row.update({f"{name}_n": full["found"], f"{name}_precision": full["precision"],
                        f"{name}_recall": full["recall"], f"{name}_recall_demonstrated": seen["recall"]})
        row.update({"injected_n": len(injected), "injected_verified": len(injected & v)})
        rows.append(row)
        if progress:
            progress("discover", i, steps, row)
    return rows, found, verdicts


def upper_levels(params: Params, demos: list[dict], explored: list[dict]) -> dict:
    """Objects, subtasks, subgoals (see hierarchy.py), for the metrics."""
    cfg = params.dive
    banks, fresh = build(demos), build(demos + explored)
    objects = hierarchy.object_relations(banks)
    verified_objects = objects & hierarchy.object_relations(build(explored))
    subtasks = hierarchy.subtask_dynamics(banks, fresh, cfg.samples, params.seed, cfg.chance)
    sequence = agent_mod.subgoal_sequence(banks.subgoals)
    return {"objects": {"discovered": sorted(" ".join(r).strip() for r in objects),
                        "verified": sorted(" ".join(r).strip() for r in verified_objects)},
            "subtasks": subtasks, "subtask_preconditions": hierarchy.score_subtasks(subtasks),
            "subgoals": sequence, "subgoal_order_violations": [list(p) for p in hierarchy.order_violations(sequence)]}


def metrics(rows: list[dict], found: dict, verdicts, banks_sizes: dict, params: Params, llm: dict) -> dict:
    """The learning half of the record. `discovered`: the discoverer's own candidates;
    `injected`: the wrong ones added to test the Verifier (how many, how many it rejected),
    `by_origin` per kind; `verified`: what the Verifier kept, and `verified.own` the part of it
    from the discoverer's own candidates; `verifier_on_own`: its verdicts on those, true and
    false apart. P and R against all of H† (`truth` facts)."""
    truth = ground_truth()
    origin = Counter(c.origin for c in found.values())
    rejected = Counter(r["candidate"].origin for r in verdicts.rejected)
    kept = Counter(c.origin for c in verdicts.verified)
    own = {d for d, c in found.items() if c.origin == "discovered"}
    own_kept = {c.dynamic for c in verdicts.verified if c.origin == "discovered"}
    own_score, last = score(own_kept, truth), rows[-1]
    injected = sum(origin[k] for k in KINDS)
    return {
        "discoverer": params.dive.discoverer, "inject": params.dive.inject, "steps": len(rows),
        "banks": banks_sizes, "truth": len(truth),
        "discovered": {"n": last["discovered_n"], "precision": last["discovered_precision"],
                       "recall": last["discovered_recall"]},
        "injected": {"n": injected, "rejected": sum(rejected[k] for k in KINDS)},
        "verified": {"n": last["verified_n"], "precision": last["verified_precision"],
                     "recall": last["verified_recall"], "recall_demonstrated": last["verified_recall_demonstrated"],
                     "own": {"n": own_score["found"], "precision": own_score["precision"],
                             "recall": own_score["recall"]}},
        "verifier_on_own": {"true": len(own & truth), "true_kept": len(own_kept & truth),
                            "false": len(own - truth), "false_rejected": len((own - truth) - own_kept)},
        "by_origin": {k: {"candidates": origin[k], "rejected": rejected[k], "verified": kept[k]}
                      for k in ("discovered",) + KINDS},
        "wrong_verified": sorted(c.dynamic.text() for c in verdicts.verified if c.dynamic not in truth),
        "correct_rejected": sorted(r["candidate"].dynamic.text() for r in verdicts.rejected
                                   if r["candidate"].dynamic in truth),
        "llm": llm,
    }


def play_conditions(params: Params, paths: Paths, found: dict, verdicts, sequence: list[str], progress=None,
                    accounting: Accounting | None = None) -> dict:
    """Each condition on the same worlds (`dive.worlds`' first `dive.agent_episodes`); one
    episode file each in data/dive/agent/<condition>/ (`regula.episodes`; resumed by their
    inputs). H† (`human_dynamics`) is data.yaml's facts (`dynamics.ground_truth()`), the only
    data.yaml read an agent is handed; S† is the transcribed manual (agent.manual_dynamics)."""
    cfg = params.dive
    accounting = accounting or Accounting()
    evolver = make_evolver(params, paths, accounting)
    asks = any(c in agent_mod.LLM_CONDITIONS for c in cfg.conditions)
    client = make_client(params, paths, accounting) if asks else None
    dynamics = {"verified": [c.dynamic for c in verdicts.verified], "discovered": list(found),
                "human": sorted(ground_truth()), "manual": agent_mod.manual_dynamics()}
    out_dir = paths.data / paths.stage / "agent"
    seeds, env = world_seeds(params, cfg.worlds, cfg.agent_episodes), params.env.model_dump()
    out: dict = {}
    for condition in cfg.conditions:
        # what the condition's episodes depend on, so that a change re-plays only those it affects
        reads = agent_mod.DYNAMICS_OF.get(condition)
        depends = {**({"dynamics": sorted(d.text() for d in dynamics[reads])} if reads else {}),
                   **({"subgoals": sequence, "evolver": cfg.evolver} if condition in agent_mod.PLANNERS else {}),
                   **({"llm": params.llm.model} if condition in agent_mod.LLM_CONDITIONS else {})}
        inputs = [{"seed": seed, "condition": condition, "env": env, "max_steps": cfg.agent_max_steps,
                   "max_skills": cfg.agent_max_skills, **depends} for seed in seeds]

        def play_one(i: dict, condition=condition) -> dict:
            world = envs.get("crafter").from_params(env, i["seed"])
            return agent_mod.play(world, condition, dynamics, sequence, i["seed"], cfg.agent_max_steps,
                                  cfg.agent_max_skills, evolver, inputs=i, client=client)

        # an LLM's answers (and the evolver's counts) are counted here: such a condition plays here
        llm = condition in agent_mod.LLM_CONDITIONS or (
            agent_mod.PLANNERS.get(condition, (None, False))[1] and getattr(evolver, "uses_llm", False))
        played = episodes.EpisodeStore(out_dir / condition).play(
            inputs, play_one, name=f"agent-{condition}", workers=1 if llm else cfg.workers,
            warm=_warm,
            progress=progress and (lambda done, total, ep, c=condition: progress(
                f"agent {c}", done, total, ep["summary"])))
        summary = agent_mod.summarize([ep["summary"] for ep in played], cfg.bootstrap, params.seed,
                                      cfg.score_groups)
        out[condition] = with_attributed_scores({
            **summary, "unlocks_by": episodes.unlocks_by(played), "attribution": episodes.attribution(played),
            **envs.get("crafter").census(played)})
    return out


def learn(params: Params, paths: Paths, explored: list[dict], progress=None, log=print) -> dict:
    """Discovery, verification and the upper levels; writes data/dive/ (not the metrics yet)."""
    demos = demos_mod.read_episodes(paths.data / "demos")
    accounting = Accounting()
    discoverer = make_discoverer(params, paths, accounting, log)
    rows, found, verdicts = discover_and_verify(params, demos, explored, discoverer, progress)
    write_outputs(paths.data / paths.stage, found, verdicts)
    m = metrics(rows, found, verdicts, build(demos + explored).sizes(), params, accounting.to_dict())
    m.update(upper_levels(params, demos, explored))
    return {"metrics": m, "rows": rows, "found": found, "verdicts": verdicts}


def play(params: Params, paths: Paths, learned: dict, progress=None) -> dict:
    """The agents on what was learned; writes the metrics, returns the whole record."""
    m, accounting = learned["metrics"], Accounting()
    m["agent"] = play_conditions(params, paths, learned["found"], learned["verdicts"], m["subgoals"],
                                 progress, accounting)
    m["agent_worlds"], m["agent_max_skills"] = params.dive.worlds, params.dive.agent_max_skills
    m["agent_bootstrap"] = params.dive.bootstrap  # resamples behind each condition's score_interval
    m["agent_score_groups"] = params.dive.score_groups  # groups of worlds behind score_groups
    m["llm"] = merge(m["llm"], accounting.to_dict())
    write_metrics(paths.metrics, m, learned["rows"], paths.stage)
    return m


def prepare(params: Params, paths: Paths) -> None:
    demos_mod.read_episodes(paths.data / "demos")  # missing: stop before any exploration is played
    # The stage's LLM cache folder is a DVC output: it must exist even when no call is made.
    (paths.llm_cache(params) / paths.stage).mkdir(parents=True, exist_ok=True)


def run(params: Params, paths: Paths, work: Work) -> dict:
    """The `dive` stage (or its twin, under `paths.stage`): exploration episodes, discovery and
    verification over the demonstrations, the ablation agents (data/dive/), metrics/dive.json (headline, returned),
    dive_detail.json, dive_steps.csv, dive_agents.csv (see `write_metrics`). Three units of work,
    each resuming from its own files."""
    def progress(what: str, done: int, total: int, info: dict) -> None:
        if what.startswith("agent"):
            line = (f"{what}: episode {done}/{total} (seed {info['seed']}): {info['end']} after "
                    f"{info['steps']} steps, {len(info['achievements'])} achievements")
        elif what == "explore":
            line = (f"exploration episode {done}/{total} (seed {info['seed']}): {info['end']} after "
                    f"{info['steps']} steps")
        else:
            line = (f"discovery step {done}/{total}: {info['discovered_n']} candidates (precision "
                    f"{info['discovered_precision']}), {info['verified_n']} verified (precision "
                    f"{info['verified_precision']}, recall {info['verified_recall']})")
        work.progress(f"{paths.stage}: {line}")

    explored = one(work, lambda: exploration(params, paths.data / paths.stage / "explore", progress), name="explore")
    learned = one(work, lambda: learn(params, paths, explored, progress, work.progress), name="discover-verify")
    m = one(work, lambda: play(params, paths, learned, progress), name="agents")
    work.progress(f"{paths.stage}: {m['verified']['n']} verified dynamics, precision {m['verified']['precision']}, recall "
                  f"{m['verified']['recall']} against data.yaml ({m['discovered']['n']} discovered, precision "
                  f"{m['discovered']['precision']})")
    return stages.headline_for(paths.stage, headline(m), COMPARES.__contains__)


# what a twin's headline keeps: the numbers that compare discoverers (and evolvers); its
# per-episode score stays in its detail (metrics/*.json hold few numbers in all: tests/test_metrics_plots.py caps them)
COMPARES = frozenset({"discovered_precision", "discovered_recall", "agent_dive_score", "agent_dive_reward"})
AGENT_HEADLINE = ("score", "score_per_episode", "progression", "reward")


def headline(m: dict) -> dict:
    """What metrics/dive.json holds: discovered and verified dynamics against data.yaml (how many,
    precision, recall), and full DiVE's Crafter score as the paper computes it (pooled over the
    episodes), the mean per-episode score and BALROG's progression beside it, and the mean reward
    (`summarize`); every other
    condition's, and the score's interval, are in the detail (`dvc exp show` has room for 50
    numbers in all)."""
    return {**{f"{kind}_{k}": m[kind][k] for kind in ("discovered", "verified") for k in ("n", "precision", "recall")},
            **{f"agent_dive_{k}": m["agent"]["dive"][k] for k in AGENT_HEADLINE if "dive" in m["agent"]}}


def write_outputs(out: Path, found: dict, verdicts) -> None:
    out.mkdir(parents=True, exist_ok=True)
    payload = {"discovered": [c.to_json() for c in sorted(found.values(), key=lambda c: c.dynamic)],
               **verdicts.to_json()}
    rejected = payload.pop("rejected")
    write_atomic(out / "dynamics.json", json.dumps(payload, indent=1, sort_keys=True) + "\n")
    write_jsonl(out / "rejections.jsonl", rejected)


def agent_rows(m: dict) -> list[dict]:
    """metrics/dive_agents.csv: one row per agent condition and achievement, the episodes that
    unlocked it of all the condition's and its success rate (the pooled score's inputs)."""
    return [{"condition": name, "achievement": achievement, "unlocked": a["unlocked"][achievement],
             "episodes": a["episodes"], "rate": rate}
            for name, a in m["agent"].items() for achievement, rate in a["rates"].items()]


def write_metrics(metrics_dir: Path, m: dict, rows: list[dict], stage: str = "dive") -> dict:
    """metrics/dive.json (the headline, returned), dive_steps.csv (precision and recall per
    discovery step), dive_agents.csv (each condition's per-achievement rates) and dive_detail.json
    (the rest of the record: banks, candidates by origin, the upper levels, each condition's
    pooled score with its interval, mean per-episode score, reward and steps, the LLM's
    accounting); a twin's under its own name."""
    write_csv(Path(metrics_dir) / f"{stage}_steps.csv", rows)
    write_csv(Path(metrics_dir) / f"{stage}_agents.csv", agent_rows(m))
    detail = {**m, "agent": {name: {k: v for k, v in a.items() if k not in ("rates", "unlocked")}
                             for name, a in m["agent"].items()}}
    return stages.write_metrics(metrics_dir, stage, stages.headline_for(stage, headline(m), COMPARES.__contains__),
                                detail)
