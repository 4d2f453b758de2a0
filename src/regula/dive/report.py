"""The dive stage's section: dynamics discovered and verified, upper levels, the agents."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from regula.report import papers
from regula.report.tables import fmt, groups_text, md, read_detail, read_with_table, two_panels
from regula.stages import Paths


def plot_dive(steps: pd.DataFrame, path: Path) -> None:
    """The paper's Fig. 3 and 4: recall and precision of discovered and verified dynamics."""
    def draw(left, right):
        for name, style in (("discovered", "--"), ("verified", "-")):
            left.plot(steps["step"], steps[f"{name}_recall"], style, marker="o", label=name)
            right.plot(steps["step"], steps[f"{name}_precision"], style, marker="o", label=name)
        left.set(xlabel="discovery step (demonstrations read)", ylabel="recall vs data.yaml", ylim=(0, 1.05))
        right.set(xlabel="discovery step (demonstrations read)", ylabel="precision vs data.yaml", ylim=(0, 1.05))
    two_panels(path, draw)


def section(paths: Paths) -> list[str]:
    found = read_with_table(paths.metrics, "dive", "dive_steps.csv")
    if found is None:
        return []
    m, steps = found
    plot_dive(steps, paths.reports / "dive.png")
    return [*learning_lines(m), "![dive](dive.png)", "", *dive_upper_lines(m),
            *dive_agent_lines(m, read_detail(paths.metrics, "dive_llm"))]


def learning_lines(m: dict) -> list[str]:
    """Discovery and verification: precision and recall on the discoverer's own candidates and
    with the injected near misses, the Verifier's verdicts, candidates by origin."""
    own, ver, judge = m["discovered"], m["verified"], m["verifier_on_own"]
    pr = pd.DataFrame([
        {"set": "discovered (the discoverer's own candidates)", "dynamics": own["n"],
         "precision": fmt(own["precision"], 3), "recall (all of data.yaml)": fmt(own["recall"], 3)},
        {"set": "verified, of its own candidates", "dynamics": ver["own"]["n"],
         "precision": fmt(ver["own"]["precision"], 3), "recall (all of data.yaml)": fmt(ver["own"]["recall"], 3)},
        {"set": "verified, own and injected", "dynamics": ver["n"], "precision": fmt(ver["precision"], 3),
         "recall (all of data.yaml)": fmt(ver["recall"], 3)}])
    origins = pd.DataFrame([{"origin": k.replace("_", " "), **v} for k, v in m["by_origin"].items()])
    wrong = ", ".join(f"`{t}`" for t in m["wrong_verified"]) or "none"
    missed = ", ".join(f"`{t}`" for t in m["correct_rejected"]) or "none"
    return ["## DiVE: world dynamics discovered, verified, scored against data.yaml", "",
            f"Discoverer `{m['discoverer']}` over {m['steps']} demonstrations (one discovery step each); the "
            "Verifier checks every candidate on fresh experience (the demonstrations and exploration episodes in "
            f"`data/dive/explore/`). To test it on mistakes that are hard to reject, {m['inject']:.0%} near misses "
            "per discovered candidate join what it checks (`dive.inject`; the discoverer never sees them): an amount "
            "off by one, a neighbouring tool tier, an absent facing or nearby condition, a real material in the "
            "wrong recipe. These kinds are regula's; the paper's Table 5 names confounders and in- and "
            "out-of-domain hallucinations. Banks: "
            f"{', '.join(f'{k} {v}' for k, v in m['banks'].items())}. Ground truth (H†): every fact data.yaml "
            f"states in the paper's attributes, {m['truth']} facts; only scoring reads it (a test enforces that "
            "the discoverers, the Verifier, the evolvers and the agents do not). Candidates, verdicts and every "
            "rejection's reason and evidence: `data/dive/`.", "",
            md(pr), "",
            f"Recall over the actions the demonstrations show: {fmt(ver['recall_demonstrated'], 3)}. The Verifier "
            f"kept {judge['true_kept']} of the discoverer's {judge['true']} true candidates and rejected "
            f"{judge['false_rejected']} of its {judge['false']} false ones; of the {m['injected']['n']} injected "
            f"near misses it rejected {m['injected']['rejected']}.", "",
            "### Candidates by origin", "", md(origins), "",
            f"Verified but wrong: {wrong}. Correct but rejected: {missed}.", ""]


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
            f"{fmt(sp['precision'], 3)}, recall {fmt(sp['recall'], 3)} ({sp['correct']} of {sp['preconditions']} "
            "kept are needed). The demonstrations' planner always arrives with more than it needs, and the "
            "exploration episodes reach only the early game, so most late preconditions stay confounded.", "",
            md(rows), "",
            f"Subgoal order: {', '.join(m['subgoals'])}; pairs against data.yaml's dependencies: "
            f"{len(bad)}{' (' + ', '.join(f'{a} before {b}' for a, b in bad) + ')' if bad else ''}.", ""]


# the paper's Table 3 rows -> the condition that plays each here (regula.dive.agent's doc); the
# CoT rows are played by the dive_llm twin on the local LLM
TABLE3 = {"DiVE": "dive", "w/o E": "no_evolver", "w/o V": "no_verifier", "w/o V&E": "no_verifier_no_evolver",
          "w/o D&V&E": "no_dynamics", "CoT": "cot", "CoT + D&V": "cot_dynamics",
          "w/o D&V+S†": "manual_dynamics", "w/o D&V&E+S†": "manual_dynamics_no_evolver",
          "w/o D&V&E+H†": "human_dynamics"}
# Table 1's rows that run here -> their condition (DiVE: with each discoverer, the LLM's from the twin)
TABLE1 = {"DiVE": "dive", "CoT": "cot", "Random": "random"}
STAND_INS = {"manual_dynamics": "stand-in: S† is the one manual fact a source states offline "
                                "(src/regula/dive/manual_dynamics.yaml)",
             "manual_dynamics_no_evolver": "stand-in: as above",
             "random": "random primitive actions, as Crafter's Random that the paper quotes",
             "expert": "not in the paper: the scripted expert, which plans with data.yaml",
             "human_dynamics_evolved": "not in the paper: H† with the evolver, this agent's ceiling",
             "dive_no_survival": "not in the paper: DiVE with the survival layer off (none of its decisions, none "
                                 "of its interrupts)"}


def _source(name: str) -> str:
    t = papers.table(name)
    return f"{t['paper']}, {t['table']} ({t['setting']})"


# the columns regula fills in each agent row, in the order they appear
OURS = ("regula: score % (pooled, 95% interval)", "regula: score % by groups of worlds (mean ± std)",
        "regula: per-episode score % (mean ± std)", "regula: progression % (mean, 95% interval)", "regula: reward")


def _groups(a: dict) -> str:
    return f"{a['score_groups_mean']:.1f} ± {a['score_groups_std']:.1f}" if "score_groups" in a else "–"


def _progression(a: dict) -> str:
    if "progression" not in a:
        return "–"
    lo, hi = a["progression_interval"]
    return f"{100 * a['progression']:.1f} ({100 * lo:.1f}–{100 * hi:.1f})"


def _ours(a: dict | None) -> dict:
    if a is None:
        return dict.fromkeys(OURS, "–")
    lo, hi = a["score_interval"]
    return dict(zip(OURS, (f"{a['score']:.1f} ({lo:.1f}–{hi:.1f})", _groups(a),
                           f"{a['score_per_episode']:.1f} ± {a['score_per_episode_std']:.1f}", _progression(a),
                           f"{a['reward']} ± {a['reward_std']}")))


def _row(label: str, quoted: list, condition: str, a: dict | None, note: str) -> dict:
    """One agent row: the paper's score beside the pooled one, its spread over groups of worlds,
    the per-episode mean and BALROG's progression after them."""
    ours = _ours(a)
    return {"paper row": label, "paper: score": quoted[0], **{k: ours[k] for k in OURS[:4]},
            "paper: reward": quoted[1], OURS[4]: ours[OURS[4]], "regula condition": condition,
            "episodes": f"{a['episodes']} (seeds {a['seeds'][0]}–{a['seeds'][1]})" if a else "–", "note": note}


def _played_by(condition: str, m: dict, twin: dict | None) -> tuple[dict | None, str]:
    """A condition's numbers and who measured them: the dive stage, else its LLM twin."""
    if condition in m.get("agent", {}):
        return m["agent"][condition], "dive"
    if twin is not None and condition in twin.get("agent", {}):
        return twin["agent"][condition], "dive_llm"
    return None, ""


def _model(twin: dict | None) -> str:
    models = {r["model"] for roles in (twin or {}).get("llm", {}).values() for r in roles.values()}
    return ", ".join(sorted(models)) or "the LLM"


SCORE_QUOTE = ('"The score is calculated by aggregating the success rates s_i for each achievement and is '
               'formulated as: S ≐ exp((1/N) Σ_{i=1}^N ln(1 + s_i)) − 1."')
SCORE_SOURCE = "Sun et al., DiVE (seed 004), §4.1 Crafter"
# how Crafter's own analysis code gives a method's ±: each seed's score from its episodes' rates,
# then the mean and std over seeds (danijar/crafter, analysis/common.py and print_scores.py)
GROUPS_QUOTE = ("Crafter's own analysis code computes each seed's success rates from its episodes "
                "(`percent = 100 * (np.array(values[:episodes]) >= 1).mean()`), each seed's score from them "
                "(`scores = np.exp(np.nanmean(np.log(1 + percents), -1)) - 1`), and prints the mean ± std over "
                "seeds (`means = np.nanmean(scores, -1)`, `stds = np.nanstd(scores, -1)`; danijar/crafter, "
                "analysis/common.py and analysis/print_scores.py)")
# BALROG's Crafter progression (balrog-ai/BALROG, balrog/environments/crafter/env.py, `get_stats`)
PROGRESSION_QUOTE = ('BALROG scores an LLM agent\'s Crafter episode by its progression, '
                     '`"progression": float(self.score_tracker) / 22.0`, where `self.score_tracker = 0 + '
                     'sum([1.0 for k, v in info["achievements"].items() if v > 0])` (balrog-ai/BALROG, '
                     'balrog/environments/crafter/env.py): the share of the 22 achievements the episode unlocked')


def groups_text_of(m: dict) -> str:
    """The grouping of the record's conditions (they all play the same worlds)."""
    a = next((a for a in m.get("agent", {}).values() if "score_groups" in a), None)
    return groups_text(a) if a else "no groups (an older record)"


def headline_lines(m: dict, paper: list) -> list[str]:
    """DiVE's headline: its pooled score beside the paper's, the per-episode mean named after them."""
    a = m["agent"].get("dive")
    if a is None:
        return []
    lo, hi = a["score_interval"]
    spread = f"; over {groups_text(a)}, {_groups(a)}" if "score_groups" in a else ""
    lines = [f"**DiVE's score: {a['score']:.1f}% pooled over {a['episodes']} episodes (95% bootstrap interval "
             f"{lo:.1f}–{hi:.1f}{spread}), "
             f"against the paper's {paper[0]} (over its five seeds; {_source('dive_table3')}, DiVE row, "
             f"also Table 1).** The mean of the per-episode scores, a different statistic, is "
             f"{a['score_per_episode']:.1f} ± {a['score_per_episode_std']:.1f}%."]
    if "progression" in a:
        plo, phi = a["progression_interval"]
        lines.append(f"BALROG's progression (the share of the 22 achievements an episode unlocks, a different "
                     f"metric): {100 * a['progression']:.1f}% ({100 * plo:.1f}–{100 * phi:.1f}%).")
    if "attributed" in a:
        s = a["attributed"]
        lines.append(f"The survival layer chose the steps that made {s['by_survival']} of its {s['unlocks']} "
                     f"unlocks; its own unlocks alone give {s['own_score']:.1f}% pooled (see \"Whose unlocks\").")
    off = m["agent"].get("dive_no_survival")
    if off:
        olo, ohi = off["score_interval"]
        lines.append(f"With the survival layer off (`dive_no_survival`: none of its decisions, none of its "
                     f"interrupts) DiVE scores {off['score']:.1f}% pooled ({olo:.1f}–{ohi:.1f}) on the same worlds.")
    return [" ".join(lines), ""]


def dive_agent_lines(m: dict, twin: dict | None = None) -> list[str]:
    if "agent" not in m:
        return []
    budget = (f"the `dive_llm` twin: {_model(twin)}, {twin['agent'][next(iter(twin['agent']))]['episodes']} "
              f"episode(s) of at most {twin.get('agent_max_skills', '?')} skills" if twin and twin.get("agent") else "")

    def row(label: str, quoted: list, condition: str) -> dict:
        a, stage = _played_by(condition, m, twin)
        note = STAND_INS.get(condition, "")
        if stage == "dive_llm":
            note = f"measured by {budget}; the LLM discoverer's dynamics" if condition == "dive" else f"measured by {budget}"
        return _row(label, quoted, f"`{condition}`", a, note or ("–" if a else "not run yet"))

    t3 = [row(label, quoted, TABLE3[label]) for label, quoted in papers.table("dive_table3")["rows"].items()]
    t3.append(row("(H† with the evolver)", ["–", "–"], "human_dynamics_evolved"))
    t3.append(row("(DiVE, survival layer off)", ["–", "–"], "dive_no_survival"))
    board = papers.table("dive_scoreboard")["rows"]
    t1 = [row(label, quoted, TABLE1[label]) for label, quoted in board.items() if label in TABLE1]
    if twin and "dive" in twin.get("agent", {}):
        a = twin["agent"]["dive"]
        t1.append(_row("DiVE (LLM discoverer)", board["DiVE"], "`dive` in `dive_llm`", a, f"measured by {budget}"))
    t1.append(_row("(scripted expert)", ["–", "–"], "`expert`", m["agent"].get("expert"), STAND_INS["expert"]))
    quoted = pd.DataFrame([{"method": k, "score": v[0], "reward": v[1]} for k, v in board.items() if k not in TABLE1])
    worlds = m.get("agent_worlds", "eval")
    return ["### Agents: the paper's Tables 3 and 1", "", *headline_lines(m, board["DiVE"]),
            f"Every condition plays the same full Crafter episodes (10,000 steps or death) on the `{worlds}` worlds "
            "(`seeds` in params.yaml; never used while developing when `eval`), measured here. "
            f"The paper's score is Crafter's: {SCORE_QUOTE} ({SCORE_SOURCE}). regula's `score` is that formula "
            "over each achievement's success rate across all of a condition's episodes (pooled), with a 95% "
            f"percentile bootstrap interval over the episodes ({m.get('agent_bootstrap', '?')} resamples of its "
            "episodes, seeded by `seed`; every condition draws the same worlds; an achievement no episode "
            "unlocked stays 0 in every resample, so the interval cannot reach past what the played episodes "
            "hold). The paper's columns are quoted as printed, ± as it gives them: over its five seeds (gpt-4o, "
            "seeds 1–5, its Appendix B.1), a spread across seeds and not an interval; it does not say how many "
            f"episodes a seed plays. {GROUPS_QUOTE}. regula's agents have no training seeds; its nearest "
            f"spread: {groups_text_of(m)} (world order, `dive.score_groups`), each group's pooled score, their "
            "mean ± std (numpy's, ddof 0) in `score by groups of worlds`. `per-episode score` is the mean ± std "
            "(numpy's, ddof 0) of each episode's own score (its achievements as 0/100% rates), a different "
            "statistic, never above the pooled one (the score is concave in the rates) and not comparable with "
            f"the paper's column. {PROGRESSION_QUOTE}; `progression` is its mean over the episodes with a 95% "
            "percentile bootstrap interval on the score's resamples, a different metric from the score (an "
            "agent unlocking the same 11 achievements every episode and one unlocking all 22 in half of them "
            "tie on progression, not on the score). The reward is the mean ± std of the episodes' rewards. "
            f"Subgoal order read from the demonstrations: {', '.join(m.get('subgoals', []))}. The skills' own "
            "controller already knows how to walk, dig and check an action's needs, and every agent but Random "
            "and `dive_no_survival` keeps the survival layer (its unlocks counted apart under \"Whose unlocks\"), "
            "which is why even `w/o D&V&E` is far above the paper's. "
            f"Source of the paper's columns: {_source('dive_table3')}.", "",
            md(pd.DataFrame(t3)), "",
            f"Table 1's rows that run here (source: {_source('dive_scoreboard')}):", "", md(pd.DataFrame(t1)), "",
            "Table 1's other rows, quoted as printed (not run here):", "", md(quoted), ""]
