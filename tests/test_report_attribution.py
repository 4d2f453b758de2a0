"""The report's "Whose unlocks" section and the demonstrations' score line: every Crafter agent's
unlocks split into its own and the survival layer's, with the formulas' numbers."""
import json

from regula.metrics import with_attributed_scores
from regula.report.sections import attribution
from regula.report.sections.demos import score_lines, success_line
from regula.stages import Paths


def _record(**kw):
    """A stage's record: the stage adds the attributed scores (the report only reads them)."""
    return with_attributed_scores({"episodes": 2, "attribution": {
        "unlocked": {"collect_wood": 2, "collect_drink": 1, "eat_cow": 1}, "own": {"collect_wood": 1}}, **kw})


def test_a_row_counts_the_survival_layers_unlocks_with_wilson_and_both_pooled_scores():
    r = attribution.row("`dive`", _record())
    # 4 unlocks, 3 by the survival layer: Wilson 3/4 is 30-95%; all: wood 100%, two at 50%; own: wood at 50%
    assert r == {"agent": "`dive`", "episodes": 2, "unlocks": 4, "by the agent": 1,
                 "by the survival layer (share, 95% Wilson)": "3/4: 75% (30-95%)",
                 "pooled score %": f"{(101 * 51 * 51) ** (1 / 22) - 1:.1f}", "pooled score % of its own unlocks": "0.2"}
    # a record with no attributed scores (counts only, or nothing): no row
    assert attribution.row("x", {"episodes": 2, "unlocks_by": {"dive": 3, "survival": 1}}) is None
    assert attribution.row("x", {"episodes": 2}) is None and attribution.row("x", None) is None
    none = with_attributed_scores({"episodes": 1, "attribution": {"unlocked": {}, "own": {}}})
    assert attribution.row("x", none)["by the survival layer (share, 95% Wilson)"] == "–"


def test_the_section_has_one_table_per_crafter_stage(tmp_path):
    paths = Paths(root=tmp_path)
    paths.metrics.mkdir(parents=True)
    a = _record()
    (paths.metrics / "dive_detail.json").write_text(json.dumps({"agent": {"dive": a, "random": with_attributed_scores({
        **a, "attribution": {"unlocked": {"collect_wood": 1}, "own": {"collect_wood": 1}}})}}))
    (paths.metrics / "ltlcrit_detail.json").write_text(json.dumps({
        "expert": _record(), "actors": {"greedy": {"without_critic": a, "with_critic": a, "iterations": 0,
                                                   "baseline": None}}, "demos_ablation": {}}))
    (paths.metrics / "demos_detail.json").write_text(json.dumps(_record(goal="collect_diamond")))
    text = "\n".join(attribution.section(paths))
    assert text.count("| agent | episodes | unlocks | by the agent |") == 3
    assert "### DiVE stage" in text and "### LTLCrit stage" in text and "### Demonstrations" in text
    assert "| `random` | 2 | 1 | 1 | 0/1: 0% (0-79%) |" in text
    assert "| greedy, no critic | 2 | 4 | 1 | 3/4: 75% (30-95%) |" in text and "iteration 0" not in text
    assert "| scripted expert, goal `collect_diamond` | 2 | 4 |" in text
    assert "credited to whoever chose the step it was unlocked in" in text
    assert attribution.section(Paths(root=tmp_path / "none")) == []


def test_the_demonstrations_score_line_names_each_statistic():
    m = {"crafter_score": 29.81, "episodes": 12}
    assert score_lines(m) == ["- Crafter score over the 22 achievements, pooled over the episodes: 29.81%"]
    m["scores"] = {"score_interval": [25.3, 31.9], "score_groups": [1, 2, 3, 4], "score_groups_mean": 27.6,
                   "score_groups_std": 1.8, "score_per_episode": 22.7, "score_per_episode_std": 8.2,
                   "progression": 0.67, "progression_interval": [0.617, 0.716]}
    line, = score_lines(m)
    assert ("29.81% (95% bootstrap interval 25.3–31.9; over 4 groups of 3 consecutive worlds, 27.6 ± 1.8); the mean "
            "of the per-episode scores, a different statistic: 22.7 ± 8.2%; BALROG's progression (the share of the "
            "22 achievements per episode): 67.0% (61.7–71.6%).") in line


def test_the_demonstrations_success_line_is_k_of_n_with_wilson_and_says_what_success_is():
    m = {"episodes": 12, "success_rate": 0.0833, "goal": "all", "mean_steps_to_goal": 758.0}
    assert success_line(m) == ("- success (every one of the 22 achievements; 95% Wilson interval): 1/12 (1-35%), "
                               "mean primitive steps to the goal: 758.0")
    m = {"episodes": 4, "success_rate": 0.5, "goal": "collect_diamond", "mean_steps_to_goal": None}
    assert success_line(m) == "- success (`collect_diamond` unlocked; 95% Wilson interval): 2/4 (15-85%)"
    m = {"crafter_score": 1.0, "episodes": 4, "goal": "all", "scores": {
        "score_interval": [0.5, 1.5], "score_groups": [1, 1], "score_groups_mean": 1.0, "score_groups_std": 0.0,
        "score_per_episode": 1.0, "score_per_episode_std": 0.0, "progression": 0.1, "progression_interval": [0, 0.2]}}
    assert score_lines(m)[0].endswith("a full game's, not a goal-directed run's.")
