"""The cedar_skills stage end to end on two small skills: it learns, writes the DFAs (JSON, DOT,
SVG) and the library, and a rerun after deleting them replays the caches into the same bytes
with no environment step and no teacher asked but the formula teacher's stand-in."""
import json
import shutil

import pytest

from regula.cedar import stage
from regula.errors import UnknownNameError
from regula.stages import Paths, SerialWork
from stage_configs import changed


@pytest.fixture
def cedar_params(small_params):
    return changed(small_params, {"cedar": dict(
        skills=["collect_wood", "place_table"], explore_worlds=6, rollouts=3, max_skills=25, worlds="dev", episodes=3,
        mutants=2, simulations=4,
        tasks={"tasks": ["place_table"], "trials": 1, "max_queries": 2000, "max_rounds": 10})})


def test_learn_then_replay_byte_identical(tmp_path, cedar_params):
    paths = Paths(tmp_path, "cedar_skills")
    stage.prepare(cedar_params, paths)
    first = stage.run(cedar_params, paths, SerialWork(lambda line: None))
    assert first["skills_learned"] == 2 and first["skill_policy_success_rate"] == 1.0
    found = (tmp_path / "metrics" / "cedar_skills_counterexamples.csv").read_text()
    assert found.count("\n") == 1 + 2 * 4  # a header, 4 simulations per learned skill
    assert first["this_run_env_steps"] > 0
    skills = tmp_path / "data" / "cedar_skills" / "skills"
    assert sorted(p.name for p in skills.iterdir()) == [
        f"{s}.{ext}" for s in ("collect_wood", "place_table") for ext in ("dot", "examples.json", "json", "svg")]
    detail = json.loads((tmp_path / "metrics" / "cedar_skills_detail.json").read_text())
    # Table 2: place_table with collect_wood in the library (a letter of its own: not callable) and
    # from scratch, one trial each; the planner on the trial's world for it and for Fig. 8's diamond.
    assert [(c["task"], c["condition"], c["trials"]) for c in detail["tasks"]] == [
        ("place_table", "library", 1), ("place_table", "scratch", 1)]
    assert [b["task"] for b in detail["baseline"]] == ["place_table", "collect_diamond"]
    assert [c["milestone"] for c in detail["budget"]] == ["table", "stone", "furnace", "iron", "diamond"]
    assert detail["budget"][0]["cedar_queries"] == sum(r["teacher_queries"] for r in detail["skills"])
    assert (tmp_path / "metrics" / "cedar_skills_tasks.csv").read_text().count("\n") == 3
    drawn = {p.name: p.read_bytes() for p in skills.iterdir()}
    library = (tmp_path / "data" / "cedar_skills" / "library.json").read_bytes()

    shutil.rmtree(tmp_path / "data" / "cedar_skills")
    again = stage.run(cedar_params, paths, SerialWork(lambda line: None))
    assert (again["this_run_env_steps"], again["this_run_llm_calls"]) == (0, 0)
    detail = json.loads((tmp_path / "metrics" / "cedar_skills_detail.json").read_text())
    # Only the formula teacher's stand-in is asked again (its clauses are recomputed, at no cost): the
    # per-word teacher's answers and every rollout come from the caches.
    assert detail["this_run"]["teacher_asked"] == sum(r["teacher_calls"] for r in detail["formula"]) > 0
    assert detail["this_run"]["rollouts_played"] == 0
    assert {p.name: p.read_bytes() for p in skills.iterdir()} == drawn
    assert (tmp_path / "data" / "cedar_skills" / "library.json").read_bytes() == library
    assert {k: v for k, v in again.items() if not k.startswith("this_run")} == {
        k: v for k, v in first.items() if not k.startswith("this_run")}


def test_a_skill_no_recipe_earns_is_named(tmp_path, cedar_params):
    cedar_params = changed(cedar_params, {"cedar": {"skills": ["collect_wood", "wake_up"]}})
    with pytest.raises(UnknownNameError, match="unknown CEDAR skill 'wake_up'"):
        stage.prepare(cedar_params, Paths(tmp_path, "cedar_skills"))
    formula_only = changed(cedar_params, {"cedar": {"skills": ["collect_wood"], "formula_skills": ["collect_wod"]}})
    with pytest.raises(UnknownNameError, match="unknown CEDAR skill 'collect_wod'"):  # the formula pass's list too
        stage.prepare(formula_only, Paths(tmp_path, "cedar_skills"))


def test_the_rules_teacher_is_named_by_its_noise_seed_and_reading_of_held_calls(cedar_params):
    from regula import rag
    alphabet = rag.GlobalAlphabet.of("crafter")
    cedar_params = changed(cedar_params, {"cedar": {"noise": 0.1, "call_held": True}})
    teacher, name = stage.make_teacher(cedar_params, None, "make_iron_pickaxe", "craft an iron pickaxe", alphabet)
    word = ("@collect_coal", "@collect_iron", "@place_furnace", "@make_wood_pickaxe", "make_iron_pickaxe")
    assert name == f"rules:noise=0.1:seed={cedar_params.seed}:held" and not teacher.truth(word)
    # answers differ, so the MQ cache keeps them apart
    cedar_params = changed(cedar_params, {"cedar": {"call_held": False}})
    teacher, name = stage.make_teacher(cedar_params, None, "make_iron_pickaxe", "craft an iron pickaxe", alphabet)
    assert name == f"rules:noise=0.1:seed={cedar_params.seed}" and teacher.truth(word)


def test_the_llm_teacher_is_named_by_model_and_endpoint_and_asks_through_the_llm_cache(tmp_path, cedar_params):
    from regula import rag
    from regula.errors import RegulaError
    from regula.llm import Accounting

    cedar_params = changed(cedar_params, {"cedar": {"teacher": "openai"},
                                          "llm": {"mode": "replay", "cache_dir": str(tmp_path / "llm")}})
    paths = Paths(tmp_path, "cedar_skills")
    client = stage._client(cedar_params, paths, Accounting())
    teacher, name = stage.make_teacher(cedar_params, client, "collect_wood", "chop a tree for wood",
                                       rag.GlobalAlphabet.of("crafter"))
    llm = cedar_params.llm
    assert name == f"openai:{llm.model}@{client.config.endpoint}:t={llm.temperature}"
    with pytest.raises(RegulaError, match="replay"):  # an answer the cache lacks: no call in replay mode
        teacher.member(("collect_wood",), 0)
