"""The demos stage's section: the scripted expert's episodes, and the reference plans."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from regula.stages import Paths, detail_path

from ..tables import groups_text, md, plt, rate, read_detail

MILESTONE_COLUMNS = ["milestone", "reached", "mean high-level steps", "mean primitive steps", "shortest plan",
                     "ratio to shortest"]


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


def plot_progress(table: pd.DataFrame, milestones: list[str], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(8, 4))
    for m in milestones:
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


def score_lines(metrics: dict) -> list[str]:
    """The Crafter score pooled over the episodes (DiVE's section defines each statistic), and
    the others beside it when the record has them."""
    line = f"- Crafter score over the 22 achievements, pooled over the episodes: {metrics['crafter_score']:.2f}%"
    s = metrics.get("scores")
    if not s:
        return [line]
    lo, hi = s["score_interval"]
    plo, phi = s["progression_interval"]
    groups = groups_text({**s, "episodes": metrics["episodes"]})
    return [f"{line} (95% bootstrap interval {lo:.1f}–{hi:.1f}; over {groups}"
            f", {s['score_groups_mean']:.1f} ± {s['score_groups_std']:.1f}); the mean of the per-episode scores, a "
            f"different statistic: {s['score_per_episode']:.1f} ± {s['score_per_episode_std']:.1f}%; BALROG's "
            f"progression (the share of the 22 achievements per episode): {100 * s['progression']:.1f}% "
            f"({100 * plo:.1f}–{100 * phi:.1f}%). {_ends(metrics.get('goal'))}"]


def _ends(goal: str | None) -> str:
    if goal == "all":
        return ("An episode ends once every achievement is unlocked, at death, or at its step budget: a full "
                "game's, not a goal-directed run's.")
    return "The episodes end at the goal, so these are a goal-directed run's, not a full game's."


def success_line(metrics: dict) -> str:
    """The success rate as k/n with its 95% Wilson interval, and what success means for the goal."""
    n = metrics["episodes"]
    what = "every one of the 22 achievements" if metrics["goal"] == "all" else f"`{metrics['goal']}` unlocked"
    return (f"- success ({what}; 95% Wilson interval): {rate(round(metrics['success_rate'] * n), n)}"
            + (f", mean primitive steps to the goal: {metrics['mean_steps_to_goal']}"
               if metrics["mean_steps_to_goal"] is not None else ""))


def section(paths: Paths) -> list[str]:
    metrics = read_detail(paths.metrics, "demos")
    if metrics is None:
        raise FileNotFoundError(2, "no such file", str(detail_path(paths.metrics, "demos")))
    table = pd.read_csv(paths.metrics / "demos_episodes.csv")
    achievements = pd.read_csv(paths.metrics / "demos_achievements.csv")
    plot_achievements(metrics, dict(zip(achievements["achievement"], achievements["rate"])),
                      paths.reports / "achievements.png")
    plot_progress(table, [row["milestone"] for row in metrics["milestones"]], paths.reports / "progress.png")
    ends = pd.DataFrame(sorted(metrics["end_reasons"].items()), columns=["episode ended", "episodes"])
    return [
        "## Demonstrations (Crafter, scripted expert)", "",
        f"- goal: `{metrics['goal']}`, episodes: {metrics['episodes']}",
        success_line(metrics),
        *score_lines(metrics),
        f"- mean reward {metrics['mean_reward']}", "",
        "### How episodes ended", "", md(ends), "",
        f"Worlds with no diamond at all: {metrics['worlds_without_diamond']} of {metrics['episodes']}; "
        f"episodes that saw a diamond and still failed: {metrics['failed_after_seeing_a_diamond']}. "
        "Crafter's zombies (grassland, mostly at night) and skeletons (tunnels) kill a player that "
        "does not hide; `died` counts both.", "",
        "### Steps to each tool (LTLCrit Table 1 columns)", "",
        md(pd.DataFrame(metrics["milestones"], columns=MILESTONE_COLUMNS)), "",
        "![achievements](achievements.png)", "", "![progress](progress.png)", "",
        "### Episodes", "",
        md(table[["seed", "success", "end", "steps", "skills", "reward", "achievements",
                  "failed_skills", "world_diamonds", "saw_diamond"]]), "",
    ]


def reference(paths: Paths) -> list[str]:
    """The shortest high-level plans from data.yaml (the optimum the tables divide by)."""
    plans = pd.DataFrame([{"achievement": p["achievement"], "skills": len(p["plan"]), "plan": ", ".join(p["plan"])}
                          for p in read_detail(paths.metrics, "demos")["shortest_plans"]])
    return ["## Reference: shortest high-level plans from data.yaml", "", md(plans), ""]
