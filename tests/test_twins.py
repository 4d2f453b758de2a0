"""The `<stage>_llm` twins: a stage's module on its `llm_runs` overlay, under its own name; and
the membership stage that asks the teacher role."""
import json

import pytest

from regula import envs, membership, params as params_mod, stages
from regula.errors import UnknownNameError
from regula.llm.stub_server import StubLLMServer

CRAFTER = envs.get("crafter")


def test_a_twin_runs_its_stage_module_on_the_overlay():
    p = params_mod.validate({"ltlcrit": {"episodes": 20}, "llm_runs": {"ltlcrit": {"episodes": 2}}})
    assert stages.base("ltlcrit_llm") == "ltlcrit" and stages.base("ltlcrit") == "ltlcrit"
    assert stages.get("ltlcrit_llm") is stages.get("ltlcrit")
    twin = stages.params_for("ltlcrit_llm", p)
    assert twin.ltlcrit.model_dump() == {**p.ltlcrit.model_dump(), "episodes": 2}
    assert p.ltlcrit.episodes == 20 and stages.params_for("ltlcrit", p) is p  # the original is untouched
    assert twin.model_dump(exclude={"ltlcrit"}) == p.model_dump(exclude={"ltlcrit"})
    with pytest.raises(UnknownNameError, match="unknown stage 'report_llm'; valid stages: automata_eval, cedar_skills, cedar_skills_llm, "):
        stages.get("report_llm")


def test_the_cedar_twin_lays_its_overlay_over_the_section_its_stage_reads():
    """cedar_skills reads `cedar`: its twin runs on `llm_runs.cedar` over `cedar`, a nested
    mapping (`tasks`) laid over key by key; every twin's overlay has its key in `llm_runs`."""
    p = params_mod.validate({"cedar": {"episodes": 20, "tasks": {"max_rounds": 7}},
                             "llm_runs": {"cedar": {"episodes": 3, "tasks": {"trials": 0}}}})
    assert stages.section("cedar_skills_llm") == stages.section("cedar_skills") == "cedar"
    assert stages.section("dive_llm") == "dive" and stages.base("cedar_skills_llm") == "cedar_skills"
    assert stages.get("cedar_skills_llm") is stages.get("cedar_skills")
    twin = stages.params_for("cedar_skills_llm", p)
    assert twin.cedar.model_dump() == {**p.cedar.model_dump(), "episodes": 3,
                                       "tasks": {**p.cedar.tasks.model_dump(), "trials": 0}}
    assert twin.cedar.tasks.max_rounds == 7 and "cedar_skills" not in twin.model_dump()
    assert p.cedar.episodes == 20 and stages.params_for("cedar_skills", p) is p
    assert {stages.section(name) for name in stages.LLM_STAGES} == set(params_mod.defaults()["llm_runs"])
    assert stages.names()[-2] == "e2cl_llm"  # the twins in LLM_STAGES' order, the report last


def test_words_are_half_members_by_data_yaml_and_reproducible():
    for goal in ("collect_wood", "make_stone_pickaxe"):
        words = membership.words_for(goal, 8, seed=3)
        assert words[0] == {"goal": goal, "word": CRAFTER.shortest_plan(goal), "truth": True, "kind": "plan"}
        assert len({tuple(w["word"]) for w in words}) == 8
        assert sum(w["truth"] for w in words) == 4
        assert all(w["truth"] == CRAFTER.accomplishes(goal, w["word"]) for w in words)
        assert words == membership.words_for(goal, 8, seed=3)
    assert membership.words_for("make_stone_pickaxe", 8, seed=4) != membership.words_for("make_stone_pickaxe", 8, seed=3)


def test_the_rules_teacher_is_wrong_at_its_noise_rate_and_right_without():
    p = params_mod.validate({"membership": {"noise": 0.0}})
    rows = [{**w, "answer": membership.make_teacher(p, None, w["goal"]).member(tuple(w["word"]))}
            for goal in p.membership.goals for w in membership.words_for(goal, 8, 0)]
    assert membership.score(rows) == {"n": 40, "accuracy": 1.0, "false_yes": 0, "false_no": 0, "members": 20,
                                      "unusable": 0}


def test_the_membership_twin_asks_the_llm_and_writes_under_its_own_name(tmp_path):
    with StubLLMServer() as server:
        p = params_mod.validate({"llm": {"base_url": server.base_url, "model": server.model, "retries": 0},
                                 "membership": {"goals": ["place_table"], "words": 6}})
        headline = stages.execute("membership_llm", p, stages.Paths(tmp_path), stages.SerialWork(lambda line: None))
        assert server.calls == 6 + 1  # a word each, and the teacher as a formula once
    assert headline == json.loads((tmp_path / "metrics" / "membership_llm.json").read_text())
    rows = [json.loads(line) for line in (tmp_path / "data" / "membership_llm" / "answers.jsonl").read_text().splitlines()]
    assert [r["word"] for r in rows] == [w["word"] for w in membership.words_for("place_table", 6, 0)]
    assert sum(r["truth"] for r in rows) == 3
    detail = json.loads((tmp_path / "metrics" / "membership_llm_detail.json").read_text())
    # a twin's headline is named after it (no column of `dvc exp show` repeats its original's)
    assert headline == {"membership_llm_teacher_accuracy": membership.score(rows)["accuracy"]}
    assert detail["n"] == 6
    assert detail["backend"] == "openai" and detail["noise"] is None and list(detail["llm"]) == ["membership_llm"]
    assert len(list((tmp_path / "data" / "cache" / "llm" / "membership_llm").rglob("*.json"))) == 6 + 1
    assert detail["formula"]["calls"] == 1 and detail["formula"]["accuracy"] == 1.0
    assert not (tmp_path / "data" / "membership").exists()  # the original stage's outputs are not its twin's
    # the stub answers from data.yaml's rules: every answer right
    assert detail["accuracy"] == 1.0


def test_an_unknown_goal_stops_the_membership_stage_before_any_question(tmp_path):
    p = params_mod.validate({"membership": {"goals": ["collect_wod"]}})
    with pytest.raises(UnknownNameError, match="collect_wod"):
        stages.execute("membership", p, stages.Paths(tmp_path))
    assert not (tmp_path / "metrics").exists()


def test_an_answer_that_never_parses_is_no_answer_and_scored_wrong(tmp_path):
    """The teacher's and the feedback predictor's unusable answers (after the client's re-asks)
    leave the word or step without an answer: counted, scored as wrong, and the stage goes on."""
    from regula.feedback import LLMFeedback, score as feedback_score
    with StubLLMServer() as server:
        server.script = ["maybe", "perhaps"] + ["yes"] * 5
        p = params_mod.validate({"llm": {"base_url": server.base_url, "model": server.model, "retries": 0,
                                         "reasks": 1, "structured": "text"},
                                 "membership": {"goals": ["place_table"], "words": 6, "formula": False}})
        lines: list = []
        stages.execute("membership_llm", p, stages.Paths(tmp_path), stages.SerialWork(lines.append))
        detail = json.loads((tmp_path / "metrics" / "membership_llm_detail.json").read_text())
        # the stage's own line says so, not only its record
        assert any("place_table" in line and "'unusable': 1" in line for line in lines), lines
        assert detail["unusable"] == 1 and detail["llm"]["membership_llm"]["teacher"]["unusable"] == 1
        # the first word (a member) has no answer; the five "yes" are right on the 2 other members only
        assert detail["accuracy"] == round(2 / 6, 4) and detail["false_yes"] == 3 and detail["false_no"] == 0
        server.script = ["maybe", "perhaps"]
        from regula.llm import LLMClient, LLMConfig
        cfg = LLMConfig(base_url=server.base_url, model=server.model, retries=0, reasks=1, structured="text",
                        cache_dir=str(tmp_path / "cache"))
        step = {"obs": "You see a tree.", "skill": "collect_wood", "seed": 0, "t": 0, "success": True, "reason": ""}
        assert LLMFeedback(LLMClient(cfg, "feedback")).predict(step) is None
    rows = [{"predicted": None, "actual": True}, {"predicted": True, "actual": True}]
    assert feedback_score(rows) == {"n": 2, "accuracy": 0.5, "precision": 1.0, "recall": 1.0,
                                    "failures_recorded": 0, "failures_predicted": 0, "unusable": 1}


def test_the_cedar_twin_asks_the_llm_then_replays_its_answers_without_a_server(tmp_path):
    """cedar_skills_llm's teacher asks the endpoint, each answer cached under the twin's name; with
    the server gone, its MQ cache deleted and `llm.mode: replay`, the LLM cache alone answers: the
    same DFAs, library and record (what the answers cost included), no call."""
    overlay = {"teacher": "openai", "skills": ["collect_wood", "place_table"], "max_queries": 200,
               "max_rounds": 5, "explore_worlds": 3, "rollouts": 2, "max_skills": 25, "worlds": "dev",
               "episodes": 2, "simulations": 0, "tasks": {"trials": 0}}
    quiet = stages.SerialWork(lambda line: None)
    with StubLLMServer() as server:
        llm = {"base_url": server.base_url, "model": server.model, "retries": 0}
        p = params_mod.validate({"llm": llm, "llm_runs": {"cedar": overlay}})
        first = stages.execute("cedar_skills_llm", p, stages.Paths(tmp_path), quiet)
        assert server.calls > 0
    base_url = server.base_url
    detail = json.loads((tmp_path / "metrics" / "cedar_skills_llm_detail.json").read_text())
    asked = detail["llm"]["cedar_skills_llm"]["teacher"]
    assert asked["questions"] == sum(r["teacher_llm"]["questions"] for r in detail["skills"]) > 0
    formula = detail["llm"]["cedar_skills_llm"]["teacher_formula"]  # cedar.compare_formula: its calls, re-asks too
    assert len(list((tmp_path / "data" / "cache" / "llm" / "cedar_skills_llm").rglob("*.json"))) == (
        asked["questions"] + formula["calls"])
    assert not (tmp_path / "data" / "cedar_skills").exists() and not (tmp_path / "data" / "cache" / "cedar_skills").exists()
    assert set(first) == {f"cedar_skills_llm_{k}" for k in ("skills_learned", "skill_policy_success_rate",
                                                             "teacher_queries_mean")}
    skills = tmp_path / "data" / "cedar_skills_llm" / "skills"
    drawn = {f.name: f.read_bytes() for f in skills.iterdir()}

    import shutil
    replay = params_mod.validate({"llm": {**llm, "base_url": base_url, "mode": "replay"},
                                  "llm_runs": {"cedar": overlay}})

    def kept(rows):  # what a run spent (`this_run`) differs: the rest is the same
        return [{k: v for k, v in r.items() if k != "this_run"} for r in rows]
    # As `dvc repro` replays (the MQ cache kept), then from the LLM cache alone (MQ cache deleted).
    for mq_kept in (True, False):
        shutil.rmtree(tmp_path / "data" / "cedar_skills_llm")
        if not mq_kept:
            shutil.rmtree(tmp_path / "data" / "cache" / "cedar_skills_llm" / "mq")
        again = stages.execute("cedar_skills_llm", replay, stages.Paths(tmp_path), quiet)
        assert again == first and {f.name: f.read_bytes() for f in skills.iterdir()} == drawn
        redone = json.loads((tmp_path / "metrics" / "cedar_skills_llm_detail.json").read_text())
        assert redone["this_run"]["llm_calls"] == 0 and redone["this_run"]["env_steps"] == 0
        formula_calls = sum(r["teacher_calls"] for r in redone["formula"])  # answered by the LLM cache
        asked_again = redone["this_run"]["teacher_asked"] - formula_calls
        assert asked_again == 0 if mq_kept else asked_again > 0
        assert kept(redone["skills"]) == kept(detail["skills"]) and redone["llm"] == detail["llm"]


@pytest.mark.parametrize("name", stages.LLM_STAGES)
def test_a_twin_reruns_only_when_what_it_reads_of_its_section_changes(name):
    """dvc.yaml lists, of a twin's section, the keys its overlay (llm_runs.<section>) does not
    set (a key the overlay sets in part, such as cedar.tasks, whole), and the overlay itself:
    changing a key the overlay fixes (feedback.max_queries for feedback_llm) reruns the
    stand-in stage only, and removing a key from the overlay makes this test name the dep."""
    from pathlib import Path

    import yaml
    root = Path(__file__).resolve().parents[1]
    section = stages.SECTIONS.get(name, name)
    p = params_mod.load(root / "params.yaml")
    overlay = getattr(p.llm_runs, section)
    wanted = [f"{section}.{k}" for k in getattr(p, section).model_dump() if not (k in overlay and not isinstance(overlay[k], dict))]
    listed = yaml.safe_load((root / "dvc.yaml").read_text())["stages"][name + stages.TWIN]["params"]
    mine = [k for k in listed if k == section or k.startswith(section + ".")]
    assert mine == wanted
    assert f"llm_runs.{section}" in listed
    if name == "feedback":
        assert mine == ["feedback.samples"]
    if name == "cedar_skills":
        assert "cedar.tasks" in mine and "cedar.teacher" not in mine
