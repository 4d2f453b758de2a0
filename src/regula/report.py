"""The report: Markdown with tables and PNG plots, built from tracked files only.

It reads each stage's record (metrics/<stage>_detail.json) and tables (metrics/*.csv), never
the headline files (metrics/<stage>.json, for `dvc exp show`), which are picked from the same
records."""
from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on CI machines
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from . import envs  # noqa: E402
from .io import write_atomic  # noqa: E402
from .stages import Paths, Work, detail_path  # noqa: E402

CRAFTER = envs.get("crafter")  # the reference plans come from its data.yaml

MILESTONES = ("make_wood_pickaxe", "make_stone_pickaxe", "make_iron_pickaxe", "collect_diamond")


def milestone_table(table: pd.DataFrame, episodes: list[dict]) -> pd.DataFrame:
    """LTLCrit Table 1's columns for the expert: high-level and primitive steps to each tool."""
    first_skill = {ep["summary"]["seed"]: ep["summary"]["first_skill"] for ep in episodes}
    rows = []
    for m in MILESTONES:
        reached = table[f"step_{m}"].notna()
        skills = [first_skill[s][m] for s in table.loc[reached, "seed"]]
        optimum = len(CRAFTER.shortest_plan(m))
        mean_skills = sum(skills) / len(skills) if skills else float("nan")
        rows.append({"milestone": m, "reached": f"{int(reached.sum())}/{len(table)}",
                     "mean high-level steps": round(mean_skills, 1),
                     "mean primitive steps": round(float(table.loc[reached, f"step_{m}"].mean()), 1)
                     if reached.any() else float("nan"),
                     "shortest plan": optimum,
                     "ratio to shortest": round(mean_skills / optimum, 2) if skills else float("nan")})
    return pd.DataFrame(rows)


def _md(df: pd.DataFrame) -> str:
    """Markdown table without the optional `tabulate` dependency."""
    cols = list(df.columns)
    out = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        out.append("| " + " | ".join("" if pd.isna(v) else str(v) for v in row) + " |")
    return "\n".join(out)


def read_detail(metrics_dir: Path, stage: str) -> dict | None:
    """A stage's record (metrics/<stage>_detail.json), or None when the stage has not run."""
    path = detail_path(metrics_dir, stage)
    return json.loads(path.read_text()) if path.exists() else None


def plot_achievements(metrics: dict, rates: dict, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(8, 4.5))
    names = list(rates)
    ax.barh(names, [100 * rates[n] for n in names], color="#4477aa")
    ax.set_xlabel("episodes with the achievement (%)")
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.set_title(f"Scripted expert, {metrics['episodes']} episodes (Crafter score {metrics['crafter_score']:.1f}%)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_progress(table: pd.DataFrame, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(8, 4))
    for m in MILESTONES:
        steps = table[f"step_{m}"].dropna().sort_values()
        if len(steps):
            ax.step(list(steps), [(i + 1) / len(table) * 100 for i in range(len(steps))],
                    where="post", label=m)
    ax.set_xlabel("primitive steps")
    ax.set_ylabel("episodes reached (%)")
    ax.set_ylim(0, 100)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("When the expert reaches each tool")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def llm_table(accounting: dict) -> pd.DataFrame:
    """The papers' "LLM queries" columns: per stage and role, calls and cache hits."""
    rows = [{"stage": stage, "role": role, **{k: row[k] for k in
             ("queries", "calls", "cache_hits", "tokens_in", "tokens_out", "retries", "reasks", "errors")}}
            for stage, roles in sorted(accounting.items()) for role, row in sorted(roles.items())]
    return pd.DataFrame(rows)


def feedback_section(metrics_dir: Path) -> list[str]:
    fb = read_detail(metrics_dir, "feedback")
    if fb is None:
        return []
    accounting = fb["llm"]
    who = fb["backend"] + (f" ({fb['model']})" if fb.get("model") else "")
    lines = ["## Feedback prediction (E2CL's feedback model as a probe)", "",
             f"Will a recorded skill succeed? Predicted by `{who}` on {fb['n']} sampled steps of "
             "the demonstrations, scored against what happened.", "",
             _md(pd.DataFrame([{k: fb[k] for k in ("n", "accuracy", "precision", "recall",
                                                    "failures_recorded", "failures_predicted")}])), ""]
    if accounting:
        lines += ["LLM queries:", "", _md(llm_table(accounting)), ""]
    else:
        lines += ["No LLM was asked (the `rules` backend); set `feedback.backend: openai` and "
                  "`llm.base_url` to ask one.", ""]
    return lines


def laws_section(metrics_dir: Path, laws_dir: Path) -> list[str]:
    m = read_detail(metrics_dir, "laws")
    law_file = Path(laws_dir) / "crafter_hard.yaml"
    if m is None or not law_file.exists():
        return []
    import yaml
    laws = yaml.safe_load(law_file.read_text())["laws"]
    table = pd.DataFrame([{"law": f"`{law['formula']}`", "why": law.get("explanation", ""),
                           "blocked in demos": m["blocks_per_law"].get(law.get("name") or law["formula"], 0)}
                          for law in laws])
    return ["## Laws: Crafter's preconditions as LTLf hard laws", "",
            f"{m['laws']} laws derived from data.yaml (`data/laws/crafter/`, automata as DOT beside them), "
            f"monitored with the `{m['backend']}` backend. Replayed through the shield, the "
            f"demonstrations' {m['steps']} skill choices were blocked {m['blocked']} times; "
            f"{m['blocked_but_succeeded']} blocked choices had in fact succeeded (a wrong law would show here).",
            "", _md(table), ""]


def plot_automata(t: pd.DataFrame, path: Path) -> None:
    """Exact recovery and equivalence rounds against teacher noise, per method and noise kind."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for (states, method, kind), g in t.groupby(["states", "method", "kind"]):
        g = g.sort_values("noise")
        label = f"{method}, {kind}, {states} states"
        style = "-" if method == "regula" else ":"
        left.plot(g["noise"], 100 * g["recovered"], style, marker="o", label=label)
        if method == "regula":
            right.plot(g["noise"], g["rounds"], style, marker="o", label=label)
    left.set_xlabel("teacher noise")
    left.set_ylabel("targets recovered exactly (%)")
    left.set_ylim(-5, 105)
    right.set_xlabel("teacher noise")
    right.set_ylabel("median equivalence rounds")
    left.legend(fontsize=7)
    right.legend(fontsize=7)
    fig.suptitle("Learning random DFAs under a noisy teacher")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def automata_section(metrics_dir: Path, out_dir: Path) -> list[str]:
    path = Path(metrics_dir) / "automata_eval.csv"
    if not path.exists():
        return []
    t = pd.read_csv(path)
    plot_automata(t, Path(out_dir) / "automata_recovery.png")
    t["recovered"] = (100 * t["recovered"]).round(1)
    t["agreement"] = t["agreement"].round(4)
    return ["## Learning DFAs under a noisy teacher (CEDAR's learner)", "",
            "Random target DFAs (AALpy's generator), exact equivalence oracle; `recovered` is the % of "
            "targets learned exactly, `agreement` the held-out word agreement of what was learned, "
            "`queries` the median teacher askings. `plain_lstar` is AALpy's L* with no noise handling.", "",
            _md(t), "", "![automata](automata_recovery.png)", ""]


def _pct(v):
    return "–" if v is None else f"{100 * v:.0f}%"


def _fmt(v, digits=1):
    return "–" if v is None else (f"{v:.{digits}f}" if isinstance(v, float) else str(v))


def ltlcrit_tables(m: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1 (primitive steps to each subgoal, reached/episodes) and Table 2 (failed and
    critic-blocked actions), ours beside the paper's rows."""
    from .ltlcrit.stage import PAPER_TABLE1, PAPER_TABLE2
    subgoals = ("wood tool", "stone tool", "iron tool", "diamond")
    t1, t2 = [], []

    def ours(label, s):
        n = s["episodes"]
        t1.append({"method": label, **{g: f"{_fmt(s[g]['steps'])} ({s[g]['reached']}/{n})" for g in subgoals},
                   "task actions to goal (optimum " + str(m["optimum"]["goal"]) + ")": _fmt(s["goal"]["task_actions"])})
        if "failed_actions_pct" in s:
            t2.append({"method": label, "failed actions %": _fmt(s["failed_actions_pct"]),
                       "critic-blocked %": _fmt(s["critic_blocked_pct"]),
                       "hard-blocked %": _fmt(s["hard_blocked_pct"]), "critic laws": _fmt(s["critic_laws"])})

    ours("scripted expert (regula)", m["expert"])
    for name, a in m["actors"].items():
        ours(f"{name} (regula)", a["without_critic"])
        ours(f"{name} + LTLCrit, {a['iterations']} rounds (regula)", a["with_critic"])
    for label, row in PAPER_TABLE1.items():
        t1.append({"method": f"{label} (paper, Minecraft)",
                   **{g: f"{'–' if row[g][0] is None else row[g][0]} ({row[g][1]})" for g in subgoals}})
    for label, row in PAPER_TABLE2.items():
        t2.append({"method": f"{label} (paper, Minecraft)", "failed actions %": _fmt(row["failed_actions_pct"]),
                   "critic-blocked %": _fmt(row["critic_blocked_pct"])})
    return pd.DataFrame(t1).fillna("–"), pd.DataFrame(t2).fillna("–")


def _two_panels(path: Path, draw) -> None:
    """A figure of two side-by-side panels, `draw(left, right)` fills them; saved as PNG."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    draw(left, right)
    left.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_ltlcrit(m: dict, history: pd.DataFrame, path: Path) -> None:
    """Success rate and critic laws per iteration (metrics/ltlcrit.csv), one line per actor."""
    def draw(left, right):
        for name in m["actors"]:
            h = history[history["actor"] == name]
            its = list(h["iteration"])
            left.plot(its, list(h["success_rate"]), marker="o", label=name)
            right.plot(its, list(h["critic_laws"]), marker="o", label=name)
        left.axhline(m["expert"]["success_rate"], color="grey", ls="--", label="scripted expert")
        left.set(xlabel="iteration", ylabel=f"success rate ({m['goal']})", ylim=(-0.05, 1.05))
        right.set(xlabel="iteration", ylabel="critic laws in force")
    _two_panels(path, draw)


def ltlcrit_section(metrics_dir: Path, out_dir: Path) -> list[str]:
    m, history_path = read_detail(metrics_dir, "ltlcrit"), Path(metrics_dir) / "ltlcrit.csv"
    if m is None or not history_path.exists():
        return []
    plot_ltlcrit(m, pd.read_csv(history_path), Path(out_dir) / "ltlcrit.png")
    t1, t2 = ltlcrit_tables(m)
    done = pd.DataFrame([{"actor": name, "expert's successes": d["expert_successes"],
                          "actor's successes": d["actor_successes"],
                          "actor on the expert's worlds": f"{d['actor_on_expert_worlds']} ({_pct(d['share_of_expert_worlds'])})",
                          "successes vs expert": _pct(d["successes_vs_expert"]),
                          "task actions / optimum": _fmt(d["task_actions_over_optimum"], 2), "stopped": a["stop"]}
                         for name, a in m["actors"].items() for d in [a["done_when"]]])
    return ["## LTLCrit on Crafter: shielded actors, a critic that induces laws", "",
            f"Goal `{m['goal']}`, {m['episodes']} worlds per iteration (seeds {m['seeds'][0]}-{m['seeds'][1]}), "
            f"critic `{m['critic']}`" + (" reading the rollouts and the demonstrations" if m["critic_reads_demos"]
                                          else " reading the rollouts only") + ". "
            "Laws and the critic's verdicts per iteration: `data/laws/ltlcrit/<actor>/`; episodes: "
            "`data/ltlcrit/<actor>/`. The paper ran Minecraft with GPT-4.1 actors and an o3-mini critic "
            "over 5 runs; these rows are Crafter (which stands in for it here), so compare directions, "
            "not values. Task actions leave out exploring and the survival reflex, as the shortest plan does.", "",
            "### Table 1: mean primitive steps to each subgoal (reached / episodes)", "", _md(t1), "",
            "### Table 2: failed and blocked actions", "", _md(t2), "",
            "### The issue's bar", "",
            "Success on the worlds where the scripted expert succeeds, and task actions to the goal "
            "against the shortest plan from data.yaml:", "", _md(done), "",
            "![ltlcrit](ltlcrit.png)", ""]


def plot_dive(steps: pd.DataFrame, path: Path) -> None:
    """The paper's Fig. 3 and 4: recall and precision of discovered and verified dynamics."""
    def draw(left, right):
        for name, style in (("discovered", "--"), ("verified", "-")):
            left.plot(steps["step"], steps[f"{name}_recall"], style, marker="o", label=name)
            right.plot(steps["step"], steps[f"{name}_precision"], style, marker="o", label=name)
        left.set(xlabel="discovery step (demonstrations read)", ylabel="recall vs data.yaml", ylim=(0, 1.05))
        right.set(xlabel="discovery step (demonstrations read)", ylabel="precision vs data.yaml", ylim=(0, 1.05))
    _two_panels(path, draw)


def dive_section(metrics_dir: Path, out_dir: Path) -> list[str]:
    m, steps_path = read_detail(metrics_dir, "dive"), Path(metrics_dir) / "dive_steps.csv"
    if m is None or not steps_path.exists():
        return []
    steps = pd.read_csv(steps_path)
    plot_dive(steps, Path(out_dir) / "dive.png")
    pr = pd.DataFrame([{"set": name, "dynamics": m[name]["n"], "precision": _fmt(m[name]["precision"], 3),
                        "recall (all of data.yaml)": _fmt(m[name]["recall"], 3)}
                       for name in ("discovered", "verified")])
    origins = pd.DataFrame([{"origin": k.replace("_", "-"), **v} for k, v in m["by_origin"].items()])
    wrong = ", ".join(f"`{t}`" for t in m["wrong_verified"]) or "none"
    missed = ", ".join(f"`{t}`" for t in m["correct_rejected"]) or "none"
    return ["## DiVE: world dynamics discovered, verified, scored against data.yaml", "",
            f"Discoverer `{m['discoverer']}` over {m['steps']} demonstrations (one discovery step each), "
            f"with {m['inject']:.0%} injected wrong candidates of the paper's kinds (Table 5); the Verifier "
            "checks every candidate on fresh experience (the demonstrations and exploration episodes in "
            f"`data/dive/explore/`). Banks: {', '.join(f'{k} {v}' for k, v in m['banks'].items())}. Ground "
            f"truth H†: data.yaml's recipes as {m['truth']} facts. Candidates, verdicts and every rejection's "
            "reason and evidence: `data/dive/`.", "",
            _md(pr), "",
            f"Recall over the actions the demonstrations show: {_fmt(m['verified']['recall_demonstrated'], 3)}.", "",
            "### Candidates by origin (the paper's Table 5 kinds)", "", _md(origins), "",
            f"Verified but wrong: {wrong}. Correct but rejected: {missed}.", "",
            "![dive](dive.png)", "", *dive_upper_lines(m), *dive_agent_lines(m)]


def dive_upper_lines(m: dict) -> list[str]:
    if "subtasks" not in m:
        return []
    sp = m["subtask_preconditions"]
    rows = pd.DataFrame([{"subtask": k, "segments": v["segments"], "median steps": v["steps"],
                          "preconditions (verified)": ", ".join(v["preconditions"]) or "–",
                          "outcomes": ", ".join(f"{i} {n:+d}" for i, n in v["outcomes"].items()) or "–",
                          "termination": ", ".join(v["termination"])} for k, v in m["subtasks"].items()])
    objects = ", ".join(m["objects"]["discovered"]) or "none"
    kept = ", ".join(m["objects"]["verified"]) or "none"
    bad = m["subgoal_order_violations"]
    return ["### Objects, subtasks, subgoals", "",
            f"Object relations discovered: {objects}; verified on the exploration episodes: {kept}.", "",
            f"Subtask preconditions against the propositions Crafter's hard laws need: precision "
            f"{_fmt(sp['precision'], 3)}, recall {_fmt(sp['recall'], 3)} ({sp['correct']} of {sp['preconditions']} "
            "kept are needed). The demonstrations' planner always arrives with more than it needs, and the "
            "exploration episodes reach only the early game, so most late preconditions stay confounded.", "",
            _md(rows), "",
            f"Subgoal order: {', '.join(m['subgoals'])}; pairs against data.yaml's dependencies: "
            f"{len(bad)}{' (' + ', '.join(f'{a} before {b}' for a, b in bad) + ')' if bad else ''}.", ""]


def dive_agent_lines(m: dict) -> list[str]:
    from .dive.stage import PAPER_SCOREBOARD, PAPER_TABLE3
    if "agent" not in m:
        return []
    names = {"dive": "DiVE", "no_verifier": "w/o V", "no_evolver": "w/o E", "no_dynamics": "w/o D&V&E"}
    rows = [{"agent": names.get(c, c), "Crafter score %": f"{a['score']} ± {a['score_std']}",
             "reward": f"{a['reward']} ± {a['reward_std']}", "mean steps": a["steps"],
             "paper (GPT-4o): score %, reward": "{} , {}".format(*PAPER_TABLE3[c]) if c in PAPER_TABLE3 else "–"}
            for c, a in m["agent"].items()]
    board = pd.DataFrame([{"method": k, "score %": v[0], "reward": v[1]} for k, v in PAPER_SCOREBOARD.items()])
    n = next(iter(m["agent"].values()))["episodes"] if m["agent"] else 0
    return ["### Agents: the paper's Table 3 ablations", "",
            f"Each condition plays the same {n} full Crafter episodes (10,000 steps or death) with the subgoal "
            f"order read from the demonstrations ({', '.join(m.get('subgoals', []))}); the evolver is symbolic "
            "backward chaining over the dynamics, the critic ranks strategies by length. The skills' own "
            "controller already knows how to walk, dig and check an action's needs, which is why even "
            "`w/o D&V&E` is far above the paper's.", "", _md(pd.DataFrame(rows)), "",
            "The paper's Crafter scoreboard:", "", _md(board), ""]


def build_report(metrics_dir: Path, episodes: list[dict], out_dir: Path, title: str = "regula report") -> Path:
    """reports/report.md and its PNG plots from the stages' records and tables in `metrics_dir`
    (the demonstrations' are needed; a stage that has not run leaves its section out)."""
    metrics_dir = Path(metrics_dir)
    metrics = json.loads(detail_path(metrics_dir, "demos").read_text())
    table = pd.read_csv(metrics_dir / "demos_episodes.csv")
    achievements = pd.read_csv(metrics_dir / "demos_achievements.csv")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    plot_achievements(metrics, dict(zip(achievements["achievement"], achievements["rate"])),
                      out_dir / "achievements.png")
    plot_progress(table, out_dir / "progress.png")
    plans = pd.DataFrame([{"achievement": a, "skills": len(p), "plan": ", ".join(p)}
                          for a, p in ((a, CRAFTER.shortest_plan(a)) for a in CRAFTER.achievement_names())])
    ends = pd.DataFrame(sorted(metrics["end_reasons"].items()), columns=["episode ended", "episodes"])
    lines = [
        f"# {title}", "",
        "Built by `dvc repro` from tracked files only (`data/demos/`, `metrics/`).", "",
        "## Demonstrations (Crafter, scripted expert)", "",
        f"- goal: `{metrics['goal']}`, episodes: {metrics['episodes']}",
        f"- success rate: {100 * metrics['success_rate']:.1f}%"
        + (f", mean primitive steps to the goal: {metrics['mean_steps_to_goal']}"
           if metrics["mean_steps_to_goal"] is not None else ""),
        f"- Crafter score over the 22 achievements: {metrics['crafter_score']:.2f}%, "
        f"mean reward {metrics['mean_reward']}", "",
        "### How episodes ended", "", _md(ends), "",
        f"Worlds with no diamond at all: {metrics['worlds_without_diamond']} of {metrics['episodes']}; "
        f"episodes that saw a diamond and still failed: {metrics['failed_after_seeing_a_diamond']}. "
        "Crafter's zombies (grassland, mostly at night) and skeletons (tunnels) kill a player that "
        "does not hide; `died` counts both.", "",
        "### Steps to each tool (LTLCrit Table 1 columns)", "",
        _md(milestone_table(table, [e for e in episodes])), "",
        "![achievements](achievements.png)", "", "![progress](progress.png)", "",
        "### Episodes", "",
        _md(table[["seed", "success", "end", "steps", "skills", "reward", "achievements",
                   "failed_skills", "world_diamonds", "saw_diamond"]]), "",
        *feedback_section(metrics_dir),
        *laws_section(metrics_dir, Path(out_dir).parent / "data" / "laws" / "crafter"),
        *automata_section(metrics_dir, out_dir),
        *ltlcrit_section(metrics_dir, out_dir),
        *dive_section(metrics_dir, out_dir),
        "## Reference: shortest high-level plans from data.yaml", "", _md(plans), "",
    ]
    return write_atomic(out_dir / "report.md", "\n".join(lines))


def run(params: dict, paths: Paths, work: Work) -> dict:
    """The `report` stage: reports/report.md and its plots, from tracked files only. It writes no
    metrics file, so its headline is empty."""
    from . import demos
    episodes = demos.read_episodes(paths.data / "demos")
    path = build_report(paths.metrics, episodes, paths.reports, params["report"]["title"])
    work.progress(f"report: {path}")
    return {}
