"""DiVE's agents: the conditions behind the paper's Tables 1 and 3, their numbers, their report."""
import json

import pytest

from regula.metrics import with_attributed_scores
from regula import envs, params as params_mod
from regula.dive import CONDITIONS, agent
from regula.dive.dynamics import Dynamic
from regula.errors import RegulaError, UnknownNameError
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.llm.stub_server import StubLLMServer

CRAFTER = envs.get("crafter")
ENV = params_mod.validate({}).env.model_dump()
NO_DYNAMICS = {"verified": [], "discovered": [], "human": [], "manual": []}


def test_every_condition_plays_one_row_and_the_rows_cover_table_3():
    from regula.report.papers import table
    from regula.dive.report import TABLE1, TABLE3
    assert set(agent.PLANNERS) | set(agent.COT) | {"random", "expert"} == set(CONDITIONS)
    assert list(TABLE3) == list(table("dive_table3")["rows"])  # all ten rows, each played
    assert set(TABLE3.values()) | set(TABLE1.values()) | {"expert", "human_dynamics_evolved",
                                                          "dive_no_survival"} == set(CONDITIONS)
    assert agent.PLANNERS["human_dynamics"] == ("human", False)  # w/o D&V&E + H†: no evolver
    assert agent.PLANNERS["human_dynamics_evolved"] == ("human", True)  # not in the paper: the ceiling
    assert agent.PLANNERS["manual_dynamics"] == ("manual", True)  # w/o D&V + S†: the evolver on S†


def test_summary_is_crafters_pooled_score_with_its_interval_and_the_per_episode_mean_beside_it():
    names = CRAFTER.achievement_names()
    eps = [{"seed": 10000, "achievements": [], "reward": 1.0, "steps": 100},
           {"seed": 10001, "achievements": names[:11], "reward": 3.0, "steps": 300}]
    s = agent.summarize(eps, 200, 0)
    # pooled: rates 50% on half the achievements, exp(mean(ln(1 + [50]*11 + [0]*11))) - 1 = sqrt(51) - 1
    assert s["score"] == round(51 ** 0.5 - 1, 2) == 6.14
    # per episode: 0 and sqrt(101) - 1 (half the achievements at 100%), their mean and std
    assert (s["score_per_episode"], s["score_per_episode_std"]) == (round((101 ** 0.5 - 1) / 2, 2),) * 2 == (4.52, 4.52)
    # a resample of two episodes holds neither, one of each, or both twice: 0, 6.14 or 9.05 (rounded
    # outward to 0.1: 9.1)
    lo, hi = s["score_interval"]
    assert 0.0 == lo < s["score"] < hi == 9.1 and agent.summarize(eps, 200, 0)["score_interval"] == [lo, hi]
    assert (s["reward"], s["reward_std"], s["steps"], s["seeds"]) == (2.0, 1.0, 200.0, [10000, 10001])
    assert s["rates"][names[0]] == 0.5 and s["rates"][names[-1]] == 0.0
    assert (s["unlocked"][names[0]], s["unlocked"][names[-1]]) == (1, 0)


def test_the_summary_adds_the_groups_spread_and_balrogs_progression():
    names = CRAFTER.achievement_names()
    eps = [{"seed": 10000 + i, "achievements": names[:k], "reward": 0.0, "steps": 1} for i, k in enumerate((2, 0, 4))]
    s = agent.summarize(list(reversed(eps)), 50, 0, groups=2)  # grouped in world order, whatever the order given
    assert s["score_groups"] == [round(51 ** (2 / 22) - 1, 2), round(101 ** (4 / 22) - 1, 2)] == [0.43, 1.31]
    assert s["progression"] == round(6 / 66, 4) and agent.summarize(eps, 50, 0, groups=9)["score_groups"] == [
        round(101 ** (2 / 22) - 1, 2), 0.0, 1.31]  # never more groups than episodes


def test_the_subgoals_are_the_demonstrators_own_unlocks():
    """What the survival layer unlocked for a demonstrator (here the wood sword at the table just
    placed) is no subgoal: the agent's own layer does it, and pursuing it (sleeping in the open
    for wake_up) is not what the demonstrator chose."""
    from regula.dive.banks import build
    from regula.dive.dynamics import ground_truth
    dynamics = {**NO_DYNAMICS, "verified": sorted(ground_truth())}
    order = ["collect_wood", "place_table", "make_wood_pickaxe", "collect_stone"]
    ep = agent.play(CRAFTER.from_params(ENV, 0), "dive", dynamics, order, 0, 10000, 6)
    unlocked = [(a, s["by"]) for s in ep["steps"] for a in s["unlocked"]]
    assert ("make_wood_sword", "survival") in unlocked
    assert build([ep]).subgoals == [[a for a, by in unlocked if by == "dive"]]
    assert "make_wood_sword" not in build([ep]).subgoals[0]


def test_dive_without_survival_decides_every_step_itself_and_is_never_interrupted():
    from regula.dive.dynamics import ground_truth
    human = sorted(ground_truth())
    dynamics = {**NO_DYNAMICS, "verified": human}
    order = ["collect_wood", "place_table", "make_wood_pickaxe", "collect_stone"]
    with_it = agent.play(CRAFTER.from_params(ENV, 0), "dive", dynamics, order, 0, 10000, 6)
    # world 0: the survival layer makes the wood sword at the table the agent just placed
    assert [s["by"] != "dive" for s in with_it["steps"]] == [False] * 4 + [True, False]
    ep = agent.play(CRAFTER.from_params(ENV, 0), "dive_no_survival", dynamics, order, 0, 10000, 40)
    assert {s["by"] for s in ep["steps"]} == {"dive"}
    assert not any((s["cause"] or {}).get("kind") == "interrupted" for s in ep["steps"])
    assert [s["skill"] for s in ep["steps"][:5]] == ["collect_wood", "collect_wood", "place_table", "collect_wood",
                                                     "make_wood_pickaxe"]
    assert (ep["summary"]["end"], ep["header"]["source"]) == ("died", "dive:dive_no_survival")


def test_random_plays_uniformly_random_primitive_actions_with_no_survival_layer():
    world = CRAFTER.from_params(ENV, 3)
    ep = agent.play(world, "random", NO_DYNAMICS, [], 3, 10000, 25)
    skills = [s["skill"] for s in ep["steps"]]
    assert len(skills) == 25 and set(skills) <= set(CRAFTER.actions) and len(set(skills)) > 5
    assert ep["summary"]["steps"] == 25 and {s["by"] for s in ep["steps"]} == {"random"}
    again = agent.play(CRAFTER.from_params(ENV, 3), "random", NO_DYNAMICS, [], 3, 10000, 25)
    assert [s["skill"] for s in again["steps"]] == skills  # seeded by the world


def test_manual_dynamics_are_the_one_stated_fact_with_its_source_named():
    assert agent.manual_dynamics() == [Dynamic("place_stone", "requires", "stone", 1)]
    text = agent.MANUAL.read_text()
    assert "Table 6" in text and '"Place stone requires stones"' in text and "arXiv:2109.06780" in text


def test_unknown_condition_and_cot_without_an_llm_say_what_is_wrong():
    world = CRAFTER.from_params(ENV, 0)
    with pytest.raises(UnknownNameError, match="no_verifer"):
        agent.play(world, "no_verifer", NO_DYNAMICS, [], 0, 100, 5)
    with pytest.raises(RegulaError, match="^dive condition 'cot' asks an LLM; configure `llm` in params.yaml$"):
        agent.play(world, "cot", NO_DYNAMICS, [], 0, 100, 5)


def test_cot_asks_the_llm_for_each_skill_with_the_dynamics_only_for_cot_plus_dv(tmp_path):
    verified = [Dynamic("make_wood_pickaxe", "requires", "wood", 1)]
    with StubLLMServer() as server:
        cfg = LLMConfig(base_url=server.base_url, model=server.model, cache_dir=str(tmp_path / "c"), timeout=5.0,
                        reasks=0)
        client = LLMClient(cfg, "dive_llm", Accounting())
        server.script = [json.dumps({"thought": "wood first", "skill": "collect_wood"}), "no idea"]
        ep = agent.play(CRAFTER.from_params(ENV, 0), "cot_dynamics", {**NO_DYNAMICS, "verified": verified}, [], 0,
                        10000, 2, client=client)
        asked = [r["messages"][-1]["content"] for r in server.requests]
        assert "- make_wood_pickaxe requires 1 wood" in asked[0] and "Not yet unlocked: collect_coal" in asked[0]
        assert [s["skill"] for s in ep["steps"]] == ["collect_wood", "explore"]  # garbage: explore, counted
        assert (ep["summary"]["llm_calls"], ep["summary"]["llm_fallbacks"]) == (2, 1)
        server.requests.clear()
        agent.play(CRAFTER.from_params(ENV, 1), "cot", {**NO_DYNAMICS, "verified": verified}, [], 1, 10000, 1,
                   client=client)
        assert "Dynamics:\n(none)" in server.requests[0]["messages"][-1]["content"]  # the stub answered it


def test_the_report_puts_each_measured_row_beside_the_papers_with_its_source():
    from regula.dive.report import dive_agent_lines
    a = {"episodes": 20, "score": 20.14, "score_interval": [14.2, 26.3], "score_per_episode": 12.46,
         "score_per_episode_std": 0.96, "reward": 4.2, "reward_std": 0.5, "steps": 300.0, "seeds": [10000, 10019]}
    m = {"agent": {"dive": a, "human_dynamics": {**a, "score": 30.0}, "manual_dynamics": a, "random": a,
                   "expert": {**a, "score": 40.0}, "human_dynamics_evolved": {**a, "score": 33.0}},
         "subgoals": ["collect_wood"], "agent_worlds": "eval", "agent_bootstrap": 1000}
    twin = {"agent": {"dive": {**a, "episodes": 1, "seeds": [10000, 10000]}, "cot": {**a, "score": 0.5}},
            "agent_max_skills": 30,
            "llm": {"dive_llm": {"actor": {"model": "smollm2-135m-instruct"}}}}
    text = "\n".join(dive_agent_lines(m, twin))
    # the headline: the pooled score beside the paper's, with its interval; the per-episode mean named apart
    assert ("**DiVE's score: 20.1% pooled over 20 episodes (95% bootstrap interval 14.2–26.3), against the paper's "
            "35.9 ± 3.2% (over its five seeds; Sun et al., DiVE (seed 004), Table 3:") in text
    assert "The mean of the per-episode scores, a different statistic, is 12.5 ± 1.0%." in text
    assert ("| paper row | paper: score | regula: score % (pooled, 95% interval) | regula: score % by groups of "
            "worlds (mean ± std) | regula: per-episode score % (mean ± std) | regula: progression % (mean, 95% "
            "interval) | paper: reward | regula: reward | regula condition | episodes | note |") in text
    assert "1000 resamples" in text and "seed 004), §4.1 Crafter" in text
    assert "success rates s_i for each achievement and is formulated as: S ≐ exp((1/N) Σ_{i=1}^N ln(1 + s_i)) − 1." in text
    mine = "20.1 (14.2–26.3) | – | 12.5 ± 1.0 | – |"  # an older record: no groups, no progression
    tail = "| 4.2 ± 0.5 |"
    assert f"| DiVE | 35.9 ± 3.2% | {mine} 14.5 ± 2.4 {tail} `dive` | 20 (seeds 10000–10019) | – |" in text
    assert "| w/o D&V&E+H† | 34.2 ± 2.8% | 30.0 (14.2–26.3) | – | 12.5 ± 1.0 | – | 14.5 ± 0.9 | 4.2 ± 0.5 | `human_dynamics` |" in text
    assert f"| w/o D&V+S† | 15.7 ± 5.3% | {mine} 8.9 ± 5.1 {tail} `manual_dynamics` | 20 (seeds 10000–10019) | stand-in: S† is" in text
    assert "| w/o V | 9.8 ± 1.0% | – | – | – | – | 10.1 ± 0.7 | – | `no_verifier` | – | not run yet |" in text
    budget = "measured by the `dive_llm` twin: smollm2-135m-instruct, 1 episode(s) of at most 30 skills"
    assert f"| CoT | 1.3 ± 0.3% | 0.5 (14.2–26.3) | – | 12.5 ± 1.0 | – | 2.5 ± 0.5 {tail} `cot` | 20 (seeds 10000–10019) | {budget} |" in text
    assert f"| Random | 1.6 ± 0.0% | {mine} 2.1 ± 1.3 {tail} `random` | 20 (seeds 10000–10019) | random primitive actions" in text
    assert (f"| DiVE (LLM discoverer) | 35.9 ± 3.2% | {mine} 14.5 ± 2.4 {tail} `dive` in `dive_llm` | 1 (seeds "
            f"10000–10000) | {budget} |") in text
    assert ("| (H† with the evolver) | – | 33.0 (14.2–26.3) | – | 12.5 ± 1.0 | – | – | 4.2 ± 0.5 | `human_dynamics_evolved` | "
            "20 (seeds 10000–10019) | not in the paper: H† with the evolver, this agent's ceiling |") in text
    assert "| (scripted expert) | – | 40.0 (14.2–26.3) |" in text and "not in the paper" in text
    assert "| SPRING* | 8.2 ± 2.3% | 6.9 ± 1.8 |" in text and "27.3" not in text  # 27.3 is SPRING's own paper
    assert "Sun et al., DiVE (seed 004), Table 3: Impact of different components on performance: Crafter." in text
    assert "Sun et al., DiVE (seed 004), Table 1: Performance comparison of DiVE against baseline models" in text
    assert "on the `eval` worlds" in text and "one run each" not in text
    assert ("| (DiVE, survival layer off) | – | – | – | – | – | – | – | `dive_no_survival` | – | not in the paper: DiVE "
            "with the survival layer off") in text


def test_the_report_gives_the_groups_progression_attribution_and_the_row_without_survival():
    from regula.dive.report import dive_agent_lines
    a = {"episodes": 20, "score": 20.14, "score_interval": [14.2, 26.3], "score_per_episode": 12.46,
         "score_per_episode_std": 0.96, "reward": 4.2, "reward_std": 0.5, "steps": 300.0, "seeds": [10000, 10019],
         "score_groups": [18.0, 20.0, 22.0, 24.0], "score_groups_mean": 21.0, "score_groups_std": 2.24,
         "progression": 0.5705, "progression_std": 0.1, "progression_interval": [0.5205, 0.625],
         "attribution": {"unlocked": {"collect_wood": 20, "collect_drink": 10}, "own": {"collect_wood": 20}}}
    a = with_attributed_scores(a)  # as the stage stores it
    m = {"agent": {"dive": a, "dive_no_survival": {**a, "score": 8.55, "score_interval": [7.2, 9.3]}},
         "subgoals": ["collect_wood"], "agent_worlds": "eval", "agent_bootstrap": 1000}
    text = "\n".join(dive_agent_lines(m))
    assert ("**DiVE's score: 20.1% pooled over 20 episodes (95% bootstrap interval 14.2–26.3; over 4 groups of 5 "
            "consecutive worlds, 21.0 ± 2.2), against the paper's 35.9 ± 3.2%") in text
    assert "BALROG's progression (the share of the 22 achievements an episode unlocks, a different metric): 57.0% (52.0–62.5%)." in text
    # 10 of 30 unlocks were the survival layer's; its own: collect_wood at 100%, 101^(1/22) - 1
    assert f"made 10 of its 30 unlocks; its own unlocks alone give {101 ** (1 / 22) - 1:.1f}% pooled" in text
    assert "DiVE scores 8.6% pooled (7.2–9.3) on the same worlds." in text
    assert "| `dive` | 20 (seeds 10000–10019) |" in text and "| 20.1 (14.2–26.3) | 21.0 ± 2.2 | 12.5 ± 1.0 | 57.0 (52.0–62.5) |" in text
    assert "| (DiVE, survival layer off) | – | 8.6 (7.2–9.3) |" in text
    assert "its nearest spread: 4 groups of 5 consecutive worlds" in text and "`stds = np.nanstd(scores, -1)`" in text
    assert '`"progression": float(self.score_tracker) / 22.0`' in text


def test_the_llm_runs_table_names_the_pooled_score_and_the_per_episode_mean_apart():
    from regula.report.sections.llm_runs import _dive
    a = {"episodes": 20, "score": 1.05, "score_interval": [0.8, 1.2], "score_per_episode": 0.56,
         "score_per_episode_std": 0.27}
    m = {"llm": {}, "discoverer": "statistical", "steps": 2, "discovered": {"n": 3, "precision": 0.5, "recall": 0.1},
         "verified": {"n": 1, "precision": 1.0, "recall": 0.05}, "agent": {"dive": a}, "agent_max_skills": 12}
    row = _dive(m)
    assert row["DiVE agent score % (pooled, 95% interval)"] == "1.1 (0.8–1.2; n=20, at most 12 skills)"
    assert row["DiVE agent per-episode score % (mean ± std)"] == "0.6 ± 0.3"
    assert "DiVE agent score %" not in row
